"""``flagci history ingest|verdicts`` and ``flagci dashboard``: the run history and its pages."""

from __future__ import annotations

import argparse
from pathlib import Path

from ci import dashboard, history
from ci.errors import UsageError
from ci.ledger import load_ledger
from ci.verdicts import evaluate


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("history", help="the run history database")
    sub = parser.add_subparsers(dest="history_command", required=True, metavar="ACTION")

    ingest = sub.add_parser("ingest", help="store run folders in the history (idempotent)")
    ingest.add_argument("run_dirs", nargs="*", type=Path, metavar="RUN_DIR")
    ingest.add_argument(
        "--all",
        type=Path,
        metavar="RESULTS_DIR",
        help="also every run folder (one holding run.json) directly under RESULTS_DIR",
    )
    _db_option(ingest)
    ingest.set_defaults(handler=_ingest)

    verdicts = sub.add_parser("verdicts", help="print the verdict of every (lane, test)")
    _db_option(verdicts)
    verdicts.add_argument("--ledger", type=Path, default=None, help="known-issue ledger")
    verdicts.add_argument("--failing", action="store_true", help="only tests failing now")
    verdicts.set_defaults(handler=_verdicts)

    board = subparsers.add_parser("dashboard", help="rebuild the static HTML dashboard")
    _db_option(board)
    board.add_argument("--out", type=Path, default=dashboard.DEFAULT_OUT, help="output folder")
    board.add_argument("--ledger", type=Path, default=None, help="known-issue ledger")
    board.set_defaults(handler=_dashboard)


def _db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db", type=Path, default=history.DEFAULT_DB, help="history database (SQLite file)"
    )


def _ingest(args: argparse.Namespace) -> int:
    run_dirs: list[Path] = list(args.run_dirs)
    if args.all is not None:
        run_dirs += history.run_folders(args.all)
    if args.all is None and not run_dirs:
        raise UsageError("history ingest: name at least one RUN_DIR, or --all RESULTS_DIR")
    if not run_dirs:
        print(f"no run folders under {args.all}")
        return 0
    for result in history.ingest_runs(args.db, run_dirs):
        state = "already stored" if result.already_present else "stored"
        lanes = ", ".join(result.lanes)
        print(f"{result.run_id}: {state}, {result.testcases} testcases, lanes {lanes}")
    return 0


def _verdicts(args: argparse.Namespace) -> int:
    state = evaluate(args.db, load_ledger(args.ledger))
    for (lane, test), verdict in sorted(state.verdicts.items()):
        if args.failing and verdict.outcome != "failed":
            continue
        notes = []
        if verdict.failing_since:
            streak = verdict.failing_since
            notes.append(f"since {streak.since_run} ({streak.since_version}, {streak.runs} runs)")
        if verdict.regression_of:
            notes.append(f"FlagTree regression (baseline {verdict.regression_of} passes)")
        if verdict.known_issue:
            notes.append(f"known: {verdict.known_issue.id} {verdict.known_issue.upstream}")
        print(f"{lane}  {test}  {verdict.kind.value}" + ("  " + "; ".join(notes) if notes else ""))
    for check in state.fix_checks:
        print(f"{check.issue.id} fixed in {check.version}: {check.status.value}")
    return 0


def _dashboard(args: argparse.Namespace) -> int:
    index = dashboard.build(args.db, args.out, ledger=load_ledger(args.ledger))
    print(f"dashboard: {index}")
    return 0
