"""Two real processes ingest different runs into one history at once: nothing is lost.

On SQLite (one file) and on PostgreSQL (one database, as two lab controllers would).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ci.history.store import Store
from tests.fixtures.history_runs import Case, write_run

pytestmark = pytest.mark.integration

RUNS_EACH = 25
CASES = 40


def test_two_processes_ingesting_at_once_lose_nothing(tmp_path: Path, history_db: str) -> None:
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
    db = history_db
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ci.cli",
                "history",
                "ingest",
                "--db",
                db,
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
    with Store(db).session(create=False) as session:
        runs = session.rows("SELECT count(*) FROM runs")[0][0]
        results_count = session.rows("SELECT count(*) FROM results")[0][0]
        per_run = session.rows(
            "SELECT min(n), max(n) FROM (SELECT count(*) AS n FROM results GROUP BY run_id) AS c"
        )[0]
    assert runs == 2 * RUNS_EACH
    assert results_count == 2 * RUNS_EACH * CASES
    assert per_run == (CASES, CASES)


def test_two_processes_ingesting_the_same_runs_store_each_once(
    tmp_path: Path, history_db: str
) -> None:
    runs = [
        write_run(
            tmp_path / "results",
            index,
            [Case("cpu-triton-3.6.0", f"s::t{i}") for i in range(CASES)],
        )
        for index in range(RUNS_EACH)
    ]
    command = [sys.executable, "-m", "ci.cli", "history", "ingest", "--db", history_db]
    workers = [
        subprocess.Popen(
            [*command, *map(str, runs)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [worker.communicate(timeout=600) for worker in workers]
    for worker, (_, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err
    stored = sum(out.count(": stored,") for out, _ in outputs)
    again = sum(out.count(": already stored,") for out, _ in outputs)
    assert (stored, again) == (RUNS_EACH, RUNS_EACH)
    with Store(history_db).session(create=False) as session:
        assert session.rows("SELECT count(*) FROM results")[0][0] == RUNS_EACH * CASES
