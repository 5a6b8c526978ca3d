"""Bisection over the real lane matrix, through an executor that writes preset JUnit."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ci.cli import main
from ci.core import tables
from ci.core.errors import UsageError
from ci.lanes.matrix import Lane, load_matrix
from ci.run import executors, record
from ci.triage.bisect import Bisection, CaseId, Outcome, bisect, table

TEST = "test_gdn_post_conv.py::test_numerics"


@dataclass
class ScriptedExecutor:
    """Test fixture: a lane executor that writes each lane's JUnit with a preset outcome of
    the bisected test (and an unrelated failing test); records the order it was asked in."""

    outcomes: dict[str, Outcome]
    # Lanes whose failure of the bisected test is the harness's (failure_kind harness_error).
    harness_failures: tuple[str, ...] = ()
    asked: list[str] = field(default_factory=list)
    requests: list[executors.SuiteRequest] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return "scripted"

    def execute(
        self, run: record.Run, lanes: Sequence[Lane], request: executors.SuiteRequest
    ) -> list[executors.LaneOutcome]:
        self.requests.append(request)
        outcomes = []
        for lane in lanes:
            self.asked.append(lane.name)
            part = run.part("n1", lane.name)
            if self.outcomes[lane.name] is Outcome.ERROR:
                outcomes.append(executors.LaneOutcome("n1", lane.name, "n1 unreachable"))
                continue
            result = {
                Outcome.PASSED: "",
                Outcome.FAILED: "<failure message='OutOfResources: uni_sram'/>",
                Outcome.SKIPPED: "<skipped message='no device'/>",
            }[self.outcomes[lane.name]]
            part.folder.mkdir(parents=True)
            kind = (
                "<property name='failure_kind' value='harness_error'/>"
                if lane.name in self.harness_failures
                else ""
            )
            props = f"<properties><property name='lane' value='{lane.name}'/>{kind}</properties>"
            part.junit.write_text(
                f"<testsuites><testsuite name='{lane.name}'>"
                f"<testcase classname='ci.smoke.test_gdn_post_conv' name='test_numerics[small]'>{props}{result}</testcase>"
                f"<testcase classname='ci.smoke.test_gdn_post_conv' name='test_numerics_other'>{props}<failure message='x'/></testcase>"
                "</testsuite></testsuites>"
            )
            outcomes.append(executors.LaneOutcome("n1", lane.name))
        return outcomes


KUNLUN = ["kunlun-flagtree-0.6.1", "kunlun-flagtree-0.6.1a1", "kunlun-flagtree-0.7.0rc2"]


def _bisect(results: Path, *outcomes: Outcome) -> tuple[Bisection, ScriptedExecutor]:
    executor = ScriptedExecutor(dict(zip(KUNLUN, outcomes, strict=True)))
    result, _ = bisect(load_matrix(), "kunlun", TEST, executor, results)
    return result, executor


def test_release_order_and_fix_found(tmp_path: Path) -> None:
    result, executor = _bisect(tmp_path, Outcome.FAILED, Outcome.FAILED, Outcome.PASSED)
    assert executor.asked == KUNLUN  # release order, not PEP 440 order
    assert result.first_bad == "kunlun-flagtree-0.6.1"
    assert result.first_good == "kunlun-flagtree-0.7.0rc2"
    assert result.last_good is None
    assert result.verdict == (
        "first bad: kunlun-flagtree-0.6.1 (flagtree 0.6.1+xpu3.6);"
        " first good: kunlun-flagtree-0.7.0rc2 (flagtree 0.7.0rc2+xpu3.6)"
    )


def test_regression_names_last_good(tmp_path: Path) -> None:
    result, _ = _bisect(tmp_path, Outcome.PASSED, Outcome.FAILED, Outcome.FAILED)
    assert result.first_bad == "kunlun-flagtree-0.6.1a1"
    assert result.last_good == "kunlun-flagtree-0.6.1"
    assert result.first_good is None
    assert "never fixed" in result.verdict


def test_a_lane_that_cannot_run_is_no_evidence(tmp_path: Path) -> None:
    result, _ = _bisect(tmp_path, Outcome.FAILED, Outcome.ERROR, Outcome.PASSED)
    assert result.results[1].outcome is Outcome.ERROR
    assert "n1 unreachable" in result.results[1].detail
    assert result.first_good == "kunlun-flagtree-0.7.0rc2"
    data = result.to_json()
    assert [lane["outcome"] for lane in data["lanes"]] == ["failed", "error", "passed"]
    rows = tables.text(table(result)).splitlines()
    assert rows[0].split() == ["lane", "release", "outcome", "last", "line"]
    assert [row.split()[:4] for row in rows[1:]] == [
        [KUNLUN[0], "flagtree", "0.6.1+xpu3.6", "failed"],
        [KUNLUN[1], "flagtree", "0.6.1a1+xpu3.6", "error"],
        [KUNLUN[2], "flagtree", "0.7.0rc2+xpu3.6", "passed"],
    ]
    assert "n1 unreachable" in rows[2]


def test_a_harness_error_is_no_evidence_against_the_compiler(tmp_path: Path) -> None:
    executor = ScriptedExecutor(
        dict(zip(KUNLUN, (Outcome.FAILED, Outcome.FAILED, Outcome.PASSED), strict=True)),
        harness_failures=(KUNLUN[1],),
    )
    result, _ = bisect(load_matrix(), "kunlun", TEST, executor, tmp_path)
    assert [r.outcome for r in result.results] == [Outcome.FAILED, Outcome.ERROR, Outcome.PASSED]
    assert result.first_bad == KUNLUN[0] and result.first_good == KUNLUN[2]


def test_an_axis_family_walks_the_releases_of_its_package(tmp_path: Path) -> None:
    # cpu-vllm: the default lane and its copies at other vLLM releases, oldest first; the
    # report names each lane's vLLM, not its (shared) compiler.
    lanes = ["cpu-vllm-0.20.2", "cpu-triton-3.6.0", "cpu-vllm-0.33.0"]
    executor = ScriptedExecutor(
        dict(zip(lanes, (Outcome.PASSED, Outcome.PASSED, Outcome.FAILED), strict=True))
    )
    result, _ = bisect(load_matrix(), "cpu-vllm", TEST, executor, tmp_path)
    assert executor.asked == lanes
    assert [r.release for r in result.results] == ["vllm 0.20.2", "vllm 0.24.0", "vllm 0.33.0"]
    assert result.verdict == (
        "first bad: cpu-vllm-0.33.0 (vllm 0.33.0); last good before it:"
        " cpu-triton-3.6.0 (vllm 0.24.0); never fixed"
    )
    assert result.to_json()["lanes"][2]["release"] == "vllm 0.33.0"


def test_all_passing(tmp_path: Path) -> None:
    result, _ = _bisect(tmp_path, Outcome.PASSED, Outcome.PASSED, Outcome.PASSED)
    assert result.first_bad is None
    assert result.verdict == "passes on every lane that ran"


def test_unknown_family_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no family 'arm'"):
        bisect(load_matrix(), "arm", "t", ScriptedExecutor({}), tmp_path)


def test_the_bisection_is_an_ordinary_run_selecting_only_the_test(tmp_path: Path) -> None:
    executor = ScriptedExecutor(
        dict(zip(KUNLUN, [Outcome.SKIPPED, Outcome.FAILED, Outcome.PASSED], strict=True))
    )
    result, run = bisect(load_matrix(), "kunlun", TEST, executor, tmp_path)
    assert executor.requests == [
        executors.SuiteRequest(workers=1, pytest_args=("-k", "test_numerics"))
    ]
    # The unrelated failing test is not the bisected one.
    assert [r.outcome for r in result.results] == [Outcome.SKIPPED, Outcome.FAILED, Outcome.PASSED]
    assert "uni_sram" in result.results[1].detail
    record = json.loads((run.folder / "run.json").read_text())
    assert record["kind"] == "bisect" and run.folder.name.endswith("-bisect")
    assert [p["lane"] for p in record["parts"]] == KUNLUN
    assert (run.folder / "merged.xml").is_file()


@pytest.mark.parametrize(
    ("text", "module", "name"),
    [
        ("test_backends.py::test_inductor_target", "test_backends", "test_inductor_target"),
        ("test_inductor_target", "", "test_inductor_target"),
        (
            "ci/smoke/test_gdn_post_conv.py::test_compile[sm_80-x]",
            "test_gdn_post_conv",
            "test_compile[sm_80-x]",
        ),
    ],
)
def test_test_ids(text: str, module: str, name: str) -> None:
    test = CaseId.parse(text)
    assert (test.module, test.name) == (module, name)
    assert test.selection == ("-k", name.partition("[")[0])


def test_a_bad_test_id_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="not a pytest test id"):
        CaseId.parse("file.py::")


def test_cli_reports_lanes_it_cannot_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # No FlagOS index is configured here: every kunlun lane fails to build, and says why.
    monkeypatch.delenv("FLAGCI_INDEX_FLAGOS", raising=False)
    monkeypatch.delenv("FLAGCI_INDEX_KUNLUNXIN", raising=False)
    monkeypatch.setenv("FLAGCI_CACHE", str(tmp_path / "cache"))
    report = tmp_path / "bisect.json"
    code = main(
        [
            *("bisect", "--family", "kunlun", "--test", "t.py::x"),
            *("--results", str(tmp_path / "results"), "--json", str(report)),
        ]
    )
    assert code == 0
    data = json.loads(report.read_text())
    assert [lane["outcome"] for lane in data["lanes"]] == ["error"] * 3
    assert "FLAGCI_INDEX_" in data["lanes"][0]["detail"]
    assert "no lane could run the test" in capsys.readouterr().out
    # An ordinary run record, in the history.
    assert (tmp_path / "results" / data["run"] / "run.json").is_file()
    assert (tmp_path / "results" / "history.sqlite").is_file()
