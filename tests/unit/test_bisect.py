"""Bisection logic over the real lane matrix, with a runner that replays given outcomes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ci.cli import main
from ci.errors import InfrastructureError, UsageError
from ci.lanes import Lane, load_matrix
from ci.triage.bisect import Bisection, LaneResult, Outcome, bisect, render


@dataclass
class ScriptedRunner:
    """Answers each lane with a preset outcome; records the order it was asked in."""

    outcomes: dict[str, Outcome]
    asked: list[str] = field(default_factory=list)

    def run_test(self, lane: Lane, test_id: str) -> LaneResult:
        self.asked.append(lane.name)
        if self.outcomes[lane.name] is Outcome.ERROR:
            raise InfrastructureError(f"node for {lane.name} unreachable")
        return LaneResult(lane.name, self.outcomes[lane.name], f"{test_id} ran")


KUNLUN = ["kunlun-flagtree-0.6.1", "kunlun-flagtree-0.6.1a1", "kunlun-flagtree-0.7.0rc2"]


def _bisect(*outcomes: Outcome) -> tuple[Bisection, ScriptedRunner]:
    runner = ScriptedRunner(dict(zip(KUNLUN, outcomes, strict=True)))
    return bisect(load_matrix(), "kunlun", "test_gdn_post_conv", runner), runner


def test_release_order_and_fix_found() -> None:
    result, runner = _bisect(Outcome.FAILED, Outcome.FAILED, Outcome.PASSED)
    assert runner.asked == KUNLUN  # release order, not PEP 440 order
    assert result.first_bad == "kunlun-flagtree-0.6.1"
    assert result.first_good == "kunlun-flagtree-0.7.0rc2"
    assert result.last_good is None
    assert result.verdict == (
        "first bad: kunlun-flagtree-0.6.1; first good: kunlun-flagtree-0.7.0rc2"
    )


def test_regression_names_last_good() -> None:
    result, _ = _bisect(Outcome.PASSED, Outcome.FAILED, Outcome.FAILED)
    assert result.first_bad == "kunlun-flagtree-0.6.1a1"
    assert result.last_good == "kunlun-flagtree-0.6.1"
    assert result.first_good is None
    assert "never fixed" in result.verdict


def test_a_lane_that_cannot_run_is_no_evidence() -> None:
    result, _ = _bisect(Outcome.FAILED, Outcome.ERROR, Outcome.PASSED)
    assert result.results[1].outcome is Outcome.ERROR
    assert "unreachable" in result.results[1].detail
    assert result.first_good == "kunlun-flagtree-0.7.0rc2"
    data = result.to_json()
    assert [lane["outcome"] for lane in data["lanes"]] == ["failed", "error", "passed"]
    assert render(result)[-1] == result.verdict


def test_all_passing() -> None:
    result, _ = _bisect(Outcome.PASSED, Outcome.PASSED, Outcome.PASSED)
    assert result.first_bad is None
    assert result.verdict == "passes on every lane that ran"


def test_unknown_family_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="no family 'arm'"):
        bisect(load_matrix(), "arm", "t", ScriptedRunner({}))


def test_cli_reports_lanes_it_cannot_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # No FlagOS index is configured here: every kunlun lane fails to build, and says why.
    monkeypatch.delenv("FLAGCI_INDEX_FLAGOS", raising=False)
    monkeypatch.delenv("FLAGCI_INDEX_KUNLUNXIN", raising=False)
    report = tmp_path / "bisect.json"
    code = main(
        [
            *("bisect", "--family", "kunlun", "--test", "t.py::x", "--suite", str(tmp_path)),
            *("--work", str(tmp_path / "work"), "--json", str(report)),
        ]
    )
    assert code == 0
    data = json.loads(report.read_text())
    assert [lane["outcome"] for lane in data["lanes"]] == ["error"] * 3
    assert "FLAGCI_INDEX_" in data["lanes"][0]["detail"]
    assert "no lane could run the test" in capsys.readouterr().out
