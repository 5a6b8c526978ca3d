"""The static dashboard: HTML and CSS built from the history, opened from disk, no script.

Pages: ``index.html`` (latest run as a lane x test grid, a lane x version grid per vendor
family, the known-issue ledger with its fix checks), ``history.html`` (a strip of recent
outcomes per test with its first failing run and age), ``trends.html`` (inline SVG charts of
compile time and shared memory per kernel, config and lane) and ``failures/<key>.html`` (one
page per current failure: signature, diagnostics, links to the run's reproducer files).

Everything that came from a test (names, messages, properties, file names) is escaped.
"""

from __future__ import annotations

import hashlib
import html
import os
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from importlib import resources
from pathlib import Path
from urllib.parse import quote

from ci import atomic
from ci.errors import ConfigError
from ci.history import MetricRow, Store
from ci.lanes import LaneMatrix, load_matrix
from ci.ledger import Ledger, load_ledger
from ci.verdicts import (
    FixCheck,
    FixStatus,
    History,
    Kind,
    Observation,
    Verdict,
)

DEFAULT_OUT = Path("results/dashboard")
STRIP_RUNS = 30
TREND_RUNS = 60
STYLESHEET = "style.css"

_KIND_LABEL = {
    Kind.KNOWN: "known",
    Kind.FLAKY: "flaky",
    Kind.NEW_FAILURE: "NEW",
    Kind.FAILING: "fail",
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


def e(value: object) -> str:
    """Escape anything for HTML text and attribute values."""
    return html.escape(str(value), quote=True)


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
    for relative, text in pages.items():
        atomic.write_text(out / relative, text)
    _remove_stale_failure_pages(out, pages)
    return out / "index.html"


def render(
    history: History, trends: Sequence[Trend], lane_order: Sequence[str], out: Path
) -> dict[str, str]:
    """Every page of the dashboard, keyed by its path relative to ``out``."""
    pages = {
        STYLESHEET: resources.files("ci").joinpath("data", "dashboard.css").read_text("utf-8"),
        "index.html": _index(history, lane_order),
        "history.html": _history_page(history, lane_order),
        "trends.html": _trends_page(trends),
    }
    for verdict in history.verdicts.values():
        if verdict.outcome == "failed":
            pages[failure_page(verdict.lane, verdict.test)] = _failure_page(history, verdict, out)
    return pages


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
# Page frame


def _page(title: str, body: str, *, depth: int = 0) -> str:
    up = "../" * depth
    return (
        "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none';"
        " style-src 'self'; img-src 'self' data:\">\n"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>\n"
        f"<title>{e(title)} · flagci</title>\n"
        f"<link rel='stylesheet' href='{up}{STYLESHEET}'>\n</head>\n<body>\n"
        "<header><h1>FlagTree CI</h1><nav>"
        f"<a href='{up}index.html'>Overview</a><a href='{up}history.html'>History</a>"
        f"<a href='{up}trends.html'>Trends</a></nav></header>\n"
        f"<main>\n<h2>{e(title)}</h2>\n{body}\n</main>\n</body>\n</html>\n"
    )


def _cell(verdict: Verdict | None, *, depth: int = 0) -> str:
    if verdict is None:
        return "<td class='cell empty'>–</td>"
    kind = verdict.kind
    label = e(_KIND_LABEL[kind])
    if verdict.outcome == "failed":
        label = f"<a href='{'../' * depth}{failure_page(verdict.lane, verdict.test)}'>{label}</a>"
    badges = ""
    if verdict.regression_of:
        badges += "<span class='badge regression'>FlagTree regression</span>"
    title = f"{verdict.lane} · {verdict.test}: {kind.value}"
    if verdict.failing_since:
        title += f" since {verdict.failing_since.since_run} ({verdict.failing_since.runs} runs)"
    if verdict.perf:
        perf = verdict.perf
        title += (
            f"; {perf.ms:.4f} ms on {perf.gpu}, {perf.change_pct:+.1f}% against the median"
            f" {perf.median_ms:.4f} ms (spread {perf.spread_ms:.4f}) of {perf.runs} runs"
        )
    slug = kind.value.replace(" ", "-")
    return f"<td class='cell k-{slug}' title='{e(title)}'>{label}{badges}</td>"


def _grid(history: History, lanes: Sequence[str], headers: Sequence[str]) -> str:
    tests = history.tests_of(lanes)
    if not tests:
        return "<p class='meta'>No results.</p>"
    head = "".join(f"<th>{h}</th>" for h in headers)
    rows = []
    for test in tests:
        cells = "".join(_cell(history.verdicts.get((lane, test))) for lane in lanes)
        rows.append(f"<tr><td class='test'>{e(test)}</td>{cells}</tr>")
    return f"<table class='grid'><tr><th>test</th>{head}</tr>\n" + "\n".join(rows) + "</table>"


# --------------------------------------------------------------------------------------
# index.html


def _index(history: History, lane_order: Sequence[str]) -> str:
    latest = history.latest_run
    if latest is None:
        return _page("Overview", "<p class='meta'>The history holds no runs yet.</p>")
    counts: dict[Kind, int] = defaultdict(int)
    for verdict in history.verdicts.values():
        counts[verdict.kind] += 1
    summary = "".join(
        f"<span><span class='swatch k-{k.value.replace(' ', '-')}'></span>"
        f" {e(k.value)}: {counts[k]}</span>"
        for k in Kind
    )
    regressions = sum(1 for v in history.verdicts.values() if v.regression_of)
    parts = [
        f"<p class='meta'>{len(history.runs)} runs in the history; latest run"
        f" <strong>{e(latest.run_id)}</strong> ({e(latest.kind)}, {e(latest.status or 'unknown')}),"
        f" started {e(latest.started.strftime('%Y-%m-%d %H:%M UTC'))}.</p>",
        f"<p class='summary'>{summary}<span>FlagTree regressions: {regressions}</span></p>",
        "<h2>Known issues</h2>",
        _ledger_table(history),
        f"<h2>Latest run: {e(latest.run_id)}</h2>",
    ]
    in_latest = [lane for lane in lane_order if history.lanes[lane].latest_run == latest.run_id]
    parts.append(_grid(history, in_latest, [e(lane) for lane in in_latest]))
    families: dict[str, list[str]] = defaultdict(list)
    for lane in lane_order:
        families[history.lanes[lane].family].append(lane)
    for family, lanes in families.items():
        parts.append(f"<h2>{e(family)}: lanes by version</h2>")
        headers = [
            f"{e(history.lanes[lane].package)} {e(history.lanes[lane].version)}"
            f"<br><span class='meta'>{e(lane)} · {e(history.lanes[lane].latest_run)}</span>"
            for lane in lanes
        ]
        parts.append(_grid(history, lanes, headers))
    return _page("Overview", "\n".join(parts))


def _ledger_table(history: History) -> str:
    checks: dict[str, list[FixCheck]] = defaultdict(list)
    for check in history.fix_checks:
        checks[check.issue.id].append(check)
    matching: dict[str, int] = defaultdict(int)
    issues = {}
    for verdict in history.verdicts.values():
        if verdict.known_issue is not None:
            matching[verdict.known_issue.id] += 1
            issues[verdict.known_issue.id] = verdict.known_issue
    for check in history.fix_checks:
        issues[check.issue.id] = check.issue
    if not issues and not history.fix_checks:
        return "<p class='meta'>No failure matches the known-issue ledger.</p>"
    rows = []
    for issue_id in sorted(issues):
        issue = issues[issue_id]
        fixes = (
            "<br>".join(
                f"{e(c.version)}: <span class='{_FIX_CLASS[c.status]}'>{e(c.status.value)}</span>"
                f" <span class='meta'>({c.passed} passed, {c.failed} failed"
                f"{', on ' + e(', '.join(c.lanes)) if c.lanes else ''})</span>"
                for c in checks.get(issue_id, [])
            )
            or "<span class='meta'>no fix claimed</span>"
        )
        rows.append(
            f"<tr><td>{e(issue.id)}</td><td>{e(issue.title)}<br>"
            f"<a href='{e(issue.upstream)}'>{e(issue.upstream)}</a></td>"
            f"<td>{e(', '.join(issue.affected))}</td><td>{fixes}</td>"
            f"<td>{matching[issue_id]}</td></tr>"
        )
    return (
        "<table><tr><th>issue</th><th>upstream</th><th>affected</th><th>claimed fixes</th>"
        "<th>failing now</th></tr>\n" + "\n".join(rows) + "</table>"
    )


# --------------------------------------------------------------------------------------
# history.html


def _strip(timeline: Iterable[Observation]) -> str:
    squares = "".join(
        f"<span class='o-{o.outcome}' title='{e(o.run_id)}: {e(o.outcome)}'></span>"
        for o in list(timeline)[-STRIP_RUNS:]
    )
    return f"<div class='strip'>{squares}</div>"


def _age(age: timedelta) -> str:
    days = age.days
    hours = age.seconds // 3600
    return f"{days} d {hours} h" if days else f"{hours} h"


def _history_page(history: History, lane_order: Sequence[str]) -> str:
    parts = [
        f"<p class='meta'>The last {STRIP_RUNS} runs of each test, oldest first;"
        " a test failing now shows the run and version its failures began with.</p>"
    ]
    for lane in lane_order:
        keys = sorted(test for (name, test) in history.timelines if name == lane)
        if not keys:
            continue
        rows = []
        for test in keys:
            verdict = history.verdicts.get((lane, test))
            since = first = age = ""
            if verdict is not None and verdict.failing_since is not None:
                streak = verdict.failing_since
                since = (
                    f"{e(streak.since_run)}<br><span class='meta'>{e(streak.since_version)},"
                    f" {streak.runs} runs</span>"
                )
                age = e(_age(streak.age))
            if verdict is not None and verdict.first_failed_run:
                first = e(verdict.first_failed_run)
            rows.append(
                f"<tr><td class='test'>{e(test)}</td>{_cell(verdict)}"
                f"<td>{_strip(history.timelines[(lane, test)])}</td>"
                f"<td>{since}</td><td>{age}</td><td>{first}</td></tr>"
            )
        parts.append(
            f"<h3>{e(lane)}</h3><table><tr><th>test</th><th>now</th><th>recent runs</th>"
            "<th>failing since</th><th>age</th><th>first failure</th></tr>\n"
            + "\n".join(rows)
            + "</table>"
        )
    return _page("History", "\n".join(parts))


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


def _chart(title: str, unit: str, runs: Sequence[str], series: Sequence[Series]) -> str:
    width, height, left, right, top, bottom = 380, 150, 52, 10, 10, 22
    values = [v for s in series for _, v in s.points]
    if not values:
        return ""
    low, high = min(0.0, min(values)), max(values)
    high = high if high > low else low + 1.0
    span_x = max(len(runs) - 1, 1)

    def x(i: int) -> float:
        return left + (width - left - right) * i / span_x

    def y(v: float) -> float:
        return top + (height - top - bottom) * (1 - (v - low) / (high - low))

    lines = []
    legend = []
    for index, s in enumerate(series):
        colour = _PALETTE[index % len(_PALETTE)]
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in s.points)
        lines.append(
            f"<polyline points='{points}' stroke='{colour}'><title>{e(s.target)}</title></polyline>"
        )
        legend.append(
            f"<text x='{left + 110 * (index % 3)}' y='{height + 10 + 12 * (index // 3)}'"
            f" fill='{colour}'>{e(s.target)}: {s.points[-1][1]:.6g}</text>"
        )
    total = height + 14 + 12 * ((len(series) - 1) // 3)
    first, final = runs[0], runs[-1]
    return (
        f"<figure class='chart'><figcaption>{e(title)}</figcaption>"
        f"<svg class='chart' xmlns='http://www.w3.org/2000/svg' width='{width}'"
        f" height='{total}' viewBox='0 0 {width} {total}' role='img' aria-label='{e(title)}'>"
        f"<line class='axis' x1='{left}' y1='{top}' x2='{left}' y2='{height - bottom}'/>"
        f"<line class='axis' x1='{left}' y1='{height - bottom}' x2='{width - right}'"
        f" y2='{height - bottom}'/>"
        f"<text x='2' y='{top + 8}'>{high:.6g}</text>"
        f"<text x='2' y='{height - bottom}'>{low:.6g} {e(unit)}</text>"
        f"<text x='{left}' y='{height - bottom + 12}'>{e(first)}</text>"
        f"<text x='{width - right}' y='{height - bottom + 12}' text-anchor='end'>{e(final)}</text>"
        + "".join(lines)
        + "".join(legend)
        + "</svg></figure>"
    )


def _trends_page(trends: Sequence[Trend]) -> str:
    if not trends:
        return _page("Trends", "<p class='meta'>No compile time or shared memory recorded.</p>")
    parts = [
        f"<p class='meta'>Compile time and shared memory of each kernel and config per lane,"
        f" over the lane's last {TREND_RUNS} runs; one line per target.</p>"
    ]
    for trend in trends:
        name = f"{trend.kernel} · {trend.config} · {trend.lane}"
        charts = _chart(f"{name}: compile time", "s", trend.runs, trend.compile_seconds)
        charts += _chart(f"{name}: shared memory", "B", trend.runs, trend.shared_bytes)
        parts.append(f"<h3>{e(name)}</h3><div class='charts'>{charts}</div>")
    return _page("Trends", "\n".join(parts))


# --------------------------------------------------------------------------------------
# failures/<key>.html


def _failure_page(history: History, verdict: Verdict, out: Path) -> str:
    failure = verdict.failure
    facts: list[tuple[str, str]] = [
        ("lane", e(verdict.lane)),
        ("run", e(verdict.run_id)),
        ("verdict", e(verdict.kind.value)),
    ]
    if verdict.new_failure:
        facts.append(("new", "failed now, passed in the lane's previous run"))
    if verdict.failing_since:
        streak = verdict.failing_since
        facts.append(
            (
                "failing since",
                f"{e(streak.since_run)} (version {e(streak.since_version)}),"
                f" {streak.runs} runs, {e(_age(streak.age))}",
            )
        )
    if verdict.flaky:
        facts.append(("flaky", "different outcomes on the same pins"))
    if verdict.regression_of:
        facts.append(
            ("FlagTree regression", f"passes on the baseline lane {e(verdict.regression_of)}")
        )
    if verdict.known_issue:
        issue = verdict.known_issue
        facts.append(
            (
                "known issue",
                f"{e(issue.id)}: {e(issue.title)}"
                f" <a href='{e(issue.upstream)}'>{e(issue.upstream)}</a>",
            )
        )
    body = [
        f"<p class='test'><code>{e(verdict.test)}</code></p>",
    ]
    if failure is not None:
        facts += [
            ("node", e(failure.node)),
            ("signature", e(failure.signature or "(none recorded)")),
            ("failure kind", e(failure.failure_kind or "(none recorded)")),
        ]
    body.append(
        "<dl class='facts'>" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts) + "</dl>"
    )
    body.append("<h3>Recent runs</h3>" + _strip(history.timelines[(verdict.lane, verdict.test)]))
    if failure is not None:
        body.append(f"<h3>Message</h3><pre>{e(failure.message)}</pre>")
        body.append(f"<h3>Diagnostics</h3><pre>{e(failure.details)}</pre>")
        page_dir = (out / "failures").resolve()
        links = []
        for path in failure.artifact_files:
            target = os.path.relpath(failure.run_dir / path, page_dir)
            href = "/".join(quote(part) for part in Path(target).as_posix().split("/"))
            links.append(f"<li><a href='{e(href)}'>{e(path)}</a></li>")
        body.append(
            "<h3>Reproducer files</h3>"
            + (f"<ul>{''.join(links)}</ul>" if links else "<p class='meta'>None recorded.</p>")
        )
    return _page(f"Failure: {verdict.lane}", "\n".join(body), depth=1)
