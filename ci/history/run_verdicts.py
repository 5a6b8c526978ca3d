"""What one run's verdicts mean: known failures are expected, the rest is news.

``of_run`` picks the verdicts of the lanes a run ran from the whole history. ``RunOutcome``
is how the run ends, decided once from its parts (could every lane run?), its verdicts and
its post-run steps: the summary (``ci.publish.summary``), the job summary, the webhook and
``flagci run``'s exit status all render that one value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ci.core.errors import (
    FixNotVerifiedError,
    FlagCIError,
    InfrastructureError,
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
    def baseline_not_applicable(self) -> tuple[Verdict, ...]:
        """FlagTree against its baseline cannot be decided: the baseline's Triton lacks an API."""
        return self._where(lambda v: bool(v.baseline_not_applicable))

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


def _verdict_error(run: RunVerdicts) -> TestsFailedError | None:
    """The most urgent kind of news among the verdicts, or None if all is known."""
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


@dataclass(frozen=True)
class RunOutcome:
    """How a run ends: what could not run, its verdicts, the post-run steps that failed.

    ``error`` is the one error the run ends with (None: exit 0): a lane that could not run
    outranks every verdict (the run is incomplete), a verdict outranks a failed post-run
    step (the news is the run's, the post only carries it).
    """

    verdicts: RunVerdicts
    could_not_run: tuple[str, ...] = ()  # "node/lane: why", one per part that could not run
    post_failures: tuple[FlagCIError, ...] = ()

    @property
    def run_id(self) -> str:
        return self.verdicts.run_id

    @property
    def errors(self) -> tuple[FlagCIError, ...]:
        """Every error of the run, the one it ends with first."""
        found: list[FlagCIError] = []
        if self.could_not_run:
            found.append(
                InfrastructureError(
                    f"run {self.run_id}: {len(self.could_not_run)} part(s) could not run"
                )
            )
        verdict = _verdict_error(self.verdicts)
        if verdict is not None:
            found.append(verdict)
        return (*found, *self.post_failures)

    @property
    def error(self) -> FlagCIError | None:
        errors = self.errors
        return errors[0] if errors else None

    @property
    def exit_code(self) -> int:
        return self.error.exit_code if self.error else 0
