"""FlagGems' own operators from the installed flag-gems: every JIT launch its op functions
make (each autotune config included) in the scenarios of ``flaggems_corpus``, through
FlagGems' vendor selection for each target of the lane, and compiled there."""

from pathlib import Path
from typing import Callable

import pytest

from ci.smoke.checks import (
    RecordProperty,
    artifacts_root,
    compile_timeout_s,
    fail_with,
    may_select,
)
from ci.smoke.compile import tritonapi
from ci.smoke.compile.compiler import CompileOutcome
from ci.smoke.contract import properties, taxonomy
from ci.smoke.contract.lane import LaneContext, current_context
from ci.smoke.realkernels import jobs, launches

GROUP = "flaggems_kernels"
pytestmark = pytest.mark.group(GROUP)
CONTEXT = current_context()
CAPTURE = jobs.Capture("flaggems", GROUP, CONTEXT, artifacts_root())
TARGETS = {t.label: t for t in CONTEXT.targets}


def _id(launch: jobs.RealLaunch, index: int) -> str:
    return f"{launch.target}-{launch.id}-{index}"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``test_compile``'s launches: captured at collection where the run can select it."""
    if "launch" in metafunc.fixturenames:
        found = CAPTURE.launches if may_select(metafunc) else []
        ids = [_id(la, i) for i, la in enumerate(found)]
        metafunc.parametrize("launch", found, ids=ids, indirect=True)


@pytest.fixture(autouse=True)
def stack_ready(request: pytest.FixtureRequest) -> None:
    """Every test here but the stack check is blocked by a failed stack check."""
    if request.function is not test_package_ready and CAPTURE.stack_problem:
        pytest.skip(f"blocked by test_package_ready: {CAPTURE.stack_problem.splitlines()[-1]}")


def test_package_ready(record_property: RecordProperty) -> None:
    """FlagGems imports as the capture imports it, with its metadata and, for each vendor
    of the lane's targets, that vendor selected."""
    record_property(properties.SOURCE, "flag-gems")
    if CAPTURE.stack_problem:
        fail_with(taxonomy.HARNESS_ERROR, CAPTURE.stack_problem, record_property)


def test_capture(record_property: RecordProperty) -> None:
    """FlagGems imports for each vendor and its ops ran in every scenario, for every target."""
    record_property(properties.SOURCE, "flag-gems")
    if CAPTURE.error:
        fail_with(taxonomy.HARNESS_ERROR, CAPTURE.error, record_property)
    assert CAPTURE.launches, "the capture found no launch"
    record_property(properties.SOURCE, CAPTURE.launches[0].source)
    record_property(properties.LAUNCHES, len(CAPTURE.launches))


@pytest.fixture
def launch(request: pytest.FixtureRequest, record_property: RecordProperty) -> jobs.RealLaunch:
    real: jobs.RealLaunch = request.param
    record_property(properties.KERNEL, real.kernel or "(none launched)")
    record_property(properties.SOURCE, real.source)
    record_property(properties.SCENARIO, real.scenario)
    record_property(properties.MODULE, real.module)
    return real


def _needs_vendor_triton(launch: jobs.RealLaunch) -> str:
    """The skip reason of a foreign vendor's variant that failed with the lane's Triton."""
    last = [line for line in launch.error.strip().splitlines() if line.strip()][-1:]
    where = "importing FlagGems" if launch.scenario == "import" else f"its {launch.scenario}"
    return (
        f"FlagGems' {launch.foreign_vendor} variant needs {launch.foreign_vendor}'s own Triton:"
        f" {where} with GEMS_VENDOR={launch.foreign_vendor} under triton"
        f" {tritonapi.compiler_version()} raised {''.join(last).strip()}"
    )


def test_compile(
    lane: LaneContext,
    launch: jobs.RealLaunch,
    artifacts: Path,
    record_property: RecordProperty,
    compile_kernel: Callable[..., CompileOutcome],
) -> None:
    if launch.foreign_vendor:
        record_property(properties.VENDOR_VARIANT, launch.foreign_vendor)
        if launch.error:
            pytest.skip(_needs_vendor_triton(launch))
    if launch.error:
        fail_with(
            taxonomy.HARNESS_ERROR,
            f"FlagGems' {launch.scenario} failed before launching:\n{launch.error}",
            record_property,
        )
    target = TARGETS[launch.target]
    job = jobs.compile_job(launch, target, str(artifacts), compile_timeout_s(lane), ())
    if launch.autotune_candidate:
        record_property(properties.AUTOTUNE_CANDIDATE, "yes")
        # Triton's autotuner times a config that runs out of resources as infinitely slow
        # and launches another: such a config is no failure of the stack.
        compile_kernel(job, accepted=(taxonomy.OUT_OF_RESOURCES,))
    else:
        compile_kernel(job)


@pytest.mark.parametrize("check", [c.name for c in launches.flaggems_checks("cpu")])
def test_launch(lane: LaneContext, check: str, record_property: RecordProperty) -> None:
    """FlagGems' ops launched for real on the lane's device, their outputs against torch's."""
    launches.judge("flaggems", check, lane, record_property)
