"""Unified attention: the lane's config matrix, compile jobs, inputs, launch and reference.

Both of vLLM's paths: 2D (prefill and mixed batches) and 3D, the split-KV decode path whose
segments ``reduce_segments_kernel`` combines (vLLM takes it for decode-only batches of few
sequences).
"""

import itertools
import math
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from ci.smoke.compile.compiler import CompileJob, jit_attrs
from ci.smoke.contract.lane import LaneContext, Target
from ci.smoke.realkernels.vllm_corpus import NUM_SEGMENTS  # vLLM's split of a decode sequence's KV

MODULE = "ci.smoke.mirrors.kernels.unified_attention"
KERNEL = "unified_attention_kernel"
REDUCE_KERNEL = "reduce_segments_kernel"
KV_BLOCK_SIZE = 16
# Block-table columns past the longest sequence: the largest KV tile (128) in blocks.
TABLE_SLACK_BLOCKS = 128 // KV_BLOCK_SIZE
NUM_QUERIES_PER_KV = 4
# Compile with a production-like head count: 32 query heads on 8 KV heads.
COMPILE_QUERY_HEADS = 32

POINTER_ARGS = (
    "out_ptr",
    "q_ptr",
    "k_cache_ptr",
    "v_cache_ptr",
    "block_table_ptr",
    "seq_lens_ptr",
    "query_start_loc_ptr",
    "segm_output_ptr",
    "segm_max_ptr",
    "segm_expsum_ptr",
)
SEGMENT_POINTERS = POINTER_ARGS[-3:]
I32_ARGS = ("num_seqs",)
# i64 as vLLM annotates its strides (the mirror's kernel annotates them alike).
I64_ARGS = (
    "block_table_stride",
    "query_stride_0",
    "query_stride_1",
    "output_stride_0",
    "output_stride_1",
    "stride_k_cache_0",
    "stride_k_cache_1",
    "stride_k_cache_2",
    "stride_v_cache_0",
    "stride_v_cache_1",
    "stride_v_cache_2",
)
# The block-table stride and sequence count vary per batch: no divisibility is assumed.
REDUCE_POINTER_ARGS = (
    "out_ptr",
    "segm_output_ptr",
    "segm_max_ptr",
    "segm_expsum_ptr",
    "seq_lens_ptr",
    "query_start_loc_ptr",
)
REDUCE_I64_ARGS = ("output_stride_0", "output_stride_1")
TRITON_DTYPE = {"bf16": "bf16", "fp16": "fp16"}
# max |out - ref| / max |ref| allowed, per input dtype (P is rounded to it before P @ V).
TOLERANCE = {"bf16": 1.6e-2, "fp16": 2e-3}


@dataclass(frozen=True)
class AttentionConfig:
    head_size: int
    block_m: int
    tile_size: int
    # None: the launch passes none and the backend's default applies (as vLLM launches).
    num_warps: Optional[int]
    num_stages: Optional[int]
    dtype: str
    # KV segments per sequence of the 3D (split-KV) path; None for the 2D path.
    segments: Optional[int] = None

    @property
    def id(self) -> str:
        split = f"-seg{self.segments}" if self.is_3d else ""
        warps = "default" if self.num_warps is None else self.num_warps
        stages = "default" if self.num_stages is None else self.num_stages
        return (
            f"hd{self.head_size}-bm{self.block_m}-t{self.tile_size}{split}"
            f"-w{warps}-s{stages}-{self.dtype}"
        )

    @property
    def is_3d(self) -> bool:
        return self.segments is not None

    @property
    def block_q(self) -> int:
        return self.block_m // NUM_QUERIES_PER_KV

    @property
    def options(self) -> Dict[str, int]:
        """The launch's and the compile's options: only those the config sets."""
        given = {"num_warps": self.num_warps, "num_stages": self.num_stages}
        return {name: value for name, value in given.items() if value is not None}


DTYPES = ("bf16", "fp16")
CONFIGS: Tuple[AttentionConfig, ...] = (
    *(
        AttentionConfig(hd, bm, tile, 4, stages, dtype)
        for hd, bm, tile, stages, dtype in itertools.product(
            (128, 256), (16, 64), (16, 32), (2, 3), DTYPES
        )
    ),
    # vLLM's own launches: no num_warps / num_stages (each backend's defaults), BLOCK_M 16
    # at GQA 4; 2D with the prefill tile (32), 3D with the decode tile (16, 2-byte KV).
    *(AttentionConfig(hd, 16, 32, None, None, dtype) for hd in (128, 256) for dtype in DTYPES),
    *(
        AttentionConfig(hd, 16, 16, warps, stages, dtype, NUM_SEGMENTS)
        for hd in (128, 256)
        for warps, stages in ((None, None), (4, 2))
        for dtype in DTYPES
    ),
)
# Larger tiles for lanes that measure performance (a GPU's prefill wants them); compiled,
# checked and timed there only: a 64 KiB-shared target could not hold them.
PERF_CONFIGS: Tuple[AttentionConfig, ...] = (
    AttentionConfig(128, 64, 64, 4, 3, "bf16"),
    AttentionConfig(256, 128, 64, 8, 2, "bf16"),
)


def configs_for(lane: LaneContext) -> Tuple[AttentionConfig, ...]:
    """The lane's config matrix: every config, plus the perf ones where it measures speed."""
    return CONFIGS + PERF_CONFIGS if lane.runs("perf") else CONFIGS


def constexprs(config: AttentionConfig, num_query_heads: int) -> Dict[str, Any]:
    return {
        "num_query_heads": num_query_heads,
        "num_queries_per_kv": NUM_QUERIES_PER_KV,
        "BLOCK_SIZE": KV_BLOCK_SIZE,
        "TILE_SIZE": config.tile_size,
        "HEAD_SIZE": config.head_size,
        "HEAD_SIZE_PADDED": config.head_size,
        "BLOCK_Q": config.block_q,
        "BLOCK_M": config.block_m,
        "NUM_SEGMENTS": config.segments or 1,
        "IS_3D": config.is_3d,
    }


def reduce_constexprs(config: AttentionConfig, num_query_heads: int) -> Dict[str, Any]:
    assert config.segments is not None, f"{config.id}: a 2D config has no segments to reduce"
    return {
        "num_query_heads": num_query_heads,
        "TILE_SIZE": config.tile_size,
        "HEAD_SIZE": config.head_size,
        "HEAD_SIZE_PADDED": config.head_size,
        "NUM_SEGMENTS": config.segments,
    }


def launch_strides(config: AttentionConfig, num_query_heads: int) -> Dict[str, int]:
    """The stride arguments at a launch on contiguous tensors (multiples of the head size:
    the JIT marks them divisible by 16, and without that a variant no launch runs compiles:
    scalar loads, an unpipelined loop, spilled registers)."""
    head = config.head_size
    kv_heads = num_query_heads // NUM_QUERIES_PER_KV
    rows = {"0": KV_BLOCK_SIZE * kv_heads * head, "1": kv_heads * head, "2": head}
    return {
        "query_stride_0": num_query_heads * head,
        "query_stride_1": head,
        "output_stride_0": num_query_heads * head,
        "output_stride_1": head,
        **{f"stride_{cache}_cache_{i}": v for cache in ("k", "v") for i, v in rows.items()},
    }


def _pointer_type(name: str, config: AttentionConfig) -> str:
    if name.endswith(("table_ptr", "lens_ptr", "loc_ptr")):
        return "*i32"
    if name.startswith("segm_"):
        # 2D launches pass ``out`` in their place, as vLLM's do.
        return "*fp32" if config.is_3d else f"*{TRITON_DTYPE[config.dtype]}"
    return f"*{TRITON_DTYPE[config.dtype]}"


def compile_job(
    config: AttentionConfig, target: Target, artifacts: str, timeout_s: float
) -> CompileJob:
    """The attention kernel as the config launches it (2D, or 3D with its segments)."""
    signature = {name: _pointer_type(name, config) for name in POINTER_ARGS}
    signature["scale"] = "fp32"
    signature.update({name: "i32" for name in I32_ARGS})
    signature.update({name: "i64" for name in I64_ARGS})
    consts = constexprs(config, COMPILE_QUERY_HEADS)
    signature.update({name: "constexpr" for name in consts})
    return CompileJob(
        module=MODULE,
        kernel=KERNEL,
        signature=signature,
        constexprs=consts,
        options=config.options,
        target=target,
        artifacts=artifacts,
        timeout_s=timeout_s,
        attrs=jit_attrs(target, POINTER_ARGS, launch_strides(config, COMPILE_QUERY_HEADS)),
        # BLOCK_M is tied to BLOCK_Q and the GQA packing; the KV tile is free to shrink.
        tunable_blocks=("TILE_SIZE",),
    )


def reduce_compile_job(
    config: AttentionConfig, target: Target, artifacts: str, timeout_s: float
) -> CompileJob:
    """The 3D path's second kernel, combining the segments the attention kernel wrote."""
    signature = {name: _pointer_type(name, config) for name in REDUCE_POINTER_ARGS}
    signature.update({name: "i32" for name in I32_ARGS})
    signature.update({name: "i64" for name in REDUCE_I64_ARGS})
    consts = reduce_constexprs(config, COMPILE_QUERY_HEADS)
    signature.update({name: "constexpr" for name in consts})
    strides = launch_strides(config, COMPILE_QUERY_HEADS)
    return CompileJob(
        module=MODULE,
        kernel=REDUCE_KERNEL,
        signature=signature,
        constexprs=consts,
        options=config.options,
        target=target,
        artifacts=artifacts,
        timeout_s=timeout_s,
        attrs=jit_attrs(target, REDUCE_POINTER_ARGS, {n: strides[n] for n in REDUCE_I64_ARGS}),
    )


# ----------------------------------------------------------------------------------------
# Numerics: a small paged batch mixing decode, prefill and chunked prefill.

# (query tokens, tokens already in the KV cache) per sequence.
Sequences = Sequence[Tuple[int, int]]
SEQUENCES: Sequences = ((1, 37), (7, 0), (19, 21))
# The 3D path's batch: decode only (as vLLM launches it), sequences from one key to nearly
# all 16 segments, so that most programs of short sequences take the second early return.
DECODE_SEQUENCES: Sequences = ((1, 37), (1, 300), (1, 0), (1, 700))
NUM_KV_HEADS = 2


@dataclass
class SegmentBuffers:
    """The 3D path's per-segment partials (float32), poisoned with NaN before the launch."""

    output: Any  # [tokens, q_heads, segments, head]: sum of exp(S - M) V, unnormalised
    max: Any  # [tokens, q_heads, segments]: M
    expsum: Any  # [tokens, q_heads, segments]: L, the sum of exp(S - M)


@dataclass
class AttentionProblem:
    q: Any
    k_cache: Any
    v_cache: Any
    block_table: Any
    seq_lens: Any
    query_start_loc: Any
    out: Any
    scale: float
    segments: Optional[SegmentBuffers] = None

    @property
    def num_seqs(self) -> int:
        return int(self.seq_lens.shape[0])

    @property
    def num_kv_heads(self) -> int:
        return int(self.k_cache.shape[2])


def make_problem(
    config: AttentionConfig,
    device: str,
    seed: int = 0,
    sequences: Optional[Sequences] = None,
    num_kv_heads: int = NUM_KV_HEADS,
) -> AttentionProblem:
    """Inputs for one launch; ``sequences`` default to the config's path's numerics batch."""
    import torch

    if sequences is None:
        sequences = DECODE_SEQUENCES if config.is_3d else SEQUENCES

    gen = torch.Generator().manual_seed(seed)
    # Large inputs are drawn where they live: the CPU would take seconds per gigabyte.
    data_gen = gen if device == "cpu" else torch.Generator(device=device).manual_seed(seed)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[config.dtype]
    num_q_heads = num_kv_heads * NUM_QUERIES_PER_KV
    total_q = sum(q for q, _ in sequences)
    seq_lens = [q + c for q, c in sequences]
    blocks_per_seq = [math.ceil(s / KV_BLOCK_SIZE) for s in seq_lens]
    # Room past each row's last block: the kernel reads the table unmasked (as vLLM's does;
    # vLLM sizes its tables to the longest request), up to a whole tile further.
    max_blocks = max(blocks_per_seq) + TABLE_SLACK_BLOCKS
    num_blocks = sum(blocks_per_seq) + 3  # spare blocks that no sequence owns
    # Physical blocks handed out in a shuffled order, so the block table really matters.
    physical = torch.randperm(num_blocks, generator=gen)
    table = torch.zeros((len(sequences), max_blocks), dtype=torch.int32)
    cursor = 0
    for s, n in enumerate(blocks_per_seq):
        table[s, :n] = physical[cursor : cursor + n].to(torch.int32)
        cursor += n
    shape_cache = (num_blocks, KV_BLOCK_SIZE, num_kv_heads, config.head_size)
    starts = [0]
    for q, _ in sequences:
        starts.append(starts[-1] + q)

    def rand(*shape: int) -> Any:
        # Never zeros: a kernel that writes nothing or the wrong rows must show.
        drawn = torch.randn(*shape, generator=data_gen, device=data_gen.device)
        return (drawn + 0.1).to(dtype).to(device)

    def poisoned(*shape: int, dtype: Any = torch.float32) -> Any:
        # Any element the kernels fail to write stays NaN and fails the check.
        return torch.full(shape, float("nan"), dtype=dtype, device=device)

    segments = None
    if config.segments is not None:
        partials = (total_q, num_q_heads, config.segments)
        segments = SegmentBuffers(
            poisoned(*partials, config.head_size), poisoned(*partials), poisoned(*partials)
        )
    return AttentionProblem(
        q=rand(total_q, num_q_heads, config.head_size),
        k_cache=rand(*shape_cache),
        v_cache=rand(*shape_cache),
        block_table=table.to(device),
        seq_lens=torch.tensor(seq_lens, dtype=torch.int32, device=device),
        query_start_loc=torch.tensor(starts, dtype=torch.int32, device=device),
        out=poisoned(total_q, num_q_heads, config.head_size, dtype=dtype),
        scale=1.0 / math.sqrt(config.head_size),
        segments=segments,
    )


def launch(kernels: ModuleType, config: AttentionConfig, p: AttentionProblem) -> None:
    """Launch ``kernels`` (the mirror's module) as vLLM does: the attention kernel on the
    config's path, then on the 3D path ``reduce_segments_kernel``; only the options the
    config sets."""
    num_q_heads = p.q.shape[1]
    total_q_blocks = p.q.shape[0] // config.block_q + p.num_seqs
    if config.is_3d:
        assert p.segments is not None, f"{config.id}: the problem has no segment buffers"
        grid: Tuple[int, ...] = (total_q_blocks, p.num_kv_heads, config.segments or 1)
        partials = (p.segments.output, p.segments.max, p.segments.expsum)
    else:
        grid = (total_q_blocks, p.num_kv_heads)
        partials = (p.out, p.out, p.out)
    kernels.unified_attention_kernel[grid](
        p.out,
        p.q,
        p.k_cache,
        p.v_cache,
        p.block_table,
        p.seq_lens,
        p.query_start_loc,
        *partials,
        p.scale,
        p.num_seqs,
        p.block_table.stride(0),
        p.q.stride(0),
        p.q.stride(1),
        p.out.stride(0),
        p.out.stride(1),
        p.k_cache.stride(0),
        p.k_cache.stride(1),
        p.k_cache.stride(2),
        p.v_cache.stride(0),
        p.v_cache.stride(1),
        p.v_cache.stride(2),
        **config.options,
        **constexprs(config, num_q_heads),
    )
    if config.is_3d:
        kernels.reduce_segments_kernel[(p.q.shape[0], num_q_heads)](
            p.out,
            *partials,
            p.seq_lens,
            p.query_start_loc,
            p.num_seqs,
            p.out.stride(0),
            p.out.stride(1),
            **config.options,
            **reduce_constexprs(config, num_q_heads),
        )


def _scores(p: AttentionProblem) -> Iterator[Tuple[int, Any, Any, Any]]:
    """Per sequence: (its first token, the float64 scores ``[heads, queries, keys]`` with the
    causal mask applied as -inf, the values ``[keys, heads, head]``, the mask ``allowed``
    ``[queries, keys]``)."""
    import torch

    q = p.q.double().cpu()
    k_cache, v_cache = p.k_cache.double().cpu(), p.v_cache.double().cpu()
    table, lens, starts = p.block_table.cpu(), p.seq_lens.cpu(), p.query_start_loc.cpu()
    heads = p.num_kv_heads
    for s in range(len(lens)):
        start, stop, seq_len = int(starts[s]), int(starts[s + 1]), int(lens[s])
        blocks = table[s, : math.ceil(seq_len / KV_BLOCK_SIZE)].long()
        keys = k_cache[blocks].reshape(-1, heads, q.shape[2])[:seq_len]
        values = v_cache[blocks].reshape(-1, heads, q.shape[2])[:seq_len]
        keys = keys.repeat_interleave(NUM_QUERIES_PER_KV, dim=1)
        values = values.repeat_interleave(NUM_QUERIES_PER_KV, dim=1)
        context = seq_len - (stop - start)
        scores = torch.einsum("qhd,khd->hqk", q[start:stop], keys) * p.scale
        allowed = torch.arange(seq_len)[None, :] <= context + torch.arange(stop - start)[:, None]
        yield start, scores.masked_fill(~allowed[None], float("-inf")), values, allowed


def reference(p: AttentionProblem) -> Any:
    """Float64 paged attention with GQA and the causal mask, one sequence at a time."""
    import torch

    out = torch.empty(p.q.shape, dtype=torch.float64)
    for start, scores, values, _ in _scores(p):
        queries = scores.shape[1]
        out[start : start + queries] = torch.einsum("hqk,khd->qhd", scores.softmax(-1), values)
    return out


def segment_reference(config: AttentionConfig, p: AttentionProblem) -> Dict[str, Any]:
    """Float64 partials of the 3D path: per (token, query head, segment) the max score M,
    L (the sum of exp(S - M)) and the segment's own softmax average (its output over L),
    NaN where the segment holds no key the token sees (nothing there to check)."""
    import torch

    assert config.segments is not None, f"{config.id}: a 2D config has no segments"
    shape = (p.q.shape[0], p.q.shape[1], config.segments)
    found = {
        "max": torch.full(shape, float("nan"), dtype=torch.float64),
        "expsum": torch.full(shape, float("nan"), dtype=torch.float64),
        "average": torch.full((*shape, p.q.shape[2]), float("nan"), dtype=torch.float64),
    }
    for start, scores, values, allowed in _scores(p):
        seq_len = scores.shape[2]
        span = math.ceil(seq_len / (config.segments * config.tile_size)) * config.tile_size
        for segment in range(config.segments):
            keys = slice(segment * span, min((segment + 1) * span, seq_len))
            for query in range(scores.shape[1]):
                if not bool(allowed[query, keys].any()):
                    continue
                part = scores[:, query, keys]  # [heads, keys]
                m = part.max(dim=-1).values
                weights = torch.exp(part - m[:, None])
                token = start + query
                found["max"][token, :, segment] = m
                expsum = weights.sum(-1)
                found["expsum"][token, :, segment] = expsum
                average = torch.einsum("hk,khd->hd", weights, values[keys]) / expsum[:, None]
                found["average"][token, :, segment] = average
    return found


def compare_segments(config: AttentionConfig, p: AttentionProblem) -> List[str]:
    """Problems of the 3D path's partials against ``segment_reference`` (empty when right)."""
    import torch

    assert p.segments is not None, f"{config.id}: the problem has no segment buffers"
    want = segment_reference(config, p)
    got = {
        "max": p.segments.max.double().cpu(),
        "expsum": p.segments.expsum.double().cpu(),
        "average": (p.segments.output / p.segments.expsum[..., None]).double().cpu(),
    }
    problems = []
    for name, ref in want.items():
        checked = ~torch.isnan(ref)
        value = got[name][checked]
        nans = int(torch.isnan(value).sum())
        if nans:
            problems.append(f"segment {name}: {nans} of {value.numel()} written values are NaN")
            continue
        rel = float((value - ref[checked]).abs().max()) / float(ref[checked].abs().max())
        if not rel <= TOLERANCE[config.dtype]:
            problems.append(
                f"segment {name}: max relative error {rel:.3e} > {TOLERANCE[config.dtype]:.1e}"
            )
    return problems


@dataclass(frozen=True)
class Scenario:
    """A realistic batch the perf tests time: equal sequences, so SDPA can run it dense."""

    name: str
    head_size: int
    num_seqs: int
    query_tokens: int
    context_tokens: int
    num_kv_heads: int = 8

    @property
    def id(self) -> str:
        return (
            f"{self.name}-hd{self.head_size}-b{self.num_seqs}-q{self.query_tokens}"
            f"-ctx{self.context_tokens}-kv{self.num_kv_heads}"
        )

    @property
    def sequences(self) -> Sequences:
        return ((self.query_tokens, self.context_tokens),) * self.num_seqs


PERF_SCENARIOS = tuple(
    scenario
    for head_size in (128, 256)
    for scenario in (
        Scenario("prefill", head_size, num_seqs=4, query_tokens=4096, context_tokens=0),
        Scenario("decode", head_size, num_seqs=64, query_tokens=1, context_tokens=4095),
    )
)


def dense_views(p: AttentionProblem, num_seqs: int) -> Tuple[Any, Any, Any]:
    """Q, K and V as ``[seqs, heads, tokens, head]`` (SDPA's layout), gathered out of the pages."""
    seq_len = int(p.seq_lens[0])
    blocks = math.ceil(seq_len / KV_BLOCK_SIZE)
    table = p.block_table[:, :blocks].long()
    shape = (num_seqs, blocks * KV_BLOCK_SIZE, p.num_kv_heads, p.q.shape[2])

    def gather(cache: Any) -> Any:
        return cache[table].reshape(shape)[:, :seq_len].transpose(1, 2).contiguous()

    q = p.q.reshape(num_seqs, -1, p.q.shape[1], p.q.shape[2]).transpose(1, 2).contiguous()
    return q, gather(p.k_cache), gather(p.v_cache)


def dense_output(p: AttentionProblem, out: Any) -> Any:
    """SDPA's ``[seqs, heads, tokens, head]`` output in our ``[tokens, heads, head]`` layout."""
    return out.transpose(1, 2).reshape(p.q.shape)


def bytes_and_flops(p: AttentionProblem) -> Tuple[int, int]:
    """Minimum bytes moved and matmul FLOPs of one launch, for performance figures."""
    element = p.q.element_size()
    q_bytes = 2 * p.q.numel() * element  # read Q, write out
    kv_tokens = int(p.seq_lens.sum())
    kv_bytes = 2 * kv_tokens * p.num_kv_heads * p.q.shape[2] * element
    flops = 0
    starts = p.query_start_loc.tolist()
    for s, seq_len in enumerate(p.seq_lens.tolist()):
        queries = starts[s + 1] - starts[s]
        context = seq_len - queries
        visible = sum(context + i + 1 for i in range(queries))
        flops += 4 * visible * p.q.shape[1] * p.q.shape[2]
    return q_bytes + kv_bytes, flops


def compare(out: Any, ref: Any, dtype: str) -> List[str]:
    """Problems found (empty when the output matches): NaN never passes."""
    import torch

    got = out.double().cpu()
    problems = []
    nans = int(torch.isnan(got).sum())
    if nans:
        problems.append(f"{nans} of {got.numel()} output elements are NaN (not written or invalid)")
        return problems
    err = (got - ref).abs()
    scale = float(ref.abs().max())
    rel = float(err.max()) / scale
    if not rel <= TOLERANCE[dtype]:
        where = tuple(int(i) for i in torch.nonzero(err == err.max())[0])
        problems.append(
            f"numeric mismatch: max relative error {rel:.3e} > {TOLERANCE[dtype]:.1e} "
            f"(max abs error {float(err.max()):.3e} at [token, head, dim] {where})"
        )
    return problems
