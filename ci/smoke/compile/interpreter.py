"""What the Triton interpreter needs to check our kernels' numerics on the CPU.

Triton's interpreter (every release from 3.2.0 to 3.9.0) stores bf16 as raw uint16 bits
and its ``create_dot`` multiplies those bits as integers, so every bf16 ``tl.dot`` returns
garbage. Compiled kernels are not affected. ``exact_bf16_dot`` widens bf16 operands to fp32
first (what the hardware's MMA does) for the duration of a numerics launch, so the kernels'
own logic (masks, block tables, online softmax) is still checked in bf16.
``test_interpreter.py`` keeps a strict xfail on the upstream bug, which turns red once a
Triton release fixes it.
"""

import contextlib
from typing import Any, Iterator

# Triton releases whose interpreter computes bf16 dots right. Every release this project has
# run has the bug (3.2.0, 3.3.1, 3.4.0, 3.5.1, 3.6.0 and 3.9.0: benchmarks/triton_versions.py);
# the strict xfail turns red on the first release that fixes it, which then goes here.
BF16_DOT_FIXED: tuple[str, ...] = ()


def _widen(handle: Any) -> Any:
    import numpy as np
    import triton.language as tl

    if handle.dtype.scalar == tl.bfloat16:
        return (handle.data.astype(np.uint32) << 16).view(np.float32)
    return handle.data


@contextlib.contextmanager
def exact_bf16_dot() -> Iterator[None]:
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    original = builder.create_dot

    def create_dot(self: Any, a: Any, b: Any, d: Any, *rest: Any) -> Any:
        if tl.bfloat16 not in (a.dtype.scalar, b.dtype.scalar):
            return original(self, a, b, d, *rest)
        product = np.matmul(_widen(a), _widen(b), dtype=d.data.dtype) + d.data
        return interpreter.TensorHandle(product, d.dtype.scalar)

    builder.create_dot = create_dot
    try:
        yield
    finally:
        builder.create_dot = original
