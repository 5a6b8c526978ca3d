"""What the dashboard's overview says, shaped from the history: pure values, no HTML.

Three answers, in the order a person reading the page in the morning asks them:

- ``lane_rows``: is every lane alive? One row per lane: its latest run, how long ago, its
  counts and test time, and ``stale`` when it has not reported for longer than a set time.
- ``news``: what broke? The failures of each lane's latest run grouped by signature, each
  group ranked by the most important thing one of its failures says (``NEWS_ORDER``).
- ``nights``: since when? The last nights as rows, the lanes as columns, a cell per lane
  that ran that night.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from ci.history.ledger import KnownIssue
from ci.history.verdicts import FixStatus, History, Kind, RunInfo, Verdict

STALE_AFTER = timedelta(hours=36)  # a nightly lane silent this long has stopped reporting
NIGHTS = 14

# What a failure says, most important first: a group of failures is ranked by its first.
NEWS_ORDER = (
    "FlagTree regression",
    "new failure",
    "claimed fix not verified",
    "failing",
    "lane problem",
    "flaky",
    "known issue",
)


@dataclass(frozen=True)
class LaneRow:
    lane: str
    vendor: str
    compiler: str
    run: RunInfo
    age: timedelta
    stale: bool
    passed: int
    failed: int  # failures the ledger does not know
    known: int
    skipped: int
    seconds: float | None  # the lane's summed test time in that run (None: not recorded)


@dataclass(frozen=True)
class NewsGroup:
    """Failures of one signature, ranked by the most important of them."""

    what: str  # an entry of NEWS_ORDER
    signature: str
    verdicts: tuple[Verdict, ...]  # by lane, then test
    known: KnownIssue | None

    @property
    def rank(self) -> int:
        return NEWS_ORDER.index(self.what)

    @property
    def triage(self) -> str:
        """What triage found, in one line: the first of the group's failures that has it."""
        return next((v.failure.triage for v in self.verdicts if v.failure and v.failure.triage), "")


@dataclass(frozen=True)
class NightCell:
    passed: int
    failed: int
    skipped: int

    @property
    def css(self) -> str:
        if self.failed:
            return "o-failed"
        return "o-passed" if self.passed else "o-skipped"


@dataclass(frozen=True)
class Night:
    run: RunInfo
    cells: tuple[NightCell | None, ...]  # one per lane of the overview, None: did not run


@dataclass(frozen=True)
class Overview:
    lanes: tuple[str, ...]
    lane_rows: tuple[LaneRow, ...]
    news: tuple[NewsGroup, ...]
    nights: tuple[Night, ...]  # newest first


def news_of(verdict: Verdict, unverified: Callable[[Verdict], bool]) -> str | None:
    """What a failing verdict says (an entry of NEWS_ORDER); None for a test not failing."""
    if verdict.outcome != "failed":
        return None
    if verdict.regression_of:
        return "FlagTree regression"
    if verdict.kind is Kind.NEW_FAILURE:
        return "new failure"
    if unverified(verdict):
        return "claimed fix not verified"
    return {
        Kind.FAILING: "failing",
        Kind.LANE_PROBLEM: "lane problem",
        Kind.FLAKY: "flaky",
        Kind.KNOWN: "known issue",
    }[verdict.kind]


def overview(
    history: History,
    lanes: Sequence[str],
    seconds: Mapping[tuple[str, str], float],
    *,
    now: datetime,
    stale_after: timedelta = STALE_AFTER,
    nights: int = NIGHTS,
) -> Overview:
    """The overview of ``lanes`` (in their display order) at the moment ``now``;
    ``seconds``: the summed test time of each (run, lane)."""
    return Overview(
        tuple(lanes),
        tuple(_lane_row(history, lane, seconds, now, stale_after) for lane in lanes),
        tuple(_news(history, lanes)),
        tuple(_nights(history, lanes, nights)),
    )


def _lane_row(
    history: History,
    lane: str,
    seconds: Mapping[tuple[str, str], float],
    now: datetime,
    stale_after: timedelta,
) -> LaneRow:
    info = history.lanes[lane]
    run = history.run(info.latest_run)
    kinds = [v.kind for (name, _), v in history.verdicts.items() if name == lane]
    outcomes = [v.outcome for (name, _), v in history.verdicts.items() if name == lane]
    age = now - run.started
    return LaneRow(
        lane=lane,
        vendor=info.vendor,
        compiler=f"{info.package} {info.version}",
        run=run,
        age=age,
        stale=age > stale_after,
        passed=outcomes.count("passed"),
        failed=outcomes.count("failed") - kinds.count(Kind.KNOWN),
        known=kinds.count(Kind.KNOWN),
        skipped=outcomes.count("skipped"),
        seconds=seconds.get((run.run_id, lane)),
    )


def _news(history: History, lanes: Sequence[str]) -> list[NewsGroup]:
    unverified_at = {
        (check.issue.id, lane)
        for check in history.fix_checks
        if check.status is FixStatus.NOT_VERIFIED
        for lane in check.lanes
    }

    def unverified(verdict: Verdict) -> bool:
        issue = verdict.known_issue
        return issue is not None and (issue.id, verdict.lane) in unverified_at

    wanted = set(lanes)
    by_signature: dict[str, list[tuple[str, Verdict]]] = defaultdict(list)
    for (lane, _), verdict in sorted(history.verdicts.items()):
        what = news_of(verdict, unverified)
        if lane in wanted and what is not None:
            by_signature[verdict.signature].append((what, verdict))
    groups = [
        NewsGroup(
            min((what for what, _ in said), key=NEWS_ORDER.index),
            signature,
            tuple(v for _, v in said),
            next((v.known_issue for _, v in said if v.known_issue), None),
        )
        for signature, said in by_signature.items()
    ]
    return sorted(groups, key=lambda g: (g.rank, -len(g.verdicts), g.signature))


def _nights(history: History, lanes: Sequence[str], count: int) -> list[Night]:
    recent = history.runs[-count:] if count > 0 else ()
    wanted = {run.run_id for run in recent}
    tally: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for (lane, _), timeline in history.timelines.items():
        for observation in timeline:
            if observation.run_id in wanted:
                tally[(observation.run_id, lane)][observation.outcome] += 1
    nights = []
    for run in reversed(recent):
        cells = tuple(
            NightCell(counts["passed"], counts["failed"], counts["skipped"])
            if (counts := tally.get((run.run_id, lane)))
            else None
            for lane in lanes
        )
        if any(cells):
            nights.append(Night(run, cells))
    return nights
