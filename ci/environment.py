"""A lane environment on the controller itself: a venv holding exactly the lane's pins.

Used by the local run (the embedded default: no Docker, no node). The venv is built from
the lane's checked, hash-locked wheelhouse with ``pip install --no-index --require-hashes``
and reused while the lock is unchanged. The smoke suite is not installed into it: a
``.pth`` file points at this checkout, so the suite that runs is the one being developed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ci import atomic, process, wheelhouse
from ci.errors import EnvironmentSetupError
from ci.lanes import Lane, LaneMatrix

READY_MARK = "flagci-ready.json"


def cache_root(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    explicit = environ.get("FLAGCI_CACHE")
    return Path(explicit) if explicit else Path.home() / ".cache" / "flagci"


def source_root() -> Path:
    """The folder holding the ``ci`` package this controller runs from."""
    return Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class LaneEnvironment:
    lane: str
    venv: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def lane_file(self) -> Path:
        # Where ci.smoke.lane looks by default: <sys.prefix>/share/flagci/lane.json.
        return self.venv / "share" / "flagci" / "lane.json"


def lane_python(lane: Lane) -> str:
    host = f"{sys.version_info.major}.{sys.version_info.minor}"
    if lane.python == host:
        return sys.executable
    found = shutil.which(f"python{lane.python}")
    if found is None:
        raise EnvironmentSetupError(
            f"lane '{lane.name}' needs Python {lane.python} (key 'python'), and no "
            f"python{lane.python} is on PATH: run it in its image instead"
        )
    return found


def prepare(
    matrix: LaneMatrix, lane: Lane, cache: Path | None = None, node: str = "localhost"
) -> LaneEnvironment:
    cache = cache or cache_root()
    house = wheelhouse.prepare(matrix, lane, cache / "wheelhouse" / lane.name)
    lock_text = house.lock.read_text(encoding="utf-8")
    digest = hashlib.sha256(lock_text.encode()).hexdigest()[:16]
    env = LaneEnvironment(lane=lane.name, venv=cache / "envs" / f"{lane.name}-{digest}")
    mark = env.venv / READY_MARK
    if not mark.exists():
        _build(lane, env, house)
        atomic.write_text(mark, json.dumps({"lane": lane.name, "lock_sha256": digest}))
    # Cheap, and always current: where the suite comes from and what the lane says.
    site = next((env.venv / "lib").glob("python*/site-packages"))
    atomic.write_text(site / "flagci-smoke.pth", f"{source_root()}\n")
    atomic.write_text(env.lane_file, lane.lane_json(node))
    return env


def _build(lane: Lane, env: LaneEnvironment, house: wheelhouse.Wheelhouse) -> None:
    shutil.rmtree(env.venv, ignore_errors=True)
    what = f"lane '{lane.name}': building its venv"
    process.run(
        [lane_python(lane), "-m", "venv", "--without-pip", str(env.venv)],
        error=EnvironmentSetupError,
        what=what,
    )
    # The controller's pip installs into the lane venv: the venv itself needs no pip.
    process.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(env.python),
            "install",
            "--quiet",
            "--no-index",
            "--no-deps",
            "--find-links",
            str(house.folder),
            "--require-hashes",
            "-r",
            str(house.lock),
        ],
        error=EnvironmentSetupError,
        what=what,
    )
