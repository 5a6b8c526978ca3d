"""Back-fill from downloaded CI artifacts (a night the history lacks is stored, the others
are not read again) and the bounded site."""

from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest

from ci.cli import main
from ci.core.errors import UsageError
from ci.history.store import Store
from ci.publish import dashboard, site
from ci.results import reader, report
from tests.fixtures.history_runs import Case, run_id, write_run

LANE = "cpu-triton-3.6.0"


def _downloads(root: Path, nights: int) -> Path:
    """What `gh run download` leaves: downloads/<ci-run>/results-<vendor>-<ci-run>/<run>/."""
    for index in range(nights):
        artifact = root / "downloads" / str(9000 + index) / f"results-cpu-{9000 + index}"
        folder = write_run(artifact, index, [Case(LANE, "s::t"), Case(LANE, "s::u")])
        reproducer = folder / "lanes" / "n1" / "artifacts" / "t"
        reproducer.mkdir(parents=True)
        (reproducer / "kernel.ttgir").write_bytes(b"x" * 200_000)
        (folder / "index.html").write_text("<html>run</html>")
        (folder / "summary.md").write_text("## run")
    return root / "downloads"


def test_backfill_stores_only_the_night_the_history_lacks(
    tmp_path: Path, history_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    downloads = _downloads(tmp_path, 4)
    store = Store(history_db)
    for index in (0, 1, 3):  # the dashboard run of night 2 was cancelled
        store.ingest(next(downloads.glob(f"*/*/{run_id(index)}")))
    # The stored nights' JUnit is never read again: break it to prove it.
    for index in (0, 1, 3):
        next(downloads.glob(f"*/*/{run_id(index)}/merged.xml")).write_text("<broken")

    assert main(["history", "backfill", str(downloads), "--db", history_db]) == 0
    out = capsys.readouterr().out
    assert f"{run_id(2)}: stored, 2 testcases" in out
    assert "1 run(s) stored; 3 already in the history" in out
    assert sorted(store.run_ids()) == [run_id(i) for i in range(4)]
    assert main(["history", "backfill", str(downloads), "--db", history_db]) == 0
    assert "0 run(s) stored; 4 already in the history" in capsys.readouterr().out


def test_the_site_is_the_dashboard_and_the_recent_runs_pages(tmp_path: Path) -> None:
    downloads = _downloads(tmp_path, 12)
    store = Store(tmp_path / "history.sqlite")
    store.ingest_many(sorted(downloads.glob("*/*/*-nightly")))
    board = tmp_path / "dashboard"
    dashboard.build(store, board)

    laid = site.lay_out(downloads, board, tmp_path / "site", runs=5)

    # The 5 recent runs, and the older ones the dashboard links (its last nights).
    linked = json.loads((board / dashboard.LINKED_RUNS).read_text())
    assert linked == [run_id(i) for i in range(12)]
    assert laid.runs == tuple(linked) and laid.not_kept == ()
    run_dirs = sorted(p.name for p in laid.root.iterdir() if p.is_dir() and p.name != "dashboard")
    assert run_dirs == list(laid.runs)
    files = {p.relative_to(laid.root).as_posix() for p in laid.root.rglob("*") if p.is_file()}
    assert not any(f.endswith((".ttgir", ".xml", ".sqlite")) for f in files)
    assert {f"{run_id(11)}/{name}" for name in site.RUN_PAGES} <= files
    dashboard_bytes = sum(p.stat().st_size for p in board.rglob("*") if p.is_file())
    run_bytes = sum(
        (downloads.glob(f"*/*/{r}").__next__() / name).stat().st_size
        for r in laid.runs
        for name in site.RUN_PAGES
    )
    index = len(site.REDIRECT)
    assert laid.bytes == dashboard_bytes + run_bytes + index  # nothing else, however many runs
    assert json.loads((laid.root / run_id(11) / "run.json").read_text())["run_id"] == run_id(11)


def test_the_site_goes_into_a_new_folder(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    with pytest.raises(UsageError, match="already exists"):
        site.lay_out(tmp_path, tmp_path, tmp_path / "site")


ACTIONS_RUN = {"server_url": "https://github.com", "repository": "flagos-ai/flagci"}


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.hrefs += [value for name, value in attrs if name in ("href", "src") and value]


def _links(page: Path) -> list[str]:
    parser = _Links()
    parser.feed(page.read_text())
    return parser.hrefs


def _nights_made_in_actions(root: Path, nights: int) -> Path:
    """Run folders as the nightly workflow leaves them: run.json names the Actions run,
    a failing test keeps a reproducer in its artifact folder."""
    for index in range(nights):
        ci_run = str(9000 + index)
        artifact = root / "downloads" / ci_run / f"results-cpu-{ci_run}"
        failing = Case(LANE, "s::t", "failed", "boom", {"artifacts": "lanes/n1/artifacts/t"})
        folder = write_run(artifact, index, [failing, Case(LANE, "s::u")])
        reproducer = folder / "lanes" / "n1" / "artifacts" / "t"
        reproducer.mkdir(parents=True)
        (reproducer / "repro.mlir").write_text("module {}\n")
        record = json.loads((folder / "run.json").read_text())
        record["ci_run"] = {**ACTIONS_RUN, "run_id": ci_run}
        (folder / "run.json").write_text(json.dumps(record))
        url = reader.read_record(folder)[0].artifacts_url
        cases = reader.read_cases(folder / "merged.xml", [LANE])
        (folder / "index.html").write_text(report.of_run(cases, "run", artifacts_url=url).page)
    return root / "downloads"


def test_published_pages_link_reproducers_to_the_runs_artifacts(tmp_path: Path) -> None:
    downloads = _nights_made_in_actions(tmp_path, 8)
    store = Store(tmp_path / "history.sqlite")
    store.ingest_many(sorted(downloads.glob("*/*/*-nightly")))
    board = tmp_path / "results" / "dashboard"
    dashboard.build(store, board)

    laid = site.lay_out(downloads, board, tmp_path / "site", runs=3)

    assert laid.runs == tuple(run_id(i) for i in range(8))  # the dashboard links all 8
    latest = "https://github.com/flagos-ai/flagci/actions/runs/9007#artifacts"
    (page,) = (laid.root / "dashboard" / "failures").glob("*.html")
    assert (
        _links(page).count(latest) == 3
    )  # the run's artifacts, the note naming the CI run, the file
    assert _links(page).count(latest.removesuffix("#artifacts")) == 1  # the CI run
    assert "lanes/n1/artifacts/t/repro.mlir" in page.read_text()
    run_page = laid.root / run_id(7) / "index.html"
    assert latest in _links(run_page)
    assert not any(p.suffix == ".mlir" for p in laid.root.rglob("*"))  # linked, not copied
    # Every link of the published site leads somewhere: into the site, or to GitHub.
    for html in laid.root.rglob("*.html"):
        for href in _links(html):
            if href.startswith(("https://", "#")):
                continue
            target = (html.parent / unquote(href.split("#")[0])).resolve()
            assert target.is_relative_to(laid.root.resolve()) and target.exists(), (html, href)


def test_the_site_bounds_what_it_keeps_and_says_which_linked_run_it_lacks(
    tmp_path: Path,
) -> None:
    downloads = _downloads(tmp_path, 12)
    store = Store(tmp_path / "history.sqlite")
    store.ingest_many(sorted(downloads.glob("*/*/*-nightly")))
    board = tmp_path / "dashboard"
    dashboard.build(store, board)
    (board / dashboard.LINKED_RUNS).write_text(json.dumps([run_id(10), "../x", run_id(99)]))
    shutil.rmtree(next(downloads.glob(f"*/*/{run_id(10)}")).parent)

    laid = site.lay_out(downloads, board, tmp_path / "site", runs=3)

    assert laid.runs == tuple(run_id(i) for i in (8, 9, 11))  # 10 was not downloaded
    assert laid.not_kept == (run_id(10), run_id(99))
    missing = (laid.root / run_id(99) / "index.html").read_text()
    assert "not in the published site" in missing
    assert "../dashboard/index.html" in _links(laid.root / run_id(99) / "index.html")
    assert not (laid.root.parent / "x").exists()


def test_a_page_address_under_the_site_url_is_a_file_of_the_site(tmp_path: Path) -> None:
    """FLAGCI_SITE_URL is the Pages root: the summary's and webhook's failure links,
    made by dashboard_url, name files the laid-out site holds."""
    downloads = _nights_made_in_actions(tmp_path, 2)
    store = Store(tmp_path / "history.sqlite")
    store.ingest_many(sorted(downloads.glob("*/*/*-nightly")))
    board = tmp_path / "results" / "dashboard"
    dashboard.build(store, board)
    laid = site.lay_out(downloads, board, tmp_path / "site")
    root = "https://flagos-ai.github.io/flagci/"
    url = site.dashboard_url(root, dashboard.failure_page(LANE, "s::t"))
    assert url.startswith(root + "dashboard/failures/")
    assert (laid.root / url.removeprefix(root)).is_file()
    assert (laid.root / "index.html").read_text() == site.REDIRECT


def test_a_run_made_elsewhere_links_its_files_beside_the_results(tmp_path: Path) -> None:
    results = tmp_path / "results"
    failing = Case(LANE, "s::t", "failed", "boom", {"artifacts": "lanes/n1/artifacts/t"})
    folder = write_run(results, 0, [failing])
    (folder / "lanes" / "n1" / "artifacts" / "t").mkdir(parents=True)
    (folder / "lanes" / "n1" / "artifacts" / "t" / "repro.mlir").write_text("module {}\n")
    store = Store(results / "history.sqlite")
    store.ingest(folder)
    dashboard.build(store, results / "dashboard")
    (page,) = (results / "dashboard" / "failures").glob("*.html")
    (href,) = [h for h in _links(page) if h.endswith("repro.mlir")]
    assert (page.parent / href).resolve() == (folder / "lanes/n1/artifacts/t/repro.mlir").resolve()
