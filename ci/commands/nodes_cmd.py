"""``flagci nodes check``: probe every inventory node (SSH, SMI, Docker, disk), print a table."""

from __future__ import annotations

import argparse

from ci.commands.options import Environ, matrix_from
from ci.commands.output import add_json_option, print_json
from ci.core import reporter
from ci.core.errors import InfrastructureError
from ci.nodes import check, health, inventory


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = subparsers.add_parser("nodes", help="the nodes of an Ansible inventory")
    sub = group.add_subparsers(dest="nodes_command", required=True, metavar="ACTION")
    check = sub.add_parser(
        "check", help="probe every node in parallel over SSH; exit 5 unless all are healthy"
    )
    check.add_argument(
        "--inventory",
        default="lab",
        help="a path, or a name under playbooks/inventories/ (default: lab)",
    )
    check.add_argument("--limit", help="an Ansible host pattern (group, host)")
    add_json_option(check)
    check.set_defaults(handler=_check)


def _check(args: argparse.Namespace, environ: Environ) -> int:
    matrix = matrix_from(args, environ)
    path = inventory.inventory_path(args.inventory)
    found = inventory.load(path, args.limit)
    checks = check.check(matrix, found, health.load_rules())
    if args.json:
        print_json(
            [
                {
                    "node": c.node.name,
                    "address": c.node.address,
                    "port": c.node.port,
                    "reachable": c.verdict is not None,
                    "error": c.error,
                    **(c.verdict.as_dict() if c.verdict else {"healthy": False}),
                }
                for c in checks
            ]
        )
    else:
        reporter.current().table(check.table(checks))
    bad = [c.node.name for c in checks if not c.healthy]
    if bad:
        names = ", ".join(bad)
        raise InfrastructureError(f"{len(bad)} of {len(checks)} node(s) not usable: {names}")
    return 0
