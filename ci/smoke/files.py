"""The lane side's one atomic write: a reader sees the old file or the new one, never half.

Standard library only (part of the lane package; the controller has ``ci.core.atomic``). The
file gets the process's usual mode (umask applied), not ``mkstemp``'s 0600: what a lane
container writes as root into its results folder is collected by the node's own user.
"""

import os
import uuid
from pathlib import Path


def write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) whole to a temporary file beside ``path``, then rename it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with tmp.open("x", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.replace(path)
    except BaseException:
        if tmp.exists():
            tmp.unlink()
        raise
