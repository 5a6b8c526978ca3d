"""The local run: the embedded default. Lanes run on this machine, in their own venvs.

For each lane: prepare its environment (wheelhouse, venv), run the smoke suite with pytest
spread over the machine's cores, then finish the run record. No Docker, no node.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ci import environment, process, runrecord
from ci.errors import EnvironmentSetupError, InfrastructureError
from ci.lanes import Lane, LaneMatrix

NODE = "localhost"


@dataclass(frozen=True)
class LocalRunOptions:
    results_root: Path
    workers: int = 0  # 0: one per core
    pytest_args: tuple[str, ...] = ()
    cache: Path | None = None


def worker_count(requested: int) -> int:
    return requested if requested > 0 else max(1, len(os.sched_getaffinity(0)))


def run_lanes(
    matrix: LaneMatrix, lanes: list[Lane], options: LocalRunOptions
) -> runrecord.RunResult:
    run = runrecord.start(options.results_root, "local")
    run_dir = run.run_dir
    steps = runrecord.Steps()
    parts = []
    for lane in lanes:
        folder = run_dir / "lanes" / runrecord.part_name(NODE, lane.name)
        part = runrecord.Part(node=NODE, lane=lane.name, folder=folder)
        parts.append(part)
        try:
            with steps.step(f"{lane.name}: prepare environment"):
                env = environment.prepare(matrix, lane, options.cache, node=NODE)
        except EnvironmentSetupError as err:
            part.infrastructure_error = f"environment: {err}"
            print(f"flagci: {part.infrastructure_error}", file=sys.stderr)
            continue
        with steps.step(f"{lane.name}: smoke suite"):
            part.infrastructure_error = _smoke(env, lane, folder, options)
    with steps.step("merge JUnit, write report"):
        result = runrecord.finish(run_dir, run.run_id, "local", run.started, matrix, lanes, parts)
    print("\nsteps:\n" + steps.table(), flush=True)
    return result


def _smoke(
    env: environment.LaneEnvironment, lane: Lane, folder: Path, options: LocalRunOptions
) -> str:
    """Run the suite; return an infrastructure error message, or "" if pytest completed."""
    args = [
        str(env.python),
        "-m",
        "ci.smoke",
        "--results",
        str(folder),
        "--node",
        NODE,
        "--",
        "-q",
        "-n",
        str(worker_count(options.workers)),
        f"--timeout={lane.test_timeout_s}",
        *options.pytest_args,
    ]
    child_env = {"FLAGCI_LANE_FILE": str(env.lane_file), **lane.device.env}
    folder.mkdir(parents=True, exist_ok=True)
    try:
        result = process.run(
            args,
            cwd=folder,
            error=InfrastructureError,
            what=f"lane '{lane.name}': smoke suite",
            env=child_env,
            timeout=lane.timeout_s,
            check=False,
        )
    except InfrastructureError as err:
        return str(err)
    # pytest: 0 all passed, 1 some failed; anything else means the run itself broke.
    if result.returncode in (0, 1):
        return ""
    return f"lane '{lane.name}': the smoke suite exited with status {result.returncode}"
