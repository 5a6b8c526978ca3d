"""Two real processes ingest different runs into one SQLite file at once: nothing is lost."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.history_runs import Case, write_run

pytestmark = pytest.mark.integration

RUNS_EACH = 25
CASES = 40


def test_two_processes_ingesting_at_once_lose_nothing(tmp_path: Path) -> None:
    results = tmp_path / "results"
    batches: list[list[Path]] = [[], []]
    for index in range(2 * RUNS_EACH):
        cases = [
            Case(
                "cpu-triton-3.6.0",
                f"s::t{i}",
                "failed" if (i + index) % 7 == 0 else "passed",
                "RuntimeError: boom",
            )
            for i in range(CASES)
        ]
        batches[index % 2].append(write_run(results, index, cases))
    db = results / "history.sqlite"
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ci.cli",
                "history",
                "ingest",
                "--db",
                str(db),
                *map(str, batch),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for batch in batches
    ]
    outputs = [worker.communicate(timeout=600) for worker in workers]
    for worker, (out, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err
        assert out.count(": stored,") == RUNS_EACH
    with sqlite3.connect(db) as connection:
        runs = connection.execute("SELECT count(*) FROM runs").fetchone()[0]
        results_count = connection.execute("SELECT count(*) FROM results").fetchone()[0]
        per_run = connection.execute(
            "SELECT min(n), max(n) FROM (SELECT count(*) AS n FROM results GROUP BY run_id)"
        ).fetchone()
    assert runs == 2 * RUNS_EACH
    assert results_count == 2 * RUNS_EACH * CASES
    assert per_run == (CASES, CASES)
