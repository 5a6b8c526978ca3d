"""The run record: ``results/<run-id>/`` and what finishing a run writes into it.

Local and remote runs share this layout: one folder per (node, lane) under ``lanes/``
holding that pair's ``junit.xml`` and ``artifacts/``; then ``merged.xml``, ``index.html``
and ``run.json`` at the top. A (node, lane) that produced no JUnit (a dead node, a hung
run) still appears, as an infrastructure error: nothing is silently lost.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from junitparser.xunit2 import JUnitXml

from ci import atomic, junit, report, runfolder
from ci.errors import ReportError
from ci.lanes import Lane, LaneMatrix


def new_run_id(kind: str, now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    return f"{now:%Y%m%dT%H%M%SZ}-{kind}"


@dataclass(frozen=True)
class RunStart:
    run_id: str
    run_dir: Path
    started: datetime


def start(results_root: Path, kind: str) -> RunStart:
    """Name a new run and make its folder (absolute: smoke suites run from inside it)."""
    started = datetime.now(UTC)
    run_id = new_run_id(kind, started)
    run_dir = results_root.resolve() / run_id
    run_dir.mkdir(parents=True)
    print(f"flagci: run {run_id} -> {run_dir}", flush=True)
    return RunStart(run_id, run_dir, started)


def part_name(node: str, lane: str) -> str:
    return f"{node}__{lane}"


@dataclass
class Steps:
    """Progress you can see: each step announced, timed, and listed again at the end."""

    durations: list[tuple[str, float]] = field(default_factory=list)

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        print(f"==> {name}", flush=True)
        started = time.monotonic()
        try:
            yield
        finally:
            seconds = time.monotonic() - started
            self.durations.append((name, seconds))
            print(f"<== {name} ({seconds:.1f} s)", flush=True)

    def table(self) -> str:
        width = max((len(n) for n, _ in self.durations), default=4)
        return "\n".join(f"{n:<{width}}  {s:8.1f} s" for n, s in self.durations)


@dataclass
class Part:
    """One (node, lane) of a run and what became of it."""

    node: str
    lane: str
    folder: Path
    infrastructure_error: str = ""

    @property
    def junit(self) -> Path:
        return self.folder / "junit.xml"


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
    results: list[runfolder.CaseResult]
    status: str

    @property
    def failed(self) -> list[runfolder.CaseResult]:
        return [r for r in self.results if r.outcome in ("failed", "error")]


def finish(
    run_dir: Path,
    run_id: str,
    kind: str,
    started: datetime,
    matrix: LaneMatrix,
    lanes: list[Lane],
    parts: list[Part],
) -> RunResult:
    """Merge the parts' JUnit, write index.html and run.json; a part without JUnit is an
    infrastructure error testcase, and so is one whose JUnit is unreadable."""
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
        stand_in.write(str(path))
        sources.append(junit.Part(path, part.lane, part.node, prefix))
    junit.merge(sources, run_dir / "merged.xml")
    results = runfolder.read_cases(run_dir / "merged.xml", [lane.name for lane in lanes])
    bad = any(r.outcome in ("failed", "error") for r in results)
    infra = any(p.infrastructure_error for p in parts)
    status = "error" if infra else ("failed" if bad else "passed")
    report.write_html(results, run_dir / "index.html", f"flagci run {run_id}: {status}")
    record = {
        "run_id": run_id,
        "kind": kind,
        "started": started.isoformat(timespec="seconds"),
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
        "status": status,
    }
    atomic.write_text(run_dir / "run.json", json.dumps(record, indent=2))
    return RunResult(run_dir=run_dir, results=results, status=status)
