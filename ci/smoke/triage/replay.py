"""Replay one ahead-of-time Triton compile from a JSON compile spec.

Self-contained on purpose: it imports only the standard library and triton, so it can be
copied into a reproducer bundle and run on any machine with the same stack::

    python replay.py                 # replays spec.json next to this file
    python replay.py spec.json --constexpr BLOCK_T=512 --option num_stages=1

The spec names the kernel's source file (relative to the spec), the function, the
signature, constexprs, compile options and the target (backend, arch, warp size and the
per-block shared memory limit; 0 means no limit is checked). Each replay compiles with a
fresh ``TRITON_CACHE_DIR`` (a cache hit would skip the passes and write no reproducer)
and ``TRITON_REPRODUCER_PATH`` under ``--out``. Exit status: 0 the compile succeeds,
1 it fails (the error is printed and written to ``<out>/result.json``), 2 bad input.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

try:
    from ci.smoke.compile import tritonapi
except ImportError:  # in a bundle, where the adapter is copied next to this file
    import tritonapi  # type: ignore[import-not-found, no-redef]

SPEC_KEYS = {"source", "function", "signature", "constexprs", "attrs", "options", "target"}
TARGET_KEYS = {"backend", "arch", "warp_size", "shared_limit"}


def read_spec(path: Path) -> dict[str, Any]:
    try:
        spec = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise SystemExit(f"replay: {path}: cannot read the compile spec: {err}") from None
    if not isinstance(spec, dict):
        raise SystemExit(f"replay: {path}: the compile spec must be a JSON object")
    missing = SPEC_KEYS - set(spec)
    unknown = set(spec) - SPEC_KEYS
    if missing or unknown:
        raise SystemExit(
            f"replay: {path}: missing keys {sorted(missing)}, unknown keys {sorted(unknown)}"
        )
    target_missing = TARGET_KEYS - set(spec["target"])
    if target_missing:
        raise SystemExit(f"replay: {path}: key 'target' lacks {sorted(target_missing)}")
    return spec


def parse_assignment(text: str) -> tuple[str, Any]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise SystemExit(f"replay: expected NAME=VALUE, got {text!r}")
    try:
        return name, json.loads(value)
    except json.JSONDecodeError:
        return name, value


def load_function(source: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"replayed_{source.stem}", source)
    if spec is None or spec.loader is None:
        raise SystemExit(f"replay: {source}: not a Python source file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        return getattr(module, name)
    except AttributeError:
        raise SystemExit(f"replay: {source}: no kernel named {name!r}") from None


def compile_spec(spec: dict[str, Any], base: Path) -> Any:
    """Compile; return the compiled kernel or raise what triton raised (or OutOfResources)."""
    import triton
    from triton.runtime.errors import OutOfResources

    function = load_function(base / spec["source"], spec["function"])
    target = spec["target"]
    signature = dict(spec["signature"])
    for name in spec["constexprs"]:
        signature.setdefault(name, "constexpr")
    gpu = tritonapi.gpu_target(target["backend"], target["arch"], target["warp_size"])
    attrs = {name: [tuple(pair) for pair in pairs] for name, pairs in spec["attrs"].items()}
    source = tritonapi.ast_source(function, signature, dict(spec["constexprs"]), attrs, gpu)
    kernel = triton.compile(source, target=gpu, options=dict(spec["options"]))
    shared = tritonapi.compiled_facts(kernel).shared
    limit = int(target["shared_limit"])
    # Triton raises OutOfResources only when loading on a device; ahead of time, the
    # target's per-block limit is checked here, in the same words.
    if limit and shared is not None and shared > limit:
        raise OutOfResources(shared, limit, "shared memory")
    return kernel


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spec", nargs="?", default=str(Path(__file__).with_name("spec.json")))
    parser.add_argument("--constexpr", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--out", default=None, help="folder for result.json and reproducers")
    args = parser.parse_args(argv)

    spec_path = Path(args.spec).resolve()
    spec = read_spec(spec_path)
    spec["constexprs"].update(parse_assignment(a) for a in args.constexpr)
    spec["options"].update(parse_assignment(a) for a in args.option)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="replay-"))
    out.mkdir(parents=True, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="cache-", dir=out)
    os.environ.setdefault("TRITON_REPRODUCER_PATH", str(out / "reproducer"))

    import triton

    print(
        f"replay: {spec['function']} from {spec['source']} for {spec['target']}"
        f" with triton {triton.__version__}\n"
        f"  constexprs {json.dumps(spec['constexprs'])}\n  options {json.dumps(spec['options'])}",
        flush=True,
    )
    result: dict[str, Any] = {"constexprs": spec["constexprs"], "options": spec["options"]}
    try:
        kernel = compile_spec(spec, spec_path.parent)
    except Exception as err:
        result.update(ok=False, error_type=type(err).__name__, error=str(err))
        result["traceback"] = traceback.format_exc()
        print(result["traceback"], file=sys.stderr, flush=True)
        print(f"replay: compile FAILED: {type(err).__name__}: {err}", flush=True)
        status = 1
    else:
        facts = tritonapi.compiled_facts(kernel)
        result.update(ok=True, shared=facts.shared, stages=list(facts.stages))
        ttgir = kernel.asm.get("ttgir")
        if isinstance(ttgir, str):
            (out / "kernel.ttgir").write_text(ttgir, encoding="utf-8")
            result["ttgir_sha256"] = tritonapi.ir_identity(ttgir)
        print(f"replay: compile succeeded (shared memory {facts.shared} bytes)", flush=True)
        status = 0
    (out / "result.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    return status


if __name__ == "__main__":
    sys.exit(main())
