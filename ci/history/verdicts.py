"""Verdicts per (lane, test) over the run history.

For the latest run of each lane that ran a test:

- outcome: passed, failed (a JUnit failure or error) or skipped;
- new failure: it fails now and passed in the lane's previous run of it;
- fixed: it passes now and failed in the lane's previous run of it;
- failing since: the run, the compiler version and the number of runs of the current
  streak of failures;
- flaky: different outcomes on the same pins: the nodes of one run disagree, or within the
  lane's recent runs on the latest pins one run's outcome differs from the runs on both
  sides of it (pass, fail, pass or fail, pass, fail). A failure that lasts two runs or more
  and then passes is a failure and its fix, not flakiness;
- FlagTree regression: it fails on a FlagTree lane and passes on that lane's baseline lane
  in the same run;
- baseline not applicable: the baseline lane failed the test in the same run for a reason of
  its own Triton, a Triton API it lacks (``AttributeError: module 'triton.language' has no
  attribute 'make_tensor_descriptor'`` on upstream 3.2): FlagTree against that baseline
  cannot be decided for the test, so it is neither a FlagTree regression nor a fix, and the
  verdict says so;
- known issue: the failure matches the known-issue ledger. A known failure is shown as
  known, not as new;
- slower: a perf test (one that records ``perf_ms``) took longer than the median of the
  lane's last PERF_WINDOW earlier runs of it on the same GPU model by more than those runs'
  own spread (their largest distance from that median), so the threshold is the noise the
  history measured, not a guess. It needs PERF_MIN_RUNS earlier runs on that GPU model.

Skipped runs of a test neither start nor break a streak.

Everything here is computed from ``Observations`` in memory: the history store
(``ci.history.store``) reads them from the database, and a single run folder gives them too.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from statistics import median
from typing import Literal

from ci.history.ledger import KnownIssue, Ledger
from ci.results.reader import ARTIFACTS_ANCHOR, LaneRecord
from ci.smoke.contract import taxonomy

FLAKY_WINDOW = 20
PERF_WINDOW = 10
PERF_MIN_RUNS = 3

Outcome = Literal["passed", "failed", "skipped"]

# A name the kernel uses that a Triton release lacks: an attribute of one of Triton's
# modules, or an import from one.
_MISSING_API = re.compile(
    r"module '(?P<module>triton[\w.]*)' has no attribute '(?P<name>\w+)'"
    r"|cannot import name '(?P<imported>\w+)' from '(?P<origin>triton[\w.]*)'"
)


class Kind(StrEnum):
    """What a grid cell says, most important first."""

    KNOWN = "known issue"
    FLAKY = "flaky"
    NEW_FAILURE = "new failure"
    FAILING = "failing"
    # Failed, but not because of the compiler: our harness, or the node's toolchain
    # (ci.smoke.contract.taxonomy.NOT_THE_COMPILER). Never a new failure or a FlagTree regression.
    LANE_PROBLEM = "lane problem"
    SLOWER = "slower"
    FIXED = "fixed"
    PASSED = "passed"
    SKIPPED = "skipped"


class FixStatus(StrEnum):
    VERIFIED = "fix verified"
    NOT_VERIFIED = "claimed fix not verified"
    NOT_TESTED = "claimed fix not tested yet"


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    started: datetime
    run_dir: Path
    kind: str
    status: str
    # The CI run's artifacts, where the run's files are kept ("": in run_dir).
    artifacts_url: str = ""

    @property
    def ci_url(self) -> str:
        """The CI run that made the run, its jobs and logs ("": not made in CI)."""
        return self.artifacts_url.removesuffix(ARTIFACTS_ANCHOR)


@dataclass(frozen=True)
class LaneInfo:
    """A lane as recorded in its latest run."""

    lane: str
    vendor: str
    family: str
    baseline: str | None
    package: str
    version: str
    latest_run: str


@dataclass(frozen=True)
class LaneRun:
    """A lane as one run recorded it."""

    run_id: str
    lane: str
    vendor: str
    family: str
    baseline: str | None
    package: str
    version: str
    pins_digest: str

    @classmethod
    def of(cls, run_id: str, name: str, lane: LaneRecord) -> LaneRun:
        """Lane ``name`` as run ``run_id``'s ``run.json`` records it (a lane of no family is a
        family of its own vendor)."""
        return cls(
            run_id,
            name,
            lane.vendor,
            lane.family or lane.vendor,
            lane.baseline,
            lane.compiler.package,
            lane.compiler.version,
            lane.pins_digest,
        )


@dataclass(frozen=True)
class ResultRow:
    """The outcome of one testcase on one node in one run."""

    run_id: str
    lane: str
    node: str
    test: str
    outcome: str  # passed | failed | error | skipped


PerfRow = tuple[str, str, str, str, float]  # run, lane, test, GPU model, ms


@dataclass(frozen=True)
class Observation:
    """A test in one run of one lane, its nodes' outcomes combined."""

    run_id: str
    outcome: Outcome
    nodes_disagree: bool
    pins_digest: str
    version: str


@dataclass(frozen=True)
class Streak:
    since_run: str
    since_version: str
    runs: int
    age: timedelta


@dataclass(frozen=True)
class FailureRecord:
    """What a failing testcase reported, from the node that failed first."""

    node: str
    outcome: str
    message: str
    details: str
    signature: str
    failure_kind: str
    artifacts: str
    artifact_files: tuple[str, ...]
    run_dir: Path
    # The CI run's artifacts, where artifact_files are kept ("": under run_dir).
    artifacts_url: str = ""
    # The signature's summary: what triage found, and whether the kind is only a guess.
    triage: str = ""

    @property
    def text(self) -> str:
        return f"{self.message}\n{self.details}"


@dataclass(frozen=True)
class Observations:
    """What the verdicts are computed from; ``runs`` in order of start."""

    runs: tuple[RunInfo, ...]
    lane_runs: tuple[LaneRun, ...]
    results: tuple[ResultRow, ...]
    perf: tuple[PerfRow, ...] = ()
    # The failing testcases of each lane's latest run, by (lane, test).
    failures: Mapping[tuple[str, str], FailureRecord] = field(default_factory=dict)


@dataclass(frozen=True)
class PerfCheck:
    """A perf test's latest time against the lane's earlier runs on the same GPU model."""

    gpu: str
    ms: float
    median_ms: float
    spread_ms: float
    runs: int

    @property
    def slower(self) -> bool:
        return self.ms - self.median_ms > self.spread_ms

    @property
    def change_pct(self) -> float:
        return 100.0 * (self.ms / self.median_ms - 1.0)


@dataclass(frozen=True)
class Verdict:
    lane: str
    test: str
    run_id: str
    outcome: Outcome
    kind: Kind
    new_failure: bool
    fixed: bool
    flaky: bool
    failing_since: Streak | None
    first_failed_run: str | None
    regression_of: str | None
    known_issue: KnownIssue | None
    failure: FailureRecord | None
    perf: PerfCheck | None = None
    # Why FlagTree against the baseline cannot be decided for this test ("": it can).
    baseline_not_applicable: str = ""

    @property
    def signature(self) -> str:
        """What groups failures of one cause: the recorded signature; without one, the
        failure kind and the first line of the message."""
        failure = self.failure
        if failure is None:
            return f"unclassified|{self.test}"
        if failure.signature:
            return failure.signature
        first = (failure.message or failure.details).strip().splitlines()[:1]
        return f"{failure.failure_kind or taxonomy.UNCLASSIFIED}|{first[0][:200] if first else ''}"


@dataclass(frozen=True)
class FixCheck:
    """A fix claimed for a known issue, checked against the lanes at that version."""

    issue: KnownIssue
    version: str
    status: FixStatus
    lanes: tuple[str, ...]
    passed: int
    failed: int
    still_known: int


@dataclass(frozen=True)
class History:
    runs: tuple[RunInfo, ...]
    lanes: dict[str, LaneInfo]
    timelines: dict[tuple[str, str], tuple[Observation, ...]]
    verdicts: dict[tuple[str, str], Verdict]
    fix_checks: tuple[FixCheck, ...]
    runs_of_lane: dict[str, tuple[str, ...]] = field(default_factory=dict)  # in order of start

    @property
    def latest_run(self) -> RunInfo | None:
        return self.runs[-1] if self.runs else None

    def run(self, run_id: str) -> RunInfo:
        return self._runs_by_id[run_id]

    @cached_property
    def _runs_by_id(self) -> dict[str, RunInfo]:
        return {r.run_id: r for r in self.runs}

    def tests_of(self, lanes: Iterable[str]) -> list[str]:
        wanted = set(lanes)
        return sorted({test for lane, test in self.verdicts if lane in wanted})


def latest_runs(runs: Iterable[RunInfo], lane_runs: Iterable[LaneRun]) -> dict[str, str]:
    """The latest run of each lane (runs in order of start)."""
    order = {run.run_id: i for i, run in enumerate(runs)}
    latest: dict[str, str] = {}
    for row in sorted(lane_runs, key=lambda r: order[r.run_id]):
        latest[row.lane] = row.run_id
    return latest


def evaluate(observations: Observations, ledger: Ledger) -> History:
    """Every verdict and fix check of the history ``observations`` describe."""
    runs = observations.runs
    order = {run.run_id: i for i, run in enumerate(runs)}
    started = {run.run_id: run.started for run in runs}

    lane_runs: dict[tuple[str, str], tuple[str, str]] = {}  # (run, lane) -> (pins, version)
    lanes: dict[str, LaneInfo] = {}
    runs_of_lane: dict[str, list[str]] = defaultdict(list)
    for row in sorted(observations.lane_runs, key=lambda r: order[r.run_id]):
        lane_runs[(row.run_id, row.lane)] = (row.pins_digest, row.version)
        runs_of_lane[row.lane].append(row.run_id)
        lanes[row.lane] = LaneInfo(
            row.lane, row.vendor, row.family, row.baseline, row.package, row.version, row.run_id
        )

    timelines = _timelines(observations.results, order, lane_runs)
    perf_checks = _perf_checks(observations.perf, order, lanes)
    verdicts: dict[tuple[str, str], Verdict] = {}
    for (lane, test), timeline in timelines.items():
        info = lanes[lane]
        if timeline[-1].run_id != info.latest_run:
            continue  # the lane's latest run no longer has this test
        failure = observations.failures.get((lane, test))
        verdicts[(lane, test)] = _verdict(
            lane, test, timeline, info, started, failure, ledger, timelines
        )
        not_applicable = _baseline_not_applicable(info, test, lanes, observations.failures)
        if not_applicable:
            verdicts[(lane, test)] = replace(
                verdicts[(lane, test)], baseline_not_applicable=not_applicable
            )
        perf = perf_checks.get((lane, test))
        if perf is not None:
            verdicts[(lane, test)] = _with_perf(verdicts[(lane, test)], perf)
    fix_checks = tuple(_fix_checks(ledger, lanes, verdicts))
    return History(
        runs,
        lanes,
        timelines,
        verdicts,
        fix_checks,
        {lane: tuple(ids) for lane, ids in runs_of_lane.items()},
    )


def _timelines(
    results: Iterable[ResultRow],
    order: dict[str, int],
    lane_runs: dict[tuple[str, str], tuple[str, str]],
) -> dict[tuple[str, str], tuple[Observation, ...]]:
    outcomes: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for row in results:
        outcomes[(row.lane, row.test, row.run_id)].append(row.outcome)
    timelines: dict[tuple[str, str], list[Observation]] = defaultdict(list)
    for (lane, test, run_id), node_outcomes in outcomes.items():
        pins, version = lane_runs[(run_id, lane)]
        combined, disagree = _combine(node_outcomes)
        timelines[(lane, test)].append(Observation(run_id, combined, disagree, pins, version))
    return {
        key: tuple(sorted(observations, key=lambda o: order[o.run_id]))
        for key, observations in timelines.items()
    }


def _perf_checks(
    perf: Iterable[PerfRow], order: dict[str, int], lanes: dict[str, LaneInfo]
) -> dict[tuple[str, str], PerfCheck]:
    """The perf check of every (lane, test) with a time in its lane's latest run."""
    times: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    for run_id, lane, test, gpu, ms in perf:
        times[(lane, test, gpu, run_id)].append(ms)
    series: dict[tuple[str, str], list[tuple[int, str, float]]] = defaultdict(list)
    for (lane, test, gpu, run_id), node_times in times.items():
        # Nodes of one run with the same GPU model: one figure, their median.
        series[(lane, test)].append((order[run_id], gpu, median(node_times)))
    checks: dict[tuple[str, str], PerfCheck] = {}
    for (lane, test), points in series.items():
        points.sort()
        latest_order, gpu, ms = points[-1]
        if latest_order != order[lanes[lane].latest_run]:
            continue
        earlier = [t for _, g, t in points[:-1] if g == gpu]
        band = perf_band(earlier)
        if band is not None:
            mid, spread = band
            checks[(lane, test)] = PerfCheck(gpu, ms, mid, spread, min(len(earlier), PERF_WINDOW))
    return checks


def perf_band(earlier: Sequence[float]) -> tuple[float, float] | None:
    """(median, spread) of the last PERF_WINDOW of ``earlier`` times (one GPU model, in
    order of run): what the next time is judged against, SLOW above median + spread. None
    with fewer than PERF_MIN_RUNS."""
    window = list(earlier[-PERF_WINDOW:])
    if len(window) < PERF_MIN_RUNS:
        return None
    mid = median(window)
    return mid, max(abs(t - mid) for t in window)


def _with_perf(verdict: Verdict, perf: PerfCheck) -> Verdict:
    kind = Kind.SLOWER if perf.slower and verdict.kind is Kind.PASSED else verdict.kind
    return replace(verdict, perf=perf, kind=kind)


def _combine(node_outcomes: list[str]) -> tuple[Outcome, bool]:
    failed = sum(1 for o in node_outcomes if o in ("failed", "error"))
    passed = sum(1 for o in node_outcomes if o == "passed")
    if failed:
        return "failed", passed > 0
    if passed:
        return "passed", False
    return "skipped", False


def _verdict(
    lane: str,
    test: str,
    timeline: tuple[Observation, ...],
    info: LaneInfo,
    started: dict[str, datetime],
    failure: FailureRecord | None,
    ledger: Ledger,
    timelines: dict[tuple[str, str], tuple[Observation, ...]],
) -> Verdict:
    now = timeline[-1]
    ran = [o for o in timeline if o.outcome != "skipped"]
    previous = ran[-2] if len(ran) >= 2 and now.outcome != "skipped" else None
    new_failure = now.outcome == "failed" and previous is not None and previous.outcome == "passed"
    fixed = now.outcome == "passed" and previous is not None and previous.outcome == "failed"
    flaky = _flaky(timeline)
    streak = _streak(ran, started) if now.outcome == "failed" else None
    first_failed = next((o.run_id for o in ran if o.outcome == "failed"), None)
    known = None
    regression_of = None
    not_the_compiler = (
        now.outcome == "failed"
        and failure is not None
        and failure.failure_kind in taxonomy.NOT_THE_COMPILER
    )
    if not_the_compiler:
        new_failure = False
    elif now.outcome == "failed":
        signature = failure.signature if failure else ""
        text = failure.text if failure else ""
        known = ledger.match(info.vendor, info.version, signature, text, test)
        regression_of = _regression_of(info, test, now.run_id, timelines)
    kind = (
        Kind.LANE_PROBLEM
        if not_the_compiler
        else _kind(now.outcome, known is not None, flaky, new_failure, fixed)
    )
    return Verdict(
        lane=lane,
        test=test,
        run_id=now.run_id,
        outcome=now.outcome,
        kind=kind,
        new_failure=new_failure,
        fixed=fixed,
        flaky=flaky,
        failing_since=streak,
        first_failed_run=first_failed,
        regression_of=regression_of,
        known_issue=known,
        failure=failure,
    )


def _kind(outcome: Outcome, known: bool, flaky: bool, new_failure: bool, fixed: bool) -> Kind:
    if outcome == "skipped":
        return Kind.SKIPPED
    if outcome == "failed":
        if known:
            return Kind.KNOWN
        if flaky:
            return Kind.FLAKY
        return Kind.NEW_FAILURE if new_failure else Kind.FAILING
    if flaky:
        return Kind.FLAKY
    return Kind.FIXED if fixed else Kind.PASSED


def _flaky(timeline: tuple[Observation, ...]) -> bool:
    pins = timeline[-1].pins_digest
    recent = [o for o in timeline[-FLAKY_WINDOW:] if o.pins_digest == pins]
    if any(o.nodes_disagree for o in recent):
        return True
    outcomes = [o.outcome for o in recent if o.outcome != "skipped"]
    return any(
        before == after != middle
        for before, middle, after in zip(outcomes, outcomes[1:], outcomes[2:], strict=False)
    )


def _streak(ran: list[Observation], started: dict[str, datetime]) -> Streak:
    count = 0
    for observation in reversed(ran):
        if observation.outcome != "failed":
            break
        count += 1
    first = ran[-count]
    age = started[ran[-1].run_id] - started[first.run_id]
    return Streak(first.run_id, first.version, count, age)


def _regression_of(
    info: LaneInfo,
    test: str,
    run_id: str,
    timelines: dict[tuple[str, str], tuple[Observation, ...]],
) -> str | None:
    if info.package != "flagtree" or not info.baseline:
        return None
    for observation in reversed(timelines.get((info.baseline, test), ())):
        if observation.run_id == run_id:
            return info.baseline if observation.outcome == "passed" else None
    return None


def missing_triton_api(text: str) -> str:
    """The Triton API a failure says its Triton lacks (``triton.language.make_tensor_descriptor``),
    or ""."""
    match = _MISSING_API.search(text)
    if match is None:
        return ""
    if match["name"]:
        return f"{match['module']}.{match['name']}"
    return f"{match['origin']}.{match['imported']}"


def _baseline_not_applicable(
    info: LaneInfo,
    test: str,
    lanes: dict[str, LaneInfo],
    failures: Mapping[tuple[str, str], FailureRecord],
) -> str:
    """Why FlagTree's result against the baseline's cannot be decided: the baseline failed
    the test in the same run for want of a Triton API ("" otherwise)."""
    if info.package != "flagtree" or not info.baseline:
        return ""
    baseline = lanes.get(info.baseline)
    failure = failures.get((info.baseline, test))
    if baseline is None or failure is None or baseline.latest_run != info.latest_run:
        return ""
    api = missing_triton_api(failure.text)
    if not api:
        return ""
    return f"not applicable: baseline {info.baseline} ({baseline.version}) lacks {api}"


def _fix_checks(
    ledger: Ledger, lanes: dict[str, LaneInfo], verdicts: dict[tuple[str, str], Verdict]
) -> Iterable[FixCheck]:
    for issue in ledger.issues:
        for version in issue.claimed_fixes:
            at_version = sorted(
                name
                for name, info in lanes.items()
                if info.version == version and issue.applies_to(info.vendor)
            )
            checked = [
                v
                for (lane, test), v in verdicts.items()
                if lane in at_version and issue.tests_re.search(test) and v.outcome != "skipped"
            ]
            failed = [v for v in checked if v.outcome == "failed"]
            passed = len(checked) - len(failed)
            if not checked:
                status = FixStatus.NOT_TESTED
            elif failed:
                status = FixStatus.NOT_VERIFIED
            else:
                status = FixStatus.VERIFIED
            still_known = sum(1 for v in failed if v.known_issue == issue)
            yield FixCheck(
                issue, version, status, tuple(at_version), passed, len(failed), still_known
            )
