"""``flagci history ...``, ``flagci dashboard``, ``flagci site``: the history and its pages."""

from __future__ import annotations

import argparse
from datetime import timedelta
from pathlib import Path

from ci.commands.options import HISTORY_SETTING, Environ, history_target, matrix_from
from ci.commands.output import add_json_option, print_json
from ci.core import reporter, tables
from ci.core.errors import UsageError
from ci.history import store, tuning
from ci.history.ledger import load_ledger
from ci.history.verdicts import Verdict
from ci.publish import dashboard, overview, site
from ci.results import reader


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

    backfill = sub.add_parser(
        "backfill",
        help="store every run folder under DOWNLOADS (any depth up to 4) the history lacks",
    )
    backfill.add_argument("downloads", type=Path, metavar="DOWNLOADS")
    _db_option(backfill)
    backfill.set_defaults(handler=_backfill)

    runs = sub.add_parser("runs", help="the runs the history holds, oldest first")
    _db_option(runs)
    add_json_option(runs)
    runs.set_defaults(handler=_runs)

    verdicts = sub.add_parser("verdicts", help="print the verdict of every (lane, test)")
    _db_option(verdicts)
    add_json_option(verdicts)
    verdicts.add_argument("--ledger", type=Path, default=None, help="known-issue ledger")
    verdicts.add_argument("--failing", action="store_true", help="only tests failing now")
    verdicts.set_defaults(handler=_verdicts)

    board = subparsers.add_parser("dashboard", help="rebuild the static HTML dashboard")
    _db_option(board)
    board.add_argument("--out", type=Path, default=dashboard.DEFAULT_OUT, help="output folder")
    board.add_argument("--ledger", type=Path, default=None, help="known-issue ledger")
    board.add_argument(
        "--stale-hours",
        type=float,
        default=overview.STALE_AFTER.total_seconds() / 3600,
        help="mark a lane stale when its latest run started longer ago than this"
        " (default: %(default)g)",
    )
    board.add_argument(
        "--tuning-gap",
        type=float,
        default=tuning.GAP_RATIO,
        help="show a launcher's choice slower than the best config measured beside it by more"
        " than this ratio (default: %(default)g)",
    )
    board.set_defaults(handler=_dashboard)

    pages = subparsers.add_parser(
        "site", help="lay out the site to publish: the dashboard and the recent runs' pages"
    )
    pages.add_argument("--results", type=Path, default=Path("results"), help="results root")
    pages.add_argument("--dashboard", type=Path, default=dashboard.DEFAULT_OUT)
    pages.add_argument("--out", type=Path, required=True, help="a new folder for the site")
    pages.add_argument(
        "--runs", type=int, default=site.RECENT_RUNS, help="how many recent runs' pages to keep"
    )
    pages.set_defaults(handler=_site)


def _db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        default=None,
        help=f"history: a SQLite file or a postgresql:// URL (default: ${HISTORY_SETTING},"
        f" else {store.DEFAULT_DB})",
    )


def _store(args: argparse.Namespace, environ: Environ) -> store.Store:
    return store.Store(history_target(args.db, store.DEFAULT_DB.parent, environ))


def _ingest(args: argparse.Namespace, environ: Environ) -> int:
    run_dirs: list[Path] = list(args.run_dirs)
    if args.all is not None:
        run_dirs += reader.run_folders(args.all)
    if args.all is None and not run_dirs:
        raise UsageError("history ingest: name at least one RUN_DIR, or --all RESULTS_DIR")
    if not run_dirs:
        print(f"no run folders under {args.all}")
        return 0
    for result in _store(args, environ).ingest_many(run_dirs):
        state = "already stored" if result.already_present else "stored"
        lanes = ", ".join(result.lanes)
        print(f"{result.run_id}: {state}, {result.testcases} testcases, lanes {lanes}")
        for note in result.notes:
            print(f"  note: {note}")
    return 0


def _backfill(args: argparse.Namespace, environ: Environ) -> int:
    stored, present = _store(args, environ).backfill(reader.run_folders(args.downloads, depth=4))
    for result in stored:
        print(f"{result.run_id}: stored, {result.testcases} testcases")
    print(f"{len(stored)} run(s) stored; {len(present)} already in the history")
    return 0


def _runs(args: argparse.Namespace, environ: Environ) -> int:
    runs = _store(args, environ).observations().runs
    if args.json:
        rows = [
            {
                "run_id": r.run_id,
                "started": r.started.isoformat(),
                "kind": r.kind,
                "status": r.status,
                "run_dir": str(r.run_dir),
            }
            for r in runs
        ]
        print_json(rows)
        return 0
    shown = tables.table("run", "started", "kind", "status")
    for run in runs:
        tables.add(shown, run.run_id, f"{run.started:%Y-%m-%d %H:%M}", run.kind, run.status)
    reporter.current().table(shown)
    return 0


def _verdict_json(verdict: Verdict) -> dict[str, object]:
    streak = verdict.failing_since
    return {
        "lane": verdict.lane,
        "test": verdict.test,
        "run_id": verdict.run_id,
        "outcome": verdict.outcome,
        "kind": verdict.kind.value,
        "new_failure": verdict.new_failure,
        "fixed": verdict.fixed,
        "flaky": verdict.flaky,
        "failing_since": None
        if streak is None
        else {"run_id": streak.since_run, "version": streak.since_version, "runs": streak.runs},
        "first_failed_run": verdict.first_failed_run,
        "regression_of": verdict.regression_of,
        "baseline_not_applicable": verdict.baseline_not_applicable or None,
        "known_issue": verdict.known_issue.id if verdict.known_issue else None,
        "signature": verdict.failure.signature if verdict.failure else None,
    }


def _verdicts(args: argparse.Namespace, environ: Environ) -> int:
    state = _store(args, environ).evaluate(load_ledger(args.ledger))
    chosen = [
        verdict
        for _, verdict in sorted(state.verdicts.items())
        if not args.failing or verdict.outcome == "failed"
    ]
    if args.json:
        document = {
            "verdicts": [_verdict_json(v) for v in chosen],
            "fix_checks": [
                {"issue": c.issue.id, "version": c.version, "status": c.status.value}
                for c in state.fix_checks
            ],
        }
        print_json(document)
        return 0
    shown = tables.table("lane", "test", "verdict", "notes")
    for verdict in chosen:
        notes = []
        if verdict.failing_since:
            streak = verdict.failing_since
            notes.append(f"since {streak.since_run} ({streak.since_version}, {streak.runs} runs)")
        if verdict.regression_of:
            notes.append(f"FlagTree regression (baseline {verdict.regression_of} passes)")
        if verdict.baseline_not_applicable:
            notes.append(f"FlagTree vs baseline {verdict.baseline_not_applicable}")
        if verdict.known_issue:
            notes.append(f"known: {verdict.known_issue.id} {verdict.known_issue.upstream}")
        tables.add(shown, verdict.lane, verdict.test, verdict.kind.value, "; ".join(notes))
    reporter.current().table(shown)
    for check in state.fix_checks:
        print(f"{check.issue.id} fixed in {check.version}: {check.status.value}")
    return 0


def _site(args: argparse.Namespace, environ: Environ) -> int:
    laid = site.lay_out(args.results, args.dashboard, args.out, runs=args.runs)
    print(f"site: {laid.root}, {len(laid.runs)} run(s), {laid.bytes / 1e6:.1f} MB")
    return 0


def _dashboard(args: argparse.Namespace, environ: Environ) -> int:
    index = dashboard.build(
        _store(args, environ),
        args.out,
        ledger=load_ledger(args.ledger),
        matrix=matrix_from(args, environ),
        stale_after=timedelta(hours=args.stale_hours),
        tuning_ratio=args.tuning_gap,
    )
    print(f"dashboard: {index}")
    return 0
