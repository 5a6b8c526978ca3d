"""Peak memory of ingesting one large run: a 200 MB merged.xml into a fresh history.

Writes a run folder whose ``merged.xml`` is about ``--mb`` MB (testcases shaped like the
smoke suite's: lane, node, kernel, config, target and metric properties, one in 20 failing
with a compiler diagnostic), then runs the ingest in a child process and reads its peak
resident memory (``ru_maxrss``). A second child imports the same modules and stops: its
peak is the interpreter's own, reported beside it. The target is a peak of at most twice
the file's size.

Usage: python benchmarks/bench_ingest_memory.py [--mb 200] [--db URL] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

LANE = "cpu-triton-3.6.0"
DIAGNOSTIC = (
    "triton_attention_helpers.py:415:19: error: operand #0 does not dominate this use\n"
    "note: see current operation: %42 = tt.dot %a, %b, %acc\n" * 20
)

CHILD = """
import sys, time
from pathlib import Path
from ci.history import store
if sys.argv[1] == "ingest":
    started = time.monotonic()
    result = store.ingest_run(sys.argv[2], Path(sys.argv[3]))
    print(result.testcases, f"{time.monotonic() - started:.1f}")
"""


def write_run(folder: Path, megabytes: int) -> tuple[Path, int]:
    folder.mkdir(parents=True)
    record = {
        "run_id": folder.name,
        "started": "2026-11-30T02:00:00Z",
        "finished": "2026-11-30T03:00:00Z",
        "kind": "local",
        "lanes": {
            LANE: {
                "vendor": "cpu",
                "compiler": {"package": "triton", "version": "3.6.0", "triton": "3.6.0"},
                "pins": {"triton": "3.6.0"},
            }
        },
    }
    (folder / "run.json").write_text(json.dumps(record))
    target = megabytes * 1024 * 1024
    written = cases = 0
    with (folder / "merged.xml").open("w", encoding="utf-8") as out:
        head = (
            '<?xml version="1.0" encoding="utf-8"?>\n<testsuites name="flagci">\n'
            f'<testsuite name="{LANE}" hostname="localhost">\n'
        )
        out.write(head)
        written += len(head)
        while written < target:
            config = f"hd128-bm{16 << cases % 3}-t32-w4-s{2 + cases % 2}-bf16"
            props = {
                "lane": LANE,
                "node": "localhost",
                "kernel": "unified_attention",
                "config": config,
                "target": ("sm_80", "sm_90", "gfx942")[cases % 3],
                "compile_seconds": f"{0.5 + cases % 7 / 10:.3f}",
                "shared_bytes": str(16384 * (1 + cases % 8)),
                "artifacts": f"lanes/localhost__{LANE}/artifacts/case{cases}",
            }
            body = "".join(
                f"<property name={quoteattr(k)} value={quoteattr(v)}/>" for k, v in props.items()
            )
            result = ""
            if cases % 20 == 0:
                result = (
                    f'<failure message="PassManager::run failed">{escape(DIAGNOSTIC)}</failure>'
                )
            case = (
                f'<testcase classname="{LANE}.test_unified_attention"'
                f' name="test_compile[{config}-{cases}]" time="0.61">'
                f"<properties>{body}</properties>{result}</testcase>\n"
            )
            out.write(case)
            written += len(case)
            cases += 1
        out.write("</testsuite>\n</testsuites>\n")
    return folder / "merged.xml", cases


def peak_rss_mb(args: list[str]) -> tuple[float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *args], capture_output=True, text=True, check=True
    )
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is the largest of any child so far: run the larger one last.
    return max(peak, before) / 1024, done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--db", help="history to ingest into (default: a fresh SQLite file)")
    parser.add_argument("--keep", type=Path, help="write the run here and keep it")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="flagci-bench-"))
    try:
        started = time.monotonic()
        merged, cases = write_run(root / "20261130T020000Z-bench", args.mb)
        size_mb = merged.stat().st_size / 1024 / 1024
        seconds = time.monotonic() - started
        print(f"wrote {merged} ({size_mb:.1f} MB, {cases} testcases) in {seconds:.0f} s")
        baseline, _ = peak_rss_mb(["baseline"])
        db = args.db or str(root / "history.sqlite")
        peak, output = peak_rss_mb(["ingest", db, str(merged.parent)])
        stored, took = output.split()
        print(f"interpreter and modules alone: peak {baseline:.0f} MB")
        print(f"ingest of {stored} testcases in {took} s: peak {peak:.0f} MB")
        print(f"peak / file size: {peak / size_mb:.2f}x (target: at most 2x)")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
