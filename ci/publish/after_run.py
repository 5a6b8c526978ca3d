"""After a run: its verdicts, its post-run steps, its outcome, its summary and its news.

``flagci run`` calls ``after_run`` with the finished run (``ci.run.record.Run.finish``'s
``RunData``: nothing is read back from the folder), once it is stored in the history. With a
history the verdicts see every earlier run; without one, the run alone (nothing can be new
or fixed then, but known is known). The outcome (``RunOutcome``) is decided once, before
anything is written; the summary, the job summary, the webhook and the exit status render it.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from ci.core.errors import ConfigError, FlagCIError, NotifyError
from ci.history import tuning
from ci.history.ledger import Ledger
from ci.history.run_verdicts import RunOutcome, RunVerdicts, of_run
from ci.history.store import PerfRecord, Store
from ci.history.verdicts import (
    FailureRecord,
    LaneRun,
    Observations,
    ResultRow,
    RunInfo,
    Verdict,
    evaluate,
)
from ci.publish import issue_sync, notify, site, summary
from ci.publish.dashboard import failure_page
from ci.results import reader

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Publishing:
    """Where a run's news goes: plain values, from the settings the command layer read."""

    site_url: str = ""  # where the dashboard is published; failure links point there
    step_summary: Path | None = None  # GitHub Actions' job summary, appended to
    webhook: notify.Webhook | None = None
    tracker: issue_sync.Tracker | None = None
    unusable: tuple[ConfigError, ...] = ()  # settings that name no usable webhook or tracker
    tuning_ratio: float = tuning.GAP_RATIO  # a tuning gap above it goes into the summary


def observations_of(finished: reader.RunData) -> Observations:
    """One run as the only run of a history."""
    record, cases, run_dir = finished.record, finished.cases, finished.folder
    run = RunInfo(
        record.run_id, record.started, run_dir, record.kind, record.status, record.artifacts_url
    )
    lane_runs = tuple(LaneRun.of(record.run_id, name, lane) for name, lane in record.lanes.items())
    results = tuple(ResultRow(record.run_id, c.lane, c.node, c.test, c.outcome) for c in cases)
    perf = tuple(
        (record.run_id, c.lane, c.test, c.gpu, c.perf_ms) for c in cases if c.perf_ms is not None
    )
    failures: dict[tuple[str, str], FailureRecord] = {}
    for case in sorted((c for c in cases if c.failed), key=lambda c: c.node):
        failures.setdefault(
            (case.lane, case.test),
            FailureRecord(
                node=case.node,
                outcome=case.outcome,
                message=case.message,
                details=case.details,
                signature=case.signature,
                failure_kind=case.failure_kind,
                triage=case.triage,
                artifacts=case.artifacts,
                artifact_files=tuple(reader.artifact_files(run_dir, case)),
                run_dir=run_dir,
                artifacts_url=record.artifacts_url,
            ),
        )
    return Observations((run,), lane_runs, results, perf, failures)


def perf_records(finished: reader.RunData) -> list[PerfRecord]:
    """The run's perf times, as the history stores them."""
    run_id = finished.record.run_id
    return [
        PerfRecord(run_id, c.lane, c.test, c.gpu, c.kernel, c.config, c.perf_ms)
        for c in finished.cases
        if c.perf_ms is not None
    ]


def run_verdicts(run: reader.RunData, store: Store | None, ledger: Ledger) -> RunVerdicts:
    if store is None:
        alone = observations_of(run)
        return of_run(evaluate(alone, ledger), run.record.run_id)
    return of_run(store.evaluate(ledger), run.record.run_id)


def failure_links(run_dir: Path, dashboard: Path | None, site_url: str) -> summary.Link:
    """Failure page addresses: under the published site, else relative to the run folder."""

    def link(verdict: Verdict) -> str:
        page = failure_page(verdict.lane, verdict.test)
        if site_url:
            return site.dashboard_url(site_url, page)
        if dashboard is None:
            return "index.html"
        return Path(os.path.relpath(dashboard.resolve() / page, run_dir.resolve())).as_posix()

    return link


def _sync_issues(
    tracker: issue_sync.Tracker, verdicts: RunVerdicts, link: summary.Link
) -> NotifyError | None:
    try:
        synced = issue_sync.sync(tracker, verdicts, link)
    except NotifyError as err:
        return err
    log.info(
        "issues of %s: opened %s, commented %s, closed %s",
        tracker.repo,
        synced.opened,
        synced.commented,
        synced.closed,
    )
    return None


def after_run(
    run: reader.RunData,
    *,
    store: Store | None,
    ledger: Ledger,
    dashboard: Path | None,
    publishing: Publishing,
) -> RunOutcome:
    """Judge the run, sync its issues, decide its outcome; then write its summary and post
    its news, both rendering that outcome, and return it."""
    link = failure_links(run.folder, dashboard, publishing.site_url)
    verdicts = run_verdicts(run, store, ledger)
    failed: list[FlagCIError] = list(publishing.unusable)
    if publishing.tracker is not None:
        failed += filter(None, [_sync_issues(publishing.tracker, verdicts, link)])
    could_not_run = tuple(
        f"{p.node}/{p.lane}: {p.infrastructure_error}" for p in run.record.infrastructure_errors
    )
    outcome = RunOutcome(verdicts, could_not_run, tuple(failed))
    for error in outcome.post_failures:
        log.error("%s", error)
    gaps = tuning.tuning_gaps(perf_records(run), dict.fromkeys(run.record.lanes, run.record.run_id))
    text = summary.render(outcome, link, (gaps, publishing.tuning_ratio))
    summary.write(run.folder, text, publishing.step_summary)
    log.info("summary: %s", run.folder / summary.FILE_NAME)
    if publishing.webhook is not None:
        # The webhook posts only news (a regression or a new failure), and news outranks
        # a failed post: failing here cannot change the outcome, so it is only told.
        try:
            if notify.send(publishing.webhook, outcome, link):
                log.info("posted the run's news to the %s webhook", publishing.webhook.format)
        except NotifyError as err:
            log.error("%s", err)
    return outcome
