"""The capture process: drive a package's own launchers and record every JIT launch.

``python -m ci.smoke.realkernels.capture CORPUS REQUEST OUT`` imports the corpus module
(``vllm``: ``ci.smoke.realkernels.vllm_corpus``, ``flaggems``:
``ci.smoke.realkernels.flaggems_corpus``), then, for each target in the request, runs every
scenario inside ``tritonapi.captured_launches``: each launch is bound by that target's backend
exactly as Triton's JIT would bind it, and nothing compiles or runs. It writes one JSON document to
OUT: the package and version, the environment the kernels were imported under, and per target and
scenario the launches (or the traceback of a scenario that failed in the package's own launcher).

A process of its own, because the kernels must be imported without ``TRITON_INTERPRET``
(the smoke suite's process interprets on CPU lanes) and the packages decide things at import
time (vLLM whether Triton is usable, FlagGems which vendor's kernels it loads).
"""

import dataclasses
import importlib
import json
import os
import sys
import traceback
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Dict, List

from ci.smoke import files

CORPORA = {
    "vllm": "ci.smoke.realkernels.vllm_corpus",
    "flaggems": "ci.smoke.realkernels.flaggems_corpus",
}


def _jsonable(value: Any) -> Any:
    """Constexpr values as JSON: IntEnums as ints; Triton dtypes are refused by name."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return int(value) if isinstance(value, int) and not isinstance(value, bool) else value
    raise TypeError(f"constexpr value {value!r} ({type(value).__name__}) has no JSON form")


def _distinct(launches: List[Any]) -> List[Any]:
    """Each specialisation once (the first launch of it, with its tags): an autotuner
    launches its best config a second time."""
    seen: List[Any] = []
    kept: List[Any] = []
    for launch in launches:
        bare = dataclasses.replace(launch, tags={})
        if bare not in seen:
            seen.append(bare)
            kept.append(launch)
    return kept


def capture(corpus_name: str, request: Dict[str, Any]) -> Dict[str, Any]:
    from ci.smoke.compile import tritonapi

    corpus = importlib.import_module(CORPORA[corpus_name])
    env = corpus.import_env()
    for name, value in env.items():
        os.environ.setdefault(name, value)
    try:
        package_version = version(corpus.SOURCE_PACKAGE)
    except PackageNotFoundError:
        package_version = ""
    results: List[Dict[str, Any]] = []
    for raw in request["targets"]:
        target = tritonapi.gpu_target(raw["backend"], raw["arch"], raw["warp_size"])
        for scenario, call in corpus.scenarios(target):
            entry: Dict[str, Any] = {"target": raw["label"], "scenario": scenario}
            try:
                with (
                    corpus.context(target),
                    tritonapi.captured_launches(target, corpus.launch_tags) as found,
                ):
                    call()
                entry["launches"] = [
                    {
                        "kernel": launch.kernel,
                        "module": launch.module,
                        "signature": launch.signature,
                        "constexprs": {k: _jsonable(v) for k, v in launch.constexprs.items()},
                        "attrs": {k: [list(p) for p in v] for k, v in launch.attrs.items()},
                        "options": launch.options,
                        "module_file": launch.file,
                        "tags": launch.tags,
                    }
                    for launch in _distinct(found)
                ]
            except Exception as exc:
                entry["error"] = f"{type(exc).__name__}: {exc}"
                entry["traceback"] = traceback.format_exc()
            results.append(entry)
    return {
        "package": corpus.SOURCE_PACKAGE,
        "version": package_version,
        "import_env": env,
        "results": results,
    }


def main(argv: List[str]) -> int:
    corpus_name, request_path, out_path = argv
    request = json.loads(Path(request_path).read_text(encoding="utf-8"))
    document = capture(corpus_name, request)
    files.write_text(Path(out_path), json.dumps(document, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
