"""What flagci's node modules share (``roles/*/library/``): running a command, the docker
client, and an atomic write. Ansible finds this folder beside the playbooks and packs it
into each module that imports ``ansible.module_utils.flagci_node``. Standard library only:
it runs on the node, under the node's Python."""

from __future__ import annotations

import os
import subprocess

# coreutils `timeout`'s exit status when the limit ended the command, and the shell's for a
# command that cannot be started: the statuses ``run`` gives in those cases.
TIMED_OUT = 124
NOT_STARTED = 127


def run(argv, timeout=None):
    """Run ``argv`` (no shell); return its exit status, output and error output as text.
    A command that cannot start gives 127, one that runs past ``timeout`` seconds 124."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except OSError as err:
        return NOT_STARTED, "", str(err)
    except subprocess.TimeoutExpired:
        return TIMED_OUT, "", f"timed out after {timeout} s"
    return done.returncode, done.stdout, done.stderr


def docker(*args, timeout=None):
    """``docker ARGS...``: exit status, output and error output, as ``run`` gives them."""
    return run(["docker", *args], timeout=timeout)


def write(path, text):
    """Write ``text`` to ``path`` so that a reader (the controller's next look, a fetch after a
    lost connection) sees the old file or the new one, never half of one, even after the node
    loses power: the data is on disk before the rename, the rename before this returns."""
    tmp = f"{path}.part"
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    folder = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
