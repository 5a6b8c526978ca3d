"""vLLM's own kernels (``kernel_unified_attention`` 2D and 3D, ``reduce_segments``,
``_fused_post_conv_kernel``) from the installed vllm: every launch its launchers make in the
scenarios of ``vllm_corpus``, captured for each target of the lane and compiled there."""

import re
from pathlib import Path
from typing import Callable, List

import pytest

from ci.smoke import realkernels, taxonomy
from ci.smoke.checks import RecordProperty, artifacts_root, compile_timeout_s, fail_with
from ci.smoke.compiler import CompileJob, CompileOutcome
from ci.smoke.lane import LaneContext, Target, current_context

GROUP = "vllm_kernels"
pytestmark = pytest.mark.group(GROUP)
CONTEXT = current_context()
# vLLM's source files that the attention kernel's TTGIR must point into.
ATTENTION_FILES = ("triton_unified_attention.py", "triton_attention_helpers.py")


def _collect() -> "tuple[List[realkernels.RealLaunch], str]":
    if not CONTEXT.runs(GROUP):
        return [], ""
    try:
        keep = artifacts_root() / "capture-vllm.json"
        return realkernels.capture("vllm", CONTEXT, keep=keep), ""
    except realkernels.CaptureError as err:
        return [], str(err)


LAUNCHES, CAPTURE_ERROR = _collect()
TARGETS = {t.label: t for t in CONTEXT.targets}


def test_capture(record_property: RecordProperty) -> None:
    """vLLM imports and its launchers ran in every scenario, for every target."""
    record_property("source", "vllm")
    if CAPTURE_ERROR:
        fail_with(taxonomy.HARNESS_ERROR, CAPTURE_ERROR, record_property)
    assert LAUNCHES, "the capture found no launch"
    record_property("source", LAUNCHES[0].source)
    record_property("launches", len(LAUNCHES))


@pytest.fixture(params=LAUNCHES, ids=[f"{la.target}-{la.id}" for la in LAUNCHES])
def launch(
    request: pytest.FixtureRequest, record_property: RecordProperty
) -> realkernels.RealLaunch:
    real: realkernels.RealLaunch = request.param
    record_property("kernel", real.kernel or "(none launched)")
    record_property("source", real.source)
    record_property("scenario", real.scenario)
    return real


def test_compile(
    lane: LaneContext,
    launch: realkernels.RealLaunch,
    artifacts: Path,
    record_property: RecordProperty,
    compile_kernel: Callable[[CompileJob], CompileOutcome],
) -> None:
    if launch.error:
        fail_with(
            taxonomy.HARNESS_ERROR,
            f"vLLM's launcher failed in scenario {launch.scenario} before launching:\n"
            f"{launch.error}",
            record_property,
        )
    target: Target = TARGETS[launch.target]
    keep = ("ttgir",) if launch.kernel == "kernel_unified_attention" else ()
    job = realkernels.compile_job(launch, target, str(artifacts), compile_timeout_s(lane), keep)
    outcome = compile_kernel(job)
    if keep and "ttgir" in outcome.stages:
        ttgir = (artifacts / f"{launch.kernel}.ttgir").read_text(encoding="utf-8")
        files = sorted(set(re.findall(r'loc\("[^"]*?([^"/]+\.py)"', ttgir)))
        record_property("ttgir_files", ",".join(files))
        missing = [f for f in ATTENTION_FILES if f not in files]
        assert not missing, f"the TTGIR has no location in vLLM's {missing} (it has {files})"
