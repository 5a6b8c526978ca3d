"""Verdict logic over observations made in memory: no XML, no database."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ci.history import run_verdicts
from ci.history.ledger import load_ledger
from ci.history.verdicts import (
    FailureRecord,
    FixStatus,
    History,
    Kind,
    LaneRun,
    Observations,
    ResultRow,
    RunInfo,
    evaluate,
    latest_runs,
)

START = datetime(2026, 11, 1, 2, tzinfo=UTC)
VERSIONS = {
    "cpu": ("cpu", "triton", "3.6.0", None),
    "ft": ("iluvatar", "flagtree", "0.6.0+iluvatar3.6", "base"),
    "base": ("iluvatar", "triton", "3.2.0+corex.4.5.0", None),
    "kl-fix": ("kunlun", "flagtree", "0.7.0rc2+xpu3.6", None),
}
UNI_SRAM = "OutOfResources: out of resource: uni_sram PassManager::run failed"


def observe(
    nights: Sequence[Mapping[tuple[str, str], str]],
    texts: Mapping[tuple[str, str], str] = {},
    kinds: Mapping[tuple[str, str], str] = {},
) -> History:
    """One run per night; each maps (lane, test) to an outcome; the last night's failures
    carry ``texts`` and failure ``kinds``."""
    runs = tuple(
        RunInfo(f"r{i}", START + timedelta(days=i), Path(f"/runs/r{i}"), "nightly", "")
        for i in range(len(nights))
    )
    lane_runs = tuple(
        LaneRun(f"r{i}", lane, vendor, vendor, baseline, package, version, "pins")
        for i, night in enumerate(nights)
        for lane in sorted({lane for lane, _ in night})
        for vendor, package, version, baseline in [VERSIONS[lane]]
    )
    results = tuple(
        ResultRow(f"r{i}", lane, "node1", test, outcome)
        for i, night in enumerate(nights)
        for (lane, test), outcome in night.items()
    )
    last = len(nights) - 1
    failures = {
        key: FailureRecord(
            "node1",
            "failed",
            texts.get(key, "boom"),
            "",
            "",
            kinds.get(key, ""),
            "",
            (),
            runs[-1].run_dir,
        )
        for key, outcome in nights[last].items()
        if outcome in ("failed", "error")
    }
    return evaluate(Observations(runs, lane_runs, results, (), failures), load_ledger())


def test_new_failing_since_and_fixed() -> None:
    history = observe(
        [
            {("cpu", "a"): "passed", ("cpu", "b"): "failed", ("cpu", "c"): "failed"},
            {("cpu", "a"): "failed", ("cpu", "b"): "failed", ("cpu", "c"): "passed"},
        ]
    )
    a, b, c = (history.verdicts[("cpu", t)] for t in "abc")
    assert (a.kind, a.new_failure) == (Kind.NEW_FAILURE, True)
    assert b.kind is Kind.FAILING and b.failing_since is not None
    assert (b.failing_since.since_run, b.failing_since.runs) == ("r0", 2)
    assert (c.kind, c.fixed) == (Kind.FIXED, True)


def test_known_at_an_affected_version_and_a_regression_against_the_baseline() -> None:
    history = observe(
        [
            {
                ("ft", "test_unified_attention::t"): "failed",
                ("base", "test_unified_attention::t"): "passed",
                ("ft", "gdn"): "failed",
                ("base", "gdn"): "failed",
            }
        ],
        texts={("ft", "test_unified_attention::t"): "operand #0 does not dominate this use"},
    )
    attn = history.verdicts[("ft", "test_unified_attention::t")]
    assert attn.kind is Kind.KNOWN and attn.known_issue is not None
    assert attn.known_issue.id == "iluvatar-mma-reduce-dominance"
    assert attn.regression_of == "base"
    gdn = history.verdicts[("ft", "gdn")]
    assert gdn.known_issue is None and gdn.regression_of is None  # the baseline fails too


def test_a_harness_error_is_a_lane_problem_never_a_new_failure_or_a_regression() -> None:
    test = "test_unified_attention::t"
    history = observe(
        [
            {("ft", test): "passed", ("base", test): "passed"},
            {("ft", test): "failed", ("base", test): "passed"},
        ],
        kinds={("ft", test): "harness_error"},
    )
    verdict = history.verdicts[("ft", test)]
    assert verdict.kind is Kind.LANE_PROBLEM
    assert not verdict.new_failure and verdict.regression_of is None
    run = run_verdicts.of_run(history, "r1")
    assert run.lane_problems == (verdict,) and run.unknown == () and run.regressions == ()
    assert run_verdicts.RunOutcome(run).exit_code == 15
    # The same failure from the compiler is the regression it would be.
    compiler = observe(
        [
            {("ft", test): "passed", ("base", test): "passed"},
            {("ft", test): "failed", ("base", test): "passed"},
        ],
        kinds={("ft", test): "pass_failure"},
    )
    assert compiler.verdicts[("ft", test)].regression_of == "base"


def test_a_claimed_fix_that_still_fails_is_known_and_not_verified() -> None:
    history = observe(
        [{("kl-fix", "test_gdn_post_conv::t"): "failed"}],
        texts={("kl-fix", "test_gdn_post_conv::t"): UNI_SRAM},
    )
    verdict = history.verdicts[("kl-fix", "test_gdn_post_conv::t")]
    assert verdict.kind is Kind.KNOWN
    (check,) = [c for c in history.fix_checks if c.version == "0.7.0rc2+xpu3.6"]
    assert check.status is FixStatus.NOT_VERIFIED and check.still_known == 1


def test_latest_runs_follow_start_order_not_input_order() -> None:
    runs = (
        RunInfo("old", START, Path("/o"), "nightly", ""),
        RunInfo("new", START + timedelta(days=1), Path("/n"), "nightly", ""),
    )
    lane_runs = (
        LaneRun("new", "cpu", "cpu", "cpu", None, "triton", "3.6.0", "p"),
        LaneRun("old", "cpu", "cpu", "cpu", None, "triton", "3.6.0", "p"),
        LaneRun("old", "ft", "iluvatar", "iluvatar", None, "flagtree", "0.6.0", "p"),
    )
    assert latest_runs(runs, lane_runs) == {"cpu": "new", "ft": "old"}
