"""The smoke kernels' speed on the GPU found: one table of kernel, shape, time, % of ceiling
and ratio to torch, measured exactly as the lane's perf tests measure (``ci.smoke.perf``).

Needs a CUDA GPU, torch and triton (a lane environment or a GPU node; not the controller
venv). Run from the repository root:

    python benchmarks/bench_kernels.py [--sweep] [--only prefill-hd128] [--json FILE]

``--sweep`` adds tile, warp and stage variants beyond the lane's matrix: the search that
chose the perf configs of ``ci/smoke/mirrors/attention.py`` and ``ci/smoke/mirrors/gdn.py``.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict
from functools import partial
from pathlib import Path

from ci.smoke import perf
from ci.smoke.mirrors import attention, gdn

# Targets of issue 6: GDN post-conv against the copy ceiling and eager torch; attention
# prefill (head size 128, bf16) against SDPA's throughput.
GDN_PCT_OF_COPY = 70.0
GDN_RATIO_TO_TORCH = 3.0
ATTENTION_RATIO_TO_SDPA = 0.5


# (head size, BLOCK_M, TILE_SIZE, warps, stages) tried beyond the matrix by --sweep, prefill
# only; a head of 256 with 128-row tiles fits 2 stages of K and V in shared memory, not 3.
ATTENTION_SWEEP = (
    *itertools.product((128,), (64, 128), (32, 64), (4, 8), (2, 3)),
    (256, 64, 32, 8, 2),
    (256, 64, 64, 4, 2),
    (256, 64, 64, 8, 2),
    (256, 128, 32, 4, 2),
    (256, 128, 64, 8, 2),
    (256, 128, 32, 8, 1),
)
# (BLOCK_T, warps) tried beyond the matrix by --sweep.
GDN_SWEEP = tuple(itertools.product((16, 32, 64, 128), (4, 8)))


def attention_configs(sweep: bool) -> Iterator[attention.AttentionConfig]:
    # The 2D path only, as the perf tests time it (their scenarios are no 3D batches).
    matrix = [
        c for c in attention.CONFIGS + attention.PERF_CONFIGS if c.dtype == "bf16" and not c.is_3d
    ]
    yield from matrix
    if sweep:
        for hd, bm, tile, warps, stages in ATTENTION_SWEEP:
            config = attention.AttentionConfig(hd, bm, tile, warps, stages, "bf16")
            if config not in matrix:
                yield config


def gdn_configs(sweep: bool) -> Iterator[gdn.GdnConfig]:
    matrix = [c for c in gdn.CONFIGS + gdn.PERF_CONFIGS if c.shape.name == "qwen3.6"]
    yield from matrix
    if sweep:
        for block_t, warps in GDN_SWEEP:
            config = gdn.GdnConfig(gdn.SHAPES[0], block_t, warps, 2, "bf16")
            if config not in matrix:
                yield config


Job = tuple[str, str, Callable[[], perf.Measurement]]


def jobs(ceilings: perf.Ceilings, sweep: bool, only: str) -> Iterator[Job]:
    """(shape, config, measure) for every row of the table, in order."""
    cache: dict[str, tuple[float, str]] = {}
    attention_kernels = importlib.import_module(attention.MODULE)
    for scenario in attention.PERF_SCENARIOS:
        if only not in scenario.id:
            continue
        for config in attention_configs(sweep and scenario.name == "prefill"):
            if config.head_size == scenario.head_size:
                yield (
                    scenario.id,
                    config.id,
                    partial(
                        perf.measure_attention,
                        perf.mirror_attention(attention_kernels, config),
                        "unified_attention",
                        config,
                        scenario,
                        ceilings,
                        cache,
                    ),
                )
    gdn_kernel = importlib.import_module(gdn.MODULE).gdn_post_conv_kernel
    for seq_len in gdn.PERF_SEQ_LENS:
        if only not in f"gdn-L{seq_len}":
            continue
        for gconfig in gdn_configs(sweep):
            yield (
                f"gdn-L{seq_len}",
                gconfig.id,
                partial(
                    perf.measure_gdn,
                    perf.mirror_gdn(gdn_kernel, gconfig),
                    "gdn_post_conv",
                    gconfig,
                    seq_len,
                    ceilings,
                    cache,
                ),
            )


def run(job: Job) -> perf.Measurement | None:
    shape, config, measure = job
    try:
        result = measure()
    except Exception as err:  # a config this GPU cannot run is a line, not the end of the table
        print(f"  {shape} {config}: {type(err).__name__}: {str(err)[:300]}", flush=True)
        return None
    f = result.figures
    flag = " NUMERICS: " + "; ".join(result.problems) if result.problems else ""
    print(
        f"  {shape} {config}: {f.ms:.4f} ms {f.pct_of_ceiling:.1f}% x{f.ratio_to_torch:.2f}{flag}",
        flush=True,
    )
    return result


def table(rows: list[perf.Measurement]) -> str:
    head = ("kernel", "shape", "config", "ms", "TFLOP/s", "GB/s", "% ceiling", "x torch")
    body = [
        (
            m.kernel,
            m.shape,
            m.config,
            f"{m.figures.ms:.4f}",
            f"{m.figures.tflops:.1f}",
            f"{m.figures.gbps:.0f}",
            f"{m.figures.pct_of_ceiling:.1f} ({m.figures.bound})",
            f"{m.figures.ratio_to_torch:.2f}" + (" FAIL" if m.problems else ""),
        )
        for m in rows
    ]
    widths = [max(len(r[i]) for r in (head, *body)) for i in range(len(head))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in (head, *body)]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def best_per_shape(rows: list[perf.Measurement]) -> list[perf.Measurement]:
    best: dict[str, perf.Measurement] = {}
    for m in rows:
        if not m.problems and (m.shape not in best or m.figures.ms < best[m.shape].figures.ms):
            best[m.shape] = m
    return list(best.values())


def targets(best: list[perf.Measurement]) -> list[str]:
    lines = []
    for m in best:
        f = m.figures
        if m.kernel == "gdn_post_conv":
            pct = 100 * f.gbps / f.ceilings.copy_gbps
            ok = pct >= GDN_PCT_OF_COPY and f.ratio_to_torch >= GDN_RATIO_TO_TORCH
            lines.append(
                f"{'met ' if ok else 'MISSED'} gdn {m.shape}: {pct:.1f}% of copy "
                f"(target {GDN_PCT_OF_COPY:.0f}), {f.ratio_to_torch:.2f}x eager torch "
                f"(target {GDN_RATIO_TO_TORCH:.0f}x) [{m.config}]"
            )
        elif m.shape.startswith("prefill-hd128"):
            ok = f.ratio_to_torch >= ATTENTION_RATIO_TO_SDPA
            lines.append(
                f"{'met ' if ok else 'MISSED'} attention {m.shape}: {f.ratio_to_torch:.2f}x "
                f"{f.torch_reference} (target {ATTENTION_RATIO_TO_SDPA}) [{m.config}]"
            )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweep", action="store_true", help="also time configs off the matrix")
    parser.add_argument("--only", default="", help="only shapes whose name contains this")
    parser.add_argument("--json", type=Path, help="write every measurement here")
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("bench_kernels: needs a CUDA GPU; torch sees none", file=sys.stderr)
        return 2
    ceilings = perf.measure_ceilings()
    print(
        f"{ceilings.gpu}: copy {ceilings.copy_gbps:.0f} GB/s, "
        f"bf16 matmul {ceilings.matmul_tflops:.0f} TFLOP/s",
        flush=True,
    )
    rows = [m for m in map(run, jobs(ceilings, args.sweep, args.only)) if m is not None]
    best = best_per_shape(rows)
    if args.json:
        args.json.write_text(json.dumps([asdict(m) for m in rows], indent=1))
    print("\nAll measurements:\n" + table(rows))
    print("\nBest config per shape:\n" + table(best))
    print("\n" + "\n".join(targets(best)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
