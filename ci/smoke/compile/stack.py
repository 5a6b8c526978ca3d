"""Facts probed from the stack itself: what the driver, the backends and the device say.

The lane file states what a lane expects (targets, warp size, shared memory per block, the
compiler's version); the stack is asked the same things, and ``test_stack_facts`` fails naming
both values where they differ: the lane file is wrong, or the node's stack moved. The compile
tests use what the stack says. Standard library only at import time.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ci.smoke.compile import tritonapi


@dataclass(frozen=True)
class DriverFacts:
    """What the active driver reports, or why it could not be asked."""

    backend: str = ""
    arch: int | str = ""
    warp_size: int | None = None
    shared_per_block: int | None = None
    problem: str = ""

    @property
    def probed(self) -> bool:
        return not self.problem


@dataclass(frozen=True)
class Difference:
    fact: str
    lane: object
    stack: object

    def __str__(self) -> str:
        return f"{self.fact}: the lane file says {self.lane!r}, the stack says {self.stack!r}"


def missing_device(devices: Sequence[str]) -> str:
    """Why the lane's device cannot be probed on this node, or "" when it can be.

    A lane that names device files needs at least one of them; a lane that names none (the
    NVIDIA reference lane) leaves it to the driver."""
    if devices and not any(Path(d).exists() for d in devices):
        return f"none of the lane's devices is present on this node ({', '.join(devices[:3])} ...)"
    return ""


@functools.lru_cache(maxsize=None)
def probe_driver() -> DriverFacts:
    """Ask the active driver for its target and the device's shared memory per block."""
    try:
        target = tritonapi.active_target()
    except Exception as err:  # no active driver: a node without its device, or a broken SDK
        return DriverFacts(problem=f"{type(err).__name__}: {err}")
    shared = None
    try:
        shared = tritonapi.max_shared_per_block()
    except Exception:  # not every vendor driver reports it; the fact stays unprobed
        shared = None
    return DriverFacts(
        backend=str(target.backend),
        arch=target.arch,
        warp_size=int(target.warp_size),
        shared_per_block=shared,
    )


def differences(
    expected_backend: str,
    expected_arch: int | str,
    expected_warp: int,
    expected_shared: int,
    driver: DriverFacts,
) -> list[Difference]:
    """Where the driver contradicts the lane's first target (arch 0: any arch)."""
    found = []
    if driver.backend != expected_backend:
        found.append(Difference("target backend", expected_backend, driver.backend))
    if expected_arch != 0 and driver.arch != expected_arch:
        found.append(Difference("target arch", expected_arch, driver.arch))
    if driver.warp_size is not None and driver.warp_size != expected_warp:
        found.append(Difference("warp size", expected_warp, driver.warp_size))
    if expected_shared and driver.shared_per_block and driver.shared_per_block != expected_shared:
        found.append(
            Difference("shared memory per block", expected_shared, driver.shared_per_block)
        )
    return found
