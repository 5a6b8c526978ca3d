"""Backend resolution: which Triton backends are installed, and that exactly one claims
each target of the lane and the target torch inductor would build.

FlagTree's iluvatar backend accepts only ``corex`` targets while inductor builds ``cuda``
ones: that must end here as a failing test carrying Triton's own message, not as a crash.
"""

from typing import Any

import pytest

from ci.smoke.checks import RecordProperty, fail_with
from ci.smoke.compile import tritonapi
from ci.smoke.contract import properties, taxonomy
from ci.smoke.contract.lane import LaneContext, Target

pytestmark = pytest.mark.group("backends")


def _claim(target: Any, record_property: RecordProperty) -> None:
    record_property(properties.BACKEND, target.backend)
    try:
        # The function triton.compile itself calls, so the message is Triton's own.
        backend = tritonapi.make_backend(target)
    except RuntimeError as err:
        fail_with(taxonomy.BACKEND_RESOLUTION, f"RuntimeError: {err}", record_property)
    record_property(properties.CLAIMED_BY, type(backend).__module__)


def test_installed_backends(record_property: RecordProperty) -> None:
    backends = tritonapi.installed_backends()
    record_property(properties.BACKENDS, ",".join(backends))
    assert backends, "no Triton backend is installed (entry point group 'triton.backends' is empty)"


def test_target_claimed(target: Target, record_property: RecordProperty) -> None:
    record_property(properties.TARGET, target.label)
    _claim(tritonapi.gpu_target(target.backend, target.arch, target.warp_size), record_property)


def inductor_target(lane: LaneContext) -> Any:
    """The GPUTarget torch inductor builds: from the device when one is visible, else what it
    would build on the lane's hardware (the lane's inductor backend at its first target's arch)."""
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and torch.cuda.is_available():
        from torch._inductor.runtime.hints import DeviceProperties

        props = DeviceProperties.create(torch.device("cuda", 0))
        return tritonapi.gpu_target(props.type, props.cc, props.warp_size or 32)
    first = lane.targets[0]
    return tritonapi.gpu_target(lane.inductor_backend, first.arch, first.warp_size)


def test_inductor_target(lane: LaneContext, record_property: RecordProperty) -> None:
    target = inductor_target(lane)
    record_property(properties.TARGET, f"inductor:{target.backend}:{target.arch}")
    _claim(target, record_property)
