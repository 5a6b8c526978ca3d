"""The lane file, ``lane.json``: its one writer (``lane_text``) and its one reader
(``load_context``), and the smoke suite's view of its lane.

The controller builds the lane's fields (``ci.lanes.matrix.Lane.smoke_context``) and writes
them with ``lane_text`` into every lane environment (venv, image; a node gets the same text
from the controller). The suite finds the file at ``$FLAGCI_LANE_FILE``, else at
``<sys.prefix>/share/flagci/lane.json``. What belongs to the machine, not the lane, is never
written into the file: the node's name (``FLAGCI_NODE``) and where the model lies on it
(``FLAGCI_MODEL_PATH``, ``FLAGCI_TENSOR_PARALLEL_SIZE``) are given in the environment
(``python -m ci.smoke --node/--model-path/--tensor-parallel-size`` set them) and win over
the file. Standard library only.
"""

import functools
import json
import os
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from ci.smoke.contract.records import LANE_FILE_NAME

# The environment a lane's process reads (see the module's docstring).
LANE_FILE_ENV = "FLAGCI_LANE_FILE"
NODE_ENV = "FLAGCI_NODE"
MODEL_PATH_ENV = "FLAGCI_MODEL_PATH"
TENSOR_PARALLEL_SIZE_ENV = "FLAGCI_TENSOR_PARALLEL_SIZE"
# The real-kernel capture's cache folder (an image run mounts one of the node's there).
CAPTURE_CACHE_ENV = "FLAGCI_CAPTURE_CACHE"


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
    explicit = os.environ.get(LANE_FILE_ENV)
    if explicit:
        return Path(explicit)
    return Path(sys.prefix) / "share" / "flagci" / LANE_FILE_NAME


# The keys of a lane file: the required ones and how each is read, then the optional ones.
_FIELDS: Tuple[Tuple[str, Any], ...] = (
    ("lane", str),
    ("vendor", str),
    ("compiler", dict),
    ("inductor_backend", str),
    ("execution", str),
    ("tests", tuple),
    ("test_timeout_s", int),
)
REQUIRED_KEYS: Tuple[str, ...] = (*(key for key, _ in _FIELDS), "targets")
# node: the node the file was written for ("" : none; FLAGCI_NODE wins); model: the vLLM
# test's {name, path, tensor_parallel_size, max_model_len}, or null.
OPTIONAL_KEYS: Tuple[str, ...] = ("node", "env", "devices", "model")


def lane_text(fields: Mapping[str, Any]) -> str:
    """The one writer of a lane file: ``fields`` as its JSON text (keys sorted, so that the
    same lane gives the same bytes: the lane image's content hash holds them)."""
    missing = [key for key in REQUIRED_KEYS if key not in fields]
    unknown = sorted(set(fields) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS))
    if missing or unknown:
        raise ValueError(f"not a lane file's fields: missing {missing}, unknown {unknown}")
    return json.dumps(dict(fields), indent=2, sort_keys=True) + "\n"


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
        node=os.environ.get(NODE_ENV) or raw.get("node") or socket.gethostname(),
        targets=stack_targets(targets, devices) if execution == "device" else targets,
        declared_targets=targets,
        env=dict(raw.get("env") or {}),
        devices=devices,
        model=_node_model(raw.get("model"), path),
        source=str(path),
        **fields,
    )


def _node_model(model: Optional[Dict[str, Any]], path: Path) -> Optional[Dict[str, Any]]:
    """The lane's model with where this node keeps it (the environment), if it has one."""
    if model is None:
        return None
    found = dict(model)
    if os.environ.get(MODEL_PATH_ENV):
        found["path"] = os.environ[MODEL_PATH_ENV]
    size = os.environ.get(TENSOR_PARALLEL_SIZE_ENV)
    if size:
        try:
            found["tensor_parallel_size"] = int(size)
        except ValueError:
            raise LaneFileError(
                f"{path}: {TENSOR_PARALLEL_SIZE_ENV}={size!r} is not a whole number"
            ) from None
    return found


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
