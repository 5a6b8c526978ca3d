"""Wall time of a warm `flagci run --inventory` of the CPU lane on one SSH test node against
the same smoke suite run directly in the lane's container on the same Docker engine.

The difference is the remote run's overhead: reading the inventory, ansible-runner and SSH,
preflight, the deploy check, collect (pack, fetch, unpack) and cleanup, merging JUnit. Both
sides start warm: the lane image and the node exist before the first timing. Run from the
repository root with the controller venv (needs Docker, like the integration tests):

    .venv/bin/python benchmarks/bench_remote_run.py [--repeat N] [-- extra pytest args]
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

from ci import images
from ci.engine import connect
from ci.environment import cache_root
from ci.executors import SuiteRequest, smoke_command
from ci.lanes import load_matrix

# The SSH test node is the tests' fixture (tests/fixtures/sshnodes.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.fixtures import sshnodes


def timed(args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(args, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    extra = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    lane = load_matrix().default
    with tempfile.TemporaryDirectory(prefix="bench-remote-") as scratch, connect() as engine:
        root = Path(scratch)
        image = images.build(engine, load_matrix(), lane, cache_root() / "wheelhouse").ref
        node_image = sshnodes.node_image(engine)
        key = sshnodes.ssh_key(root)
        node = sshnodes.start_node(engine, node_image, "bench", key, root / "nodes")
        try:
            inv = sshnodes.write_inventory(root / "inventory.yml", [node], key)
            remote = [sys.executable, "-m", "ci.cli", "run", "--lanes", lane.name,
                      "--inventory", str(inv), "--results", str(root / "results"),
                      "--no-history", "--workers", str(args.workers), "--", *extra]  # fmt: skip
            out = root / "direct"
            out.mkdir()
            request = SuiteRequest(workers=args.workers, pytest_args=tuple(extra))
            direct = ["docker", "run", "--rm", "--volume", f"{out}:/results",
                      "--env", "FLAGCI_NODE=bench", "--user", f"{os.getuid()}:{os.getgid()}",
                      "--env", "HOME=/tmp", image,
                      *smoke_command("python", "/results", lane, request)]  # fmt: skip
            timed(remote)  # warm-up: SSH host keys, page cache
            remote_s = [timed(remote) for _ in range(args.repeat)]
            direct_s = [timed(direct) for _ in range(args.repeat)]
        finally:
            sshnodes.remove(engine, [node])
    r, d = statistics.median(remote_s), statistics.median(direct_s)
    print(f"flagci run --inventory (1 node): {', '.join(f'{s:.1f}' for s in remote_s)} s")
    print(f"docker run of the same suite:    {', '.join(f'{s:.1f}' for s in direct_s)} s")
    print(f"median {r:.1f} s vs {d:.1f} s: overhead {r - d:.1f} s, ratio {r / d:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
