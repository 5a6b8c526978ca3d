"""The smoke suite's view of its lane: plain JSON written by the controller.

Found at ``$FLAGCI_LANE_FILE``, else at ``<sys.prefix>/share/flagci/lane.json`` (where the
controller puts it in every lane environment, venv or image). Standard library only.
"""

import functools
import json
import os
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Optional, Tuple, Union


@dataclass(frozen=True)
class Target:
    backend: str
    arch: Union[int, str]
    warp_size: int
    shared_limit: int
    name: Optional[str] = None
    # The last stage this node's toolchain can run for the target (None: every stage).
    last_stage: Optional[str] = None

    @property
    def label(self) -> str:
        return target_label(self.backend, self.arch, self.name)


def target_label(backend: str, arch: Union[int, str], name: Optional[str] = None) -> str:
    """How a target is named in test ids and properties: its name, else sm_90, gfx942 ..."""
    if name:
        return name
    if backend == "cuda" and isinstance(arch, int):
        return "sm_detect" if arch == 0 else f"sm_{arch}"
    return f"{backend}_{arch}" if isinstance(arch, int) else str(arch)


@dataclass(frozen=True)
class LaneContext:
    lane: str
    vendor: str
    node: str
    compiler: Dict[str, str]
    # What the compile tests use: the lane file's targets, or on a device lane whose driver
    # answers, the driver's own target (see ci.smoke.compile.stack).
    targets: Tuple[Target, ...]
    # What the lane file says; test_stack_facts holds the two against each other.
    declared_targets: Tuple[Target, ...]
    inductor_backend: str
    execution: str
    tests: Tuple[str, ...]
    test_timeout_s: int
    env: Dict[str, str] = field(default_factory=dict)
    devices: Tuple[str, ...] = ()
    model: Optional[Dict[str, Any]] = None
    source: str = ""

    def runs(self, test_group: str) -> bool:
        return test_group in self.tests


def lane_file() -> Path:
    explicit = os.environ.get("FLAGCI_LANE_FILE")
    if explicit:
        return Path(explicit)
    return Path(sys.prefix) / "share" / "flagci" / "lane.json"


class LaneFileError(RuntimeError):
    """The lane file is missing or malformed; the message names the file and the key."""


def load_context(path: Optional[Path] = None) -> LaneContext:
    path = path or lane_file()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LaneFileError(
            f"no lane file at {path}: run the smoke suite through `flagci run`, inside a lane "
            "image, or set FLAGCI_LANE_FILE to a file written by `flagci lanes context LANE`"
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise LaneFileError(f"{path}: not a JSON lane file: {err}") from None
    if not isinstance(raw, dict):
        raise LaneFileError(f"{path}: a lane file is a JSON object")
    key = "targets"
    try:
        targets = tuple(Target(**t) for t in raw["targets"])
        key = "devices"
        devices = tuple(str(d) for d in raw.get("devices") or ())
        fields = {}
        for key, convert in _FIELDS:
            fields[key] = convert(raw[key])
    except (KeyError, TypeError, ValueError) as err:
        raise LaneFileError(f"{path}: key '{key}': missing or malformed ({err})") from None
    execution = fields["execution"]
    return LaneContext(
        node=os.environ.get("FLAGCI_NODE") or raw.get("node") or socket.gethostname(),
        targets=stack_targets(targets, devices) if execution == "device" else targets,
        declared_targets=targets,
        env=dict(raw.get("env") or {}),
        devices=devices,
        model=raw.get("model"),
        source=str(path),
        **fields,
    )


# The required keys of a lane file and how each is read (the controller's
# ci.lanes.matrix.Lane.smoke_context writes them).
_FIELDS: Tuple[Tuple[str, Any], ...] = (
    ("lane", str),
    ("vendor", str),
    ("compiler", dict),
    ("inductor_backend", str),
    ("execution", str),
    ("tests", tuple),
    ("test_timeout_s", int),
)


@functools.lru_cache(maxsize=None)
def current_context() -> LaneContext:
    """The lane of this process, read once (test modules need it at collection time)."""
    return load_context()


def stack_targets(declared: Tuple[Target, ...], devices: Tuple[str, ...]) -> Tuple[Target, ...]:
    """A device lane compiles for what its driver reports, where the driver can be asked."""
    from ci.smoke.compile import stack

    if stack.missing_device(devices):
        return declared
    driver = stack.probe_driver()
    if not driver.probed or driver.warp_size is None:
        return declared
    first = declared[0]
    probed = Target(
        backend=driver.backend,
        arch=driver.arch,
        warp_size=driver.warp_size,
        shared_limit=driver.shared_per_block or first.shared_limit,
        name=first.name,
        last_stage=first.last_stage,
    )
    return (probed, *declared[1:])


def installed_versions() -> Dict[str, str]:
    """Versions of the compiler packages actually installed (not what the lane claims)."""
    from importlib import metadata

    found = {}
    for dist in ("triton", "triton-ascend", "flagtree", "torch"):
        try:
            found[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            found[dist] = ""
    return found
