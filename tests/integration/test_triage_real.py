"""Triage on real failures: signatures, fallback probe, reproducer bundle, bisection.

Builds lane venvs (upstream Triton from hash-pinned fixture lane matrices) under
``.cache/triage`` in the repository, reused while their locks are unchanged.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from junitparser import JUnitXml

from ci.build import environment
from ci.commands.options import with_index_settings
from ci.lanes.matrix import LaneMatrix, load_matrix
from ci.run import executors
from ci.smoke.triage.signatures import signature_of
from ci.triage.bisect import bisect

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
SUITE = FIXTURES / "failure_suite"
WORK = REPO / ".cache" / "triage"


@pytest.fixture(scope="module")
def matrix() -> LaneMatrix:
    return with_index_settings(load_matrix(FIXTURES / "lanes-triton-versions.toml"), os.environ)


@pytest.fixture(scope="module")
def lane_python(matrix: LaneMatrix) -> Path:
    return environment.prepare(matrix, matrix.lane("cpu-triton-3.6.0"), WORK).python


def _run_suite(python: Path, run_dir: Path, seed: int) -> dict[str, tuple[str, str]]:
    """Run the failure suite as a node would; return {test name: (message, text)}."""
    run_dir.mkdir(parents=True)
    failures: dict[str, tuple[str, str]] = {}
    for name, extra in (
        ("check_failures.py", {}),
        ("check_numerics.py", {"TRITON_INTERPRET": "1"}),
    ):
        junit = run_dir / f"{name}.xml"
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(run_dir),
            "TRITON_CACHE_DIR": str(run_dir / "cache"),
            "TRIAGE_SEED": str(seed),
            **extra,
        }
        subprocess.run(
            [
                *(python, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
                *(str(SUITE / name), f"--junitxml={junit}"),
            ],
            cwd=run_dir,
            env=env,
            check=False,
            capture_output=True,
        )
        for suite in JUnitXml.fromfile(str(junit)):
            for case in suite:
                for result in case.result:
                    if result._tag in ("failure", "error"):
                        failures[case.name] = (result.message or "", result.text or "")
    return failures


def test_real_failures_get_stable_distinct_signatures(lane_python: Path, tmp_path: Path) -> None:
    night_one = _run_suite(lane_python, tmp_path / "node-a" / "run-1", seed=1)
    night_two = _run_suite(lane_python, tmp_path / "node-b" / "deeper" / "run-2", seed=2)
    expected = {
        "test_corex_only_backend": "backend_resolution",
        "test_shared_memory_overflow": "out_of_resources",
        "test_compile_timeout": "timeout",
        "test_numeric_mismatch": "numeric_mismatch",
    }
    assert set(night_one) == set(expected) == set(night_two)
    keys = {}
    for test, kind in expected.items():
        first = signature_of(*night_one[test], None)
        second = signature_of(*night_two[test], None)
        assert first.kind == kind, (test, first)
        assert first.key == second.key, (test, first.key, second.key)
        keys[test] = first.key
    assert len(set(keys.values())) == len(keys)
    # The runs differed in the figures that must not reach the key.
    assert night_one["test_numeric_mismatch"] != night_two["test_numeric_mismatch"]
    assert night_one["test_compile_timeout"] != night_two["test_compile_timeout"]
    assert keys["test_corex_only_backend"] == "backend_resolution|0 backends|target cuda|[]"
    assert keys["test_shared_memory_overflow"] == "out_of_resources|shared memory|262144|166912"


def test_oversized_gdn_probe_hint_and_bundle_replay(lane_python: Path, tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    subprocess.run(
        [lane_python, str(SUITE / "oversized_gdn.py"), str(artifacts)],
        check=True,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
    )
    failure = json.loads((artifacts / "failure.json").read_text())
    assert failure["kind"] == "out_of_resources"
    assert failure["hint"] == "compiles with BLOCK_T=512"
    attempts = failure["probe"]["attempts"]
    assert [a["ok"] for a in attempts] == [False, True]
    assert attempts[0]["changes"] == {"num_stages": 1}
    signature = signature_of(failure["message"], "", artifacts)
    assert signature.kind == "out_of_resources"
    assert signature.detail("hint") == "compiles with BLOCK_T=512"

    # The bundle alone, elsewhere, with nothing of the repository or of this run's caches.
    elsewhere = tmp_path / "vendor-machine" / "bundle"
    shutil.copytree(artifacts / "bundle", elsewhere)
    replay = subprocess.run(
        [lane_python, "-I", "replay.py"],
        cwd=elsewhere,
        env={"PATH": "/usr/bin:/bin", "HOME": str(elsewhere)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert replay.returncode == 1, replay.stdout + replay.stderr
    assert "Required: 262144, Hardware limit: 166912" in replay.stdout
    assert str(REPO) not in replay.stdout + replay.stderr
    assert "compiles with BLOCK_T=512" in (elsewhere / "README.md").read_text()
    stack = json.loads((elsewhere / "stack.json").read_text())
    assert stack["triton"] == "3.6.0"

    # The hint is true: the same bundle replays clean at the config it names.
    fixed = subprocess.run(
        [lane_python, "-I", "replay.py", "--constexpr", "BLOCK_T=512"],
        cwd=elsewhere,
        env={"PATH": "/usr/bin:/bin", "HOME": str(elsewhere)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr


def test_bisect_through_local_venvs_walks_the_family_in_release_order(tmp_path: Path) -> None:
    # The nodes' version of this is in test_remote_run.py; here the same family in venvs.
    family = with_index_settings(load_matrix(FIXTURES / "lanes-bisect.toml"), os.environ)
    executor = executors.LocalVenvExecutor(family, WORK)
    result, run = bisect(
        family, "cpu", "test_backends.py::test_inductor_target", executor, tmp_path
    )
    assert [r.lane for r in result.results] == list(family.families["cpu"])
    assert [str(r.outcome) for r in result.results] == ["passed", "failed", "passed"], result
    assert "0 compatible backends for target (corex)" in result.results[1].detail
    assert (result.first_bad, result.last_good, result.first_good) == (
        "cpu-triton-3.4.0",
        "cpu-triton-3.2.0",
        "cpu-triton-3.5.1",
    )
    assert run.folder.name.endswith("-bisect") and (run.folder / "merged.xml").is_file()
