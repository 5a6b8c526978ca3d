"""The overview answers in a minute: a row per lane with a stale mark, the news ranked by
what matters (not by size), the last nights x lanes, test names that wrap at separators."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from ci.cli import main
from ci.history.ledger import load_ledger
from ci.history.store import Store
from ci.history.verdicts import History, Kind
from ci.publish.dashboard import build, wrap_name
from ci.publish.overview import NEWS_ORDER, news_of, overview
from tests.fixtures.dashboard_history import (
    ATTENTION,
    NEW_FAILURES,
    NOW,
    STALE_LANE,
    build_history,
)
from tests.fixtures.history_runs import run_id

FT = "iluvatar-flagtree-0.6.0"
KL = "kunlun-flagtree-0.6.1"
LANES = ("iluvatar-triton-3.2.0", FT, KL, STALE_LANE)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_history(tmp_path_factory.mktemp("overview") / "results")


@pytest.fixture(scope="module")
def history(db: Path) -> History:
    return Store(db).evaluate(load_ledger())


def test_the_regression_comes_first_then_the_larger_new_failure_group(history: History) -> None:
    news = overview(history, LANES, {}, now=NOW).news
    assert [g.what for g in news] == ["FlagTree regression", "new failure", "known issue"]
    assert [v.test for v in news[0].verdicts] == [ATTENTION]
    assert [v.test for v in news[1].verdicts] == list(NEW_FAILURES)  # one signature, 4 tests
    assert {v.lane for v in news[1].verdicts} == {KL}


def test_each_failing_verdict_says_one_thing_ranked_by_news_order(history: History) -> None:
    regression = history.verdicts[(FT, ATTENTION)]
    known = replace(regression, regression_of=None)
    assert news_of(regression, lambda v: False) == "FlagTree regression"
    assert news_of(known, lambda v: False) == "known issue"
    assert news_of(known, lambda v: True) == "claimed fix not verified"
    for kind, said in [(Kind.FAILING, "failing"), (Kind.FLAKY, "flaky")]:
        assert news_of(replace(known, kind=kind), lambda v: False) == said
    assert news_of(replace(known, kind=Kind.NEW_FAILURE), lambda v: True) == "new failure"
    assert news_of(replace(known, outcome="passed", kind=Kind.PASSED), lambda v: True) is None
    ranks = [NEWS_ORDER.index(s) for s in ("new failure", "claimed fix not verified", "flaky")]
    assert ranks == sorted(ranks)


def test_a_row_per_lane_with_its_latest_run_counts_time_and_a_stale_mark(
    history: History, db: Path
) -> None:
    seconds = Store(db).lane_seconds([run_id(3)])
    rows = {r.lane: r for r in overview(history, LANES, seconds, now=NOW).lane_rows}
    assert [lane for lane, row in rows.items() if row.stale] == [STALE_LANE]
    assert rows[STALE_LANE].run.run_id == run_id(1)
    assert rows[STALE_LANE].age == timedelta(days=2, hours=21)
    kunlun = rows[KL]
    assert (kunlun.passed, kunlun.failed, kunlun.known, kunlun.skipped) == (0, 4, 1, 0)
    assert kunlun.seconds == pytest.approx(2.5)  # five tests of 0.5 s
    assert rows[STALE_LANE].seconds is None  # its run is not among those asked for
    later = overview(history, LANES, {}, now=NOW, stale_after=timedelta(days=3)).lane_rows
    assert not any(row.stale for row in later)


def test_the_last_nights_newest_first_with_a_cell_per_lane_that_ran(history: History) -> None:
    nights = overview(history, LANES, {}, now=NOW, nights=3).nights
    assert [n.run.run_id for n in nights] == [run_id(3), run_id(2), run_id(1)]
    last = dict(zip(LANES, nights[0].cells, strict=True))
    assert last[STALE_LANE] is None
    assert last[KL] is not None and (last[KL].failed, last[KL].css) == (5, "o-failed")
    first = dict(zip(LANES, nights[-1].cells, strict=True))
    assert first[STALE_LANE] is not None and first[STALE_LANE].css == "o-passed"


def test_the_page_shows_lanes_news_and_nights_with_links_to_each_run(
    db: Path, tmp_path: Path
) -> None:
    text = build(db, tmp_path / "dashboard", now=NOW).read_text()
    assert text.index("id='lanes'") < text.index("id='news'") < text.index("id='nights'")
    whats = re.findall(r"<span class='what w\d'>([^<]+)</span>", text)
    assert whats == ["FlagTree regression", "new failure", "known issue"]
    assert text.count("<span class='badge stale'>stale</span>") == 2  # the row and the note
    for index in range(4):
        assert f"href='../{run_id(index)}/index.html'" in text


def test_the_stale_threshold_is_a_setting_of_the_command(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "board"
    # The clock is later than the fixture's nights: a long enough threshold marks nothing.
    assert main(["dashboard", "--db", str(db), "--out", str(out), "--stale-hours", "1e6"]) == 0
    assert "badge stale" not in (out / "index.html").read_text()
    assert main(["dashboard", "--db", str(db), "--out", str(out), "--stale-hours", "1"]) == 0
    assert (out / "index.html").read_text().count("<span class='badge stale'>stale</span>") == 5


def test_test_names_wrap_at_separators_and_stay_escaped() -> None:
    assert str(wrap_name("a/b.py::t[x-1,<b>]")) == (
        "a/<wbr>b.<wbr>py::<wbr>t[<wbr>x-<wbr>1,<wbr>&lt;b&gt;]"
    )
