"""Ansible inventories as the controller sees them: nodes, their SSH settings, their lanes.

The inventory is read once through ``ansible-inventory --list`` (so group_vars, host_vars and
limit patterns mean exactly what they mean to ansible-playbook), then validated: every
flagci key is checked and an error names the inventory, the host and the key.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ci.core import process
from ci.core.errors import ConfigError, InfrastructureError, UsageError
from ci.lanes.matrix import VENDORS, Lane
from ci.nodes import health

# The node's work folder unless the inventory sets flagci_node_workdir: the one definition
# (the playbooks receive each host's folder in flagci_hosts).
DEFAULT_WORKDIR = "/var/tmp/flagci"


def playbooks_root() -> Path:
    """The ``playbooks/`` folder of the flagci source tree this controller runs from."""
    return Path(__file__).resolve().parents[2] / "playbooks"


def inventory_path(name_or_path: str) -> Path:
    """An inventory given as a path, or by the name of one under playbooks/inventories/."""
    path = Path(name_or_path)
    if path.exists():
        return path.resolve()
    named = playbooks_root() / "inventories" / name_or_path
    if named.exists():
        return named
    raise UsageError(f"no inventory at {name_or_path} (nor playbooks/inventories/{name_or_path})")


@dataclass(frozen=True)
class Node:
    """One inventory host and the variables Ansible would give it."""

    name: str
    hostvars: Mapping[str, Any]

    @property
    def address(self) -> str:
        return str(self.hostvars.get("ansible_host") or self.name)

    @property
    def port(self) -> int:
        return int(self.hostvars.get("ansible_port") or 22)

    @property
    def user(self) -> str | None:
        user = self.hostvars.get("ansible_user")
        return str(user) if user else None

    @property
    def key_file(self) -> str | None:
        key = self.hostvars.get("ansible_ssh_private_key_file")
        return str(Path(str(key)).expanduser()) if key else None

    @property
    def local(self) -> bool:
        return self.hostvars.get("ansible_connection") == "local"

    @property
    def vendors(self) -> tuple[str, ...]:
        return tuple(self.hostvars.get("flagci_vendors") or ())

    @property
    def workdir(self) -> str:
        return str(self.hostvars.get("flagci_node_workdir") or DEFAULT_WORKDIR)

    def takes(self, lane: Lane) -> bool:
        return lane.vendor in self.vendors

    def expectation(self, lanes: list[Lane]) -> health.Expectation:
        """What preflight expects of this node running ``lanes``: the first lane with an SMI
        tool, unless the inventory says otherwise (``preflight_*``). The one derivation: the
        preflight role's defaults receive it through ``flagci_hosts``."""
        accel = next((lane for lane in lanes if lane.device.smi), None)
        smi = accel.device.smi if accel else ""
        count = accel.hardware.count if accel and accel.hardware else 0
        driver = driver_version(accel) if accel else ""
        overrides = self.hostvars
        free = overrides.get("preflight_min_free_gib")
        return health.Expectation(
            smi=str(overrides.get("preflight_smi", smi)),
            device_count=int(overrides.get("preflight_device_count", count)),
            driver_version=str(overrides.get("preflight_driver_version", driver)),
            min_free_gib=None if free is None else int(free),
        )


def driver_version(lane: Lane) -> str:
    """The driver the lane's SMI must report: its SDK version ("any": not checked)."""
    if lane.sdk is None or lane.sdk.version == "any":
        return ""
    return lane.sdk.version


def load(inventory: Path, limit: str | None = None) -> list[Node]:
    """Every host of ``inventory`` (within ``limit``, an Ansible host pattern)."""
    binary = Path(sys.executable).parent / "ansible-inventory"
    args: list[str | Path] = [binary if binary.exists() else "ansible-inventory"]
    args += ["--inventory", inventory, "--list"]
    if limit:
        args += ["--limit", limit]
    result = process.run(
        args, error=InfrastructureError, what=f"reading inventory {inventory}", capture=True
    )
    try:
        listing = json.loads(result.stdout)
    except json.JSONDecodeError as err:
        raise ConfigError(f"{inventory}: ansible-inventory gave no JSON: {err}") from None
    hostvars: dict[str, Any] = listing.get("_meta", {}).get("hostvars", {})
    names = sorted(_hosts_of(listing, "all"))
    if not names:
        where = f" matching '{limit}'" if limit else ""
        raise UsageError(f"{inventory}: no hosts{where}")
    nodes = [Node(name, hostvars.get(name, {})) for name in names]
    for node in nodes:
        _validate(inventory, node)
    return nodes


def _hosts_of(listing: Mapping[str, Any], group: str) -> set[str]:
    entry = listing.get(group, {})
    hosts = set(entry.get("hosts", []))
    for child in entry.get("children", []):
        hosts |= _hosts_of(listing, child)
    return hosts


def _validate(inventory: Path, node: Node) -> None:
    where = f"{inventory}: host '{node.name}'"
    vendors = node.hostvars.get("flagci_vendors")
    if not isinstance(vendors, list) or not all(v in VENDORS for v in vendors):
        raise ConfigError(
            f"{where}: key 'flagci_vendors' must list the lane vendors the node runs"
            f" (some of {', '.join(VENDORS)}), found {vendors!r}"
        )
    for key in ("preflight_device_count", "preflight_min_free_gib", "ansible_port"):
        value = node.hostvars.get(key)
        if value is not None and not isinstance(value, int):
            raise ConfigError(f"{where}: key '{key}' must be an integer, found {value!r}")
    workdir = node.hostvars.get("flagci_node_workdir")
    if workdir is not None and not str(workdir).startswith("/"):
        raise ConfigError(f"{where}: key 'flagci_node_workdir' must be absolute: {workdir!r}")


def plan(lanes: list[Lane], nodes: list[Node], inventory: Path) -> dict[str, list[str]]:
    """Which lanes run on which node: every lane on every node that takes its vendor."""
    placed: dict[str, list[str]] = {}
    for lane in lanes:
        takers = [node for node in nodes if node.takes(lane)]
        if not takers:
            raise UsageError(
                f"{inventory}: no host runs {lane.vendor} lanes (lane '{lane.name}'):"
                " list the vendor in a host's or group's flagci_vendors"
            )
        for node in takers:
            placed.setdefault(node.name, []).append(lane.name)
    return placed
