"""The one way library code tells a person what is happening: a ``Reporter``.

Library modules never print; they call ``current()``'s methods. The terminal reporter writes
plain lines (progress to stdout, warnings and echoed commands to stderr); the CI reporter
writes the same lines with GitHub Actions' workflow commands around them (steps as
collapsible groups, warnings as annotations). ``current()`` picks the CI one where
``GITHUB_ACTIONS`` is ``true``; tests and embedders may install their own with ``use``.
"""

from __future__ import annotations

import os
import sys
from typing import IO


class Reporter:
    """Plain lines for a terminal (or a log file)."""

    def __init__(self, out: IO[str] | None = None, err: IO[str] | None = None) -> None:
        # None: the streams of the moment (pytest's capture swaps sys.stdout per test).
        self._out = out
        self._err = err

    @property
    def out(self) -> IO[str]:
        return self._out or sys.stdout

    @property
    def err(self) -> IO[str]:
        return self._err or sys.stderr

    def line(self, text: str) -> None:
        """Progress and results."""
        print(text, file=self.out, flush=True)

    def warn(self, text: str) -> None:
        """Something went wrong but the work goes on."""
        print(f"flagci: {text}", file=self.err, flush=True)

    def command(self, text: str) -> None:
        """An external command about to run (already quoted)."""
        print(f"+ {text}", file=self.err, flush=True)

    def step_started(self, name: str) -> None:
        self.line(f"==> {name}")

    def step_ended(self, name: str, seconds: float) -> None:
        self.line(f"<== {name} ({seconds:.1f} s)")


class CIReporter(Reporter):
    """GitHub Actions: each step a collapsible group, each warning an annotation."""

    def warn(self, text: str) -> None:
        # Annotations are one line: newlines are %0A in workflow commands.
        print(f"::warning::{text.replace(chr(10), '%0A')}", file=self.out, flush=True)

    def step_started(self, name: str) -> None:
        self.line(f"::group::{name}")

    def step_ended(self, name: str, seconds: float) -> None:
        self.line("::endgroup::")
        self.line(f"{name}: {seconds:.1f} s")


_installed: Reporter | None = None


def use(reporter: Reporter | None) -> None:
    """Install ``reporter`` for this process (None: choose from the environment again)."""
    global _installed
    _installed = reporter


def current() -> Reporter:
    if _installed is not None:
        return _installed
    return CIReporter() if os.environ.get("GITHUB_ACTIONS") == "true" else Reporter()
