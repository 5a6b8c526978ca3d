"""The trend charts: Vega-Lite specifications, their SVG, and the H200 samples' perf series."""

from __future__ import annotations

import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ci.history.store import Store, ingest_run
from ci.history.tuning import shape_of
from ci.history.verdicts import perf_band
from ci.publish import charts
from ci.publish.dashboard import build

SAMPLES = Path(__file__).resolve().parents[2] / "docs" / "samples"
NIGHT = datetime(2026, 12, 1, 11, 20, tzinfo=UTC)


def test_a_one_point_series_is_a_marked_point_in_the_middle_of_a_dated_axis() -> None:
    spec = charts.spec([charts.Point("L4096", NIGHT, 0.148)], "ms")
    x = spec["layer"][-1]["encoding"]["x"]
    assert x["type"] == "temporal" and x["scale"]["type"] == "utc"
    low, high = x["scale"]["domain"]
    assert low < NIGHT.timestamp() * 1000 < high
    assert spec["layer"][-1]["mark"]["point"]
    svg = charts.svg([charts.Point("L4096", NIGHT, 0.148)], "ms")
    assert svg.count('aria-roledescription="point"') == 1
    assert "night: Dec 01; ms: 0.148; series: L4096" in svg
    assert "<script" not in svg


def test_a_band_is_drawn_behind_the_points_that_have_one() -> None:
    points = [
        charts.Point("a", NIGHT + timedelta(days=i), 2.0 + i / 10, (1.9, 2.2) if i else None)
        for i in range(3)
    ]
    spec = charts.spec(points, "ms")
    band, line = spec["layer"]
    assert band["mark"]["type"] == "rule" and band["encoding"]["y2"] == {"field": "high"}
    assert [v["low"] for v in spec["data"]["values"]] == [None, 1.9, 1.9]
    assert line["mark"]["type"] == "line"
    assert len(charts.spec(points[:1], "ms")["layer"]) == 1  # no band: no band layer


def test_values_far_apart_get_a_log_axis_and_a_percentage_its_fixed_one() -> None:
    far = [charts.Point("prefill", NIGHT, 8.8), charts.Point("decode", NIGHT, 0.44)]
    assert charts.spec(far, "ms")["layer"][-1]["encoding"]["y"]["scale"] == {"type": "log"}
    near = [charts.Point("a", NIGHT, 2.0), charts.Point("b", NIGHT, 3.0)]
    assert charts.spec(near, "ms")["layer"][-1]["encoding"]["y"]["scale"] == {"zero": False}
    flat = [charts.Point("a", NIGHT, 0.5), charts.Point("a", NIGHT + timedelta(days=1), 0.5)]
    assert charts.spec(flat, "s")["layer"][-1]["encoding"]["y"]["scale"] == {"domain": [0.45, 0.55]}
    rate = charts.spec(near, "%", percent=True)["layer"][-1]["encoding"]["y"]["scale"]
    assert rate == {"domain": [0, 100]}


def test_series_names_are_escaped_in_the_svg() -> None:
    svg = charts.svg([charts.Point("<b>x</b>&", NIGHT, 1.0)], "ms")
    assert "<b>" not in svg and "&lt;b&gt;x&lt;/b&gt;&amp;" in svg


def test_the_band_is_the_slow_verdicts() -> None:
    assert perf_band([1.0, 1.2]) is None
    assert perf_band([1.0, 1.5, 1.25]) == (1.25, 0.25)
    # Only the last PERF_WINDOW (10) runs count.
    assert perf_band([100.0] + [1.0] * 10) == (1.0, 0.0)


def test_a_shape_is_the_test_parameters_less_the_config() -> None:
    test = "test_perf::test_unified_attention[prefill-hd128-b4-q4096-ctx0-kv8-hd128-bm16-t16-w4-s2-bf16]"
    assert shape_of(test, "hd128-bm16-t16-w4-s2-bf16") == "prefill-hd128-b4-q4096-ctx0-kv8"
    vllm = "test_perf::test_vllm_gdn_post_conv[L4096]"
    assert shape_of(vllm, "vllm-launcher") == "L4096"


def test_the_h200_samples_perf_series_are_drawn_with_dates(tmp_path: Path) -> None:
    db = tmp_path / "history.sqlite"
    for sample in ("2026-11-30-h200", "2026-12-02-h200"):
        shutil.copytree(SAMPLES / sample, tmp_path / sample)
        ingest_run(db, tmp_path / sample)
    trends = (build(db, tmp_path / "dashboard").parent / "trends.html").read_text()
    figures = re.findall(r"<figcaption>([^<]*)</figcaption>(<svg.*?</svg>)", trends, re.S)
    perf = {title: svg for title, svg in figures if " · NVIDIA H200 · " in title}
    assert (
        "unified_attention · hd256-bm128-t64-w8-s2-bf16 · NVIDIA H200 · nvidia-triton-3.6.0" in perf
    )
    assert (
        "vllm kernel_unified_attention · vllm-launcher · NVIDIA H200 · nvidia-triton-3.6.0" in perf
    )
    # Every stored time is a marked point: 44 of the first night, 54 of the second.
    points = sum(svg.count('aria-roledescription="point"') for svg in perf.values())
    assert points == len(Store(db).perf_records()) == 98
    # Shapes as series and dates on the x axis, a one-night series among them.
    one_night = perf[
        "unified_attention · hd256-bm16-t32-wdefault-sdefault-bf16 · NVIDIA H200 · nvidia-triton-3.6.0"
    ]
    assert one_night.count('aria-roledescription="point"') == 2  # prefill and decode
    assert "night: Dec 02; ms (log): 13.13728; series: prefill-hd256-b4-q4096-ctx0-kv8" in one_night
    gdn = perf[
        "gdn_post_conv · qwen3.6-h128-hv16-k128-v128-bt16-w4-s2-bf16 · NVIDIA H200 · nvidia-triton-3.6.0"
    ]
    assert "night: Nov 30; ms: 0.148992; series: L4096" in gdn
    assert "night: Dec 02; ms: 0.1488; series: L4096" in gdn
