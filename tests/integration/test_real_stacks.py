"""The lane side on real builds other than upstream Triton 3.6: the oldest Triton base of the
vendor forks (3.2.0), the newest release, and a real vendor fork (triton-ascend 3.2.0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci.cli import main
from ci.lanes.matrix import LaneMatrix
from ci.results import reader
from ci.smoke.contract import taxonomy

pytestmark = pytest.mark.integration

# One attention config and one GDN config that vLLM launches (the Kunlunxin report's shapes).
SUBSET = "hd128-bm16-t32-w4-s3-bf16 or qwen3.6-h128-hv16-k128-v128-bt16-w4-s2-bf16"


def run_lane(tmp_path: Path, lane: str, *pytest_args: str) -> tuple[int, list[reader.CaseResult]]:
    status = main(
        ["run", "--lane", lane, "--no-history", "--results", str(tmp_path), "--", *pytest_args]
    )
    (merged,) = tmp_path.glob("*/merged.xml")
    return status, reader.read_cases(merged, [lane])


@pytest.mark.parametrize("lane", ["cpu-triton-3.2.0", "cpu-triton-3.9.0"])
def test_an_upstream_release_compiles_both_kernels_for_nvidia_and_amd(
    tmp_path: Path, matrix: LaneMatrix, lane: str
) -> None:
    status, cases = run_lane(tmp_path, lane, "-k", f"test_backends or test_stack or {SUBSET}")
    assert status == 0, [(c.test, c.message) for c in cases if c.outcome != "passed"]
    kinds = {c.properties.get("failure_kind") for c in cases}
    assert not kinds & {taxonomy.HARNESS_ERROR, taxonomy.CRASH}
    compiled = {
        (c.properties["kernel"], c.properties["target"])
        for c in cases
        if c.name.startswith("test_compile[") and c.outcome == "passed"
    }
    assert compiled == {
        (kernel, target)
        for kernel in ("unified_attention", "gdn_post_conv")
        for target in ("sm_80", "gfx942")
    }
    version = matrix.lane(lane).compiler.version
    assert {c.properties["triton_version"] for c in cases} == {version}
    assert cases_named(cases, "test_stack::test_compiler_version")[0].outcome == "passed"
    numerics = [c for c in cases if c.name.startswith("test_numerics")]
    assert len(numerics) == 2 and all(c.outcome == "passed" for c in numerics)


def cases_named(cases: list[reader.CaseResult], test_id: str) -> list[reader.CaseResult]:
    found = [c for c in cases if c.test == test_id]
    assert found, f"no testcase {test_id}"
    return found


def test_triton_ascend_refuses_cuda_and_compiles_through_its_own_pipeline(
    tmp_path: Path,
) -> None:
    status, cases = run_lane(tmp_path, "ascend-triton-3.2.0")
    # Failures the ledger lacks (a run without a history has no earlier run): exit 12.
    assert status == 12
    (inductor,) = cases_named(cases, "test_backends::test_inductor_target")
    assert inductor.outcome == "failed"
    assert "0 compatible backends for target (cuda) ([]). There should only be one." in (
        inductor.message
    )
    assert inductor.properties["failure_kind"] == taxonomy.BACKEND_RESOLUTION
    (claimed,) = cases_named(cases, "test_backends::test_target_claimed[ascend910b3]")
    assert claimed.outcome == "passed"
    assert "ascend" in claimed.properties["claimed_by"]
    # The mirrors' compiles (a corpus group the lane does not run leaves a skipped placeholder).
    compiles = [
        c
        for c in cases
        if c.name.startswith("test_compile[")
        and "source" not in c.properties
        and c.outcome != "skipped"
    ]
    assert {c.properties["kernel"] for c in compiles} == {"unified_attention", "gdn_post_conv"}
    for case in compiles:
        if case.outcome == "passed":
            # triton-ascend's TritonToLinalg ran; the binary stage needs CANN.
            assert case.properties["last_stage"] == "ttadapter", case
            assert "CANN toolkit" in case.properties["compile_note"]
        else:
            # A real vendor-compiler failure, with its diagnostics; never our harness.
            assert case.properties["failure_kind"] not in taxonomy.NOT_THE_COMPILER, case
            assert case.properties["failure_kind"] != taxonomy.CRASH or case.message, case
    assert sum(c.outcome == "passed" for c in compiles) >= len(compiles) // 2
    # vLLM's own kernels through the same pipeline: reduce_segments reaches TritonToLinalg;
    # the attention kernel stops in Triton 3.2's frontend, with its diagnostics.
    real = {
        (c.properties["kernel"], c.outcome, c.properties.get("last_stage"))
        for c in cases
        if c.properties.get("source") == "vllm 0.24.0" and c.name.startswith("test_compile[")
    }
    assert ("reduce_segments", "passed", "ttadapter") in real
    attention = [
        c
        for c in cases
        if c.properties.get("kernel") == "kernel_unified_attention" and c.outcome == "failed"
    ]
    assert attention and all(
        c.properties["failure_kind"] == taxonomy.FRONTEND for c in attention
    ), [(c.test_id, c.properties.get("failure_kind")) for c in attention]
    (facts,) = cases_named(cases, "test_stack::test_stack_facts")
    assert facts.outcome == "skipped" and "/dev/davinci0" in facts.message
