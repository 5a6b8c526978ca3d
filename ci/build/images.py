"""Lane images: one Dockerfile for every family, built from the lane's hash-locked wheelhouse.

A lane's image is described by a ``Recipe``: the lane Dockerfile (``docker/lane/``), the
build arguments taken from the lane matrix (where the families differ: base image, Python,
compiler, the user the suite runs as), and a content hash of the Dockerfile, the build
arguments, the lane's pins, its ``lane.json`` and the smoke suite. The hash is the image
tag, so building a lane whose tag exists does nothing.

The build context holds everything the build installs, so the build needs no network:

    Dockerfile
    wheelhouse/deps/      every pin but the compiler, with its requirements.lock
    wheelhouse/compiler/  the FlagTree or Triton wheel, with its requirements.lock
    smoke/                the smoke suite (a wheel of the ``ci`` package) and lane.json

The wheels are installed in a build stage and only the installed files reach the image, so
no wheel stays in any of its layers. The compiler gets its own layer after the
dependencies, so a changed FlagTree or Triton pin rebuilds only the layers from there on.
OCI labels carry every pin, where the sources and the base image come from
(``Provenance``, ``base_digest``); ``drift`` compares the pins with the lane matrix.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import sys
import time
import tomllib
import urllib.parse
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ci.build import baseimage, wheelhouse
from ci.build.engine import Engine, ImageInfo
from ci.build.environment import source_root
from ci.core import atomic, process, reporter
from ci.core.errors import EnvironmentSetupError, UsageError
from ci.lanes.matrix import Lane, LaneMatrix, Pin

LANE_LABEL = "org.flagci.lane"
PIN_LABEL = "org.flagci.pin."
SHA256_LABEL = "org.flagci.sha256."
HASH_LABEL = "org.flagci.content-hash"
# Part of every content hash: bump it when the build context's layout changes.
CONTEXT_FORMAT = 1
# Where, in the source tree, the parts of an image come from.
DOCKERFILE = "docker/lane/Dockerfile"
SMOKE_SOURCES = ("ci/__init__.py", "ci/smoke")
PACKAGE_SOURCES = ("pyproject.toml", "README.md", "ci")


def label_key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def smoke_suite_files(root: Path) -> tuple[tuple[str, str], ...]:
    """(path, sha256) of every file of the smoke suite, sorted."""
    files: list[tuple[str, str]] = []
    for source in SMOKE_SOURCES:
        top = root / source
        paths = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file())
        for path in paths:
            if "__pycache__" in path.parts:
                continue
            files.append((path.relative_to(root).as_posix(), wheelhouse.sha256_of(path)))
    return tuple(files)


def compiler_pin(lane: Lane) -> Pin:
    pin = lane.pin(lane.compiler.package)
    if pin is None:  # the lane matrix guarantees it; kept for a clear message all the same
        raise EnvironmentSetupError(f"lane '{lane.name}': no pin for {lane.compiler.package}")
    return pin


@dataclass(frozen=True)
class Recipe:
    """Everything that decides a lane image's content, and the tag that names it."""

    lane: Lane
    dockerfile: Path
    buildargs: Mapping[str, str]
    content_hash: str

    @property
    def repository(self) -> str:
        return "flagci/" + re.sub(r"[^a-z0-9._-]+", "-", self.lane.name.lower())

    @property
    def ref(self) -> str:
        return f"{self.repository}:{self.content_hash}"


# The unprivileged user of an image whose lane has a non-zero ``device.uid``.
UNPRIVILEGED_HOME = "/home/lane"


def build_arguments(lane: Lane) -> dict[str, str]:
    """The lane Dockerfile's build arguments: every way one lane's image differs from
    another's, from the lane matrix."""
    return {
        "BASE_IMAGE": lane.base_image,
        "PYTHON": lane.python,
        "COMPILER_PACKAGE": lane.compiler.package,
        "COMPILER_VERSION": lane.compiler.version,
        "UNCHECKED_PACKAGES": " ".join(p.name for p in lane.pins if not p.check_dependencies),
        "USER_ID": str(lane.device.uid),
        "USER_HOME": "/root" if lane.device.uid == 0 else UNPRIVILEGED_HOME,
    }


def recipe_for(lane: Lane, root: Path | None = None) -> Recipe:
    root = root or source_root()
    dockerfile = root / DOCKERFILE
    if not dockerfile.is_file():
        raise EnvironmentSetupError(
            f"lane '{lane.name}': no Dockerfile at {dockerfile} (images are built from the"
            " flagci source tree)"
        )
    buildargs = build_arguments(lane)
    content = {
        "format": CONTEXT_FORMAT,
        "dockerfile": wheelhouse.sha256_of(dockerfile),
        "buildargs": buildargs,
        "pins": [[p.name, p.version, p.index, p.sha256 or ""] for p in lane.pins],
        "lane_json": lane.lane_json(),
        "smoke": smoke_suite_files(root),
    }
    digest = hashlib.sha256(json.dumps(content, sort_keys=True).encode("utf-8")).hexdigest()
    return Recipe(lane=lane, dockerfile=dockerfile, buildargs=buildargs, content_hash=digest[:16])


UNKNOWN = "unknown"
# SPDX's word for "the project states no license".
NO_LICENSE = "NOASSERTION"


@dataclass(frozen=True)
class Provenance:
    """Where the sources an image is built from come from (its OCI source, revision and
    licenses labels)."""

    source: str
    revision: str
    licenses: str


def _git(root: Path, *args: str) -> str:
    """The output of a git query in ``root``, or "" where there is no answer (no git, not a
    repository, no such remote)."""
    try:
        result = process.run(
            ["git", "-C", root, *args],
            error=EnvironmentSetupError,
            what="git",
            capture=True,
            check=False,
            quiet=True,
        )
    except EnvironmentSetupError:  # no git at all
        return ""
    return result.stdout.strip() if result.returncode == 0 else ""


def _without_credentials(url: str) -> str:
    """``url`` less any user and password (a CI clone's remote may carry a token)."""
    parts = urllib.parse.urlsplit(url)
    if not parts.scheme or "@" not in parts.netloc:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def _declared_license(root: Path) -> str:
    """The license ``pyproject.toml`` declares (an SPDX expression, or a table's text)."""
    try:
        project = tomllib.loads((root / "pyproject.toml").read_text("utf-8")).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return NO_LICENSE
    declared = project.get("license")
    if isinstance(declared, dict):
        declared = declared.get("text")
    return declared.strip() if isinstance(declared, str) and declared.strip() else NO_LICENSE


@functools.cache
def provenance(root: Path) -> Provenance:
    """The provenance of the source tree at ``root``, decided once per process: its git
    remote ``origin`` and commit ("unknown" outside git), and its declared license."""
    return Provenance(
        source=_without_credentials(_git(root, "remote", "get-url", "origin")) or UNKNOWN,
        revision=_git(root, "rev-parse", "--verify", "HEAD") or UNKNOWN,
        licenses=_declared_license(root),
    )


def base_digest(base: ImageInfo) -> str:
    """The digest of the base image as the engine has it: its registry digest where it was
    pulled, else its image id (a base made here, as the debootstrapped Debian base)."""
    if base.repo_digests:
        return base.repo_digests[0].partition("@")[2]
    return base.id


def labels_for(
    recipe: Recipe,
    house: wheelhouse.Wheelhouse,
    created: str,
    base: ImageInfo,
    origin: Provenance,
) -> dict[str, str]:
    """Every label of ``recipe``'s image, built from ``house`` on ``base``."""
    lane = recipe.lane
    labels = {
        "org.opencontainers.image.title": recipe.repository,
        "org.opencontainers.image.description": lane.description,
        "org.opencontainers.image.version": recipe.content_hash,
        "org.opencontainers.image.created": created,
        "org.opencontainers.image.source": origin.source,
        "org.opencontainers.image.revision": origin.revision,
        "org.opencontainers.image.licenses": origin.licenses,
        "org.opencontainers.image.base.name": lane.base_image,
        "org.opencontainers.image.base.digest": base_digest(base),
        "org.opencontainers.image.vendor": "flagci",
        LANE_LABEL: lane.name,
        HASH_LABEL: recipe.content_hash,
        "org.flagci.vendor": lane.vendor,
        "org.flagci.python": lane.python,
        "org.flagci.compiler": f"{lane.compiler.package}=={lane.compiler.version}",
    }
    for wheel in house.wheels:
        labels[PIN_LABEL + label_key(wheel.pin.name)] = wheel.pin.version
        labels[SHA256_LABEL + label_key(wheel.pin.name)] = wheel.sha256
    return labels


@dataclass(frozen=True)
class Drift:
    """One way an image's labels differ from the lane matrix."""

    key: str
    image: str | None
    matrix: str | None

    def __str__(self) -> str:
        if self.image is None:
            return f"{self.key}: not in the image (the matrix has {self.matrix})"
        if self.matrix is None:
            return f"{self.key}: not in the matrix (the image has {self.image})"
        return f"{self.key}: the image has {self.image}, the matrix has {self.matrix}"


def drift(lane: Lane, labels: Mapping[str, str], content_hash: str | None = None) -> list[Drift]:
    """Every difference between an image's labels and ``lane``; empty when they agree.

    With ``content_hash`` (the lane's current recipe), an image built from another
    Dockerfile or smoke suite is reported too.
    """
    expected = {
        LANE_LABEL: lane.name,
        "org.flagci.vendor": lane.vendor,
        "org.flagci.python": lane.python,
        "org.flagci.compiler": f"{lane.compiler.package}=={lane.compiler.version}",
        "org.opencontainers.image.base.name": lane.base_image,
    }
    for pin in lane.pins:
        expected[PIN_LABEL + label_key(pin.name)] = pin.version
        if pin.sha256 is not None:
            expected[SHA256_LABEL + label_key(pin.name)] = pin.sha256
    if content_hash is not None:
        expected[HASH_LABEL] = content_hash
    found = [Drift(k, labels.get(k), v) for k, v in expected.items() if labels.get(k) != v]
    pinned = {PIN_LABEL + label_key(p.name) for p in lane.pins}
    found += [
        Drift(k, v, None)
        for k, v in sorted(labels.items())
        if k.startswith(PIN_LABEL) and k not in pinned
    ]
    return found


@dataclass(frozen=True)
class Step:
    number: int
    total: int
    instruction: str
    seconds: float
    cached: bool


@dataclass(frozen=True)
class BuildReport:
    lane: str
    ref: str
    image_id: str
    built: bool
    seconds: float
    steps: tuple[Step, ...] = ()

    @property
    def build_seconds(self) -> float:
        """Time spent in the Dockerfile's steps (without wheelhouse and context)."""
        return sum(step.seconds for step in self.steps)


_STEP = re.compile(r"^Step (\d+)/(\d+) : (.*)$")
# The classic builder colours a step's stderr with ANSI escapes.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def follow(
    events: Iterable[Mapping[str, Any]],
    lane: str,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[str, tuple[Step, ...]]:
    """Echo a build's events with progress; return the image id and each step's duration.

    Raise EnvironmentSetupError naming the lane, the failed step and its last output.
    """
    steps: list[Step] = []
    current: tuple[int, int, str] | None = None
    started = clock()
    cached = False
    tail: deque[str] = deque(maxlen=25)
    image_id = ""

    def close_step() -> None:
        if current is not None:
            steps.append(Step(*current, seconds=clock() - started, cached=cached))
            mark = "cached" if cached else "done"
            reporter.current().line(f"[{lane}]   {mark} in {steps[-1].seconds:.1f} s")

    for event in events:
        if "error" in event:
            close_step()
            where = f"step {current[0]}/{current[1]} ({current[2]})" if current else "start"
            detail = "\n".join(tail)
            raise EnvironmentSetupError(
                f"lane '{lane}': image build failed at {where}: {str(event['error']).strip()}"
                + (f"\nlast output of the step:\n{detail}" if detail else "")
            )
        if "aux" in event and isinstance(event["aux"], Mapping) and "ID" in event["aux"]:
            image_id = str(event["aux"]["ID"])
        for line in _ANSI.sub("", str(event.get("stream", ""))).splitlines():
            match = _STEP.match(line)
            if match:
                close_step()
                current = (int(match[1]), int(match[2]), match[3])
                started, cached = clock(), False
                tail.clear()
                reporter.current().line(f"[{lane}] step {line[5:]}")
                continue
            if line.strip() == "---> Using cache":
                cached = True
            if line.strip():
                tail.append(line)
                reporter.current().line(f"[{lane}]   {line}")
    close_step()
    if not image_id:
        raise EnvironmentSetupError(f"lane '{lane}': the image build ended without an image")
    return image_id, tuple(steps)


def _place(source: Path, target: Path) -> None:
    """Put ``source`` at ``target``: a hard link where possible (wheels are large)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def add_smoke_wheel(folder: Path, root: Path | None = None) -> Path:
    """Build the ``ci`` package's wheel (the smoke suite) into ``folder``; return its path.

    It is built from a clean copy of the sources: an in-tree build could pick up stale
    files from an earlier ``build/`` folder.
    """
    root = root or source_root()
    tree = folder.parent / f".{folder.name}-sources"
    shutil.rmtree(tree, ignore_errors=True)
    for name in PACKAGE_SOURCES:
        source = root / name
        if source.is_dir():
            shutil.copytree(
                source, tree / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
            )
        else:
            _place(source, tree / name)
    try:
        process.run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", folder, tree],
            error=EnvironmentSetupError,
            what="building the smoke suite's wheel",
            capture=True,
        )
    finally:
        shutil.rmtree(tree, ignore_errors=True)
    wheels = sorted(folder.glob("flagci-*.whl"))
    if len(wheels) != 1:
        raise EnvironmentSetupError(f"building the smoke suite's wheel left {wheels} in {folder}")
    return wheels[0]


def label_line(labels: Mapping[str, str]) -> str:
    """One ``LABEL`` instruction carrying every label (the API's ``labels`` option would
    add one build step per label)."""
    pairs = []
    for key, value in sorted(labels.items()):
        quoted = json.dumps(value, ensure_ascii=False).replace("$", "\\$")
        pairs.append(f"{key}={quoted}")
    return "LABEL " + " \\\n      ".join(pairs) + "\n"


def build_context(
    recipe: Recipe,
    house: wheelhouse.Wheelhouse,
    labels: Mapping[str, str],
    folder: Path,
) -> Path:
    """Lay out the build context of ``recipe`` in ``folder`` (see the module docstring),
    all but the smoke suite's wheel (``add_smoke_wheel``).

    The context's Dockerfile is the family's, with one ``LABEL`` instruction appended.
    """
    compiler = label_key(compiler_pin(recipe.lane).name)
    layers: dict[str, list[wheelhouse.LockedWheel]] = {"deps": [], "compiler": []}
    for wheel in house.wheels:
        layers["compiler" if label_key(wheel.pin.name) == compiler else "deps"].append(wheel)
    dockerfile = recipe.dockerfile.read_text(encoding="utf-8")
    atomic.write_text(folder / "Dockerfile", dockerfile.rstrip("\n") + "\n" + label_line(labels))
    for layer, wheels in layers.items():
        target = folder / "wheelhouse" / layer
        target.mkdir(parents=True, exist_ok=True)
        for wheel in wheels:
            _place(wheel.path, target / wheel.path.name)
        atomic.write_text(target / wheelhouse.LOCK_NAME, wheelhouse.lock_text(wheels))
    smoke = folder / "smoke"
    smoke.mkdir(parents=True, exist_ok=True)
    atomic.write_text(smoke / "lane.json", recipe.lane.lane_json())
    (smoke / "lane.json").chmod(0o644)  # read by the image's unprivileged user
    return folder


def build(
    engine: Engine,
    matrix: LaneMatrix,
    lane: Lane,
    wheelhouse_root: Path,
    *,
    nocache: bool = False,
) -> BuildReport:
    """Build ``lane``'s image unless its tag exists (``nocache``: build every layer anew)."""
    started = time.monotonic()
    recipe = recipe_for(lane)
    existing = engine.image(recipe.ref)
    if existing is not None and not nocache:
        reporter.current().line(f"[{lane.name}] {recipe.ref} exists: nothing to build")
        return BuildReport(lane.name, recipe.ref, existing.id, built=False, seconds=0.0)
    if lane.base_image == baseimage.DEBIAN_BASE.ref:
        baseimage.ensure(engine)
    # Resolved before the build, so that its digest is the one of the base the build uses.
    base = engine.image(lane.base_image) or engine.pull(lane.base_image)
    house = wheelhouse.prepare(matrix, lane, wheelhouse_root / lane.name)
    created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    context = build_context(
        recipe,
        house,
        labels_for(recipe, house, created, base, provenance(source_root())),
        engine.scratch / f"context-{recipe.content_hash}",
    )
    add_smoke_wheel(context / "smoke")
    reporter.current().line(f"[{lane.name}] building {recipe.ref} from {recipe.dockerfile}")
    events = engine.build(context, tag=recipe.ref, buildargs=recipe.buildargs, nocache=nocache)
    try:
        image_id, steps = follow(events, lane.name)
    finally:
        shutil.rmtree(context, ignore_errors=True)
    return BuildReport(
        lane.name, recipe.ref, image_id, True, time.monotonic() - started, steps=steps
    )


def lane_images(engine: Engine, lane: str | None = None) -> list[ImageInfo]:
    """Local lane images (of ``lane``, or of every lane), newest first."""
    return engine.images(f"{LANE_LABEL}={lane}" if lane else LANE_LABEL)


def current_image(engine: Engine, lane: Lane) -> str:
    """The name of ``lane``'s image as the matrix and sources now describe it; must exist."""
    ref = recipe_for(lane).ref
    if engine.image(ref) is None:
        raise UsageError(f"lane '{lane.name}': no image {ref}; build it: flagci images build")
    return ref


def archive_name(ref: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", ref) + ".tar"


def save(engine: Engine, ref: str, folder: Path) -> tuple[Path, int]:
    """``docker save`` ``ref`` into ``folder`` (written atomically); return path and size."""
    path = folder / archive_name(ref)
    size = atomic.write_chunks(path, engine.save(ref))
    return path, size
