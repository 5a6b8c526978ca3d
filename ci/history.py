"""The run history: every run's merged JUnit in one SQLite file, one transaction per run.

A run folder (``results/<run-id>/``) is read completely and checked before the database is
touched; the run is then stored in a single ``BEGIN IMMEDIATE`` transaction, so a reader or
a second ingesting process sees the whole run or none of it. Ingesting the same run again
is a no-op; ingesting different contents under a run id already stored is refused.

The XML is untrusted (it comes back from vendor machines): it is size-capped, refused if it
declares a DTD or entities (defusedxml's policy: no entity expansion, no external
references, no network), then parsed by the C element tree; junitparser checks the
document's shape. Testcases are read straight from the element tree: junitparser's
per-element wrappers cost more than everything else together (benchmarks/bench_history.py).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Literal, TypeVar
from xml.etree import ElementTree
from xml.etree.ElementTree import Element, ParseError
from xml.parsers import expat
from xml.parsers.expat import ExpatError

from defusedxml.common import (
    DefusedXmlException,
    DTDForbidden,
    EntitiesForbidden,
    ExternalReferenceForbidden,
)
from junitparser import Error, Failure, JUnitXml, JUnitXmlError, Skipped
from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError

from ci.errors import HistoryError, ReportError

DEFAULT_DB = Path("results/history.sqlite")
SCHEMA_VERSION = 1
MAX_JUNIT_BYTES = 256 * 1024 * 1024
MAX_RUN_JSON_BYTES = 4 * 1024 * 1024
MAX_TEXT_CHARS = 64 * 1024
MAX_ARTIFACT_FILES = 200
BUSY_TIMEOUT_S = 120.0

RunId = Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]
Outcome = Literal["passed", "failed", "error", "skipped"]

_OUTCOMES: dict[str, Outcome] = {
    Failure._tag: "failed",
    Error._tag: "error",
    Skipped._tag: "skipped",
}


class _Record(BaseModel):
    # run.json is written by the run modules; history reads only the keys it needs.
    model_config = ConfigDict(extra="ignore", frozen=True)


class CompilerRecord(_Record):
    package: StrictStr
    version: StrictStr
    triton: StrictStr = ""


class LaneRecord(_Record):
    vendor: StrictStr
    family: StrictStr = ""
    baseline: StrictStr | None = None
    compiler: CompilerRecord
    pins: dict[StrictStr, StrictStr] = {}

    @property
    def pins_digest(self) -> str:
        canonical = json.dumps(sorted(self.pins.items()), separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]


class RunRecord(_Record):
    run_id: RunId
    started: datetime
    finished: datetime
    kind: StrictStr = "local"
    lanes: Annotated[dict[StrictStr, LaneRecord], Field(min_length=1)]
    nodes: tuple[StrictStr, ...] = ()
    status: StrictStr = ""


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One testcase of one (lane, node) as stored in the history."""

    lane: str
    node: str
    test: str
    outcome: Outcome
    message: str
    details: str
    signature: str
    failure_kind: str
    kernel: str
    config: str
    target: str
    compile_seconds: float | None
    shared_bytes: int | None
    registers: int | None
    spills: int | None
    artifacts: str
    duration: float | None
    # Performance smoke (ci/smoke/perf.py): the GPU model and the median time it measured.
    gpu: str = ""
    perf_ms: float | None = None
    pct_of_ceiling: float | None = None
    ratio_to_torch: float | None = None


@dataclass(frozen=True)
class RunContents:
    """A run folder read and checked completely, ready to be stored."""

    run: RunRecord
    run_dir: Path
    results: tuple[CaseResult, ...]
    artifact_files: tuple[tuple[str, str, str, str], ...]  # lane, node, test, path
    digest: str


@dataclass(frozen=True)
class IngestResult:
    run_id: str
    testcases: int
    lanes: tuple[str, ...]
    already_present: bool


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
    ingested TEXT NOT NULL
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
    kernel TEXT NOT NULL,
    config TEXT NOT NULL,
    target TEXT NOT NULL,
    compile_seconds REAL,
    shared_bytes INTEGER,
    registers INTEGER,
    spills INTEGER,
    artifacts TEXT NOT NULL,
    duration REAL,
    PRIMARY KEY (run_id, lane, node, test)
);
CREATE TABLE IF NOT EXISTS perf (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    lane TEXT NOT NULL,
    node TEXT NOT NULL,
    test TEXT NOT NULL,
    gpu TEXT NOT NULL,
    ms REAL NOT NULL,
    pct_of_ceiling REAL,
    ratio_to_torch REAL,
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


# --------------------------------------------------------------------------------------
# Reading a run folder


def read_run(run_dir: Path, *, max_junit_bytes: int = MAX_JUNIT_BYTES) -> RunContents:
    """Read ``run.json`` and ``merged.xml`` of a run folder; raise ReportError naming the file."""
    run_json = run_dir / "run.json"
    merged = run_dir / "merged.xml"
    run_bytes = _read_capped(run_json, MAX_RUN_JSON_BYTES)
    try:
        run = RunRecord.model_validate_json(run_bytes)
    except ValidationError as err:
        problems = "; ".join(
            f"key '{'.'.join(str(p) for p in e['loc']) or '(top level)'}': {e['msg']}"
            for e in err.errors()
        )
        raise ReportError(f"{run_json}: {problems}") from None
    junit_bytes = _read_capped(merged, max_junit_bytes)
    results = parse_junit(junit_bytes, source=merged, run=run)
    files = tuple(_artifact_files(run_dir, results))
    digest = hashlib.sha256(run_bytes + b"\0" + junit_bytes).hexdigest()
    return RunContents(run, run_dir, results, files, digest)


def _read_capped(path: Path, limit: int) -> bytes:
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > limit:
                raise ReportError(f"{path}: {size} bytes, more than the limit of {limit} bytes")
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise ReportError(f"{path}: not found") from None
    except IsADirectoryError:
        raise ReportError(f"{path}: is a directory, expected a file") from None
    if len(data) > limit:  # the file grew while being read
        raise ReportError(f"{path}: more than the limit of {limit} bytes")
    return data


def parse_junit(data: bytes, *, source: Path, run: RunRecord) -> tuple[CaseResult, ...]:
    """Parse a merged JUnit document safely into case results of ``run``'s lanes."""
    root = _safe_root(data, source)
    try:
        # junitparser annotates fromroot's argument as its own wrapper; it takes etree's root.
        JUnitXml.fromroot(root)  # type: ignore[arg-type]
    except JUnitXmlError:
        raise ReportError(
            f"{source}: root element is <{root.tag}>, expected <testsuites> or <testsuite>"
        ) from None
    results: list[CaseResult] = []
    seen: set[tuple[str, str, str]] = set()
    for case in root.iter("testcase"):
        result = _case_result(case, source, run)
        key = (result.lane, result.node, result.test)
        if key in seen:
            raise ReportError(
                f"{source}: testcase '{result.test}' of lane '{result.lane}'"
                f" on node '{result.node}' appears twice"
            )
        seen.add(key)
        results.append(result)
    return tuple(results)


def _safe_root(data: bytes, source: Path) -> Element:
    if not data.strip():
        raise ReportError(f"{source}: empty file, expected JUnit XML")
    try:
        _refuse_declarations(data)
        # No DOCTYPE got through, so there is no entity to expand and nothing to fetch.
        return ElementTree.fromstring(data)
    except DefusedXmlException as err:
        raise ReportError(f"{source}: refused hostile XML ({type(err).__name__}: {err})") from None
    except (ExpatError, ParseError) as err:
        raise ReportError(f"{source}: not well-formed XML: {err}") from None
    except (LookupError, ValueError) as err:
        raise ReportError(f"{source}: unreadable XML: {err}") from None


def _refuse_declarations(data: bytes) -> None:
    """A first pass in expat with only declaration handlers: any DTD or entity is refused.

    This is defusedxml's policy (``forbid_dtd``, ``forbid_entities``, ``forbid_external``)
    applied without building a tree in Python, which costs more than the whole ingest.
    """

    def doctype(name: str, sysid: str | None, pubid: str | None, _subset: bool) -> None:
        raise DTDForbidden(name, sysid, pubid)

    def entity(
        name: str,
        _is_parameter: bool,
        value: str | None,
        base: str | None,
        sysid: str | None,
        pubid: str | None,
        notation: str | None,
    ) -> None:
        raise EntitiesForbidden(name, value, base, sysid, pubid, notation)

    def external(context: str, base: str | None, sysid: str | None, pubid: str | None) -> int:
        raise ExternalReferenceForbidden(context, base, sysid, pubid)

    parser = expat.ParserCreate()
    parser.StartDoctypeDeclHandler = doctype
    parser.EntityDeclHandler = entity
    parser.ExternalEntityRefHandler = external
    parser.Parse(data, True)


def _case_result(case: Element, source: Path, run: RunRecord) -> CaseResult:
    name = case.get("name") or ""
    classname = case.get("classname") or ""
    if not name:
        raise ReportError(f"{source}: a testcase has no 'name' attribute")
    test = name if "::" in name or not classname else f"{classname}::{name}"
    props: dict[str, str] = {}
    outcome: Outcome = "passed"
    message = details = ""
    for child in case:
        tag = child.tag
        if tag == "properties":
            for prop in child:
                props[prop.get("name", "")] = prop.get("value", "")
        elif tag in _OUTCOMES and outcome == "passed":
            outcome = _OUTCOMES[tag]
            message = child.get("message") or ""
            details = child.text or ""
    lane = props.get("lane", "")
    if lane not in run.lanes:
        known = ", ".join(sorted(run.lanes))
        what = f"lane '{lane}' is not in run.json (lanes: {known})" if lane else "no 'lane'"
        raise ReportError(f"{source}: testcase '{test}': property {what}")
    get = props.get
    return CaseResult(
        lane,
        get("node", ""),
        test,
        outcome,
        message[:MAX_TEXT_CHARS],
        details[:MAX_TEXT_CHARS],
        get("signature", ""),
        get("failure_kind", ""),
        get("kernel", ""),
        get("config", ""),
        get("target", ""),
        _number(float, props, "compile_seconds", source, test),
        _number(int, props, "shared_bytes", source, test),
        _number(int, props, "registers", source, test),
        _number(int, props, "spills", source, test),
        get("artifacts", ""),
        _number(float, case.attrib, "time", source, test),
        get("gpu", ""),
        _time_ms(props, source, test),
        _number(float, props, "pct_of_ceiling", source, test),
        _number(float, props, "ratio_to_torch", source, test),
    )


N = TypeVar("N", int, float)


def _number(
    kind: type[N], values: Mapping[str, str], key: str, source: Path, test: str
) -> N | None:
    raw = values.get(key)
    if not raw:
        return None
    try:
        return kind(raw)
    except ValueError:
        raise ReportError(
            f"{source}: testcase '{test}': '{key}' is not a number: {raw[:80]!r}"
        ) from None


def _time_ms(values: Mapping[str, str], source: Path, test: str) -> float | None:
    """``perf_ms``: a time the perf verdict compares, so only a finite positive number."""
    ms = _number(float, values, "perf_ms", source, test)
    if ms is not None and not (math.isfinite(ms) and ms > 0):
        raise ReportError(f"{source}: testcase '{test}': 'perf_ms' is not a time: {ms!r}")
    return ms


def _artifact_files(
    run_dir: Path, results: tuple[CaseResult, ...]
) -> Iterator[tuple[str, str, str, str]]:
    """Files under each failed test's artifact folder, relative to the run folder.

    Only folders inside the run folder are listed; links are not followed.
    """
    root = run_dir.resolve()
    for result in results:
        if result.outcome not in ("failed", "error") or not result.artifacts:
            continue
        folder = (root / result.artifacts).resolve()
        if not folder.is_relative_to(root) or not folder.is_dir():
            continue
        count = 0
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames.sort()
            for filename in sorted(filenames):
                path = Path(dirpath) / filename
                if path.is_symlink() or count >= MAX_ARTIFACT_FILES:
                    continue
                count += 1
                yield (result.lane, result.node, result.test, path.relative_to(root).as_posix())


# --------------------------------------------------------------------------------------
# The database


@contextmanager
def connect(db: Path, *, create: bool = True) -> Iterator[sqlite3.Connection]:
    """Open the history database (WAL, busy timeout), creating its schema if needed."""
    if not create and not db.is_file():
        raise HistoryError(f"{db}: no history database (ingest a run first)")
    db.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(db, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        _set_up(connection, db)
        yield connection
    finally:
        connection.close()


def _set_up(connection: sqlite3.Connection, db: Path) -> None:
    # Switching a new database to WAL, or upgrading to a write lock, can answer "database is
    # locked" at once, without waiting on the busy timeout, while another process creates or
    # writes the same file: retry those within the same timeout.
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute("PRAGMA foreign_keys = ON")
            _ensure_schema(connection, db)
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() > deadline:
                raise HistoryError(f"{db}: not a usable history database: {err}") from None
            time.sleep(0.05)
        except sqlite3.DatabaseError as err:
            raise HistoryError(f"{db}: not a usable history database: {err}") from None


def _ensure_schema(connection: sqlite3.Connection, db: Path) -> None:
    with transaction(connection):
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                connection.execute(statement)
        row = connection.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None:
            connection.execute(
                "INSERT INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
            )
        elif row[0] != str(SCHEMA_VERSION):
            raise HistoryError(
                f"{db}: history schema {row[0]}, this flagci reads schema {SCHEMA_VERSION}"
            )


@contextmanager
def transaction(connection: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``; anything raised inside rolls everything back."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def ingest_run(db: Path, run_dir: Path, *, max_junit_bytes: int = MAX_JUNIT_BYTES) -> IngestResult:
    """Store one run folder in the history; a run already stored with equal contents is a no-op."""
    contents = read_run(run_dir, max_junit_bytes=max_junit_bytes)
    with connect(db) as connection:
        return store_run(connection, contents, db)


def ingest_runs(db: Path, run_dirs: Iterable[Path]) -> list[IngestResult]:
    """Store several run folders over one connection, each in its own transaction.

    A refused run does not stop the others: they are stored, then one ReportError names
    every run that was refused.
    """
    results: list[IngestResult] = []
    refused: list[str] = []
    with connect(db) as connection:
        for run_dir in run_dirs:
            try:
                contents = read_run(run_dir)
            except ReportError as err:
                refused.append(str(err))
                continue
            results.append(store_run(connection, contents, db))
    if refused:
        stored = f"{len(results)} runs stored; " if results else ""
        raise ReportError(f"{stored}{len(refused)} refused:\n" + "\n".join(refused))
    return results


def store_run(connection: sqlite3.Connection, contents: RunContents, db: Path) -> IngestResult:
    run = contents.run
    lanes = tuple(run.lanes)
    try:
        with transaction(connection):
            row = connection.execute(
                "SELECT digest, run_dir FROM runs WHERE run_id = ?", (run.run_id,)
            ).fetchone()
            if row is not None:
                if row[0] != contents.digest:
                    raise HistoryError(
                        f"{db}: run '{run.run_id}' is already stored from {row[1]} with other"
                        f" contents; refusing to mix it with {contents.run_dir}"
                    )
                return IngestResult(run.run_id, len(contents.results), lanes, True)
            _insert(connection, contents, _stored_run_dir(db, contents.run_dir))
    except sqlite3.Error as err:
        raise HistoryError(f"{db}: storing run '{run.run_id}' failed: {err}") from None
    return IngestResult(run.run_id, len(contents.results), lanes, False)


def _insert(connection: sqlite3.Connection, contents: RunContents, run_dir: str) -> None:
    run = contents.run
    connection.execute(
        "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            run.run_id,
            _utc(run.started),
            _utc(run.finished),
            run.kind,
            run.status,
            json.dumps(list(run.nodes)),
            run_dir,
            contents.digest,
            _utc(datetime.now(UTC)),
        ),
    )
    connection.executemany(
        "INSERT INTO run_lanes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                run.run_id,
                name,
                lane.vendor,
                lane.family or lane.vendor,
                lane.baseline,
                lane.compiler.package,
                lane.compiler.version,
                lane.compiler.triton,
                json.dumps(lane.pins, sort_keys=True),
                lane.pins_digest,
            )
            for name, lane in run.lanes.items()
        ],
    )
    connection.executemany(
        "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                run.run_id,
                r.lane,
                r.node,
                r.test,
                r.outcome,
                r.message,
                r.details,
                r.signature,
                r.failure_kind,
                r.kernel,
                r.config,
                r.target,
                r.compile_seconds,
                r.shared_bytes,
                r.registers,
                r.spills,
                r.artifacts,
                r.duration,
            )
            for r in contents.results
        ],
    )
    connection.executemany(
        "INSERT INTO perf VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                run.run_id,
                r.lane,
                r.node,
                r.test,
                r.gpu,
                r.perf_ms,
                r.pct_of_ceiling,
                r.ratio_to_torch,
            )
            for r in contents.results
            if r.perf_ms is not None
        ],
    )
    connection.executemany(
        "INSERT INTO artifact_files VALUES (?, ?, ?, ?, ?)",
        [(run.run_id, *row) for row in contents.artifact_files],
    )


def _stored_run_dir(db: Path, run_dir: Path) -> str:
    """The run folder relative to the database's folder when inside it, so both can move."""
    base = db.resolve().parent
    folder = run_dir.resolve()
    return folder.relative_to(base).as_posix() if folder.is_relative_to(base) else str(folder)


def resolve_run_dir(db: Path, stored: str) -> Path:
    return db.resolve().parent / stored


def _utc(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def run_folders(results_dir: Path) -> list[Path]:
    """Every run folder (one holding ``run.json``) directly under ``results_dir``."""
    if not results_dir.is_dir():
        raise ReportError(f"{results_dir}: not a directory")
    return sorted(p.parent for p in results_dir.glob("*/run.json") if p.is_file())
