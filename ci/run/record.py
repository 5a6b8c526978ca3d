"""The run record: ``results/<run-id>/`` and what finishing a run writes into it.

Local and remote runs share this layout: one folder per (node, lane) under ``lanes/``
holding that pair's ``junit.xml`` and ``artifacts/``; then ``merged.xml``, ``index.html``
and ``run.json`` at the top. A (node, lane) that produced no JUnit (a dead node, a hung
run) still appears, as an infrastructure error: nothing is silently lost.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from junitparser.xunit2 import JUnitXml
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
    steps: list[Step] = field(default_factory=list)
    parts: dict[tuple[str, str], Part] = field(default_factory=dict)

    @classmethod
    def start(cls, results_root: Path, kind: str) -> Run:
        """Name a new run and make its folder (absolute: smoke suites run from inside it)."""
        started = datetime.now(UTC)
        run_id = new_run_id(kind, started)
        folder = results_root.resolve() / run_id
        folder.mkdir(parents=True)
        reporter.current().line(f"flagci: run {run_id} -> {folder}")
        return cls(run_id, folder, kind, started)

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

    def finish(self, matrix: LaneMatrix, lanes: list[Lane]) -> RunResult:
        with self.step("merge JUnit, write report"):
            result = _write_record(self, matrix, lanes)
        reporter.current().line("\nsteps:")
        reporter.current().table(self.steps_table())
        return result


def ci_run(environ: Mapping[str, str]) -> reader.CIRunRecord | None:
    """The GitHub Actions run this process runs in (None outside Actions): its artifacts
    will hold this run folder, so pages published without the files can link there."""
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


def lane_summary(matrix: LaneMatrix, lane: Lane) -> dict[str, Any]:
    family = next((f for f, names in matrix.families.items() if lane.name in names), lane.vendor)
    return {
        "vendor": lane.vendor,
        "family": family,
        "baseline": lane.baseline,
        "compiler": lane.compiler.model_dump(),
        "pins": {p.name: p.version for p in lane.pins},
    }


@dataclass
class RunResult:
    run_dir: Path
    results: list[reader.CaseResult]
    status: str

    @property
    def failed(self) -> list[reader.CaseResult]:
        return [r for r in self.results if r.outcome in ("failed", "error")]


def _write_record(run: Run, matrix: LaneMatrix, lanes: list[Lane]) -> RunResult:
    """Merge the parts' JUnit, write index.html and run.json; a part without JUnit is an
    infrastructure error testcase, and so is one whose JUnit is unreadable."""
    parts = list(run.parts.values())
    sources: list[junit.Part] = []
    for part in parts:
        prefix = f"lanes/{part.folder.name}"
        if not part.infrastructure_error:
            try:
                junit.read(part.junit)
                sources.append(junit.Part(part.junit, part.lane, part.node, prefix))
                continue
            except ReportError as err:
                part.infrastructure_error = str(err)
        stand_in = JUnitXml()
        stand_in.add_testsuite(
            junit.infrastructure_case(part.lane, part.node, part.infrastructure_error)
        )
        path = part.folder / "infrastructure.xml"
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_bytes(path, stand_in.tostring())  # type: ignore[no-untyped-call]
        sources.append(junit.Part(path, part.lane, part.node, prefix))
    junit.merge(sources, run.folder / "merged.xml")
    results = reader.read_cases(run.folder / "merged.xml", [lane.name for lane in lanes])
    bad = any(r.outcome in ("failed", "error") for r in results)
    infra = any(p.infrastructure_error for p in parts)
    status = "error" if infra else ("failed" if bad else "passed")
    made_in = ci_run(os.environ)
    report.write_html(
        results,
        run.folder / "index.html",
        f"flagci run {run.run_id}: {status}",
        artifacts_url=made_in.artifacts_url if made_in else "",
    )
    record = {
        "run_id": run.run_id,
        "kind": run.kind,
        "started": run.started.isoformat(timespec="seconds"),
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "lanes": {lane.name: lane_summary(matrix, lane) for lane in lanes},
        "nodes": sorted({p.node for p in parts}),
        "parts": [
            {
                "node": p.node,
                "lane": p.lane,
                "folder": f"lanes/{p.folder.name}",
                "infrastructure_error": p.infrastructure_error,
            }
            for p in parts
        ],
        "steps": [{"name": s.name, "seconds": round(s.seconds, 3)} for s in run.steps],
        "status": status,
        **({"ci_run": made_in.model_dump()} if made_in else {}),
    }
    atomic.write_text(run.folder / "run.json", json.dumps(record, indent=2))
    return RunResult(run_dir=run.folder, results=results, status=status)
