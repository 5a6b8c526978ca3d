"""The CPU lane image: a full build against the rebuild after changing only the Triton pin.

    .venv/bin/python benchmarks/bench_images.py

1. builds the CPU lane's image with no layer cache (the Debian base and the wheelhouse are
   made first, outside the timing);
2. moves the lane's Triton pin to 3.5.1 in a copy of the lane matrix, prepares that wheel
   (outside the timing) and builds again with the layer cache.

Build progress goes to stderr; stdout gets both builds step by step, the ratio of their
times, and the size of the full build's image against its base and its wheelhouse (what
the image would carry twice if the wheels stayed in it). Needs a Docker engine
(`bash .ci/docker-up.sh`). The 3.5.1 image is removed afterwards.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from ci.build import baseimage, images, wheelhouse
from ci.build.engine import connect
from ci.commands.options import cache_from, with_index_settings
from ci.lanes.matrix import load_matrix

LANE = "cpu-triton-3.6.0"
MOVED_TRITON = "3.5.1"


def moved_matrix_text(text: str) -> str:
    """The lane matrix with the CPU lane's Triton pin (and compiler) moved to MOVED_TRITON."""
    head, header, lane = text.partition(f'[lanes."{LANE}"]')
    pin = '{ name = "triton", version = "3.6.0", index = "pypi"'
    start = lane.index(pin)
    end = lane.index("},", start)
    lane = (
        lane[:start]
        + f'{{ name = "triton", version = "{MOVED_TRITON}", index = "pypi" '
        + lane[end:]
    )
    compiler = 'compiler = { package = "triton", version = "3.6.0", triton = "3.6.0" }'
    moved = f'compiler = {{ package = "triton", version = "{MOVED_TRITON}", triton = "3.5" }}'
    return head + header + lane.replace(compiler, moved, 1)


def show(title: str, report: images.BuildReport) -> None:
    print(f"\n{title}: {report.ref}")
    for step in report.steps:
        mark = "cached" if step.cached else ""
        print(
            f"  {step.number:>2}/{step.total}  {step.seconds:6.1f} s  {mark:6}"
            f"  {step.instruction[:70]}"
        )
    print(
        f"  Dockerfile steps {report.build_seconds:.1f} s; with wheelhouse check and context"
        f" {report.seconds:.1f} s"
    )


def megabytes(size: int) -> str:
    return f"{size / 1e6:,.0f} MB"


def main() -> int:
    matrix = with_index_settings(load_matrix(), os.environ)
    lane = matrix.lane(LANE)
    wheels = cache_from(os.environ) / "wheelhouse"
    with connect() as engine, tempfile.TemporaryDirectory() as tmp:
        baseimage.ensure(engine)
        wheelhouse.prepare(matrix, lane, wheels / lane.name)
        full = images.build(engine, matrix, lane, wheels, nocache=True)
        image = engine.image(full.ref)
        base = engine.image(lane.base_image)
        assert image is not None and base is not None
        house = wheelhouse.prepare(matrix, lane, wheels / lane.name)
        wheel_bytes = sum(wheel.path.stat().st_size for wheel in house.wheels)

        lanes = Path(tmp, "lanes.toml")
        lanes.write_text(moved_matrix_text(Path(matrix.source).read_text()))
        moved = with_index_settings(load_matrix(lanes), os.environ)
        moved_lane = moved.lane(LANE)
        wheelhouse.prepare(moved, moved_lane, wheels / moved_lane.name)
        rebuild = images.build(engine, moved, moved_lane, wheels)
        engine.remove_image(rebuild.ref)
        # The shared wheelhouse's lock goes back to the shipped pins.
        wheelhouse.prepare(matrix, lane, wheels / lane.name)

    show("full build, no layer cache", full)
    show(f"rebuild after moving only the Triton pin to {MOVED_TRITON}", rebuild)
    ratio = rebuild.build_seconds / full.build_seconds
    print(
        f"\nfull build {full.build_seconds:.1f} s, rebuild {rebuild.build_seconds:.1f} s:"
        f" the rebuild takes {ratio:.0%} of the full build"
        f" ({full.build_seconds / rebuild.build_seconds:.1f}x faster)"
    )
    print(
        f"image {full.ref}: {megabytes(image.size)}; its base {megabytes(base.size)},"
        f" the lane's wheels {megabytes(wheel_bytes)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
