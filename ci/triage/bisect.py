"""Version bisection: one test across a family's lanes in release order.

The lane matrix lists each family's lanes in release order (not PEP 440 order: 0.6.1a1
came after 0.6.1 as the claimed fix). Every lane is run, since three to five lanes cost
less than a wrong answer from assuming the outcome flips once; the report names the first
bad lane, the last good lane before it and the first good lane after it.

Runs go through ``LaneRunner``: the local venv runner here, remote runners later.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ci import environment, process
from ci.errors import EnvironmentSetupError, FlagCIError
from ci.lanes import Lane, LaneMatrix


class Outcome(enum.StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    ERROR = "error"  # the lane could not run the test: not evidence either way


@dataclass(frozen=True)
class LaneResult:
    lane: str
    outcome: Outcome
    detail: str = ""


class LaneRunner(Protocol):
    def run_test(self, lane: Lane, test_id: str) -> LaneResult: ...


@dataclass(frozen=True)
class Bisection:
    family: str
    test_id: str
    results: tuple[LaneResult, ...]

    def _index(self, outcome: Outcome, start: int = 0) -> int | None:
        for i in range(start, len(self.results)):
            if self.results[i].outcome is outcome:
                return i
        return None

    @property
    def first_bad(self) -> str | None:
        i = self._index(Outcome.FAILED)
        return None if i is None else self.results[i].lane

    @property
    def first_good(self) -> str | None:
        """The first passing lane after the first bad one: where the failure is fixed."""
        bad = self._index(Outcome.FAILED)
        good = self._index(Outcome.PASSED, 0 if bad is None else bad + 1)
        return None if good is None else self.results[good].lane

    @property
    def last_good(self) -> str | None:
        """The last passing lane before the first bad one: where a regression came in."""
        bad = self._index(Outcome.FAILED)
        if bad is None:
            return None
        before = [r for r in self.results[:bad] if r.outcome is Outcome.PASSED]
        return before[-1].lane if before else None

    @property
    def verdict(self) -> str:
        if self.first_bad is None:
            ran = any(r.outcome is Outcome.PASSED for r in self.results)
            return "passes on every lane that ran" if ran else "no lane could run the test"
        parts = [f"first bad: {self.first_bad}"]
        if self.last_good:
            parts.append(f"last good before it: {self.last_good}")
        parts.append(f"first good: {self.first_good}" if self.first_good else "never fixed")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "test": self.test_id,
            "lanes": [
                {"lane": r.lane, "outcome": str(r.outcome), "detail": r.detail}
                for r in self.results
            ],
            "first_bad": self.first_bad,
            "last_good": self.last_good,
            "first_good": self.first_good,
            "verdict": self.verdict,
        }


def bisect(matrix: LaneMatrix, family: str, test_id: str, runner: LaneRunner) -> Bisection:
    results = []
    for lane in matrix.family(family):
        try:
            results.append(runner.run_test(lane, test_id))
        except FlagCIError as err:
            results.append(LaneResult(lane.name, Outcome.ERROR, str(err)))
    return Bisection(family, test_id, tuple(results))


# pytest's exit statuses: 0 passed, 1 tests failed, 5 nothing collected.
_PYTEST_OUTCOMES = {0: Outcome.PASSED, 1: Outcome.FAILED}


@dataclass(frozen=True)
class LocalVenvRunner:
    """Runs a pytest node id of ``suite`` in a venv holding exactly the lane's pins.

    Venvs and wheelhouses are those of ``ci.environment``, kept under ``work`` and reused
    while the lane's lock is unchanged.
    """

    matrix: LaneMatrix
    work: Path
    suite: Path
    timeout_s: float | None = None

    def environment(self, lane: Lane) -> Path:
        return environment.prepare(self.matrix, lane, self.work).python

    def run_test(self, lane: Lane, test_id: str) -> LaneResult:
        python = self.environment(lane)
        result = process.run(
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", test_id],
            error=EnvironmentSetupError,
            what=f"lane '{lane.name}': test {test_id}",
            cwd=self.suite,
            env={"TRITON_CACHE_DIR": str(self.work / "triton-cache" / lane.name)},
            capture=True,
            timeout=self.timeout_s,
            check=False,
        )
        tail = "\n".join((result.stdout or "").strip().splitlines()[-3:])
        outcome = _PYTEST_OUTCOMES.get(result.returncode, Outcome.ERROR)
        return LaneResult(lane.name, outcome, tail)


def render(bisection: Bisection) -> Sequence[str]:
    width = max((len(r.lane) for r in bisection.results), default=4)
    lines = [f"bisect {bisection.family} {bisection.test_id}"]
    for r in bisection.results:
        last = r.detail.strip().splitlines()[-1] if r.detail.strip() else ""
        lines.append(f"  {r.lane:<{width}}  {r.outcome:<7}  {last[:120]}")
    lines.append(bisection.verdict)
    return lines
