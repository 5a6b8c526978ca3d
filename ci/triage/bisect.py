"""Version bisection: one test of the smoke suite across a family's lanes in release order.

The lane matrix lists each family's lanes in release order (not PEP 440 order: 0.6.1a1
came after 0.6.1 as the claimed fix): a vendor's family walks its compiler's releases, an
axis family (``cpu-vllm``) one package's, the rest of the stack the same on every lane.
Every lane is run, since three to five lanes cost less than a wrong answer from assuming
the outcome flips once; the report names the first bad lane, the last good lane before it
and the first good lane after it, each with its release (``vllm 0.33.0``).

The lanes run through any ``LaneExecutor`` (local venvs, local images, the family's nodes)
as one ordinary run (kind ``bisect``): JUnit, artifacts and ``run.json`` like any other, so
the history takes it. Each lane's outcome is read from its JUnit: the testcases the test id
names, on every node that ran the lane.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.table import Table

from ci.core import tables
from ci.core.errors import UsageError
from ci.lanes.matrix import LaneMatrix
from ci.results import reader
from ci.run import executors
from ci.smoke.contract import taxonomy


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
    release: str = ""  # what the family varies, as the lane has it: "vllm 0.33.0"


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

    def _named(self, lane: str | None) -> str | None:
        """A lane with the release it has: ``cpu-vllm-0.33.0 (vllm 0.33.0)``."""
        release = next((r.release for r in self.results if r.lane == lane), "")
        return f"{lane} ({release})" if lane and release else lane

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
        parts = [f"first bad: {self._named(self.first_bad)}"]
        if self.last_good:
            parts.append(f"last good before it: {self._named(self.last_good)}")
        parts.append(
            f"first good: {self._named(self.first_good)}" if self.first_good else "never fixed"
        )
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "test": self.test_id,
            "lanes": [
                {
                    "lane": r.lane,
                    "release": r.release,
                    "outcome": str(r.outcome),
                    "detail": r.detail,
                }
                for r in self.results
            ],
            "first_bad": self.first_bad,
            "last_good": self.last_good,
            "first_good": self.first_good,
            "verdict": self.verdict,
        }


@dataclass(frozen=True)
class CaseId:
    """A smoke suite test: ``[file.py::]name[params]``, as pytest names it."""

    module: str  # "" : any module
    name: str  # the function, with its parameters if given

    @classmethod
    def parse(cls, text: str) -> CaseId:
        path, sep, name = text.rpartition("::")
        if not name or (sep and not path):
            raise UsageError(f"--test: {text!r} is not a pytest test id ([file.py::]name)")
        return cls(Path(path).stem if path else "", name)

    @property
    def selection(self) -> tuple[str, ...]:
        """pytest arguments selecting it (its function: parameters are matched in JUnit)."""
        return ("-k", self.name.partition("[")[0])

    def names(self, case: reader.CaseResult) -> bool:
        module, _, name = case.test.rpartition("::")
        if self.module and module.rpartition(".")[2] != self.module:
            return False
        return name == self.name or ("[" not in self.name and name.startswith(f"{self.name}["))


def lane_result(result: reader.RunData, lane: str, test: CaseId) -> LaneResult:
    """A lane's outcome from the run's JUnit: failed if any named testcase failed on any
    node, passed if some passed, error if the lane could not run it at all. A failure that is
    not the compiler's (our harness, the node's toolchain or infrastructure) is no evidence:
    it makes the lane an error, never a bad version."""
    cases = [c for c in result.cases if c.lane == lane]
    broken = [c for c in cases if c.failure_kind in taxonomy.NOT_THE_COMPILER]
    named = [c for c in cases if test.names(c)]
    failed = [
        c
        for c in named
        if c.outcome in ("failed", "error") and c.failure_kind not in taxonomy.NOT_THE_COMPILER
    ]
    if failed:
        return LaneResult(lane, Outcome.FAILED, failed[0].message)
    if any(c.outcome == "passed" for c in named):
        return LaneResult(lane, Outcome.PASSED, f"{len(named)} testcase(s) passed")
    if broken:
        return LaneResult(lane, Outcome.ERROR, broken[0].message)
    if named:
        return LaneResult(lane, Outcome.SKIPPED, named[0].message)
    return LaneResult(lane, Outcome.ERROR, "the test id named no testcase of the lane")


def bisect(
    matrix: LaneMatrix,
    family: str,
    test_id: str,
    executor: executors.LaneExecutor,
    results_root: Path,
    made_in: reader.CIRunRecord | None = None,
) -> tuple[Bisection, reader.RunData]:
    """Run ``test_id`` in every lane of ``family`` through ``executor``: one run record."""
    test = CaseId.parse(test_id)
    lanes = matrix.family(family)
    request = executors.SuiteRequest(workers=1, pytest_args=test.selection)
    run = executors.run_lanes(
        executor, matrix, lanes, request, results_root, kind="bisect", made_in=made_in
    )
    results = tuple(
        replace(lane_result(run, lane.name, test), release=matrix.release(family, lane))
        for lane in lanes
    )
    return Bisection(family, test_id, results), run


def table(bisection: Bisection) -> Table:
    """One row per lane, in release order: its outcome and the last line of its detail."""
    shown = tables.table("lane", "release", "outcome", "last line")
    for r in bisection.results:
        last = r.detail.strip().splitlines()[-1] if r.detail.strip() else ""
        tables.add(shown, r.lane, r.release, r.outcome, last[:120])
    return shown
