"""Naming the failing pass from Triton's IR dumps (a real capture, see tests/fixtures/ir_dumps)."""

from __future__ import annotations

import json
from pathlib import Path

from ci.smoke.contract import records
from ci.smoke.triage import passdump

DUMPS = Path(__file__).resolve().parents[1] / "fixtures" / "ir_dumps"
HOIST = (DUMPS / "hoist-tmem-alloc-triton-3.6.0.log").read_text(encoding="utf-8")


def test_every_dump_header_is_read() -> None:
    found = passdump.dumps(HOIST)
    assert len(found) == HOIST.count("// -----// IR Dump") == 28
    assert found[0].pass_name == "Inliner"
    # Symbols with brackets and commas (Triton's mangled helper names) are read too.
    assert any(d.anchor == "tt.func" for d in found)


def test_the_last_pass_dumped_before_the_failure_is_named() -> None:
    named = passdump.failing_pass(HOIST)
    assert named is not None
    assert (named.pass_name, named.argument) == (
        "TritonGPUHoistTMEMAlloc",
        "tritongpu-hoist-tmem-alloc",
    )
    assert named.anchor == "builtin.module"
    # Its input IR is the module dumped before it, without the crash output that follows.
    assert named.input_ir.startswith("#blocked = #ttg.blocked")
    assert "tt.func public @masked_accumulator_dot" in named.input_ir
    assert "Assertion" not in named.input_ir and "python:" not in named.input_ir


def test_a_failed_after_dump_names_the_pass_directly() -> None:
    text = (
        "// -----// IR Dump Before A (a) ('builtin.module' operation) //----- //\nmodule {}\n\n\n"
        "// -----// IR Dump Before B (b) ('builtin.module' operation) //----- //\nmodule {b}\n\n\n"
        "// -----// IR Dump After A Failed (a) ('builtin.module' operation) //----- //\n"
        "module {x}\n"
    )
    named = passdump.failing_pass(text)
    assert named is not None and named.pass_name == "A"
    assert named.input_ir == "module {}\n"


def test_no_dump_names_nothing() -> None:
    assert passdump.failing_pass("RuntimeError: PassManager::run failed\n") is None


def test_the_input_and_the_record_are_kept(tmp_path: Path) -> None:
    named = passdump.failing_pass(HOIST)
    assert named is not None
    kept = passdump.keep_input(named, tmp_path)
    assert kept.name == records.PASS_INPUT_NAME
    assert "triton-opt pass-input.mlir --tritongpu-hoist-tmem-alloc" in kept.read_text()
    failure = tmp_path / "failure.json"
    failure.write_text(json.dumps({"hint": "compiles with BK=32"}))
    passdump.record(failure, named)
    data = json.loads(failure.read_text())
    assert data["hint"] == "compiles with BK=32"
    assert data["replay"]["pass"] == "TritonGPUHoistTMEMAlloc"
