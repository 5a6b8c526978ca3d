"""The lane <-> controller contract (``ci/smoke/contract/``): what one side writes is what the
other reads, each file with one writer."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ci.smoke import files
from ci.smoke.contract import records


def test_the_lane_side_atomic_write_leaves_no_temporary_file_and_the_usual_mode(
    tmp_path: Path,
) -> None:
    path = tmp_path / "deep" / "capture.json"
    files.write_text(path, "one")
    files.write_text(path, "two")
    assert path.read_text() == "two"
    assert [p.name for p in path.parent.iterdir()] == ["capture.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_failure_json_has_one_updater_that_keeps_what_triage_added(tmp_path: Path) -> None:
    path = tmp_path / records.FAILURE_NAME
    records.update_failure(path, {records.FAILURE_HINT: "stale"})
    records.update_failure(path, {records.FAILURE_JOB: {"kernel": "k"}}, fresh=True)
    records.update_failure(path, {records.FAILURE_REPLAY: {"pass": "P"}})
    records.update_failure(path, {records.FAILURE_HINT: "num_stages=1"})
    assert json.loads(path.read_text()) == {
        records.FAILURE_JOB: {"kernel": "k"},
        records.FAILURE_REPLAY: {"pass": "P"},
        records.FAILURE_HINT: "num_stages=1",
    }
    assert records.read_failure(tmp_path / "none.json") == {}
