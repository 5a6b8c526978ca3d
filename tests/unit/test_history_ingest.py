"""Ingest: real pytest JUnit in, hostile and malformed input refused, nothing half-stored.

Every test runs on SQLite and on a real PostgreSQL (the ``history_db`` fixture).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from ci.core.errors import HistoryError, ReportError
from ci.history.store import SCHEMA_VERSION, Store, ingest_run, ingest_runs
from ci.results import reader
from ci.smoke.contract import properties
from tests.fixtures.history_runs import Case, pytest_junit, run_id, write_run

LANE = "cpu-triton-3.6.0"
ERROR_TEXT = "RuntimeError: 0 compatible backends for target (cuda) ([]). There should only be one."


def _rows(db: str, sql: str) -> list[tuple[object, ...]]:
    with Store(db).session(create=False) as session:
        return session.rows(sql)


def _counts(db: str) -> tuple[int, int, int]:
    return (
        _rows(db, "SELECT count(*) FROM runs")[0][0],
        _rows(db, "SELECT count(*) FROM run_lanes")[0][0],
        _rows(db, "SELECT count(*) FROM results")[0][0],
    )  # type: ignore[return-value]


@pytest.fixture
def stored(tmp_path: Path, history_db: str) -> str:
    """A database holding one good run (index 0) of two testcases."""
    run = write_run(tmp_path / "results", 0, [Case(LANE, "t.py::a"), Case(LANE, "t.py::b")])
    ingest_run(history_db, run)
    return history_db


def test_real_pytest_junit_is_stored_with_its_properties(tmp_path: Path, history_db: str) -> None:
    cases = [
        Case(
            LANE,
            "compile[sm_80]",
            "passed",
            properties={
                "kernel": "unified_attention",
                "compile_seconds": "1.25",
                "shared_bytes": "49152",
                "target": "sm_80",
            },
        ),
        Case(LANE, "backend[corex]", "failed", ERROR_TEXT, {"signature": "backend:0-compatible"}),
        Case(LANE, "vllm", "skipped", "no model on this lane"),
    ]
    xml = pytest_junit(tmp_path / "work", cases)
    run = write_run(tmp_path / "results", 0, cases, junit=xml)
    db = history_db

    result = ingest_run(db, run)

    assert (result.run_id, result.testcases, result.already_present) == (run_id(0), 3, False)
    rows = {
        r[0]: r[1:]
        for r in _rows(
            db,
            "SELECT test, outcome, message, signature, kernel, compile_seconds, shared_bytes,"
            " target FROM results",
        )
    }
    passed = rows["test_smoke_standin::test_case[compile[sm_80]]"]
    assert passed == ("passed", "", "", "unified_attention", 1.25, 49152, "sm_80")
    failed = rows["test_smoke_standin::test_case[backend[corex]]"]
    assert failed[0] == "failed" and ERROR_TEXT in failed[1]
    assert failed[2] == "backend:0-compatible"
    assert rows["test_smoke_standin::test_case[vllm]"][0] == "skipped"
    stored_dir = run_id(0) if db.endswith(".sqlite") else str(run.resolve())
    assert _rows(db, "SELECT run_dir FROM runs") == [(stored_dir,)]


def test_reingest_is_a_noop(tmp_path: Path, stored: str) -> None:
    before = _counts(stored)
    again = ingest_run(stored, tmp_path / "results" / run_id(0))
    assert again.already_present
    assert _counts(stored) == before == (1, 1, 2)


def test_other_contents_under_a_stored_run_id_are_refused(tmp_path: Path, stored: str) -> None:
    other = write_run(tmp_path / "elsewhere", 0, [Case(LANE, "t.py::a", "failed", "boom")])
    with pytest.raises(HistoryError, match="already stored"):
        ingest_run(stored, other)
    assert _rows(stored, "SELECT outcome FROM results ORDER BY test") == [("passed",), ("passed",)]


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<testsuites><testsuite><testcase name="&lol3;"/></testsuite></testsuites>"""

EXTERNAL_ENTITY = b"""<?xml version="1.0"?>
<!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<testsuites><testsuite><testcase name="&xxe;"/></testsuite></testsuites>"""

EXTERNAL_DTD = b"""<?xml version="1.0"?>
<!DOCTYPE testsuites SYSTEM "http://example.invalid/junit.dtd">
<testsuites><testsuite><testcase name="a"/></testsuite></testsuites>"""

GOOD = (
    b'<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite><testcase name="a">'
    b'<properties><property name="lane" value="cpu-triton-3.6.0"/></properties>'
    b"</testcase></testsuite></testsuites>"
)


@pytest.mark.parametrize(
    ("junit", "error"),
    [
        pytest.param(BILLION_LAUGHS, "refused hostile XML", id="entity-expansion"),
        pytest.param(EXTERNAL_ENTITY, "refused hostile XML", id="external-entity"),
        pytest.param(EXTERNAL_DTD, "refused hostile XML", id="external-dtd"),
        pytest.param(
            BILLION_LAUGHS.decode()
            .replace('version="1.0"', 'version="1.0" encoding="utf-16"')
            .encode("utf-16"),
            "refused hostile XML",
            id="entities-hidden-in-utf16",
        ),
        pytest.param(GOOD[: len(GOOD) // 2], "not well-formed", id="truncated"),
        pytest.param(b"", "empty file", id="empty"),
        pytest.param(
            GOOD.replace(b'value="cpu', b'value="\xe9\xff cpu'), "not well-formed", id="not-utf8"
        ),
        pytest.param(
            GOOD.replace(b"utf-8", b"klingon-8"),
            "(unreadable|not well-formed)",
            id="unknown-encoding",
        ),
        pytest.param(
            b"<html><body>502 Bad Gateway</body></html>", "expected <testsuites>", id="not-junit"
        ),
        pytest.param(
            GOOD.replace(b"cpu-triton-3.6.0", b"cpu-nope"),
            "lane 'cpu-nope' is not in run.json",
            id="unknown-lane",
        ),
    ],
)
def test_hostile_or_malformed_junit_is_refused_and_nothing_is_stored(
    tmp_path: Path, stored: str, junit: bytes, error: str
) -> None:
    before = _counts(stored)
    bad = write_run(tmp_path / "results", 1, [Case(LANE, "x::a")], junit=junit)
    with pytest.raises(ReportError, match=error) as caught:
        ingest_run(stored, bad)
    assert str(bad / "merged.xml") in str(caught.value)
    assert _counts(stored) == before
    assert _rows(stored, "SELECT run_id FROM runs") == [(run_id(0),)]


def test_a_junit_file_over_the_size_cap_is_refused_unread(tmp_path: Path, stored: str) -> None:
    bad = write_run(tmp_path / "results", 1, [Case(LANE, "x::a")])
    merged = bad / "merged.xml"
    with merged.open("r+b") as handle:  # sparse: 300 MiB of nothing, over the 256 MiB cap
        handle.truncate(300 * 1024 * 1024)
    with pytest.raises(ReportError, match="more than the limit"):
        ingest_run(stored, bad)
    assert _counts(stored) == (1, 1, 2)


def test_the_size_cap_can_be_lowered(tmp_path: Path, history_db: str) -> None:
    run = write_run(tmp_path / "results", 0, [Case(LANE, f"x::t{i}") for i in range(50)])
    with pytest.raises(ReportError, match="more than the limit of 1000 bytes"):
        ingest_run(history_db, run, max_junit_bytes=1000)


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda r: r.pop("started"), "key 'started'"),
        (lambda r: r.update(lanes={}), "key 'lanes'"),
        (lambda r: r["lanes"]["cpu-triton-3.6.0"]["compiler"].pop("version"), "compiler.version"),
        (lambda r: r.update(run_id="../../etc"), "key 'run_id'"),
    ],
)
def test_a_bad_run_json_names_the_file_and_key(tmp_path: Path, stored: str, edit, key) -> None:  # type: ignore[no-untyped-def]
    bad = write_run(tmp_path / "results", 1, [Case(LANE, "x::a")])
    record = json.loads((bad / "run.json").read_text())
    edit(record)
    (bad / "run.json").write_text(json.dumps(record))
    with pytest.raises(ReportError, match=key) as caught:
        ingest_run(stored, bad)
    assert str(bad / "run.json") in str(caught.value)
    assert _counts(stored) == (1, 1, 2)


def test_a_failure_inside_the_transaction_stores_nothing_of_the_run(
    tmp_path: Path, stored: str
) -> None:
    if stored.endswith(".sqlite"):
        with sqlite3.connect(stored) as connection:
            connection.execute(
                "CREATE TRIGGER refuse AFTER INSERT ON results WHEN NEW.test = 'x::poison'"
                " BEGIN SELECT RAISE(ABORT, 'disk full, say'); END"
            )
    else:
        with Store(stored).session() as session:
            session.run(
                "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS"
                " $$ BEGIN IF NEW.test = 'x::poison' THEN RAISE 'disk full, say'; END IF;"
                " RETURN NEW; END $$"
            )
            session.run(
                "CREATE TRIGGER refuse AFTER INSERT ON results FOR EACH ROW"
                " EXECUTE FUNCTION refuse()"
            )
    # More testcases than one insert batch: the batches before the poisoned one go too.
    cases = [Case(LANE, f"x::t{i}") for i in range(2500)] + [Case(LANE, "x::poison")]
    run = write_run(tmp_path / "results", 1, cases)
    (run / "artifacts").mkdir()
    with pytest.raises(HistoryError, match="disk full"):
        ingest_run(stored, run)
    assert _counts(stored) == (1, 1, 2)


def test_artifact_files_of_failed_tests_are_listed_inside_the_run_only(tmp_path: Path) -> None:
    cases = [
        Case(LANE, "x::a", "failed", "boom", {"artifacts": "artifacts/cpu/a"}),
        Case(LANE, "x::b", "failed", "boom", {"artifacts": "../../"}),
        Case(LANE, "x::c", "passed", "", {"artifacts": "artifacts/cpu/c"}),
    ]
    run = write_run(tmp_path / "results", 0, cases)
    folder = run / "artifacts" / "cpu" / "a"
    folder.mkdir(parents=True)
    (folder / "kernel.make_ttgir.repro.mlir").write_text("module {}")
    (folder / "failure.json").write_text("{}")
    (folder / "passwd").symlink_to("/etc/passwd")
    (run / "artifacts" / "cpu" / "c").mkdir()
    (run / "artifacts" / "cpu" / "c" / "ok.txt").write_text("")
    listed = [
        (case.test, path)
        for case in reader.read_cases(run / "merged.xml", [LANE])
        for path in reader.artifact_files(run, case)
    ]
    assert listed == [
        ("x::a", "artifacts/cpu/a/failure.json"),
        ("x::a", "artifacts/cpu/a/kernel.make_ttgir.repro.mlir"),
    ]


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    db = tmp_path / "history.sqlite"
    db.write_bytes(b"this is not sqlite" * 100)
    run = write_run(tmp_path / "results", 0, [Case(LANE, "x::a")])
    with pytest.raises(HistoryError, match="not a usable history database"):
        ingest_run(db, run)


def test_ingest_runs_stores_the_good_runs_and_names_the_refused(
    tmp_path: Path, history_db: str
) -> None:
    good = write_run(tmp_path / "results", 0, [Case(LANE, "x::a")])
    bad = write_run(tmp_path / "results", 1, [Case(LANE, "x::a")], junit=BILLION_LAUGHS)
    later = write_run(tmp_path / "results", 2, [Case(LANE, "x::a")])
    db = history_db
    with pytest.raises(ReportError, match=r"2 runs stored; 1 refused") as caught:
        ingest_runs(db, [good, bad, later])
    assert str(bad / "merged.xml") in str(caught.value)
    assert _rows(db, "SELECT run_id FROM runs ORDER BY run_id") == [(run_id(0),), (run_id(2),)]


def test_a_schema_3_history_gains_the_triage_summary_in_place(tmp_path: Path) -> None:
    db = tmp_path / "history.sqlite"
    old = write_run(tmp_path / "results", 0, [Case(LANE, "s::t", "failed", "boom")])
    Store(db).ingest(old)
    with sqlite3.connect(db) as con:  # the history as schema 3 left it
        con.execute("ALTER TABLE results DROP COLUMN triage")
        con.execute("UPDATE meta SET value = '3' WHERE key = 'schema'")
    summary = "unclassified failure: boom [no rule decided; by resemblance: crash 0.20 (next ...)]"
    new = write_run(
        tmp_path / "results",
        1,
        [Case(LANE, "s::t", "failed", "boom", {properties.TRIAGE: summary})],
    )

    Store(db).ingest(new)

    assert _rows(str(db), "SELECT value FROM meta WHERE key = 'schema'") == [("4",)]
    assert _rows(str(db), "SELECT run_id, triage FROM results ORDER BY run_id") == [
        (run_id(0), ""),
        (run_id(1), summary),
    ]
    assert Store(db).observations().failures[(LANE, "s::t")].triage == summary


def test_a_schema_2_history_gains_the_runs_artifacts_url_in_place(tmp_path: Path) -> None:
    db = tmp_path / "history.sqlite"
    old = write_run(tmp_path / "results", 0, [Case(LANE, "s::t", "failed", "boom")])
    Store(db).ingest(old)
    with sqlite3.connect(db) as con:  # the history as schema 2 left it
        con.execute("ALTER TABLE runs DROP COLUMN artifacts_url")
        con.execute("ALTER TABLE results DROP COLUMN triage")
        con.execute("UPDATE meta SET value = '2' WHERE key = 'schema'")
    new = write_run(tmp_path / "results", 1, [Case(LANE, "s::t", "failed", "boom")])
    record = json.loads((new / "run.json").read_text())
    record["ci_run"] = {"server_url": "https://github.com", "repository": "o/r", "run_id": "7"}
    (new / "run.json").write_text(json.dumps(record))

    Store(db).ingest(new)

    assert _rows(str(db), "SELECT value FROM meta WHERE key = 'schema'") == [(str(SCHEMA_VERSION),)]
    assert _rows(str(db), "SELECT run_id, artifacts_url FROM runs ORDER BY run_id") == [
        (run_id(0), ""),
        (run_id(1), "https://github.com/o/r/actions/runs/7#artifacts"),
    ]
    failure = Store(db).observations().failures[(LANE, "s::t")]
    assert failure.artifacts_url == "https://github.com/o/r/actions/runs/7#artifacts"
