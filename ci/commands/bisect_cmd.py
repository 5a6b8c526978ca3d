"""``flagci bisect --family F --test ID``: one test across a family's lanes in release order,
run where ``flagci run`` would run them (local venvs, ``--image``, ``--inventory``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ci.commands.options import Environ, Recording, Where
from ci.commands.run_cmd import add_executor_arguments, record_history
from ci.core import atomic, reporter
from ci.core.errors import UsageError
from ci.smoke.contract.records import FAILURE_NAME
from ci.smoke.triage.compile_failure import draft_report
from ci.triage.bisect import bisect, table


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "bisect", help="run one test across a family's lanes; report first bad / first good"
    )
    parser.add_argument(
        "--family", required=True, help="lane family, e.g. kunlun, or an axis family: cpu-vllm"
    )
    parser.add_argument(
        "--test",
        required=True,
        dest="test_id",
        help="smoke suite test id, [file.py::]name[params]: test_backends.py::test_inductor_target",
    )
    parser.add_argument("--results", default="results", help="results root (default: results)")
    parser.add_argument(
        "--history",
        help="history database the run is added to (default: RESULTS/history.sqlite)",
    )
    parser.add_argument("--no-history", action="store_true", help="do not record the run")
    add_executor_arguments(parser)
    parser.add_argument("--json", dest="json_out", default=None, help="also write the report here")
    parser.add_argument(
        "--artifacts",
        default=None,
        help="a triaged failure's artifact folder: redraft its bundle/report.md with the result",
    )
    parser.set_defaults(handler=_bisect)


def _bisect(args: argparse.Namespace, environ: Environ) -> int:
    where = Where.parse(args, environ)
    recording = Recording.parse(args, environ)
    result, run = bisect(
        where.matrix,
        args.family,
        args.test_id,
        where.executor,
        recording.results,
        recording.made_in,
    )
    out = reporter.current()
    out.line(f"bisect {result.family} {result.test_id}")
    out.table(table(result))
    out.line(result.verdict)
    out.line(f"run: {run.folder}")
    record_history(recording, run)
    if args.json_out:
        report = {**result.to_json(), "run": run.folder.name}
        atomic.write_text(Path(args.json_out), json.dumps(report, indent=2) + "\n")
    if args.artifacts:
        artifacts = Path(args.artifacts)
        if not (artifacts / FAILURE_NAME).is_file():
            raise UsageError(f"--artifacts: no {FAILURE_NAME} in {artifacts}")
        redrafted = draft_report(artifacts, bisection=result.to_json())
        reporter.current().line(f"redrafted {redrafted}")
    return 0
