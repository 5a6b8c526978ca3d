"""The dashboard workflow's work (.github/scripts/publish-dashboard.sh) run outside Actions,
with a stand-in gh on PATH: the first night (no nightly artifact yet) publishes an honest
empty site, a later night publishes its runs, a missing or failing gh is a clear error."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.history_runs import Case, run_id, write_run

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".github" / "scripts" / "publish-dashboard.sh"
TOOLS = ("bash", "env", "date", "mkdir", "rm", "cp", "cat")

# gh as the script calls it: `run list` prints the ids in $GH_RUNS (exit $GH_LIST_STATUS);
# `run download ID ... --dir DIR` copies $GH_ARTIFACTS/ID into DIR, or fails as gh does
# when the run has no artifact of that pattern.
STAND_IN_GH = """#!/bin/bash
echo "gh $*" >> "$GH_LOG"
if [ "$1 $2" = "run list" ]; then
    [ "${GH_LIST_STATUS:-0}" = 0 ] || { echo "HTTP 401: Bad credentials" >&2; exit "$GH_LIST_STATUS"; }
    for id in $GH_RUNS; do echo "$id"; done
    exit 0
fi
if [ "$1 $2" = "run download" ]; then
    dir=${@: -1}
    [ -d "$GH_ARTIFACTS/$3" ] || { echo "no valid artifacts found to download" >&2; exit 1; }
    mkdir -p "$dir" && cp -r "$GH_ARTIFACTS/$3/." "$dir/"
    exit 0
fi
exit 2
"""


def _tools(folder: Path, *, gh: bool) -> Path:
    """A PATH of its own: the few tools the script uses, gh only when asked."""
    folder.mkdir()
    for name in TOOLS:
        found = shutil.which(name)
        assert found, name
        (folder / name).symlink_to(found)
    if gh:
        (folder / "gh").write_text(STAND_IN_GH)
        (folder / "gh").chmod(0o755)
    return folder


def _flagci(folder: Path) -> Path:
    """What `make venv` gives the script: a flagci command (here, this checkout's)."""
    folder.mkdir()
    (folder / "flagci").write_text(f'#!/bin/bash\nexec {sys.executable} -m ci.cli "$@"\n')
    (folder / "flagci").chmod(0o755)
    return folder


def _publish(
    tmp_path: Path, *, gh: bool = True, runs: str = "", list_status: int = 0
) -> subprocess.CompletedProcess[str]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = {
        "PATH": str(_tools(tmp_path / "tools", gh=gh)),
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path),
        "REPOSITORY": "flagos-ai/flagci",
        "FLAGCI_HISTORY_DB": str(tmp_path / "history.sqlite"),
        "FLAGCI_BIN": str(_flagci(tmp_path / "venv")),
        "GH_LOG": str(tmp_path / "gh.log"),
        "GH_RUNS": runs,
        "GH_LIST_STATUS": str(list_status),
        "GH_ARTIFACTS": str(tmp_path / "artifacts"),
    }
    return subprocess.run(
        [str(SCRIPT)], cwd=work, env=env, capture_output=True, text=True, check=False
    )


def test_the_first_night_without_artifacts_publishes_an_empty_honest_site(tmp_path: Path) -> None:
    done = _publish(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    site = tmp_path / "work" / "site"
    assert (site / "index.html").is_file()
    board = (site / "dashboard" / "index.html").read_text()
    assert "The history holds no runs yet" in board
    assert "no nightly run since" in done.stdout
    assert (
        "gh run list --repo flagos-ai/flagci --workflow nightly.yml"
        in (tmp_path / "gh.log").read_text()
    )


def test_a_night_with_artifacts_publishes_its_runs_and_skips_a_run_without_one(
    tmp_path: Path,
) -> None:
    artifact = tmp_path / "artifacts" / "9001" / "results-cpu-9001"
    folder = write_run(artifact, 0, [Case("cpu-triton-3.6.0", "s::t")])
    (folder / "index.html").write_text("<html>run</html>")
    done = _publish(tmp_path, runs="9002 9001")  # 9002: still running, no artifact yet
    assert done.returncode == 0, done.stdout + done.stderr
    assert "run 9002: no results artifact" in done.stdout
    site = tmp_path / "work" / "site"
    assert (site / run_id(0) / "index.html").read_text() == "<html>run</html>"
    assert run_id(0) in (site / "dashboard" / "index.html").read_text()


def test_a_missing_gh_is_a_clear_error(tmp_path: Path) -> None:
    done = _publish(tmp_path, gh=False)
    assert done.returncode == 1
    assert "::error::gh (the GitHub CLI) is not on this runner's PATH" in done.stderr
    assert not (tmp_path / "work" / "site").exists()


@pytest.mark.parametrize("status", [1, 4])
def test_a_failing_gh_stops_the_night_with_its_reason(tmp_path: Path, status: int) -> None:
    done = _publish(tmp_path, list_status=status)
    assert done.returncode == 1
    assert "HTTP 401: Bad credentials" in done.stderr
    assert "::error::gh run list failed for flagos-ai/flagci" in done.stderr
    assert not (tmp_path / "work" / "site").exists()


def test_the_script_is_executable_by_the_workflow() -> None:
    assert os.access(SCRIPT, os.X_OK)
