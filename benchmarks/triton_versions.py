"""The smoke suite on every upstream Triton release of the CPU family: the per-version matrix.

Runs `flagci run` once per lane of the family (oldest first), each in its own hash-locked
venv, and prints one Markdown row per release: compiles per target (passed / all, and the
last stage reached), numerics, and every testcase that did not pass, by failure kind. The
The per-version table of docs/lanes.md is this script's output. Run from the repository root:

    .venv/bin/python benchmarks/triton_versions.py [--family cpu] [--lane L ...] [-- pytest args]
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ci.lanes.matrix import Lane, load_matrix
from ci.results import reader


def run_lane(lane: Lane, results: Path, extra: list[str]) -> tuple[list[reader.CaseResult], float]:
    started = time.perf_counter()
    command = [sys.executable, "-m", "ci.cli", "run", "--lane", lane.name, "--no-history"]
    command += ["--results", str(results), "--", *extra]
    print(f"+ {' '.join(command)}", file=sys.stderr, flush=True)
    subprocess.run(command, check=False, stdout=sys.stderr)
    seconds = time.perf_counter() - started
    merged = sorted(results.glob("*/merged.xml"))
    if not merged:
        return [], seconds
    return reader.read_cases(merged[-1], [lane.name]), seconds


def row(lane: Lane, cases: list[reader.CaseResult], seconds: float) -> str:
    if not cases:
        return f"| {lane.compiler.version} | the run left no JUnit | | | | {seconds:.0f} s |"
    compiles: dict[str, list[reader.CaseResult]] = collections.defaultdict(list)
    for case in cases:
        if case.name.startswith("test_compile["):
            compiles[case.properties.get("target", "?")].append(case)
    cells = []
    for target in (t.label for t in lane.targets):
        done = compiles.get(target, [])
        passed = [c for c in done if c.outcome == "passed"]
        stages = sorted({c.properties.get("last_stage", "?") for c in passed})
        cells.append(f"{target}: {len(passed)}/{len(done)} to {'/'.join(stages) or '-'}")
    numerics = [c for c in cases if c.name.startswith("test_numerics")]
    numerics_ok = sum(c.outcome == "passed" for c in numerics)
    failing = collections.Counter(
        c.properties.get("failure_kind", c.outcome)
        for c in cases
        if c.outcome in ("failed", "error")
    )
    others = ", ".join(f"{kind} x{n}" for kind, n in sorted(failing.items())) or "none"
    names = sorted(f"`{c.test}`" for c in cases if c.outcome in ("failed", "error"))[:3]
    detail = f" ({', '.join(names)})" if names else ""
    return (
        f"| {lane.compiler.version} | {'; '.join(cells)} | {numerics_ok}/{len(numerics)} |"
        f" {others}{detail} | {seconds:.0f} s |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", default="cpu")
    parser.add_argument("--lane", action="append", default=[], help="only these lanes")
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    extra = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    lanes = [
        lane
        for lane in load_matrix().family(args.family)
        if not args.lane or lane.name in args.lane
    ]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for lane in lanes:
            cases, seconds = run_lane(lane, Path(tmp) / lane.name, extra)
            rows.append(row(lane, cases, seconds))
    print("| triton | compiles (passed/all, last stage) | numerics | not passed | run |")
    print("| --- | --- | --- | --- | --- |")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
