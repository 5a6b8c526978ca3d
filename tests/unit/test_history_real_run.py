"""A real CPU-lane run record (``make ci-local``) through ingest, verdicts and dashboard."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ci.history.ledger import load_ledger
from ci.history.store import Store, ingest_run
from ci.history.verdicts import Kind
from ci.publish.dashboard import build

REAL_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "20261130T160656Z-local"
LANE = "cpu-triton-3.6.0"
SHARED = "out of resources: shared memory, Required: 262144, Hardware limit: 166912"


def _next_run(results: Path, failing_test: str) -> Path:
    """The real run again a day later, with one compile test failing as it would on sm_80."""
    folder = results / "20261201T160656Z-local"
    folder.mkdir(parents=True)
    record = json.loads((REAL_RUN / "run.json").read_text())
    record.update(
        run_id=folder.name,
        started="2026-12-01T16:06:56+00:00",
        finished="2026-12-01T16:08:13+00:00",
    )
    (folder / "run.json").write_text(json.dumps(record))
    classname, name = failing_test.split("::")
    xml = (REAL_RUN / "merged.xml").read_text(encoding="utf-8")
    opening = f'<testcase classname="{classname}" name="{name}"'
    start = xml.index(opening)
    end = xml.index("</testcase>", start)
    failure = f'<failure message="{SHARED}">{SHARED}</failure>'
    (folder / "merged.xml").write_text(xml[:end] + failure + xml[end:], encoding="utf-8")
    return folder


def test_a_real_run_and_a_generated_successor(tmp_path: Path) -> None:
    results = tmp_path / "results"
    real = results / REAL_RUN.name
    shutil.copytree(REAL_RUN, real)
    db = results / "history.sqlite"

    first = ingest_run(db, real)
    assert (first.testcases, first.lanes) == (43, (LANE,))
    history = Store(db).evaluate(load_ledger())
    assert {v.kind for v in history.verdicts.values()} == {Kind.PASSED}

    failing = next(
        test
        for (_, test) in history.verdicts
        if test.startswith("test_gdn_post_conv::") and "[sm_80-" in test
    )
    ingest_run(db, _next_run(results, failing))
    history = Store(db).evaluate(load_ledger())
    verdict = history.verdicts[(LANE, failing)]
    assert verdict.kind is Kind.NEW_FAILURE and verdict.known_issue is None
    assert sum(v.outcome == "failed" for v in history.verdicts.values()) == 1

    index = build(db, results / "dashboard")
    trends = (index.parent / "trends.html").read_text()
    assert "<figcaption>gdn_post_conv · " in trends and 'aria-roledescription="point"' in trends
