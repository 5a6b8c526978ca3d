"""A lane container's ``docker run`` options, written once for every place a lane runs in
its image: this machine (``executors.LocalImageExecutor``) and the nodes (``remote``, which
hands each (node, lane) its rendered options through ``flagci_hosts``; the smoke role's
``flagci_lane`` module only adds what only the node knows, its user id and the model mount).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ci.lanes.matrix import Lane
from ci.smoke.contract.lane import CAPTURE_CACHE_ENV

# Labels of every lane container flagci starts (the node playbooks receive the same keys).
RUN_LABEL = "org.flagci.run"
NODE_LABEL = "org.flagci.node"
# Where the suite's results folder and, on nodes, the lane file are mounted.
RESULTS = "/results"
LANE_FILE = "/etc/flagci/lane.json"
# Where the capture cache folder of this machine or the node is mounted (read and written by
# every lane's container there, so the next run, and a -k rerun, find their captures).
CAPTURE_CACHE = "/var/cache/flagci/capture"


@dataclass(frozen=True)
class ContainerSpec:
    """Everything of one lane container's ``docker run`` but its name, image, command and
    user id (the caller's ``uid:gid`` where it starts, added there when ``as_caller``)."""

    labels: tuple[tuple[str, str], ...]
    env: tuple[tuple[str, str], ...]
    devices: tuple[str, ...]
    volumes: tuple[str, ...]
    extra_args: tuple[str, ...]
    as_caller: bool  # runs as the user who starts it, with a fresh /tmp as its home

    def options(self) -> list[str]:
        """The ``docker run`` options, in one order wherever the container runs."""
        return [
            *(arg for key, value in self.labels for arg in ("--label", f"{key}={value}")),
            *(("--env=HOME=/tmp", "--tmpfs", "/tmp") if self.as_caller else ()),
            *(f"--env={key}={value}" for key, value in self.env),
            *(f"--device={path}" for path in self.devices),
            *(f"--volume={volume}" for volume in self.volumes),
            *self.extra_args,
        ]


def lane_container(
    lane: Lane,
    *,
    run_id: str,
    node: str,
    results: str,
    as_caller: bool,
    lane_file: str = "",
    capture_cache: str = "",
    env: Mapping[str, str] | None = None,
    devices: Sequence[str] | None = None,
    docker_args: Sequence[str] | None = None,
) -> ContainerSpec:
    """The container of ``lane`` on ``node``, its results folder ``results`` mounted at
    /results and, when given, its lane file mounted read-only at ``LANE_FILE`` and the
    capture cache folder ``capture_cache`` at ``CAPTURE_CACHE`` (the suite learns it from
    ``CAPTURE_CACHE_ENV``). ``env`` adds
    to the lane's ``device.env``; ``devices`` and ``docker_args`` replace the lane's (a
    node's inventory may set them)."""
    mounted = {"FLAGCI_LANE_FILE": LANE_FILE} if lane_file else {}
    if capture_cache:
        mounted[CAPTURE_CACHE_ENV] = CAPTURE_CACHE
    return ContainerSpec(
        labels=((RUN_LABEL, run_id), (NODE_LABEL, node)),
        env=tuple({**lane.device.env, **(env or {}), **mounted, "FLAGCI_NODE": node}.items()),
        devices=tuple(lane.device.devices if devices is None else devices),
        volumes=(
            f"{results}:{RESULTS}",
            *([f"{lane_file}:{LANE_FILE}:ro"] if lane_file else []),
            *([f"{capture_cache}:{CAPTURE_CACHE}"] if capture_cache else []),
        ),
        extra_args=tuple(lane.device.docker_args if docker_args is None else docker_args),
        as_caller=as_caller,
    )
