"""The static dashboard: pages, escaping, failure pages with reproducer links, trends."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest

from ci.core.errors import HistoryError
from ci.history.store import ingest_run
from ci.publish.dashboard import build, failure_page
from ci.results import report
from ci.results.reader import CaseResult
from tests.fixtures.dashboard_history import (
    ATTENTION,
    ATTENTION_TRIAGE,
    GDN,
    HOSTILE_TEST,
    REPRO,
    build_history,
)
from tests.fixtures.history_runs import Case, run_id, write_run

FT = "iluvatar-flagtree-0.6.0"
KL = "kunlun-flagtree-0.6.1"


@pytest.fixture
def site(tmp_path: Path) -> Path:
    db = build_history(tmp_path / "results")
    index = build(db, tmp_path / "results" / "dashboard")
    return index.parent


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.hrefs: list[str] = []
        self.data: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.hrefs += [v for k, v in attrs if k == "href" and v]

    def handle_data(self, data: str) -> None:
        self.data.append(data)


def _parse(page: Path) -> _Collect:
    parser = _Collect()
    parser.feed(_text(page))
    return parser


def test_every_page_is_written(site: Path) -> None:
    for name in ("index.html", "history.html", "trends.html", "style.css"):
        assert (site / name).is_file()
    assert (site / failure_page("iluvatar-flagtree-0.6.0", ATTENTION)).is_file()
    assert (site / failure_page("kunlun-flagtree-0.6.1", GDN)).is_file()


def test_test_names_and_messages_are_escaped_everywhere(site: Path) -> None:
    pages = [*site.glob("*.html"), *site.glob("failures/*.html")]
    for page in pages:
        parsed = _parse(page)
        assert "script" not in parsed.tags and "b" not in parsed.tags and "i" not in parsed.tags, (
            page
        )
    index = _parse(site / "index.html")
    assert HOSTILE_TEST in "".join(index.data)


def test_the_overview_shows_grids_known_issues_and_fix_checks(site: Path) -> None:
    index = _text(site / "index.html")
    assert "Each lane's latest result" in index
    assert "iluvatar: lanes by version" in index and "kunlun: lanes by version" in index
    assert "flagtree 0.6.0+iluvatar3.6" in index and "triton 3.2.0+corex.4.5.0" in index
    assert "FlagTree regression" in index
    assert "https://github.com/flagos-ai/FlagTree/issues/1126" in index
    assert re.search(r"0\.7\.0rc2\+xpu3\.6: <span class='fix-verified'>fix verified", index)
    assert re.search(r"0\.6\.1a1\+xpu3\.6: <span class='fix-not-tested'>", index)


def test_a_news_block_says_what_triage_found(site: Path) -> None:
    index = _text(site / "index.html")
    assert index.count(f"<p class='triage'>{ATTENTION_TRIAGE}</p>") == 1
    # The uni_sram failure's lane wrote no triage line: its block has none.
    assert index.count("<p class='triage'>") == 1


def test_the_history_strip_gives_the_first_failing_run_and_age(site: Path) -> None:
    history = _text(site / "history.html")
    row = next(
        line
        for line in history.splitlines()
        if "test_unified_attention" in line and "20261102T020000Z-nightly<br>" in line
    )
    assert "0.6.0+iluvatar3.6, 3 runs" in row and "2 d 0 h" in row
    assert row.count("<span class='o-failed'") == 3 and row.count("<span class='o-passed'") == 1


def test_a_failure_page_has_its_diagnostics_and_reproducer_links(site: Path) -> None:
    page = site / failure_page("iluvatar-flagtree-0.6.0", ATTENTION)
    text = _text(page)
    assert "operand #0 does not dominate this use" in text
    assert "iluvatar-mma-reduce-dominance" in text
    assert "passes on the baseline lane iluvatar-triton-3.2.0" in text
    assert f"<dt>triage</dt><dd>{ATTENTION_TRIAGE}</dd>" in text
    links = [h for h in _parse(page).hrefs if h.endswith(".mlir")]
    assert len(links) == 1
    target = (page.parent / unquote(links[0])).resolve()
    assert target.is_file() and target.name == REPRO
    assert "20261104T020000Z-nightly" in target.parts


def test_trends_draw_the_pass_rate_and_compile_time_per_target_as_static_svg(site: Path) -> None:
    trends = _text(site / "trends.html")
    assert "<script" not in trends.lower()
    charts = re.findall(
        r"<figure class='chart'><figcaption>(.*?)</figcaption><svg.*?</svg>", trends
    )
    # The pass rate; compile time of unified_attention and <k> on both Iluvatar lanes.
    assert charts[0].startswith("Tests passed of those that ran")
    assert "unified_attention · iluvatar-flagtree-0.6.0" in charts
    assert "&lt;k&gt; · iluvatar-triton-3.2.0" in charts
    assert len(charts) == 5
    # Four runs of four lanes, the stale one in two: every run one point, dated.
    pass_rate = re.search(r"<svg.*?</svg>", trends, re.S)
    assert pass_rate is not None
    assert pass_rate.group().count('aria-roledescription="point"') == 14
    assert "night: Nov 04; % passed: 0; series: kunlun-flagtree-0.6.1" in pass_rate.group()
    assert "night: Nov 04; % passed: 50; series: iluvatar-flagtree-0.6.0" in pass_rate.group()
    assert "night: Nov 01; % passed: 100; series: kunlun-flagtree-0.7.0rc2" in pass_rate.group()
    assert "No perf times recorded." in trends


def test_stale_failure_pages_are_removed(tmp_path: Path, site: Path) -> None:
    stale = site / "failures" / "0123456789abcdef0123.html"
    stale.write_text("old")
    build(tmp_path / "results" / "history.sqlite", site)
    assert not stale.exists()


def test_no_history_database_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="no history database"):
        build(tmp_path / "missing.sqlite", tmp_path / "out")


def test_news_groups_one_signature_and_a_larger_group_first_among_equals(tmp_path: Path) -> None:
    """One nightly per vendor: each lane's latest result is its own run's."""
    results = tmp_path / "results"
    shared = "out of resources: shared memory, Required: 262144, Hardware limit: 166912"
    iluvatar = [Case(FT, f"s::attn{i}", "failed", shared) for i in range(5)]
    iluvatar += [Case(FT, "s::ok"), Case(FT, "s::other", "failed", "RuntimeError: boom")]
    db = results / "history.sqlite"
    ingest_run(db, write_run(results, 0, iluvatar))
    ingest_run(db, write_run(results, 1, [Case(KL, "s::ok"), Case(KL, "s::attn0")]))
    index = _text(build(db, results / "dashboard"))
    assert run_id(0) in index and run_id(1) in index  # both lanes, each from its own run
    five = index.index("<span class='what w3'>failing</span> 5 tests · " + FT)
    one = index.index("<span class='what w3'>failing</span> 1 test · " + FT)
    assert five < one
    assert "<code>unclassified|out of resources:" in index[five:one]
    folded = index[index.index("<details>") : index.index("</details>")]
    assert "Each lane's latest result, per test: 7 tests<" in folded


def test_a_lane_in_a_vendor_family_and_an_axis_family_is_ordered_once() -> None:
    from ci.history.verdicts import History, LaneInfo
    from ci.lanes.matrix import load_matrix
    from ci.publish.dashboard import _lane_order

    names = ("cpu-vllm-0.33.0", "cpu-triton-3.6.0", "cpu-vllm-0.20.2", "cpu-triton-3.2.0")
    lanes = {n: LaneInfo(n, "cpu", "cpu", None, "triton", "3.6.0", "r1") for n in names}
    history = History(runs=(), lanes=lanes, timelines={}, verdicts={}, fix_checks=())
    # cpu-triton-3.6.0 is in `cpu` and in `cpu-vllm`: listed where its first family has it.
    assert _lane_order(history, load_matrix()) == [
        "cpu-triton-3.2.0",
        "cpu-triton-3.6.0",
        "cpu-vllm-0.20.2",
        "cpu-vllm-0.33.0",
    ]


def test_the_run_page_gives_each_failure_its_triage_summary_escaped() -> None:
    guessed = "unclassified failure: <zorp> [no rule decided; by resemblance: crash 0.21]"
    cases = [
        CaseResult(FT, "node1", ATTENTION, "failed", "boom", triage=guessed),
        CaseResult(FT, "node1", GDN, "failed", "bang"),
    ]
    page = report.of_run(cases, run_id(0)).page
    assert page.count('<p class="triage">') == 1
    assert "triage: unclassified failure: &lt;zorp&gt; [no rule decided; by resemblance:" in page
