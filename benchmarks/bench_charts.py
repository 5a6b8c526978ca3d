"""Time the two candidates for the trend charts: vl-convert (Vega-Lite to SVG) and matplotlib.

Each candidate draws the chart the trends page needs most: ``perf_ms`` of one kernel config
over nights (dates on the x axis, every point marked) with the band the SLOW verdict uses
(median +- spread), at 1 night (a one-point series must show) and at 60 nights (the page's
window). Prints, per candidate and size: the first chart's time (imports and start-up
included), the median time of the next ``--repeat`` charts, and the SVG's size in bytes.

A candidate that is not installed is reported as such (the project's lock holds the one the
dashboard uses; the other installs with ``pip install``).

Usage: python benchmarks/bench_charts.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import statistics
import time
from collections.abc import Callable
from datetime import date, timedelta

Points = list[tuple[str, float]]


def _series(nights: int) -> Points:
    start = date(2026, 10, 1)
    return [
        ((start + timedelta(days=i)).isoformat(), 2.4 + 0.05 * ((i * 7) % 5)) for i in range(nights)
    ]


def _band(points: Points) -> tuple[float, float]:
    values = sorted(v for _, v in points)
    mid = statistics.median(values)
    spread = max(abs(v - mid) for v in values)
    return mid - spread, mid + spread


def vega_lite(points: Points) -> str:
    import vl_convert

    low, high = _band(points)
    spec = {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "width": 360,
        "height": 140,
        "data": {"values": [{"night": d, "ms": v, "low": low, "high": high} for d, v in points]},
        "layer": [
            {
                "mark": {"type": "area", "opacity": 0.2},
                "encoding": {
                    "x": {"field": "night", "type": "temporal"},
                    "y": {"field": "low", "type": "quantitative"},
                    "y2": {"field": "high"},
                },
            },
            {
                "mark": {"type": "line", "point": True},
                "encoding": {
                    "x": {"field": "night", "type": "temporal", "title": None},
                    "y": {"field": "ms", "type": "quantitative", "title": "ms"},
                },
            },
        ],
    }
    return str(vl_convert.vegalite_to_svg(json.dumps(spec)))


def mpl(points: Points) -> str:
    import matplotlib

    matplotlib.use("svg")
    matplotlib.rcParams["svg.fonttype"] = "none"  # text as <text>, as Vega's SVG has it
    from datetime import datetime

    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    low, high = _band(points)
    days = [datetime.fromisoformat(d) for d, _ in points]
    fig, ax = plt.subplots(figsize=(4.0, 1.8))
    ax.axhspan(low, high, alpha=0.2)
    ax.plot(days, [v for _, v in points], marker="o", markersize=3)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(ax.xaxis.get_major_locator()))
    ax.set_ylabel("ms")
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


CANDIDATES: dict[str, tuple[str, Callable[[Points], str]]] = {
    "vl-convert-python": ("vl_convert", vega_lite),
    "matplotlib": ("matplotlib", mpl),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    print(f"{'candidate':<18} {'nights':>6} {'first s':>8} {'median ms':>10} {'SVG bytes':>10}")
    for name, (module, draw) in CANDIDATES.items():
        if importlib.util.find_spec(module) is None:
            print(f"{name:<18} not installed")
            continue
        for nights in (1, 60):
            points = _series(nights)
            start = time.perf_counter()
            svg = draw(points)
            first = time.perf_counter() - start
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                draw(points)
                times.append(time.perf_counter() - start)
            print(
                f"{name:<18} {nights:>6} {first:>8.2f} {1000 * statistics.median(times):>10.1f}"
                f" {len(svg.encode()):>10}"
            )


if __name__ == "__main__":
    main()
