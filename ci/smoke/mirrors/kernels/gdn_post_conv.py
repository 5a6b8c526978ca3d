"""GatedDeltaNet prefill post-conv, with the structure of vLLM's ``_fused_post_conv_kernel``.

Our own kernel. One ``[L, 2*H*K + HV*V]`` input (the conv1d output) is split into q, k and
v; programs ``< H`` L2-normalise their q and k head slices in fp32; the others copy their v
head and compute the gating ``g = -exp(A_log) * softplus(a + dt_bias)`` and
``beta = sigmoid(b)``. The arithmetic is vLLM 0.24.0's: i32 addressing, rows times the
reciprocal of their norm, the stable two-sided softplus, eps and the softplus threshold as
constexprs, the model's bf16 dt_bias. Five outputs: q, k ``[L, H, K]``, v ``[L, HV, V]``
(input dtype), g and beta ``[L, HV]`` fp32. Grid ``(cdiv(L, BLOCK_T), H + HV)``.

This kernel with ``num_stages=2`` is the one FlagTree's xpu backend rejected as
``OutOfResources: uni_sram`` while compiling Qwen3.6's prefill warm-up.
"""

import triton
import triton.language as tl


@triton.jit
def l2_normalise_rows(x, EPS: tl.constexpr):
    # As vLLM writes it: times the reciprocal of the row norm, not a division of the tile.
    inv = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) + EPS)
    return x * inv[:, None]


@triton.jit
def gdn_post_conv_kernel(
    mixed_qkv_ptr,
    a_ptr,
    b_ptr,
    A_log_ptr,
    dt_bias_ptr,
    q_out_ptr,
    k_out_ptr,
    v_out_ptr,
    g_out_ptr,
    beta_out_ptr,
    stride_x,
    stride_a,
    stride_b,
    stride_q,
    stride_k,
    stride_v,
    seq_len,
    H: tl.constexpr,
    HV: tl.constexpr,
    K: tl.constexpr,
    V: tl.constexpr,
    L2NORM_EPS: tl.constexpr,
    SOFTPLUS_THRESHOLD: tl.constexpr,
    BLOCK_T: tl.constexpr,
    BK: tl.constexpr,
    BV: tl.constexpr,
):
    i_t = tl.program_id(0)
    i_h = tl.program_id(1)
    # i32 addressing, as vLLM's (its token offsets are never widened).
    offs_t = i_t * BLOCK_T + tl.arange(0, BLOCK_T)
    mask_t = offs_t < seq_len

    if i_h < H:
        offs_k = tl.arange(0, BK)
        mask = mask_t[:, None] & (offs_k < K)[None, :]
        q_offs = offs_t[:, None] * stride_x + i_h * K + offs_k[None, :]
        k_offs = offs_t[:, None] * stride_x + H * K + i_h * K + offs_k[None, :]
        q = tl.load(mixed_qkv_ptr + q_offs, mask=mask, other=0).to(tl.float32)
        k = tl.load(mixed_qkv_ptr + k_offs, mask=mask, other=0).to(tl.float32)
        q = l2_normalise_rows(q, L2NORM_EPS)
        k = l2_normalise_rows(k, L2NORM_EPS)
        q_out = offs_t[:, None] * stride_q + i_h * K + offs_k[None, :]
        k_out = offs_t[:, None] * stride_k + i_h * K + offs_k[None, :]
        tl.store(q_out_ptr + q_out, q.to(q_out_ptr.dtype.element_ty), mask=mask)
        tl.store(k_out_ptr + k_out, k.to(k_out_ptr.dtype.element_ty), mask=mask)
    else:
        i_hv = i_h - H
        offs_v = tl.arange(0, BV)
        mask = mask_t[:, None] & (offs_v < V)[None, :]
        v_offs = offs_t[:, None] * stride_x + 2 * H * K + i_hv * V + offs_v[None, :]
        v = tl.load(mixed_qkv_ptr + v_offs, mask=mask, other=0)
        v_out = offs_t[:, None] * stride_v + i_hv * V + offs_v[None, :]
        tl.store(v_out_ptr + v_out, v, mask=mask)

        A_log = tl.load(A_log_ptr + i_hv).to(tl.float32)
        dt_bias = tl.load(dt_bias_ptr + i_hv).to(tl.float32)
        a = tl.load(a_ptr + offs_t * stride_a + i_hv, mask=mask_t, other=0).to(tl.float32)
        b = tl.load(b_ptr + offs_t * stride_b + i_hv, mask=mask_t, other=0).to(tl.float32)
        # The numerically stable two-sided softplus, and x itself above the threshold.
        x = a + dt_bias
        sp = tl.where(x > 0, x + tl.log(1.0 + tl.exp(-x)), tl.log(1.0 + tl.exp(x)))
        sp = tl.where(x <= SOFTPLUS_THRESHOLD, sp, x)
        g = -tl.exp(A_log) * sp
        beta = tl.sigmoid(b)
        tl.store(g_out_ptr + offs_t * HV + i_hv, g, mask=mask_t)
        tl.store(beta_out_ptr + offs_t * HV + i_hv, beta, mask=mask_t)
