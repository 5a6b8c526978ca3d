"""Wall time of `flagci run` on the CPU lane against the same pytest invocation run directly.

The difference is the controller's overhead: checking the wheelhouse and the lane venv,
merging JUnit, writing the report. Run from the repository root with the controller venv:

    .venv/bin/python benchmarks/bench_local_run.py [--repeat N] [-- extra pytest args]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ci.build import environment
from ci.commands.options import cache_from, with_index_settings
from ci.lanes.matrix import load_matrix
from ci.run.executors import workers_arg


def timed(args: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(args, env=env, cwd=cwd, check=False, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    extra = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    matrix = with_index_settings(load_matrix(), os.environ)
    lane = matrix.default
    env_dir = environment.prepare(
        matrix, lane, cache_from(os.environ)
    )  # warm: both sides start from a built venv
    workers = workers_arg(0)  # as flagci run passes it: one per core
    base_env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    flagci, direct = [], []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i in range(args.repeat):
            flagci.append(
                timed(
                    [
                        sys.executable,
                        "-m",
                        "ci.cli",
                        "run",
                        "--lane",
                        lane.name,
                        "--results",
                        str(root / f"flagci-{i}"),
                        "--",
                        *extra,
                    ],
                    base_env,
                    Path.cwd(),
                )
            )
            out = root / f"direct-{i}"
            out.mkdir()
            direct_env = {
                **base_env,
                "FLAGCI_LANE_FILE": str(env_dir.lane_file),
                "FLAGCI_ARTIFACTS": str(out / "artifacts"),
                "TRITON_INTERPRET": "1",
            }
            direct.append(
                timed(
                    [
                        str(env_dir.python),
                        "-m",
                        "pytest",
                        "--pyargs",
                        "ci.smoke",
                        "-q",
                        "-n",
                        workers,
                        "-p",
                        "no:cacheprovider",
                        f"--junitxml={out / 'junit.xml'}",
                        *extra,
                    ],
                    direct_env,
                    out,
                )
            )
    f, d = statistics.median(flagci), statistics.median(direct)
    print(f"lane {lane.name}, {workers} workers, {args.repeat} runs each (median):")
    print(f"  flagci run        {f:7.1f} s   {[round(x, 1) for x in flagci]}")
    print(f"  pytest directly   {d:7.1f} s   {[round(x, 1) for x in direct]}")
    print(f"  overhead          {f - d:7.1f} s   ratio {f / d:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
