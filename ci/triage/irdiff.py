"""FlagTree against its baseline: the last stage both compiles reached, diffed.

For a FlagTree-regression failure (the test fails on a FlagTree lane and passes on the
lane's baseline in the same run) the failing compile's bundle is replayed in the baseline
lane's environment, where it compiles, so every stage's IR exists there; the failing side
kept the IR of the stages it reached (``bundle/ir``). The last stage present on both sides
is diffed, written beside the bundle as ``ir-diff.diff`` (unified) and ``ir-diff.html``
(side by side; opens from disk, no script), and linked from the failure page.

Source locations (``loc(...)``, ``#locN = ...``) are cut before diffing: they name paths
and lines of two machines and would drown the IR's own differences.
"""

from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass
from pathlib import Path

from ci.core import process
from ci.core.errors import EnvironmentSetupError
from ci.smoke.contract.records import REPLAY_NAME, SPEC_NAME

DIFF_NAME = "ir-diff.diff"
HTML_NAME = "ir-diff.html"
# Triton's stages in the order a compile produces them (IR files by suffix).
STAGES = ("ttir", "ttgir", "llir", "ptx", "amdgcn")

_LOC_DEFINITION = re.compile(r"^#loc\d*\s*=.*$\n?", re.MULTILINE)
_LOC_USE = re.compile(r"\s*loc\((?:[^()]|\([^()]*\))*\)")


@dataclass(frozen=True)
class IrDiff:
    stage: str
    failing: Path
    passing: Path
    changed_lines: int
    diff: Path
    page: Path


def stage_files(folder: Path) -> dict[str, Path]:
    """The IR file of each stage under ``folder`` (the first, in sorted order, per stage)."""
    found: dict[str, Path] = {}
    for path in sorted(folder.rglob("*")):
        stage = path.suffix.lstrip(".")
        if stage in STAGES and path.is_file() and stage not in found:
            found[stage] = path
    return found


def without_locations(ir: str) -> str:
    return _LOC_USE.sub("", _LOC_DEFINITION.sub("", ir))


def last_common_stage(failing: dict[str, Path], passing: dict[str, Path]) -> str | None:
    common = [stage for stage in STAGES if stage in failing and stage in passing]
    return common[-1] if common else None


def write(
    failing_dir: Path, passing_dir: Path, out: Path, failing_label: str, passing_label: str
) -> IrDiff | None:
    """Diff the last stage both folders hold; write the diff and its page into ``out``."""
    failing, passing = stage_files(failing_dir), stage_files(passing_dir)
    stage = last_common_stage(failing, passing)
    if stage is None:
        return None
    old = without_locations(passing[stage].read_text(encoding="utf-8")).splitlines()
    new = without_locations(failing[stage].read_text(encoding="utf-8")).splitlines()
    old_name, new_name = f"{passing_label}/{stage}", f"{failing_label}/{stage}"
    unified = list(difflib.unified_diff(old, new, old_name, new_name, lineterm=""))
    changed = sum(1 for line in unified if line[:1] in "+-" and not line.startswith(("+++", "---")))
    out.mkdir(parents=True, exist_ok=True)
    diff_path = out / DIFF_NAME
    summary = (
        f"# {stage}: the last stage both compiles reached; {passing_label} (passes) against"
        f" {failing_label} (fails); {changed} lines differ, source locations cut\n"
    )
    diff_path.write_text(summary + "\n".join(unified) + "\n", encoding="utf-8")
    table = difflib.HtmlDiff(wrapcolumn=100).make_table(
        old, new, html.escape(old_name), html.escape(new_name), context=True, numlines=3
    )
    page_path = out / HTML_NAME
    page_path.write_text(
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>IR diff: {html.escape(stage)}</title>"
        "<style>table.diff{font-family:monospace;font-size:12px;border-collapse:collapse}"
        ".diff_add{background:#dfd}.diff_chg{background:#ffa}.diff_sub{background:#fdd}"
        "</style></head><body>"
        f"<p>{html.escape(summary.lstrip('# '))}</p>{table}</body></html>\n",
        encoding="utf-8",
    )
    return IrDiff(stage, failing[stage], passing[stage], changed, diff_path, page_path)


def diff_with_baseline(
    bundle: Path, baseline_python: Path, work: Path, failing_label: str, baseline_label: str
) -> IrDiff | None:
    """Replay ``bundle`` with the baseline lane's Python; diff against the bundle's own IR.

    None where the two share no stage. The baseline must compile it: a failure there is
    not a FlagTree regression, and raises.
    """
    replay_out = work / "baseline-replay"
    process.run(
        [baseline_python, "-I", bundle / REPLAY_NAME, bundle / SPEC_NAME, "--out", replay_out],
        error=EnvironmentSetupError,
        what=f"replay of {bundle} on the baseline lane {baseline_label}",
        cwd=bundle,
        capture=True,
    )
    return write(bundle / "ir", replay_out, bundle, failing_label, baseline_label)
