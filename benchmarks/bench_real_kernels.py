"""vLLM's and FlagGems' own kernels launched for real: numerics against the references, and
the speed vLLM users get, beside the mirrors (``bench_kernels.py``) and torch.

Launches vLLM 0.24.0's ``unified_attention`` (2D prefill; 3D decode with ``reduce_segments``)
and ``fused_post_conv_prep`` through vLLM's own launchers on the mirrors' problems
(``ci.smoke.attention`` / ``ci.smoke.gdn``), checks them against the mirrors' float64
references, and times them at the perf scenarios with ``ci.smoke.perf``'s method (median of
device events, rotating input sets) against SDPA and eager torch; then FlagGems' ops against
torch. Needs vllm, flag-gems, torch and triton (a GPU lane environment), run from the
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
from functools import partial
from pathlib import Path
from typing import Any

from ci.smoke import attention, gdn, perf, reallaunch


def numerics(device: str) -> list[str]:
    """The suite's real launches (``ci.smoke.reallaunch``), one line per check."""
    corpora = ("vllm", "flaggems") if device == "cuda" else ("vllm",)
    lines = []
    for corpus in corpora:
        for r in reallaunch.run_checks(corpus, device):
            verdict = r.get("error") or "; ".join(r["mismatches"]) or "ok"
            lines.append(f"{corpus} {r['kernel']} {r['scenario']}: {verdict}")
    return lines


def timings(ceilings: perf.Ceilings) -> list[dict[str, Any]]:
    """vLLM's kernels at the perf scenarios: time, % of ceiling, ratio to torch."""
    import torch

    rows = []
    for scenario in attention.PERF_SCENARIOS:
        config = attention.AttentionConfig(scenario.head_size, 16, 32, 4, 2, "bf16")
        decode = scenario.query_tokens == 1

        problem = partial(
            attention.make_problem,
            config,
            perf.DEVICE,
            sequences=scenario.sequences,
            num_kv_heads=scenario.num_kv_heads,
        )
        first = problem(seed=0)
        set_bytes, flops = attention.bytes_and_flops(first)
        problems = [first] + [problem(seed=s) for s in range(1, perf.rotation_sets(set_bytes))]
        ms = perf.median_ms(
            perf.rotating([reallaunch.vllm_attention_call(p, decode) for p in problems])
        )
        dense = [attention.dense_views(p, scenario.num_seqs) for p in problems]
        calls = [perf.sdpa(*qkv, not decode) for qkv in dense]
        torch_ms = perf.median_ms(perf.rotating([call for call, _ in calls]))
        figures = perf.Figures(ms, set_bytes, flops, torch_ms, calls[0][1], ceilings)
        rows.append(_row("vllm kernel_unified_attention", scenario.id, figures))
        del problems, dense, calls
        torch.cuda.empty_cache()
    config = next(c for c in gdn.PERF_CONFIGS if c.shape.name == "qwen3.6")
    for seq_len in gdn.PERF_SEQ_LENS:
        first = gdn.make_problem(config, seq_len, perf.DEVICE, 0)
        set_bytes = gdn.bytes_moved(first)
        problems = [first] + [
            gdn.make_problem(config, seq_len, perf.DEVICE, s)
            for s in range(1, perf.rotation_sets(set_bytes))
        ]
        ms = perf.median_ms(perf.rotating([reallaunch.vllm_gdn_call(config, p) for p in problems]))
        eager = perf.rotating([partial(gdn.eager_torch, config, p) for p in problems])
        figures = perf.Figures(ms, set_bytes, 0, perf.median_ms(eager), "eager torch", ceilings)
        rows.append(
            _row("vllm _fused_post_conv_kernel", perf.gdn_shape_id(config, seq_len), figures)
        )
        del problems
        torch.cuda.empty_cache()
    return rows


def _row(kernel: str, shape: str, f: perf.Figures) -> dict[str, Any]:
    return {
        "kernel": kernel,
        "shape": shape,
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
