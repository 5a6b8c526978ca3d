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
from ci.history import store, tuning
from ci.lanes.matrix import Lane, LaneMatrix, load_matrix
from ci.nodes import inventory
from ci.publish import issue_sync, notify
from ci.publish.after_run import Publishing
from ci.results.reader import CIRunRecord
from ci.run import executors, record, remote

Environ = Mapping[str, str]

CACHE_SETTING = "FLAGCI_CACHE"  # the folder of lane venvs, wheelhouses, image archives
HISTORY_SETTING = "FLAGCI_HISTORY_DB"  # the history to use when none is named
SITE_URL_SETTING = "FLAGCI_SITE_URL"  # where the dashboard is published
STEP_SUMMARY_SETTING = "GITHUB_STEP_SUMMARY"  # GitHub Actions' job summary file
TUNING_GAP_SETTING = "FLAGCI_TUNING_GAP"  # the summary's tuning gap ratio


def cache_from(environ: Environ) -> Path:
    """The cache folder: $FLAGCI_CACHE, else ``.cache/flagci`` in the home folder."""
    explicit = environ.get(CACHE_SETTING)
    if explicit:
        return Path(explicit)
    home = environ.get("HOME")
    return (Path(home) if home else Path.home()) / ".cache" / "flagci"


def with_index_settings(matrix: LaneMatrix, environ: Environ) -> LaneMatrix:
    """``matrix`` with each package index at the URL its setting (the index's ``env``,
    FLAGCI_INDEX_<NAME>) gives, where set."""
    urls = {name: environ.get(index.env, "") for name, index in matrix.indexes.items()}
    return matrix.with_index_urls({name: url for name, url in urls.items() if url})


def matrix_from(args: argparse.Namespace, environ: Environ) -> LaneMatrix:
    """The lane matrix of ``--lanes-file`` (default: the packaged one), with its settings."""
    return with_index_settings(
        load_matrix(Path(args.lanes_file) if args.lanes_file else None), environ
    )


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
    ratio = tuning.GAP_RATIO
    if environ.get(TUNING_GAP_SETTING):
        try:
            ratio = float(environ[TUNING_GAP_SETTING])
        except ValueError:
            unusable.append(
                ConfigError(f"{TUNING_GAP_SETTING}={environ[TUNING_GAP_SETTING]!r}: not a number")
            )
    return Publishing(
        site_url=environ.get(SITE_URL_SETTING, ""),
        step_summary=Path(step_summary) if step_summary else None,
        webhook=webhook,
        tracker=tracker,
        unusable=tuple(unusable),
        tuning_ratio=ratio,
    )


@dataclass(frozen=True)
class Where:
    """The lane matrix (``--lanes-file``, its index settings) and where its lanes run: local
    venvs (default), local images (``--image``) or an inventory's nodes (``--inventory``,
    ``--limit``), each with the cache folder ($FLAGCI_CACHE)."""

    matrix: LaneMatrix
    executor: executors.LaneExecutor

    @classmethod
    def parse(cls, args: argparse.Namespace, environ: Environ) -> Where:
        if args.limit and not args.inventory:
            raise UsageError("--limit selects inventory hosts: it needs --inventory")
        nodes = inventory.inventory_path(args.inventory) if args.inventory else None
        matrix = matrix_from(args, environ)
        cache = cache_from(environ)
        executor: executors.LaneExecutor
        if nodes is not None:
            search_path = environ.get("PATH", "")
            executor = remote.NodeExecutor(matrix, nodes, cache, search_path, limit=args.limit)
        elif args.image:
            executor = executors.LocalImageExecutor(matrix, cache)
        else:
            executor = executors.LocalVenvExecutor(matrix, cache)
        return cls(matrix, executor)


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

    where: Where
    lanes: list[Lane]
    request: executors.SuiteRequest
    recording: Recording
    publishing: Publishing

    @classmethod
    def parse(cls, args: argparse.Namespace, environ: Environ) -> RunOptions:
        extra = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
        where = Where.parse(args, environ)
        names = [name for value in args.lanes for name in value.split(",") if name]
        return cls(
            where=where,
            lanes=where.matrix.select(names),
            request=executors.SuiteRequest(workers=args.workers, pytest_args=tuple(extra)),
            recording=Recording.parse(args, environ),
            publishing=publishing_from(environ),
        )
