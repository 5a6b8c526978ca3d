"""A failure page links the drafted upstream report and the IR diff that triage wrote."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

from ci.history.store import ingest_run
from ci.publish.dashboard import build, failure_page
from ci.smoke.contract.records import REPORT_NAME
from ci.triage.irdiff import HTML_NAME
from tests.fixtures.history_runs import Case, write_run

LANE = "kunlun-flagtree-0.6.1"
TEST = "test_gdn_post_conv.py::test_compile[qwen3-s2]"


def _site(tmp_path: Path, files: tuple[str, ...]) -> Path:
    results = tmp_path / "results"
    case = Case(LANE, TEST, "failed", "OutOfResources: uni_sram", {"artifacts": "artifacts/gdn"})
    run = write_run(results, 0, [case])
    for name in files:
        path = run / "artifacts" / "gdn" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{name}\n")
    db = results / "history.sqlite"
    ingest_run(db, run)
    return build(db, results / "dashboard").parent


def test_the_report_and_the_diff_are_linked_and_resolve(tmp_path: Path) -> None:
    site = _site(tmp_path, ("failure.json", f"bundle/{REPORT_NAME}", f"bundle/{HTML_NAME}"))
    page = site / failure_page(LANE, TEST)
    text = page.read_text(encoding="utf-8")
    for label, name in (("Drafted upstream report", REPORT_NAME), ("IR diff", HTML_NAME)):
        start = text.index(f">{label}</a>")
        href = text[
            text.rindex("href='", 0, start) + 6 : text.index(
                "'", text.rindex("href='", 0, start) + 6
            )
        ]
        target = (page.parent / unquote(href)).resolve()
        assert target.name == name and target.read_text() == f"bundle/{name}\n"


def test_no_link_where_triage_wrote_neither(tmp_path: Path) -> None:
    site = _site(tmp_path, ("failure.json",))
    text = (site / failure_page(LANE, TEST)).read_text(encoding="utf-8")
    assert "Drafted upstream report" not in text and ">IR diff<" not in text
