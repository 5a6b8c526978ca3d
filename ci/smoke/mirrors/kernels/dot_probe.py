"""One bf16 ``tl.dot``: the smallest kernel that shows the interpreter's bf16 dot defect."""

import triton
import triton.language as tl


@triton.jit
def dot_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tile = offs[:, None] * N + offs[None, :]
    tl.store(out_ptr + tile, tl.dot(tl.load(x_ptr + tile), tl.load(y_ptr + tile)))
