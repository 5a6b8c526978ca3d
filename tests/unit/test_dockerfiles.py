"""The vendor families' Dockerfiles: hadolint-clean, parameterised by the recipe's build
arguments only, and layered so that a new compiler pin rebuilds only what follows it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from ci import images, process
from ci.errors import FlagCIError
from ci.lanes import VENDORS, load_matrix

DOCKER = Path(__file__).resolve().parents[2] / "docker"
HADOLINT = Path(sys.executable).with_name("hadolint")


def instructions(vendor: str) -> list[str]:
    """The Dockerfile's instructions, continuation lines joined, comments dropped."""
    text = (DOCKER / vendor / "Dockerfile").read_text()
    text = re.sub(r"\\\n(\s*#.*\n)*", " ", text)
    return [" ".join(line.split()) for line in text.splitlines() if line.strip() and line[0] != "#"]


def position(lines: list[str], pattern: str) -> int:
    found = [i for i, line in enumerate(lines) if re.match(pattern, line)]
    assert len(found) == 1, f"expected one instruction matching {pattern!r}, found {len(found)}"
    return found[0]


def test_every_vendor_family_has_a_dockerfile() -> None:
    assert sorted(p.parent.name for p in DOCKER.glob("*/Dockerfile")) == sorted(VENDORS)


def test_the_dockerfiles_are_hadolint_clean() -> None:
    files = sorted(DOCKER.glob("*/Dockerfile"))
    try:
        result = process.run(
            [HADOLINT, *files], error=FlagCIError, what="hadolint", capture=True, check=False
        )
    except FlagCIError as err:
        pytest.fail(str(err))
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


@pytest.mark.parametrize("vendor", VENDORS)
def test_build_arguments_are_the_recipes(vendor: str) -> None:
    lane = next(lane for lane in load_matrix().lanes.values() if lane.vendor == vendor)
    args = {line.split()[1] for line in instructions(vendor) if line.startswith("ARG ")}
    assert args == set(images.recipe_for(lane).buildargs)


@pytest.mark.parametrize("vendor", VENDORS)
def test_the_compiler_layer_follows_the_dependencies(vendor: str) -> None:
    lines = instructions(vendor)
    deps_copy = position(lines, "COPY wheelhouse/deps/ ")
    deps_install = position(lines, r"RUN pip install .*-r /opt/wheelhouse/deps/requirements.lock$")
    compiler_args = [i for i, line in enumerate(lines) if line.startswith("ARG COMPILER_")]
    compiler_copy = position(lines, "COPY wheelhouse/compiler/ ")
    smoke = position(lines, "COPY smoke/ ")
    assert deps_copy < deps_install < min(compiler_args)
    assert max(compiler_args) < compiler_copy < position(lines, "COPY smoke/lane.json ") < smoke
    # Nothing the compiler pin changes may come before the dependencies' layer.
    assert not any("COMPILER" in line for line in lines[: deps_install + 1])
    assert lines[-1] == 'CMD ["python", "-m", "ci.smoke", "--results", "/results"]'
