"""Settings are read once, by the command line: no library module reads the environment.

``ci.cli.main`` takes an environment mapping and ``ci/commands/`` turns it into plain
values (``ci.commands.options``); the lane side (``ci/smoke/``) runs inside the lane
environment and reads its own. ``ci.core.process`` is the one documented exception: it
hands this process's environment on to the commands it starts, as any child inherits it.
"""

from __future__ import annotations

import re
from pathlib import Path

CI = Path(__file__).resolve().parents[2] / "ci"
ALLOWED = (CI / "smoke", CI / "commands", CI / "cli.py", CI / "core" / "process.py")
READS = re.compile(
    r"\bos\.(environ|getenv|environb)\b|\bfrom os import\b[^\n]*\b(environ|getenv)\b"
)


def test_no_library_module_reads_the_environment() -> None:
    found = [
        f"{path.relative_to(CI.parent)}:{number}: {line.strip()}"
        for path in sorted(CI.rglob("*.py"))
        if not any(path == allowed or allowed in path.parents for allowed in ALLOWED)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if READS.search(line)
    ]
    assert not found, "read the setting in ci/commands/options.py instead:\n" + "\n".join(found)


def test_the_check_sees_a_read() -> None:
    assert READS.search('url = os.environ.get("FLAGCI_INDEX_PYPI")')
    assert READS.search("from os import getenv")
    assert not READS.search("environ.get('FLAGCI_CACHE')  # a mapping handed in")
