"""The dashboard in headless Debian Chromium: renders, no console errors, markup stays text;
the published site read as a person sees it at 1400 and 400 pixels wide (the first news is
the regression, a stale lane is marked, nothing scrolls sideways, every link resolves).

A screenshot of each page is kept under results/test-artifacts/dashboard/.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from ci.publish import site as published
from ci.publish.dashboard import build, failure_page
from ci.results import reader, report
from tests.fixtures.chromium import Page, chromium_page, find_chromium
from tests.fixtures.dashboard_history import (
    ATTENTION,
    HOSTILE_TEST,
    NOW,
    STALE_LANE,
    build_history,
)

pytestmark = [pytest.mark.integration, pytest.mark.browser]

ARTIFACTS = Path(__file__).resolve().parents[2] / "results" / "test-artifacts" / "dashboard"
CHROMIUM = find_chromium()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("browser") / "results"
    return build(build_history(results), results / "dashboard").parent


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_the_dashboard_renders_without_errors_and_shows_markup_as_text(site: Path) -> None:
    assert CHROMIUM is not None
    pages = {
        "index": site / "index.html",
        "history": site / "history.html",
        "trends": site / "trends.html",
        "failure": site / failure_page("iluvatar-flagtree-0.6.0", ATTENTION),
    }
    with chromium_page(CHROMIUM) as page:
        for name, path in pages.items():
            page.open(path.as_uri())
            assert page.errors() == [], name
            assert page.evaluate("document.title").endswith("· flagci"), name
            # The stylesheet loaded (the CSP allows it): the header is dark.
            header = page.evaluate(
                "getComputedStyle(document.querySelector('header')).backgroundColor"
            )
            assert header == "rgb(32, 38, 46)", name
            assert page.evaluate("document.scripts.length") == 0, name
            page.screenshot(ARTIFACTS / f"{name}.png")
            assert (ARTIFACTS / f"{name}.png").stat().st_size > 1000

        page.open(pages["index"].as_uri())
        assert page.evaluate(f"document.body.textContent.includes({HOSTILE_TEST!r})")
        assert page.evaluate("document.querySelectorAll('td.test b, td.test script').length") == 0
        assert page.evaluate("typeof window.pwned") == "undefined"
        cells = page.evaluate(
            "Array.from(document.querySelectorAll('td.cell')).map(c => c.className)"
        )
        assert "cell k-known-issue" in cells and "cell k-passed" in cells
        charts = page.open(pages["trends"].as_uri()) or page.evaluate(
            "document.querySelectorAll('svg.chart polyline').length"
        )
        assert charts >= 6


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_a_console_error_would_be_seen(tmp_path: Path) -> None:
    """The error check is live: a page that logs an error is caught."""
    assert CHROMIUM is not None
    broken = tmp_path / "broken.html"
    broken.write_text("<!DOCTYPE html><title>x</title><link rel='stylesheet' href='missing.css'>")
    with chromium_page(CHROMIUM) as page:
        page.open(broken.as_uri())
        assert page.errors()


WIDTHS = (1400, 400)
LINKS = "Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"


def _laid_out_site(root: Path) -> Path:
    """The fixture history's dashboard and run pages laid out as the dashboard job does."""
    results = root / "results"
    db = build_history(results, in_actions=True)
    for folder in reader.run_folders(results, depth=1):
        record = reader.read_record(folder)[0]
        cases = reader.read_cases(folder / "merged.xml", record.lanes)
        page = report.of_run(cases, record.run_id, artifacts_url=record.artifacts_url).page
        (folder / "index.html").write_text(page)
    board = build(db, results / "dashboard", now=NOW).parent
    return published.lay_out(results, board, root / "site").root


def _at_width(page: Page, width: int) -> None:
    page.call(
        "Emulation.setDeviceMetricsOverride",
        width=width,
        height=1000,
        deviceScaleFactor=1,
        mobile=False,
    )


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_the_site_reads_as_a_person_sees_it_at_both_widths(tmp_path: Path) -> None:
    assert CHROMIUM is not None
    root = _laid_out_site(tmp_path)
    runs = sorted(p.parent for p in root.glob("*/run.json"))
    pages = {
        "site-index": root / "dashboard" / "index.html",
        "site-history": root / "dashboard" / "history.html",
        "site-trends": root / "dashboard" / "trends.html",
        "site-failure": root / "dashboard" / failure_page("iluvatar-flagtree-0.6.0", ATTENTION),
        "site-run": runs[-1] / "index.html",
    }
    with chromium_page(CHROMIUM) as page:
        for width in WIDTHS:
            _at_width(page, width)
            for name, path in pages.items():
                page.open(path.as_uri())
                assert page.errors() == [], name
                overflow = page.evaluate(
                    "document.documentElement.scrollWidth - document.documentElement.clientWidth"
                )
                assert overflow <= 0, (name, width, overflow)
                for href in page.evaluate(LINKS):
                    if href.startswith("https://"):
                        continue
                    target = Path(unquote(urlparse(href).path))
                    assert target.is_relative_to(root) and target.exists(), (name, href)
                page.screenshot(ARTIFACTS / f"{name}-{width}.png")
            page.open(pages["site-index"].as_uri())
            first = page.evaluate("document.querySelector('section.news .what').textContent")
            assert first == "FlagTree regression", width
            stale = page.evaluate(
                "Array.from(document.querySelectorAll('tr.stale strong')).map(e => e.textContent)"
            )
            assert stale == [STALE_LANE]
