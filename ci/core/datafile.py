"""The one loader of flagci's TOML data files (the lane matrix, the known-issue ledger, the
node health rules): read a packaged or given file, validate it into a pydantic model, and
say what is wrong in one format that names the file and the key:

    <file>: key '<dotted.key[0]>': <what is wrong>
    <file>: <item> '<name>': key '<key>': <what is wrong>     (a named entry, e.g. a lane)

Standard library and pydantic only (``ci.nodes.health`` is imported by an Ansible filter).
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ci.core.errors import ConfigError

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Entries:
    """A table whose entries the errors name: ``[lanes.<name>]`` (a table of tables, named
    by their key) or ``[[issue]]`` (an array of tables, named by ``key``, else ``#<n>``)."""

    item: str  # the word for one entry: "lane", "issue"
    key: str = ""  # the name key of an array entry


def packaged(name: str) -> Path:
    """A data file shipped in the ``ci`` package (``ci/data/<name>``)."""
    return Path(str(resources.files("ci") / "data" / name))


def load(
    model: type[M],
    path: Path,
    *,
    what: str,
    entries: Mapping[str, Entries] | None = None,
    prepare: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> M:
    """``path`` validated into ``model`` (which has a ``source`` field: the file's path).

    ``what`` names the file in "not found" ("lane matrix"); ``entries`` says which top-level
    tables hold named entries; ``prepare`` rewrites the parsed TOML before validation (it may
    raise ConfigError itself). Raises ConfigError, one line per problem."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: {what} not found") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: not valid TOML: {err}") from None
    if prepare is not None:
        raw = prepare(raw)
    try:
        return model.model_validate({"source": str(path), **raw})
    except ValidationError as err:
        errors = err.errors()
        failed = [tuple(e["loc"]) for e in errors if e["type"] != "too_short"]
        # A list whose items failed is also reported as too short: keep only the item errors.
        kept = [
            e
            for e in errors
            if e["type"] != "too_short"
            or not any(loc[: len(e["loc"])] == tuple(e["loc"]) for loc in failed)
        ]
        lines = [describe(path, raw, e, entries or {}) for e in kept]
        raise ConfigError("\n".join(lines)) from None


def describe(
    path: Path, raw: Mapping[str, Any], error: Mapping[str, Any], entries: Mapping[str, Entries]
) -> str:
    """One pydantic error as ``<file>: [<item> '<name>': ]key '<key>': <message>``."""
    # pydantic names the union member, literal or dict key it tried: not part of the key.
    loc = [
        str(part)
        for part in error["loc"]
        if not str(part).startswith(("literal[", "function-")) and str(part) != "[key]"
    ]
    message = str(error["msg"]).removeprefix("Value error, ")
    # Validators across several keys say "key: what is wrong".
    key_hint, sep, rest = message.partition(": ")
    if error["type"] == "value_error" and sep and key_hint.isidentifier():
        loc, message = [*loc, key_hint], rest
    table = entries.get(loc[0]) if len(loc) >= 2 else None
    if table is not None:
        key = dotted(loc[2:]) or f"({table.item} table)"
        return f"{path}: {table.item} '{_entry_name(raw, loc, table)}': key '{key}': {message}"
    return f"{path}: key '{dotted(loc) or '(top level)'}': {message}"


def _entry_name(raw: Mapping[str, Any], loc: list[str], table: Entries) -> str:
    if not table.key or not loc[1].isdigit():
        return loc[1]
    index = int(loc[1])
    found = raw.get(loc[0])
    if isinstance(found, list) and index < len(found) and isinstance(found[index], dict):
        return str(found[index].get(table.key, f"#{index + 1}"))
    return f"#{index + 1}"


def dotted(parts: list[str]) -> str:
    """``["pins", "0", "sha"]`` as ``pins[0].sha``."""
    out = ""
    for part in parts:
        if part.isdigit():
            out += f"[{part}]"
        elif part in ("int", "str", "constrained-str"):
            continue
        else:
            out += f".{part}" if out else part
    return out
