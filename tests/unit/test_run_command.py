"""`flagci run` and `flagci bisect` pick their executor from their arguments alone."""

from __future__ import annotations

import argparse

import pytest

from ci.cli import main
from ci.commands.options import Where
from ci.commands.run_cmd import add_executor_arguments
from ci.core.errors import UsageError
from ci.lanes.matrix import LaneMatrix
from ci.run import executors, remote


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_executor_arguments(parser)
    parser.set_defaults(lanes_file=None)
    return parser.parse_args(argv)


def test_the_executor_follows_the_arguments(matrix: LaneMatrix) -> None:
    assert isinstance(Where.parse(parsed()).executor, executors.LocalVenvExecutor)
    assert isinstance(Where.parse(parsed("--image")).executor, executors.LocalImageExecutor)
    nodes = Where.parse(parsed("--inventory", "lab", "--limit", "kunlun_p800")).executor
    assert isinstance(nodes, remote.NodeExecutor)
    assert nodes.limit == "kunlun_p800" and nodes.inventory.name == "lab"
    assert {e.kind for e in (Where.parse(parsed()).executor, nodes)} == {
        "local",
        "remote",
    }


def test_limit_needs_an_inventory_and_image_excludes_one(
    matrix: LaneMatrix, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(UsageError, match="--limit selects inventory hosts"):
        Where.parse(parsed("--limit", "g"))
    with pytest.raises(SystemExit):
        main(["run", "--image", "--inventory", "lab"])
    assert "not allowed with argument" in capsys.readouterr().err
