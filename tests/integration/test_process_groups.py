"""A command's timeout ends its whole process group: xdist workers and their children.

Real pytest with real xdist workers, in the CPU lane's venv (the controller has no xdist).
"""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest

from ci.build.environment import LaneEnvironment
from ci.core import process
from ci.core.errors import InfrastructureError

pytestmark = pytest.mark.integration

HANGING_SUITE = """
import os
import pathlib
import subprocess
import sys
import time


def test_hang_a():
    hang()


def test_hang_b():
    hang()


def hang():
    # Like the suite's compile workers: each xdist worker has a child of its own.
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    pathlib.Path(os.environ["PIDS"], f"{worker}-{os.getpid()}").write_text("")
    pathlib.Path(os.environ["PIDS"], f"{worker}.child-{child.pid}").write_text("")
    time.sleep(3600)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead but not yet reaped; /proc says which.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(") ", 1)[1][0] != "Z"


def test_a_timeout_kills_the_xdist_workers_too(
    tmp_path: Path, cpu_lane_env: LaneEnvironment
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_hang.py").write_text(textwrap.dedent(HANGING_SUITE))
    pids = tmp_path / "pids"
    pids.mkdir()
    args = [cpu_lane_env.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2"]

    started = time.monotonic()
    with pytest.raises(InfrastructureError, match="hanging suite: timed out after 60 s"):
        process.run(
            [*args, str(suite)],
            error=InfrastructureError,
            what="hanging suite",
            env={"PIDS": str(pids)},
            cwd=suite,
            timeout=60,
        )
    assert time.monotonic() - started < 60 + process.KILL_GRACE_S + 10

    names = [path.name for path in pids.iterdir()]
    workers = {name.split("-")[0]: int(name.split("-")[1]) for name in names}
    assert set(workers) == {"gw0", "gw1", "gw0.child", "gw1.child"}, "all must have started"
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in workers.values()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in workers.values() if alive(pid)]
