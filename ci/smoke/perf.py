"""Performance smoke: our kernels timed on the device against ceilings of the same run.

Every time is ``triton.testing.do_bench``'s median over device events, after its warm-up;
do_bench also flushes the L2 before every call, and on top of that the inputs rotate over
enough buffer sets to exceed the L2 several times, so no call reads what the previous one
left in cache. The ceilings are measured in the same process: a large device-to-device
copy (bytes read plus written) and a large bf16 matrix product through torch. Each figure
goes into a JUnit property (``properties()``), where the history and dashboard find it.

torch and triton only; it runs where a device is visible (the caller skips otherwise).
"""

import itertools
import math
from dataclasses import dataclass
from functools import partial
from types import ModuleType
from typing import Any, Callable, Dict, List, Sequence, Tuple

from ci.smoke.compile import tritonapi
from ci.smoke.contract import properties
from ci.smoke.mirrors import attention, gdn

WARMUP_MS = 25
REP_MS = 100
# Rotate over at least this many times the L2 of input data, in 2 to MAX_SETS sets.
L2_MULTIPLE = 4
MAX_SETS = 8
COPY_BYTES = 2 << 30
MATMUL_N = 8192
DEVICE = "cuda"


@dataclass(frozen=True)
class Ceilings:
    gpu: str
    copy_gbps: float
    matmul_tflops: float


@dataclass(frozen=True)
class Figures:
    """One kernel at one shape: its median time against the ceilings and torch."""

    ms: float
    bytes: int
    flops: int
    torch_ms: float
    torch_reference: str
    ceilings: Ceilings

    @property
    def gbps(self) -> float:
        return self.bytes / self.ms / 1e6

    @property
    def tflops(self) -> float:
        return self.flops / self.ms / 1e9

    @property
    def memory_floor_ms(self) -> float:
        return self.bytes / (self.ceilings.copy_gbps * 1e6)

    @property
    def compute_floor_ms(self) -> float:
        return self.flops / (self.ceilings.matmul_tflops * 1e9)

    @property
    def bound(self) -> str:
        return "memory" if self.memory_floor_ms >= self.compute_floor_ms else "compute"

    @property
    def pct_of_ceiling(self) -> float:
        """How close to the roofline: the larger floor (bytes or FLOPs) over the time taken."""
        return 100.0 * max(self.memory_floor_ms, self.compute_floor_ms) / self.ms

    @property
    def ratio_to_torch(self) -> float:
        """Speed relative to torch: above 1, ours is faster."""
        return self.torch_ms / self.ms

    def properties(self) -> Dict[str, str]:
        return {
            properties.GPU: self.ceilings.gpu,
            properties.PERF_MS: f"{self.ms:.6f}",
            properties.PERF_GBPS: f"{self.gbps:.1f}",
            properties.PERF_TFLOPS: f"{self.tflops:.2f}",
            properties.PERF_BOUND: self.bound,
            properties.PCT_OF_CEILING: f"{self.pct_of_ceiling:.1f}",
            properties.CEILING_GBPS: f"{self.ceilings.copy_gbps:.1f}",
            properties.CEILING_TFLOPS: f"{self.ceilings.matmul_tflops:.1f}",
            properties.TORCH_MS: f"{self.torch_ms:.6f}",
            properties.TORCH_REFERENCE: self.torch_reference,
            properties.RATIO_TO_TORCH: f"{self.ratio_to_torch:.3f}",
        }


@dataclass(frozen=True)
class Measurement:
    kernel: str
    shape: str
    config: str
    figures: Figures
    problems: Tuple[str, ...]  # numerics of the timed output; empty when it matches


def median_ms(fn: Callable[[], object]) -> float:
    return tritonapi.bench_median_ms(fn, warmup_ms=WARMUP_MS, rep_ms=REP_MS)


def rotating(calls: Sequence[Callable[[], object]]) -> Callable[[], None]:
    """One callable that runs the next of ``calls`` each time (round robin)."""
    turn = itertools.cycle(calls)

    def call() -> None:
        next(turn)()

    return call


def rotation_sets(set_bytes: int) -> int:
    import torch

    l2 = int(torch.cuda.get_device_properties(0).L2_cache_size)
    return max(2, min(MAX_SETS, math.ceil(L2_MULTIPLE * l2 / max(set_bytes, 1))))


def measure_ceilings() -> Ceilings:
    import torch

    return Ceilings(torch.cuda.get_device_name(0), copy_gbps(), matmul_tflops())


def copy_gbps() -> float:
    """A device-to-device copy: bytes read plus bytes written, per second."""
    import torch

    src = torch.randn(COPY_BYTES // 4, device=DEVICE)
    dst = torch.empty_like(src)
    return 2 * COPY_BYTES / median_ms(lambda: dst.copy_(src)) / 1e6


def matmul_tflops() -> float:
    """A large bf16 matrix product through torch, on random data (zeros run faster)."""
    import torch

    gen = torch.Generator(device=DEVICE).manual_seed(0)
    a, b = (
        torch.randn(MATMUL_N, MATMUL_N, generator=gen, device=DEVICE).to(torch.bfloat16)
        for _ in range(2)
    )
    return 2 * MATMUL_N**3 / median_ms(lambda: torch.matmul(a, b)) / 1e9


def relative_error(out: Any, ref: Any) -> float:
    """max |out - ref| / max |ref| on the device, in float32; NaN anywhere gives NaN."""
    got, want = out.float(), ref.float()
    return float((got - want).abs().max() / want.abs().max())


def check(name: str, out: Any, ref: Any, bound: float) -> List[str]:
    import torch

    nans = int(torch.isnan(out).sum())
    if nans:
        return [f"{name}: {nans} of {out.numel()} elements are NaN (not written or invalid)"]
    rel = relative_error(out, ref)
    if not rel <= bound:
        return [f"{name}: numeric mismatch: max relative error {rel:.3e} > {bound:.1e}"]
    return []


# ----------------------------------------------------------------------------------------
# Unified attention against torch's scaled_dot_product_attention


def sdpa(q: Any, k: Any, v: Any, causal: bool) -> Tuple[Callable[[], Any], str]:
    """SDPA on dense GQA inputs through a fused backend, and how it was called.

    Grouped heads go in as they are (``enable_gqa``) where a fused backend takes them;
    otherwise K and V are expanded to every query head before timing (more bytes for SDPA
    to read, the same FLOPs).
    """
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    F = torch.nn.functional
    fused = [SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]

    def grouped() -> Any:
        with sdpa_kernel(fused):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)

    try:
        grouped()
        return grouped, "sdpa(enable_gqa)"
    except RuntimeError:
        groups = q.shape[1] // k.shape[1]
        k_full = k.repeat_interleave(groups, dim=1)
        v_full = v.repeat_interleave(groups, dim=1)

        def expanded() -> Any:
            with sdpa_kernel(fused):
                return F.scaled_dot_product_attention(q, k_full, v_full, is_causal=causal)

        expanded()
        return expanded, "sdpa(kv expanded)"


# A kernel's launch on one problem, made ready before timing (its buffers allocated).
AttentionCall = Callable[[attention.AttentionProblem], Callable[[], object]]
GdnCall = Callable[[gdn.GdnProblem], Callable[[], object]]


def mirror_attention(kernels: ModuleType, config: attention.AttentionConfig) -> AttentionCall:
    """The mirror's launch of ``config`` (``kernels``: the mirror's kernel module)."""
    return lambda p: partial(attention.launch, kernels, config, p)


def mirror_gdn(kernel: Any, config: gdn.GdnConfig) -> GdnCall:
    return lambda p: partial(gdn.launch, kernel, config, p)


def measure_attention(
    call: AttentionCall,
    kernel: str,
    config: attention.AttentionConfig,
    scenario: attention.Scenario,
    ceilings: Ceilings,
    torch_cache: Dict[str, Tuple[float, str]],
    config_id: str = "",
) -> Measurement:
    """Time ``call`` on the problems of ``config`` at ``scenario`` (its output checked
    against SDPA in fp32 first); ``config_id`` names the launch when not ``config``'s."""
    import torch

    if scenario.query_tokens not in (1, scenario.query_tokens + scenario.context_tokens):
        raise ValueError(f"{scenario.id}: SDPA's causal mask needs decode or a fresh prefill")
    causal = scenario.query_tokens > 1

    def problem(seed: int) -> attention.AttentionProblem:
        return attention.make_problem(
            config, DEVICE, seed, scenario.sequences, scenario.num_kv_heads
        )

    first = problem(0)
    set_bytes, flops = attention.bytes_and_flops(first)
    problems = [first] + [problem(seed) for seed in range(1, rotation_sets(set_bytes))]
    call(first)()
    q, k, v = attention.dense_views(first, scenario.num_seqs)
    want = torch.nn.functional.scaled_dot_product_attention(
        q.float(),
        k.float().repeat_interleave(q.shape[1] // k.shape[1], dim=1),
        v.float().repeat_interleave(q.shape[1] // k.shape[1], dim=1),
        is_causal=causal,
    )
    found = check(
        "out", first.out, attention.dense_output(first, want), attention.TOLERANCE[config.dtype]
    )
    del want
    ms = median_ms(rotating([call(p) for p in problems]))

    if scenario.id not in torch_cache:
        dense = [attention.dense_views(p, scenario.num_seqs) for p in problems]
        calls = [sdpa(*qkv, causal) for qkv in dense]
        torch_ms = median_ms(rotating([call for call, _ in calls]))
        torch_cache[scenario.id] = (torch_ms, calls[0][1])
        del dense, calls
    torch_ms, how = torch_cache[scenario.id]
    figures = Figures(ms, set_bytes, flops, torch_ms, how, ceilings)
    return Measurement(kernel, scenario.id, config_id or config.id, figures, tuple(found))


# ----------------------------------------------------------------------------------------
# GDN post-conv against eager torch


def gdn_shape_id(config: gdn.GdnConfig, seq_len: int) -> str:
    s = config.shape
    return f"{s.name}-L{seq_len}-h{s.H}-hv{s.HV}-k{s.K}-v{s.V}"


def measure_gdn(
    call: GdnCall,
    kernel: str,
    config: gdn.GdnConfig,
    seq_len: int,
    ceilings: Ceilings,
    torch_cache: Dict[str, Tuple[float, str]],
    config_id: str = "",
) -> Measurement:
    """Time ``call`` (which leaves its results in the problem's outputs) at ``seq_len``."""
    first = gdn.make_problem(config, seq_len, DEVICE, 0)
    set_bytes = gdn.bytes_moved(first)
    problems = [first] + [
        gdn.make_problem(config, seq_len, DEVICE, seed)
        for seed in range(1, rotation_sets(set_bytes))
    ]
    call(first)()
    want = gdn.eager_torch(config, first)
    found: List[str] = []
    for name, out in first.outputs.items():
        bound = gdn.TOLERANCE[config.dtype] if out.dtype == want["q"].dtype else 1e-5
        found.extend(check(name, out, want[name], bound))
    del want
    ms = median_ms(rotating([call(p) for p in problems]))

    shape = gdn_shape_id(config, seq_len)
    if shape not in torch_cache:
        eager = rotating([partial(gdn.eager_torch, config, p) for p in problems])
        torch_cache[shape] = (median_ms(eager), "eager torch")
    torch_ms, how = torch_cache[shape]
    figures = Figures(ms, set_bytes, 0, torch_ms, how, ceilings)
    return Measurement(kernel, shape, config_id or config.id, figures, tuple(found))
