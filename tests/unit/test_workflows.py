"""The scheduled pipelines: GitHub's workflow schema, zizmor clean, the controller's own
runner, no history in the Actions cache, actions pinned by commit."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from ci.core import process
from ci.core.errors import FlagCIError

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
BIN = Path(sys.executable).parent
FILES = sorted(WORKFLOWS.glob("*.yml"))
# FlagTree's own accelerator runners: the controller never takes them.
ACCELERATOR_LABELS = ("iluvatar3.6", "xpu3.6")


def _schema(*files: Path) -> str:
    result = process.run(
        [BIN / "check-jsonschema", "--builtin-schema", "vendor.github-workflows", *files],
        error=FlagCIError,
        what="check-jsonschema",
        capture=True,
    )
    return result.stdout


def _zizmor(*paths: Path) -> tuple[int, str]:
    result = process.run(
        [BIN / "zizmor", "--offline", "--no-progress", *paths],
        error=FlagCIError,
        what="zizmor",
        capture=True,
        check=False,
    )
    return result.returncode, result.stdout


def test_workflows_validate_against_githubs_schema() -> None:
    assert len(FILES) == 3
    assert "ok -- validation done" in _schema(*FILES)


def test_an_invalid_workflow_is_caught(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text((WORKFLOWS / "nightly-kunlun.yml").read_text().replace("runs-on:", "run-on:"))
    with pytest.raises(FlagCIError, match="check-jsonschema failed"):
        _schema(bad)


def test_zizmor_finds_nothing() -> None:
    code, out = _zizmor(WORKFLOWS)
    assert (code, "No findings to report" in out) == (0, True), out


def test_zizmor_catches_what_it_guards(tmp_path: Path) -> None:
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    text = (WORKFLOWS / "nightly-kunlun.yml").read_text()
    text = re.sub(r"actions/checkout@[0-9a-f]{40} # v4.2.2", "actions/checkout@v4", text)
    text = text.replace("          persist-credentials: false\n", "          fetch-depth: 1\n")
    (folder / "nightly-kunlun.yml").write_text(text)
    code, out = _zizmor(folder)
    assert code != 0 and "unpinned-uses" in out and "artipacked" in out, out


@pytest.mark.parametrize("workflow", FILES, ids=lambda p: p.name)
def test_actions_are_pinned_by_commit_and_credentials_not_kept(workflow: Path) -> None:
    text = workflow.read_text()
    uses = re.findall(r"uses: (\S+)", text)
    assert uses and all(re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", u) for u in uses), uses
    assert text.count("persist-credentials: false") == text.count("actions/checkout@")
    assert "actions/cache" not in text
    assert "permissions: {}" in text  # nothing by default; each job asks for its own


@pytest.mark.parametrize(
    ("workflow", "target"),
    [("nightly-iluvatar.yml", "ci-iluvatar"), ("nightly-kunlun.yml", "ci-kunlun")],
)
def test_each_nightly_runs_on_the_controller_against_the_configured_inventory(
    workflow: str, target: str
) -> None:
    text = (WORKFLOWS / workflow).read_text()
    assert "runs-on: [self-hosted, flagci-controller]" in text
    assert not any(label in text for label in ACCELERATOR_LABELS)
    assert f'run: make {target} INVENTORY="$FLAGCI_INVENTORY"' in text
    assert "FLAGCI_INVENTORY: ${{ vars.FLAGCI_INVENTORY }}" in text
    assert "schedule:" in text and "actions/upload-artifact@" in text


def test_the_dashboard_backfills_and_publishes_a_bounded_site() -> None:
    text = (WORKFLOWS / "dashboard.yml").read_text()
    assert "workflow_run" not in text  # a schedule, and the back-fill, lose no night
    assert "flagci history backfill downloads" in text
    assert "flagci site --results downloads" in text and '--runs "$SITE_RUNS"' in text
    assert "actions/upload-pages-artifact@" in text and "actions/deploy-pages@" in text
    assert "\ndashboard: venv\n" in (ROOT / "Makefile").read_text()
