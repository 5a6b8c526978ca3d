"""What a command was asked: its arguments and the environment, parsed once, here.

``ci.cli.main`` hands every handler the parsed arguments and one environment mapping
(``os.environ`` unless a caller gives another); the handler turns them into the frozen
values below and hands the library plain values: no library module reads ``os.environ``
or an argparse ``Namespace``.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ci.core.errors import ConfigError, UsageError
from ci.history import store
from ci.lanes.matrix import LaneMatrix
from ci.nodes import inventory
from ci.publish import issue_sync, notify
from ci.publish.after_run import Publishing
from ci.results.reader import CIRunRecord
from ci.run import executors, record, remote

Environ = Mapping[str, str]

HISTORY_SETTING = "FLAGCI_HISTORY_DB"  # the history to use when none is named
SITE_URL_SETTING = "FLAGCI_SITE_URL"  # where the dashboard is published
STEP_SUMMARY_SETTING = "GITHUB_STEP_SUMMARY"  # GitHub Actions' job summary file


def history_target(named: str | None, results: Path, environ: Environ) -> str:
    """The history to use: the one named, else $FLAGCI_HISTORY_DB, else
    ``history.sqlite`` under ``results``."""
    return named or environ.get(HISTORY_SETTING) or str(results / store.DEFAULT_DB.name)


def publishing_from(environ: Environ) -> Publishing:
    """Where news goes; a setting that names no usable webhook or tracker is kept as a
    failed post-run step, so the run still runs and ends with its error."""
    unusable: list[ConfigError] = []
    webhook = tracker = None
    try:
        webhook = notify.webhook_from(
            environ.get(notify.URL_SETTING, ""), environ.get(notify.FORMAT_SETTING, "slack")
        )
    except ConfigError as err:
        unusable.append(err)
    try:
        tracker = issue_sync.tracker_from(
            environ.get(issue_sync.REPO_SETTING, ""),
            environ.get(issue_sync.TOKEN_SETTING, ""),
            environ.get(issue_sync.API_SETTING, ""),
        )
    except ConfigError as err:
        unusable.append(err)
    step_summary = environ.get(STEP_SUMMARY_SETTING)
    return Publishing(
        site_url=environ.get(SITE_URL_SETTING, ""),
        step_summary=Path(step_summary) if step_summary else None,
        webhook=webhook,
        tracker=tracker,
        unusable=tuple(unusable),
    )


@dataclass(frozen=True)
class Where:
    """Where lanes run: local venvs (default), local images, or an inventory's nodes."""

    inventory: str | None = None
    image: bool = False
    limit: str | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Where:
        if args.limit and not args.inventory:
            raise UsageError("--limit selects inventory hosts: it needs --inventory")
        return cls(args.inventory, args.image, args.limit)

    def executor(self, matrix: LaneMatrix) -> executors.LaneExecutor:
        if self.inventory:
            path = inventory.inventory_path(self.inventory)
            return remote.NodeExecutor(matrix, path, limit=self.limit)
        if self.image:
            return executors.LocalImageExecutor(matrix)
        return executors.LocalVenvExecutor(matrix)


@dataclass(frozen=True)
class Recording:
    """Where a run is recorded: its results root, its history (None: ``--no-history``),
    and the GitHub Actions run it is made in, if any."""

    results: Path
    history: str | None
    made_in: CIRunRecord | None

    @classmethod
    def parse(cls, args: argparse.Namespace, environ: Environ) -> Recording:
        results = Path(args.results)
        history = None if args.no_history else history_target(args.history, results, environ)
        return cls(results, history, record.ci_run(environ))


@dataclass(frozen=True)
class RunOptions:
    """``flagci run``: which lanes, where, what of their suites, where results go."""

    lanes: tuple[str, ...]
    where: Where
    request: executors.SuiteRequest
    recording: Recording
    publishing: Publishing

    @classmethod
    def parse(cls, args: argparse.Namespace, environ: Environ) -> RunOptions:
        extra = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
        return cls(
            lanes=tuple(name for value in args.lanes for name in value.split(",") if name),
            where=Where.from_args(args),
            request=executors.SuiteRequest(workers=args.workers, pytest_args=tuple(extra)),
            recording=Recording.parse(args, environ),
            publishing=publishing_from(environ),
        )
