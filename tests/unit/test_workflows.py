"""The scheduled pipelines: GitHub's workflow schema, zizmor clean, the controller's own
runner, no history in the Actions cache, actions pinned by commit."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ci.core import process
from ci.core.errors import FlagCIError
from ci.lanes.matrix import load_matrix

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
    assert [f.name for f in FILES] == ["dashboard.yml", "nightly.yml"]
    assert "ok -- validation done" in _schema(*FILES)


def test_an_invalid_workflow_is_caught(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text((WORKFLOWS / "nightly.yml").read_text().replace("runs-on:", "run-on:"))
    with pytest.raises(FlagCIError, match="check-jsonschema failed"):
        _schema(bad)


def test_zizmor_finds_nothing() -> None:
    code, out = _zizmor(WORKFLOWS)
    assert (code, "No findings to report" in out) == (0, True), out


def test_zizmor_catches_what_it_guards(tmp_path: Path) -> None:
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    text = (WORKFLOWS / "nightly.yml").read_text()
    text = re.sub(r"actions/checkout@[0-9a-f]{40} # v4.2.2", "actions/checkout@v4", text)
    text = text.replace("          persist-credentials: false\n", "          fetch-depth: 1\n")
    (folder / "nightly.yml").write_text(text)
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


def test_the_nightly_runs_each_family_on_the_controller_against_the_configured_inventory() -> None:
    text = (WORKFLOWS / "nightly.yml").read_text()
    job = yaml.safe_load(text)["jobs"]["smoke"]
    families = job["strategy"]["matrix"]["family"]
    assert families == ["iluvatar", "kunlun"]
    assert set(families) <= set(load_matrix().families)
    assert job["runs-on"] == ["self-hosted", "flagci-controller"]
    assert not any(label in text for label in ACCELERATOR_LABELS)
    assert job["env"]["FAMILY"] == "${{ matrix.family }}"
    assert 'run: make "ci-$FAMILY" INVENTORY="$FLAGCI_INVENTORY"' in text
    assert "FLAGCI_INVENTORY: ${{ vars.FLAGCI_INVENTORY }}" in text
    assert "schedule:" in text and "actions/upload-artifact@" in text
    # Each family's run folders in an artifact of its own, which the dashboard downloads.
    assert "name: results-${{ matrix.family }}-${{ github.run_id }}" in text
    assert "--workflow nightly.yml" in (ROOT / ".github/scripts/publish-dashboard.sh").read_text()


@pytest.mark.parametrize(
    ("family", "group"), [("iluvatar", "iluvatar_bi_v150"), ("kunlun", "kunlun_p800")]
)
def test_each_family_target_runs_the_familys_lanes_from_the_matrix(
    family: str, group: str, tmp_path: Path
) -> None:
    """The lanes come from the matrix: the target's command, run with a stand-in flagci that
    answers `lanes list` with the real command's output, passes them to `flagci run`."""
    matrix = load_matrix()
    names = ",".join(matrix.families[family])  # type: ignore[index]
    (tmp_path / "flagci").write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = lanes ]; then exec {sys.executable} -m ci.cli "$@"; fi\n'
        'echo "flagci $*"\n'
    )
    (tmp_path / "flagci").chmod(0o755)
    done = subprocess.run(
        ["make", "--no-print-directory", "-o", f"{tmp_path}/flagci", f"ci-{family}",
         f"BIN={tmp_path}", "INVENTORY=inv"],
        cwd=ROOT, capture_output=True, text=True, check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"flagci run --inventory inv --limit {group} --lanes {names}" in done.stdout
    makefile = (ROOT / "Makefile").read_text()
    assert not any(name in makefile for name in matrix.lanes)  # written once, in lanes.toml


def test_the_dashboard_backfills_and_publishes_a_bounded_site() -> None:
    text = (WORKFLOWS / "dashboard.yml").read_text()
    script = (ROOT / ".github" / "scripts" / "publish-dashboard.sh").read_text()
    assert "workflow_run" not in text  # a schedule, and the back-fill, lose no night
    assert "run: .github/scripts/publish-dashboard.sh" in text
    assert 'flagci" history backfill downloads' in script
    assert 'flagci" site --results downloads' in script and '--runs "$SITE_RUNS"' in script
    assert "actions/upload-pages-artifact@" in text and "actions/deploy-pages@" in text
    assert "\ndashboard: venv\n" in (ROOT / "Makefile").read_text()


def test_the_dashboard_runs_on_debian_without_setup_python_in_bash_with_pipefail() -> None:
    job = yaml.safe_load((WORKFLOWS / "dashboard.yml").read_text())["jobs"]["history"]
    assert job["runs-on"] == ["self-hosted", "flagci-controller"]
    assert job["defaults"]["run"]["shell"] == "bash"  # Actions runs it with -e -o pipefail
    uses = [step.get("uses", "") for step in job["steps"]]
    assert not any("setup-python" in u for u in uses)
    assert {"name": "The project's venv", "run": "make venv PYTHON=python3"} in job["steps"]
