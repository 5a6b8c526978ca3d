"""FlagTree against its baseline: the last stage both reached, diffed, on two real lanes.

Two lanes of the upstream-version family where a test differs: Triton 3.6.0 (the lane in
the FlagTree role) aborts in TritonGPUHoistTMEMAlloc on tests/fixtures/pass_bug's kernel for
sm_100, Triton 3.3.1 (its baseline) compiles it. The failure is produced by the smoke
suite's compile worker and triage in the 3.6.0 lane; the diff replays its bundle in 3.3.1.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ci.build import environment
from ci.cli import main
from ci.commands.options import cache_from, with_index_settings
from ci.lanes.matrix import load_matrix
from ci.smoke.contract import records
from ci.triage import irdiff

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
PASS_BUG = FIXTURES / "pass_bug"


def _python(lane: str) -> Path:
    matrix = with_index_settings(load_matrix(FIXTURES / "lanes-ir-diff.toml"), os.environ)
    return environment.prepare(matrix, matrix.lane(lane), cache_from(os.environ)).python


def _triage_on_lane(tmp_path: Path, lane: str, artifacts: Path) -> None:
    """Compile and triage the kernel for sm_100 as the smoke suite does, on ``lane``."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "TRITON_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHONPATH": os.pathsep.join(map(str, (PASS_BUG, REPO))),
    }
    done = subprocess.run(
        [str(_python(lane)), str(PASS_BUG / "triage_run.py"), str(artifacts), "cuda"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["status"] == "pass_failure"


def test_a_regression_shaped_failure_gets_its_ir_diff_and_report(tmp_path: Path) -> None:
    baseline_python = _python("cpu-triton-3.3.1")

    artifacts = tmp_path / "artifacts"
    _triage_on_lane(tmp_path, "cpu-triton-3.6.0", artifacts)
    bundle = artifacts / "bundle"
    assert (bundle / records.REPORT_NAME).is_file()

    found = irdiff.diff_with_baseline(
        bundle, baseline_python, tmp_path / "diff", "cpu-triton-3.6.0", "cpu-triton-3.3.1"
    )
    assert found is not None
    # The failing compile reached TTIR only (TTGIR is where the pass aborts).
    assert found.stage == "ttir"
    assert found.diff == bundle / irdiff.DIFF_NAME and found.page == bundle / irdiff.HTML_NAME
    diff = found.diff.read_text()
    assert diff.startswith("# ttir: the last stage both compiles reached; cpu-triton-3.3.1")
    assert "--- cpu-triton-3.3.1/ttir" in diff and "+++ cpu-triton-3.6.0/ttir" in diff
    assert "loc(" not in diff  # source locations are cut
    assert found.changed_lines > 0
    # 3.6.0's TTIR names the kernel's arguments; 3.3.1's numbers them.
    assert "+  tt.func public @masked_accumulator_dot(%a: !tt.ptr<bf16>" in diff
    page = found.page.read_text()
    assert '<table class="diff"' in page and "<script" not in page
    print(f"\nIR diff ({found.stage}): {found.changed_lines} lines differ")


def test_the_commands_diff_and_redraft_the_report_with_the_bisection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    artifacts = tmp_path / "artifacts"
    _triage_on_lane(tmp_path, "cpu-triton-3.6.0", artifacts)
    lanes = ["--lanes-file", str(FIXTURES / "lanes-ir-diff.toml")]
    irdiff_args = ["irdiff", "--artifacts", str(artifacts), "--lane", "cpu-triton-3.6.0"]
    assert main([*lanes, *irdiff_args, "--baseline", "cpu-triton-3.3.1"]) == 0
    assert "ttir: " in capsys.readouterr().out
    assert (artifacts / "bundle" / irdiff.HTML_NAME).is_file()

    # The bisection family whose 3.4.0 lane fails for real (its inductor target is corex).
    bisect_lanes = ["--lanes-file", str(FIXTURES / "lanes-bisect.toml")]
    test_id = "test_backends.py::test_inductor_target"
    bisect_args = ["bisect", "--family", "cpu", "--test", test_id, "--no-history"]
    bisect_args += ["--results", str(tmp_path / "results"), "--artifacts", str(artifacts)]
    assert main([*bisect_lanes, *bisect_args]) == 0
    report = (artifacts / "bundle" / records.REPORT_NAME).read_text()
    assert "| cpu-triton-3.2.0 | passed |" in report
    assert "| cpu-triton-3.4.0 | failed |" in report
    assert "Not bisected yet" not in report
