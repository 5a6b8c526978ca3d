"""The static dashboard: HTML and CSS built from the history, opened from disk, no script.

Pages: ``index.html`` (the overview, ``ci.publish.overview``: a row per lane with its latest
run and a stale mark, the news ranked by what matters and grouped by signature, the last
nights x lanes; then the known-issue ledger with its fix checks and, folded, each lane's
latest result per test and a lane x version grid per vendor family), ``history.html``
(a strip of recent outcomes per test with its first failing run and age), ``trends.html``
(static SVG charts, ``ci.publish.charts``: each lane's pass rate per night, ``perf_ms`` per
kernel config and GPU model with the SLOW verdict's band, compile time per target) and
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
from statistics import median
from urllib.parse import quote

from markupsafe import Markup, escape

from ci.core import atomic
from ci.core.errors import ConfigError
from ci.history.ledger import KnownIssue, Ledger, load_ledger
from ci.history.store import PerfRecord, Store
from ci.history.tuning import GAP_RATIO, TuningGap, shape_of, tuning_gaps
from ci.history.verdicts import (
    PERF_MIN_RUNS,
    FailureRecord,
    FixCheck,
    FixStatus,
    History,
    Kind,
    Verdict,
    perf_band,
)
from ci.lanes.matrix import LaneMatrix, load_matrix
from ci.publish import charts
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


@dataclass(frozen=True)
class TrendChart:
    title: str
    svg: Markup


@dataclass(frozen=True)
class Trends:
    """The charts of trends.html, drawn (``ci.publish.charts``)."""

    pass_rate: Markup | None
    perf: tuple[TrendChart, ...]
    compile_seconds: tuple[TrendChart, ...]


def build(
    store: Store | str | Path,
    out: Path = DEFAULT_OUT,
    *,
    ledger: Ledger | None = None,
    matrix: LaneMatrix | None = None,
    stale_after: timedelta = STALE_AFTER,
    now: datetime | None = None,
    tuning_ratio: float = GAP_RATIO,
) -> Path:
    """Rebuild the dashboard under ``out`` from the history; return its index page.

    ``matrix`` orders the lanes (the one ``--lanes-file`` chose; the shipped one otherwise);
    a lane whose latest run started more than ``stale_after`` before ``now`` (the clock,
    unless given) is marked stale. A tuning gap above ``tuning_ratio`` in a lane's latest
    run is shown.
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
    latest = {lane: history.lanes[lane].latest_run for lane in lanes}
    gaps = [
        gap
        for gap in tuning_gaps(store.perf_records(sorted(set(latest.values()))), latest)
        if gap.ratio > tuning_ratio
    ]
    pages = render(
        history, trends, summary, out, stale_after=stale_after, tuning=(gaps, tuning_ratio)
    )
    pages[LINKED_RUNS] = json.dumps(sorted(shown), indent=1) + "\n"
    _remove_stale_failure_pages(out, pages)
    for relative, text in pages.items():
        atomic.write_text(out / relative, text)
    return out / "index.html"


def render(
    history: History,
    trends: Trends,
    summary: Overview,
    out: Path,
    *,
    stale_after: timedelta = STALE_AFTER,
    tuning: tuple[Sequence[TuningGap], float] = ((), GAP_RATIO),
) -> dict[str, str]:
    """Every page of the dashboard, keyed by its path relative to ``out``; ``tuning``: the
    tuning gaps to show and the ratio they exceed."""
    lane_order = summary.lanes
    site = {
        STYLESHEET: resources.files("ci").joinpath("data", "dashboard.css").read_text("utf-8"),
        "index.html": _index(history, summary, stale_after, out, tuning),
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
            perf_min_runs=PERF_MIN_RUNS,
            trends=trends,
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


def _index(
    history: History,
    summary: Overview,
    stale_after: timedelta,
    out: Path,
    tuning: tuple[Sequence[TuningGap], float],
) -> str:
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
        tuning_gaps=tuning[0],
        tuning_ratio=tuning[1],
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


def _trends(store: Store, history: History) -> Trends:
    started = {run.run_id: run.started for run in history.runs}
    order = {run.run_id: i for i, run in enumerate(history.runs)}
    recent = {lane: set(runs[-TREND_RUNS:]) for lane, runs in history.runs_of_lane.items()}
    return Trends(
        _pass_rate(history, recent, started),
        _perf_charts(store.perf_records(), recent, started, order),
        _compile_charts(store, history, started),
    )


def _pass_rate(
    history: History, recent: dict[str, set[str]], started: dict[str, datetime]
) -> Markup | None:
    """One line per lane: passed / (passed + failed) of each run, skips left out."""
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for (lane, _), observations in history.timelines.items():
        for seen in observations:
            if seen.run_id in recent[lane] and seen.outcome != "skipped":
                counts[(lane, seen.run_id)][seen.outcome == "failed"] += 1
    points = [
        charts.Point(lane, started[run_id], 100.0 * passed / (passed + failed))
        for (lane, run_id), (passed, failed) in sorted(counts.items())
    ]
    return charts.svg(points, "% passed", percent=True) if points else None


def _perf_charts(
    records: Sequence[PerfRecord],
    recent: dict[str, set[str]],
    started: dict[str, datetime],
    order: dict[str, int],
) -> tuple[TrendChart, ...]:
    """One chart per lane, kernel, config and GPU model: a line per shape, each night's time
    (the median of its nodes) with the band the SLOW verdict judged it against."""
    times: dict[tuple[str, str, str, str], dict[str, dict[str, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for r in records:
        times[(r.lane, r.kernel, r.config, r.gpu)][r.test][r.run_id].append(r.perf_ms)
    drawn = []
    for (lane, kernel, config, gpu), tests in sorted(times.items()):
        points = []
        for test, per_run in sorted(tests.items()):
            earlier: list[float] = []
            for run_id in sorted(per_run, key=order.__getitem__):
                ms = median(per_run[run_id])
                if run_id in recent[lane]:
                    band = perf_band(earlier)
                    points.append(
                        charts.Point(
                            shape_of(test, config),
                            started[run_id],
                            ms,
                            (band[0] - band[1], band[0] + band[1]) if band else None,
                        )
                    )
                earlier.append(ms)
        if points:
            drawn.append(
                TrendChart(f"{kernel} · {config} · {gpu} · {lane}", charts.svg(points, "ms"))
            )
    return tuple(drawn)


def _compile_charts(
    store: Store, history: History, started: dict[str, datetime]
) -> tuple[TrendChart, ...]:
    """One chart per lane and kernel: a line per target, each night's mean compile time over
    the kernel's configs."""
    seconds: dict[tuple[str, str], dict[tuple[str, str], list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for lane, run_ids in history.runs_of_lane.items():
        for row in store.metrics(lane, run_ids[-TREND_RUNS:]):
            seconds[(lane, row.kernel)][(row.target, row.run_id)].append(row.compile_seconds)
    return tuple(
        TrendChart(
            f"{kernel} · {lane}",
            charts.svg(
                [
                    charts.Point(target or "(no target)", started[run_id], sum(v) / len(v))
                    for (target, run_id), v in sorted(per_target.items())
                ],
                "seconds",
            ),
        )
        for (lane, kernel), per_target in sorted(seconds.items())
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
