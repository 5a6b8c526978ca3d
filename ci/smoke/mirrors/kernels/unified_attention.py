"""Paged attention with the structure of vLLM's ``kernel_unified_attention`` (2D and 3D paths).

Our own kernel, the small readable form of what vLLM 0.24.0 hands a Triton backend: one
program per (query block, KV head); the Q tile is loaded once; the loop walks KV tiles
gathered through a block table; GQA packs ``num_queries_per_kv`` query heads into the rows
of one tile; a causal mask; and an online softmax whose step is a separate ``@triton.jit``
helper taking the running max ``M`` and sum ``L`` and returning ``(M, L, P, alpha)``: the
pattern on which FlagTree 0.6.0's ``TritonILUVATARGPUMMAReduceThreadLocality`` pass broke
SSA dominance. The loop body is vLLM's loop without its optional features, op for op
(``test_vllm_kernels.py`` compares the TTIR of both paths); strides are i64 as vLLM
annotates them.

Two paths, as in vLLM, chosen by the ``IS_3D`` constexpr. 2D: one program per (query block,
KV head) walks the whole causal prefix and writes ``out``. 3D (split-KV decode): a third
grid axis splits each sequence's KV tiles into ``NUM_SEGMENTS`` equal segments; a program
returns early when its segment starts past the sequence, otherwise runs the same loop over
its segment only and writes the unnormalised partial output, the running max ``M`` and sum
``L`` into the ``segm_*`` buffers; ``reduce_segments_kernel`` then combines a token's
segments into ``out``. Sliding window, softcap, sinks, alibi and FP8 are compiled from vLLM
itself (the real-kernel corpus), not mirrored here.

Layouts: ``q``/``out`` ``[tokens, q_heads, head]``; ``k_cache``/``v_cache``
``[blocks, block_size, kv_heads, head]``; ``block_table`` ``[seqs, max_blocks]``;
``seq_lens`` ``[seqs]`` (context + new queries); ``query_start_loc`` ``[seqs + 1]``; 3D:
``segm_output`` ``[tokens, q_heads, segments, head]``, ``segm_max`` and ``segm_expsum``
``[tokens, q_heads, segments]``, all float32.
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
def cdiv(x, y):
    return (x + y - 1) // y


@triton.jit
def find_seq_idx(
    query_start_loc_ptr, target_idx, num_seqs, BLOCK_Q: tl.constexpr, IN_Q_BLOCKS: tl.constexpr
):
    """Binary search for the sequence owning ``target_idx``: a query block of the attention
    grid (``IN_Q_BLOCKS``: each sequence starts a new block) or a query token."""
    left: tl.int32 = 0
    right = num_seqs
    while left < right:
        mid = (left + right) // 2
        val = tl.load(query_start_loc_ptr + mid)
        mid_val = val // BLOCK_Q + mid if IN_Q_BLOCKS else val
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
    # 3D only (2D launches pass any pointer, e.g. ``out``, as vLLM does).
    segm_output_ptr,
    segm_max_ptr,
    segm_expsum_ptr,
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
    NUM_SEGMENTS: tl.constexpr,  # KV segments per sequence (3D); 1 in 2D
    IS_3D: tl.constexpr,
):
    q_block_global_idx = tl.program_id(0)
    kv_head_idx = tl.program_id(1)
    segm_idx = tl.program_id(2) if IS_3D else 0

    seq_idx = find_seq_idx(query_start_loc_ptr, q_block_global_idx, num_seqs, BLOCK_Q, True)
    q_block_start_idx = tl.load(query_start_loc_ptr + seq_idx) // BLOCK_Q + seq_idx
    q_block_local_idx = q_block_global_idx - q_block_start_idx

    cur_batch_in_all_start_index = tl.load(query_start_loc_ptr + seq_idx)
    cur_batch_in_all_stop_index = tl.load(query_start_loc_ptr + seq_idx + 1)
    cur_batch_query_len = cur_batch_in_all_stop_index - cur_batch_in_all_start_index
    if q_block_local_idx * BLOCK_Q >= cur_batch_query_len:
        return
    seq_len = tl.load(seq_lens_ptr + seq_idx)
    if IS_3D:
        # Equal segments of whole tiles; a short sequence leaves the last segments empty.
        tiles_per_segment = cdiv(seq_len, NUM_SEGMENTS * TILE_SIZE)
        if segm_idx * tiles_per_segment * TILE_SIZE >= seq_len:
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

    context_len = seq_len - cur_batch_query_len
    # The last key any row of this tile may see (causal), capped at the sequence.
    max_seq_prefix_len = (
        context_len + q_block_local_idx * BLOCK_Q + (BLOCK_M - 1) // num_queries_per_kv + 1
    )
    max_seq_prefix_len = tl.minimum(max_seq_prefix_len, seq_len)
    num_tiles = cdiv(max_seq_prefix_len, TILE_SIZE)
    if IS_3D:
        first_tile = segm_idx * tiles_per_segment
        last_tile = tl.minimum(first_tile + tiles_per_segment, num_tiles)
    else:
        first_tile = 0
        last_tile = num_tiles
    offs_t = tl.arange(0, TILE_SIZE)

    # The loop body is vLLM 0.24.0's loop (no window, softcap, alibi, bias or FP8) op for op,
    # in both paths: test_vllm_kernels compares the TTIR op sequences.
    for j in range(first_tile, last_tile):
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

    if IS_3D:
        # The segment's partials, unnormalised: reduce_segments_kernel rescales and sums them.
        row = query_offset_0.to(tl.int64) * num_query_heads + query_offset_1
        segm_offset = row * NUM_SEGMENTS + segm_idx
        tl.store(
            segm_output_ptr + segm_offset[:, None] * HEAD_SIZE_PADDED + offs_d[None, :],
            acc,
            mask=dim_mask[None, :] & query_mask_0[:, None] & query_mask_1[:, None],
        )
        tl.store(segm_max_ptr + segm_offset, M, mask=query_mask_0 & query_mask_1)
        tl.store(segm_expsum_ptr + segm_offset, L, mask=query_mask_0 & query_mask_1)
    else:
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


@triton.jit
def reduce_segments_kernel(
    out_ptr,
    segm_output_ptr,
    segm_max_ptr,
    segm_expsum_ptr,
    seq_lens_ptr,
    query_start_loc_ptr,
    num_seqs,
    output_stride_0: tl.int64,
    output_stride_1: tl.int64,
    num_query_heads: tl.constexpr,
    TILE_SIZE: tl.constexpr,
    HEAD_SIZE: tl.constexpr,
    HEAD_SIZE_PADDED: tl.constexpr,
    NUM_SEGMENTS: tl.constexpr,
):
    """One program per (query token, query head): the softmax over all of the sequence's
    segments from each segment's max, sum and partial output."""
    token_idx = tl.program_id(0)
    head_idx = tl.program_id(1)
    seq_idx = find_seq_idx(query_start_loc_ptr, token_idx, num_seqs, 1, False)
    seq_len = tl.load(seq_lens_ptr + seq_idx)
    # The segments the attention kernel wrote (its early return skipped the others).
    tiles_per_segment = cdiv(seq_len, NUM_SEGMENTS * TILE_SIZE)
    written = cdiv(seq_len, tiles_per_segment * TILE_SIZE)
    offs_s = tl.arange(0, NUM_SEGMENTS)
    offs_d = tl.arange(0, HEAD_SIZE_PADDED)
    segm_mask = offs_s < written
    dim_mask = offs_d < HEAD_SIZE

    segm_offset = (token_idx.to(tl.int64) * num_query_heads + head_idx) * NUM_SEGMENTS + offs_s
    segm_max = tl.load(segm_max_ptr + segm_offset, mask=segm_mask, other=float("-inf"))
    overall_max = tl.max(segm_max, axis=0)
    # Each segment's weight relative to the largest max; 0 for the segments not written.
    weight = tl.exp(segm_max - overall_max)
    expsum = tl.sum(tl.load(segm_expsum_ptr + segm_offset, mask=segm_mask, other=0.0) * weight)
    partials = tl.load(
        segm_output_ptr + segm_offset[:, None] * HEAD_SIZE_PADDED + offs_d[None, :],
        mask=segm_mask[:, None] & dim_mask[None, :],
        other=0.0,
    )
    acc = tl.sum(partials * weight[:, None], axis=0)
    # A row that saw no key has a zero sum: write zeros, not 0/0.
    acc = tl.where(expsum == 0.0, 0.0, acc / expsum)
    tl.store(
        out_ptr + token_idx * output_stride_0 + head_idx * output_stride_1 + offs_d,
        acc.to(out_ptr.dtype.element_ty),
        mask=dim_mask,
    )
