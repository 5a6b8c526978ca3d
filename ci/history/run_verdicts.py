"""What one run's verdicts mean: known failures are expected, the rest is news.

``of_run`` picks the verdicts of the lanes a run ran from the whole history; ``exit_error``
turns them into the error ``flagci run`` ends with (none when every failure is known); the
summary (``ci.publish.summary``), the webhook and the issue sync read the same groups.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ci.core.errors import (
    FixNotVerifiedError,
    LaneProblemError,
    NewFailureError,
    RegressionError,
    SlowerError,
    TestsFailedError,
    UnknownFailureError,
)
from ci.history.verdicts import FixCheck, FixStatus, History, Kind, Verdict


@dataclass(frozen=True)
class RunVerdicts:
    """The verdicts of one run's lanes, in groups; a verdict may be in several groups."""

    run_id: str
    verdicts: tuple[Verdict, ...]
    fix_checks: tuple[FixCheck, ...]

    def _where(self, keep: Callable[[Verdict], bool]) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if keep(v))

    @property
    def failing(self) -> tuple[Verdict, ...]:
        return self._where(lambda v: v.outcome == "failed")

    @property
    def known(self) -> tuple[Verdict, ...]:
        return self._where(lambda v: v.outcome == "failed" and v.known_issue is not None)

    @property
    def unknown(self) -> tuple[Verdict, ...]:
        """Failing because of the compiler, and the ledger does not know why."""
        return self._where(
            lambda v: (
                v.outcome == "failed" and v.known_issue is None and v.kind is not Kind.LANE_PROBLEM
            )
        )

    @property
    def lane_problems(self) -> tuple[Verdict, ...]:
        """Failing, but not because of the compiler (our harness, the node's toolchain)."""
        return self._where(lambda v: v.kind is Kind.LANE_PROBLEM)

    @property
    def new(self) -> tuple[Verdict, ...]:
        return self._where(lambda v: v.new_failure and v.known_issue is None)

    @property
    def regressions(self) -> tuple[Verdict, ...]:
        return self._where(lambda v: v.regression_of is not None and v.known_issue is None)

    @property
    def fixed(self) -> tuple[Verdict, ...]:
        return self._where(lambda v: v.fixed)

    @property
    def flaky(self) -> tuple[Verdict, ...]:
        return self._where(lambda v: v.flaky)

    @property
    def slower(self) -> tuple[Verdict, ...]:
        return self._where(lambda v: v.kind is Kind.SLOWER)

    @property
    def fixes_not_verified(self) -> tuple[FixCheck, ...]:
        return tuple(c for c in self.fix_checks if c.status is FixStatus.NOT_VERIFIED)

    @property
    def fixes_verified(self) -> tuple[FixCheck, ...]:
        return tuple(c for c in self.fix_checks if c.status is FixStatus.VERIFIED)


def of_run(history: History, run_id: str) -> RunVerdicts:
    """The verdicts of the lanes whose latest run is ``run_id``; fix checks on those lanes."""
    lanes = {name for name, info in history.lanes.items() if info.latest_run == run_id}
    verdicts = tuple(v for (lane, _), v in sorted(history.verdicts.items()) if lane in lanes)
    checks = tuple(c for c in history.fix_checks if set(c.lanes) & lanes)
    return RunVerdicts(run_id, verdicts, checks)


def exit_error(run: RunVerdicts) -> TestsFailedError | None:
    """The error the run ends with: the most urgent kind of news, or None if all is known."""
    if run.regressions:
        return RegressionError(
            f"run {run.run_id}: {len(run.regressions)} FlagTree regression(s)"
            " (fail on FlagTree, pass on the baseline)"
        )
    if run.new:
        return NewFailureError(f"run {run.run_id}: {len(run.new)} new failure(s)")
    if run.unknown:
        return UnknownFailureError(
            f"run {run.run_id}: {len(run.unknown)} failure(s) the known-issue ledger lacks"
        )
    if run.fixes_not_verified:
        names = ", ".join(f"{c.issue.id} in {c.version}" for c in run.fixes_not_verified)
        return FixNotVerifiedError(f"run {run.run_id}: claimed fix not verified: {names}")
    if run.slower:
        return SlowerError(f"run {run.run_id}: {len(run.slower)} perf test(s) SLOW")
    if run.lane_problems:
        return LaneProblemError(
            f"run {run.run_id}: {len(run.lane_problems)} failure(s) of the harness or the"
            " node's toolchain, not of a compiler"
        )
    return None
