"""The trend charts: a Vega-Lite specification per chart, rendered to static SVG by vl-convert.

vl-convert runs Vega in-process (no browser, no network) and returns the SVG the page
inlines: nothing in the page runs a script. Each chart plots one value over nights: dates on
the x axis, every point marked (a series of one night is one point), one colour per series,
and where a point was judged against a band (the SLOW verdict's median +- spread), that band
as a pale bar behind the point. ``benchmarks/bench_charts.py`` measured vl-convert against
matplotlib (docs/dashboard.md).

Text in the SVG (series names, titles) is escaped by Vega's SVG renderer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import vl_convert
from markupsafe import Markup

WIDTH = 360
HEIGHT = 150
# Above this ratio between the largest and the smallest value, the y axis is logarithmic:
# prefill and decode times of one config differ by 30x.
LOG_RATIO = 10.0
_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"


@dataclass(frozen=True)
class Point:
    series: str
    night: datetime
    value: float
    # The band the value was judged against (low, high); None: none yet.
    band: tuple[float, float] | None = None


def spec(points: Sequence[Point], y_title: str, *, percent: bool = False) -> dict[str, Any]:
    """The Vega-Lite specification of one chart of ``points``."""
    values = [p.value for p in points]
    log = not percent and min(values) > 0 and max(values) / min(values) > LOG_RATIO
    y_scale: dict[str, Any] = {"domain": [0, 100]} if percent else {"zero": False}
    if log:
        y_scale = {"type": "log"}
    elif not percent and min(values) == max(values):
        # One value: a tenth either side, or the axis has no span to label.
        pad = abs(values[0]) / 10 or 1.0
        y_scale = {"domain": [values[0] - pad, values[0] + pad]}
    nights = sorted({p.night for p in points})
    # One night: a day either side, so the one point sits in the middle of a dated axis.
    x_scale: dict[str, Any] = {"type": "utc"}  # dates as recorded, not in the local zone
    if len(nights) == 1:
        x_scale["domain"] = [_ms(nights[0] - timedelta(days=1)), _ms(nights[0] + timedelta(days=1))]
    else:
        x_scale["padding"] = 10
    x = {
        "field": "night",
        "type": "temporal",
        "title": None,
        "scale": x_scale,
        # A tick per day at most (runs of one day share its date), labels thinned to fit.
        "axis": {
            "format": "%b %d",
            "labelOverlap": True,
            "tickCount": {"interval": "day"},
            "grid": False,
        },
    }
    y = {
        "field": "value",
        "type": "quantitative",
        "title": f"{y_title} (log)" if log else y_title,
        "scale": y_scale,
    }
    colour = {
        "field": "series",
        "type": "nominal",
        "legend": {"orient": "bottom", "title": None, "columns": 1, "labelLimit": WIDTH},
    }
    layers: list[dict[str, Any]] = []
    if any(p.band for p in points):
        layers.append(
            {
                "transform": [{"filter": "isValid(datum.low)"}],
                "mark": {"type": "rule", "strokeWidth": 6, "opacity": 0.22},
                "encoding": {
                    "x": x,
                    "y": {**y, "field": "low"},
                    "y2": {"field": "high"},
                    "color": colour,
                },
            }
        )
    layers.append(
        {
            "mark": {"type": "line", "point": {"filled": True, "size": 36}},
            "encoding": {"x": x, "y": y, "color": colour},
        }
    )
    return {
        "$schema": _SCHEMA,
        "width": WIDTH,
        "height": HEIGHT,
        "data": {
            "values": [
                {
                    "series": p.series,
                    "night": _ms(p.night),
                    "value": p.value,
                    "low": p.band[0] if p.band else None,
                    "high": p.band[1] if p.band else None,
                }
                for p in points
            ]
        },
        "layer": layers,
        "config": {"font": "system-ui, sans-serif", "view": {"stroke": "#d0d4d9"}},
    }


def svg(points: Sequence[Point], y_title: str, *, percent: bool = False) -> Markup:
    """One chart as inline SVG."""
    return Markup(vl_convert.vegalite_to_svg(json.dumps(spec(points, y_title, percent=percent))))


def _ms(moment: datetime) -> float:
    """A time as Vega reads it: milliseconds since the epoch (UTC, never the local zone)."""
    return moment.timestamp() * 1000.0
