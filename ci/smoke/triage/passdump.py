"""The pass behind a catch-all, named from Triton's IR dumps.

With ``MLIR_ENABLE_DUMP=1`` Triton's pass manager (and every vendor backend built on it)
prints ``// -----// IR Dump Before <Pass> (<argument>) ('<op>' operation) //----- //`` and
the module before each pass. When a compile fails and its diagnostics name no pass (a
backend that re-raises every pass failure as ``OutOfResources: uni_sram``), the last pass
dumped before the failure is the failing one, and the IR dumped before it is that pass's
input: the smallest reproducer there is (``triton-opt pass-input.mlir --<argument>``).
MLIR also prints ``IR Dump After <Pass> Failed`` where it is asked to; that names the pass
directly and wins.

Standard library only: part of the lane package.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ci.smoke.contract import records
from ci.smoke.contract.records import DUMP_LOG_NAME, PASS_INPUT_NAME
from ci.smoke.triage import probe

# What the replay's environment adds to make the pass manager dump.
DUMP_ENV = {"MLIR_ENABLE_DUMP": "1"}

_HEADER = re.compile(
    r"^// -----// IR Dump (?P<when>Before|After) (?P<pass>\S+)(?P<failed> Failed)?"
    r"(?: \((?P<argument>[^)]*)\))?(?: \('(?P<op>[^']+)' operation(?:: @(?P<symbol>.*?))?\))?"
    r" //----- //\s*$",
    re.MULTILINE,
)
# A dump's IR ends at two blank lines (what follows is the crash's own output).
_END_OF_IR = re.compile(r"\n\s*\n\s*\n")


@dataclass(frozen=True)
class Dump:
    when: str  # "Before" or "After"
    pass_name: str
    argument: str  # the pass's command-line name (tritongpu-hoist-tmem-alloc)
    failed: bool
    anchor: str
    ir: str


@dataclass(frozen=True)
class NamedPass:
    """The failing pass a replay with IR dumps found, and the IR it was given."""

    pass_name: str
    argument: str
    anchor: str
    input_ir: str
    dumps: int  # how many dumps the replay printed

    def to_json(self) -> dict[str, str | int]:
        return {
            "pass": self.pass_name,
            "argument": self.argument,
            "anchor": self.anchor,
            "source": "ir dump",
            "input": PASS_INPUT_NAME,
            "dumps": self.dumps,
        }


def dumps(text: str) -> list[Dump]:
    """Every IR dump in a compile's output, in order."""
    headers = list(_HEADER.finditer(text))
    found = []
    for index, header in enumerate(headers):
        end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
        body = text[header.end() : end].lstrip("\n")
        stop = _END_OF_IR.search(body)
        found.append(
            Dump(
                when=header["when"],
                pass_name=header["pass"],
                argument=header["argument"] or "",
                failed=bool(header["failed"]),
                anchor=header["op"] or "",
                ir=(body[: stop.start()] if stop else body).rstrip() + "\n",
            )
        )
    return found


def failing_pass(text: str) -> NamedPass | None:
    """The pass that failed: the one MLIR says failed, else the last one dumped before."""
    found = dumps(text)
    if not found:
        return None
    failed = next((d for d in reversed(found) if d.failed), None)
    before = [d for d in found if d.when == "Before"]
    if failed is not None:
        given = next((d for d in reversed(before) if d.pass_name == failed.pass_name), failed)
    elif before:
        failed = given = before[-1]
    else:
        return None
    return NamedPass(failed.pass_name, failed.argument, failed.anchor, given.ir, len(found))


def keep_input(named: NamedPass, folder: Path) -> Path:
    """Write the failing pass's input IR into ``folder`` (the bundle's minimal reproducer)."""
    path = folder / PASS_INPUT_NAME
    header = (
        f"// The input of {named.pass_name}, the pass that failed (named by a replay with IR"
        f" dumps).\n// Rerun it alone: triton-opt {PASS_INPUT_NAME} --{named.argument}\n"
    )
    path.write_text(header + named.input_ir, encoding="utf-8")
    return path


def name_by_replay(replay: Path, spec: Path, out: Path, timeout_s: float) -> NamedPass | None:
    """Recompile ``spec`` once with IR dumps (``replay`` is a bundle's replay.py); name the pass.

    None where the replay compiled, timed out, or printed no dump (a backend whose pass
    manager does not dump). The dumps are kept in ``out/ir-dumps.log``.
    """
    out.mkdir(parents=True, exist_ok=True)
    env = probe.replay_env() | DUMP_ENV
    log = out / DUMP_LOG_NAME
    with log.open("wb") as stderr:
        try:
            done = subprocess.run(
                [sys.executable, str(replay), str(spec), "--out", str(out)],
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                timeout=timeout_s,
                check=False,
                env=env,
            )
        except subprocess.TimeoutExpired:
            return None
    if done.returncode != 1:
        return None
    return failing_pass(log.read_text(encoding="utf-8", errors="replace"))


def record(failure_file: Path, named: NamedPass) -> None:
    """Add the replay's finding to the test's failure.json (read by the signatures)."""
    records.update_failure(failure_file, {records.FAILURE_REPLAY: named.to_json()})
