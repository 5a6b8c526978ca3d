"""`flagci run` and `flagci bisect` pick their executor from their arguments, and take
their settings (cache, package indexes, reporter, PATH) from the environment mapping given."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import pytest

from ci.cli import main
from ci.commands.options import Where
from ci.commands.run_cmd import add_executor_arguments
from ci.core import reporter
from ci.core.errors import UsageError
from ci.lanes.matrix import Lane, LaneMatrix
from ci.run import executors, record, remote


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_executor_arguments(parser)
    parser.set_defaults(lanes_file=None)
    return parser.parse_args(argv)


def test_the_executor_follows_the_arguments(matrix: LaneMatrix) -> None:
    assert isinstance(Where.parse(parsed(), {}).executor, executors.LocalVenvExecutor)
    assert isinstance(Where.parse(parsed("--image"), {}).executor, executors.LocalImageExecutor)
    nodes = Where.parse(parsed("--inventory", "lab", "--limit", "kunlun_p800"), {}).executor
    assert isinstance(nodes, remote.NodeExecutor)
    assert nodes.limit == "kunlun_p800" and nodes.inventory.name == "lab"
    assert {e.kind for e in (Where.parse(parsed(), {}).executor, nodes)} == {
        "local",
        "remote",
    }


def test_limit_needs_an_inventory_and_image_excludes_one(
    matrix: LaneMatrix, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(UsageError, match="--limit selects inventory hosts"):
        Where.parse(parsed("--limit", "g"), {})
    with pytest.raises(SystemExit):
        main(["run", "--image", "--inventory", "lab"])
    assert "not allowed with argument" in capsys.readouterr().err


MIRROR = "http://mirror.example/simple"


def test_where_takes_the_cache_the_indexes_and_path_from_the_mapping_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLAGCI_CACHE", str(tmp_path / "not-this-one"))  # this process's: unread
    monkeypatch.setenv("FLAGCI_INDEX_PYPI", "http://not-this-one/simple")
    environ = {"FLAGCI_CACHE": str(tmp_path / "cache"), "FLAGCI_INDEX_PYPI": MIRROR, "PATH": "/p"}
    for argv in ((), ("--image",), ("--inventory", "lab")):
        where = Where.parse(parsed(*argv), environ)
        assert where.executor.cache == tmp_path / "cache"  # type: ignore[attr-defined]
        assert where.matrix.index_url("pypi") == MIRROR
        assert where.executor.matrix is where.matrix  # type: ignore[attr-defined]
    nodes = Where.parse(parsed("--inventory", "lab"), environ).executor
    assert isinstance(nodes, remote.NodeExecutor) and nodes.search_path == "/p"
    # Unset: the home folder's cache, and the index URLs lanes.toml gives.
    where = Where.parse(parsed(), {"HOME": str(tmp_path)})
    assert where.executor.cache == tmp_path / ".cache" / "flagci"  # type: ignore[attr-defined]
    assert where.matrix.index_url("pypi") == "https://pypi.org/simple"


class _Nothing:
    """Runs no suite: every lane is reported as not run (an infrastructure problem)."""

    kind = "local"

    def execute(
        self, run: record.Run, lanes: Sequence[Lane], request: executors.SuiteRequest
    ) -> list[executors.LaneOutcome]:
        return [executors.LaneOutcome("node1", lane.name, "not run here") for lane in lanes]


def test_flagci_run_uses_the_settings_of_the_environ_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("FLAGCI_CACHE", raising=False)
    monkeypatch.delenv("FLAGCI_INDEX_PYPI", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    seen: dict[str, object] = {}

    def venvs(matrix: LaneMatrix, cache: Path) -> _Nothing:
        seen.update(url=matrix.index_url("pypi"), cache=cache)
        return _Nothing()

    monkeypatch.setattr(executors, "LocalVenvExecutor", venvs)
    environ = {
        "FLAGCI_CACHE": str(tmp_path / "cache"),
        "FLAGCI_INDEX_PYPI": MIRROR,
        "GITHUB_ACTIONS": "true",
    }
    argv = ["run", "--results", str(tmp_path / "results"), "--no-history"]
    assert main(argv, environ) == 5  # nothing ran: an infrastructure error
    assert seen == {"url": MIRROR, "cache": tmp_path / "cache"}
    out = capsys.readouterr().out
    assert "::group::" in out and "::warning::node1: not run here" in out  # GitHub Actions'
    assert reporter.installed() is None  # the command's reporter went with the command
