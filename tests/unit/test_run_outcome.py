"""One outcome per run: ``flagci run``'s exit status is the one its summary.md states.

Each test runs ``flagci run`` through ``ci.cli.main`` with a stand-in executor (it writes
each part's JUnit, or reports that the part could not run), then holds the exit status
against the summary's first line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from ci.cli import main
from ci.history.store import Store
from ci.lanes.matrix import Lane
from ci.run import executors, record
from tests.fixtures.history_runs import Case, junit_xml, write_run

FT = "iluvatar-flagtree-0.6.0"
NV = "nvidia-triton-3.6.0"
CUDA_TARGET = (
    "RuntimeError: 0 compatible backends for target (cuda) ([]). There should only be one."
)
KNOWN = Case(FT, "test_backends::test_inductor_target", "failed", CUDA_TARGET)


@dataclass(frozen=True)
class StandIn:
    """Writes each (node, lane) part's JUnit; a node listed in ``lost`` could not run."""

    cases: tuple[Case, ...]
    lost: tuple[str, ...] = ()
    kind: str = "local"

    def execute(
        self, run: record.Run, lanes: Sequence[Lane], request: executors.SuiteRequest
    ) -> list[executors.LaneOutcome]:
        outcomes = []
        for lane in lanes:
            part = run.part("node1", lane.name)
            part.folder.mkdir(parents=True, exist_ok=True)
            part.junit.write_bytes(junit_xml(c for c in self.cases if c.lane == lane.name))
            outcomes.append(executors.LaneOutcome("node1", lane.name))
            for node in self.lost:
                outcomes.append(executors.LaneOutcome(node, lane.name, f"{node} unreachable"))
        return outcomes


def flagci_run(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stand_in: StandIn,
    lane: str,
    *,
    environ: dict[str, str] | None = None,
    history: Path | None = None,
) -> tuple[int, str]:
    """``flagci run`` of ``lane``; its exit status and its summary.md."""
    monkeypatch.setattr(executors, "LocalVenvExecutor", lambda matrix, cache: stand_in)
    results = tmp_path / "results"
    where = ["--history", str(history)] if history else ["--no-history"]
    code = main(["run", "--lane", lane, "--results", str(results), *where], environ or {})
    (summary,) = results.glob("*/summary.md")
    return code, summary.read_text()


def stated_exit(summary: str) -> int:
    """The exit status summary.md's state line gives (0 for OK)."""
    state = summary.splitlines()[2]
    if state.startswith("**OK**"):
        return 0
    found = re.match(r"\*\*\w+\*\* \(exit (\d+)\)", state)
    assert found, state
    return int(found.group(1))


def test_a_part_that_could_not_run_beside_known_failures_exits_5_and_says_5(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, summary = flagci_run(tmp_path, monkeypatch, StandIn((KNOWN,), lost=("node2",)), FT)
    assert code == stated_exit(summary) == 5
    assert "**InfrastructureError** (exit 5)" in summary
    assert "### Could not run (1)" in summary and "node2/iluvatar-flagtree-0.6.0" in summary
    assert "### Known (1)" in summary  # the known failure is still told


def test_harness_errors_only_exit_15_and_say_15(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness = Case(FT, "s::t", "failed", "fixture broke", {"failure_kind": "harness_error"})
    code, summary = flagci_run(tmp_path, monkeypatch, StandIn((harness,)), FT)
    assert code == stated_exit(summary) == 15
    assert "**LaneProblemError** (exit 15)" in summary


def test_slow_only_exits_14_and_says_14(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def perf(ms: float) -> Case:
        return Case(NV, "p::t", "passed", "", {"gpu": "H200", "perf_ms": f"{ms}"})

    history = tmp_path / "history.sqlite"
    store = Store(history)
    for night, ms in enumerate((1.0, 1.01, 0.99, 1.0)):
        store.ingest(write_run(tmp_path / "earlier", night, [perf(ms)]))
    code, summary = flagci_run(tmp_path, monkeypatch, StandIn((perf(1.5),)), NV, history=history)
    assert code == stated_exit(summary) == 14
    assert "**SlowerError** (exit 14)" in summary and "### Slower (1)" in summary


def test_a_failed_post_step_exits_with_its_code_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unusable = {"FLAGCI_ISSUE_REPO": "flagos-ai/flagci-nightly"}  # and no GITHUB_TOKEN
    code, summary = flagci_run(tmp_path, monkeypatch, StandIn((KNOWN,)), FT, environ=unusable)
    assert code == stated_exit(summary) == 8
    assert "**ConfigError** (exit 8): $FLAGCI_ISSUE_REPO is set but" in summary


def test_every_failure_known_exits_0_and_says_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, summary = flagci_run(tmp_path, monkeypatch, StandIn((KNOWN,)), FT)
    assert code == stated_exit(summary) == 0
