"""``flagci bisect --family F --test ID``: one test across a family's lanes in release order."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ci import atomic
from ci.commands.lanes_cmd import matrix_from
from ci.errors import UsageError
from ci.smoke.compiler import FAILURE_NAME
from ci.smoke.triage import draft_report
from ci.triage.bisect import LocalVenvRunner, bisect, render


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "bisect", help="run one test across a family's lanes; report first bad / first good"
    )
    parser.add_argument("--family", required=True, help="lane family, e.g. kunlun")
    parser.add_argument("--test", required=True, dest="test_id", help="pytest node id")
    parser.add_argument(
        "--suite", default="ci/smoke", help="folder the test id is relative to (default ci/smoke)"
    )
    parser.add_argument(
        "--work", default=".cache/bisect", help="where lane venvs and wheelhouses are kept"
    )
    parser.add_argument("--timeout", type=float, default=None, help="seconds per lane run")
    parser.add_argument("--json", dest="json_out", default=None, help="also write the report here")
    parser.add_argument(
        "--artifacts",
        default=None,
        help="a triaged failure's artifact folder: redraft its bundle/report.md with the result",
    )
    parser.set_defaults(handler=_bisect)


def _bisect(args: argparse.Namespace) -> int:
    matrix = matrix_from(args)
    suite = Path(args.suite).resolve()
    if not suite.is_dir():
        raise UsageError(f"--suite: no folder {suite}")
    runner = LocalVenvRunner(matrix, Path(args.work).resolve(), suite, args.timeout)
    result = bisect(matrix, args.family, args.test_id, runner)
    print("\n".join(render(result)))
    if args.json_out:
        atomic.write_text(Path(args.json_out), json.dumps(result.to_json(), indent=2) + "\n")
    if args.artifacts:
        artifacts = Path(args.artifacts)
        if not (artifacts / FAILURE_NAME).is_file():
            raise UsageError(f"--artifacts: no {FAILURE_NAME} in {artifacts}")
        print(f"redrafted {draft_report(artifacts, bisection=result.to_json())}")
    return 0
