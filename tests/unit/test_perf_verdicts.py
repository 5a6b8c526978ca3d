"""The perf regression verdict over generated histories of perf-test times.

A test is slower when its latest time exceeds the median of the lane's last PERF_WINDOW
earlier runs on the same GPU model by more than those runs' spread: the same slowdown is
flagged over a quiet history and not over a noisy one.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from ci.history.ledger import load_ledger
from ci.history.store import Store, ingest_run
from ci.history.verdicts import PERF_MIN_RUNS, PERF_WINDOW, Kind, Verdict
from ci.publish.dashboard import build
from tests.fixtures.history_runs import Case, write_run

LANE = "nvidia-triton-3.6.0"
TEST = "test_perf::test_unified_attention[prefill-hd128]"
H200 = "NVIDIA H200"


def perf_case(ms: float, gpu: str = H200, outcome: str = "passed") -> Case:
    props = {"kernel": "unified_attention", "gpu": gpu, "perf_ms": f"{ms:.6f}"}
    message = "out: numeric mismatch" if outcome == "failed" else ""
    return Case(LANE, TEST, outcome, message, props)


def noisy(center: float, spread: float, runs: int, seed: int = 1) -> list[float]:
    draw = random.Random(seed)
    return [center + draw.uniform(-spread, spread) for _ in range(runs)]


def verdict_after(tmp_path: Path, cases: Sequence[Case]) -> Verdict:
    db = tmp_path / "results" / "history.sqlite"
    for index, case in enumerate(cases):
        ingest_run(db, write_run(tmp_path / "results", index, [case]))
    return Store(db).evaluate(load_ledger()).verdicts[(LANE, TEST)]


def test_slower_than_a_quiet_history_is_flagged(tmp_path: Path) -> None:
    history = noisy(2.0, 0.02, 10)
    verdict = verdict_after(tmp_path, [perf_case(ms) for ms in [*history, 2.2]])
    assert verdict.kind is Kind.SLOWER
    assert verdict.perf is not None and verdict.perf.slower
    assert verdict.perf.runs == 10
    assert abs(verdict.perf.median_ms - 2.0) < 0.02
    assert 0 < verdict.perf.spread_ms <= 0.02
    assert verdict.perf.change_pct == pytest.approx(10.0, abs=1.0)


def test_the_same_slowdown_within_a_noisy_history_is_not(tmp_path: Path) -> None:
    history = noisy(2.0, 0.3, 10)
    verdict = verdict_after(tmp_path, [perf_case(ms) for ms in [*history, 2.2]])
    assert verdict.kind is Kind.PASSED
    assert verdict.perf is not None and not verdict.perf.slower
    assert verdict.perf.spread_ms > 0.2


def test_a_time_within_the_spread_passes(tmp_path: Path) -> None:
    history = noisy(2.0, 0.02, 10)
    verdict = verdict_after(tmp_path, [perf_case(ms) for ms in [*history, 2.01]])
    assert verdict.kind is Kind.PASSED and verdict.perf is not None and not verdict.perf.slower


def test_faster_is_never_flagged(tmp_path: Path) -> None:
    history = noisy(2.0, 0.02, 10)
    verdict = verdict_after(tmp_path, [perf_case(ms) for ms in [*history, 1.0]])
    assert verdict.kind is Kind.PASSED and verdict.perf is not None
    assert verdict.perf.change_pct < -40


def test_only_runs_on_the_same_gpu_model_count(tmp_path: Path) -> None:
    """Fast runs on another GPU neither make the H200's time look slow nor fill its window."""
    other = [perf_case(ms, gpu="NVIDIA B200") for ms in noisy(1.0, 0.01, 8)]
    own = [perf_case(ms) for ms in noisy(2.0, 0.02, PERF_MIN_RUNS)]
    verdict = verdict_after(tmp_path, [*other, *own, perf_case(2.01)])
    assert verdict.perf is not None and verdict.perf.runs == PERF_MIN_RUNS
    assert verdict.perf.gpu == H200 and abs(verdict.perf.median_ms - 2.0) < 0.02
    assert verdict.kind is Kind.PASSED


def test_too_few_earlier_runs_give_no_perf_verdict(tmp_path: Path) -> None:
    cases = [perf_case(ms) for ms in noisy(2.0, 0.02, PERF_MIN_RUNS - 1)] + [perf_case(9.0)]
    verdict = verdict_after(tmp_path, cases)
    assert verdict.perf is None and verdict.kind is Kind.PASSED


def test_only_the_last_window_of_runs_counts(tmp_path: Path) -> None:
    """A slow era before the window must not widen the spread and hide a regression."""
    old = noisy(4.0, 0.5, 5, seed=2)
    recent = noisy(2.0, 0.02, PERF_WINDOW, seed=3)
    verdict = verdict_after(tmp_path, [perf_case(ms) for ms in [*old, *recent, 2.2]])
    assert verdict.perf is not None and verdict.perf.runs == PERF_WINDOW
    assert verdict.kind is Kind.SLOWER


def test_a_failing_perf_test_stays_a_failure(tmp_path: Path) -> None:
    history = [perf_case(ms) for ms in noisy(2.0, 0.02, 10)]
    verdict = verdict_after(tmp_path, [*history, perf_case(3.0, outcome="failed")])
    assert verdict.kind is Kind.NEW_FAILURE
    assert verdict.perf is not None and verdict.perf.slower


@pytest.mark.parametrize("bad", ["nan", "inf", "-1.5", "0", "fast"])
def test_a_perf_time_that_is_not_a_time_is_stored_as_no_time_with_a_note(
    tmp_path: Path, bad: str
) -> None:
    case = Case(LANE, TEST, "passed", "", {"gpu": H200, "perf_ms": bad})
    folder = write_run(tmp_path / "results", 0, [case])
    db = tmp_path / "results" / "history.sqlite"
    result = ingest_run(db, folder)
    assert result.testcases == 1
    assert len(result.notes) == 1 and "'perf_ms'" in result.notes[0], result.notes
    assert Store(db).observations().perf == ()


def test_the_dashboard_shows_a_slower_test(tmp_path: Path) -> None:
    history = noisy(2.0, 0.02, 10)
    db = tmp_path / "results" / "history.sqlite"
    for index, ms in enumerate([*history, 2.2]):
        ingest_run(db, write_run(tmp_path / "results", index, [perf_case(ms)]))
    index = build(db, tmp_path / "results" / "dashboard")
    page = index.read_text(encoding="utf-8")
    assert "class='cell k-slower'" in page
    assert "ms on NVIDIA H200, +" in page


def test_the_committed_h200_sample_is_a_run_with_its_figures(tmp_path: Path) -> None:
    """The H200 run committed under docs/samples ingests, every perf test with its time."""
    import shutil
    import sqlite3

    sample = Path(__file__).resolve().parents[2] / "docs" / "samples" / "2026-11-30-h200"
    run = shutil.copytree(sample, tmp_path / "results" / "20261130T163835Z-h200")
    db = tmp_path / "results" / "history.sqlite"
    assert ingest_run(db, run).testcases == 133
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT gpu, perf_ms, ratio_to_torch FROM perf").fetchall()
    assert len(rows) == 44
    assert {gpu for gpu, _, _ in rows} == {H200}
    assert all(ms > 0 and ratio > 0 for _, ms, ratio in rows)
    verdicts = Store(db).evaluate(load_ledger()).verdicts
    assert {v.kind for v in verdicts.values()} <= {Kind.PASSED, Kind.SKIPPED}


def test_the_real_kernel_h200_sample_launched_vllms_and_flaggems_kernels(tmp_path: Path) -> None:
    """The 2026-12-02 H200 run: every real launch of vLLM's and FlagGems' kernels passed on
    the GPU, each testcase naming the package it came from, and it ingests as it is."""
    import shutil

    from ci.results import reader

    sample = Path(__file__).resolve().parents[2] / "docs" / "samples" / "2026-12-02-h200"
    cases = reader.read_cases(sample / "merged.xml", ["nvidia-triton-3.6.0"])
    launches = [c for c in cases if c.test.split("::")[-1].startswith("test_launch[")]
    sources = {c.properties.get("source") for c in launches}
    assert sources == {"vllm 0.24.0", "flag-gems 5.0.2"}
    assert len(launches) == 20 and {c.outcome for c in launches} == {"passed"}
    kernels = {c.properties["kernel"] for c in launches}
    assert "kernel_unified_attention + reduce_segments" in kernels
    timed = [c for c in cases if c.test.split("::")[-1].startswith("test_vllm_")]
    assert len(timed) == 6 and all(float(c.properties["perf_ms"]) > 0 for c in timed)
    run = shutil.copytree(sample, tmp_path / "results" / "20261202T035308Z-h200")
    assert ingest_run(tmp_path / "results" / "history.sqlite", run).testcases == 436
