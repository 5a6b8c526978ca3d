"""Known is expected: a run's exit code and Markdown summary from its verdicts."""

from __future__ import annotations

from pathlib import Path

from ci.commands.options import SITE_URL_SETTING, STEP_SUMMARY_SETTING, publishing_from
from ci.core.errors import (
    FixNotVerifiedError,
    FlagCIError,
    NewFailureError,
    RegressionError,
    SlowerError,
    UnknownFailureError,
)
from ci.history.ledger import load_ledger
from ci.history.store import Store
from ci.publish import after_run
from tests.fixtures.history_runs import Case, finished, write_run

CPU = "cpu-triton-3.6.0"
FT = "iluvatar-flagtree-0.6.0"
BASE = "iluvatar-triton-3.2.0"
KL_FIX = "kunlun-flagtree-0.7.0rc2"
NV = "nvidia-triton-3.6.0"
CUDA_TARGET = (
    "RuntimeError: 0 compatible backends for target (cuda) ([]). There should only be one."
)
SHARED = "out of resources: shared memory, Required: 262144, Hardware limit: 166912"
UNI_SRAM = "OutOfResources: out of resource: uni_sram PassManager::run failed"


def after(
    tmp_path: Path,
    nights: list[list[Case]],
    *,
    history: bool = True,
    publishing: after_run.Publishing = after_run.Publishing(),  # noqa: B008
) -> tuple[FlagCIError | None, Path]:
    """Store every night, then finish the last as ``flagci run`` does."""
    results = tmp_path / "results"
    store = Store(results / "history.sqlite") if history else None
    run_dir = results
    for index, cases in enumerate(nights):
        run_dir = write_run(results, index, cases)
        if store is not None:
            store.ingest(run_dir)
    outcome = after_run.after_run(
        finished(run_dir),
        store=store,
        ledger=load_ledger(),
        dashboard=results / "dashboard",
        publishing=publishing,
    )
    return outcome.error, run_dir


def test_a_run_whose_only_failures_are_known_exits_0_and_says_known(tmp_path: Path) -> None:
    nights = [
        [Case(FT, "test_backends::test_inductor_target", "failed", CUDA_TARGET), Case(FT, "s::ok")]
    ] * 3
    error, run_dir = after(tmp_path, nights)
    assert error is None
    text = (run_dir / "summary.md").read_text()
    assert "**OK**: every failure is known (1 known)." in text
    assert "### Known (1)" in text and "iluvatar-cuda-target" in text


def test_the_same_holds_without_a_history(tmp_path: Path) -> None:
    nights = [[Case(FT, "test_backends::test_inductor_target", "failed", CUDA_TARGET)]]
    error, run_dir = after(tmp_path, nights, history=False)
    assert error is None
    assert "### Known (1)" in (run_dir / "summary.md").read_text()


def test_a_new_failure_exits_11_and_links_its_failure_page(tmp_path: Path) -> None:
    error, run_dir = after(
        tmp_path, [[Case(CPU, "s::t")], [Case(CPU, "s::t", "failed", SHARED + " | *bold*")]]
    )
    assert isinstance(error, NewFailureError) and error.exit_code == 11
    text = (run_dir / "summary.md").read_text()
    assert "### New failures (1)" in text
    line = next(row for row in text.splitlines() if row.startswith(f"| {CPU} |"))
    assert "](../dashboard/failures/" in line and ".html)" in line
    assert "\\| \\*bold\\*" in line  # table-breaking and markup characters escaped


def test_a_flagtree_regression_outranks_a_new_failure(tmp_path: Path) -> None:
    nights = [
        [Case(FT, "s::t"), Case(BASE, "s::t"), Case(CPU, "s::u")],
        [
            Case(FT, "s::t", "failed", SHARED),
            Case(BASE, "s::t"),
            Case(CPU, "s::u", "failed", SHARED),
        ],
    ]
    error, run_dir = after(tmp_path, nights)
    assert isinstance(error, RegressionError) and error.exit_code == 10
    assert "### FlagTree regressions (1)" in (run_dir / "summary.md").read_text()


def test_an_unknown_failure_that_is_not_new_exits_12(tmp_path: Path) -> None:
    error, run_dir = after(tmp_path, [[Case(CPU, "s::t", "failed", SHARED)]] * 2)
    assert isinstance(error, UnknownFailureError) and error.exit_code == 12
    text = (run_dir / "summary.md").read_text()
    assert "### Failing, not in the ledger (1)" in text and "2 runs" in text


def test_a_claimed_fix_still_failing_exits_13(tmp_path: Path) -> None:
    error, _ = after(tmp_path, [[Case(KL_FIX, "test_gdn_post_conv::t", "failed", UNI_SRAM)]])
    assert isinstance(error, FixNotVerifiedError) and error.exit_code == 13
    assert "0.7.0rc2+xpu3.6" in str(error)


def test_a_slower_perf_test_exits_14(tmp_path: Path) -> None:
    def perf(ms: float) -> list[Case]:
        return [Case(NV, "p::t", "passed", "", {"gpu": "H200", "perf_ms": f"{ms}"})]

    error, run_dir = after(tmp_path, [perf(1.0), perf(1.01), perf(0.99), perf(1.0), perf(1.5)])
    assert isinstance(error, SlowerError) and error.exit_code == 14
    assert "### Slower (1)" in (run_dir / "summary.md").read_text()


def test_the_summary_goes_to_the_github_step_summary_too(tmp_path: Path) -> None:
    step = tmp_path / "step-summary.md"
    step.write_text("earlier step\n")
    publishing = publishing_from(
        {STEP_SUMMARY_SETTING: str(step), SITE_URL_SETTING: "https://ci.example.org/flagci/"}
    )
    _, run_dir = after(
        tmp_path,
        [[Case(CPU, "s::t")], [Case(CPU, "s::t", "failed", SHARED)]],
        publishing=publishing,
    )
    text = step.read_text()
    assert text.startswith("earlier step\n")
    assert text.endswith((run_dir / "summary.md").read_text() + "\n")
    assert "](https://ci.example.org/flagci/dashboard/failures/" in text
