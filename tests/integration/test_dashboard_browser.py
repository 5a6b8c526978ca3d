"""The dashboard in headless Debian Chromium, driven by Playwright: renders, no console errors,
markup stays text; the published site read as a person sees it at 1400 and 400 pixels wide
(the first news is the regression, a stale lane is marked, nothing scrolls sideways, every
link resolves).

Playwright drives the system's Chromium (``executable_path``); it never downloads a browser
(``.ci/run`` sets PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD and never runs ``playwright install``).
A screenshot of each page is kept under results/test-artifacts/dashboard/.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, sync_playwright

from ci.publish import site as published
from ci.publish.dashboard import build, failure_page
from ci.results import reader, report
from tests.fixtures.dashboard_history import (
    ATTENTION,
    HOSTILE_TEST,
    NOW,
    STALE_LANE,
    build_history,
)

pytestmark = [
    pytest.mark.integration,
    pytest.mark.browser,
    pytest.mark.skipif(
        shutil.which("chromium") is None,
        reason="chromium is not installed (apt-get install chromium)",
    ),
]

ARTIFACTS = Path(__file__).resolve().parents[2] / "results" / "test-artifacts" / "dashboard"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


class Errors(list[str]):
    """The console errors and uncaught exceptions of a page since it was opened."""

    def __init__(self, page: Page) -> None:
        super().__init__()
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.append(str(error)))

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.append(message.text)


def _open(page: Page, errors: Errors, url: str) -> None:
    errors.clear()
    page.goto(url, wait_until="load")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("browser") / "results"
    return build(build_history(results), results / "dashboard").parent


def test_the_dashboard_renders_without_errors_and_shows_markup_as_text(
    site: Path, browser: Browser
) -> None:
    pages = {
        "index": site / "index.html",
        "history": site / "history.html",
        "trends": site / "trends.html",
        "failure": site / failure_page("iluvatar-flagtree-0.6.0", ATTENTION),
    }
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = Errors(page)
    for name, path in pages.items():
        _open(page, errors, path.as_uri())
        assert errors == [], name
        assert page.title().endswith("· flagci"), name
        # The stylesheet loaded (the CSP allows it): the header is dark.
        header = page.evaluate("getComputedStyle(document.querySelector('header')).backgroundColor")
        assert header == "rgb(32, 38, 46)", name
        assert page.evaluate("document.scripts.length") == 0, name
        page.screenshot(path=ARTIFACTS / f"{name}.png", full_page=True)
        assert (ARTIFACTS / f"{name}.png").stat().st_size > 1000

    _open(page, errors, pages["index"].as_uri())
    assert HOSTILE_TEST in page.locator("body").text_content()
    assert page.locator("td.test b, td.test script").count() == 0
    assert page.evaluate("typeof window.pwned") == "undefined"
    cells = page.locator("td.cell").evaluate_all("cells => cells.map(c => c.className)")
    assert "cell k-known-issue" in cells and "cell k-passed" in cells
    # The trend charts: drawn SVG, a marked point per run, visible on the page.
    _open(page, errors, pages["trends"].as_uri())
    charts = page.locator("figure.chart svg")
    assert charts.count() == 5
    assert charts.first.bounding_box()["height"] > 100
    assert page.locator("figure.chart svg [aria-roledescription='point']").count() >= 14
    page.close()


def test_a_console_error_would_be_seen(tmp_path: Path, browser: Browser) -> None:
    """The error check is live: a page that logs an error is caught."""
    broken = tmp_path / "broken.html"
    broken.write_text("<!DOCTYPE html><title>x</title><link rel='stylesheet' href='missing.css'>")
    page = browser.new_page()
    errors = Errors(page)
    _open(page, errors, broken.as_uri())
    assert errors
    page.close()


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


def test_the_site_reads_as_a_person_sees_it_at_both_widths(
    tmp_path: Path, browser: Browser
) -> None:
    root = _laid_out_site(tmp_path)
    runs = sorted(p.parent for p in root.glob("*/run.json"))
    pages = {
        "site-index": root / "dashboard" / "index.html",
        "site-history": root / "dashboard" / "history.html",
        "site-trends": root / "dashboard" / "trends.html",
        "site-failure": root / "dashboard" / failure_page("iluvatar-flagtree-0.6.0", ATTENTION),
        "site-run": runs[-1] / "index.html",
    }
    for width in WIDTHS:
        page = browser.new_page(viewport={"width": width, "height": 1000})
        errors = Errors(page)
        for name, path in pages.items():
            _open(page, errors, path.as_uri())
            assert errors == [], name
            overflow = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert overflow <= 0, (name, width, overflow)
            if name == "site-run":
                # The lane x test table scrolls inside its box when lanes are many, but the
                # first outcome column starts on screen: long test ids wrap, not push it off.
                left = page.evaluate(
                    "document.querySelector('td.test + td').getBoundingClientRect().left"
                )
                assert 0 < left < width - 60, (width, left)
            for href in page.locator("a[href]").evaluate_all("links => links.map(a => a.href)"):
                if href.startswith("https://"):
                    continue
                target = Path(unquote(urlparse(href).path))
                assert target.is_relative_to(root) and target.exists(), (name, href)
            page.screenshot(path=ARTIFACTS / f"{name}-{width}.png", full_page=True)
        _open(page, errors, pages["site-index"].as_uri())
        first = page.locator("section.news .what").first
        assert first.text_content() == "FlagTree regression", width
        assert first.is_visible()
        stale = page.locator("tr.stale strong").all_text_contents()
        assert stale == [STALE_LANE]
        page.close()
