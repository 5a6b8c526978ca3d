"""Helpers the smoke tests share: where numerics run, and failing with a failure kind."""

import contextlib
import os
from pathlib import Path
from typing import Any, Callable, ContextManager

import pytest

from ci.smoke.contract import properties
from ci.smoke.contract.lane import LaneContext

RecordProperty = Callable[[str, object], None]


def fail_with(kind: str, message: str, record_property: RecordProperty) -> None:
    record_property(properties.FAILURE_KIND, kind)
    pytest.fail(message, pytrace=False)


def numerics_device(lane: LaneContext) -> str:
    """The torch device numerics run on, or skip the test with the reason."""
    torch = pytest.importorskip("torch", reason="numerics need torch")
    if lane.execution == "interpreter":
        return "cpu"
    if torch.cuda.is_available():
        return "cuda"
    pytest.skip(f"lane {lane.lane} runs numerics on a device and none is visible to torch")
    raise AssertionError("unreachable")


def launch_guard(lane: LaneContext) -> ContextManager[Any]:
    """Around a numerics launch: the interpreter's bf16 dot fix where we interpret."""
    if lane.execution != "interpreter":
        return contextlib.nullcontext()
    from ci.smoke.compile.interpreter import exact_bf16_dot

    return exact_bf16_dot()


def compile_timeout_s(lane: LaneContext) -> float:
    """Seconds a single compile may take before it is killed and reported as a timeout."""
    explicit = os.environ.get("FLAGCI_COMPILE_TIMEOUT_S")
    return float(explicit) if explicit else lane.test_timeout_s * 0.8


def artifacts_root() -> Path:
    """Where each test's artifact folder goes (``python -m ci.smoke`` sets it)."""
    return Path(os.environ.get("FLAGCI_ARTIFACTS", "smoke-artifacts"))
