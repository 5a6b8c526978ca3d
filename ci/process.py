"""The one subprocess helper: every external command goes through ``run`` and is echoed."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from ci.errors import FlagCIError


def echo(args: Sequence[str | os.PathLike[str]], stream: IO[str] | None = None) -> None:
    print("+ " + shlex.join(str(a) for a in args), file=stream or sys.stderr, flush=True)


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
) -> subprocess.CompletedProcess[str]:
    """Run a command after echoing it; raise ``error`` (naming ``what``) if it fails.

    With ``capture`` the output is returned (and put in the error message on failure);
    without it the command writes straight to this process' stdout and stderr.
    """
    echo(args)
    full_env = None if env is None else {**os.environ, **env}
    try:
        result = subprocess.run(
            [str(a) for a in args],
            env=full_env,
            cwd=cwd,
            text=True,
            capture_output=capture,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        raise error(f"{what}: command not found: {args[0]}") from None
    except subprocess.TimeoutExpired:
        raise error(f"{what}: timed out after {timeout} s: {shlex.join(map(str, args))}") from None
    if check and result.returncode != 0:
        detail = ""
        if capture:
            tail = (result.stderr or result.stdout or "").strip().splitlines()[-20:]
            detail = "\n" + "\n".join(tail)
        raise error(f"{what} failed (exit {result.returncode}){detail}")
    return result
