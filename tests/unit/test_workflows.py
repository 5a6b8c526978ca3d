"""The scheduled pipelines: valid against GitHub's workflow schema, on the vendor runners."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ci import process
from ci.errors import FlagCIError

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"


def test_workflows_validate_against_githubs_schema() -> None:
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert len(files) == 3
    checker = Path(sys.executable).parent / "check-jsonschema"
    result = process.run(
        [checker, "--builtin-schema", "vendor.github-workflows", *files],
        error=FlagCIError,
        what="check-jsonschema",
        capture=True,
    )
    assert "ok -- validation done" in result.stdout


def test_an_invalid_workflow_is_caught(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text((WORKFLOWS / "nightly-kunlun.yml").read_text().replace("runs-on:", "run-on:"))
    checker = Path(sys.executable).parent / "check-jsonschema"
    with pytest.raises(FlagCIError, match="check-jsonschema failed"):
        process.run(
            [checker, "--builtin-schema", "vendor.github-workflows", bad],
            error=FlagCIError,
            what="check-jsonschema",
            capture=True,
        )


@pytest.mark.parametrize(
    ("workflow", "label", "target"),
    [
        ("nightly-iluvatar.yml", "iluvatar3.6", "ci-iluvatar"),
        ("nightly-kunlun.yml", "xpu3.6", "ci-kunlun"),
    ],
)
def test_each_vendor_runs_nightly_on_its_runner(workflow: str, label: str, target: str) -> None:
    text = (WORKFLOWS / workflow).read_text()
    assert f"runs-on: [self-hosted, {label}]" in text
    assert f"run: make {target}" in text
    assert "schedule:" in text and "actions/upload-artifact@v4" in text


def test_the_dashboard_workflow_merges_and_publishes_pages() -> None:
    text = (WORKFLOWS / "dashboard.yml").read_text()
    assert "workflows: [nightly-iluvatar, nightly-kunlun]" in text
    assert "run: make dashboard" in text
    assert "actions/upload-pages-artifact@v3" in text and "actions/deploy-pages@v4" in text
    makefile = (ROOT / "Makefile").read_text()
    assert "\ndashboard: venv\n" in makefile
