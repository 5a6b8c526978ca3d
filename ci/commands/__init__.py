"""Command groups of ``flagci``; each module has ``register(subparsers)``."""

from __future__ import annotations

from types import ModuleType

from ci.commands import (
    bisect_cmd,
    history_cmd,
    images_cmd,
    irdiff_cmd,
    lanes_cmd,
    nodes_cmd,
    run_cmd,
)

COMMAND_MODULES: tuple[ModuleType, ...] = (
    lanes_cmd,
    run_cmd,
    history_cmd,
    bisect_cmd,
    irdiff_cmd,
    images_cmd,
    nodes_cmd,
)
