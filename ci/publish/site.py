"""The published site: the dashboard and the pages of the recent runs, and nothing else.

GitHub Pages takes 1 GB; the results folder grows every night. The site holds the
dashboard, and for each of the last ``runs`` runs and each run the dashboard links (its
``runs.json``) the run's report (``index.html``), summary and ``run.json``; never the
history database, JUnit or artifact files, which stay in the runs' CI artifacts: the pages
of a run made in GitHub Actions link its files there (``RunRecord.artifacts_url``). A run
the dashboard links whose folder was not downloaded gets a page saying so.

The layout is a results folder's: ``dashboard/`` beside ``<run-id>/``, so the dashboard's
links to run pages (``../<run-id>/index.html``) hold in both, and the site's root redirects
to the dashboard. ``FLAGCI_SITE_URL`` is the site's root (for GitHub Pages,
``https://<owner>.github.io/<repository>``): ``dashboard_url`` is the one place a page's
address under it is made (summary.md, the webhook, the issues).
"""

from __future__ import annotations

import html
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from ci.core import atomic
from ci.core.errors import UsageError
from ci.publish.dashboard import LINKED_RUNS
from ci.results import reader

RECENT_RUNS = 30
RUN_PAGES = ("index.html", "summary.md", "run.json")
DASHBOARD = "dashboard"  # the dashboard's folder under the site's root
REDIRECT = (
    '<!DOCTYPE html><meta charset="utf-8">'
    f'<meta http-equiv="refresh" content="0; url={DASHBOARD}/index.html">'
    f'<a href="{DASHBOARD}/index.html">dashboard</a>\n'
)
NOT_KEPT = (
    '<!DOCTYPE html><meta charset="utf-8"><title>{run} · flagci</title>'
    "<p>The pages of run {run} are not in the published site: its CI artifact was not"
    " downloaded (older than the back-fill window, or expired)."
    ' <a href="../{dashboard}/index.html">Back to the dashboard</a>.</p>\n'
)


@dataclass(frozen=True)
class Site:
    root: Path
    runs: tuple[str, ...]  # the runs whose pages it holds, oldest first
    bytes: int
    not_kept: tuple[str, ...] = ()  # runs the dashboard links whose folders were not found


def dashboard_url(site_url: str, page: str) -> str:
    """The address of the dashboard's ``page`` (relative to its folder) in the site
    published at ``site_url``."""
    return f"{site_url.rstrip('/')}/{DASHBOARD}/{page}"


def lay_out(results: Path, dashboard: Path, out: Path, *, runs: int = RECENT_RUNS) -> Site:
    """Write the site into ``out`` (which must not exist yet); ``results`` is a results
    folder or a folder of downloaded CI artifacts (run folders up to four levels down)."""
    if out.exists():
        raise UsageError(f"{out}: already exists; the site is laid out into a new folder")
    if not (dashboard / "index.html").is_file():
        raise UsageError(f"{dashboard}: no dashboard (run `flagci dashboard` first)")
    shutil.copytree(dashboard, out / DASHBOARD, symlinks=False)
    newest: dict[str, tuple[object, Path]] = {}  # the same run downloaded twice is one run
    for folder in reader.run_folders(results, depth=4):
        record = reader.read_record(folder)[0]
        newest.setdefault(record.run_id, (record.started, folder))
    dated = sorted(newest.items(), key=lambda item: (item[1][0], item[1][1].name))
    linked = _linked_runs(dashboard)
    recent = {run_id for run_id, _ in dated[-runs:]} if runs > 0 else set()
    kept = [(run_id, folder) for run_id, (_, folder) in dated if run_id in recent | linked]
    for run_id, folder in kept:
        for name in RUN_PAGES:
            page = folder / name
            if page.is_file() and not page.is_symlink():
                target = out / run_id / name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(page, target)
    not_kept = tuple(sorted(linked - newest.keys()))
    for run_id in not_kept:
        text = NOT_KEPT.format(run=html.escape(run_id), dashboard=DASHBOARD)
        atomic.write_text(out / run_id / "index.html", text)
    atomic.write_text(out / "index.html", REDIRECT)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return Site(out, tuple(run_id for run_id, _ in kept), size, not_kept)


def _linked_runs(dashboard: Path) -> set[str]:
    """The runs whose pages the dashboard links (none, for a dashboard without the list)."""
    listed = dashboard / LINKED_RUNS
    if not listed.is_file():
        return set()
    names = json.loads(listed.read_text(encoding="utf-8"))
    # Each becomes a folder name of the site: only a run id's own shape.
    return {n for n in names if isinstance(n, str) and reader.RUN_ID_RE.fullmatch(n)}
