"""The published site: the dashboard and the pages of the recent runs, and nothing else.

GitHub Pages takes 1 GB; the results folder grows every night. The site holds the
dashboard, and for each of the last ``runs`` runs its report (``index.html``), summary and
``run.json``; never the history database, JUnit or artifact files, which stay in the
runs' CI artifacts: the pages of a run made in GitHub Actions link its files there
(``RunRecord.artifacts_url``).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from ci.core import atomic
from ci.core.errors import UsageError
from ci.results import reader

RECENT_RUNS = 30
RUN_PAGES = ("index.html", "summary.md", "run.json")
REDIRECT = (
    '<!DOCTYPE html><meta charset="utf-8">'
    '<meta http-equiv="refresh" content="0; url=dashboard/index.html">'
    '<a href="dashboard/index.html">dashboard</a>\n'
)


@dataclass(frozen=True)
class Site:
    root: Path
    runs: tuple[str, ...]
    bytes: int


def lay_out(results: Path, dashboard: Path, out: Path, *, runs: int = RECENT_RUNS) -> Site:
    """Write the site into ``out`` (which must not exist yet); ``results`` is a results
    folder or a folder of downloaded CI artifacts (run folders up to four levels down)."""
    if out.exists():
        raise UsageError(f"{out}: already exists; the site is laid out into a new folder")
    if not (dashboard / "index.html").is_file():
        raise UsageError(f"{dashboard}: no dashboard (run `flagci dashboard` first)")
    shutil.copytree(dashboard, out / "dashboard", symlinks=False)
    newest: dict[str, tuple[object, Path]] = {}  # the same run downloaded twice is one run
    for folder in reader.run_folders(results, depth=4):
        record = reader.read_record(folder)[0]
        newest.setdefault(record.run_id, (record.started, folder))
    dated = sorted(newest.values(), key=lambda item: (item[0], item[1].name))
    kept = [folder for _, folder in dated[-runs:]] if runs > 0 else []
    for folder in kept:
        for name in RUN_PAGES:
            page = folder / name
            if page.is_file() and not page.is_symlink():
                target = out / folder.name / name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(page, target)
    atomic.write_text(out / "index.html", REDIRECT)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return Site(out, tuple(folder.name for folder in kept), size)
