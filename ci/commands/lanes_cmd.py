"""``flagci lanes list|show``: read the lane matrix."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ci.commands.options import Environ, matrix_from
from ci.commands.output import add_json_option, print_json
from ci.core import atomic, reporter, tables


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    lanes = subparsers.add_parser("lanes", help="show the lane matrix")
    sub = lanes.add_subparsers(dest="lanes_command", required=True, metavar="ACTION")
    listing = sub.add_parser("list", help="one line per lane")
    listing.add_argument(
        "--family", help="only the lanes of this family ([families] of the matrix)"
    )
    listing.add_argument(
        "--names",
        action="store_true",
        help="only the names, comma-separated (what `flagci run --lanes` takes)",
    )
    add_json_option(listing)
    listing.set_defaults(handler=_list)
    show = sub.add_parser("show", help="a lane's full definition as JSON")
    show.add_argument("lane")
    show.set_defaults(handler=_show)
    context = sub.add_parser("context", help="the JSON the smoke suite reads (FLAGCI_LANE_FILE)")
    context.add_argument("lane")
    context.add_argument("--node", default="", help="node name to record")
    context.add_argument("--output", "-o", help="file to write (default: stdout)")
    context.set_defaults(handler=_context)


def _list(args: argparse.Namespace, environ: Environ) -> int:
    matrix = matrix_from(args, environ)
    lanes = (
        {lane.name: lane for lane in matrix.family(args.family)} if args.family else matrix.lanes
    )
    if args.names:
        print(",".join(lanes))
        return 0
    if args.json:
        print_json(
            [
                {
                    "lane": name,
                    "vendor": lane.vendor,
                    "python": lane.python,
                    "compiler": lane.compiler.model_dump(),
                    "targets": [t.label for t in lane.targets],
                    "default": name == matrix.default_lane,
                }
                for name, lane in lanes.items()
            ]
        )
        return 0
    shown = tables.table("lane", "vendor", "python", "targets", "default")
    for name, lane in lanes.items():
        targets = ",".join(t.label for t in lane.targets)
        tables.add(
            shown,
            name,
            lane.vendor,
            lane.python,
            targets,
            "yes" if name == matrix.default_lane else "",
        )
    reporter.current().table(shown)
    return 0


def _show(args: argparse.Namespace, environ: Environ) -> int:
    lane = matrix_from(args, environ).lane(args.lane)
    print(json.dumps(lane.model_dump(), indent=2))
    return 0


def _context(args: argparse.Namespace, environ: Environ) -> int:
    lane = matrix_from(args, environ).lane(args.lane)
    text = lane.lane_json(args.node)
    if args.output:
        atomic.write_text(Path(args.output), text)
    else:
        print(text, end="")
    return 0
