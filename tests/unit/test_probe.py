"""The fallback probe's search order and stopping rule (compiles are scripted here)."""

from __future__ import annotations

from typing import Any

from ci.smoke.triage.probe import Attempt, candidates, probe


def test_candidates_lower_stages_first_then_halve_blocks() -> None:
    found = list(
        candidates({"BLOCK_M": 64, "TILE": 32, "H": 8}, {"num_stages": 3}, ["BLOCK_M", "TILE"])
    )
    assert found[:6] == [
        (("num_stages", 2),),
        (("num_stages", 1),),
        (("BLOCK_M", 32),),
        (("TILE", 16),),
        (("BLOCK_M", 32), ("TILE", 16)),
        (("BLOCK_M", 32), ("num_stages", 1)),
    ]
    assert all(value >= 16 for changes in found for name, value in changes if name != "num_stages")


def test_probe_stops_at_the_first_config_that_compiles() -> None:
    tried: list[tuple[tuple[str, Any], ...]] = []

    def compile_attempt(changes: tuple[tuple[str, Any], ...]) -> Attempt:
        tried.append(changes)
        ok = dict(changes).get("BLOCK_T") == 512
        return Attempt(changes, ok, "" if ok else "out_of_resources", "")

    result = probe(
        compile_attempt, "out_of_resources", {"BLOCK_T": 1024}, {"num_stages": 2}, ["BLOCK_T"]
    )
    assert tried == [(("num_stages", 1),), (("BLOCK_T", 512),)]
    assert result.hint == "compiles with BLOCK_T=512"


def test_backend_resolution_is_not_probed() -> None:
    def never(changes: tuple[tuple[str, Any], ...]) -> Attempt:
        raise AssertionError("no compile expected")

    result = probe(never, "backend_resolution", {"BLOCK_T": 64}, {"num_stages": 2}, ["BLOCK_T"])
    assert result.attempts == ()
    assert result.hint == ""


def test_nothing_compiles() -> None:
    def fails(changes: tuple[tuple[str, Any], ...]) -> Attempt:
        return Attempt(changes, False, "pass_failure", "PassManager::run failed")

    result = probe(
        fails, "pass_failure", {"BLOCK_T": 32}, {"num_stages": 2}, ["BLOCK_T"], max_attempts=3
    )
    assert len(result.attempts) == 3
    assert result.hint == "no smaller config compiled (3 tried)"
