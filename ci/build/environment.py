"""A lane environment on the controller itself: a venv holding exactly the lane's pins.

Used by the local run (the embedded default: no Docker, no node). The venv is built from
the lane's checked, hash-locked wheelhouse with ``pip install --no-index --require-hashes``
and reused while the lock is unchanged, by every checkout on the machine. What belongs to
one checkout lives in a small venv of its own layered on the shared one: a ``.pth`` file
pointing at this checkout (the smoke suite is not installed: the suite that runs is the one
being developed) and the lane file. Two checkouts sharing one cache (two worktrees, a CI
clone beside a developer's) never run each other's suite.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from ci.build import wheelhouse
from ci.core import atomic, process
from ci.core.errors import EnvironmentSetupError
from ci.lanes.matrix import Lane, LaneMatrix

READY_MARK = "flagci-ready.json"


def source_root() -> Path:
    """The folder holding the ``ci`` package this controller runs from."""
    return Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class LaneEnvironment:
    lane: str
    venv: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def lane_file(self) -> Path:
        # Where ci.smoke.contract.lane looks by default: <sys.prefix>/share/flagci/lane.json.
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
    matrix: LaneMatrix, lane: Lane, cache: Path, node: str = "localhost"
) -> LaneEnvironment:
    """``lane``'s venv under the cache folder ``cache`` (``$FLAGCI_CACHE``: read by the
    command line, ``ci.commands.options.cache_from``), its wheels from there too."""
    house = wheelhouse.prepare(matrix, lane, cache / "wheelhouse" / lane.name)
    lock_text = house.lock.read_text(encoding="utf-8")
    digest = hashlib.sha256(lock_text.encode()).hexdigest()[:16]
    packages = LaneEnvironment(lane=lane.name, venv=cache / "envs" / f"{lane.name}-{digest}")
    mark = packages.venv / READY_MARK
    if not mark.exists():
        _build(lane, packages, house)
        atomic.write_text(mark, json.dumps({"lane": lane.name, "lock_sha256": digest}))
    checkout = hashlib.sha256(str(source_root()).encode()).hexdigest()[:12]
    env = LaneEnvironment(
        lane=lane.name, venv=cache / "checkouts" / f"{lane.name}-{digest}-{checkout}"
    )
    if not env.python.exists():
        _venv(lane, env)
    # Cheap, and always current: where the suite comes from, the shared packages and what
    # the lane says. The .pth files are read in name order, so this checkout comes first on
    # sys.path; a .pth line starting with "import" runs: addsitedir also reads the shared
    # site's own .pth files, as if it were this venv's.
    site = _site_packages(env)
    shared = _site_packages(packages)
    atomic.write_text(site / "flagci-lane.pth", f"import site; site.addsitedir({str(shared)!r})\n")
    atomic.write_text(site / "flagci-checkout.pth", f"{source_root()}\n")
    atomic.write_text(env.lane_file, lane.lane_json(node))
    return env


def _site_packages(env: LaneEnvironment) -> Path:
    return next((env.venv / "lib").glob("python*/site-packages"))


def _venv(lane: Lane, env: LaneEnvironment) -> None:
    process.run(
        [lane_python(lane), "-m", "venv", "--without-pip", str(env.venv)],
        error=EnvironmentSetupError,
        what=f"lane '{lane.name}': making its venv",
    )


def _build(lane: Lane, env: LaneEnvironment, house: wheelhouse.Wheelhouse) -> None:
    shutil.rmtree(env.venv, ignore_errors=True)
    _venv(lane, env)
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
        what=f"lane '{lane.name}': installing its pins",
    )
