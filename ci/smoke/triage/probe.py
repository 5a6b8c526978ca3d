"""Fallback probe: after an out-of-resources or pass failure, find the nearest config that compiles.

Runs inside a lane environment (standard library and triton only). Each attempt replays the
compile in a fresh process with a fresh cache through ``replay.py``, so a hung or crashing
attempt is cut without losing the probe. The search goes from the smallest change to the
largest: ``num_stages`` lowered one step at a time down to 1, then each block size halved
(one block at a time, then all together), first at the original ``num_stages``, then at 1.
The first config that compiles is the hint ("compiles with num_stages=1").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci.smoke.contract import records, taxonomy

REPLAY = Path(__file__).with_name("replay.py")
# Failure kinds a smaller config can cure; a backend that finds no target will not.
PROBED = (taxonomy.OUT_OF_RESOURCES, taxonomy.PASS_FAILURE)
MIN_BLOCK = 16


@dataclass(frozen=True)
class Attempt:
    changes: tuple[tuple[str, Any], ...]
    ok: bool
    kind: str
    error: str

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "changes": dict(self.changes),
            "ok": self.ok,
            "kind": self.kind,
            "error": self.error,
        }


@dataclass(frozen=True)
class ProbeResult:
    failure_kind: str
    attempts: tuple[Attempt, ...] = field(default_factory=tuple)

    @property
    def hint(self) -> str:
        good = next((a for a in self.attempts if a.ok), None)
        if good is not None:
            return f"compiles with {good.label}"
        if not self.attempts:
            return ""
        return f"no smaller config compiled ({len(self.attempts)} tried)"

    def to_json(self) -> dict[str, Any]:
        return {
            "failure_kind": self.failure_kind,
            "hint": self.hint,
            "attempts": [a.to_json() for a in self.attempts],
        }


def candidates(
    constexprs: Mapping[str, Any], options: Mapping[str, Any], blocks: Sequence[str]
) -> Iterator[tuple[tuple[str, Any], ...]]:
    """Config changes from nearest to farthest, each a tuple of (name, new value)."""
    stages = int(options.get("num_stages", 1))
    for lowered in range(stages - 1, 0, -1):
        yield (("num_stages", lowered),)
    sizes = {b: int(constexprs[b]) for b in blocks if b in constexprs}
    stage_settings = [()] if stages <= 1 else [(), (("num_stages", 1),)]
    halvings = 1
    while any(size >> halvings >= MIN_BLOCK for size in sizes.values()):
        for stage_setting in stage_settings:
            for name, size in sizes.items():
                if size >> halvings >= MIN_BLOCK:
                    yield ((name, size >> halvings), *stage_setting)
            if len(sizes) > 1:
                together = tuple(
                    (n, max(s >> halvings, min(s, MIN_BLOCK))) for n, s in sizes.items()
                )
                yield (*together, *stage_setting)
        halvings += 1


Compile = Callable[[tuple[tuple[str, Any], ...]], Attempt]


def replay_env() -> dict[str, str]:
    """This process's environment for a replay: it compiles, so an interpreter lane's
    TRITON_INTERPRET must not reach it."""
    return {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}


def replay_compiler(spec_path: Path, timeout_s: float, out: Path | None = None) -> Compile:
    """Compile one changed config of ``spec_path`` in a fresh process (``replay.py``)."""

    env = replay_env()

    def attempt(changes: tuple[tuple[str, Any], ...]) -> Attempt:
        folder = Path(tempfile.mkdtemp(prefix="probe-", dir=out))
        args = [sys.executable, str(REPLAY), str(spec_path), "--out", str(folder)]
        for name, value in changes:
            flag = "--option" if name.startswith("num_") else "--constexpr"
            args += [flag, f"{name}={json.dumps(value)}"]
        try:
            subprocess.run(
                args, capture_output=True, text=True, timeout=timeout_s, check=False, env=env
            )
        except subprocess.TimeoutExpired:
            return Attempt(
                changes, False, taxonomy.TIMEOUT, f"compile timed out after {timeout_s} s"
            )
        result_file = folder / "result.json"
        if not result_file.is_file():
            return Attempt(changes, False, taxonomy.CRASH, "the replay process left no result")
        result = json.loads(result_file.read_text(encoding="utf-8"))
        if result["ok"]:
            return Attempt(changes, True, "", "")
        kind = taxonomy.compile_failure_kind(result["error_type"], result["error"])
        return Attempt(changes, False, kind, result["error"].splitlines()[0][:500])

    return attempt


def probe(
    compile_attempt: Compile,
    kind: str,
    constexprs: Mapping[str, Any],
    options: Mapping[str, Any],
    blocks: Sequence[str],
    max_attempts: int = 12,
) -> ProbeResult:
    """Try candidate configs nearest first; stop at the first that compiles."""
    if kind not in PROBED:
        return ProbeResult(kind)
    attempts: list[Attempt] = []
    for changes in candidates(constexprs, options, blocks):
        if len(attempts) >= max_attempts:
            break
        attempt = compile_attempt(changes)
        attempts.append(attempt)
        if attempt.ok:
            break
    return ProbeResult(kind, tuple(attempts))


def record(failure_file: Path, result: ProbeResult) -> None:
    """Add the hint and the attempts to a test's failure.json (written whole, then renamed)."""
    records.update_failure(
        failure_file,
        {records.FAILURE_HINT: result.hint, records.FAILURE_PROBE: result.to_json()},
    )


def main(argv: list[str] | None = None) -> int:
    """``python probe.py BUNDLE --blocks BLOCK_T [--failure-json F]``: probe a bundle's spec."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--kind", required=True, help="failure kind of the original compile")
    parser.add_argument("--blocks", nargs="*", default=[], help="constexprs that are tile sizes")
    parser.add_argument("--failure-json", type=Path, default=None)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per attempt")
    args = parser.parse_args(argv)
    spec_path = args.bundle / "spec.json"
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    compile_attempt = replay_compiler(spec_path, args.timeout)
    result = probe(compile_attempt, args.kind, spec["constexprs"], spec["options"], args.blocks)
    for attempt in result.attempts:
        print(f"probe: {attempt.label}: {'compiles' if attempt.ok else attempt.kind}", flush=True)
    print(f"probe: {result.hint or 'not probed'}")
    if result.hint:
        readme = args.bundle / "README.md"
        text = readme.read_text(encoding="utf-8") if readme.is_file() else ""
        readme.write_text(text + f"\n## Fallback probe\n\n{result.hint}\n", encoding="utf-8")
    if args.failure_json is not None:
        record(args.failure_json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
