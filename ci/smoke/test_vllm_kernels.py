"""vLLM's own kernels (``kernel_unified_attention`` 2D and 3D, ``reduce_segments``,
``_fused_post_conv_kernel``) from the installed vllm: every launch its launchers make in the
scenarios of ``vllm_corpus``, captured for each target of the lane and compiled there."""

import dataclasses
import difflib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable, List

import pytest

from ci.smoke.checks import (
    RecordProperty,
    artifacts_root,
    compile_timeout_s,
    fail_with,
    may_select,
)
from ci.smoke.compile.compiler import CompileJob, CompileOutcome
from ci.smoke.contract import properties, records, taxonomy
from ci.smoke.contract.lane import LaneContext, Target, current_context
from ci.smoke.mirrors import attention
from ci.smoke.realkernels import jobs, launches, vllm_corpus
from ci.smoke.triage import bundle, compile_failure

GROUP = "vllm_kernels"
pytestmark = pytest.mark.group(GROUP)
CONTEXT = current_context()
# vLLM's source files that the attention kernel's TTGIR must point into.
ATTENTION_FILES = ("triton_unified_attention.py", "triton_attention_helpers.py")


CAPTURE = jobs.Capture("vllm", GROUP, CONTEXT, artifacts_root())
TARGETS = {t.label: t for t in CONTEXT.targets}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``test_compile``'s launches: captured at collection where the run can select it."""
    if "launch" in metafunc.fixturenames:
        found = CAPTURE.launches if may_select(metafunc) else []
        ids = [f"{la.target}-{la.id}" for la in found]
        metafunc.parametrize("launch", found, ids=ids, indirect=True)


@pytest.fixture(autouse=True)
def stack_ready(request: pytest.FixtureRequest) -> None:
    """Every test here but the stack check is blocked by a failed stack check."""
    if request.function is not test_package_ready and CAPTURE.stack_problem:
        pytest.skip(f"blocked by test_package_ready: {CAPTURE.stack_problem.splitlines()[-1]}")


def test_package_ready(record_property: RecordProperty) -> None:
    """vLLM imports as the capture imports it, with its metadata, the real Triton and the
    platform the lane needs."""
    record_property(properties.SOURCE, "vllm")
    if CAPTURE.stack_problem:
        fail_with(taxonomy.HARNESS_ERROR, CAPTURE.stack_problem, record_property)


def test_capture(record_property: RecordProperty) -> None:
    """vLLM imports and its launchers ran in every scenario, for every target."""
    record_property(properties.SOURCE, "vllm")
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
    return real


def _launcher_failure(launch: jobs.RealLaunch) -> str:
    """A release that moved a kernel or changed its launcher says what changed in one line
    (``vllm_corpus.KernelChanged``); any other failure of vLLM's launcher, its traceback."""
    last = launch.error.strip().splitlines()[-1:]
    prefix = f"{vllm_corpus.KernelChanged.__name__}: "
    if last and last[0].startswith(prefix):
        return f"vLLM changed a kernel the corpus drives: {last[0][len(prefix) :]}"
    return f"vLLM's launcher failed in scenario {launch.scenario} before launching:\n{launch.error}"


def test_compile(
    lane: LaneContext,
    launch: jobs.RealLaunch,
    artifacts: Path,
    record_property: RecordProperty,
    compile_kernel: Callable[[CompileJob], CompileOutcome],
) -> None:
    if launch.error:
        fail_with(taxonomy.HARNESS_ERROR, _launcher_failure(launch), record_property)
    target: Target = TARGETS[launch.target]
    keep = ("ttgir",) if launch.kernel == "kernel_unified_attention" else ()
    job = jobs.compile_job(launch, target, str(artifacts), compile_timeout_s(lane), keep)
    outcome = compile_kernel(job)
    if keep and "ttgir" in outcome.stages:
        ttgir = (artifacts / f"{launch.kernel}.ttgir").read_text(encoding="utf-8")
        files = sorted(set(re.findall(r'loc\("[^"]*?([^"/]+\.py)"', ttgir)))
        record_property(properties.TTGIR_FILES, ",".join(files))
        missing = [f for f in ATTENTION_FILES if f not in files]
        assert not missing, f"the TTGIR has no location in vLLM's {missing} (it has {files})"


# The launch the identity tests compile: the 3D decode kernel, on the lane's first target.
IDENTITY_SCENARIO = "decode-hd128-gqa8"
# A captured attr the tests drop: the KV cache's page stride, divisible by 16 at every launch.
DROPPED_ATTR = "stride_k_cache_0"


def _identity_launch() -> jobs.RealLaunch:
    first = CONTEXT.targets[0].label
    for real in CAPTURE.launches:
        if (real.target, real.scenario, real.kernel) == (
            first,
            IDENTITY_SCENARIO,
            "kernel_unified_attention",
        ):
            return real
    pytest.fail(f"no capture of {IDENTITY_SCENARIO} for {first}: {CAPTURE.error}", pytrace=False)
    raise AssertionError("unreachable")


def test_dropping_a_captured_attr_changes_the_compile(
    lane: LaneContext,
    artifacts: Path,
    compile_kernel: Callable[[CompileJob], CompileOutcome],
) -> None:
    """The captured attrs reach the compile: without one of them, another variant compiles."""
    real = _identity_launch()
    target = TARGETS[real.target]
    assert ("tt.divisibility", 16) in real.attrs[DROPPED_ATTR]
    job = jobs.compile_job(real, target, str(artifacts / "captured"), compile_timeout_s(lane), ())
    dropped = {k: v for k, v in job.attrs.items() if k != DROPPED_ATTR}
    full = compile_kernel(job)
    without = compile_kernel(
        dataclasses.replace(job, attrs=dropped, artifacts=str(artifacts / "dropped"))
    )
    assert full.ttgir_sha256 and without.ttgir_sha256
    assert full.ttgir_sha256 != without.ttgir_sha256, (
        f"dropping {DROPPED_ATTR}'s attrs compiled the same TTGIR"
    )


def test_bundle_replays_the_variant_the_test_compiled(
    lane: LaneContext,
    artifacts: Path,
    record_property: RecordProperty,
    compile_kernel: Callable[[CompileJob], CompileOutcome],
) -> None:
    """A reproducer bundle written from a compile job replays to the same TTGIR (identity
    without source locations: the bundle's copy of vLLM's file lies elsewhere)."""
    real = _identity_launch()
    target = TARGETS[real.target]
    job = jobs.compile_job(real, target, str(artifacts / "test"), compile_timeout_s(lane), ())
    compiled = compile_kernel(job)
    folder = bundle.write(
        artifacts / records.BUNDLE_NAME,
        bundle.CompileSpec(
            source=compile_failure.source_file(job),
            function=job.kernel,
            signature=job.signature,
            constexprs=job.constexprs,
            attrs=job.attrs,
            options=job.options,
            target=dataclasses.asdict(target),
        ),
        "written by the bundle identity test",
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(job.import_env)
    out = artifacts / "replay"
    done = subprocess.run(
        [sys.executable, records.REPLAY_NAME, "--out", str(out)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=compile_timeout_s(lane),
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    replayed = json.loads((out / "result.json").read_text(encoding="utf-8"))
    record_property(properties.REPLAY_TTGIR_SHA256, replayed["ttgir_sha256"])
    assert replayed["ttgir_sha256"] == compiled.ttgir_sha256


# vLLM's launches and the mirror's configs whose loops must be the same ops, per path: at
# head 128, GQA 4, BLOCK_M 16, no num_warps / num_stages; 2D: vLLM's prefill (TILE_SIZE 32),
# 3D: its decode (16 segments, TILE_SIZE 16).
MIRRORED = {
    "2d": ("prefill-hd128-gqa4", "hd128-bm16-t32-wdefault-sdefault-bf16"),
    "3d": ("decode-hd128-gqa4", "hd128-bm16-t16-seg16-wdefault-sdefault-bf16"),
}
_OP = re.compile(r"^\s*(?:%\S+ = )?([a-z_]+\.[a-z_.]+)")


def loop_ops(ttir: str) -> List[str]:
    """The op names of the first ``scf.for`` loop's body, in order."""
    lines = ttir.splitlines()
    start = next(i for i, line in enumerate(lines) if " scf.for " in line)
    depth = lines[start].count("{") - lines[start].count("}")
    ops = []
    for line in lines[start + 1 :]:
        match = _OP.match(line)
        if match:
            ops.append(match.group(1))
        depth += line.count("{") - line.count("}")
        if depth <= 0:
            break
    return ops


@pytest.mark.parametrize("path", sorted(MIRRORED))
def test_mirror_loop_is_vllms_op_for_op(
    lane: LaneContext,
    path: str,
    artifacts: Path,
    compile_kernel: Callable[[CompileJob], CompileOutcome],
) -> None:
    """The mirror's KV loop is vLLM 0.24.0's, op for op, in TTIR (its softmax step included:
    ``tl.exp``, the row sum before alpha), on the 2D path and the 3D one."""
    scenario, config_id = MIRRORED[path]
    first = CONTEXT.targets[0]
    real = next(
        (
            r
            for r in CAPTURE.launches
            if (r.target, r.scenario, r.kernel)
            == (first.label, scenario, "kernel_unified_attention")
        ),
        None,
    )
    assert real is not None, f"no capture of {scenario} for {first.label}"
    config = next(c for c in attention.CONFIGS if c.id == config_id)
    assert real.constexprs["IS_3D"] == config.is_3d, f"vLLM's {scenario} is not the {path} path"
    assert "num_warps" not in real.options and not config.options
    timeout = compile_timeout_s(lane)
    vllm_job = jobs.compile_job(real, first, str(artifacts / "vllm"), timeout, ("ttir",))
    mirror_job = dataclasses.replace(
        attention.compile_job(config, first, str(artifacts / "mirror"), timeout), keep_ir=("ttir",)
    )
    compile_kernel(vllm_job)
    compile_kernel(mirror_job)
    theirs = loop_ops((artifacts / "vllm" / f"{vllm_job.kernel}.ttir").read_text("utf-8"))
    ours = loop_ops((artifacts / "mirror" / f"{mirror_job.kernel}.ttir").read_text("utf-8"))
    assert len(theirs) > 50 and "math.exp" in theirs
    assert ours == theirs, "\n".join(
        difflib.unified_diff(theirs, ours, "vllm", "mirror", lineterm="", n=1)
    )


@pytest.mark.parametrize("check", [c.name for c in launches.vllm_checks("cpu")])
def test_launch(lane: LaneContext, check: str, record_property: RecordProperty) -> None:
    """vLLM's kernels launched for real through its own launchers (the JIT path the users'
    runs took), their outputs against the mirrors' float64 references."""
    launches.judge("vllm", check, lane, record_property)
