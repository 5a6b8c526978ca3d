"""A run's human-readable results: ``index.html`` (opens from disk), the summary table and
the first failures."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.table import Table

from ci.core import tables
from ci.results import pages
from ci.results.reader import CaseResult

OUTCOMES = ("passed", "failed", "error", "skipped")
FAILURES_LISTED = 15


@dataclass(frozen=True)
class Column:
    lane: str
    node: str

    @property
    def label(self) -> str:
        return f"{self.lane} @ {self.node}" if self.node else self.lane


def columns(results: Iterable[CaseResult]) -> list[Column]:
    return sorted({Column(r.lane, r.node) for r in results}, key=lambda c: (c.lane, c.node))


def counts(results: Iterable[CaseResult]) -> dict[Column, Counter[str]]:
    table: dict[Column, Counter[str]] = defaultdict(Counter)
    for r in results:
        table[Column(r.lane, r.node)][r.outcome] += 1
    return table


def _summary_table(cols: list[Column], tallies: dict[Column, Counter[str]]) -> Table:
    """One row per (lane, node): how many testcases had each outcome."""
    shown = tables.table("lane @ node", *OUTCOMES, right=OUTCOMES)
    for col in cols:
        tables.add(shown, col.label, *(tallies[col][outcome] for outcome in OUTCOMES))
    return shown


def failure_list(results: Sequence[CaseResult]) -> list[str]:
    """The first failing testcases, one line each with its kind and first line of text."""
    bad = [r for r in results if r.failed]
    if not bad:
        return []
    lines = [f"{len(bad)} failing testcase(s):"]
    for r in bad[:FAILURES_LISTED]:
        first = (r.message or r.details).strip().splitlines()[:1]
        text = first[0][:160] if first else ""
        lines.append(f"  [{r.failure_kind or r.outcome}] {r.lane} {r.test}: {text}")
    if len(bad) > FAILURES_LISTED:
        lines.append(f"  ... and {len(bad) - FAILURES_LISTED} more (see index.html)")
    return lines


@dataclass(frozen=True)
class RunReport:
    """What a run shows: its page (``index.html``), its counts table, its failure list."""

    page: str
    table: Table
    failures: list[str]


def of_run(results: Sequence[CaseResult], title: str, *, artifacts_url: str = "") -> RunReport:
    """The run's report. On the page each failure links to its artifact folder beside the
    page, or to ``artifacts_url`` (the CI run's artifacts) where the files are kept there."""
    listed = failure_list(results)
    cols, tallies = columns(results), counts(results)
    grid: dict[str, dict[Column, CaseResult]] = defaultdict(dict)
    for r in results:
        grid[r.test][Column(r.lane, r.node)] = r
    failures = [r for r in results if r.failed]
    table = _summary_table(cols, tallies)
    page = pages.render(
        "run.html",
        title=title,
        outcomes=OUTCOMES,
        columns=cols,
        counts=tallies,
        grid=sorted(grid.items()),
        failures=failures,
        anchors={r.key: f"failure-{i}" for i, r in enumerate(failures)},
        artifacts_url=artifacts_url,
    )
    return RunReport(page, table, listed)
