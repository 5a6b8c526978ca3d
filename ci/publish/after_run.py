"""After a run: its verdicts, its Markdown summary, its news, and the error it ends with.

``flagci run`` calls ``after_run`` once the run folder is finished (and, with a history,
ingested and the dashboard rebuilt). With a history the verdicts see every earlier run;
without one, the run alone (nothing can be new or fixed then, but known is known).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from ci.core.errors import ConfigError, FlagCIError, NotifyError
from ci.history.ledger import Ledger
from ci.history.run_verdicts import RunVerdicts, exit_error, of_run
from ci.history.store import Store
from ci.history.verdicts import (
    FailureRecord,
    LaneRun,
    Observations,
    ResultRow,
    RunInfo,
    Verdict,
    evaluate,
)
from ci.publish import issue_sync, notify, summary
from ci.publish.dashboard import failure_page
from ci.results import reader

log = logging.getLogger(__name__)

SITE_URL = "FLAGCI_SITE_URL"  # where the dashboard is published; links point there when set


def observations_of(run_dir: Path) -> Observations:
    """One run folder as the only run of a history."""
    record, _ = reader.read_record(run_dir)
    cases = reader.read_cases(run_dir / "merged.xml", record.lanes)
    run = RunInfo(
        record.run_id, record.started, run_dir, record.kind, record.status, record.artifacts_url
    )
    lane_runs = tuple(
        LaneRun(
            record.run_id,
            name,
            lane.vendor,
            lane.family or lane.vendor,
            lane.baseline,
            lane.compiler.package,
            lane.compiler.version,
            lane.pins_digest,
        )
        for name, lane in record.lanes.items()
    )
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
                artifacts=case.artifacts,
                artifact_files=tuple(reader.artifact_files(run_dir, case)),
                run_dir=run_dir,
                artifacts_url=record.artifacts_url,
            ),
        )
    return Observations((run,), lane_runs, results, perf, failures)


def run_verdicts(run_dir: Path, store: Store | None, ledger: Ledger) -> RunVerdicts:
    record, _ = reader.read_record(run_dir)
    history = store.evaluate(ledger) if store else evaluate(observations_of(run_dir), ledger)
    return of_run(history, record.run_id)


def failure_links(run_dir: Path, dashboard: Path | None) -> summary.Link:
    """Failure page addresses: under $FLAGCI_SITE_URL, else relative to the run folder."""
    site = os.environ.get(SITE_URL, "").rstrip("/")

    def link(verdict: Verdict) -> str:
        page = failure_page(verdict.lane, verdict.test)
        if site:
            return f"{site}/{page}"
        if dashboard is None:
            return "index.html"
        return Path(os.path.relpath(dashboard.resolve() / page, run_dir.resolve())).as_posix()

    return link


def after_run(
    run_dir: Path, *, store: Store | None, ledger: Ledger, dashboard: Path | None
) -> FlagCIError | None:
    """Write the run's summary, post its news, sync its issues; return the error the run
    ends with (None: every failure known). The verdict's error outranks a failed post."""
    verdicts = run_verdicts(run_dir, store, ledger)
    link = failure_links(run_dir, dashboard)
    summary.write(run_dir, summary.render(verdicts, link))
    log.info("summary: %s", run_dir / summary.FILE_NAME)
    error = exit_error(verdicts)
    try:
        hook = notify.webhook_from()
        if hook is not None and notify.send(hook, verdicts, link):
            log.info("posted the run's news to the %s webhook", hook.format)
        tracker = issue_sync.tracker_from()
        if tracker is not None:
            synced = issue_sync.sync(tracker, verdicts, link)
            log.info(
                "issues of %s: opened %s, commented %s, closed %s",
                tracker.repo,
                synced.opened,
                synced.commented,
                synced.closed,
            )
    except (NotifyError, ConfigError) as err:
        if error is not None:
            log.error("%s", err)
            return error
        return err
    return error
