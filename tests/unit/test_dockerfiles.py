"""The lane Dockerfile: the only one, hadolint-clean, parameterised by the recipe's build
arguments only, with no wheel copied into the image's stage, and layered so that a new
compiler pin rebuilds only what follows it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from ci.build import images
from ci.core import process
from ci.core.errors import FlagCIError
from ci.lanes.matrix import VENDORS, load_matrix

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / images.DOCKERFILE
HADOLINT = Path(sys.executable).with_name("hadolint")


def instructions() -> list[str]:
    """The Dockerfile's instructions, continuation lines joined, comments dropped."""
    text = DOCKERFILE.read_text()
    text = re.sub(r"\\\n(\s*#.*\n)*", " ", text)
    return [" ".join(line.split()) for line in text.splitlines() if line.strip() and line[0] != "#"]


def stages() -> tuple[list[str], list[str]]:
    """The install stage's instructions and the image's (the last stage's)."""
    lines = instructions()
    starts = [i for i, line in enumerate(lines) if line.startswith("FROM ")]
    assert [lines[i] for i in starts] == [
        "FROM ${BASE_IMAGE} AS lane",
        "FROM lane AS install",
        "FROM lane",
    ]
    # The shared stage holds settings only: nothing of it is built twice or differs.
    assert all(line.startswith(("SHELL ", "ENV ")) for line in lines[starts[0] + 1 : starts[1]])
    return lines[starts[1] : starts[2]], lines[starts[2] :]


def position(lines: list[str], pattern: str) -> int:
    found = [i for i, line in enumerate(lines) if re.match(pattern, line)]
    assert len(found) == 1, f"expected one instruction matching {pattern!r}, found {len(found)}"
    return found[0]


def test_every_lane_is_built_from_the_one_dockerfile() -> None:
    used = {images.recipe_for(lane).dockerfile for lane in load_matrix().lanes.values()}
    assert used == set((ROOT / "docker").rglob("Dockerfile")) == {DOCKERFILE}


def test_the_dockerfile_is_hadolint_clean() -> None:
    try:
        result = process.run(
            [HADOLINT, DOCKERFILE], error=FlagCIError, what="hadolint", capture=True, check=False
        )
    except FlagCIError as err:
        pytest.fail(str(err))
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


@pytest.mark.parametrize("vendor", VENDORS)
def test_build_arguments_are_the_recipes(vendor: str) -> None:
    lane = next(lane for lane in load_matrix().lanes.values() if lane.vendor == vendor)
    args = {line.split()[1] for line in instructions() if line.startswith("ARG ")}
    assert args == set(images.recipe_for(lane).buildargs)


def test_no_wheel_reaches_the_image_stage() -> None:
    _, image = stages()
    # From the build context the image takes lane.json only; the rest comes installed.
    from_context = [
        line for line in image if line.startswith(("COPY", "ADD")) and "--from" not in line
    ]
    assert from_context == ["COPY smoke/lane.json /opt/lane/share/flagci/lane.json"]
    assert not any(".whl" in line or "wheelhouse" in line for line in image)


def test_the_compiler_layer_follows_the_dependencies() -> None:
    install, image = stages()
    deps_copy = position(install, "COPY wheelhouse/deps/ ")
    deps_install = position(install, r"RUN pip install .*-r /wheelhouse/deps/requirements.lock$")
    compiler_copy = position(install, "COPY wheelhouse/compiler/ ")
    compiler_install = position(install, r"RUN pip install .*--root /staged/compiler ")
    smoke_install = position(install, r"RUN pip install .*--root /staged/smoke ")
    assert deps_copy < deps_install < compiler_copy < compiler_install < smoke_install
    # The install stage's layers do not depend on the compiler's build arguments at all.
    assert not any("COMPILER" in line for line in install)

    venv = position(image, "COPY --from=install /opt/lane/ /opt/lane/")
    compiler_args = [i for i, line in enumerate(image) if line.startswith("ARG COMPILER_")]
    compiler = position(image, "COPY --from=install /staged/compiler/opt/lane/ /opt/lane/")
    checks = position(image, r"RUN \{ pip check")
    smoke = position(image, "COPY --from=install /staged/smoke/opt/lane/ /opt/lane/")
    lane_json = position(image, "COPY smoke/lane.json ")
    assert venv < min(compiler_args) <= max(compiler_args) < compiler < checks < smoke < lane_json
    # Nothing the compiler pin changes may come before the dependencies' layer.
    assert not any("COMPILER" in line for line in image[: venv + 1])
    assert image[-1] == 'CMD ["python", "-m", "ci.smoke", "--results", "/results"]'
