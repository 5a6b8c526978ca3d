"""``flagci history ingest|verdicts`` and ``flagci dashboard`` through ci.cli.main."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci.cli import main
from tests.fixtures.history_runs import BILLION_LAUGHS_FOR_CLI, Case, run_id, write_run

LANE = "kunlun-flagtree-0.6.1"
UNI_SRAM = "OutOfResources: out of resource: uni_sram PassManager::run failed"


def test_ingest_all_then_verdicts_then_dashboard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    write_run(results, 0, [Case(LANE, "gdn::t")])
    write_run(results, 1, [Case(LANE, "gdn::t", "failed", UNI_SRAM)])
    (results / "dashboard").mkdir()  # not a run folder: skipped
    db = results / "history.sqlite"

    assert main(["history", "ingest", "--db", str(db), "--all", str(results)]) == 0
    assert capsys.readouterr().out.count(": stored, 1 testcases") == 2
    assert main(["history", "ingest", "--db", str(db), str(results / run_id(1))]) == 0
    assert "already stored" in capsys.readouterr().out

    assert main(["history", "verdicts", "--db", str(db), "--failing"]) == 0
    out = capsys.readouterr().out
    assert f"{LANE}  gdn::t  known issue" in out and "kunlun-gdn-uni-sram" in out

    out_dir = tmp_path / "site"
    assert main(["dashboard", "--db", str(db), "--out", str(out_dir)]) == 0
    assert (out_dir / "index.html").is_file()


def test_errors_become_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    bad = write_run(results, 0, [Case(LANE, "gdn::t")], junit=BILLION_LAUGHS_FOR_CLI)
    db = results / "history.sqlite"
    assert main(["history", "ingest", "--db", str(db), str(bad)]) == 6
    assert "refused hostile XML" in capsys.readouterr().err
    assert main(["history", "ingest", "--db", str(db)]) == 3
    assert main(["dashboard", "--db", str(tmp_path / "none.sqlite")]) == 7
    assert "no history database" in capsys.readouterr().err
