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
import contextlib
import json
import math
import os
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from ci.smoke import attention, gdn, perf

# vLLM's Triton backend's decode split (vllm/v1/attention/backends/triton_attn.py).
NUM_SEGMENTS = 16
# Sequences of the 3D numerics problem: decode only, short and long contexts.
DECODE_SEQUENCES = ((1, 37), (1, 300), (1, 5))
NUMERICS_GDN_LEN = 37


def vllm_attention_call(p: attention.AttentionProblem, decode_3d: bool) -> Callable[[], None]:
    """vLLM's ``unified_attention`` on the mirror's problem, as vLLM's backend calls it."""
    import torch
    from vllm.v1.attention.ops.triton_unified_attention import unified_attention

    seqs = p.num_seqs
    query_lens = (p.query_start_loc[1:] - p.query_start_loc[:-1]).tolist()
    descale = torch.ones(1, 1, dtype=torch.float32, device=p.q.device).expand(seqs, p.num_kv_heads)
    heads, head = p.q.shape[1], p.q.shape[2]
    extra: dict[str, Any] = {}
    if decode_3d:
        segments = (p.q.shape[0], heads, NUM_SEGMENTS)
        extra = {
            "seq_threshold_3D": seqs,
            "num_par_softmax_segments": NUM_SEGMENTS,
            "softmax_segm_output": torch.empty(
                *segments, head, dtype=torch.float32, device=p.q.device
            ),
            "softmax_segm_max": torch.empty(*segments, dtype=torch.float32, device=p.q.device),
            "softmax_segm_expsum": torch.empty(*segments, dtype=torch.float32, device=p.q.device),
        }
    return partial(
        unified_attention,
        q=p.q,
        k=p.k_cache,
        v=p.v_cache,
        out=p.out,
        cu_seqlens_q=p.query_start_loc,
        max_seqlen_q=max(query_lens),
        seqused_k=p.seq_lens,
        max_seqlen_k=int(p.seq_lens.max()),
        softmax_scale=p.scale,
        causal=True,
        window_size=(-1, -1),
        block_table=p.block_table,
        softcap=0,
        q_descale=None,
        k_descale=descale,
        v_descale=descale,
        **extra,
    )


def vllm_gdn_call(config: gdn.GdnConfig, p: gdn.GdnProblem) -> Callable[[], Any]:
    from vllm.model_executor.layers.fla.ops.fused_gdn_prefill_post_conv import (
        fused_post_conv_prep,
    )

    s = config.shape
    return partial(fused_post_conv_prep, p.mixed_qkv, p.a, p.b, p.A_log, p.dt_bias, s.H, s.K, s.V)


def attention_numerics(device: str) -> list[str]:
    # In the interpreter, Triton 3.6 multiplies bf16 dot operands as raw bits: the suite's fix.
    guard: Any = contextlib.nullcontext()
    if device == "cpu":
        from ci.smoke.interpreter import exact_bf16_dot

        guard = exact_bf16_dot()
    lines = []
    with guard:
        for head in (128, 256):
            config = attention.AttentionConfig(head, 16, 32, 4, 2, "bf16")
            for name, sequences, decode in (
                ("mixed-2d", attention.SEQUENCES, False),
                ("decode-3d", DECODE_SEQUENCES, True),
            ):
                p = attention.make_problem(config, device, sequences=sequences)
                vllm_attention_call(p, decode)()
                found = attention.compare(p.out, attention.reference(p), config.dtype)
                lines.append(f"vllm kernel_unified_attention {name} hd{head}: {found or 'ok'}")
    return lines


def gdn_numerics(device: str) -> list[str]:
    config = next(c for c in gdn.CONFIGS if c.shape.name == "qwen3.6")
    p = gdn.make_problem(config, NUMERICS_GDN_LEN, device)
    p.q, p.k, p.v, p.g, p.beta = vllm_gdn_call(config, p)()
    found = gdn.compare(config, p, gdn.reference(config, p))
    return [f"vllm _fused_post_conv_kernel qwen3.6 L{NUMERICS_GDN_LEN}: {found or 'ok'}"]


def flaggems_numerics(device: str) -> list[str]:
    """FlagGems' ops against torch on the same inputs (bf16 tolerance)."""
    import flag_gems
    import torch

    gen = torch.Generator(device=device).manual_seed(0)

    def rand(*shape: int) -> Any:
        return torch.randn(*shape, generator=gen, device=device).to(torch.bfloat16)

    x, y, w = rand(64, 1024), rand(64, 1024), rand(1024)
    a, b = rand(128, 256), rand(256, 128)
    table, index = rand(1000, 256), torch.randint(0, 1000, (64,), device=device)
    cases = {
        "add": (lambda: flag_gems.ops.add(x, y), lambda: x + y),
        "mul": (lambda: flag_gems.ops.mul(x, y), lambda: x * y),
        "mm": (lambda: flag_gems.ops.mm(a, b), lambda: a @ b),
        "softmax": (lambda: flag_gems.ops.softmax(x, -1), lambda: torch.softmax(x, -1)),
        "rms_norm": (
            lambda: flag_gems.ops.rms_norm(x, [1024], w),
            lambda: torch.nn.functional.rms_norm(x, [1024], w),
        ),
        "embedding": (
            lambda: flag_gems.ops.embedding(table, index),
            lambda: torch.nn.functional.embedding(index, table),
        ),
    }
    lines = []
    for name, (ours, theirs) in cases.items():
        got, want = ours().float(), theirs().float()
        rel = float((got - want).abs().max()) / max(float(want.abs().max()), 1e-30)
        lines.append(
            f"flag-gems {name}: max relative error {rel:.2e} {'ok' if rel < 2e-2 else 'FAIL'}"
        )
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
        ms = perf.median_ms(perf.rotating([vllm_attention_call(p, decode) for p in problems]))
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
        ms = perf.median_ms(perf.rotating([vllm_gdn_call(config, p) for p in problems]))
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
    numerics = attention_numerics(args.device) + gdn_numerics(args.device)
    if args.device == "cuda":
        numerics += flaggems_numerics(args.device)
    print("\n".join(numerics), flush=True)
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
        args.json.write_text(json.dumps({"numerics": numerics, "timings": rows}, indent=1))
    failed = [line for line in numerics if not line.endswith(("ok", ": ok"))]
    return 1 if failed or not math.isfinite(sum(r["ms"] for r in rows) or 0.0) else 0


if __name__ == "__main__":
    sys.exit(main())
