"""Progress and tables: rich on a terminal (spinners with elapsed time, drawn tables), plain
greppable lines in CI and pipes, and the output of the commands flagci runs kept apart from
a live display."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from rich.console import Console

from ci.core import process, reporter, tables
from ci.core.errors import InfrastructureError
from ci.lanes.matrix import load_matrix
from ci.run import record


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _terminal() -> tuple[reporter.TerminalReporter, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    console = Console(file=out, force_terminal=True, color_system=None, width=100)
    err_console = Console(file=err, force_terminal=True, color_system=None, width=100)
    return reporter.TerminalReporter(console, err_console), out, err


def _sample() -> tables.Table:
    shown = tables.table("lane @ node", "passed", "failed", right=["passed", "failed"])
    tables.add(shown, "cpu-triton-3.6.0 @ localhost", 228, 0)
    tables.add(shown, "a [bold]lane[/bold] @ n1", 3, 12)
    return shown


def test_plain_tables_are_greppable_columns_with_cells_as_written() -> None:
    lines = tables.text(_sample()).splitlines()
    assert lines[0].split() == ["lane", "@", "node", "passed", "failed"]
    assert lines[1].split() == ["cpu-triton-3.6.0", "@", "localhost", "228", "0"]
    assert lines[2].split()[-2:] == ["3", "12"]
    assert "[bold]lane[/bold]" in lines[2]  # never read as markup
    assert all(line == line.rstrip() for line in lines)
    assert not any(ch in "".join(lines) for ch in "─│┃━")  # no box
    # Numbers are right-aligned: the columns end where their headers end.
    assert lines[1].index("228") + 3 == lines[0].index("passed") + len("passed")


def test_the_terminal_shows_a_spinner_and_elapsed_time_while_a_step_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown, out, err = _terminal()
    monkeypatch.setattr(reporter, "_installed", shown)
    run = record.Run.start(tmp_path, "local")
    with run.step("prepare environment"):
        live = out.getvalue()
        # The live display: a spinner frame (rich's "dots"), the step, its elapsed time.
        assert "prepare environment" in live and "0:00:00" in live
        assert any(frame in live for frame in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
        reporter.current().line("a line printed while the step runs")
        reporter.current().command("docker run x")
    text = out.getvalue()
    # While the spinners run, a command goes above them too, not through them.
    assert "+ docker run x" in text and "+ docker run x" not in err.getvalue()
    assert "✓ prepare environment (0.0 s)" in text
    assert "a line printed while the step runs" in text
    assert "==>" not in text  # the plain markers are for logs
    # The spinner line is gone once no step runs: the last thing shown is the finished line.
    assert text.rstrip().endswith("✓ prepare environment (0.0 s)")


def test_the_terminal_draws_tables_and_keeps_warnings_and_commands_on_stderr() -> None:
    shown, out, err = _terminal()
    shown.table(_sample())
    shown.warn("node n1 is lost")
    shown.command("docker run x")
    drawn = out.getvalue().splitlines()
    assert drawn[0].split() == ["lane", "@", "node", "passed", "failed"]
    assert set(drawn[1].strip()) == {"─"}  # the rule under the header
    assert drawn[2].split() == ["cpu-triton-3.6.0", "@", "localhost", "228", "0"]
    assert "flagci: node n1 is lost" in err.getvalue() and "+ docker run x" in err.getvalue()
    assert "node n1 is lost" not in out.getvalue()


def test_ci_and_pipes_get_plain_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(reporter, "_installed", None)
    monkeypatch.setattr(reporter, "_terminal", None)
    monkeypatch.setattr(sys, "stdout", _Terminal())
    monkeypatch.setenv("CI", "true")  # the choice follows the mapping given, not this process's
    assert type(reporter.for_environment({"CI": "true"})) is reporter.Reporter
    assert type(reporter.for_environment({"GITHUB_ACTIONS": "true"})) is reporter.CIReporter
    terminal = reporter.for_environment({"CI": "false"})
    assert isinstance(terminal, reporter.TerminalReporter) and terminal.live
    assert reporter.current() is terminal  # with none installed: the choice outside CI
    assert reporter.for_environment({}) is terminal  # one live display per process
    monkeypatch.undo()

    # Under pytest stdout is a pipe: plain lines, whatever CI says.
    assert type(reporter.for_environment({})) is reporter.Reporter
    assert type(reporter.current()) is reporter.Reporter
    run = record.Run.start(tmp_path, "local")
    with run.step("prepare"):
        pass
    run.finish(load_matrix(), [load_matrix().default])
    out = capsys.readouterr().out
    assert "==> prepare" in out and "<== prepare (" in out
    steps = out[out.index("steps:") :].splitlines()
    assert steps[1].split() == ["step", "seconds"]
    assert steps[2].split()[0] == "prepare" and float(steps[2].split()[-1]) >= 0
    assert steps[3].startswith("merge JUnit, write report ")


def test_a_live_display_gets_the_output_of_commands_line_by_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shown, out, err = _terminal()
    monkeypatch.setattr(reporter, "_installed", shown)
    script = "import sys; print('to', 'stdout'); print('to', 'stderr', file=sys.stderr)"
    done = process.run([sys.executable, "-c", script], error=InfrastructureError, what="t")
    assert done.returncode == 0
    text = out.getvalue()
    assert "to stdout" in text and "to stderr" in text
    assert err.getvalue().startswith("+ ") and "to stdout" not in err.getvalue()

    # A command that outlives its timeout is still ended, its output so far kept.
    slow = "import time; print('has', 'started', flush=True); time.sleep(60)"
    with pytest.raises(InfrastructureError, match="timed out after 2"):
        process.run([sys.executable, "-c", slow], error=InfrastructureError, what="t", timeout=2)
    assert "has started" in out.getvalue()


def test_without_a_live_display_commands_write_to_the_terminal_themselves(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    out = io.StringIO()
    monkeypatch.setattr(reporter, "_installed", reporter.Reporter(out=out, err=io.StringIO()))
    script = "print('written', 'straight')"
    process.run([sys.executable, "-c", script], error=InfrastructureError, what="t")
    assert "written straight" in capfd.readouterr().out
    assert "written straight" not in out.getvalue()
