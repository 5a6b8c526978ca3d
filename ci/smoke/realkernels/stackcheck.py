"""The stack check: what a corpus's capture needs of the lane's stack, checked as it imports.

``python -m ci.smoke.realkernels.stackcheck CORPUS LANE_VENDOR OUT`` runs in the capture's
environment (``jobs.stack_problem`` starts it as it starts the capture: no
``TRITON_INTERPRET``, the corpus's import environment, FlagGems' vendor) and writes to OUT a
JSON list of problems, each saying what is missing and how to fix the image; empty when the
stack is ready. It checks, in order, stopping at the first that fails:

- the package's metadata: its dist-info (vLLM's platform detection reads its version);
- that the imported package is that installed distribution (not a module that shadows it);
- vLLM: Triton is the real one, not the placeholder vLLM puts in its place when it decides
  Triton is unusable, and the platform it detects (CUDA where a lane of NVIDIA GPUs has
  one active Triton driver);
- FlagGems: the vendor it selected is the one asked for (``GEMS_VENDOR``).
"""

import importlib
import json
import os
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Dict, List

from ci.smoke import files
from ci.smoke.realkernels.capture import CORPORA

# The package each corpus imports.
MODULES = {"vllm": "vllm", "flaggems": "flag_gems"}
# The platform vLLM must detect on a lane of this vendor where a Triton driver is active.
VLLM_DEVICE_TYPES = {"nvidia": "cuda"}


def problems(corpus: str, lane_vendor: str) -> List[str]:
    corpus_module = importlib.import_module(CORPORA[corpus])
    for name, value in corpus_module.import_env().items():
        os.environ.setdefault(name, value)
    package = corpus_module.SOURCE_PACKAGE
    name = MODULES[corpus]
    try:
        dist = metadata.distribution(package)
    except metadata.PackageNotFoundError:
        return [
            f"{package} has no installed metadata (no {package}-*.dist-info on sys.path),"
            f" which the capture reads: install {package} into the image with pip from the"
            " lane's wheelhouse, not as a copied source tree"
        ]
    try:
        module = importlib.import_module(name)
    except Exception as exc:
        return [f"importing {name} failed: {type(exc).__name__}: {exc}"]
    installed = Path(str(dist.locate_file(f"{name}/__init__.py"))).resolve()
    imported = Path(str(getattr(module, "__file__", "") or "")).resolve()
    if imported != installed:
        return [
            f"{name} is imported from {imported}, not from the installed {package}"
            f" {dist.version} ({installed}): a module shadows it; remove it from the image's"
            " PYTHONPATH or the working folder"
        ]
    if corpus == "vllm":
        return _vllm(lane_vendor)
    return _flaggems()


def _vllm(lane_vendor: str) -> List[str]:
    from vllm.platforms import current_platform
    from vllm.triton_utils import HAS_TRITON, triton

    from ci.smoke.compile import tritonapi

    platform = type(current_platform).__name__
    if not HAS_TRITON or triton is not sys.modules.get("triton"):
        return [
            f"vLLM replaced Triton with its placeholder (platform {platform}): it found"
            f" {tritonapi.active_driver_count()} active Triton driver(s) and decided Triton is"
            " unusable; check the image's Triton install and vLLM's metadata"
        ]
    expected = VLLM_DEVICE_TYPES.get(lane_vendor)
    if expected and tritonapi.active_driver_count() and current_platform.device_type != expected:
        return [
            f"vLLM detected the platform {platform} ({current_platform.device_type or 'none'}),"
            f" not {expected}, on a {lane_vendor} lane with an active driver: install vLLM's"
            f" {expected} build and its metadata"
        ]
    return []


def _flaggems() -> List[str]:
    from flag_gems import runtime

    asked = os.environ.get("GEMS_VENDOR", "")
    selected = runtime.device.vendor_name
    if asked and selected != asked:
        return [
            f"FlagGems selected the vendor {selected!r}, not {asked!r} (GEMS_VENDOR): its"
            f" _{asked} backend is missing from the installed flag-gems"
        ]
    return []


def main(argv: List[str]) -> int:
    corpus, lane_vendor, out = argv
    found: Dict[str, Any] = {"problems": problems(corpus, lane_vendor)}
    files.write_text(Path(out), json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
