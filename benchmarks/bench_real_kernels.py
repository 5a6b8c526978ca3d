"""vLLM's and FlagGems' own kernels launched for real: numerics against the references, and
the speed vLLM users get, beside the mirrors (``bench_kernels.py``) and torch.

Launches vLLM 0.24.0's ``unified_attention`` (2D prefill; 3D decode with ``reduce_segments``)
and ``fused_post_conv_prep`` through vLLM's own launchers on the mirrors' problems
(``ci.smoke.mirrors.attention`` / ``ci.smoke.mirrors.gdn``), checks them against the
mirrors' float64 references, and times them at the perf scenarios with ``ci.smoke.perf``'s method
(median of device events, rotating input sets) against SDPA and eager torch; then FlagGems' ops
against torch. Needs vllm, flag-gems, torch and triton (a GPU lane environment), run from the
repository root:

    python benchmarks/bench_real_kernels.py [--json FILE]        # on a CUDA GPU
    TRITON_INTERPRET=1 python benchmarks/bench_real_kernels.py --device cpu   # numerics only

``--device cpu`` runs the numerics in Triton's interpreter (no timing): the check that the
launch and comparison code is right before a GPU is spent on it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from ci.smoke import perf
from ci.smoke.mirrors import attention, gdn
from ci.smoke.realkernels import launches


def numerics(device: str) -> list[str]:
    """The suite's real launches (``ci.smoke.realkernels.launches``), one line per check."""
    corpora = ("vllm", "flaggems") if device == "cuda" else ("vllm",)
    lines = []
    for corpus in corpora:
        for r in launches.run_checks(corpus, device):
            verdict = r.get("error") or "; ".join(r["mismatches"]) or "ok"
            lines.append(f"{corpus} {r['kernel']} {r['scenario']}: {verdict}")
    return lines


def timings(ceilings: perf.Ceilings) -> list[dict[str, Any]]:
    """vLLM's kernels at the perf scenarios, measured as the perf group's
    ``test_vllm_*`` tests measure them: time, % of ceiling, ratio to torch."""
    import torch

    rows = []
    cache: dict[str, tuple[float, str]] = {}
    for scenario in attention.PERF_SCENARIOS:
        config = attention.AttentionConfig(scenario.head_size, 16, 32, 4, 2, "bf16")
        kernel = "vllm kernel_unified_attention"
        m = perf.measure_attention(
            launches.vllm_attention_call, kernel, config, scenario, ceilings, cache
        )
        rows.append(_row(m))
        torch.cuda.empty_cache()
    gconfig = next(c for c in gdn.PERF_CONFIGS if c.shape.name == "qwen3.6")
    for seq_len in gdn.PERF_SEQ_LENS:
        kernel = "vllm _fused_post_conv_kernel"
        m = perf.measure_gdn(launches.vllm_gdn(gconfig), kernel, gconfig, seq_len, ceilings, cache)
        rows.append(_row(m))
        torch.cuda.empty_cache()
    return rows


def _row(m: perf.Measurement) -> dict[str, Any]:
    f = m.figures
    return {
        "kernel": m.kernel,
        "shape": m.shape,
        "numerics": "; ".join(m.problems) or "ok",
        "ms": round(f.ms, 4),
        "tflops": round(f.tflops, 1),
        "gbps": round(f.gbps),
        "pct_of_ceiling": round(f.pct_of_ceiling, 1),
        "bound": f.bound,
        "ratio_to_torch": round(f.ratio_to_torch, 2),
        "torch": f.torch_reference,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--json", type=Path, help="write the numerics and timings here")
    args = parser.parse_args()
    # vLLM disables Triton where no driver is active (a CPU run): its distributed case.
    if args.device == "cpu":
        os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("bench_real_kernels: needs a CUDA GPU; torch sees none", file=sys.stderr)
        return 2
    found = numerics(args.device)
    print("\n".join(found), flush=True)
    rows: list[dict[str, Any]] = []
    if args.device == "cuda":
        ceilings = perf.measure_ceilings()
        rows = timings(ceilings)
        for row in rows:
            print(
                f"{row['kernel']} {row['shape']}: {row['ms']} ms, {row['pct_of_ceiling']}% of"
                f" {row['bound']} ceiling, x{row['ratio_to_torch']} {row['torch']}",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps({"numerics": found, "timings": rows}, indent=1))
    failed = [line for line in found if not line.endswith(": ok")]
    return 1 if failed or not math.isfinite(sum(r["ms"] for r in rows) or 0.0) else 0


if __name__ == "__main__":
    sys.exit(main())
