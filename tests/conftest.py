"""Shared fixtures: the CPU lane's real environment (a venv from its wheelhouse)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci import environment
from ci.lanes import Lane, LaneMatrix, load_matrix

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def matrix() -> LaneMatrix:
    return load_matrix()


@pytest.fixture(scope="session")
def cpu_lane(matrix: LaneMatrix) -> Lane:
    return matrix.default


@pytest.fixture(scope="session")
def cpu_lane_env(matrix: LaneMatrix, cpu_lane: Lane) -> environment.LaneEnvironment:
    """The real CPU lane venv (cached between runs under FLAGCI_CACHE)."""
    return environment.prepare(matrix, cpu_lane)
