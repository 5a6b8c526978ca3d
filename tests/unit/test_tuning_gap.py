"""The tuning gap: vLLM's launcher against the best config measured in the same run, from the
H200 sample of 2026-12-02, on the dashboard and in the run's summary."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ci.history import run_verdicts
from ci.history.ledger import load_ledger
from ci.history.store import Store, ingest_run
from ci.history.tuning import GAP_RATIO, tuning_gaps
from ci.publish import summary
from ci.publish.after_run import Publishing, after_run, perf_records
from ci.publish.dashboard import build
from ci.results import reader

SAMPLE = Path(__file__).resolve().parents[2] / "docs" / "samples" / "2026-12-02-h200"
LANE = "nvidia-triton-3.6.0"
RUN = "20261202T035308Z-h200"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    shutil.copytree(SAMPLE, tmp_path / SAMPLE.name)
    ingest_run(tmp_path / "history.sqlite", tmp_path / SAMPLE.name)
    return tmp_path / "history.sqlite"


def test_the_launchers_prefill_tiles_against_the_best_config_of_the_run(db: Path) -> None:
    gaps = tuning_gaps(Store(db).perf_records(), {LANE: RUN})
    found = {(g.kernel, g.shape): g for g in gaps}
    # Four attention shapes and two GDN lengths, each timed by vLLM and by the mirror.
    assert len(gaps) == 6
    hd256 = found[("vllm kernel_unified_attention", "prefill-hd256-b4-q4096-ctx0-kv8")]
    assert hd256.best_config == "hd256-bm128-t64-w8-s2-bf16"
    assert (hd256.launcher_ms, hd256.best_ms) == (13.24208, 3.412032)
    assert round(hd256.ratio, 2) == 3.88
    hd128 = found[("vllm kernel_unified_attention", "prefill-hd128-b4-q4096-ctx0-kv8")]
    assert hd128.best_config == "hd128-bm64-t32-w4-s3-bf16" and round(hd128.ratio, 2) == 3.17
    assert gaps[:2] == [hd256, hd128]  # largest first
    decode = found[("vllm kernel_unified_attention", "decode-hd128-b64-q1-ctx4095-kv8")]
    assert decode.ratio < GAP_RATIO
    gdn = found[("vllm _fused_post_conv_kernel", "L4096")]
    assert (
        gdn.ratio < GAP_RATIO and gdn.best_config == "qwen3.6-h128-hv16-k128-v128-bt16-w4-s1-bf16"
    )
    # Another run's times are not this run's.
    assert tuning_gaps(Store(db).perf_records(), {LANE: "another-run"}) == []


def test_the_overview_shows_each_gap_above_the_ratio_with_the_config_that_won(
    db: Path, tmp_path: Path
) -> None:
    index = build(db, tmp_path / "dashboard").read_text()
    section = index.split("<h2 id='tuning'>Tuning gap</h2>")[1].split("<h2")[0]
    assert "more than 1.5x" in section
    assert section.count("<tr><td class='test'>") == 2
    assert "vllm kernel_unified_attention" in section and "3.9x" in section and "3.2x" in section
    assert "hd256-<wbr>bm128-<wbr>t64-<wbr>w8-<wbr>s2-<wbr>bf16" in section
    assert "decode" not in section
    quiet = build(db, tmp_path / "quiet", tuning_ratio=4.0).read_text()
    assert "id='tuning'" not in quiet


def test_the_runs_summary_lists_the_gaps_above_its_setting(db: Path, tmp_path: Path) -> None:
    folder = tmp_path / SAMPLE.name
    record, _ = reader.read_record(folder)
    cases = reader.read_cases(folder / "merged.xml", record.lanes)
    finished = reader.RunData(folder, record, tuple(cases), "")
    assert len(perf_records(finished)) == 54
    after_run(
        finished, store=Store(db), ledger=load_ledger(), dashboard=None, publishing=Publishing()
    )
    text = (folder / summary.FILE_NAME).read_text()
    section = text.split("### Tuning gap over 1.5x (2)")[1].split("###")[0]
    assert "| nvidia-triton-3.6.0 | vllm kernel\\_unified\\_attention ·" in section
    assert "| hd256-bm128-t64-w8-s2-bf16: 3.412 ms | 3.9x |" in section
    history = Store(db).evaluate(load_ledger())
    outcome = run_verdicts.RunOutcome(run_verdicts.of_run(history, RUN))
    gaps = tuning_gaps(perf_records(finished), {LANE: RUN})
    assert "Tuning gap" not in summary.render(outcome, lambda v: "#", (gaps, 4.0))
