"""The run record: ``results/<run-id>/`` and what finishing a run writes into it.

Local and remote runs share this layout: one folder per (node, lane) under ``lanes/``
holding that pair's ``junit.xml`` and ``artifacts/``; then ``merged.xml``, ``index.html``
and ``run.json`` at the top. A (node, lane) that produced no JUnit (a dead node, a hung
run) still appears, as an infrastructure error: nothing is silently lost.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError
from rich.table import Table

from ci.core import atomic, reporter, tables
from ci.core.errors import ReportError
from ci.lanes.matrix import Lane, LaneMatrix
from ci.results import junit, reader, report
from ci.smoke.contract import records


def new_run_id(kind: str, now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    return f"{now:%Y%m%dT%H%M%SZ}-{kind}"


def part_name(node: str, lane: str) -> str:
    """The folder (and collected archive) name of one (node, lane): ``<node>__<lane>``."""
    return f"{node}__{lane}"


@dataclass
class Part:
    """One (node, lane) of a run and what became of it ("" : its suite ran to its end)."""

    node: str
    lane: str
    folder: Path
    infrastructure_error: str = ""

    @property
    def junit(self) -> Path:
        return self.folder / records.JUNIT_NAME


@dataclass(frozen=True)
class Step:
    name: str
    seconds: float


@dataclass
class Run:
    """One run: its id and folder, its timed steps, its parts; ``finish`` writes the record.

    Every way of running lanes (local venvs, local images, nodes, bisection) goes through
    one of these, so they all leave the same ``results/<run-id>/``.
    """

    run_id: str
    folder: Path
    kind: str
    started: datetime
    made_in: reader.CIRunRecord | None = None  # the GitHub Actions run, when made in one
    steps: list[Step] = field(default_factory=list)
    parts: dict[tuple[str, str], Part] = field(default_factory=dict)

    @classmethod
    def start(cls, results_root: Path, kind: str, made_in: reader.CIRunRecord | None = None) -> Run:
        """Name a new run and make its folder (absolute: smoke suites run from inside it)."""
        started = datetime.now(UTC)
        run_id = new_run_id(kind, started)
        folder = results_root.resolve() / run_id
        folder.mkdir(parents=True)
        reporter.current().line(f"flagci: run {run_id} -> {folder}")
        return cls(run_id, folder, kind, started, made_in)

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        """A step you can see: announced, timed, and listed again at the end."""
        out = reporter.current()
        out.step_started(name)
        started = time.monotonic()
        try:
            yield
        finally:
            seconds = time.monotonic() - started
            self.steps.append(Step(name, seconds))
            out.step_ended(name, seconds)

    def part(self, node: str, lane: str) -> Part:
        """The (node, lane) part of this run, made on first use."""
        key = (node, lane)
        if key not in self.parts:
            self.parts[key] = Part(node, lane, self.folder / "lanes" / part_name(node, lane))
        return self.parts[key]

    def steps_table(self) -> Table:
        shown = tables.table("step", "seconds", right=["seconds"])
        for step in self.steps:
            tables.add(shown, step.name, f"{step.seconds:.1f}")
        return shown

    def finish(self, matrix: LaneMatrix, lanes: list[Lane]) -> reader.RunData:
        """Write the record; show the steps, the counts, the failures; return the run."""
        with self.step("merge JUnit, write report"):
            written = _write_record(self, matrix, lanes)
        shown = written.report
        out = reporter.current()
        out.line("\nsteps:")
        out.table(self.steps_table())
        out.line("")
        out.table(shown.table)
        if shown.failures:
            out.line("\n" + "\n".join(shown.failures))
        out.line(f"\nresults: {self.folder}/merged.xml, {self.folder}/index.html")
        return written.run


def ci_run(environ: Mapping[str, str]) -> reader.CIRunRecord | None:
    """The GitHub Actions run that ``environ`` says this process runs in (None outside
    Actions): its artifacts will hold the run folder, so pages published without the files
    can link there."""
    if environ.get("GITHUB_ACTIONS") != "true":
        return None
    try:
        return reader.CIRunRecord(
            server_url=environ.get("GITHUB_SERVER_URL", ""),
            repository=environ.get("GITHUB_REPOSITORY", ""),
            run_id=environ.get("GITHUB_RUN_ID", ""),
        )
    except ValidationError as err:  # a run is never lost for a link: record none, say why
        reporter.current().warn(f"not recording the Actions run in run.json: {err}")
        return None


def lane_record(matrix: LaneMatrix, lane: Lane) -> reader.LaneRecord:
    family = next((f for f, names in matrix.families.items() if lane.name in names), lane.vendor)
    return reader.LaneRecord(
        vendor=lane.vendor,
        family=family,
        baseline=lane.baseline,
        compiler=reader.CompilerRecord(**lane.compiler.model_dump()),
        pins={p.name: p.version for p in lane.pins},
    )


@dataclass(frozen=True)
class _Written:
    run: reader.RunData
    report: report.RunReport


def _write_record(run: Run, matrix: LaneMatrix, lanes: list[Lane]) -> _Written:
    """Merge the parts' JUnit, write index.html and run.json; a part without JUnit is an
    infrastructure error testcase, and so is one whose JUnit is unreadable. Each JUnit file
    is parsed once; what was written comes back parsed, for ingest, verdicts and summary."""
    lane_records = {lane.name: lane_record(matrix, lane) for lane in lanes}
    parts = list(run.parts.values())
    sources: list[junit.Part] = []
    files: dict[Path, bytes] = {}  # written last, once everything is read and made
    for part in parts:
        prefix = f"lanes/{part.folder.name}"
        if not part.infrastructure_error:
            try:
                document = junit.read(part.junit)
                sources.append(junit.Part(document, part.lane, part.node, prefix))
                continue
            except ReportError as err:
                part.infrastructure_error = str(err)
        document, text = junit.stand_in(part.lane, part.node, part.infrastructure_error)
        files[part.folder / "infrastructure.xml"] = text
        sources.append(junit.Part(document, part.lane, part.node, prefix))
    merged = junit.merge(sources, run.folder)
    cases = reader.parse_cases(run.folder / "merged.xml", merged, list(lane_records))
    bad = any(c.failed for c in cases)
    infra = any(p.infrastructure_error for p in parts)
    status = "error" if infra else ("failed" if bad else "passed")
    record = reader.RunRecord(
        run_id=run.run_id,
        kind=run.kind,
        # As run.json holds them, so the record handed on is the one read back.
        started=run.started.replace(microsecond=0),
        finished=datetime.now(UTC).replace(microsecond=0),
        lanes=lane_records,
        nodes=tuple(sorted({p.node for p in parts})),
        parts=tuple(
            reader.PartRecord(
                node=p.node,
                lane=p.lane,
                folder=f"lanes/{p.folder.name}",
                infrastructure_error=p.infrastructure_error,
            )
            for p in parts
        ),
        steps=tuple(reader.StepRecord(name=s.name, seconds=round(s.seconds, 3)) for s in run.steps),
        status=status,
        ci_run=run.made_in,
    )
    run_json = record.to_json().encode()
    shown = report.of_run(
        cases,
        f"flagci run {run.run_id}: {status}",
        artifacts_url=run.made_in.artifacts_url if run.made_in else "",
    )
    files[run.folder / "merged.xml"] = merged
    files[run.folder / "index.html"] = shown.page.encode()
    files[run.folder / "run.json"] = run_json  # last: a folder with run.json is complete
    for path, data in files.items():
        atomic.write_bytes(path, data)
    finished = reader.RunData(
        run.folder, record, tuple(cases), reader.bytes_digest(run_json, merged)
    )
    return _Written(finished, shown)
