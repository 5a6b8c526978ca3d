"""The Markdown summary of a run: what is new, fixed, still failing, known, flaky, slower,
and each tuning gap (``ci.history.tuning``) above the set ratio.

Written after every run to ``<run>/summary.md`` and, when GitHub Actions sets
``$GITHUB_STEP_SUMMARY`` (the command hands its path in), appended to the job's summary.
Each failing test links to its failure page on the dashboard.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from ci.core import atomic
from ci.core.errors import FlagCIError
from ci.history.run_verdicts import RunOutcome
from ci.history.tuning import GAP_RATIO, TuningGap
from ci.history.verdicts import Verdict

FILE_NAME = "summary.md"
MAX_ROWS = 50  # per section; the rest is counted

Link = Callable[[Verdict], str]


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell (one line, no column breaks, no markup)."""
    line = " ".join(text.split())
    for char in "\\|*_`[]<>#":
        line = line.replace(char, "\\" + char)
    return line[:200]


def _first_line(verdict: Verdict) -> str:
    """The failure in one line: what triage found where the lane wrote it (the pass, the
    diagnostic, a guess marked as one), else the message's first line."""
    failure = verdict.failure
    if failure is None:
        return ""
    if failure.triage:
        return failure.triage
    lines = (failure.message or failure.details).strip().splitlines()
    return lines[0] if lines else ""


def _section(
    title: str, verdicts: Iterable[Verdict], link: Link, note: Callable[[Verdict], str]
) -> list[str]:
    rows = list(verdicts)
    if not rows:
        return []
    out = [f"### {title} ({len(rows)})", "", "| lane | test | |", "| --- | --- | --- |"]
    for verdict in rows[:MAX_ROWS]:
        name = (
            f"[{_cell(verdict.test)}]({link(verdict)})"
            if verdict.outcome == "failed"
            else (_cell(verdict.test))
        )
        out.append(f"| {_cell(verdict.lane)} | {name} | {_cell(note(verdict))} |")
    if len(rows) > MAX_ROWS:
        out.append(f"| | … and {len(rows) - MAX_ROWS} more | |")
    return [*out, ""]


def _since(verdict: Verdict) -> str:
    streak = verdict.failing_since
    if streak is None:
        return _first_line(verdict)
    return (
        f"since {streak.since_run} ({streak.since_version}), {streak.runs} runs:"
        f" {_first_line(verdict)}"
    )


def _state(error: FlagCIError) -> str:
    return f"**{type(error).__name__}** (exit {error.exit_code}): {' '.join(str(error).split())}"


def render(
    outcome: RunOutcome, link: Link, tuning: tuple[Sequence[TuningGap], float] = ((), GAP_RATIO)
) -> str:
    """The summary of a run's outcome; ``link`` gives a failing verdict's failure page;
    ``tuning``: the run's tuning gaps and the ratio above which one is shown."""
    run = outcome.verdicts
    failing = len(run.failing)
    known = len(run.known)
    if outcome.error is None:
        state = (
            f"**OK**: every failure is known ({known} known)."
            if failing
            else "**OK**: nothing failed."
        )
    else:
        state = _state(outcome.error)
    out = [
        f"## flagci run {run.run_id}",
        "",
        state,
        "",
        *(f"- also {_state(error)}" for error in outcome.errors[1:]),
        *([""] if len(outcome.errors) > 1 else []),
        f"{len(run.verdicts)} tests; {failing} failing, of which {known} known;"
        f" {len(run.new)} new, {len(run.fixed)} fixed, {len(run.flaky)} flaky,"
        f" {len(run.slower)} slower.",
        "",
    ]
    if outcome.could_not_run:
        out += [f"### Could not run ({len(outcome.could_not_run)})", ""]
        out += [f"- {_cell(part)}" for part in outcome.could_not_run] + [""]
    out += _section(
        "FlagTree regressions",
        run.regressions,
        link,
        lambda v: f"passes on {v.regression_of}: {_first_line(v)}",
    )
    out += _section(
        "Baseline not applicable",
        run.baseline_not_applicable,
        link,
        lambda v: v.baseline_not_applicable,
    )
    out += _section("New failures", run.new, link, _first_line)
    still = [v for v in run.unknown if not v.new_failure]
    out += _section("Failing, not in the ledger", still, link, _since)
    out += _section("Fixed", run.fixed, link, lambda v: "passes now, failed before")
    out += _section(
        "Known",
        run.known,
        link,
        lambda v: f"{v.known_issue.id}: {v.known_issue.upstream}" if v.known_issue else "",
    )
    out += _section("Flaky", run.flaky, link, lambda v: "different outcomes on the same pins")
    out += _section(
        "Slower",
        run.slower,
        link,
        lambda v: (
            f"{v.perf.ms:.4f} ms, {v.perf.change_pct:+.1f}% against {v.perf.median_ms:.4f} ms"
            f" on {v.perf.gpu}"
            if v.perf
            else ""
        ),
    )
    gaps, ratio = tuning
    shown = [gap for gap in gaps if gap.ratio > ratio]
    if shown:
        out += [
            f"### Tuning gap over {ratio:g}x ({len(shown)})",
            "",
            "| lane | kernel · shape | launcher | best config | gap |",
            "| --- | --- | --- | --- | --- |",
        ]
        out += [
            f"| {_cell(g.lane)} | {_cell(g.kernel)} · {_cell(g.shape)} | {g.launcher_ms:.3f} ms"
            f" | {_cell(g.best_config)}: {g.best_ms:.3f} ms | {g.ratio:.1f}x |"
            for g in shown
        ]
        out.append("")
    if run.fix_checks:
        out += ["### Claimed fixes", "", "| issue | version | status |", "| --- | --- | --- |"]
        out += [
            f"| {_cell(c.issue.id)} | {_cell(c.version)} | {c.status.value} |"
            for c in run.fix_checks
        ]
        out.append("")
    return "\n".join(out)


def write(run_dir: Path, text: str, step_summary: Path | None = None) -> Path:
    """``<run>/summary.md``, and the job summary (``$GITHUB_STEP_SUMMARY``) when GitHub
    Actions asks for one."""
    path = run_dir / FILE_NAME
    atomic.write_text(path, text)
    if step_summary is not None:
        with step_summary.open("a", encoding="utf-8") as handle:
            handle.write(text + "\n")
    return path
