"""The nvidia-triton-3.6.0 lane on a real GPU: compile for the device's target, launch every
config, numerics against the float64 reference, and the perf tests' figures.

Runs the smoke suite with the Python named by ``FLAGCI_GPU_PYTHON`` (default: this one),
which must hold torch and triton and see a CUDA device; skipped with the reason otherwise.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ci.lanes.matrix import LaneMatrix
from tests.fixtures.junit_cases import smoke_cases
from tests.smoke_runner import run_smoke

pytestmark = [pytest.mark.integration, pytest.mark.gpu]
LANE = "nvidia-triton-3.6.0"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gpu_python() -> Path:
    python = Path(os.environ.get("FLAGCI_GPU_PYTHON", sys.executable))
    probe = subprocess.run(
        [str(python), "-c", "import torch, triton; print(torch.cuda.is_available())"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.stdout.strip() != "True":
        errors = probe.stderr.strip().splitlines()
        reason = errors[-1] if errors else "torch sees no CUDA device"
        pytest.skip(f"needs an NVIDIA GPU with torch and triton in {python}: {reason}")
    return python


def test_every_config_compiles_launches_and_matches(
    tmp_path: Path, matrix: LaneMatrix, gpu_python: Path
) -> None:
    done = run_smoke(
        gpu_python,
        matrix.lane(LANE).smoke_context("gpu-node"),
        tmp_path / "res",
        "-m",
        "not gpu",
        env={"PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    cases = smoke_cases(tmp_path / "res" / "junit.xml")
    by_kind: dict[str, set[str]] = {}
    for case in cases:
        assert case.outcome in ("passed", "skipped"), case
        if case.outcome == "passed" and case.name.startswith(("test_compile", "test_numerics")):
            by_kind.setdefault(case.name.split("[")[0], set()).add(case.properties["config"])
            if case.name.startswith("test_compile"):
                assert case.properties["target"].startswith("sm_"), case.properties
    assert by_kind["test_compile"] == by_kind["test_numerics"]
    # The target came from the driver, which the lane file (arch 0) does not contradict.
    (facts,) = (c for c in cases if c.test_id == "test_stack::test_stack_facts")
    assert facts.outcome == "passed" and facts.properties["driver_target"].startswith("cuda:")
    assert int(facts.properties["driver_shared_per_block"]) > 0
    assert any(c.startswith("hd256-bm128") for c in by_kind["test_compile"])


def test_perf_figures_are_junit_properties(
    tmp_path: Path, matrix: LaneMatrix, gpu_python: Path
) -> None:
    done = run_smoke(
        gpu_python,
        matrix.lane(LANE).smoke_context("gpu-node"),
        tmp_path / "res",
        "-m",
        "gpu",
        "-k",
        "L4096 or decode-hd128",
        env={"PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    cases = smoke_cases(tmp_path / "res" / "junit.xml")
    assert len(cases) >= 8
    for case in cases:
        props = case.properties
        assert case.outcome == "passed", case
        assert float(props["perf_ms"]) > 0
        assert 0 < float(props["pct_of_ceiling"]) <= 150
        assert float(props["ratio_to_torch"]) > 0
        assert float(props["ceiling_gbps"]) > 100 and float(props["ceiling_tflops"]) > 10
        assert props["gpu"] and props["kernel"] in ("unified_attention", "gdn_post_conv")
