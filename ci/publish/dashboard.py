"""The static dashboard: HTML and CSS built from the history, opened from disk, no script.

Pages: ``index.html`` (each lane's latest result as a lane x test grid, failures first and
grouped by signature, passing tests folded; the known-issue ledger with its fix checks; a
lane x version grid per vendor family), ``history.html`` (a strip of recent
outcomes per test with its first failing run and age), ``trends.html`` (inline SVG charts of
compile time and shared memory per kernel, config and lane) and ``failures/<key>.html`` (one
page per current failure: signature, diagnostics, links to the run's reproducer files).

The pages are Jinja2 templates (``ci/results/templates/dashboard/``) with autoescape, sharing their
frame with the run report (``ci.results.pages``): everything that came from a test (names, messages,
properties, file names) is escaped by the template engine. This module only shapes what the
templates show; the history store answers every query.
"""

from __future__ import annotations

import hashlib
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from importlib import resources
from pathlib import Path
from urllib.parse import quote

from ci.core import atomic
from ci.core.errors import ConfigError
from ci.history.ledger import KnownIssue, Ledger, load_ledger
from ci.history.store import MetricRow, Store
from ci.history.verdicts import FixCheck, FixStatus, History, Kind, Verdict
from ci.lanes.matrix import LaneMatrix, load_matrix
from ci.results import pages
from ci.smoke.contract.records import REPORT_NAME
from ci.triage.irdiff import HTML_NAME

DEFAULT_OUT = Path("results/dashboard")
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
) -> Path:
    """Rebuild the dashboard under ``out`` from the history; return its index page.

    ``matrix`` orders the lanes (the one ``--lanes-file`` chose; the shipped one otherwise).
    """
    store = store if isinstance(store, Store) else Store(store)
    history = store.evaluate(ledger or load_ledger())
    trends = _trends(store, history)
    pages = render(history, trends, _lane_order(history, matrix), out)
    _remove_stale_failure_pages(out, pages)
    for relative, text in pages.items():
        atomic.write_text(out / relative, text)
    return out / "index.html"


def render(
    history: History, trends: Sequence[Trend], lane_order: Sequence[str], out: Path
) -> dict[str, str]:
    """Every page of the dashboard, keyed by its path relative to ``out``."""
    site = {
        STYLESHEET: resources.files("ci").joinpath("data", "dashboard.css").read_text("utf-8"),
        "index.html": _index(history, lane_order),
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
        cell_title=_cell_title,
        age=_age,
        **context,
    )


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
    ordered = [name for names in matrix.families.values() for name in names] if matrix else []
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


@dataclass(frozen=True)
class FailureGroup:
    """Tests failing now with one signature: (test, its first failing verdict) each."""

    signature: str
    tests: tuple[tuple[str, Verdict], ...]
    known: KnownIssue | None


def failure_groups(history: History, lanes: Sequence[str]) -> list[FailureGroup]:
    """The failures of ``lanes``' latest results, by signature, largest group first."""
    by_signature: dict[str, dict[str, Verdict]] = defaultdict(dict)
    wanted = set(lanes)
    for (lane, test), verdict in sorted(history.verdicts.items()):
        if lane in wanted and verdict.outcome == "failed":
            by_signature[verdict.signature].setdefault(test, verdict)
    groups = [
        FailureGroup(
            signature,
            tuple(sorted(tests.items())),
            next((v.known_issue for v in tests.values() if v.known_issue), None),
        )
        for signature, tests in by_signature.items()
    ]
    return sorted(groups, key=lambda g: (-len(g.tests), g.signature))


def _index(history: History, lane_order: Sequence[str]) -> str:
    latest = history.latest_run
    if latest is None:
        return _page("index.html", "Overview", history=history, latest=None)
    counts: dict[Kind, int] = defaultdict(int)
    for verdict in history.verdicts.values():
        counts[verdict.kind] += 1
    groups = failure_groups(history, lane_order)
    failing = {test for group in groups for test, _ in group.tests}
    families: dict[str, list[str]] = defaultdict(list)
    for lane in lane_order:
        families[history.lanes[lane].family].append(lane)
    return _page(
        "index.html",
        "Overview",
        history=history,
        latest=latest,
        counts=[(k, counts[k]) for k in Kind],
        regressions=sum(1 for v in history.verdicts.values() if v.regression_of),
        overview=list(lane_order),
        overview_headers=[(lane, history.lanes[lane].latest_run) for lane in lane_order],
        groups=groups,
        folded=[t for t in history.tests_of(lane_order) if t not in failing],
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


def _failure_page(history: History, verdict: Verdict, out: Path) -> str:
    failure = verdict.failure
    links = []
    if failure is not None:
        # Where the run's files were kept in its CI run's artifact, the published site has
        # no copy: each links there; otherwise relative to the run folder.
        page_dir = (out / "failures").resolve()
        for path in failure.artifact_files:
            if failure.artifacts_url:
                links.append((failure.artifacts_url, path))
                continue
            target = os.path.relpath(failure.run_dir / path, page_dir)
            href = "/".join(quote(part) for part in Path(target).as_posix().split("/"))
            links.append((href, path))
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
        failure=failure,
        timeline=history.timelines[(verdict.lane, verdict.test)][-STRIP_RUNS:],
        links=links,
        triage_links=triage_links,
    )
