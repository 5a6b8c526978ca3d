"""``flagci run``: run lanes and write ``results/<run-id>/``."""

from __future__ import annotations

import argparse
from pathlib import Path

from ci.commands.options import HISTORY_SETTING, Environ, Recording, RunOptions
from ci.core import reporter
from ci.history import store
from ci.history.ledger import load_ledger
from ci.history.run_verdicts import RunOutcome
from ci.lanes.matrix import LaneMatrix
from ci.publish import after_run, dashboard
from ci.publish.after_run import Publishing
from ci.results.reader import RunData
from ci.run import executors


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = subparsers.add_parser("run", help="run the smoke suite of some lanes")
    run.add_argument(
        "--lane",
        "--lanes",
        dest="lanes",
        action="append",
        default=[],
        help="lane name(s), repeatable or comma-separated (default: the matrix's default lane)",
    )
    run.add_argument("--results", default="results", help="results root (default: results)")
    run.add_argument(
        "--history",
        help="history the run is added to: a SQLite file or a postgresql:// URL (default:"
        f" ${HISTORY_SETTING}, else RESULTS/history.sqlite); the dashboard is rebuilt next to"
        " the SQLite file, or under RESULTS/dashboard",
    )
    run.add_argument("--no-history", action="store_true", help="do not record the run")
    run.add_argument(
        "--workers", type=int, default=0, help="pytest workers (default: one per core)"
    )
    add_executor_arguments(run)
    run.add_argument("pytest_args", nargs=argparse.REMAINDER, help="-- then extra pytest arguments")
    run.set_defaults(handler=_run)


def add_executor_arguments(parser: argparse.ArgumentParser) -> None:
    """Where lanes run: local venvs (default), local images (--image) or nodes (--inventory)."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--inventory",
        help="run on the nodes of this Ansible inventory (a path, or a name under"
        " playbooks/inventories/: lab, local) instead of in local venvs",
    )
    where.add_argument(
        "--image",
        action="store_true",
        help="run each lane in its image on the local Docker engine instead of in a venv",
    )
    parser.add_argument("--limit", help="with --inventory: an Ansible host pattern (group, host)")


def _run(args: argparse.Namespace, environ: Environ) -> int:
    options = RunOptions.parse(args, environ)
    where, recording = options.where, options.recording
    run = executors.run_lanes(
        where.executor,
        where.matrix,
        options.lanes,
        options.request,
        recording.results,
        made_in=recording.made_in,
    )
    outcome = finish_run(run, where.matrix, recording, options.publishing)
    if outcome.error is not None:
        raise outcome.error
    return 0


def finish_run(
    run: RunData, matrix: LaneMatrix, recording: Recording, publishing: Publishing
) -> RunOutcome:
    """After a run: the history and dashboard, then its outcome (verdicts, post-run
    steps), which the summary and the exit status render."""
    history, board = record_history(recording, run, matrix)
    return after_run.after_run(
        run, store=history, ledger=load_ledger(), dashboard=board, publishing=publishing
    )


def record_history(
    recording: Recording, run: RunData, matrix: LaneMatrix | None = None
) -> tuple[store.Store | None, Path | None]:
    """Add the run to the history (unless ``--no-history``) and rebuild the dashboard; return
    the store and the dashboard folder (None, None without history)."""
    if recording.history is None:
        return None, None
    history = store.Store(recording.history)
    history.add(run)
    board = (history.folder or recording.results) / "dashboard"
    page = dashboard.build(history, board, matrix=matrix)
    reporter.current().line(f"history: {history.name}; dashboard: {page}")
    return history, board
