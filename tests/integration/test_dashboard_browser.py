"""The dashboard in headless Debian Chromium: renders, no console errors, markup stays text.

A screenshot of each page is kept under results/test-artifacts/dashboard/.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ci.publish.dashboard import build, failure_page
from tests.fixtures.chromium import chromium_page, find_chromium
from tests.fixtures.dashboard_history import ATTENTION, HOSTILE_TEST, build_history

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
