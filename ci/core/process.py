"""The one subprocess helper: every external command goes through ``run`` and is echoed.

Each command starts in a process group of its own, so that a timeout (or an interrupt of
flagci) ends everything it started: pytest's xdist workers, a compile worker, a container
client, not only the direct child.

A command inherits this process's environment, as every child process does; ``env`` adds
variables for it on top (the one place ``ci`` outside the command line reads
``os.environ``: to hand it on, never for a setting of its own).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from ci.core import reporter
from ci.core.errors import FlagCIError

# After SIGTERM a group gets this long to exit before SIGKILL.
KILL_GRACE_S = 5.0


def quoted(args: Sequence[str | os.PathLike[str]]) -> str:
    return shlex.join(str(a) for a in args)


def echo(args: Sequence[str | os.PathLike[str]]) -> None:
    reporter.current().command(quoted(args))


def kill_group(child: subprocess.Popen[str]) -> None:
    """SIGTERM the child's whole process group; SIGKILL whatever is left after a grace
    (members that ignore SIGTERM, or outlive their leader)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(timeout=KILL_GRACE_S)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def run(
    args: Sequence[str | os.PathLike[str]],
    *,
    error: type[FlagCIError],
    what: str,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    capture: bool = False,
    timeout: float | None = None,
    check: bool = True,
    quiet: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run a command after echoing it (unless ``quiet``); raise ``error`` (naming ``what``)
    if it fails or runs past ``timeout``, which ends its whole process group.

    ``env``: variables set for the command on top of the environment it inherits.
    With ``capture`` the output is returned (and put in the error message on failure);
    without it the command writes straight to this process' stdout and stderr, unless the
    reporter has a live display on the terminal: then its output goes through the reporter,
    line by line, so that it is printed above the display instead of through it.
    """
    if not quiet:
        echo(args)
    full_env = None if env is None else {**os.environ, **env}
    streamed = not capture and reporter.current().live
    stdout_to = subprocess.PIPE if capture or streamed else None
    stderr_to = subprocess.STDOUT if streamed else (subprocess.PIPE if capture else None)
    try:
        child = subprocess.Popen(
            [str(a) for a in args],
            env=full_env,
            cwd=cwd,
            text=True,
            errors="replace" if streamed else None,
            stdout=stdout_to,
            stderr=stderr_to,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise error(f"{what}: command not found: {args[0]}") from None
    forwarder = _forward_lines(child) if streamed else None
    stdout: str | None = None
    stderr: str | None = None
    try:
        if forwarder is None:
            stdout, stderr = child.communicate(timeout=timeout)
        else:
            child.wait(timeout=timeout)
            _drain(child, forwarder)
    except subprocess.TimeoutExpired:
        kill_group(child)
        if forwarder is not None:
            _drain(child, forwarder)
        raise error(f"{what}: timed out after {timeout} s: {quoted(args)}") from None
    except BaseException:  # an interrupt of flagci: take the command's group down with it
        kill_group(child)
        raise
    result = subprocess.CompletedProcess(child.args, child.returncode, stdout, stderr)
    if check and result.returncode != 0:
        detail = ""
        if capture:
            tail = (result.stderr or result.stdout or "").strip().splitlines()[-20:]
            detail = "\n" + "\n".join(tail)
        raise error(f"{what} failed (exit {result.returncode}){detail}")
    return result


def _forward_lines(child: subprocess.Popen[str]) -> threading.Thread:
    """Hand each line the child (and whatever it starts) writes to the reporter."""
    assert child.stdout is not None
    lines = child.stdout
    out = reporter.current()

    def forward() -> None:
        with lines:
            for text in lines:
                out.output(text.rstrip("\n"))

    thread = threading.Thread(target=forward, name=f"output of {child.pid}", daemon=True)
    thread.start()
    return thread


def _drain(child: subprocess.Popen[str], forwarder: threading.Thread) -> None:
    """Wait for the last lines; members of the group still holding the pipe after the
    leader exited get the grace, then are ended (as on a timeout)."""
    forwarder.join(timeout=KILL_GRACE_S)
    if forwarder.is_alive():
        kill_group(child)
        forwarder.join(timeout=KILL_GRACE_S)
