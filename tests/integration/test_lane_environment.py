"""The lane venv on the controller: shared packages, one suite per checkout."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ci.build import environment
from ci.commands.options import cache_from
from ci.lanes.matrix import Lane, LaneMatrix

pytestmark = pytest.mark.integration


def _suite_of(env: environment.LaneEnvironment, cwd: Path) -> tuple[str, str]:
    """Where the venv's ``ci.smoke`` and ``triton`` come from (run outside any checkout:
    ``python -c`` puts its working folder first on sys.path)."""
    done = subprocess.run(
        [
            str(env.python),
            "-c",
            "import ci.smoke, triton; print(ci.smoke.__file__, triton.__file__)",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
    )
    smoke, triton = done.stdout.split()
    return smoke, triton


def test_two_checkouts_share_the_packages_and_run_their_own_suite(
    tmp_path: Path,
    matrix: LaneMatrix,
    cpu_lane: Lane,
    cpu_lane_env: environment.LaneEnvironment,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A second checkout on the machine (another worktree, a CI clone) gets the same
    installed pins but its own ``ci.smoke``, and the first checkout keeps its own."""
    other = tmp_path / "other-checkout"
    (other / "ci" / "smoke").mkdir(parents=True)
    (other / "ci" / "__init__.py").write_text("")
    (other / "ci" / "smoke" / "__init__.py").write_text("")
    monkeypatch.setattr(environment, "source_root", lambda: other)
    theirs = environment.prepare(matrix, cpu_lane, cache_from(os.environ), node="other")
    monkeypatch.undo()
    ours = environment.prepare(matrix, cpu_lane, cache_from(os.environ))

    assert theirs.venv != ours.venv == cpu_lane_env.venv
    their_smoke, their_triton = _suite_of(theirs, tmp_path)
    our_smoke, our_triton = _suite_of(ours, tmp_path)
    assert their_smoke == str(other / "ci" / "smoke" / "__init__.py")
    assert our_smoke == str(environment.source_root() / "ci" / "smoke" / "__init__.py")
    assert their_triton == our_triton  # one install of the pins
    assert '"node": "other"' in theirs.lane_file.read_text(encoding="utf-8")
    assert '"node": "localhost"' in ours.lane_file.read_text(encoding="utf-8")
