"""The one way library code tells a person what is happening: a ``Reporter``.

Library modules never print; they call ``current()``'s methods. Which reporter depends on
where the output goes:

- a terminal, outside CI: ``TerminalReporter`` (rich): each running step a spinner with its
  elapsed time, each finished step one line with its duration, tables drawn by rich; the
  output of the commands flagci runs comes through it (``process.run``), above the spinners;
- CI or a pipe (``CI`` set, or stdout not a terminal): ``Reporter``, plain lines (progress
  to stdout, warnings and echoed commands to stderr) and plain tables;
- GitHub Actions (``GITHUB_ACTIONS=true``): ``CIReporter``, the same lines with workflow
  commands around them (steps as collapsible groups, warnings as annotations).

``for_environment`` chooses from the settings it is given: ``flagci`` installs its choice
for the command's environment (``ci.cli.main``). Tests and embedders may install their
own with ``use``; with none installed, ``current()`` is the choice outside CI.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import IO

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from ci.core import tables


class Reporter:
    """Plain lines for a CI log, a pipe or a file."""

    # Whether the commands flagci runs must hand their output to ``output`` (a live display
    # owns the terminal) instead of writing to it themselves.
    live = False

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

    def table(self, shown: Table) -> None:
        """A table of results (``ci.core.tables``)."""
        self.line(tables.text(shown))

    def output(self, text: str) -> None:
        """One line that a command flagci runs wrote (only asked for where ``live``)."""
        self.line(text)

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


class TerminalReporter(Reporter):
    """A person at a terminal: live spinners for the running steps (rich), drawn tables."""

    live = True

    def __init__(self, console: Console | None = None, err_console: Console | None = None):
        super().__init__()
        self.console = console or Console()
        self.err_console = err_console or Console(stderr=True)
        self._progress: Progress | None = None
        self._running: dict[str, TaskID] = {}

    def line(self, text: str) -> None:
        # While spinners run, what is printed goes above them (rich's live display).
        self.console.print(Text(text), soft_wrap=True)

    def table(self, shown: Table) -> None:
        self.console.print(tables.for_terminal(shown))

    def warn(self, text: str) -> None:
        self._aside(Text(f"flagci: {text}", style="yellow"))

    def command(self, text: str) -> None:
        self._aside(Text(f"+ {text}", style="dim"))

    def _aside(self, text: Text) -> None:
        """Warnings and commands: stderr, but above the spinners while they run (rich writes
        a console's own stream past its redirection, which would go through the display)."""
        console = self.console if self._progress is not None else self.err_console
        console.print(text, soft_wrap=True)

    def step_started(self, name: str) -> None:
        if self._progress is None:
            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}", markup=False),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,  # a finished step is a line of its own (step_ended)
            )
            self._progress.start()
        self._running[name] = self._progress.add_task(name, total=None)

    def step_ended(self, name: str, seconds: float) -> None:
        task = self._running.pop(name, None)
        if self._progress is not None and task is not None:
            self._progress.remove_task(task)
            if not self._running:
                self._progress.stop()
                self._progress = None
        done = Text.assemble(("✓ ", "green"), name, (f" ({seconds:.1f} s)", "dim"))
        self.console.print(done, soft_wrap=True)


_installed: Reporter | None = None
_terminal: TerminalReporter | None = None  # one per process: it owns the live display


def use(reporter: Reporter | None) -> None:
    """Install ``reporter`` for this process (None: the choice outside CI again)."""
    global _installed
    _installed = reporter


def installed() -> Reporter | None:
    return _installed


def for_environment(environ: Mapping[str, str]) -> Reporter:
    """The reporter for a process whose environment is ``environ`` (``CI``,
    ``GITHUB_ACTIONS``) and whose stdout is this one."""
    global _terminal
    if environ.get("GITHUB_ACTIONS") == "true":
        return CIReporter()
    if environ.get("CI", "").lower() not in ("", "0", "false") or not sys.stdout.isatty():
        return Reporter()
    if _terminal is None:
        _terminal = TerminalReporter()
    return _terminal


def current() -> Reporter:
    return _installed if _installed is not None else for_environment({})
