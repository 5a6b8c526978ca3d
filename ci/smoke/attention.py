"""Unified attention: the lane's config matrix, compile jobs, inputs, launch and reference."""

import itertools
import math
from dataclasses import dataclass
from typing import Any, Dict, List, Sequence, Tuple

from ci.smoke.compiler import CompileJob, jit_attrs
from ci.smoke.lane import LaneContext, Target

MODULE = "ci.smoke.kernels.unified_attention"
KERNEL = "unified_attention_kernel"
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
)
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
TRITON_DTYPE = {"bf16": "bf16", "fp16": "fp16"}
# max |out - ref| / max |ref| allowed, per input dtype (P is rounded to it before P @ V).
TOLERANCE = {"bf16": 1.6e-2, "fp16": 2e-3}


@dataclass(frozen=True)
class AttentionConfig:
    head_size: int
    block_m: int
    tile_size: int
    num_warps: int
    num_stages: int
    dtype: str

    @property
    def id(self) -> str:
        return (
            f"hd{self.head_size}-bm{self.block_m}-t{self.tile_size}"
            f"-w{self.num_warps}-s{self.num_stages}-{self.dtype}"
        )

    @property
    def block_q(self) -> int:
        return self.block_m // NUM_QUERIES_PER_KV


CONFIGS: Tuple[AttentionConfig, ...] = tuple(
    AttentionConfig(hd, bm, tile, 4, stages, dtype)
    for hd, bm, tile, stages, dtype in itertools.product(
        (128, 256), (16, 64), (16, 32), (2, 3), ("bf16", "fp16")
    )
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


def compile_job(
    config: AttentionConfig, target: Target, artifacts: str, timeout_s: float
) -> CompileJob:
    dtype = TRITON_DTYPE[config.dtype]
    signature: Dict[str, str] = {}
    for name in POINTER_ARGS:
        signature[name] = (
            "*i32" if name.endswith(("table_ptr", "lens_ptr", "loc_ptr")) else f"*{dtype}"
        )
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
        options={"num_warps": config.num_warps, "num_stages": config.num_stages},
        target=target,
        artifacts=artifacts,
        timeout_s=timeout_s,
        attrs=jit_attrs(target, POINTER_ARGS, launch_strides(config, COMPILE_QUERY_HEADS)),
        # BLOCK_M is tied to BLOCK_Q and the GQA packing; the KV tile is free to shrink.
        tunable_blocks=("TILE_SIZE",),
    )


# ----------------------------------------------------------------------------------------
# Numerics: a small paged batch mixing decode, prefill and chunked prefill.

# (query tokens, tokens already in the KV cache) per sequence.
Sequences = Sequence[Tuple[int, int]]
SEQUENCES: Sequences = ((1, 37), (7, 0), (19, 21))
NUM_KV_HEADS = 2


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
    sequences: Sequences = SEQUENCES,
    num_kv_heads: int = NUM_KV_HEADS,
) -> AttentionProblem:
    import torch

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

    return AttentionProblem(
        q=rand(total_q, num_q_heads, config.head_size),
        k_cache=rand(*shape_cache),
        v_cache=rand(*shape_cache),
        block_table=table.to(device),
        seq_lens=torch.tensor(seq_lens, dtype=torch.int32, device=device),
        query_start_loc=torch.tensor(starts, dtype=torch.int32, device=device),
        # Poisoned: any element the kernel fails to write stays NaN and fails the check.
        out=torch.full(
            (total_q, num_q_heads, config.head_size), float("nan"), dtype=dtype, device=device
        ),
        scale=1.0 / math.sqrt(config.head_size),
    )


def launch(kernel: Any, config: AttentionConfig, p: AttentionProblem) -> None:
    num_q_heads = p.q.shape[1]
    total_q_blocks = p.q.shape[0] // config.block_q + p.num_seqs
    grid = (total_q_blocks, p.num_kv_heads)
    kernel[grid](
        p.out,
        p.q,
        p.k_cache,
        p.v_cache,
        p.block_table,
        p.seq_lens,
        p.query_start_loc,
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
        num_warps=config.num_warps,
        num_stages=config.num_stages,
        **constexprs(config, num_q_heads),
    )


def reference(p: AttentionProblem) -> Any:
    """Float64 paged attention with GQA and the causal mask, one sequence at a time."""
    import torch

    q = p.q.double().cpu()
    k_cache, v_cache = p.k_cache.double().cpu(), p.v_cache.double().cpu()
    table, lens, starts = p.block_table.cpu(), p.seq_lens.cpu(), p.query_start_loc.cpu()
    heads = p.num_kv_heads
    out = torch.empty_like(q)
    for s in range(len(lens)):
        start, stop, seq_len = int(starts[s]), int(starts[s + 1]), int(lens[s])
        blocks = table[s, : math.ceil(seq_len / KV_BLOCK_SIZE)].long()
        keys = k_cache[blocks].reshape(-1, heads, q.shape[2])[:seq_len]
        values = v_cache[blocks].reshape(-1, heads, q.shape[2])[:seq_len]
        keys = keys.repeat_interleave(NUM_QUERIES_PER_KV, dim=1)
        values = values.repeat_interleave(NUM_QUERIES_PER_KV, dim=1)
        queries = q[start:stop]
        context = seq_len - (stop - start)
        scores = torch.einsum("qhd,khd->hqk", queries, keys) * p.scale
        allowed = torch.arange(seq_len)[None, :] <= context + torch.arange(stop - start)[:, None]
        scores = scores.masked_fill(~allowed[None], float("-inf"))
        out[start:stop] = torch.einsum("hqk,khd->qhd", scores.softmax(dim=-1), values)
    return out


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
