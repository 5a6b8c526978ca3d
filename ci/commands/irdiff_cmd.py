"""``flagci irdiff --artifacts DIR --lane L``: a FlagTree failure's IR against its baseline lane."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from ci.build import environment
from ci.commands.options import Environ, cache_from, matrix_from
from ci.core import reporter
from ci.core.errors import UsageError
from ci.smoke.contract.records import BUNDLE_NAME, SPEC_NAME
from ci.triage import irdiff


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "irdiff",
        help="replay a failed compile's bundle on the baseline lane; diff the last common stage",
    )
    parser.add_argument("--artifacts", required=True, help="the failing test's artifact folder")
    parser.add_argument("--lane", required=True, help="the lane the test failed on")
    parser.add_argument("--baseline", default=None, help="baseline lane (default: the lane's)")
    parser.set_defaults(handler=_irdiff)


def _irdiff(args: argparse.Namespace, environ: Environ) -> int:
    matrix = matrix_from(args, environ)
    lane = matrix.lane(args.lane)
    baseline_name = args.baseline or lane.baseline
    if not baseline_name:
        raise UsageError(f"--baseline: lane '{lane.name}' names no baseline lane")
    baseline = matrix.lane(baseline_name)
    bundle = Path(args.artifacts).resolve() / BUNDLE_NAME
    if not (bundle / SPEC_NAME).is_file():
        raise UsageError(f"--artifacts: no reproducer bundle at {bundle}")
    python = environment.prepare(matrix, baseline, cache_from(environ)).python
    with tempfile.TemporaryDirectory(prefix="flagci-irdiff-") as scratch:
        found = irdiff.diff_with_baseline(bundle, python, Path(scratch), lane.name, baseline.name)
    if found is None:
        reporter.current().line(f"{bundle}: the two compiles share no stage")
        return 0
    reporter.current().line(f"{found.stage}: {found.changed_lines} lines differ: {found.page}")
    return 0
