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

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        if self.backend == "cuda" and isinstance(self.arch, int):
            return f"sm_{self.arch}"
        return f"{self.backend}_{self.arch}" if isinstance(self.arch, int) else str(self.arch)


@dataclass(frozen=True)
class LaneContext:
    lane: str
    vendor: str
    node: str
    compiler: Dict[str, str]
    targets: Tuple[Target, ...]
    inductor_backend: str
    execution: str
    tests: Tuple[str, ...]
    test_timeout_s: int
    env: Dict[str, str] = field(default_factory=dict)
    model: Optional[Dict[str, Any]] = None
    source: str = ""

    def runs(self, test_group: str) -> bool:
        return test_group in self.tests


def lane_file() -> Path:
    explicit = os.environ.get("FLAGCI_LANE_FILE")
    if explicit:
        return Path(explicit)
    return Path(sys.prefix) / "share" / "flagci" / "lane.json"


def load_context(path: Optional[Path] = None) -> LaneContext:
    path = path or lane_file()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RuntimeError(
            f"no lane file at {path}: run the smoke suite through `flagci run`, inside a lane "
            "image, or set FLAGCI_LANE_FILE to a file written by `flagci lanes context LANE`"
        ) from None
    targets = tuple(Target(**t) for t in raw["targets"])
    return LaneContext(
        lane=raw["lane"],
        vendor=raw["vendor"],
        node=os.environ.get("FLAGCI_NODE") or raw.get("node") or socket.gethostname(),
        compiler=dict(raw["compiler"]),
        targets=tuple(resolve_detected(t) for t in targets),
        inductor_backend=raw["inductor_backend"],
        execution=raw["execution"],
        tests=tuple(raw["tests"]),
        test_timeout_s=int(raw["test_timeout_s"]),
        env=dict(raw.get("env") or {}),
        model=raw.get("model"),
        source=str(path),
    )


@functools.lru_cache(maxsize=None)
def current_context() -> LaneContext:
    """The lane of this process, read once (test modules need it at collection time)."""
    return load_context()


def resolve_detected(target: Target) -> Target:
    """Arch 0 on cuda means "the GPU found": read its capability and shared memory."""
    if target.backend != "cuda" or target.arch != 0:
        return target
    try:
        import torch
    except ImportError:
        return target
    if not torch.cuda.is_available():
        return target
    major, minor = torch.cuda.get_device_capability()
    props = torch.cuda.get_device_properties(0)
    limit = int(getattr(props, "shared_memory_per_block_optin", 0)) or target.shared_limit
    return Target("cuda", major * 10 + minor, target.warp_size, limit)


def installed_versions() -> Dict[str, str]:
    """Versions of the compiler packages actually installed (not what the lane claims)."""
    from importlib import metadata

    found = {}
    for dist in ("triton", "flagtree", "torch"):
        try:
            found[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            found[dist] = ""
    return found
