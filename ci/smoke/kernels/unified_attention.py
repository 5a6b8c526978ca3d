"""Paged attention with the structure of vLLM's ``kernel_unified_attention`` (2D variant).

Our own kernel, written to reproduce the shape of the IR that vLLM hands a Triton backend:
one program per (query block, KV head); the Q tile is loaded once; the loop walks KV tiles
gathered through a block table; GQA packs ``num_queries_per_kv`` query heads into the rows
of one tile; a causal mask; and an online softmax whose step is a separate ``@triton.jit``
helper taking the running max ``M`` and sum ``L`` as arguments and returning
``(M, L, P, alpha)``. That helper is the pattern on which FlagTree 0.6.0's
``TritonILUVATARGPUMMAReduceThreadLocality`` pass broke SSA dominance.

Layouts: ``q``/``out`` ``[tokens, q_heads, head]``; ``k_cache``/``v_cache``
``[blocks, block_size, kv_heads, head]``; ``block_table`` ``[seqs, max_blocks]``;
``seq_lens`` ``[seqs]`` (context + new queries); ``query_start_loc`` ``[seqs + 1]``.
"""

import triton
import triton.language as tl

RCP_LN2: tl.constexpr = tl.constexpr(1.4426950408889634)  # log2(e)


@triton.jit
def softmax_step(S, M, L):
    # S is in base 2 (scores times log2(e)): exp2 is the hardware's instruction, exp is not.
    m_j = tl.maximum(M, tl.max(S, axis=1))
    # A row whose every score is masked keeps -inf: clamp so exp2() below stays finite.
    m_j = tl.where(m_j > float("-inf"), m_j, 0.0)
    P = tl.exp2(S - m_j[:, None])
    alpha = tl.exp2(M - m_j)
    L = L * alpha + tl.sum(P, axis=1)
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
    block_table_stride,
    query_stride_0,
    query_stride_1,
    output_stride_0,
    output_stride_1,
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
    row_mask = query_mask_0 & query_mask_1

    # Q tile: [BLOCK_M, HEAD_SIZE_PADDED], loaded once.
    Q = tl.load(q_ptr + query_offset, mask=dim_mask[None, :] & row_mask[:, None], other=0.0)

    block_table_offset = seq_idx * block_table_stride
    M = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    L = tl.full([BLOCK_M], 1.0, dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_SIZE_PADDED], dtype=tl.float32)

    qk_scale = scale * RCP_LN2
    seq_len = tl.load(seq_lens_ptr + seq_idx)
    context_len = seq_len - cur_batch_query_len
    # The last key any row of this tile may see (causal), capped at the sequence.
    max_seq_prefix_len = (
        context_len + q_block_local_idx * BLOCK_Q + (BLOCK_M - 1) // num_queries_per_kv + 1
    )
    max_seq_prefix_len = tl.minimum(max_seq_prefix_len, seq_len)
    num_tiles = (max_seq_prefix_len + TILE_SIZE - 1) // TILE_SIZE

    for j in range(0, num_tiles):
        seq_offset = j * TILE_SIZE + tl.arange(0, TILE_SIZE)
        tile_mask = seq_offset < max_seq_prefix_len
        physical_block_idx = tl.load(
            block_table_ptr + block_table_offset + seq_offset // BLOCK_SIZE,
            mask=tile_mask,
            other=0,
        ).to(tl.int64)
        k_offset = (
            physical_block_idx[None, :] * stride_k_cache_0
            + kv_head_idx * stride_k_cache_2
            + offs_d[:, None]
            + (seq_offset % BLOCK_SIZE)[None, :] * stride_k_cache_1
        )
        v_offset = (
            physical_block_idx[:, None] * stride_v_cache_0
            + kv_head_idx * stride_v_cache_2
            + offs_d[None, :]
            + (seq_offset % BLOCK_SIZE)[:, None] * stride_v_cache_1
        )
        # K tile: [HEAD_SIZE_PADDED, TILE_SIZE]; V tile: [TILE_SIZE, HEAD_SIZE_PADDED].
        K = tl.load(k_cache_ptr + k_offset, mask=dim_mask[:, None] & tile_mask[None, :], other=0.0)
        V = tl.load(v_cache_ptr + v_offset, mask=dim_mask[None, :] & tile_mask[:, None], other=0.0)

        seq_mask = seq_offset[None, :] <= context_len + query_pos[:, None]
        S = qk_scale * tl.dot(Q, K)
        S = tl.where(row_mask[:, None] & seq_mask & tile_mask[None, :], S, float("-inf"))

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
        mask=dim_mask[None, :] & row_mask[:, None],
    )
