"""Fixed overhead of a warm `flagci run --inventory` of the CPU lane on one SSH test node,
against the same smoke suite run directly in the lane's container on the same Docker engine.

The fixed overhead is what is not the suite: reading the inventory, ansible-runner and SSH,
preflight, the deploy check, starting and watching the lane, collect (pack, fetch, unpack)
and cleanup, merging JUnit. Each run's overhead is its wall time less the suite's own time
(the JUnit testsuite's ``time``), so that the suite's run-to-run spread on a loaded machine
stays out of the figure; the direct `docker run`'s own overhead (container and pytest
start) is subtracted too. Each remote run's overhead is also split by its run.json steps:
the playbook's share (its attempt less the suite) and flagci's own (start, inventory,
merging and reports). Both sides start warm: the lane image and the node exist before
the first timing, and the two kinds of run alternate. Run from the repository root with the
controller venv (needs Docker, like the integration tests):

    .venv/bin/python benchmarks/bench_remote_run.py [--repeat N] [-- extra pytest args]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

from ci.build import images
from ci.build.engine import connect
from ci.commands.options import cache_from, with_index_settings
from ci.lanes.matrix import load_matrix
from ci.run.executors import SuiteRequest, smoke_command

# The SSH test node is the tests' fixture (tests/fixtures/sshnodes.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.fixtures import sshnodes


def timed(args: list[str], junit_of: Callable[[], Path]) -> tuple[float, float]:
    """(wall seconds, the suite's own seconds from its JUnit) of one run of ``args``."""
    started = time.perf_counter()
    subprocess.run(args, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    root = ET.parse(junit_of()).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    return wall, sum(float(suite.get("time") or 0) for suite in suites)


def split(run_dir: Path, wall: float, suite: float) -> str:
    """The overhead of one remote run, split into the playbook's and flagci's own."""
    steps = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["steps"]
    attempts = sum(s["seconds"] for s in steps if s["name"].startswith("attempt"))
    return f"playbook {attempts - suite:.1f} s + flagci {wall - attempts:.1f} s"


def show(name: str, runs: list[tuple[float, float]]) -> float:
    overheads = [wall - suite for wall, suite in runs]
    cells = ", ".join(f"{wall:.1f} s (suite {suite:.1f} s)" for wall, suite in runs)
    print(f"{name}: {cells}; overhead median {statistics.median(overheads):.1f} s")
    return statistics.median(overheads)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    extra = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    lane = load_matrix().default
    with tempfile.TemporaryDirectory(prefix="bench-remote-") as scratch, connect() as engine:
        root = Path(scratch)
        matrix = with_index_settings(load_matrix(), os.environ)
        image = images.build(engine, matrix, lane, cache_from(os.environ) / "wheelhouse").ref
        node_image = sshnodes.node_image(engine)
        key = sshnodes.ssh_key(root)
        node = sshnodes.start_node(engine, node_image, "bench", key, root / "nodes")
        try:
            inv = sshnodes.write_inventory(root / "inventory.yml", [node], key)
            results = root / "results"
            remote = [sys.executable, "-m", "ci.cli", "run", "--lanes", lane.name,
                      "--inventory", str(inv), "--results", str(results),
                      "--no-history", "--workers", str(args.workers), "--", *extra]  # fmt: skip

            def newest() -> Path:
                return max(results.iterdir(), key=lambda p: p.name)

            def remote_junit() -> Path:
                return newest() / "lanes" / f"bench__{lane.name}" / "junit.xml"

            out = root / "direct"
            out.mkdir()
            request = SuiteRequest(workers=args.workers, pytest_args=tuple(extra))
            direct = ["docker", "run", "--rm", "--volume", f"{out}:/results",
                      "--env", "FLAGCI_NODE=bench", "--user", f"{os.getuid()}:{os.getgid()}",
                      "--env", "HOME=/tmp", image,
                      *smoke_command("python", "/results", lane, request)]  # fmt: skip
            timed(remote, remote_junit)  # warm-up: SSH host keys, page cache
            remote_runs, direct_runs, splits = [], [], []
            for _ in range(args.repeat):
                remote_runs.append(timed(remote, remote_junit))
                splits.append(split(newest(), *remote_runs[-1]))
                direct_runs.append(timed(direct, lambda: out / "junit.xml"))
        finally:
            sshnodes.remove(engine, [node])
    r = show("flagci run --inventory (1 node)", remote_runs)
    print(f"  overhead of each remote run: {'; '.join(splits)}")
    d = show("docker run of the same suite   ", direct_runs)
    print(f"fixed overhead of the remote run per (node, lane): {r - d:.1f} s")
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
