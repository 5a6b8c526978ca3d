"""The drafted upstream report: FlagTree's issue shape, filled from the bundle."""

from __future__ import annotations

import json
from pathlib import Path

from ci.smoke.triage import issuedraft, passdump
from ci.smoke.triage.signatures import signature_of

DUMPS = Path(__file__).resolve().parents[1] / "fixtures" / "ir_dumps"
KUNLUN = Path(__file__).resolve().parents[1] / "fixtures" / "failures" / "kunlun-uni-sram.txt"


def _bundle(folder: Path) -> Path:
    folder.mkdir()
    spec = {
        "source": "kernel_gdn.py",
        "function": "gdn_post_conv_kernel",
        "signature": {"x": "*bf16", "n": "i32"},
        "constexprs": {"BLOCK_T": 1024},
        "attrs": {},
        "options": {"num_warps": 4, "num_stages": 2},
        "target": {"backend": "xpu", "arch": 3, "warp_size": 64, "shared_limit": 0},
    }
    stack = {
        "triton": "3.6.0",
        "packages": {"triton": "3.6.0", "flagtree": "0.6.1+xpu3.6", "torch": "2.9.0"},
        "python": "3.10.12",
        "platform": "Linux-5.15-x86_64",
        "env": {"XPU_EVENT_KL3_ENABLE": "1"},
    }
    (folder / "spec.json").write_text(json.dumps(spec))
    (folder / "stack.json").write_text(json.dumps(stack))
    (folder / "failure.txt").write_text(KUNLUN.read_text())
    (folder / "kernel_gdn.py").write_text("# the kernel\n")
    return folder


def test_the_report_has_the_sections_and_facts_of_a_flagtree_issue(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path / "bundle")
    signature = signature_of("", KUNLUN.read_text(), None)
    lane = {"lane": "kunlun-flagtree-0.6.1", "node": "p800-1", "test": "gdn::t", "vendor": "kunlun"}
    bisection = {
        "family": "kunlun",
        "verdict": "first bad kunlun-flagtree-0.6.1; first good kunlun-flagtree-0.7.0rc2",
        "lanes": [
            {"lane": "kunlun-flagtree-0.6.1", "outcome": "failed"},
            {"lane": "kunlun-flagtree-0.7.0rc2", "outcome": "passed"},
        ],
    }
    text = issuedraft.draft(
        bundle,
        signature.to_json(),
        lane=lane,
        hint="compiles with BLOCK_T=512",
        bisection=bisection,
    )
    for heading in ("## Environment", "## Symptom", "## Kernel and launch config", "## Reproduce"):
        assert heading in text
    assert text.startswith("# [kunlun] gdn_post_conv_kernel: ")
    assert "| flagtree | 0.6.1+xpu3.6 |" in text
    assert "| env XPU_EVENT_KL3_ENABLE | 1 |" in text
    assert '| constexprs | {"BLOCK_T": 1024} |' in text
    assert signature.key.replace("|", "\\|") in text
    assert "python replay.py" in text
    assert "compiles with BLOCK_T=512" in text
    assert "| kunlun-flagtree-0.7.0rc2 | passed |" in text
    assert "- `spec.json`" in text and "- `kernel_gdn.py`" in text
    assert "triton-opt" not in text  # no replay named a pass


def test_a_named_pass_and_its_input_are_in_the_report(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path / "bundle")
    named = passdump.failing_pass((DUMPS / "hoist-tmem-alloc-triton-3.6.0.log").read_text())
    assert named is not None
    passdump.keep_input(named, bundle)
    signature = signature_of("", KUNLUN.read_text(), None)
    path = issuedraft.write(bundle, signature.to_json(), replay=named.to_json())
    text = path.read_text()
    assert path.name == "report.md"
    assert "TritonGPUHoistTMEMAlloc fails (reported as OutOfResources(uni_sram))" in text
    assert "triton-opt pass-input.mlir --tritongpu-hoist-tmem-alloc" in text
    assert "Not bisected yet" in text
