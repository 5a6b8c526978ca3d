"""The stack's own facts against the lane file: the driver's target, the device's shared
memory per block, the installed compiler. A difference fails naming both values."""

import pytest

from ci.smoke.checks import RecordProperty, fail_with
from ci.smoke.compile import stack, tritonapi
from ci.smoke.contract import properties, taxonomy
from ci.smoke.contract.lane import LaneContext, installed_versions

pytestmark = pytest.mark.group("backends")


def test_compiler_version(lane: LaneContext, record_property: RecordProperty) -> None:
    package, pinned = lane.compiler["package"], lane.compiler["version"]
    installed = installed_versions().get(package, "")
    record_property(properties.INSTALLED_COMPILER, f"{package} {installed}")
    record_property(properties.TRITON_REPORTS, tritonapi.compiler_version())
    if installed != pinned:
        fail_with(
            taxonomy.STACK_FACTS,
            str(stack.Difference(f"{package} version", pinned, installed or "not installed")),
            record_property,
        )


def test_stack_facts(lane: LaneContext, record_property: RecordProperty) -> None:
    record_property(
        properties.BACKENDS, ",".join(f"{n}={m}" for n, m in tritonapi.installed_backends().items())
    )
    if lane.execution != "device":
        pytest.skip(f"lane {lane.lane} has no device: there is no driver to ask")
    missing = stack.missing_device(lane.devices)
    if missing:
        pytest.skip(f"{missing}: the driver's facts are probed on a node with the device")
    driver = stack.probe_driver()
    if not driver.probed:
        fail_with(
            taxonomy.DRIVER,
            f"the lane's device is present but the driver cannot be asked: {driver.problem}",
            record_property,
        )
    record_property(properties.DRIVER_TARGET, f"{driver.backend}:{driver.arch}:{driver.warp_size}")
    if driver.shared_per_block is not None:
        record_property(properties.DRIVER_SHARED_PER_BLOCK, driver.shared_per_block)
    else:
        record_property(
            properties.SHARED_CHECK, "not probed: the driver reports no shared memory per block"
        )
    expected = lane.declared_targets[0]
    found = stack.differences(
        expected.backend, expected.arch, expected.warp_size, expected.shared_limit, driver
    )
    if found:
        fail_with(taxonomy.STACK_FACTS, "\n".join(str(d) for d in found), record_property)
