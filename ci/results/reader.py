"""The safe reader of a run folder: ``run.json`` and JUnit, as written by flagci or any CI tool.

Both the run's finish (``ci.run.record``) and the history's ingest read testcases here, into
one type, ``CaseResult``.

The XML is untrusted (it comes back from vendor machines, or from another tool): it is
size-capped and streamed in chunks through one expat parser whose declaration handlers
refuse any DTD or entity as soon as it is declared, before anything could expand it
(defusedxml's policy: no entity expansion, no external references, no network). No tree is
built: the parser's handlers keep the open suites' properties and the testcase being read,
with its texts capped as they arrive, so memory is bounded by one testcase, not the file.

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
import io
import json
import math
import os
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import IO, Annotated, Literal
from xml.etree.ElementTree import Element
from xml.parsers import expat
from xml.parsers.expat import ExpatError

from defusedxml.common import (
    DefusedXmlException,
    DTDForbidden,
    EntitiesForbidden,
    ExternalReferenceForbidden,
)
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictStr,
    ValidationError,
    field_serializer,
)

from ci.core.errors import ReportError
from ci.smoke.contract import properties

MAX_JUNIT_BYTES = 256 * 1024 * 1024
MAX_RUN_JSON_BYTES = 4 * 1024 * 1024
MAX_TEXT_CHARS = 64 * 1024
MAX_NAME_CHARS = 2 * 1024
MAX_ARTIFACT_FILES = 200
CHUNK_BYTES = 1024 * 1024
DUPLICATE_NOTE = "written more than once; the worst outcome is kept"

RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"  # also a folder name, a URL segment
RUN_ID_RE = re.compile(RUN_ID_PATTERN)
RunId = Annotated[StrictStr, Field(pattern=RUN_ID_PATTERN)]
Outcome = Literal["passed", "failed", "error", "skipped"]

# Worse outcomes rank higher; the worst result element of a testcase, and of a testcase
# written twice, is the one kept.
OUTCOME_RANK: dict[Outcome, int] = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
_RESULT_TAGS: dict[str, Outcome] = {"failure": "failed", "error": "error", "skipped": "skipped"}


class _Record(BaseModel):
    # run.json: one model, written by ci.run.record and read here; keys it does not name
    # (another tool's) are ignored.
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


ARTIFACTS_ANCHOR = "#artifacts"  # on a CI run's page: its list of artifacts


class CIRunRecord(_Record):
    """The GitHub Actions run that made a run folder: its artifacts hold the run's files
    (reproducers, bundles, IR), which the published site links to instead of copying."""

    # Strict shapes: the URL built from these goes into published pages.
    server_url: Annotated[StrictStr, Field(pattern=r"^https://[A-Za-z0-9.-]+(:[0-9]+)?$")]
    repository: Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")]
    run_id: Annotated[StrictStr, Field(pattern=r"^[0-9]{1,20}$")]

    @property
    def artifacts_url(self) -> str:
        """The run's page, at its list of artifacts."""
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}{ARTIFACTS_ANCHOR}"


class PartRecord(_Record):
    """One (node, lane) of a run: its folder under the run folder, and what kept its suite
    from running to its end ("" : nothing)."""

    node: StrictStr
    lane: StrictStr
    folder: StrictStr
    infrastructure_error: StrictStr = ""


class StepRecord(_Record):
    name: StrictStr
    seconds: float


class RunRecord(_Record):
    """``run.json``: written by ``ci.run.record`` (``to_json``) and read back here
    (``read_record``); other tools' records may leave out what has a default."""

    run_id: RunId
    kind: StrictStr = "local"
    started: datetime
    finished: datetime
    lanes: Annotated[dict[StrictStr, LaneRecord], Field(min_length=1)]
    nodes: tuple[StrictStr, ...] = ()
    parts: tuple[PartRecord, ...] = ()
    steps: tuple[StepRecord, ...] = ()
    status: StrictStr = ""
    ci_run: CIRunRecord | None = None

    @field_serializer("started", "finished")
    def _moment(self, moment: datetime) -> str:
        return moment.isoformat(timespec="seconds")

    @property
    def artifacts_url(self) -> str:
        """Where the run's files are kept, when not beside run.json ("": beside it)."""
        return self.ci_run.artifacts_url if self.ci_run else ""

    @property
    def infrastructure_errors(self) -> tuple[PartRecord, ...]:
        """The parts whose suite could not run to its end."""
        return tuple(p for p in self.parts if p.infrastructure_error)

    def to_json(self) -> str:
        """The text of ``run.json`` (``ci_run`` only when the run was made in Actions)."""
        data = self.model_dump(mode="json")
        if data["ci_run"] is None:
            del data["ci_run"]
        return json.dumps(data, indent=2)


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
    # The signature's summary (properties.TRIAGE): for the reader, never grouped by.
    triage: str = ""
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
    # Every property of the testcase as written, those above included (not stored).
    properties: Mapping[str, str] = field(default_factory=dict, compare=False)

    @property
    def name(self) -> str:
        """The test's own name, without its module."""
        return self.test.rpartition("::")[2]

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.lane, self.node, self.test)

    @property
    def failed(self) -> bool:
        return self.outcome in ("failed", "error")


def lane_classname(lane: str, node: str, module: str) -> str:
    """The classname ``ci.results.junit.merge`` writes: ``<lane>@<node>``, then the module.
    GitLab keys results by classname and name, Jenkins and GitHub's reporters by suite,
    classname and name: with the node in both, each (lane, node) keeps its own."""
    return f"{suite_name(lane, node)}.{module}" if module else suite_name(lane, node)


def suite_name(lane: str, node: str) -> str:
    """The name of a (node, lane) part's suite in ``merged.xml``."""
    return f"{lane}@{node}"


def module_of(classname: str, lane: str, node: str) -> str:
    """The module a classname names, without the ``<lane>@<node>`` ``lane_classname`` put
    first (or the bare lane, which merged files of runs before the node was there carry), so
    that one test has one id on every node."""
    for owner in (suite_name(lane, node), lane):
        if classname == owner:
            return ""
        if classname.startswith(f"{owner}."):
            return classname[len(owner) + 1 :]
    return classname


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


@dataclass(frozen=True)
class RunData:
    """One finished run: its folder, its record, its testcases (each once) and the identity
    of its contents (``digest``, as the history keys it). ``ci.run.record.Run.finish``
    returns it from what it wrote, so nothing downstream reads the folder again."""

    folder: Path
    record: RunRecord
    cases: tuple[CaseResult, ...]
    digest: str

    @property
    def failed(self) -> tuple[CaseResult, ...]:
        return tuple(c for c in self.cases if c.failed)


def bytes_digest(run_json: bytes, junit: bytes) -> str:
    """``digest`` of contents held in memory (a run just written)."""
    return hashlib.sha256(run_json + b"\0" + junit).hexdigest()


def run_folders(results_dir: Path, *, depth: int = 1) -> list[Path]:
    """Every run folder (one holding ``run.json``) at most ``depth`` levels under
    ``results_dir`` (downloaded CI artifacts nest them: ``<ci-run>/<artifact>/<run>``)."""
    if not results_dir.is_dir():
        raise ReportError(f"{results_dir}: not a directory")
    found = {
        path.parent
        for level in range(1, depth + 1)
        for path in results_dir.glob("/".join(["*"] * level) + "/run.json")
        if path.is_file() and not path.parent.is_symlink()
    }
    return sorted(found)


# --------------------------------------------------------------------------------------
# JUnit


def read_cases(path: Path, lanes: Collection[str]) -> list[CaseResult]:
    """Every testcase of a JUnit file, each (lane, node, test) once (duplicates folded)."""
    return _fold(iter_cases(path, lanes))


def parse_cases(path: Path, data: bytes, lanes: Collection[str]) -> list[CaseResult]:
    """``read_cases`` of the JUnit document ``data``, held in memory (``path`` names it)."""
    return _fold(_JUnitReader(path, frozenset(lanes)).read(io.BytesIO(data), len(data)))


def _fold(cases: Iterable[CaseResult]) -> list[CaseResult]:
    found: dict[tuple[str, str, str], CaseResult] = {}
    for case in cases:
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


def _refuse_declarations(parser: expat.XMLParserType) -> None:
    """defusedxml's policy on an expat parser: any DTD, entity or external reference raises."""

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

    parser.StartDoctypeDeclHandler = doctype
    parser.EntityDeclHandler = entity
    parser.ExternalEntityRefHandler = external


@dataclass
class _OpenCase:
    """A testcase being read: its attributes, properties and worst result so far."""

    attrib: dict[str, str]
    props: dict[str, str] = field(default_factory=dict)
    outcome: Outcome = "passed"
    message: str = ""
    details: list[str] = field(default_factory=list)
    details_chars: int = 0


class _JUnitReader:
    """One expat pass over one file: declarations refused, testcases read as they end.

    Nothing of the document is kept but the open elements' names, the open suites'
    properties and the testcase being read, whose texts are capped as they arrive.
    """

    def __init__(self, path: Path, lanes: frozenset[str]) -> None:
        self.path = path
        self.lanes = lanes
        self.open: list[str] = []  # names of the open elements, outermost first
        self.suites: list[dict[str, str]] = []  # properties of each open testsuite
        self.case: _OpenCase | None = None
        self.result_text: _OpenCase | None = None  # the case whose worst result is open
        self.property: tuple[dict[str, str], str, list[str]] | None = None
        self.ready: list[CaseResult] = []
        self.position = 0

    def read(self, handle: IO[bytes], limit: int) -> Iterator[CaseResult]:
        parser = expat.ParserCreate()
        parser.buffer_text = True
        _refuse_declarations(parser)
        parser.StartElementHandler = self._start
        parser.EndElementHandler = self._end
        parser.CharacterDataHandler = self._text
        total = 0
        content = False
        try:
            while chunk := handle.read(CHUNK_BYTES):
                total += len(chunk)
                if total > limit:  # the file grew while being read
                    raise ReportError(f"{self.path}: more than the limit of {limit} bytes")
                content = content or bool(chunk.strip(b" \t\r\n\0\xff\xfe"))
                parser.Parse(chunk, False)
                yield from self.ready
                self.ready.clear()
            if not content:
                raise ReportError(f"{self.path}: empty file, expected JUnit XML")
            parser.Parse(b"", True)
            yield from self.ready
        except DefusedXmlException as err:
            raise ReportError(
                f"{self.path}: refused hostile XML ({type(err).__name__}: {err})"
            ) from None
        except ExpatError as err:
            raise ReportError(f"{self.path}: not well-formed XML: {err}") from None
        except (LookupError, ValueError) as err:
            raise ReportError(f"{self.path}: unreadable XML: {err}") from None

    # The handlers are the hot loop of ingest: a few string comparisons per element.

    def _start(self, tag: str, attrib: dict[str, str]) -> None:
        open_ = self.open
        if not open_ and tag not in ("testsuite", "testsuites"):
            raise ReportError(
                f"{self.path}: root element is <{tag}>, expected <testsuites> or <testsuite>"
            )
        parent = open_[-1] if open_ else ""
        open_.append(tag)
        case = self.case
        if tag == "testcase":
            self.case = _OpenCase(attrib)
        elif tag == "testsuite":
            self.suites.append({})
        elif tag == "property" and parent == "properties":
            owner = open_[-3] if len(open_) >= 3 else ""
            target = case.props if case and owner == "testcase" else None
            if target is None and owner == "testsuite":
                target = self.suites[-1]
            if target is not None:
                name = attrib.get("name", "")
                if "value" in attrib:
                    target[name] = attrib["value"]
                else:  # <property name="x">value</property>
                    self.property = (target, name, [])
        elif case is not None and parent == "testcase" and tag in _RESULT_TAGS:
            found = _RESULT_TAGS[tag]
            if OUTCOME_RANK[found] > OUTCOME_RANK[case.outcome]:
                case.outcome = found
                case.message = attrib.get("message", "")
                case.details = []
                case.details_chars = 0
                self.result_text = case

    def _text(self, text: str) -> None:
        case = self.result_text
        if case is not None and case.details_chars < MAX_TEXT_CHARS:
            case.details.append(text)
            case.details_chars += len(text)
        elif self.property is not None:
            self.property[2].append(text)

    def _end(self, tag: str) -> None:
        self.open.pop()
        if tag == "testcase" and self.case is not None:
            self.position += 1
            self.ready.append(self._case(self.case))
            self.case = None
        elif tag in _RESULT_TAGS:
            self.result_text = None
        elif tag == "property" and self.property is not None:
            target, name, parts = self.property
            target[name] = "".join(parts)
            self.property = None
        elif tag == "testsuite":
            self.suites.pop()

    def _suite_property(self, key: str) -> str:
        for props in reversed(self.suites):
            if props.get(key):
                return props[key]
        return ""

    def _case(self, case: _OpenCase) -> CaseResult:
        notes: list[str] = []
        name = case.attrib.get("name") or ""
        classname = case.attrib.get("classname") or ""
        if not name:
            name = f"(testcase #{self.position} without a name)"
            notes.append("the testcase has no name")
        props = case.props
        outcome, message = case.outcome, case.message
        details = "".join(case.details)
        written = name if "::" in name or not classname else f"{classname}::{name}"
        lane = (
            props.get(properties.LANE)
            or self._suite_property(properties.LANE)
            or self._only_lane(written)
        )
        if lane not in self.lanes:
            known = ", ".join(sorted(self.lanes))
            raise ReportError(
                f"{self.path}: testcase '{written}': lane '{lane}' is not in run.json"
                f" (lanes: {known})"
            )
        node = props.get(properties.NODE) or self._suite_property(properties.NODE)
        module = module_of(classname, lane, node)
        test = name if "::" in name or not module else f"{module}::{name}"
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

        perf_ms = number(float, props, properties.PERF_MS)
        if perf_ms is not None and perf_ms <= 0:
            notes.append(f"'perf_ms' is not a time: {perf_ms!r}; stored as null")
            perf_ms = None
        get = props.get
        return CaseResult(
            lane=lane,
            node=node,
            test=test,
            outcome=outcome,
            message=message[:MAX_TEXT_CHARS],
            details=details[:MAX_TEXT_CHARS],
            signature=get(properties.SIGNATURE, ""),
            failure_kind=get(properties.FAILURE_KIND, ""),
            triage=get(properties.TRIAGE, "")[:MAX_TEXT_CHARS],
            kernel=get(properties.KERNEL, ""),
            config=get(properties.CONFIG, ""),
            target=get(properties.TARGET, ""),
            compile_seconds=number(float, props, properties.COMPILE_SECONDS),
            shared_bytes=integer(properties.SHARED_BYTES),
            registers=integer(properties.REGISTERS),
            spills=integer(properties.SPILLS),
            artifacts=get(properties.ARTIFACTS, ""),
            duration=number(float, case.attrib, "time"),
            gpu=get(properties.GPU, ""),
            perf_ms=perf_ms,
            pct_of_ceiling=number(float, props, properties.PCT_OF_CEILING),
            ratio_to_torch=number(float, props, properties.RATIO_TO_TORCH),
            notes="; ".join(notes),
            properties=props,
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


def artifact_files(run_dir: Path, case: CaseResult) -> Iterator[str]:
    """The files of a failed test's artifact folder (none for a test that did not fail)."""
    if case.failed and case.artifacts:
        yield from files_under(run_dir, case.artifacts)


def files_under(run_dir: Path, relative: str) -> Iterator[str]:
    """Files under a folder of the run, relative to the run folder, at most
    MAX_ARTIFACT_FILES. Only a folder inside the run folder is listed; links are not followed.
    """
    if not (run_dir / relative).is_dir():
        return  # most failures leave no folder: skip resolving paths for them
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
