"""The safe reader of a run folder: ``run.json`` and JUnit, as written by flagci or any CI tool.

Both the run's finish (``ci.runrecord``) and the history's ingest read testcases here, into
one type, ``CaseResult``.

The XML is untrusted (it comes back from vendor machines, or from another tool): it is
size-capped and streamed in chunks through two expat parsers fed the same bytes, the first
with only declaration handlers, which refuses any DTD or entity before the second sees the
chunk that completes it (defusedxml's policy: no entity expansion, no external references,
no network); the second is ElementTree's pull parser, whose testcase and testsuite elements
are dropped as soon as they are read, so memory stays bounded by one testcase, not the file.

What CI tools write is taken as written, with a note where it had to be interpreted:

- a testcase without a ``lane`` property takes the ``lane`` property of its nearest suite,
  else the run's only lane; only when neither decides is the file refused, naming it;
- the worst result element wins (error > failure > skipped > passed): pytest writes a
  teardown error after a ``<skipped/>``;
- a number that does not parse (``time="1,5"``) is stored as null, with a note;
- a testcase without a name is named after its position, with a note; names and texts are
  capped.

Duplicates are the reader's caller's to fold (``fold_duplicate``), since only the caller
keeps what it already read.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import IO, Annotated, Literal
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
from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError

from ci.errors import ReportError

MAX_JUNIT_BYTES = 256 * 1024 * 1024
MAX_RUN_JSON_BYTES = 4 * 1024 * 1024
MAX_TEXT_CHARS = 64 * 1024
MAX_NAME_CHARS = 2 * 1024
MAX_ARTIFACT_FILES = 200
CHUNK_BYTES = 1024 * 1024
DUPLICATE_NOTE = "written more than once; the worst outcome is kept"

RunId = Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]
Outcome = Literal["passed", "failed", "error", "skipped"]

# Worse outcomes rank higher; the worst result element of a testcase, and of a testcase
# written twice, is the one kept.
OUTCOME_RANK: dict[Outcome, int] = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
_RESULT_TAGS: dict[str, Outcome] = {"failure": "failed", "error": "error", "skipped": "skipped"}


class _Record(BaseModel):
    # run.json is written by the run modules; the reader takes only the keys it needs.
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
    """One testcase of one (lane, node): what the run report shows and the history stores."""

    lane: str
    node: str
    test: str
    outcome: Outcome
    message: str = ""
    details: str = ""
    signature: str = ""
    failure_kind: str = ""
    kernel: str = ""
    config: str = ""
    target: str = ""
    compile_seconds: float | None = None
    shared_bytes: int | None = None
    registers: int | None = None
    spills: int | None = None
    artifacts: str = ""
    duration: float | None = None
    # Performance smoke (ci/smoke/perf.py): the GPU model and the median time it measured.
    gpu: str = ""
    perf_ms: float | None = None
    pct_of_ceiling: float | None = None
    ratio_to_torch: float | None = None
    # How the reader interpreted the testcase (a bad number, a missing name, a duplicate).
    notes: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.lane, self.node, self.test)

    @property
    def failed(self) -> bool:
        return self.outcome in ("failed", "error")


def fold_duplicate(first: CaseResult, again: CaseResult) -> CaseResult:
    """One testcase written twice: the worse of the two, with a note saying so."""
    worse = again if OUTCOME_RANK[again.outcome] > OUTCOME_RANK[first.outcome] else first
    if DUPLICATE_NOTE in worse.notes:
        return worse
    return replace(worse, notes="; ".join(n for n in (worse.notes, DUPLICATE_NOTE) if n))


# --------------------------------------------------------------------------------------
# run.json


def read_record(run_dir: Path) -> tuple[RunRecord, bytes]:
    """``run.json`` validated, and its bytes; ReportError names the file and the key."""
    path = run_dir / "run.json"
    with _open_capped(path, MAX_RUN_JSON_BYTES) as handle:
        data = handle.read(MAX_RUN_JSON_BYTES + 1)
    if len(data) > MAX_RUN_JSON_BYTES:
        raise ReportError(f"{path}: more than the limit of {MAX_RUN_JSON_BYTES} bytes")
    try:
        return RunRecord.model_validate_json(data), data
    except ValidationError as err:
        problems = "; ".join(
            f"key '{'.'.join(str(p) for p in e['loc']) or '(top level)'}': {e['msg']}"
            for e in err.errors()
        )
        raise ReportError(f"{path}: {problems}") from None


def digest(run_json: bytes, junit: Path, *, max_bytes: int = MAX_JUNIT_BYTES) -> str:
    """The identity of a run's contents: run.json and its JUnit, hashed in chunks."""
    hasher = hashlib.sha256(run_json + b"\0")
    with _open_capped(junit, max_bytes) as handle:
        while chunk := handle.read(CHUNK_BYTES):
            hasher.update(chunk)
    return hasher.hexdigest()


def run_folders(results_dir: Path) -> list[Path]:
    """Every run folder (one holding ``run.json``) directly under ``results_dir``."""
    if not results_dir.is_dir():
        raise ReportError(f"{results_dir}: not a directory")
    return sorted(p.parent for p in results_dir.glob("*/run.json") if p.is_file())


# --------------------------------------------------------------------------------------
# JUnit


def read_cases(path: Path, lanes: Collection[str]) -> list[CaseResult]:
    """Every testcase of a JUnit file, each (lane, node, test) once (duplicates folded)."""
    found: dict[tuple[str, str, str], CaseResult] = {}
    for case in iter_cases(path, lanes):
        first = found.get(case.key)
        found[case.key] = case if first is None else fold_duplicate(first, case)
    return list(found.values())


def iter_cases(
    path: Path, lanes: Collection[str], *, max_bytes: int = MAX_JUNIT_BYTES
) -> Iterator[CaseResult]:
    """Stream the testcases of a JUnit file of a run whose lanes are ``lanes``.

    Raises ReportError naming the file on hostile, malformed or oversized input; a caller
    storing what it reads must store nothing of the file then.
    """
    reader = _JUnitReader(path, frozenset(lanes))
    with _open_capped(path, max_bytes) as handle:
        yield from reader.read(handle, max_bytes)


def _open_capped(path: Path, limit: int) -> IO[bytes]:
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise ReportError(f"{path}: not found") from None
    except IsADirectoryError:
        raise ReportError(f"{path}: is a directory, expected a file") from None
    size = os.fstat(handle.fileno()).st_size
    if size > limit:
        handle.close()
        raise ReportError(f"{path}: {size} bytes, more than the limit of {limit} bytes")
    return handle


def _declaration_guard() -> expat.XMLParserType:
    """An expat parser with only declaration handlers: any DTD or entity is refused."""

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
    return parser


class _JUnitReader:
    """One pass over one file: suite properties on a stack, testcases read as they end."""

    def __init__(self, path: Path, lanes: frozenset[str]) -> None:
        self.path = path
        self.lanes = lanes
        self.elements: list[Element] = []
        self.suites: list[dict[str, str]] = []  # properties of each open testsuite
        self.position = 0

    def read(self, handle: IO[bytes], limit: int) -> Iterator[CaseResult]:
        guard = _declaration_guard()
        parser: ElementTree.XMLPullParser[Element] = ElementTree.XMLPullParser(
            events=("start", "end")
        )
        total = 0
        content = False
        try:
            while chunk := handle.read(CHUNK_BYTES):
                total += len(chunk)
                if total > limit:  # the file grew while being read
                    raise ReportError(f"{self.path}: more than the limit of {limit} bytes")
                content = content or bool(chunk.strip(b" \t\r\n\0\xff\xfe"))
                guard.Parse(chunk, False)
                parser.feed(chunk)
                yield from self._events(parser)
            if not content:
                raise ReportError(f"{self.path}: empty file, expected JUnit XML")
            guard.Parse(b"", True)
            parser.close()
            yield from self._events(parser)
        except DefusedXmlException as err:
            raise ReportError(
                f"{self.path}: refused hostile XML ({type(err).__name__}: {err})"
            ) from None
        except (ExpatError, ParseError) as err:
            raise ReportError(f"{self.path}: not well-formed XML: {err}") from None
        except (LookupError, ValueError) as err:
            raise ReportError(f"{self.path}: unreadable XML: {err}") from None

    def _events(self, parser: ElementTree.XMLPullParser[Element]) -> Iterator[CaseResult]:
        for item in parser.read_events():
            # Only start and end events are asked for: (event, element) pairs.
            event, element = item[0], item[-1]
            if not isinstance(element, Element):
                continue
            if event == "start":
                self._start(element)
                continue
            self.elements.pop()
            tag = element.tag
            if tag == "testcase":
                self.position += 1
                yield self._case(element)
                self._drop(element)
            elif tag == "properties" and self.elements and self.elements[-1].tag == "testsuite":
                self.suites[-1].update(_properties(element))
            elif tag == "testsuite":
                self.suites.pop()
                self._drop(element)

    def _start(self, element: Element) -> None:
        if not self.elements and element.tag not in ("testsuites", "testsuite"):
            raise ReportError(
                f"{self.path}: root element is <{element.tag}>,"
                " expected <testsuites> or <testsuite>"
            )
        if element.tag == "testsuite":
            self.suites.append({})
        self.elements.append(element)

    def _drop(self, element: Element) -> None:
        """Forget an element read to its end, so the tree never holds more than one case."""
        element.clear()
        if self.elements and len(self.elements[-1]) and self.elements[-1][-1] is element:
            del self.elements[-1][-1]

    def _suite_property(self, key: str) -> str:
        for props in reversed(self.suites):
            if props.get(key):
                return props[key]
        return ""

    def _case(self, case: Element) -> CaseResult:
        notes: list[str] = []
        name = case.get("name") or ""
        classname = case.get("classname") or ""
        if not name:
            name = f"(testcase #{self.position} without a name)"
            notes.append("the testcase has no name")
        test = name if "::" in name or not classname else f"{classname}::{name}"
        props: dict[str, str] = {}
        for child in case.findall("properties"):
            props.update(_properties(child))
        outcome, message, details = outcome_of(case)
        lane = props.get("lane") or self._suite_property("lane") or self._only_lane(test)
        if lane not in self.lanes:
            known = ", ".join(sorted(self.lanes))
            raise ReportError(
                f"{self.path}: testcase '{test}': lane '{lane}' is not in run.json (lanes: {known})"
            )
        if test.startswith(f"{lane}."):  # ci.junit.merge's classname: <lane>.<module>
            test = test[len(lane) + 1 :]
        if len(test) > MAX_NAME_CHARS:
            notes.append(f"name cut to {MAX_NAME_CHARS} of {len(test)} characters")
            test = test[:MAX_NAME_CHARS]

        def number(
            kind: Callable[[str], float], values: Mapping[str, str], key: str
        ) -> float | None:
            raw = values.get(key)
            if not raw:
                return None
            try:
                value = kind(raw)
            except ValueError:
                notes.append(f"'{key}' is not a number: {raw[:80]!r}; stored as null")
                return None
            if not math.isfinite(value):
                notes.append(f"'{key}' is not finite: {raw[:80]!r}; stored as null")
                return None
            return value

        def integer(key: str) -> int | None:
            value = number(int, props, key)
            return None if value is None else int(value)

        perf_ms = number(float, props, "perf_ms")
        if perf_ms is not None and perf_ms <= 0:
            notes.append(f"'perf_ms' is not a time: {perf_ms!r}; stored as null")
            perf_ms = None
        get = props.get
        return CaseResult(
            lane=lane,
            node=get("node") or self._suite_property("node"),
            test=test,
            outcome=outcome,
            message=message[:MAX_TEXT_CHARS],
            details=details[:MAX_TEXT_CHARS],
            signature=get("signature", ""),
            failure_kind=get("failure_kind", ""),
            kernel=get("kernel", ""),
            config=get("config", ""),
            target=get("target", ""),
            compile_seconds=number(float, props, "compile_seconds"),
            shared_bytes=integer("shared_bytes"),
            registers=integer("registers"),
            spills=integer("spills"),
            artifacts=get("artifacts", ""),
            duration=number(float, case.attrib, "time"),
            gpu=get("gpu", ""),
            perf_ms=perf_ms,
            pct_of_ceiling=number(float, props, "pct_of_ceiling"),
            ratio_to_torch=number(float, props, "ratio_to_torch"),
            notes="; ".join(notes),
        )

    def _only_lane(self, test: str) -> str:
        if len(self.lanes) == 1:
            return next(iter(self.lanes))
        raise ReportError(
            f"{self.path}: testcase '{test}' has no 'lane' property, nor has its testsuite,"
            f" and the run has {len(self.lanes)} lanes ({', '.join(sorted(self.lanes))})"
        )


def outcome_of(case: Element) -> tuple[Outcome, str, str]:
    """A testcase element's outcome, message and text: its worst result element's."""
    outcome: Outcome = "passed"
    message = details = ""
    for child in case:
        found = _RESULT_TAGS.get(child.tag)
        if found is not None and OUTCOME_RANK[found] > OUTCOME_RANK[outcome]:
            outcome = found
            message = child.get("message") or ""
            details = child.text or ""
    return outcome, message, details


def _properties(element: Element) -> dict[str, str]:
    return {
        prop.get("name", ""): prop.get("value", prop.text or "")
        for prop in element
        if prop.tag == "property"
    }


def artifact_files(run_dir: Path, case: CaseResult) -> Iterator[str]:
    """The files of a failed test's artifact folder (none for a test that did not fail)."""
    if case.failed and case.artifacts:
        yield from files_under(run_dir, case.artifacts)


def files_under(run_dir: Path, relative: str) -> Iterator[str]:
    """Files under a folder of the run, relative to the run folder, at most
    MAX_ARTIFACT_FILES. Only a folder inside the run folder is listed; links are not followed.
    """
    root = run_dir.resolve()
    folder = (root / relative).resolve()
    if not folder.is_relative_to(root) or not folder.is_dir():
        return
    count = 0
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for filename in sorted(filenames):
            path = Path(dirpath) / filename
            if path.is_symlink() or count >= MAX_ARTIFACT_FILES:
                continue
            count += 1
            yield path.relative_to(root).as_posix()
