"""Lane image recipes, labels, drift and build progress, without a Docker engine."""

from __future__ import annotations

import io
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci.build import images
from ci.build.engine import ImageInfo
from ci.build.wheelhouse import LOCK_NAME, LockedWheel, Wheelhouse
from ci.core import reporter
from ci.core.errors import EnvironmentSetupError
from ci.lanes.matrix import Lane, Pin, load_matrix


@pytest.fixture
def lane() -> Lane:
    return load_matrix().default


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A source tree with what a recipe reads: a Dockerfile and the smoke suite."""
    tree = tmp_path / "source"
    (tree / "docker" / "lane").mkdir(parents=True)
    (tree / "docker" / "lane" / "Dockerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n")
    (tree / "ci" / "smoke").mkdir(parents=True)
    (tree / "ci" / "__init__.py").write_text("")
    (tree / "ci" / "smoke" / "test_backends.py").write_text("def test_one(): pass\n")
    (tree / "ci" / "smoke" / "__pycache__").mkdir()
    (tree / "ci" / "smoke" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (tree / "ci" / "build").mkdir()
    (tree / "ci" / "build" / "images.py").write_text("")
    return tree


BASE = ImageInfo(
    id="sha256:" + "b" * 64, tags=("flagci/bookworm:python3.11",), labels={}, created="", size=0
)
ORIGIN = images.Provenance(
    source="https://git.example.org/flagci.git", revision="c" * 40, licenses="MIT"
)


def with_pin(lane: Lane, name: str, version: str) -> Lane:
    pins = tuple(
        Pin(name=p.name, version=version, index=p.index) if p.name == name else p for p in lane.pins
    )
    return lane.model_copy(update={"pins": pins})


def house_for(lane: Lane, folder: Path) -> Wheelhouse:
    wheels = []
    for pin in lane.pins:
        path = folder / f"{pin.name.replace('-', '_')}-{pin.version}-py3-none-any.whl"
        path.write_bytes(pin.name.encode())
        wheels.append(LockedWheel(pin=pin, path=path, sha256=pin.sha256 or "ab" * 32))
    return Wheelhouse(lane=lane.name, folder=folder, wheels=tuple(wheels))


def test_the_tag_is_a_content_hash_named_after_the_lane(lane: Lane, root: Path) -> None:
    recipe = images.recipe_for(lane, root)
    assert recipe.ref == f"flagci/cpu-triton-3.6.0:{recipe.content_hash}"
    assert len(recipe.content_hash) == 16
    assert images.recipe_for(lane, root) == recipe
    assert recipe.buildargs == {
        "BASE_IMAGE": "flagci/bookworm:python3.11",
        "PYTHON": "3.11",
        "COMPILER_PACKAGE": "triton",
        "COMPILER_VERSION": "3.6.0",
        "UNCHECKED_PACKAGES": "vllm flag-gems",
        "USER_ID": "1000",
        "USER_HOME": "/home/lane",
    }


@pytest.mark.parametrize(
    ("edit", "changes"),
    [
        ("docker/lane/Dockerfile", True),
        ("ci/smoke/test_backends.py", True),
        ("ci/__init__.py", True),
        ("ci/build/images.py", False),  # controller code is not part of the image's recipe
        ("ci/smoke/__pycache__/x.pyc", False),
    ],
)
def test_the_tag_follows_the_dockerfile_and_the_smoke_suite(
    lane: Lane, root: Path, edit: str, changes: bool
) -> None:
    before = images.recipe_for(lane, root).content_hash
    with (root / edit).open("a") as handle:
        handle.write("# edited\n")
    assert (images.recipe_for(lane, root).content_hash != before) is changes


def test_the_tag_follows_every_pin(lane: Lane, root: Path) -> None:
    before = images.recipe_for(lane, root).content_hash
    assert images.recipe_for(with_pin(lane, "triton", "3.5.1"), root).content_hash != before
    assert images.recipe_for(with_pin(lane, "iniconfig", "2.3.0"), root).content_hash != before


def test_a_source_tree_without_the_dockerfile_is_named(lane: Lane, root: Path) -> None:
    (root / images.DOCKERFILE).unlink()
    with pytest.raises(EnvironmentSetupError, match=r"lane 'cpu-triton-3\.6\.0': no Dockerfile"):
        images.recipe_for(lane, root)


# Per family: the user its images run the suite as (uid, home), from the lanes' device tables.
FAMILY_USERS = {
    "iluvatar": ("0", "/root"),
    "kunlun": ("0", "/root"),
    "ascend": ("0", "/root"),
    "nvidia": ("1000", "/home/lane"),
    "cpu": ("1000", "/home/lane"),
}


@pytest.mark.parametrize("name", sorted(load_matrix().lanes))
def test_every_lanes_build_arguments_come_from_its_matrix_entry(name: str) -> None:
    lane = load_matrix().lane(name)
    args = images.build_arguments(lane)
    assert (args["BASE_IMAGE"], args["PYTHON"]) == (lane.base_image, lane.python)
    assert (args["COMPILER_PACKAGE"], args["COMPILER_VERSION"]) == (
        lane.compiler.package,
        lane.compiler.version,
    )
    assert (args["USER_ID"], args["USER_HOME"]) == FAMILY_USERS[lane.vendor]
    unchecked = {p.name for p in lane.pins if not p.check_dependencies}
    assert set(args["UNCHECKED_PACKAGES"].split()) == unchecked


def test_the_vendor_lanes_build_arguments_are_the_stacks() -> None:
    matrix = load_matrix()
    assert images.build_arguments(matrix.lane("ascend-triton-3.2.0")) == {
        "BASE_IMAGE": "ascendai/cann:8.2.rc1-910b-ubuntu22.04-py3.11",
        "PYTHON": "3.11",
        "COMPILER_PACKAGE": "triton-ascend",
        "COMPILER_VERSION": "3.2.0",
        "UNCHECKED_PACKAGES": "vllm",
        "USER_ID": "0",
        "USER_HOME": "/root",
    }
    kunlun = images.build_arguments(matrix.lane("kunlun-flagtree-0.7.0rc2"))
    assert kunlun["BASE_IMAGE"] == "flagos-runtime-kunlunxin-xre5.37.1"
    assert (kunlun["PYTHON"], kunlun["COMPILER_VERSION"]) == ("3.10", "0.7.0rc2+xpu3.6")
    nvidia = images.build_arguments(matrix.lane("nvidia-triton-3.6.0"))
    assert (nvidia["BASE_IMAGE"], nvidia["USER_ID"]) == ("python:3.12-slim-bookworm", "1000")


def test_the_tag_follows_the_build_arguments(lane: Lane, root: Path) -> None:
    before = images.recipe_for(lane, root).content_hash
    as_root = lane.model_copy(update={"device": lane.device.model_copy(update={"uid": 0})})
    assert images.recipe_for(as_root, root).buildargs["USER_ID"] == "0"
    assert images.recipe_for(as_root, root).content_hash != before
    rebased = lane.model_copy(update={"base_image": "flagci/other:1"})
    assert images.recipe_for(rebased, root).content_hash != before


def test_labels_carry_every_pin_and_agree_with_the_matrix(
    lane: Lane, root: Path, tmp_path: Path
) -> None:
    recipe = images.recipe_for(lane, root)
    labels = images.labels_for(
        recipe, house_for(lane, tmp_path), "2026-01-01T00:00:00Z", BASE, ORIGIN
    )
    for pin in lane.pins:
        assert labels[f"org.flagci.pin.{images.label_key(pin.name)}"] == pin.version
    assert labels["org.flagci.pin.torch"] == "2.13.0+cpu"
    assert labels["org.flagci.pin.typing-extensions"] == "4.16.0"
    assert labels["org.opencontainers.image.version"] == recipe.content_hash
    assert labels["org.opencontainers.image.base.name"] == lane.base_image
    assert labels["org.opencontainers.image.base.digest"] == BASE.id
    assert labels["org.opencontainers.image.source"] == ORIGIN.source
    assert labels["org.opencontainers.image.revision"] == ORIGIN.revision
    assert labels["org.opencontainers.image.licenses"] == ORIGIN.licenses
    assert images.drift(lane, labels, recipe.content_hash) == []


def test_drift_names_each_label_that_differs_from_the_matrix(
    lane: Lane, root: Path, tmp_path: Path
) -> None:
    recipe = images.recipe_for(lane, root)
    labels = images.labels_for(recipe, house_for(lane, tmp_path), "now", BASE, ORIGIN)
    labels["org.flagci.pin.triton"] = "3.5.1"
    labels["org.flagci.sha256.numpy"] = "0" * 64
    del labels["org.flagci.pin.pytest"]
    labels["org.flagci.pin.scipy"] = "1.16.0"
    labels[images.HASH_LABEL] = "0123456789abcdef"

    found = {d.key: d for d in images.drift(lane, labels, recipe.content_hash)}

    assert set(found) == {
        "org.flagci.pin.triton",
        "org.flagci.sha256.numpy",
        "org.flagci.pin.pytest",
        "org.flagci.pin.scipy",
        images.HASH_LABEL,
    }
    assert str(found["org.flagci.pin.triton"]) == (
        "org.flagci.pin.triton: the image has 3.5.1, the matrix has 3.6.0"
    )
    assert found["org.flagci.pin.pytest"].image is None
    assert found["org.flagci.pin.scipy"].matrix is None
    # Without the recipe's hash only the pins are compared.
    assert images.HASH_LABEL not in {d.key for d in images.drift(lane, labels)}


def test_the_base_digest_is_the_registry_digest_where_the_engine_has_one() -> None:
    pulled = ImageInfo(
        id="sha256:" + "1" * 64,
        tags=("python:3.12-slim-bookworm",),
        labels={},
        created="",
        size=0,
        repo_digests=("python@sha256:" + "2" * 64,),
    )
    assert images.base_digest(pulled) == "sha256:" + "2" * 64
    assert images.base_digest(BASE) == BASE.id  # made here: no registry digest, its id


def git(folder: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-C", str(folder), *args], check=True, capture_output=True, text=True
    )
    return result.stdout.strip()


def commit(folder: Path, message: str) -> None:
    git(
        folder,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        message,
    )


def test_provenance_is_the_commit_the_remote_and_the_declared_license(tmp_path: Path) -> None:
    tree = tmp_path / "clone"
    tree.mkdir()
    git(tree, "init", "--quiet")
    (tree / "pyproject.toml").write_text('[project]\nname = "x"\nlicense = "Apache-2.0"\n')
    git(tree, "add", "pyproject.toml")
    commit(tree, "one")
    remote = "https://ci-bot:s3cret@git.example.org/flagos/flagci.git"
    git(tree, "remote", "add", "origin", remote)

    found = images.provenance(tree)

    assert found == images.Provenance(
        source="https://git.example.org/flagos/flagci.git",
        revision=git(tree, "rev-parse", "HEAD"),
        licenses="Apache-2.0",
    )
    # Decided once: a later commit in the same process does not change it.
    commit(tree, "two")
    assert images.provenance(tree) == found


def test_provenance_outside_git_is_unknown(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert images.provenance(tmp_path) == images.Provenance(
        source=images.UNKNOWN, revision=images.UNKNOWN, licenses=images.NO_LICENSE
    )


def test_the_label_line_is_one_quoted_instruction() -> None:
    line = images.label_line({"b.key": 'say "hi" to $HOME', "a.key": "x"})
    assert line == 'LABEL a.key="x" \\\n      b.key="say \\"hi\\" to \\$HOME"\n'


def test_the_context_puts_the_compiler_in_its_own_layer(
    lane: Lane, root: Path, tmp_path: Path
) -> None:
    recipe = images.recipe_for(lane, root)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    house = house_for(lane, wheels)
    context = images.build_context(recipe, house, {"org.flagci.lane": lane.name}, tmp_path / "c")

    compiler = sorted(p.name for p in (context / "wheelhouse" / "compiler").iterdir())
    assert compiler == [LOCK_NAME, "triton-3.6.0-py3-none-any.whl"]
    deps = (context / "wheelhouse" / "deps" / LOCK_NAME).read_text().splitlines()
    assert len(deps) == len(lane.pins) - 1
    assert not any(line.startswith("triton==") for line in deps)
    assert "torch==2.13.0+cpu --hash=sha256:6746dbcb" in "\n".join(deps)
    dockerfile = (context / "Dockerfile").read_text()
    assert dockerfile.startswith(recipe.dockerfile.read_text())
    assert dockerfile.endswith('LABEL org.flagci.lane="cpu-triton-3.6.0"\n')
    lane_file = context / "smoke" / "lane.json"
    assert json.loads(lane_file.read_text()) == lane.smoke_context()
    assert lane_file.stat().st_mode & 0o777 == 0o644


def fake_clock(*readings: float) -> Iterator[float]:
    yield from readings


def test_follow_times_each_step_and_marks_cached_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    events = [
        {"stream": "Step 1/3 : FROM flagci/bookworm:python3.11\n"},
        {"stream": " ---> 8187c70bc1ee\n"},
        {"stream": "Step 2/3 : COPY wheelhouse/deps/ /opt/wheelhouse/deps/\n"},
        {"stream": " ---> Using cache\n ---> 7b06d833974a\n"},
        {"stream": "Step 3/3 : RUN pip install -r x\n"},
        {"stream": "\x1b[91mWARNING: something\n\x1b[0m"},
        {"aux": {"ID": "sha256:2933d6723996"}},
        {"stream": "Successfully built 2933d6723996\n"},
    ]
    clock = fake_clock(0.0, 0.0, 2.0, 2.0, 2.5, 2.5, 10.0)
    out = io.StringIO()
    monkeypatch.setattr(reporter, "_installed", reporter.Reporter(out=out))

    image_id, steps = images.follow(events, "cpu-x", clock=lambda: next(clock))

    assert image_id == "sha256:2933d6723996"
    assert [(s.number, s.total, s.cached) for s in steps] == [
        (1, 3, False),
        (2, 3, True),
        (3, 3, False),
    ]
    assert [s.seconds for s in steps] == [2.0, 0.5, 7.5]
    assert steps[2].instruction == "RUN pip install -r x"
    assert "[cpu-x] step 2/3 : COPY" in out.getvalue()
    assert "[cpu-x]   WARNING: something" in out.getvalue()
    assert "\x1b" not in out.getvalue()


def test_a_failed_step_names_lane_step_and_its_output() -> None:
    events = [
        {"stream": "Step 1/2 : FROM base\n"},
        {"stream": "Step 2/2 : RUN pip install --require-hashes -r deps.lock\n"},
        {"stream": "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE.\n"},
        {"stream": "    torch==2.13.0+cpu from file:///opt/wheelhouse/deps/torch.whl:\n"},
        {"error": "The command '/bin/sh -c pip install' returned a non-zero code: 1"},
    ]
    with pytest.raises(EnvironmentSetupError) as caught:
        images.follow(events, "cpu-x")
    message = str(caught.value)
    assert message.startswith("lane 'cpu-x': image build failed at step 2/2 (RUN pip install")
    assert "returned a non-zero code: 1" in message
    assert "torch==2.13.0+cpu from file:///opt/wheelhouse/deps/torch.whl" in message


def test_a_build_that_names_no_image_is_an_error() -> None:
    with pytest.raises(EnvironmentSetupError, match="ended without an image"):
        images.follow([{"stream": "Step 1/1 : FROM base\n"}], "cpu-x")
