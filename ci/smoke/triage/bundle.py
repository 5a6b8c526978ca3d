"""Reproducer bundle: everything a vendor needs to replay one failed compile, in one folder.

Runs inside a lane environment (standard library and triton only). The bundle holds the
kernel's source file, ``spec.json`` (function, signature, constexprs, attrs, options, target),
``stack.json`` (Triton version, Python, platform, the compiler-related environment), the
MLIR reproducers and the IR of the last good stage from the test's artifacts, the failure
text, and ``replay.py``: ``python replay.py`` inside the bundle replays the compile and
needs nothing but triton.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from ci.smoke.compile import tritonapi
from ci.smoke.contract.records import FAILURE_TEXT_NAME, REPLAY_NAME, SPEC_NAME, STACK_NAME

REPLAY = Path(__file__).with_name("replay.py")
# The replay needs the Triton-API adapter beside it: a bundle carries no ci package.
ADAPTER = Path(tritonapi.__file__)
# Environment variables that change what the compiler does; secrets never match these.
ENV_PREFIXES = ("TRITON_", "MLIR_", "LLVM_", "FLAGTREE_", "XPU_", "UMD_", "CUDA_", "HIP_", "ROCM_")
ENV_NAMES = ("LD_LIBRARY_PATH", "PYTHONPATH")
IR_SUFFIXES = (".ttir", ".ttgir", ".llir", ".ptx", ".amdgcn", ".mlir")
COMMAND = "python replay.py"


@dataclass(frozen=True)
class CompileSpec:
    source: Path
    function: str
    signature: Mapping[str, str]
    constexprs: Mapping[str, Any]
    attrs: Mapping[str, Any]
    options: Mapping[str, Any]
    target: Mapping[str, Any]

    def to_json(self, source_name: str) -> dict[str, Any]:
        return {
            "source": source_name,
            "function": self.function,
            "signature": dict(self.signature),
            "constexprs": dict(self.constexprs),
            "attrs": {name: [list(pair) for pair in pairs] for name, pairs in self.attrs.items()},
            "options": dict(self.options),
            "target": dict(self.target),
        }


def compiler_env(environ: Mapping[str, str]) -> dict[str, str]:
    return {
        k: v for k, v in sorted(environ.items()) if k.startswith(ENV_PREFIXES) or k in ENV_NAMES
    }


def stack() -> dict[str, Any]:
    packages = {}
    for name in ("triton", "triton-ascend", "flagtree", "torch", "numpy"):
        try:
            packages[name] = version(name)
        except PackageNotFoundError:
            continue
    return {
        "triton": tritonapi.compiler_version(),
        "packages": packages,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "env": compiler_env(os.environ),
    }


def write(
    folder: Path,
    spec: CompileSpec,
    failure_text: str,
    artifacts: Path | None = None,
) -> Path:
    """Write the bundle for one failed compile into ``folder``; return ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    source_name = f"kernel_{spec.source.name}"
    shutil.copyfile(spec.source, folder / source_name)
    shutil.copyfile(REPLAY, folder / REPLAY_NAME)
    shutil.copyfile(ADAPTER, folder / "tritonapi.py")
    # Key order kept: the signature lists the kernel's arguments in order.
    _write_json(folder / SPEC_NAME, spec.to_json(source_name))
    _write_json(folder / STACK_NAME, stack())
    (folder / FAILURE_TEXT_NAME).write_text(failure_text, encoding="utf-8")
    copied: list[str] = []
    if artifacts is not None and artifacts.is_dir():
        for path in sorted(artifacts.rglob("*")):
            if path.is_file() and (path.name.endswith(".repro.mlir") or path.suffix in IR_SUFFIXES):
                kept = folder / "ir" / path.relative_to(artifacts)
                kept.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, kept)
                copied.append(str(kept.relative_to(folder)))
    target = spec.target
    lines = [
        f"# Reproducer: {spec.function} for {target['backend']} {target['arch']}",
        "",
        "Replay the compile (needs only the same Triton / FlagTree stack):",
        "",
        f"    {COMMAND}",
        "",
        "Exit status 1 and the error below mean the failure reproduced; 0 means it compiled.",
        "",
        "## Failure",
        "",
        *("    " + line for line in failure_text.strip().splitlines()),
        "",
    ]
    if copied:
        lines += ["## MLIR reproducers and IR", "", *(f"- {name}" for name in copied), ""]
    (folder / "README.md").write_text("\n".join(lines), encoding="utf-8")
    return folder


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
