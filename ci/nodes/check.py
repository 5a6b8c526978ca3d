"""``flagci nodes check``: every inventory node probed in parallel over SSH with Fabric.

The probes and the judge are ``ci.nodes.health``'s, the same that the preflight role uses, and
a node is expected to show what preflight would expect for the lanes of its vendors.
"""

from __future__ import annotations

import shlex
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from fabric import Connection
from rich.table import Table

from ci.core import process, tables
from ci.core.errors import InfrastructureError
from ci.lanes.matrix import LaneMatrix
from ci.nodes import health, inventory

PROBE_TIMEOUT_S = 60
CONNECT_TIMEOUT_S = 10


@dataclass(frozen=True)
class NodeCheck:
    node: inventory.Node
    verdict: health.Verdict | None  # None: not reachable
    error: str = ""

    @property
    def healthy(self) -> bool:
        return self.verdict is not None and self.verdict.healthy


def _connection(node: inventory.Node) -> Connection:
    key = node.key_file
    return Connection(
        host=node.address,
        user=node.user,
        port=node.port,
        connect_timeout=CONNECT_TIMEOUT_S,
        connect_kwargs={"key_filename": key} if key else {},
    )


def _run_local(argv: list[str]) -> health.ProbeResult:
    try:
        done = process.run(
            argv,
            error=InfrastructureError,
            what=f"probe {argv[0]}",
            capture=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except InfrastructureError as err:  # not installed, or hung
        return health.ProbeResult(rc=127, stderr=str(err))
    return health.ProbeResult(rc=done.returncode, stdout=done.stdout, stderr=done.stderr)


def check_node(
    node: inventory.Node, rules: health.HealthRules, expectation: health.Expectation
) -> NodeCheck:
    commands = health.probes(rules, expectation, node.workdir)
    observed: dict[str, health.ProbeResult] = {}
    if node.local:
        observed = {name: _run_local(argv) for name, argv in commands.items()}
    else:
        try:
            with _connection(node) as connection:
                for name, argv in commands.items():
                    result = connection.run(
                        shlex.join(argv),
                        warn=True,
                        hide=True,
                        in_stream=False,
                        timeout=PROBE_TIMEOUT_S,
                    )
                    observed[name] = health.ProbeResult(
                        rc=result.exited, stdout=result.stdout, stderr=result.stderr
                    )
        except Exception as err:  # any failure to connect or run: the node is unreachable
            return NodeCheck(node, None, f"{type(err).__name__}: {err}".strip())
    return NodeCheck(node, health.judge(rules, expectation, observed))


def check(
    matrix: LaneMatrix, nodes: list[inventory.Node], rules: health.HealthRules
) -> list[NodeCheck]:
    """Probe every node at once; results in the order of ``nodes``."""

    def one(node: inventory.Node) -> NodeCheck:
        lanes = [lane for lane in matrix.lanes.values() if node.takes(lane)]
        return check_node(node, rules, node.expectation(lanes))

    with ThreadPoolExecutor(max_workers=max(1, min(len(nodes), 32))) as pool:
        return list(pool.map(one, nodes))


def table(checks: list[NodeCheck]) -> Table:
    shown = tables.table(
        "node", "address", "reachable", "docker", "free GiB", "devices", "driver", "verdict",
        right=["free GiB", "devices"],
    )  # fmt: skip
    for item in checks:
        facts = item.verdict.facts if item.verdict else {}
        if item.verdict is None:
            verdict = f"unreachable: {item.error}"
        elif item.verdict.healthy:
            verdict = "healthy"
        else:
            verdict = "unhealthy: " + "; ".join(item.verdict.problems)
        tables.add(
            shown,
            item.node.name,
            "local" if item.node.local else f"{item.node.address}:{item.node.port}",
            "yes" if item.verdict is not None else "no",
            facts.get("docker", "-"),
            facts.get("free_gib", "-"),
            facts.get("devices", "-"),
            facts.get("driver", "-") or "-",
            verdict,
        )
    return shown
