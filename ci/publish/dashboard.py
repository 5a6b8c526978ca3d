"""The static dashboard: HTML and CSS built from the history, opened from disk, no script.

Pages: ``index.html`` (the overview, ``ci.publish.overview``: a row per lane with its latest
run and a stale mark, the news ranked by what matters and grouped by signature, the last
nights x lanes; then the known-issue ledger with its fix checks and, folded, each lane's
latest result per test and a lane x version grid per vendor family), ``history.html``
(a strip of recent outcomes per test with its first failing run and age), ``trends.html``
(inline SVG charts of compile time and shared memory per kernel, config and lane) and
``failures/<key>.html`` (one page per current failure: signature, diagnostics, links to
the run's reproducer files).

Runs are linked where the site (``ci.publish.site``) and a results folder both keep them:
the run folder ``<run-id>/`` beside the dashboard's folder.

The pages are Jinja2 templates (``ci/results/templates/dashboard/``) with autoescape, sharing their
frame with the run report (``ci.results.pages``): everything that came from a test (names, messages,
properties, file names) is escaped by the template engine. This module only shapes what the
templates show; the history store answers every query.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from urllib.parse import quote

from markupsafe import Markup, escape

from ci.core import atomic
from ci.core.errors import ConfigError
from ci.history.ledger import KnownIssue, Ledger, load_ledger
from ci.history.store import MetricRow, Store
from ci.history.verdicts import FailureRecord, FixCheck, FixStatus, History, Kind, Verdict
from ci.lanes.matrix import LaneMatrix, load_matrix
from ci.publish.overview import NIGHTS, STALE_AFTER, Overview, overview
from ci.results import pages
from ci.smoke.contract.records import REPORT_NAME
from ci.triage.irdiff import HTML_NAME

DEFAULT_OUT = Path("results/dashboard")
LINKED_RUNS = "runs.json"  # the runs whose pages the dashboard links: the site keeps them
STRIP_RUNS = 30
TREND_RUNS = 60
STYLESHEET = "style.css"

_KIND_LABEL = {
    Kind.KNOWN: "known",
    Kind.FLAKY: "flaky",
    Kind.NEW_FAILURE: "NEW",
    Kind.FAILING: "fail",
    Kind.LANE_PROBLEM: "lane",
    Kind.SLOWER: "SLOW",
    Kind.FIXED: "fixed",
    Kind.PASSED: "pass",
    Kind.SKIPPED: "skip",
}
_FIX_CLASS = {
    FixStatus.VERIFIED: "fix-verified",
    FixStatus.NOT_VERIFIED: "fix-not-verified",
    FixStatus.NOT_TESTED: "fix-not-tested",
}
_PALETTE = ("#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#5d4037")


@dataclass(frozen=True)
class Series:
    target: str
    points: tuple[tuple[int, float], ...]  # (position in the lane's runs, value)


@dataclass(frozen=True)
class Trend:
    kernel: str
    config: str
    lane: str
    runs: tuple[str, ...]
    compile_seconds: tuple[Series, ...]
    shared_bytes: tuple[Series, ...]


def build(
    store: Store | str | Path,
    out: Path = DEFAULT_OUT,
    *,
    ledger: Ledger | None = None,
    matrix: LaneMatrix | None = None,
    stale_after: timedelta = STALE_AFTER,
    now: datetime | None = None,
) -> Path:
    """Rebuild the dashboard under ``out`` from the history; return its index page.

    ``matrix`` orders the lanes (the one ``--lanes-file`` chose; the shipped one otherwise);
    a lane whose latest run started more than ``stale_after`` before ``now`` (the clock,
    unless given) is marked stale.
    """
    store = store if isinstance(store, Store) else Store(store)
    history = store.evaluate(ledger or load_ledger())
    trends = _trends(store, history)
    lanes = _lane_order(history, matrix)
    shown = {run.run_id for run in history.runs[-NIGHTS:]}
    shown |= {history.lanes[lane].latest_run for lane in lanes}
    summary = overview(
        history,
        lanes,
        store.lane_seconds(sorted(shown)),
        now=now or datetime.now(UTC),
        stale_after=stale_after,
    )
    pages = render(history, trends, summary, out, stale_after=stale_after)
    pages[LINKED_RUNS] = json.dumps(sorted(shown), indent=1) + "\n"
    _remove_stale_failure_pages(out, pages)
    for relative, text in pages.items():
        atomic.write_text(out / relative, text)
    return out / "index.html"


def render(
    history: History,
    trends: Sequence[Trend],
    summary: Overview,
    out: Path,
    *,
    stale_after: timedelta = STALE_AFTER,
) -> dict[str, str]:
    """Every page of the dashboard, keyed by its path relative to ``out``."""
    lane_order = summary.lanes
    site = {
        STYLESHEET: resources.files("ci").joinpath("data", "dashboard.css").read_text("utf-8"),
        "index.html": _index(history, summary, stale_after, out),
        "history.html": _page(
            "history.html",
            "History",
            history=history,
            strip_runs=STRIP_RUNS,
            lanes=[
                (lane, sorted(test for (name, test) in history.timelines if name == lane))
                for lane in lane_order
                if any(name == lane for name, _ in history.timelines)
            ],
        ),
        "trends.html": _page(
            "trends.html",
            "Trends",
            trend_runs=TREND_RUNS,
            charts=[
                (
                    f"{t.kernel} · {t.config} · {t.lane}",
                    [
                        c
                        for c in (
                            _chart(
                                f"{t.kernel} · {t.config} · {t.lane}: compile time",
                                "s",
                                t.runs,
                                t.compile_seconds,
                            ),
                            _chart(
                                f"{t.kernel} · {t.config} · {t.lane}: shared memory",
                                "B",
                                t.runs,
                                t.shared_bytes,
                            ),
                        )
                        if c is not None
                    ],
                )
                for t in trends
            ],
        ),
    }
    for verdict in history.verdicts.values():
        if verdict.outcome == "failed":
            site[failure_page(verdict.lane, verdict.test)] = _failure_page(history, verdict, out)
    return site


def _page(template: str, title: str, *, depth: int = 0, **context: object) -> str:
    return pages.render(
        f"dashboard/{template}",
        title=title,
        up="../" * depth,
        stylesheet=STYLESHEET,
        labels=_KIND_LABEL,
        fix_class=_FIX_CLASS,
        failure_page=failure_page,
        run_page=run_page,
        wrap_name=wrap_name,
        cell_title=_cell_title,
        age=_age,
        **context,
    )


def run_page(run_id: str) -> str:
    """A run's page, relative to the dashboard's folder: the run folder beside it."""
    return f"../{quote(run_id)}/index.html"


_SEPARATOR = re.compile(r"(::|/|\[|-|\.|,)")


def wrap_name(name: str) -> Markup:
    """``name`` escaped, with a line-break opportunity after each separator (``::``, ``/``,
    ``[``, ``-``, ``.``, ``,``): a long test id wraps where a reader splits it."""
    return Markup(_SEPARATOR.sub(r"\1<wbr>", str(escape(name))))


def failure_page(lane: str, test: str) -> str:
    key = hashlib.sha256(f"{lane}\0{test}".encode()).hexdigest()[:20]
    return f"failures/{key}.html"


def _remove_stale_failure_pages(out: Path, pages: dict[str, str]) -> None:
    folder = out / "failures"
    if not folder.is_dir():
        return
    for page in folder.glob("*.html"):
        if f"failures/{page.name}" not in pages:
            page.unlink()


def _lane_order(history: History, matrix: LaneMatrix | None) -> list[str]:
    """Lanes by family in the matrix' release order; lanes the matrix lacks come last."""
    if matrix is None:
        try:
            matrix = load_matrix()
        except ConfigError:
            matrix = None
    # dict.fromkeys: a lane in several families (a vendor's and an axis) comes once, first.
    ordered = (
        list(dict.fromkeys(n for names in matrix.families.values() for n in names))
        if matrix
        else []
    )
    known = [name for name in ordered if name in history.lanes]
    rest = sorted(set(history.lanes) - set(known), key=lambda n: (history.lanes[n].family, n))
    return known + rest


# --------------------------------------------------------------------------------------
# What the templates show


def _cell_title(verdict: Verdict) -> str:
    title = f"{verdict.lane} · {verdict.test}: {verdict.kind.value}"
    if verdict.failing_since:
        title += f" since {verdict.failing_since.since_run} ({verdict.failing_since.runs} runs)"
    if verdict.perf:
        perf = verdict.perf
        title += (
            f"; {perf.ms:.4f} ms on {perf.gpu}, {perf.change_pct:+.1f}% against the median"
            f" {perf.median_ms:.4f} ms (spread {perf.spread_ms:.4f}) of {perf.runs} runs"
        )
    return title


def _index(history: History, summary: Overview, stale_after: timedelta, out: Path) -> str:
    latest = history.latest_run
    if latest is None:
        return _page("index.html", "Overview", history=history, latest=None)
    lane_order = summary.lanes
    families: dict[str, list[str]] = defaultdict(list)
    for lane in lane_order:
        families[history.lanes[lane].family].append(lane)
    return _page(
        "index.html",
        "Overview",
        history=history,
        latest=latest,
        summary=summary,
        stale_after=stale_after,
        reports=[_drafted_report(group.verdicts, out) for group in summary.news],
        overview_headers=[(lane, history.lanes[lane].latest_run) for lane in lane_order],
        all_tests=history.tests_of(lane_order),
        ledger_rows=_ledger_rows(history),
        families=list(families.items()),
        version_headers={
            family: [
                (
                    f"{history.lanes[lane].package} {history.lanes[lane].version}",
                    f"{lane} · {history.lanes[lane].latest_run}",
                )
                for lane in lanes
            ]
            for family, lanes in families.items()
        },
    )


def _drafted_report(verdicts: Sequence[Verdict], out: Path) -> str | None:
    """The first drafted upstream report triage wrote for one of ``verdicts`` (href from
    the dashboard's folder)."""
    for verdict in verdicts:
        if verdict.failure is not None:
            for href, path in _artifact_links(verdict.failure, out):
                if Path(path).name == REPORT_NAME:
                    return href
    return None


def _ledger_rows(history: History) -> list[tuple[KnownIssue, list[FixCheck], int]]:
    checks: dict[str, list[FixCheck]] = defaultdict(list)
    for check in history.fix_checks:
        checks[check.issue.id].append(check)
    matching: dict[str, int] = defaultdict(int)
    issues: dict[str, KnownIssue] = {}
    for verdict in history.verdicts.values():
        if verdict.known_issue is not None:
            matching[verdict.known_issue.id] += 1
            issues[verdict.known_issue.id] = verdict.known_issue
    for check in history.fix_checks:
        issues[check.issue.id] = check.issue
    return [(issues[i], checks.get(i, []), matching[i]) for i in sorted(issues)]


def _age(age: timedelta) -> str:
    days = age.days
    hours = age.seconds // 3600
    return f"{days} d {hours} h" if days else f"{hours} h"


# --------------------------------------------------------------------------------------
# trends.html


def _trends(store: Store, history: History) -> list[Trend]:
    values: dict[tuple[str, str, str, str, str], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    trend_runs: dict[str, list[str]] = {}
    for lane, run_ids in history.runs_of_lane.items():
        recent = list(run_ids[-TREND_RUNS:])
        trend_runs[lane] = recent
        row: MetricRow
        for row in store.metrics(lane, recent):
            key = (row.kernel, row.config, lane)
            if row.compile_seconds is not None:
                values[(*key, "compile_seconds", row.target)][row.run_id].append(
                    row.compile_seconds
                )
            if row.shared_bytes is not None:
                values[(*key, "shared_bytes", row.target)][row.run_id].append(row.shared_bytes)
    grouped: dict[tuple[str, str, str], dict[str, list[Series]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for (kernel, config, lane, metric, target), per_run in values.items():
        position = {run_id: i for i, run_id in enumerate(trend_runs[lane])}
        points = tuple(
            (position[run_id], sum(v) / len(v))
            for run_id, v in sorted(per_run.items(), key=lambda item: position[item[0]])
        )
        grouped[(kernel, config, lane)][metric].append(Series(target, points))
    return [
        Trend(
            kernel,
            config,
            lane,
            tuple(trend_runs[lane]),
            tuple(sorted(metrics.get("compile_seconds", []), key=lambda s: s.target)),
            tuple(sorted(metrics.get("shared_bytes", []), key=lambda s: s.target)),
        )
        for (kernel, config, lane), metrics in sorted(grouped.items())
    ]


@dataclass(frozen=True)
class ChartLine:
    target: str
    colour: str
    points: str
    last: str
    legend_x: int
    legend_y: int


@dataclass(frozen=True)
class Chart:
    """An SVG line chart laid out: the template only draws it."""

    title: str
    unit: str
    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    high: str
    low: str
    first: str
    last: str
    lines: tuple[ChartLine, ...]


def _chart(title: str, unit: str, runs: Sequence[str], series: Sequence[Series]) -> Chart | None:
    width, height, left, right, top, bottom = 380, 150, 52, 10, 10, 22
    values = [v for s in series for _, v in s.points]
    if not values:
        return None
    low, high = min(0.0, min(values)), max(values)
    high = high if high > low else low + 1.0
    span_x = max(len(runs) - 1, 1)

    def x(i: int) -> float:
        return left + (width - left - right) * i / span_x

    def y(v: float) -> float:
        return top + (height - top - bottom) * (1 - (v - low) / (high - low))

    lines = tuple(
        ChartLine(
            target=s.target,
            colour=_PALETTE[index % len(_PALETTE)],
            points=" ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in s.points),
            last=f"{s.points[-1][1]:.6g}",
            legend_x=left + 110 * (index % 3),
            legend_y=height + 10 + 12 * (index // 3),
        )
        for index, s in enumerate(series)
    )
    return Chart(
        title=title,
        unit=unit,
        width=width,
        height=height + 14 + 12 * ((len(series) - 1) // 3),
        left=left,
        right=width - right,
        top=top,
        bottom=height - bottom,
        high=f"{high:.6g}",
        low=f"{low:.6g}",
        first=runs[0],
        last=runs[-1],
        lines=lines,
    )


# --------------------------------------------------------------------------------------
# failures/<key>.html


def _artifact_links(failure: FailureRecord, page_dir: Path) -> list[tuple[str, str]]:
    """(href from ``page_dir``, path) of each file the failure kept. Where the run's files
    were kept in its CI run's artifact, the published site has no copy: each links there;
    otherwise relative to the run folder."""
    if failure.artifacts_url:
        return [(failure.artifacts_url, path) for path in failure.artifact_files]
    links = []
    for path in failure.artifact_files:
        target = os.path.relpath(failure.run_dir / path, page_dir.resolve())
        links.append(("/".join(quote(part) for part in Path(target).as_posix().split("/")), path))
    return links


def _failure_page(history: History, verdict: Verdict, out: Path) -> str:
    failure = verdict.failure
    links = _artifact_links(failure, out / "failures") if failure is not None else []
    # The drafted upstream report and the IR diff against the baseline, where triage wrote
    # them beside the bundle.
    labels = {REPORT_NAME: "Drafted upstream report", HTML_NAME: "IR diff"}
    triage_links = [
        (href, labels[Path(path).name]) for href, path in links if Path(path).name in labels
    ]
    return _page(
        "failure.html",
        f"Failure: {verdict.lane}",
        depth=1,
        verdict=verdict,
        run=history.run(verdict.run_id),
        failure=failure,
        timeline=history.timelines[(verdict.lane, verdict.test)][-STRIP_RUNS:],
        links=links,
        triage_links=triage_links,
    )
