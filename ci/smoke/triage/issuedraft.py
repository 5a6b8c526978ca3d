"""A drafted upstream report for a failure, in the shape FlagTree's issues take.

Written as ``report.md`` beside the reproducer bundle's files: a title line, the
environment table (from the bundle's ``stack.json`` and the lane), the symptom (signature,
class, the error), the kernel and its launch config (``spec.json``), how to reproduce (the
bundle's replay command, and the failing pass's input where a replay named the pass), the
fallback hint, which versions pass and fail (a bisection, where one ran) and the bundle's
files. The nightly's issue sync posts it; a person reads it first.

Standard library only: part of the lane package.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ci.smoke.contract.records import (
    FAILURE_TEXT_NAME,
    PASS_INPUT_NAME,
    REPORT_NAME,
    SPEC_NAME,
    STACK_NAME,
)

# The replay command, as the bundle's README gives it.
REPLAY_COMMAND = "python replay.py"


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    loaded = json.loads(path.read_text(encoding="utf-8"))
    return loaded if isinstance(loaded, dict) else {}


def _table(rows: Sequence[tuple[str, str]]) -> list[str]:
    lines = ["| item | value |", "| --- | --- |"]
    lines += [f"| {name} | {value.replace('|', chr(92) + '|')} |" for name, value in rows if value]
    return lines


def _code(text: str, language: str = "") -> list[str]:
    return [f"```{language}", *text.rstrip().splitlines(), "```"]


def draft(
    bundle: Path,
    signature: Mapping[str, Any],
    *,
    lane: Mapping[str, str] | None = None,
    hint: str = "",
    replay: Mapping[str, Any] | None = None,
    bisection: Mapping[str, Any] | None = None,
) -> str:
    """The Markdown body of the report for the failure whose bundle is ``bundle``.

    ``signature`` is a ``Signature.to_json()``; ``lane`` names the lane, node and test;
    ``replay`` is what the pass-naming replay found; ``bisection`` a ``Bisection.to_json()``.
    """
    spec = _read_json(bundle / SPEC_NAME)
    stack = _read_json(bundle / STACK_NAME)
    lane = lane or {}
    details: Mapping[str, str] = signature.get("details", {})
    target = spec.get("target", {})
    function = str(spec.get("function", "the kernel"))
    what = str(signature.get("summary", "")).split(";")[0]
    if replay and details.get("wrapper"):
        what = f"{replay.get('pass')} fails (reported as {details['wrapper']})"
    title = f"[{lane.get('vendor') or target.get('backend', '?')}] {function}: {what}"

    packages = stack.get("packages", {})
    env = stack.get("env", {})
    environment = [
        ("lane", lane.get("lane", "")),
        ("node", lane.get("node", "")),
        ("test", lane.get("test", "")),
        ("compiler", lane.get("compiler", "")),
        ("triton", str(stack.get("triton", ""))),
        *((name, str(v)) for name, v in sorted(packages.items()) if name != "triton"),
        ("python", str(stack.get("python", ""))),
        ("platform", str(stack.get("platform", ""))),
        ("target", " ".join(f"{k}={v}" for k, v in target.items() if v is not None)),
        *((f"env {name}", str(v)) for name, v in sorted(env.items())),
    ]
    lines = [f"# {title}", "", "## Environment", "", *_table(environment), ""]

    lines += ["## Symptom", "", str(signature.get("summary", "")), ""]
    facts = [
        ("class", str(signature.get("kind", ""))),
        ("signature", f"`{signature.get('key', '')}`"),
    ]
    facts += [(name, str(value)) for name, value in details.items()]
    lines += [*_table(facts), ""]
    failure = bundle / FAILURE_TEXT_NAME
    if failure.is_file():
        lines += ["The error:", "", *_code(failure.read_text(encoding="utf-8")), ""]

    lines += ["## Kernel and launch config", ""]
    launch = [
        ("kernel", f"{function} in {spec.get('source', '?')} (in the bundle)"),
        ("signature", json.dumps(spec.get("signature", {}))),
        ("constexprs", json.dumps(spec.get("constexprs", {}))),
        ("options", json.dumps(spec.get("options", {}))),
    ]
    lines += [*_table(launch), ""]

    lines += ["## Reproduce", "", "In the bundle, with the same stack installed:", ""]
    lines += [*_code(REPLAY_COMMAND, "sh"), ""]
    lines += ["Exit status 1 with the error above: reproduced; 0: it compiles.", ""]
    if replay and (bundle / PASS_INPUT_NAME).is_file():
        lines += [
            f"The diagnostics name no pass; a replay with `MLIR_ENABLE_DUMP=1` names"
            f" **{replay.get('pass')}** (the last pass dumped before the failure). Its input"
            f" IR is `{PASS_INPUT_NAME}`; the pass alone:",
            "",
            *_code(f"triton-opt {PASS_INPUT_NAME} --{replay.get('argument', '')}", "sh"),
            "",
        ]

    lines += ["## Fallback", "", hint or "No smaller config was tried.", ""]

    lines += ["## Versions", ""]
    if bisection:
        lines += [
            f"Bisected over the `{bisection.get('family')}` family in release order:"
            f" {bisection.get('verdict', '')}",
            "",
            *_table([(str(r["lane"]), str(r["outcome"])) for r in bisection.get("lanes", [])]),
            "",
        ]
    else:
        lines += ["Not bisected yet (`flagci bisect --family F --test ID`).", ""]

    files = sorted(
        str(p.relative_to(bundle))
        for p in bundle.rglob("*")
        if p.is_file() and p.name != REPORT_NAME
    )
    lines += ["## Bundle", "", "Attached, one folder:", "", *(f"- `{name}`" for name in files), ""]
    return "\n".join(lines)


def write(bundle: Path, signature: Mapping[str, Any], **context: Any) -> Path:
    """Draft the report for ``bundle`` and write it there as ``report.md``."""
    path = bundle / REPORT_NAME
    path.write_text(draft(bundle, signature, **context), encoding="utf-8")
    return path
