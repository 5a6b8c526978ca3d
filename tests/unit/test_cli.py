"""CLI conventions: --version, --json on listing commands, a closed pipe, -v/-q, exit codes."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from ci.cli import CLOSED_PIPE_EXIT, build_parser, main
from ci.core import errors
from tests.fixtures.history_runs import Case, run_id, write_run

LANE = "kunlun-flagtree-0.6.1"
UNI_SRAM = "OutOfResources: out of resource: uni_sram PassManager::run failed"
FLAGCI = [sys.executable, "-m", "ci.cli"]


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == "flagci 0.1.0"


def test_every_exit_code_is_distinct_and_in_the_help() -> None:
    kinds = [
        errors.UsageError,
        errors.EnvironmentSetupError,
        errors.InfrastructureError,
        errors.ReportError,
        errors.HistoryError,
        errors.ConfigError,
        errors.NotifyError,
        errors.RegressionError,
        errors.NewFailureError,
        errors.UnknownFailureError,
        errors.FixNotVerifiedError,
        errors.SlowerError,
    ]
    codes = [kind.exit_code for kind in kinds]
    assert len(set(codes)) == len(codes) and 2 not in codes and 1 not in codes
    epilog = build_parser().epilog or ""
    for kind in kinds:
        doc = (kind.__doc__ or "").strip().splitlines()[0]
        assert f"  {kind.exit_code:<4}{doc}" in epilog


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    results = tmp_path / "results"
    write_run(results, 0, [Case(LANE, f"gdn::t{i}", "failed", UNI_SRAM) for i in range(3000)])
    db = results / "history.sqlite"
    subprocess.run(
        [*FLAGCI, "history", "ingest", "--db", str(db), "--all", str(results)],
        check=True,
        capture_output=True,
    )
    # The real pipe of a shell: head reads two lines and exits, flagci has thousands left.
    done = subprocess.run(
        f'{" ".join(FLAGCI)} history verdicts --db {db} | head -2; echo "status ${{PIPESTATUS[0]}}"',
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["lane", "test", "verdict", "notes"]
    assert lines[1].split()[:2] == [LANE, "gdn::t0"]
    assert lines[-1] == f"status {CLOSED_PIPE_EXIT}"
    assert done.stderr == ""


def test_json_on_the_listing_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    write_run(results, 0, [Case(LANE, "gdn::t")])
    write_run(results, 1, [Case(LANE, "gdn::t", "failed", UNI_SRAM)])
    db = str(results / "history.sqlite")
    assert main(["history", "ingest", "--db", db, "--all", str(results)]) == 0
    capsys.readouterr()

    assert main(["history", "verdicts", "--db", db, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    (verdict,) = document["verdicts"]
    assert (verdict["lane"], verdict["kind"], verdict["known_issue"]) == (
        LANE,
        "known issue",
        "kunlun-gdn-uni-sram",
    )
    assert verdict["failing_since"]["runs"] == 1

    assert main(["history", "runs", "--db", db, "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert [r["run_id"] for r in runs] == sorted(r["run_id"] for r in runs) and len(runs) == 2

    assert main(["lanes", "list", "--json"]) == 0
    lanes = {row["lane"]: row for row in json.loads(capsys.readouterr().out)}
    assert lanes["cpu-triton-3.6.0"]["default"] is True
    assert lanes[LANE]["vendor"] == "kunlun"


def test_nodes_check_json_names_an_unreachable_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(
        "all:\n  hosts:\n    gone:\n      ansible_host: 127.0.0.1\n      ansible_port: 9\n"
        "      flagci_vendors: [cpu]\n"
    )
    assert main(["nodes", "check", "--inventory", str(inventory), "--json"]) == 5
    captured = capsys.readouterr()
    (node,) = json.loads(captured.out)
    assert (node["node"], node["reachable"], node["healthy"]) == ("gone", False, False)
    assert "not usable: gone" in captured.err


@pytest.mark.parametrize(
    ("flags", "level"), [([], logging.INFO), (["-q"], logging.WARNING), (["-vv"], logging.DEBUG)]
)
def test_verbosity_sets_the_log_level(
    flags: list[str], level: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*flags, "lanes", "list"]) == 0
    assert logging.getLogger().level == level


def test_the_listing_commands_print_plain_tables_in_a_pipe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    write_run(results, 0, [Case(LANE, "gdn::t")])
    write_run(results, 1, [Case(LANE, "gdn::t", "failed", UNI_SRAM)])
    db = str(results / "history.sqlite")
    assert main(["history", "ingest", "--db", db, "--all", str(results)]) == 0
    capsys.readouterr()

    assert main(["history", "verdicts", "--db", db]) == 0
    header, row, *_ = capsys.readouterr().out.splitlines()
    assert header.split() == ["lane", "test", "verdict", "notes"]
    assert row.split()[:5] == [LANE, "gdn::t", "known", "issue", "since"]
    assert "known: kunlun-gdn-uni-sram" in row

    assert main(["history", "runs", "--db", db]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    assert header.split() == ["run", "started", "kind", "status"]
    assert [r.split()[0] for r in rows] == [run_id(0), run_id(1)]
    assert rows[1].split()[-2:] == ["remote", "failed"]

    assert main(["lanes", "list"]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    assert header.split() == ["lane", "vendor", "python", "targets", "default"]
    by_lane = {r.split()[0]: r.split() for r in rows}
    assert by_lane["cpu-triton-3.6.0"][1:3] == ["cpu", "3.11"]
    assert by_lane["cpu-triton-3.6.0"][-1] == "yes" and by_lane[LANE][-1] != "yes"
