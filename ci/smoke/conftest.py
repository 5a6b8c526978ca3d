"""Fixtures of the smoke suite: the lane, per-test artifact folders, compiles, properties."""

import functools
import os
import re
import sys
from pathlib import Path
from typing import Callable, Iterator, List, Tuple

import pytest

from ci.smoke.contract import properties, records, taxonomy
from ci.smoke.contract.lane import LaneContext, current_context, installed_versions

CONTEXT = current_context()
if CONTEXT.execution == "interpreter":
    # jit decides compiled vs interpreted when a kernel module is imported: set it first.
    if "triton" in sys.modules and os.environ.get("TRITON_INTERPRET") != "1":
        raise RuntimeError(
            "triton was imported before the smoke suite could enable its interpreter"
        )
    os.environ["TRITON_INTERPRET"] = "1"
for _name, _value in CONTEXT.env.items():
    os.environ.setdefault(_name, _value)

from ci.smoke.checks import artifacts_root  # noqa: E402
from ci.smoke.compile.compiler import CompileJob, CompileOutcome, CompileWorker  # noqa: E402
from ci.smoke.triage.compile_failure import triage_compile_failure  # noqa: E402
from ci.smoke.triage.signatures import signature_of  # noqa: E402

_WORKER = CompileWorker()
_VERSIONS = installed_versions()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "group(name): the lane smoke-test group the test belongs to")
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU visible to torch")


@functools.lru_cache(maxsize=None)
def gpu_missing() -> str:
    """Why GPU tests cannot run here, or "" when torch sees a CUDA device."""
    try:
        import torch
    except ImportError:
        return "needs a CUDA GPU: torch is not installed"
    if not torch.cuda.is_available():
        return f"needs a CUDA GPU: torch {torch.__version__} sees none on {CONTEXT.node}"
    return ""


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "target" in metafunc.fixturenames:
        metafunc.parametrize("target", CONTEXT.targets, ids=[t.label for t in CONTEXT.targets])


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    for item in items:
        # At collection, so that tests skipped before any fixture runs carry them too.
        item.user_properties.extend(lane_properties())
        marker = item.get_closest_marker("group")
        if marker is not None and not CONTEXT.runs(marker.args[0]):
            reason = f"lane {CONTEXT.lane} does not run the '{marker.args[0]}' smoke tests"
            item.add_marker(pytest.mark.skip(reason=reason))
        elif item.get_closest_marker("gpu") is not None:
            missing = gpu_missing()
            if missing:
                item.add_marker(pytest.mark.skip(reason=missing))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Every failing testcase gets its triage signature as a JUnit property."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if not report.failed:
        return
    message = report.longreprtext
    folder = artifacts_root() / artifact_folder_name(item.nodeid)
    signature = signature_of(message.splitlines()[0] if message else "", message, folder)
    recorded = {name for name, _ in item.user_properties}
    # junitxml writes the properties of the teardown report, which copies the item's. A
    # test that failed in its call and again in its teardown keeps the first signature.
    if properties.SIGNATURE in recorded:
        return
    item.user_properties.append((properties.SIGNATURE, signature.key))
    item.user_properties.append((properties.TRIAGE, signature.summary))
    # A test that did not say its failure kind (an uncaught exception) gets the one the
    # rules decided, so a lost worker or a broken install is not counted against the
    # compiler. A guess by resemblance decides nothing: such a failure stays unclassified.
    if properties.FAILURE_KIND not in recorded:
        kind = taxonomy.UNCLASSIFIED if signature.guessed else signature.kind
        item.user_properties.append((properties.FAILURE_KIND, kind))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _WORKER.close()


@pytest.fixture(scope="session")
def lane() -> LaneContext:
    return CONTEXT


def lane_properties() -> List[Tuple[str, object]]:
    return [
        (properties.LANE, CONTEXT.lane),
        (properties.NODE, CONTEXT.node),
        (properties.VENDOR, CONTEXT.vendor),
        (properties.COMPILER, f"{CONTEXT.compiler['package']} {CONTEXT.compiler['version']}"),
        (properties.TRITON_VERSION, _VERSIONS["triton"] or _VERSIONS["triton-ascend"]),
        (properties.FLAGTREE_VERSION, _VERSIONS["flagtree"]),
    ]


def artifact_folder_name(nodeid: str) -> str:
    name = nodeid.rsplit("/", 1)[-1].replace(".py::", "__")
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_")[:150]


@pytest.fixture
def artifacts(
    request: pytest.FixtureRequest, record_property: Callable[[str, object], None]
) -> Iterator[Path]:
    """This test's artifact folder; dropped afterwards if the test left nothing in it."""
    root = artifacts_root()
    folder = root / artifact_folder_name(request.node.nodeid)
    folder.mkdir(parents=True, exist_ok=True)
    yield folder
    if any(folder.iterdir()):
        record_property(
            properties.ARTIFACTS, str(Path(records.ARTIFACTS_DIR) / folder.relative_to(root))
        )
    else:
        folder.rmdir()


@pytest.fixture
def compile_kernel(
    request: pytest.FixtureRequest, record_property: Callable[[str, object], None]
) -> Callable[[CompileJob], CompileOutcome]:
    """Compile in the worker, record the figures as properties, fail with the diagnostics."""

    def run(job: CompileJob, accepted: Tuple[str, ...] = ()) -> CompileOutcome:
        """``accepted``: failure kinds that are this job's expected outcome (recorded)."""
        record_property(properties.BACKEND, job.target.backend)
        record_property(properties.TARGET, job.target.label)
        outcome = _WORKER.compile(job)
        record_property(properties.COMPILE_SECONDS, f"{outcome.seconds:.3f}")
        for name, value in (
            (properties.SHARED_BYTES, outcome.shared),
            (properties.REGISTERS, outcome.registers),
            (properties.SPILLS, outcome.spills),
        ):
            if value is not None:
                record_property(name, value)
        if outcome.shared_note:
            record_property(properties.SHARED_CHECK, outcome.shared_note)
        if outcome.last_stage:
            record_property(properties.LAST_STAGE, outcome.last_stage)
        if outcome.ttgir_sha256:
            record_property(properties.TTGIR_SHA256, outcome.ttgir_sha256)
        if outcome.backend_defaults:
            chosen = ",".join(f"{k}={v}" for k, v in outcome.backend_defaults.items())
            record_property(properties.BACKEND_DEFAULTS, chosen)
        if outcome.ok and outcome.message:
            record_property(properties.COMPILE_NOTE, outcome.message)
        if not outcome.ok and outcome.status in accepted:
            record_property(properties.ACCEPTED_FAILURE, outcome.status)
            record_property(properties.ACCEPTED_MESSAGE, outcome.message)
        elif not outcome.ok:
            record_property(properties.FAILURE_KIND, outcome.status)
            summary = outcome.summary()
            lane = {name: str(value) for name, value in lane_properties()}
            lane["test"] = request.node.nodeid
            triaged = triage_compile_failure(job, outcome, lane)
            if triaged.named_pass:
                record_property(properties.NAMED_PASS, triaged.named_pass)
                summary += (
                    f"\npass {triaged.named_pass} named by replay with IR dumps"
                    " (its input: bundle/pass-input.mlir)"
                )
            if triaged.hint:
                record_property(properties.HINT, triaged.hint)
                summary += f"\nfallback probe: {triaged.hint}"
            pytest.fail(summary, pytrace=False)
        return outcome

    return run
