"""Paged attention with the structure of vLLM's ``kernel_unified_attention`` (2D variant).

Our own kernel, the small readable form of what vLLM 0.24.0 hands a Triton backend: one
program per (query block, KV head); the Q tile is loaded once; the loop walks KV tiles
gathered through a block table; GQA packs ``num_queries_per_kv`` query heads into the rows
of one tile; a causal mask; and an online softmax whose step is a separate ``@triton.jit``
helper taking the running max ``M`` and sum ``L`` and returning ``(M, L, P, alpha)``: the
pattern on which FlagTree 0.6.0's ``TritonILUVATARGPUMMAReduceThreadLocality`` pass broke
SSA dominance. The loop body is vLLM's 2D loop without its optional features, op for op
(``test_vllm_kernels.py::test_mirror_loop_is_vllms_op_for_op`` compares the TTIR); strides
are i64 as vLLM annotates them. vLLM's 3D path, sliding window, softcap, sinks, alibi and
FP8 are compiled from vLLM itself (the real-kernel corpus), not mirrored here.

Layouts: ``q``/``out`` ``[tokens, q_heads, head]``; ``k_cache``/``v_cache``
``[blocks, block_size, kv_heads, head]``; ``block_table`` ``[seqs, max_blocks]``;
``seq_lens`` ``[seqs]`` (context + new queries); ``query_start_loc`` ``[seqs + 1]``.
"""

import triton
import triton.language as tl


@triton.jit
def softmax_step(S, M, L):
    # Op for op as vLLM 0.24.0's softmax_step (triton_attention_helpers.py): base-e exp, the
    # row sum reduced before alpha. The op that failed in the report is alpha's exp.
    m_j = tl.maximum(M, tl.max(S, axis=1))
    # A row whose every score is masked keeps -inf: clamp so exp() below stays finite.
    m_j = tl.where(m_j > float("-inf"), m_j, 0.0)
    P = tl.exp(S - m_j[:, None])
    l_j = tl.sum(P, axis=1)
    alpha = tl.exp(M - m_j)
    L = L * alpha + l_j
    return m_j, L, P, alpha


@triton.jit
def find_seq_idx(query_start_loc_ptr, target_idx, num_seqs, BLOCK_Q: tl.constexpr):
    """Binary search for the sequence owning query block ``target_idx``."""
    left: tl.int32 = 0
    right = num_seqs
    while left < right:
        mid = (left + right) // 2
        val = tl.load(query_start_loc_ptr + mid)
        mid_val = val // BLOCK_Q + mid
        if mid_val <= target_idx:
            left = mid + 1
        else:
            right = mid
    return left - 1


@triton.jit
def unified_attention_kernel(
    out_ptr,
    q_ptr,
    k_cache_ptr,
    v_cache_ptr,
    block_table_ptr,
    seq_lens_ptr,
    query_start_loc_ptr,
    scale,
    num_seqs,
    block_table_stride: tl.int64,
    query_stride_0: tl.int64,
    query_stride_1: tl.int64,
    output_stride_0: tl.int64,
    output_stride_1: tl.int64,
    stride_k_cache_0,
    stride_k_cache_1,
    stride_k_cache_2,
    stride_v_cache_0,
    stride_v_cache_1,
    stride_v_cache_2,
    num_query_heads: tl.constexpr,
    num_queries_per_kv: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    TILE_SIZE: tl.constexpr,
    HEAD_SIZE: tl.constexpr,
    HEAD_SIZE_PADDED: tl.constexpr,
    BLOCK_Q: tl.constexpr,
    BLOCK_M: tl.constexpr,
):
    q_block_global_idx = tl.program_id(0)
    kv_head_idx = tl.program_id(1)

    seq_idx = find_seq_idx(query_start_loc_ptr, q_block_global_idx, num_seqs, BLOCK_Q)
    q_block_start_idx = tl.load(query_start_loc_ptr + seq_idx) // BLOCK_Q + seq_idx
    q_block_local_idx = q_block_global_idx - q_block_start_idx

    cur_batch_in_all_start_index = tl.load(query_start_loc_ptr + seq_idx)
    cur_batch_in_all_stop_index = tl.load(query_start_loc_ptr + seq_idx + 1)
    cur_batch_query_len = cur_batch_in_all_stop_index - cur_batch_in_all_start_index
    if q_block_local_idx * BLOCK_Q >= cur_batch_query_len:
        return

    offs_m = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_SIZE_PADDED)
    query_pos = q_block_local_idx * BLOCK_Q + offs_m // num_queries_per_kv
    query_offset_0 = cur_batch_in_all_start_index + query_pos
    query_offset_1 = kv_head_idx * num_queries_per_kv + offs_m % num_queries_per_kv
    query_offset = (
        query_offset_0[:, None] * query_stride_0
        + query_offset_1[:, None] * query_stride_1
        + offs_d[None, :]
    )
    dim_mask = offs_d < HEAD_SIZE
    query_mask_0 = query_pos < cur_batch_query_len
    query_mask_1 = query_offset_1 < num_query_heads

    # Q tile: [BLOCK_M, HEAD_SIZE_PADDED], loaded once.
    Q = tl.load(
        q_ptr + query_offset,
        mask=dim_mask[None, :] & query_mask_0[:, None] & query_mask_1[:, None],
        other=0.0,
    )

    block_table_offset = seq_idx * block_table_stride
    M = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    L = tl.full([BLOCK_M], 1.0, dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_SIZE_PADDED], dtype=tl.float32)

    seq_len = tl.load(seq_lens_ptr + seq_idx)
    context_len = seq_len - cur_batch_query_len
    # The last key any row of this tile may see (causal), capped at the sequence.
    max_seq_prefix_len = (
        context_len + q_block_local_idx * BLOCK_Q + (BLOCK_M - 1) // num_queries_per_kv + 1
    )
    max_seq_prefix_len = tl.minimum(max_seq_prefix_len, seq_len)
    num_tiles = (max_seq_prefix_len + TILE_SIZE - 1) // TILE_SIZE
    offs_t = tl.arange(0, TILE_SIZE)

    # The loop body is vLLM 0.24.0's 2D loop (no window, softcap, alibi, bias or FP8) op for
    # op: test_vllm_kernels compares the two TTIR op sequences.
    for j in range(0, num_tiles):
        seq_offset = j * TILE_SIZE + offs_t
        tile_mask = seq_offset < max_seq_prefix_len
        # Unmasked, as vLLM's: the block table has room past each row's last block.
        physical_block_idx = tl.load(
            block_table_ptr + block_table_offset + seq_offset // BLOCK_SIZE
        ).to(tl.int64)
        v_offset = (
            physical_block_idx[:, None] * stride_v_cache_0
            + kv_head_idx * stride_v_cache_2
            + offs_d[None, :]
            + (seq_offset % BLOCK_SIZE)[:, None] * stride_v_cache_1
        )
        k_offset = (
            physical_block_idx[None, :] * stride_k_cache_0
            + kv_head_idx * stride_k_cache_2
            + offs_d[:, None]
            + (seq_offset % BLOCK_SIZE)[None, :] * stride_k_cache_1
        )
        # K tile: [HEAD_SIZE_PADDED, TILE_SIZE]; V tile: [TILE_SIZE, HEAD_SIZE_PADDED].
        K = tl.load(k_cache_ptr + k_offset, mask=dim_mask[:, None] & tile_mask[None, :], other=0.0)
        V = tl.load(v_cache_ptr + v_offset, mask=dim_mask[None, :] & tile_mask[:, None], other=0.0)

        query_abs_pos = context_len + query_pos[:, None]
        seq_mask = seq_offset[None, :] <= query_abs_pos
        S = tl.zeros(shape=(BLOCK_M, TILE_SIZE), dtype=tl.float32)
        S += scale * tl.dot(Q, K)
        S = tl.where(query_mask_1[:, None] & query_mask_0[:, None] & seq_mask, S, float("-inf"))

        M, L, P, alpha = softmax_step(S, M, L)
        acc = acc * alpha[:, None]
        acc += tl.dot(P.to(V.dtype), V)

    acc = acc / L[:, None]
    output_offset = (
        query_offset_0[:, None] * output_stride_0
        + query_offset_1[:, None] * output_stride_1
        + offs_d[None, :]
    )
    tl.store(
        out_ptr + output_offset,
        acc.to(out_ptr.dtype.element_ty),
        mask=dim_mask[None, :] & query_mask_0[:, None] & query_mask_1[:, None],
    )
