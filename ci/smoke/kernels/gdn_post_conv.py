"""GatedDeltaNet prefill post-conv, with the structure of vLLM's ``_fused_post_conv_kernel``.

Our own kernel. One ``[L, 2*H*K + HV*V]`` input (the conv1d output) is split into q, k and
v; programs ``< H`` L2-normalise their q and k head slices in fp32; the others copy their v
head and compute the gating ``g = -exp(A_log) * softplus(a + dt_bias)`` and
``beta = sigmoid(b)``. Five outputs: q, k ``[L, H, K]``, v ``[L, HV, V]`` (input dtype),
g and beta ``[L, HV]`` fp32. Grid ``(cdiv(L, BLOCK_T), H + HV)``.

This kernel with ``num_stages=2`` is the one FlagTree's xpu backend rejected as
``OutOfResources: uni_sram`` while compiling Qwen3.6's prefill warm-up.
"""

import triton
import triton.language as tl


@triton.jit
def softplus(x):
    # Above 20, log(1 + exp(x)) equals x to fp32 precision, and exp(x) would overflow.
    return tl.where(x > 20.0, x, tl.log(1.0 + tl.exp(x)))


@triton.jit
def l2_normalise_rows(x, eps):
    return x / tl.sqrt(tl.sum(x * x, axis=1) + eps)[:, None]


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
    seq_len,
    stride_x,
    stride_a,
    stride_b,
    eps,
    H: tl.constexpr,
    HV: tl.constexpr,
    K: tl.constexpr,
    V: tl.constexpr,
    BLOCK_T: tl.constexpr,
    BK: tl.constexpr,
    BV: tl.constexpr,
):
    i_t = tl.program_id(0)
    i_h = tl.program_id(1)
    offs_t = i_t * BLOCK_T + tl.arange(0, BLOCK_T)
    mask_t = offs_t < seq_len
    rows = offs_t.to(tl.int64)

    if i_h < H:
        offs_k = tl.arange(0, BK)
        mask = mask_t[:, None] & (offs_k < K)[None, :]
        q_cols = i_h * K + offs_k
        k_cols = H * K + i_h * K + offs_k
        q = tl.load(
            mixed_qkv_ptr + rows[:, None] * stride_x + q_cols[None, :], mask=mask, other=0.0
        )
        k = tl.load(
            mixed_qkv_ptr + rows[:, None] * stride_x + k_cols[None, :], mask=mask, other=0.0
        )
        q = l2_normalise_rows(q.to(tl.float32), eps)
        k = l2_normalise_rows(k.to(tl.float32), eps)
        out_offs = rows[:, None] * (H * K) + i_h * K + offs_k[None, :]
        tl.store(q_out_ptr + out_offs, q.to(q_out_ptr.dtype.element_ty), mask=mask)
        tl.store(k_out_ptr + out_offs, k.to(k_out_ptr.dtype.element_ty), mask=mask)
    else:
        i_hv = i_h - H
        offs_v = tl.arange(0, BV)
        mask = mask_t[:, None] & (offs_v < V)[None, :]
        v_cols = 2 * H * K + i_hv * V + offs_v
        v = tl.load(
            mixed_qkv_ptr + rows[:, None] * stride_x + v_cols[None, :], mask=mask, other=0.0
        )
        out_offs = rows[:, None] * (HV * V) + i_hv * V + offs_v[None, :]
        tl.store(v_out_ptr + out_offs, v, mask=mask)

        a = tl.load(a_ptr + rows * stride_a + i_hv, mask=mask_t, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + rows * stride_b + i_hv, mask=mask_t, other=0.0).to(tl.float32)
        A_log = tl.load(A_log_ptr + i_hv).to(tl.float32)
        dt_bias = tl.load(dt_bias_ptr + i_hv).to(tl.float32)
        g = -tl.exp(A_log) * softplus(a + dt_bias)
        beta = tl.sigmoid(b)
        tl.store(g_out_ptr + rows * HV + i_hv, g, mask=mask_t)
        tl.store(beta_out_ptr + rows * HV + i_hv, beta, mask=mask_t)
