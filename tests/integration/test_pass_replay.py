"""The pass behind a catch-all, named by a replay with IR dumps: a real pass failure.

Upstream Triton 3.6.0 aborts in TritonGPUHoistTMEMAlloc on tests/fixtures/pass_bug's kernel
for sm_100. Compiled through the xpu_wrap_backend fixture (which reports it as Kunlunxin's
backend does, ``OutOfResources: uni_sram``, diagnostics dropped) by the smoke suite's real
compile worker, and triaged as the smoke suite triages it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ci.build import environment
from ci.smoke.triage.signatures import signature_of

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
PASS_BUG = FIXTURES / "pass_bug"


@pytest.fixture(scope="module")
def lane_python(cpu_lane_env: environment.LaneEnvironment) -> Path:
    """The CPU lane's venv: upstream Triton 3.6.0, which has the pass bug."""
    return cpu_lane_env.python


def _env(tmp_path: Path) -> dict[str, str]:
    paths = (PASS_BUG, FIXTURES / "xpu_wrap_backend", REPO)
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "TRITON_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHONPATH": os.pathsep.join(map(str, paths)),
    }


def test_the_replay_names_the_pass_the_backend_hides(lane_python: Path, tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    done = subprocess.run(
        [str(lane_python), str(PASS_BUG / "triage_run.py"), str(artifacts)],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["status"] == "pass_failure"
    assert "uni_sram PassManager::run failed, Required: 0, Hardware limit: 0" in result["message"]
    assert result["named_pass"] == "TritonGPUHoistTMEMAlloc"
    # What the backend printed names no pass, and it left no reproducer that would.
    assert "HoistTMEMAlloc" not in (artifacts / "compile.log").read_text()
    assert not list(artifacts.glob("*.make_ttgir.repro.mlir"))

    failure = json.loads((artifacts / "failure.json").read_text())
    assert failure["replay"]["pass"] == "TritonGPUHoistTMEMAlloc"
    assert failure["replay"]["argument"] == "tritongpu-hoist-tmem-alloc"
    pass_input = (artifacts / "bundle" / "pass-input.mlir").read_text()
    assert "tt.func public @masked_accumulator_dot" in pass_input
    assert 'ttg.target = "cuda:100"' in pass_input  # TTGIR: the input of a TTGIR pass

    signature = signature_of(result["message"], "", artifacts)
    assert signature.kind == "pass_failure"
    assert signature.detail("pass") is None  # the diagnostics still name none
    assert signature.detail("named_by_replay") == "TritonGPUHoistTMEMAlloc"
    assert "pass TritonGPUHoistTMEMAlloc named by replay" in signature.summary
    assert signature.detail("wrapper") == "OutOfResources(uni_sram)"

    report = (artifacts / "bundle" / "report.md").read_text()
    assert report.startswith("# [xpuwrap] masked_accumulator_dot: TritonGPUHoistTMEMAlloc fails")
    assert "triton-opt pass-input.mlir --tritongpu-hoist-tmem-alloc" in report
    assert "| triton | 3.6.0 |" in report


def test_upstream_names_the_pass_through_its_local_reproducer(
    lane_python: Path, tmp_path: Path
) -> None:
    # The same kernel through upstream's own NVIDIA backend: its crash reproducer holds the
    # one failing pass, and the signature reads it from there.
    spec = json.loads((PASS_BUG / "spec.json").read_text())
    spec["target"]["backend"] = "cuda"
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    (tmp_path / spec["source"]).write_text((PASS_BUG / spec["source"]).read_text())
    out = tmp_path / "out"
    replay = REPO / "ci" / "smoke" / "triage" / "replay.py"
    done = subprocess.run(
        [str(lane_python), str(replay), str(tmp_path / "spec.json"), "--out", str(out)],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    signature = signature_of("", "RuntimeError: PassManager::run failed", out)
    assert signature.detail("pass") == "tritongpu-hoist-tmem-alloc"
    assert signature.detail("pass_source") == "reproducer"
    assert signature.detail("stage") == "make_ttgir"
