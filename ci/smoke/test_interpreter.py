"""Known defects of the Triton interpreter that our numerics work around (see
``ci/smoke/compile/interpreter.py``). A strict xfail: when a release fixes one, this turns red and
the workaround can go."""

import importlib

import pytest

from ci.smoke.compile.interpreter import BF16_DOT_FIXED
from ci.smoke.contract.lane import LaneContext, installed_versions

_TRITON = installed_versions()["triton"]


@pytest.mark.xfail(
    _TRITON not in BF16_DOT_FIXED,
    reason=f"triton {_TRITON} interpreter: tl.dot multiplies bf16 as raw uint16 bits",
    strict=True,
)
def test_interpreter_bf16_dot(lane: LaneContext) -> None:
    if lane.execution != "interpreter":
        pytest.skip("the lane does not use the interpreter")
    torch = pytest.importorskip("torch")
    probe = importlib.import_module("ci.smoke.mirrors.kernels.dot_probe")
    x = torch.randn(16, 16).bfloat16()
    y = torch.randn(16, 16).bfloat16()
    out = torch.full((16, 16), float("nan"))
    probe.dot_kernel[(1,)](x, y, out, 16)
    expected = x.float() @ y.float()
    assert torch.allclose(out, expected, rtol=1e-2, atol=1e-2), (
        "bf16 dot is wrong in the interpreter"
    )
