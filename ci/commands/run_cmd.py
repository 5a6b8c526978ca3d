"""``flagci run``: run lanes and write ``results/<run-id>/``."""

from __future__ import annotations

import argparse
from pathlib import Path

from ci.commands.lanes_cmd import matrix_from
from ci.core import reporter
from ci.core.errors import InfrastructureError, UsageError
from ci.history import store
from ci.history.ledger import load_ledger
from ci.lanes.matrix import LaneMatrix
from ci.nodes import inventory
from ci.publish import after_run, dashboard
from ci.results import report
from ci.run import executors, record, remote


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
        f" ${store.SETTING}, else RESULTS/history.sqlite); the dashboard is rebuilt next to"
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


def executor_from(args: argparse.Namespace, matrix: LaneMatrix) -> executors.LaneExecutor:
    if args.limit and not args.inventory:
        raise UsageError("--limit selects inventory hosts: it needs --inventory")
    if args.inventory:
        return remote.NodeExecutor(
            matrix, inventory.inventory_path(args.inventory), limit=args.limit
        )
    if args.image:
        return executors.LocalImageExecutor(matrix)
    return executors.LocalVenvExecutor(matrix)


def lane_names(values: list[str]) -> list[str]:
    return [name for value in values for name in value.split(",") if name]


def _run(args: argparse.Namespace) -> int:
    matrix = matrix_from(args)
    lanes = matrix.select(lane_names(args.lanes))
    extra = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    executor = executor_from(args, matrix)
    request = executors.SuiteRequest(workers=args.workers, pytest_args=tuple(extra))
    result = executors.run_lanes(executor, matrix, lanes, request, Path(args.results))
    return finish_run(args, result, matrix)


def finish_run(args: argparse.Namespace, result: record.RunResult, matrix: LaneMatrix) -> int:
    """After a run: the summary, the history and dashboard, the verdicts and exit status."""
    out = reporter.current()
    out.line("")
    out.table(report.summary_table(result.results))
    failures = report.failure_list(result.results)
    if failures:
        out.line("\n" + "\n".join(failures))
    out.line(f"\nresults: {result.run_dir}/merged.xml, {result.run_dir}/index.html")
    history, board = record_history(args, result, matrix)
    # Verdicts, summary.md and the exit code: known failures are expected (ci/publish/after_run.py).
    verdict_error = after_run.after_run(
        result.run_dir, store=history, ledger=load_ledger(), dashboard=board
    )
    if result.status == "error":
        raise InfrastructureError(f"run {result.run_dir.name}: some lanes could not run")
    if verdict_error is not None:
        raise verdict_error
    return 0


def record_history(
    args: argparse.Namespace, result: record.RunResult, matrix: LaneMatrix | None = None
) -> tuple[store.Store | None, Path | None]:
    """Add the run to the history (unless ``--no-history``) and rebuild the dashboard; return
    the store and the dashboard folder (None, None without history)."""
    if args.no_history:
        return None, None
    history = store.Store(args.history or store.default_target(Path(args.results)))
    history.ingest(result.run_dir)
    board = (history.folder or Path(args.results)) / "dashboard"
    page = dashboard.build(history, board, matrix=matrix)
    reporter.current().line(f"history: {history.name}; dashboard: {page}")
    return history, board
