"""A lane's wheelhouse: every pinned wheel downloaded, checked and hash-locked.

The controller downloads with its own pip configuration (one ``pip download`` per package
index, since each pin names its index), then checks each wheel before anything installs
it: the sha256 against the lane matrix where it is known, and the archive itself (a wheel
published as a broken zip must stop the lane here, not on a node). The result is
``requirements.lock``: one ``name==version --hash=sha256:...`` line per pin, installed
with ``pip install --no-index --require-hashes``.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import zipfile
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path

from ci.core import atomic, process
from ci.core.errors import ConfigError, EnvironmentSetupError
from ci.lanes.matrix import Lane, LaneMatrix, Pin

LOCK_NAME = "requirements.lock"
# Wheels already checked, by file name: [size, mtime_ns, sha256].
CHECKED_NAME = "checked.json"


class WheelError(EnvironmentSetupError):
    """A downloaded wheel is missing, has the wrong hash, or is not a valid archive."""


@dataclass(frozen=True)
class LockedWheel:
    """One checked wheel of a lane: the pin, its file and the file's sha256."""

    pin: Pin
    path: Path
    sha256: str

    @property
    def lock_line(self) -> str:
        return f"{self.pin.requirement} --hash=sha256:{self.sha256}"


@dataclass(frozen=True)
class Wheelhouse:
    lane: str
    folder: Path
    wheels: tuple[LockedWheel, ...] = ()

    @property
    def lock(self) -> Path:
        return self.folder / LOCK_NAME


def lock_text(wheels: Iterable[LockedWheel]) -> str:
    """The body of a ``requirements.lock`` for ``wheels``, for ``pip --require-hashes``."""
    return "".join(f"{wheel.lock_line}\n" for wheel in wheels)


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def find_wheel(folder: Path, pin: Pin) -> Path | None:
    """The wheel file for ``pin`` in ``folder`` (wheel names use ``_`` and keep ``+local``)."""
    stem = f"{_canonical(pin.name)}-{pin.version}-"
    for path in sorted(folder.glob("*.whl")):
        if path.name.lower().startswith(stem.lower()):
            return path
    return None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_wheel(lane: Lane, pin: Pin, path: Path) -> str:
    """Verify one wheel; return its sha256. Raise WheelError naming package and lane."""
    where = f"lane '{lane.name}': package '{pin.name}' {pin.version} ({path})"
    digest = sha256_of(path)
    if pin.sha256 is not None and digest != pin.sha256:
        raise WheelError(
            f"{where}: sha256 mismatch: the lane matrix pins {pin.sha256}, the file has {digest}"
            " (delete the file to download it again)"
        )
    try:
        with zipfile.ZipFile(path) as archive:
            broken = archive.testzip()
            names = archive.namelist()
            metadata = [n for n in names if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
            header = archive.read(metadata[0]).decode("utf-8") if len(metadata) == 1 else ""
    except (zipfile.BadZipFile, OSError, EOFError, UnicodeDecodeError) as err:
        raise WheelError(f"{where}: not a valid wheel archive: {err}") from None
    if broken is not None:
        raise WheelError(f"{where}: corrupt member in the wheel archive: {broken}")
    if not any(n.endswith(".dist-info/RECORD") for n in names):
        raise WheelError(f"{where}: not a wheel: no .dist-info/RECORD inside")
    if not header:
        raise WheelError(f"{where}: not a wheel: no single .dist-info/METADATA inside")
    fields = HeaderParser().parsestr(header)
    found = (str(fields.get("Name", "")), str(fields.get("Version", "")))
    if _canonical(found[0]) != _canonical(pin.name) or found[1] != pin.version:
        raise WheelError(f"{where}: the wheel's metadata says {found[0]} {found[1]}")
    return digest


def _download_args(lane: Lane) -> list[str]:
    host = f"{sys.version_info.major}.{sys.version_info.minor}"
    if lane.python == host:
        return []
    # A lane on another Python: ask pip for that interpreter's binary wheels.
    return [
        "--only-binary=:all:",
        "--python-version",
        lane.python,
        "--implementation",
        "cp",
        *[f"--platform=manylinux_2_{n}_x86_64" for n in (17, 27, 28, 31, 34, 35)],
        "--platform=manylinux2014_x86_64",
    ]


def prepare(matrix: LaneMatrix, lane: Lane, folder: Path) -> Wheelhouse:
    """Download (where missing), check and lock every pin of ``lane`` into ``folder``, each
    from its index at the URL ``matrix`` gives (``LaneMatrix.with_index_urls``)."""
    folder.mkdir(parents=True, exist_ok=True)
    missing: dict[str, list[Pin]] = defaultdict(list)
    for pin in lane.pins:
        if find_wheel(folder, pin) is None:
            missing[pin.index].append(pin)
    for index, pins in missing.items():
        try:
            url = matrix.index_url(index)
        except ConfigError as err:
            raise ConfigError(f"lane '{lane.name}': {err}") from None
        process.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--retries",
                "1",
                "--index-url",
                url,
                "--dest",
                str(folder),
                *_download_args(lane),
                *[p.requirement for p in pins],
            ],
            error=EnvironmentSetupError,
            what=f"lane '{lane.name}': downloading {', '.join(p.name for p in pins)}"
            f" from index '{index}'",
        )
    checked = _read_checked(folder)
    wheels = []
    for pin in lane.pins:
        path = find_wheel(folder, pin)
        if path is None:
            raise WheelError(
                f"lane '{lane.name}': package '{pin.name}' {pin.version}: no wheel in {folder}"
            )
        wheels.append(
            LockedWheel(pin=pin, path=path, sha256=_checked_sha256(lane, pin, path, checked))
        )
    house = Wheelhouse(lane=lane.name, folder=folder, wheels=tuple(wheels))
    atomic.write_text(house.lock, lock_text(house.wheels))
    atomic.write_text(folder / CHECKED_NAME, json.dumps(checked, indent=1, sort_keys=True))
    return house


def _read_checked(folder: Path) -> dict[str, list[object]]:
    try:
        data = json.loads((folder / CHECKED_NAME).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _checked_sha256(lane: Lane, pin: Pin, path: Path, checked: dict[str, list[object]]) -> str:
    """Check a wheel once per file: a wheel whose size and mtime are unchanged since it was
    checked keeps its verdict (hashing and testing a 200 MB archive on every run is slow)."""
    stat = path.stat()
    stamp: list[object] = [stat.st_size, stat.st_mtime_ns]
    record = checked.get(path.name)
    if record and record[:2] == stamp and (pin.sha256 is None or record[2] == pin.sha256):
        return str(record[2])
    digest = check_wheel(lane, pin, path)
    checked[path.name] = [*stamp, digest]
    return digest
