"""Verdicts over sequences of runs: one test per verdict kind, real pytest runs included."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from ci.history.ledger import load_ledger
from ci.history.store import Store, ingest_run
from ci.history.verdicts import FixStatus, History, Kind
from tests.fixtures.history_runs import LANES, Case, LaneSpec, pytest_junit, run_id, write_run

CPU = "cpu-triton-3.6.0"
FT = "iluvatar-flagtree-0.6.0"
BASE = "iluvatar-triton-3.2.0"
UNI_SRAM = (
    "triton.runtime.errors.OutOfResources: out of resource: uni_sram PassManager::run failed,"
    " Required: 0, Hardware limit: 0. Reducing block sizes or `num_stages` may help."
)
SHARED = "out of resources: shared memory, Required: 262144, Hardware limit: 166912"
DOMINANCE = (
    "triton_attention_helpers.py:415:19: error: operand #0 does not dominate this use\n"
    "note: Pipeline failed while executing [`TritonILUVATARGPUMMAReduceThreadLocality`"
    " on 'builtin.module' operation]\nRuntimeError: PassManager::run failed"
)


def feed(tmp_path: Path, runs: Sequence[Sequence[Case]], **kw: object) -> History:
    """Ingest one run per item (in order of start time) and evaluate the history."""
    db = tmp_path / "results" / "history.sqlite"
    for index, cases in enumerate(runs):
        ingest_run(db, write_run(tmp_path / "results", index, cases, **kw))  # type: ignore[arg-type]
    return Store(db).evaluate(load_ledger())


def outcomes(
    *seq: str, lane: str = CPU, test: str = "s::t", message: str = SHARED
) -> list[list[Case]]:
    return [[Case(lane, test, o, message if o == "failed" else "")] for o in seq]


def test_pass_fail_skip_outcomes(tmp_path: Path) -> None:
    history = feed(
        tmp_path,
        [[Case(CPU, "s::p"), Case(CPU, "s::f", "failed", SHARED), Case(CPU, "s::s", "skipped")]],
    )
    kinds = {t: (v.outcome, v.kind) for (_, t), v in history.verdicts.items()}
    assert kinds == {
        "s::p": ("passed", Kind.PASSED),
        "s::f": ("failed", Kind.FAILING),
        "s::s": ("skipped", Kind.SKIPPED),
    }


def test_a_junit_error_counts_as_a_failure(tmp_path: Path) -> None:
    history = feed(tmp_path, [*outcomes("passed"), [Case(CPU, "s::t", "error", "worker crashed")]])
    verdict = history.verdicts[(CPU, "s::t")]
    assert (verdict.outcome, verdict.kind, verdict.new_failure) == (
        "failed",
        Kind.NEW_FAILURE,
        True,
    )


def test_new_failure_when_the_previous_run_passed(tmp_path: Path) -> None:
    history = feed(tmp_path, outcomes("passed", "passed", "failed"))
    verdict = history.verdicts[(CPU, "s::t")]
    assert verdict.new_failure and verdict.kind is Kind.NEW_FAILURE
    assert verdict.failing_since is not None and verdict.failing_since.since_run == run_id(2)


def test_failing_since_run_and_version_for_how_many_runs(tmp_path: Path) -> None:
    history = feed(tmp_path, outcomes("passed", "failed", "skipped", "failed", "failed"))
    verdict = history.verdicts[(CPU, "s::t")]
    assert verdict.kind is Kind.FAILING and not verdict.new_failure
    streak = verdict.failing_since
    assert streak is not None
    assert (streak.since_run, streak.since_version, streak.runs) == (run_id(1), "3.6.0", 3)
    assert streak.age.days == 3
    assert verdict.first_failed_run == run_id(1)


def test_fixed_when_the_previous_run_failed(tmp_path: Path) -> None:
    history = feed(tmp_path, outcomes("passed", "failed", "failed", "passed"))
    verdict = history.verdicts[(CPU, "s::t")]
    assert verdict.fixed and verdict.kind is Kind.FIXED and verdict.failing_since is None
    assert verdict.first_failed_run == run_id(1)


def test_flaky_when_outcomes_flip_back_and_forth_on_the_same_pins(tmp_path: Path) -> None:
    history = feed(tmp_path, outcomes("passed", "failed", "passed", "failed"))
    verdict = history.verdicts[(CPU, "s::t")]
    assert verdict.flaky and verdict.kind is Kind.FLAKY


def test_flaky_when_the_nodes_of_one_run_disagree(tmp_path: Path) -> None:
    xml = (
        b"<testsuites><testsuite>"
        b'<testcase classname="s" name="t"><properties>'
        b'<property name="lane" value="cpu-triton-3.6.0"/>'
        b'<property name="node" value="n1"/></properties></testcase>'
        b'<testcase classname="s" name="t"><properties>'
        b'<property name="lane" value="cpu-triton-3.6.0"/>'
        b'<property name="node" value="n2"/></properties><failure message="boom">boom</failure>'
        b"</testcase></testsuite></testsuites>"
    )
    history = feed(tmp_path, [[Case(CPU, "s::t")]], junit=xml)
    verdict = history.verdicts[(CPU, "s::t")]
    assert verdict.outcome == "failed" and verdict.flaky and verdict.kind is Kind.FLAKY


def test_not_flaky_when_the_pins_changed_between_the_outcomes(tmp_path: Path) -> None:
    db = tmp_path / "results" / "history.sqlite"
    numpy = ("1.26.4", "2.2.6", "1.26.4", "2.2.6")
    for index, (outcome, pin) in enumerate(
        zip(("passed", "failed", "passed", "failed"), numpy, strict=True)
    ):
        lanes = {CPU: LaneSpec("cpu", "triton", "3.6.0", pins={"numpy": pin})}
        cases = [Case(CPU, "s::t", outcome, SHARED if outcome == "failed" else "")]
        ingest_run(db, write_run(tmp_path / "results", index, cases, lanes=lanes))
    verdict = Store(db).evaluate(load_ledger()).verdicts[(CPU, "s::t")]
    assert not verdict.flaky and verdict.kind is Kind.NEW_FAILURE


def test_flagtree_regression_when_the_baseline_passes_in_the_same_run(tmp_path: Path) -> None:
    run = [
        Case(FT, "s::t", "failed", "RuntimeError: some new MLIR failure"),
        Case(BASE, "s::t"),
        Case(FT, "s::both", "failed", "RuntimeError: broken everywhere"),
        Case(BASE, "s::both", "failed", "RuntimeError: broken everywhere"),
    ]
    history = feed(tmp_path, [run])
    assert history.verdicts[(FT, "s::t")].regression_of == BASE
    assert history.verdicts[(FT, "s::both")].regression_of is None
    assert history.verdicts[(BASE, "s::both")].regression_of is None


def test_no_flagtree_regression_when_the_baseline_did_not_run_in_that_run(tmp_path: Path) -> None:
    db = tmp_path / "results" / "history.sqlite"
    ingest_run(db, write_run(tmp_path / "results", 0, [Case(FT, "s::t"), Case(BASE, "s::t")]))
    alone = [Case(FT, "s::t", "failed", "RuntimeError: x")]
    ingest_run(db, write_run(tmp_path / "results", 1, alone, lanes={FT: LANES[FT]}))
    verdict = Store(db).evaluate(load_ledger()).verdicts[(FT, "s::t")]
    assert verdict.new_failure and verdict.regression_of is None


def test_a_known_issue_shows_as_known_not_new(tmp_path: Path) -> None:
    run_pass = [
        Case(FT, "uni::unified_attention[corex]"),
        Case(BASE, "uni::unified_attention[corex]"),
    ]
    run_fail = [
        Case(FT, "uni::unified_attention[corex]", "failed", DOMINANCE),
        Case(BASE, "uni::unified_attention[corex]"),
    ]
    history = feed(tmp_path, [run_pass, run_fail])
    verdict = history.verdicts[(FT, "uni::unified_attention[corex]")]
    assert verdict.new_failure and verdict.kind is Kind.KNOWN
    assert (
        verdict.known_issue is not None
        and verdict.known_issue.id == "iluvatar-mma-reduce-dominance"
    )
    assert verdict.regression_of == BASE


def test_the_known_issue_pattern_is_limited_to_its_vendors(tmp_path: Path) -> None:
    history = feed(tmp_path, outcomes("failed", message=UNI_SRAM))
    assert history.verdicts[(CPU, "s::t")].known_issue is None


def test_a_listed_signature_makes_a_failure_known_without_the_text(tmp_path: Path) -> None:
    ledger_file = tmp_path / "ledger.toml"
    ledger_file.write_text(
        '[[issue]]\nid = "sig"\ntitle = "t"\nupstream = "https://example.org/1"\n'
        'pattern = "never matches this"\nsignatures = ["pass_failure:MMAReduce"]\ntests = "t"\n'
    )
    db = tmp_path / "results" / "history.sqlite"
    case = Case(CPU, "s::t", "failed", "mangled text", {"signature": "pass_failure:MMAReduce"})
    ingest_run(db, write_run(tmp_path / "results", 0, [case]))
    assert Store(db).evaluate(load_ledger(ledger_file)).verdicts[(CPU, "s::t")].kind is Kind.KNOWN


def _kunlun(outcome_at: dict[str, str]) -> list[Case]:
    return [
        Case(lane, "gdn::gdn_post_conv[xpu3]", o, UNI_SRAM if o == "failed" else "")
        for lane, o in outcome_at.items()
    ]


def test_fix_verified_and_claimed_fix_not_verified(tmp_path: Path) -> None:
    history = feed(
        tmp_path,
        [
            _kunlun(
                {
                    "kunlun-flagtree-0.6.1": "failed",
                    "kunlun-flagtree-0.6.1a1": "failed",
                    "kunlun-flagtree-0.7.0rc2": "passed",
                }
            )
        ],
    )
    checks = {c.version: c for c in history.fix_checks if c.issue.id == "kunlun-gdn-uni-sram"}
    assert checks["0.6.1a1+xpu3.6"].status is FixStatus.NOT_VERIFIED
    assert checks["0.6.1a1+xpu3.6"].still_known == 1
    assert checks["0.7.0rc2+xpu3.6"].status is FixStatus.VERIFIED
    assert checks["0.7.0rc2+xpu3.6"].lanes == ("kunlun-flagtree-0.7.0rc2",)
    assert (
        history.verdicts[("kunlun-flagtree-0.6.1", "gdn::gdn_post_conv[xpu3]")].kind is Kind.KNOWN
    )


def test_a_claimed_fix_without_a_lane_run_is_not_tested(tmp_path: Path) -> None:
    history = feed(tmp_path, [_kunlun({"kunlun-flagtree-0.6.1": "failed"})])
    statuses = {c.version: c.status for c in history.fix_checks}
    assert statuses == {
        "0.6.1a1+xpu3.6": FixStatus.NOT_TESTED,
        "0.7.0rc2+xpu3.6": FixStatus.NOT_TESTED,
    }


def test_runs_are_ordered_by_start_time_not_by_ingest_order(tmp_path: Path) -> None:
    db = tmp_path / "results" / "history.sqlite"
    later = write_run(tmp_path / "results", 1, [Case(CPU, "s::t", "failed", SHARED)])
    earlier = write_run(tmp_path / "results", 0, [Case(CPU, "s::t")])
    ingest_run(db, later)
    ingest_run(db, earlier)
    verdict = Store(db).evaluate(load_ledger()).verdicts[(CPU, "s::t")]
    assert verdict.run_id == run_id(1) and verdict.kind is Kind.NEW_FAILURE


def test_a_sequence_of_real_pytest_runs(tmp_path: Path) -> None:
    """Real pytest runs of a stand-in suite: pass, then a new failure, then a fix."""
    plan = [("passed", "passed"), ("failed", "passed"), ("failed", "passed"), ("passed", "failed")]
    db = tmp_path / "results" / "history.sqlite"
    for index, (first, second) in enumerate(plan):
        cases = [
            Case(CPU, "attention[sm_80]", first, SHARED if first == "failed" else ""),
            Case(CPU, "gdn[sm_80]", second, SHARED if second == "failed" else ""),
        ]
        xml = pytest_junit(tmp_path / f"work{index}", cases)
        ingest_run(db, write_run(tmp_path / "results", index, cases, junit=xml))
    verdicts = Store(db).evaluate(load_ledger()).verdicts
    attention = verdicts[(CPU, "test_smoke_standin::test_case[attention[sm_80]]")]
    gdn = verdicts[(CPU, "test_smoke_standin::test_case[gdn[sm_80]]")]
    assert attention.kind is Kind.FIXED
    assert gdn.kind is Kind.NEW_FAILURE
    assert gdn.failure is not None and "Hardware limit: 166912" in gdn.failure.text


@pytest.mark.parametrize("runs", [1, 5])
def test_the_latest_run_decides_which_tests_are_current(tmp_path: Path, runs: int) -> None:
    sequence = [[Case(CPU, "s::old"), Case(CPU, "s::t")]] * runs + [[Case(CPU, "s::t")]]
    history = feed(tmp_path, sequence)
    assert set(history.verdicts) == {(CPU, "s::t")}
    assert len(history.timelines[(CPU, "s::old")]) == runs


# The CPU lane rebuilt at upstream Triton 3.2.0, as the baseline of a FlagTree lane at 3.6.
CPU_32 = "cpu-triton-3.2.0"
FT_36 = "cpu-flagtree-0.6.0"
BASELINE_LANES = {
    CPU_32: LaneSpec("cpu", "triton", "3.2.0"),
    FT_36: LaneSpec("cpu", "flagtree", "0.6.0+3.6", baseline=CPU_32),
}
# What the 3.2.0 lane recorded for vLLM 0.24.0's attention kernel (its compile failure's
# summary): the kernel names a 3.3 API in a branch that is dead on these paths.
NO_TENSOR_DESCRIPTOR = (
    "frontend: compile failed in ast_to_ttir\n"
    "triton.compiler.errors.CompilationError: at 120:24:\n"
    "AttributeError: module 'triton.language' has no attribute 'make_tensor_descriptor'"
)
ATTENTION = "test_vllm_kernels::test_compile[sm_80-decode-hd128-gqa8-kernel_unified_attention]"
GDN = "test_vllm_kernels::test_compile[sm_80-gdn-warmup-l64-_fused_post_conv_kernel]"
MM = "test_flaggems_kernels::test_compile[sm_80-mm-mm_kernel_general-0]"


def test_a_baseline_lacking_a_triton_api_makes_the_comparison_not_applicable(
    tmp_path: Path,
) -> None:
    from ci.history import run_verdicts
    from ci.publish import summary

    def night(ft_attention: str, ft_gdn: str) -> list[Case]:
        return [
            Case(FT_36, ATTENTION, ft_attention, SHARED if ft_attention == "failed" else ""),
            Case(CPU_32, ATTENTION, "failed", NO_TENSOR_DESCRIPTOR),
            Case(FT_36, GDN, ft_gdn, SHARED if ft_gdn == "failed" else ""),
            Case(CPU_32, GDN, "failed", NO_TENSOR_DESCRIPTOR.replace("language", "language.extra")),
            # The baseline fails for a reason of the kernel, not of its Triton: decided.
            Case(FT_36, MM, "failed", SHARED),
            Case(CPU_32, MM, "failed", SHARED),
        ]

    history = feed(
        tmp_path, [night("failed", "passed"), night("passed", "failed")], lanes=BASELINE_LANES
    )
    attention, gdn, mm = (history.verdicts[(FT_36, t)] for t in (ATTENTION, GDN, MM))
    assert attention.baseline_not_applicable == (
        f"not applicable: baseline {CPU_32} (3.2.0) lacks triton.language.make_tensor_descriptor"
    )
    assert gdn.baseline_not_applicable.endswith(
        "lacks triton.language.extra.make_tensor_descriptor"
    )
    assert gdn.outcome == "failed" and gdn.regression_of is None
    assert mm.baseline_not_applicable == "" and mm.regression_of is None
    # The baseline's own verdict is its own failure.
    assert history.verdicts[(CPU_32, ATTENTION)].baseline_not_applicable == ""

    run = run_verdicts.of_run(history, run_id(1))
    assert run.baseline_not_applicable == (attention, gdn) and run.regressions == ()
    text = summary.render(run_verdicts.RunOutcome(run), lambda v: "#")
    assert "### Baseline not applicable (2)" in text
    section = text.split("### Baseline not applicable (2)")[1].split("###")[0]
    assert section.count(f"| {FT_36} |") == 2
    assert (
        f"not applicable: baseline {CPU_32} (3.2.0) lacks triton.language.make\\_tensor\\_descriptor"
        in section
    )


def test_the_summary_gives_a_failure_in_triages_words_where_the_lane_wrote_them(
    tmp_path: Path,
) -> None:
    from ci.history import run_verdicts
    from ci.publish import summary
    from ci.smoke.contract import properties

    said = "pass failure: TritonGPUPipeline: operand #N does not dominate this use"
    history = feed(
        tmp_path,
        [
            [Case(FT, "t.py::a"), Case(FT, "t.py::b")],
            [
                Case(
                    FT,
                    "t.py::a",
                    "failed",
                    "Traceback (most recent call last):\n...",
                    {properties.TRIAGE: said},
                ),
                Case(FT, "t.py::b", "failed", "RuntimeError: boom"),
            ],
        ],
    )
    text = summary.render(
        run_verdicts.RunOutcome(run_verdicts.of_run(history, run_id(1))), lambda v: "#"
    )
    new = text.split("### New failures (2)")[1].split("###")[0]
    assert summary._cell(said) in new and "Traceback" not in new
    assert "RuntimeError: boom" in new
