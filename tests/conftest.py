"""Shared fixtures: the CPU lane's real environment (a venv from its wheelhouse), history stores."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci.build import environment
from ci.commands.options import cache_from, with_index_settings
from ci.lanes.matrix import Lane, LaneMatrix, load_matrix
from tests.fixtures.postgres import throwaway_database

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def matrix() -> LaneMatrix:
    """The packaged lane matrix, its index settings from this process's environment."""
    return with_index_settings(load_matrix(), os.environ)


@pytest.fixture(scope="session")
def cpu_lane(matrix: LaneMatrix) -> Lane:
    return matrix.default


@pytest.fixture(scope="session")
def cpu_lane_env(matrix: LaneMatrix, cpu_lane: Lane) -> environment.LaneEnvironment:
    """The real CPU lane venv (cached between runs under FLAGCI_CACHE)."""
    return environment.prepare(matrix, cpu_lane, cache_from(os.environ))


@pytest.fixture(params=["sqlite", "postgresql"])
def history_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A history store that does not exist yet: a SQLite file, or an empty PostgreSQL database."""
    if request.param == "sqlite":
        yield str(tmp_path / "results" / "history.sqlite")
        return
    with throwaway_database() as url:
        yield url
