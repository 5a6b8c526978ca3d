"""The run history store: the schema and every query, on SQLite or PostgreSQL.

SQLite (a file, the embedded default) or PostgreSQL (``postgresql://...``, one history
written by several controllers, one per lab) hold the same schema and answer the same
queries; only connecting, the placeholder and the write lock differ (``_Dialect``).

A run is stored in one transaction: testcases are streamed from the run folder
(``ci.results.reader``) and inserted in batches inside it, so a run whose JUnit is refused
halfway, or any database error, stores nothing of it; a reader or a second ingesting
process sees the whole run or none of it. Writers are serialised (``BEGIN IMMEDIATE`` on
SQLite, a table lock on PostgreSQL). Ingesting the same run again is a no-op; ingesting
other contents under a run id already stored is refused.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from itertools import chain
from pathlib import Path
from typing import Any

from ci.core.errors import HistoryError, ReportError
from ci.history.ledger import Ledger
from ci.history.verdicts import (
    FailureRecord,
    History,
    LaneRun,
    Observations,
    ResultRow,
    RunInfo,
    evaluate,
    latest_runs,
)
from ci.results import reader
from ci.results.reader import CaseResult, RunRecord

DEFAULT_DB = Path("results/history.sqlite")
SCHEMA_VERSION = 4
BUSY_TIMEOUT_S = 120.0
BATCH = 2000
_SCHEMA_LOCK = 0x466C6167  # PostgreSQL advisory lock held while creating the schema

# CaseResult fields as stored: every field but the perf ones, which have their own table,
# and the raw properties, which the named fields already hold.
_PERF_FIELDS = ("gpu", "perf_ms", "pct_of_ceiling", "ratio_to_torch")
_RESULT_FIELDS = tuple(
    f.name for f in fields(CaseResult) if f.name not in (*_PERF_FIELDS, "properties")
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    started TEXT NOT NULL,
    finished TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    nodes TEXT NOT NULL,
    run_dir TEXT NOT NULL,
    digest TEXT NOT NULL,
    ingested TEXT NOT NULL,
    artifacts_url TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS run_lanes (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    lane TEXT NOT NULL,
    vendor TEXT NOT NULL,
    family TEXT NOT NULL,
    baseline TEXT,
    compiler_package TEXT NOT NULL,
    compiler_version TEXT NOT NULL,
    triton_version TEXT NOT NULL,
    pins TEXT NOT NULL,
    pins_digest TEXT NOT NULL,
    PRIMARY KEY (run_id, lane)
);
CREATE TABLE IF NOT EXISTS results (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    lane TEXT NOT NULL,
    node TEXT NOT NULL,
    test TEXT NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('passed', 'failed', 'error', 'skipped')),
    message TEXT NOT NULL,
    details TEXT NOT NULL,
    signature TEXT NOT NULL,
    failure_kind TEXT NOT NULL,
    triage TEXT NOT NULL DEFAULT '',
    kernel TEXT NOT NULL,
    config TEXT NOT NULL,
    target TEXT NOT NULL,
    compile_seconds DOUBLE PRECISION,
    shared_bytes BIGINT,
    registers BIGINT,
    spills BIGINT,
    artifacts TEXT NOT NULL,
    duration DOUBLE PRECISION,
    notes TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, lane, node, test)
);
CREATE TABLE IF NOT EXISTS perf (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    lane TEXT NOT NULL,
    node TEXT NOT NULL,
    test TEXT NOT NULL,
    gpu TEXT NOT NULL,
    perf_ms DOUBLE PRECISION NOT NULL,
    pct_of_ceiling DOUBLE PRECISION,
    ratio_to_torch DOUBLE PRECISION,
    PRIMARY KEY (run_id, lane, node, test)
);
CREATE TABLE IF NOT EXISTS artifact_files (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    lane TEXT NOT NULL,
    node TEXT NOT NULL,
    test TEXT NOT NULL,
    path TEXT NOT NULL,
    PRIMARY KEY (run_id, lane, node, test, path)
);
"""

# Older schemas, brought up to date in place, one step at a time: 1 (before notes, with
# perf.ms), 2 (before the runs' artifacts_url), 3 (before the results' triage summary).
_MIGRATIONS = {
    1: (
        "ALTER TABLE results ADD COLUMN notes TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE perf RENAME COLUMN ms TO perf_ms",
    ),
    2: ("ALTER TABLE runs ADD COLUMN artifacts_url TEXT NOT NULL DEFAULT ''",),
    3: ("ALTER TABLE results ADD COLUMN triage TEXT NOT NULL DEFAULT ''",),
}


@dataclass(frozen=True)
class IngestResult:
    run_id: str
    testcases: int
    lanes: tuple[str, ...]
    already_present: bool
    notes: tuple[str, ...] = ()  # "test: note" for each testcase the reader interpreted


@dataclass(frozen=True)
class MetricRow:
    """The compile time of one testcase: what the compile time charts plot."""

    run_id: str
    lane: str
    kernel: str
    config: str
    target: str
    compile_seconds: float


@dataclass(frozen=True)
class PerfRecord:
    """A perf test's time on one node: what the perf charts and the tuning gap read."""

    run_id: str
    lane: str
    test: str
    gpu: str
    kernel: str
    config: str
    perf_ms: float


@dataclass(frozen=True)
class _Dialect:
    placeholder: str
    begin: str
    # Serialises writers; readers are never blocked.
    write_lock: str | None
    errors: tuple[type[Exception], ...]


class _Session:
    """One open connection, its dialect, and the few ways the store talks to it."""

    def __init__(self, connection: Any, dialect: _Dialect, name: str) -> None:
        self.connection = connection
        self.dialect = dialect
        self.name = name

    def _sql(self, sql: str) -> str:
        return sql if self.dialect.placeholder == "?" else sql.replace("?", "%s")

    def rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        cursor = self.connection.cursor()
        cursor.execute(self._sql(sql), tuple(params))
        return list(cursor.fetchall())

    def run(self, sql: str, params: Sequence[object] = ()) -> None:
        self.connection.cursor().execute(self._sql(sql), tuple(params))

    def many(self, sql: str, rows: Iterable[Sequence[object]]) -> None:
        batch = [tuple(row) for row in rows]
        if batch:
            self.connection.cursor().executemany(self._sql(sql), batch)

    @contextmanager
    def write(self, *, lock: bool = True) -> Iterator[None]:
        """One transaction holding the write lock; anything raised rolls everything back.

        ``lock=False`` only for creating the schema, when there is no table to lock yet.
        """
        self.run(self.dialect.begin)
        try:
            if lock and self.dialect.write_lock:
                self.run(self.dialect.write_lock)
            yield
        except BaseException:
            self.run("ROLLBACK")
            raise
        self.run("COMMIT")


_SQLITE = _Dialect("?", "BEGIN IMMEDIATE", None, (sqlite3.Error,))


def _postgresql() -> _Dialect:
    import psycopg  # only a PostgreSQL history needs it

    return _Dialect("%s", "BEGIN", "LOCK TABLE runs IN SHARE ROW EXCLUSIVE MODE", (psycopg.Error,))


def is_url(target: str) -> bool:
    return target.startswith(("postgresql://", "postgres://"))


def _lane_row(lane_run: LaneRun, lane: reader.LaneRecord) -> tuple[Any, ...]:
    """A ``run_lanes`` row: the lane as verdicts see it, and what only the table keeps."""
    return (
        lane_run.run_id,
        lane_run.lane,
        lane_run.vendor,
        lane_run.family,
        lane_run.baseline,
        lane_run.package,
        lane_run.version,
        lane.compiler.triton,
        json.dumps(lane.pins, sort_keys=True),
        lane_run.pins_digest,
    )


class Store:
    """The history at ``target``: a SQLite file path or a ``postgresql://`` URL."""

    def __init__(self, target: str | Path) -> None:
        self.target = str(target)
        self.postgresql = is_url(self.target)
        self.dialect = _postgresql() if self.postgresql else _SQLITE
        # A URL may carry a password: messages name the database, not the credentials.
        self.name = _redact(self.target) if self.postgresql else self.target

    @property
    def folder(self) -> Path | None:
        """The SQLite file's folder (run folders are stored relative to it); None on PostgreSQL."""
        return None if self.postgresql else Path(self.target).resolve().parent

    def exists(self) -> bool:
        return self.postgresql or Path(self.target).is_file()

    @contextmanager
    def session(self, *, create: bool = True) -> Iterator[_Session]:
        if not create and not self.exists():
            raise HistoryError(f"{self.name}: no history database (ingest a run first)")
        connection = self._connect()
        try:
            session = _Session(connection, self.dialect, self.name)
            self._set_up(session)
            yield session
        finally:
            connection.close()

    def _connect(self) -> Any:
        if self.postgresql:
            import psycopg

            try:
                return psycopg.connect(self.target, autocommit=True, connect_timeout=10)
            except psycopg.Error as err:
                raise HistoryError(f"{self.name}: cannot connect: {err}") from None
        path = Path(self.target)
        path.parent.mkdir(parents=True, exist_ok=True)
        return sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)

    def _set_up(self, session: _Session) -> None:
        # SQLite: switching a new database to WAL, or upgrading to a write lock, can answer
        # "database is locked" at once, without waiting on the busy timeout, while another
        # process creates or writes the same file: retry those within the same timeout.
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                if not self.postgresql:
                    session.run(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
                    session.run("PRAGMA journal_mode = WAL")
                    session.run("PRAGMA synchronous = NORMAL")
                    session.run("PRAGMA foreign_keys = ON")
                self._ensure_schema(session)
                return
            except sqlite3.OperationalError as err:
                if "locked" not in str(err) or time.monotonic() > deadline:
                    raise HistoryError(
                        f"{self.name}: not a usable history database: {err}"
                    ) from None
                time.sleep(0.05)
            except self.dialect.errors as err:
                raise HistoryError(f"{self.name}: not a usable history database: {err}") from None

    def _ensure_schema(self, session: _Session) -> None:
        with session.write(lock=False):
            if self.postgresql:
                session.run("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    session.run(statement)
            row = session.rows("SELECT value FROM meta WHERE key = 'schema'")
            version = int(row[0][0]) if row else None
            if version is None:
                session.run(
                    "INSERT INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
                )
                return
            if version > SCHEMA_VERSION or (
                version < SCHEMA_VERSION and version not in _MIGRATIONS
            ):
                raise HistoryError(
                    f"{self.name}: history schema {version},"
                    f" this flagci reads schema {SCHEMA_VERSION}"
                )
            for step in range(version, SCHEMA_VERSION):
                for statement in _MIGRATIONS[step]:
                    session.run(statement)
            session.run("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION),))

    # ----------------------------------------------------------------------------------
    # Writing

    def ingest(
        self, run_dir: Path, *, max_junit_bytes: int = reader.MAX_JUNIT_BYTES
    ) -> IngestResult:
        """Store one run folder; a run already stored with equal contents is a no-op."""
        with self.session() as session:
            return self._ingest(session, run_dir, max_junit_bytes)

    def ingest_many(self, run_dirs: Iterable[Path]) -> list[IngestResult]:
        """Store several run folders over one connection, each in its own transaction.

        A refused run does not stop the others: they are stored, then one ReportError names
        every run that was refused.
        """
        results: list[IngestResult] = []
        refused: list[str] = []
        with self.session() as session:
            for run_dir in run_dirs:
                try:
                    results.append(self._ingest(session, run_dir, reader.MAX_JUNIT_BYTES))
                except ReportError as err:
                    refused.append(str(err))
        if refused:
            stored = f"{len(results)} runs stored; " if results else ""
            raise ReportError(f"{stored}{len(refused)} refused:\n" + "\n".join(refused))
        return results

    def run_ids(self) -> set[str]:
        with self.session() as session:
            return {row[0] for row in session.rows("SELECT run_id FROM runs")}

    def backfill(self, run_dirs: Iterable[Path]) -> tuple[list[IngestResult], list[str]]:
        """Store the run folders whose run the history lacks; return what was stored and
        the run ids already there (known from run.json alone, their JUnit never read).

        The same run downloaded twice (two artifacts of one CI run) is stored once.
        """
        stored = self.run_ids()
        missing: dict[str, Path] = {}
        present: list[str] = []
        for run_dir in run_dirs:
            record, _ = reader.read_record(run_dir)
            if record.run_id in stored:
                present.append(record.run_id)
            else:
                missing.setdefault(record.run_id, run_dir)
        return (self.ingest_many(missing.values()) if missing else []), sorted(set(present))

    def add(self, run: reader.RunData) -> IngestResult:
        """Store a run just finished (``ci.run.record.Run.finish``): its record and
        testcases as the run read them; a run already stored with equal contents is a no-op."""
        with self.session() as session:
            return self._store(session, run.folder, run.record, run.digest, run.cases)

    def _ingest(self, session: _Session, run_dir: Path, max_junit_bytes: int) -> IngestResult:
        record, run_bytes = reader.read_record(run_dir)
        merged = run_dir / "merged.xml"
        digest = reader.digest(run_bytes, merged, max_bytes=max_junit_bytes)
        cases = reader.iter_cases(merged, tuple(record.lanes), max_bytes=max_junit_bytes)
        return self._store(session, run_dir, record, digest, cases)

    def _store(
        self,
        session: _Session,
        run_dir: Path,
        record: RunRecord,
        digest: str,
        cases: Iterable[CaseResult],
    ) -> IngestResult:
        lanes = tuple(record.lanes)
        try:
            with session.write():
                row = session.rows(
                    "SELECT digest, run_dir FROM runs WHERE run_id = ?", (record.run_id,)
                )
                if row:
                    if row[0][0] != digest:
                        raise HistoryError(
                            f"{self.name}: run '{record.run_id}' is already stored from"
                            f" {row[0][1]} with other contents; refusing to mix it with {run_dir}"
                        )
                    count = session.rows(
                        "SELECT count(*) FROM results WHERE run_id = ?", (record.run_id,)
                    )[0][0]
                    return IngestResult(record.run_id, int(count), lanes, True)
                self._insert_run(session, record, run_dir, digest)
                count, notes = self._insert_cases(session, record.run_id, run_dir, cases)
        except self.dialect.errors as err:
            raise HistoryError(
                f"{self.name}: storing run '{record.run_id}' failed: {err}"
            ) from None
        return IngestResult(record.run_id, count, lanes, False, tuple(notes))

    def _insert_run(self, session: _Session, run: RunRecord, run_dir: Path, digest: str) -> None:
        session.run(
            "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run.run_id,
                _utc(run.started),
                _utc(run.finished),
                run.kind,
                run.status,
                json.dumps(list(run.nodes)),
                self._stored_run_dir(run_dir),
                digest,
                _utc(datetime.now(UTC)),
                run.artifacts_url,
            ),
        )
        session.many(
            "INSERT INTO run_lanes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                _lane_row(LaneRun.of(run.run_id, name, lane), lane)
                for name, lane in run.lanes.items()
            ],
        )

    def _insert_cases(
        self, session: _Session, run_id: str, run_dir: Path, cases: Iterable[CaseResult]
    ) -> tuple[int, list[str]]:
        """Insert in batches; a testcase written twice is folded (the stored one read back)."""
        pending: dict[tuple[str, str, str], CaseResult] = {}
        flushed: set[tuple[str, str, str]] = set()
        noted = False
        for case in chain(cases, [None]):  # None: the end, where the last batch goes in
            if case is not None:
                noted = noted or bool(case.notes)
                key = case.key
                if key in pending:
                    pending[key] = reader.fold_duplicate(pending[key], case)
                elif key in flushed:
                    first = self._stored_case(session, run_id, key)
                    self._delete_case(session, run_id, key)
                    flushed.discard(key)
                    pending[key] = reader.fold_duplicate(first, case)
                else:
                    pending[key] = case
                if len(pending) < BATCH:
                    continue
            self._insert_batch(session, run_id, run_dir, pending.values())
            flushed.update(pending)
            pending.clear()
        notes = (
            [
                f"{test}: {notes}"
                for test, notes in session.rows(
                    "SELECT test, notes FROM results WHERE run_id = ? AND notes != ''"
                    " ORDER BY test",
                    (run_id,),
                )
            ]
            if noted
            else []
        )
        return len(flushed), notes

    def _insert_batch(
        self, session: _Session, run_id: str, run_dir: Path, cases: Iterable[CaseResult]
    ) -> None:
        batch = list(cases)
        marks = ", ".join("?" * (len(_RESULT_FIELDS) + 1))
        session.many(
            f"INSERT INTO results (run_id, {', '.join(_RESULT_FIELDS)}) VALUES ({marks})",
            [(run_id, *(getattr(c, f) for f in _RESULT_FIELDS)) for c in batch],
        )
        session.many(
            "INSERT INTO perf VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (run_id, c.lane, c.node, c.test, *(getattr(c, f) for f in _PERF_FIELDS))
                for c in batch
                if c.perf_ms is not None
            ],
        )
        session.many(
            "INSERT INTO artifact_files VALUES (?, ?, ?, ?, ?)",
            [
                (run_id, c.lane, c.node, c.test, path)
                for c in batch
                for path in reader.artifact_files(run_dir, c)
            ],
        )

    def _stored_case(self, session: _Session, run_id: str, key: tuple[str, str, str]) -> CaseResult:
        where = "run_id = ? AND lane = ? AND node = ? AND test = ?"
        row = session.rows(
            f"SELECT {', '.join(_RESULT_FIELDS)} FROM results WHERE {where}", (run_id, *key)
        )[0]
        perf = session.rows(
            f"SELECT {', '.join(_PERF_FIELDS)} FROM perf WHERE {where}", (run_id, *key)
        )
        values = dict(zip(_RESULT_FIELDS, row, strict=True))
        values.update(zip(_PERF_FIELDS, perf[0] if perf else ("", None, None, None), strict=True))
        return CaseResult(**values)

    def _delete_case(self, session: _Session, run_id: str, key: tuple[str, str, str]) -> None:
        for table in ("artifact_files", "perf", "results"):
            session.run(
                f"DELETE FROM {table} WHERE run_id = ? AND lane = ? AND node = ? AND test = ?",
                (run_id, *key),
            )

    def _stored_run_dir(self, run_dir: Path) -> str:
        """Relative to the SQLite file's folder when inside it, so both can move."""
        folder = run_dir.resolve()
        base = self.folder
        if base is not None and folder.is_relative_to(base):
            return folder.relative_to(base).as_posix()
        return str(folder)

    def resolve_run_dir(self, stored: str) -> Path:
        base = self.folder
        return base / stored if base is not None else Path(stored)

    # ----------------------------------------------------------------------------------
    # Reading

    def observations(self) -> Observations:
        """Everything the verdicts are computed from, read in one session."""
        with self.session(create=False) as session:
            return self._observations(session)

    def _observations(self, session: _Session) -> Observations:
        runs = tuple(
            RunInfo(run_id, _parse_time(started), self.resolve_run_dir(run_dir), kind, status, url)
            for run_id, started, run_dir, kind, status, url in session.rows(
                "SELECT run_id, started, run_dir, kind, status, artifacts_url FROM runs"
                " ORDER BY started, run_id"
            )
        )
        lane_runs = tuple(
            LaneRun(*row)
            for row in session.rows(
                "SELECT run_id, lane, vendor, family, baseline, compiler_package,"
                " compiler_version, pins_digest FROM run_lanes"
            )
        )
        results = tuple(
            ResultRow(*row)
            for row in session.rows("SELECT run_id, lane, node, test, outcome FROM results")
        )
        perf = tuple(
            (run_id, lane, test, gpu, float(ms))
            for run_id, lane, test, gpu, ms in session.rows(
                "SELECT run_id, lane, test, gpu, perf_ms FROM perf"
            )
        )
        failures = self._latest_failures(session, runs, lane_runs)
        return Observations(runs, lane_runs, results, perf, failures)

    def _latest_failures(
        self, session: _Session, runs: tuple[RunInfo, ...], lane_runs: tuple[LaneRun, ...]
    ) -> dict[tuple[str, str], FailureRecord]:
        by_id = {run.run_id: run for run in runs}
        failures: dict[tuple[str, str], FailureRecord] = {}
        for lane, run_id in latest_runs(runs, lane_runs).items():
            files: dict[tuple[str, str], list[str]] = {}
            for node, test, path in session.rows(
                "SELECT node, test, path FROM artifact_files WHERE run_id = ? AND lane = ?"
                " ORDER BY path",
                (run_id, lane),
            ):
                files.setdefault((node, test), []).append(path)
            for (
                node,
                test,
                outcome,
                message,
                details,
                signature,
                kind,
                triage,
                artifacts,
            ) in session.rows(
                "SELECT node, test, outcome, message, details, signature, failure_kind,"
                " triage, artifacts FROM results WHERE run_id = ? AND lane = ?"
                " AND outcome IN ('failed', 'error') ORDER BY node",
                (run_id, lane),
            ):
                if (lane, test) in failures:
                    continue
                failures[(lane, test)] = FailureRecord(
                    node=node,
                    outcome=outcome,
                    message=message,
                    details=details,
                    signature=signature,
                    failure_kind=kind,
                    triage=triage,
                    artifacts=artifacts,
                    artifact_files=tuple(files.get((node, test), ())),
                    run_dir=by_id[run_id].run_dir,
                    artifacts_url=by_id[run_id].artifacts_url,
                )
        return failures

    def metrics(self, lane: str, run_ids: Sequence[str]) -> list[MetricRow]:
        """The compile time of each kernel test of ``lane`` in ``run_ids`` that recorded one."""
        if not run_ids:
            return []
        marks = ",".join("?" * len(run_ids))
        with self.session(create=False) as session:
            return [
                MetricRow(run_id, lane, kernel, config, target, float(seconds))
                for run_id, lane, kernel, config, target, seconds in session.rows(
                    "SELECT run_id, lane, kernel, config, target, compile_seconds"
                    f" FROM results WHERE lane = ? AND kernel != '' AND run_id IN ({marks})"
                    " AND compile_seconds IS NOT NULL",
                    (lane, *run_ids),
                )
            ]

    def perf_records(self, run_ids: Sequence[str] | None = None) -> list[PerfRecord]:
        """Every perf time with its test's kernel and config: of ``run_ids``, or of all runs."""
        where = ""
        params: tuple[str, ...] = ()
        if run_ids is not None:
            if not run_ids:
                return []
            where, params = f" WHERE p.run_id IN ({','.join('?' * len(run_ids))})", tuple(run_ids)
        with self.session(create=False) as session:
            return [
                PerfRecord(run_id, lane, test, gpu, kernel, config, float(ms))
                for run_id, lane, test, gpu, kernel, config, ms in session.rows(
                    "SELECT p.run_id, p.lane, p.test, p.gpu, r.kernel, r.config, p.perf_ms"
                    " FROM perf p JOIN results r ON r.run_id = p.run_id AND r.lane = p.lane"
                    f" AND r.node = p.node AND r.test = p.test{where}",
                    params,
                )
            ]

    def lane_seconds(self, run_ids: Sequence[str]) -> dict[tuple[str, str], float]:
        """The summed test time of each (run, lane) of ``run_ids`` that recorded times."""
        if not run_ids:
            return {}
        marks = ",".join("?" * len(run_ids))
        with self.session(create=False) as session:
            return {
                (run_id, lane): float(seconds)
                for run_id, lane, seconds in session.rows(
                    "SELECT run_id, lane, SUM(duration) FROM results"
                    f" WHERE run_id IN ({marks}) AND duration IS NOT NULL GROUP BY run_id, lane",
                    tuple(run_ids),
                )
            }

    def evaluate(self, ledger: Ledger) -> History:
        return evaluate(self.observations(), ledger)


def _redact(url: str) -> str:
    scheme, _, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not at:
        return url
    user = credentials.partition(":")[0]
    return f"{scheme}://{user}@{host}"


def _utc(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# The short forms the command line and the run use.


def ingest_run(
    target: str | Path, run_dir: Path, *, max_junit_bytes: int = reader.MAX_JUNIT_BYTES
) -> IngestResult:
    return Store(target).ingest(run_dir, max_junit_bytes=max_junit_bytes)


def ingest_runs(target: str | Path, run_dirs: Iterable[Path]) -> list[IngestResult]:
    return Store(target).ingest_many(run_dirs)
