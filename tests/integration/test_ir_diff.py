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

from ci.lanes import load_matrix
from ci.smoke import issuedraft
from ci.triage import irdiff
from ci.triage.bisect import LocalVenvRunner

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
PASS_BUG = FIXTURES / "pass_bug"
WORK = REPO / ".cache" / "triage"


def test_a_regression_shaped_failure_gets_its_ir_diff_and_report(tmp_path: Path) -> None:
    matrix = load_matrix(FIXTURES / "lanes-ir-diff.toml")
    runner = LocalVenvRunner(matrix, WORK, FIXTURES / "triton_version_suite")
    failing_python = runner.environment(matrix.lane("cpu-triton-3.6.0"))
    baseline_python = runner.environment(matrix.lane("cpu-triton-3.3.1"))

    artifacts = tmp_path / "artifacts"
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "TRITON_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHONPATH": os.pathsep.join(map(str, (PASS_BUG, REPO))),
    }
    done = subprocess.run(
        [str(failing_python), str(PASS_BUG / "triage_run.py"), str(artifacts), "cuda"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["status"] == "pass_failure"
    bundle = artifacts / "bundle"
    assert (bundle / issuedraft.REPORT_NAME).is_file()

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
