"""Tables for people: rich tables, drawn by rich on a terminal, plain columns elsewhere.

A table is built once (``table`` then ``add``) and shown by the reporter
(``reporter.current().table``): a terminal gets a header rule and a bold header, CI logs
and pipes get ``text``, columns separated by spaces and no box, so that a row is one
greppable line whose cells ``split()`` apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from io import StringIO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

# Wide enough that no CI log line is ever wrapped: a row stays one line.
PLAIN_WIDTH = 100_000


def table(*headers: str, right: Iterable[str] = ()) -> Table:
    """An empty table with these columns; those named in ``right`` are right-aligned
    (numbers)."""
    aligned = set(right)
    shown = Table(box=None, pad_edge=False, show_edge=False, header_style="")
    for header in headers:
        shown.add_column(header, justify="right" if header in aligned else "left")
    return shown


def add(shown: Table, *cells: object) -> None:
    """A row; every cell is taken as written (never as rich markup: "[x]" stays "[x]")."""
    shown.add_row(*(Text(str(cell)) for cell in cells))


def text(shown: Table) -> str:
    """The table as plain lines: no box, no colour, no trailing spaces."""
    buffer = StringIO()
    console = Console(file=buffer, width=PLAIN_WIDTH, color_system=None, force_terminal=False)
    console.print(shown)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines())


def for_terminal(shown: Table) -> Table:
    """The same table as a terminal shows it: a rule under a bold header."""
    shown.box = box.SIMPLE_HEAD
    shown.header_style = "bold"
    return shown
