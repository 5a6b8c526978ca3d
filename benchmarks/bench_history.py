"""Time ingest + verdicts + dashboard for 1,000 JUnit files against junitparser alone.

Generates 1,000 run folders (100 testcases each, two lanes, a few failures, compile time
and shared memory on every compile test) in a temporary folder, then times:

- junitparser alone: ``JUnitXml.fromfile`` on every file, then reading every testcase's
  name, classname, result and properties (what any reader of the file has to do);
- junitparser load only: ``JUnitXml.fromfile`` on every file (wrappers are lazy);
- flagci: ``ci.history.store.ingest_runs`` over every run folder into a fresh SQLite file, then
  ``ci.history.store.Store.evaluate`` and ``ci.publish.dashboard.build``.

Usage: python benchmarks/bench_history.py [--runs 1000] [--cases 100] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from junitparser import JUnitXml, Properties

from ci.history import store
from ci.history.ledger import load_ledger
from ci.publish import dashboard

LANES = {
    "cpu-triton-3.6.0": ("cpu", "triton", "3.6.0", None),
    "nvidia-triton-3.6.0": ("nvidia", "triton", "3.6.0", None),
}
TARGETS = ("sm_80", "sm_90", "sm_100", "gfx942", "gfx950")
KERNELS = ("unified_attention", "gdn_post_conv")


def _case(rng: random.Random, lane: str, index: int, run: int) -> str:
    kernel = KERNELS[index % 2]
    target = TARGETS[index % len(TARGETS)]
    config = f"hd{128 if index % 4 < 2 else 256}-bm16-t32-w4-s{2 + index % 3}-bf16"
    test = f"test_compile[{target}-{config}-{index}]"
    props = {
        "lane": lane,
        "node": "localhost",
        "vendor": LANES[lane][0],
        "kernel": kernel,
        "config": config,
        "target": target,
        "compile_seconds": f"{0.8 + rng.random():.3f}",
        "shared_bytes": str(16384 * (1 + index % 8)),
        "artifacts": f"artifacts/{lane}/{index}",
    }
    result = ""
    if (index * 7 + run) % 23 == 0:
        message = "out of resources: shared memory, Required: 262144, Hardware limit: 166912"
        props["failure_kind"] = "out_of_resources"
        result = f"<failure message={quoteattr(message)}>{escape(message * 4)}</failure>"
    properties = "".join(
        f"<property name={quoteattr(k)} value={quoteattr(v)}/>" for k, v in props.items()
    )
    return (
        f"<testcase classname='ci.smoke.test_{kernel}' name={quoteattr(test)} time='1.0'>"
        f"<properties>{properties}</properties>{result}</testcase>"
    )


def generate(root: Path, runs: int, cases: int) -> list[Path]:
    rng = random.Random(7)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    folders = []
    lanes = list(LANES)
    for run in range(runs):
        started = start + timedelta(hours=6 * run)
        run_id = started.strftime("%Y%m%dT%H%M%SZ") + "-bench"
        folder = root / run_id
        folder.mkdir(parents=True)
        body = "".join(_case(rng, lanes[i % len(lanes)], i, run) for i in range(cases))
        (folder / "merged.xml").write_text(
            f"<?xml version='1.0' encoding='utf-8'?><testsuites><testsuite name='smoke'>"
            f"{body}</testsuite></testsuites>",
            encoding="utf-8",
        )
        record = {
            "run_id": run_id,
            "started": started.isoformat(),
            "finished": (started + timedelta(minutes=20)).isoformat(),
            "kind": "local",
            "lanes": {
                name: {
                    "vendor": vendor,
                    "family": vendor,
                    "baseline": baseline,
                    "compiler": {"package": package, "version": version, "triton": version},
                    "pins": {package: version},
                }
                for name, (vendor, package, version, baseline) in LANES.items()
            },
            "nodes": ["localhost"],
            "status": "failed",
        }
        (folder / "run.json").write_text(json.dumps(record), encoding="utf-8")
        folders.append(folder)
    return folders


def junitparser_read_all(folders: list[Path]) -> int:
    count = 0
    for folder in folders:
        for suite in JUnitXml.fromfile(str(folder / "merged.xml")):
            for case in suite:
                _ = (case.name, case.classname, case.time, case.result)
                for properties in case.iterchildren(Properties):
                    _ = {p.name: p.value for p in properties}
                count += 1
    return count


def junitparser_load(folders: list[Path]) -> None:
    for folder in folders:
        JUnitXml.fromfile(str(folder / "merged.xml"))


def flagci(folders: list[Path], work: Path) -> tuple[float, float, float]:
    """Ingest, then build the dashboard (which computes the verdicts itself).

    The verdicts are also timed alone, for information: they are part of the build.
    """
    db = work / "history.sqlite"
    t0 = time.perf_counter()
    store.ingest_runs(db, folders)
    t1 = time.perf_counter()
    dashboard.build(db, work / "dashboard")
    t2 = time.perf_counter()
    store.Store(db).evaluate(load_ledger())
    t3 = time.perf_counter()
    return t1 - t0, t2 - t1, t3 - t2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--keep", type=Path, default=None, help="keep the data in this folder")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="flagci-bench-")) if args.keep is None else args.keep
    try:
        folders = generate(work / "runs", args.runs, args.cases)
        t0 = time.perf_counter()
        count = junitparser_read_all(folders)
        read_all = time.perf_counter() - t0
        t0 = time.perf_counter()
        junitparser_load(folders)
        load_only = time.perf_counter() - t0
        ingest, board, verdicts = flagci(folders, work)
        total = ingest + board
        print(f"{len(folders)} JUnit files, {count} testcases")
        print(f"junitparser, read every testcase: {read_all:7.2f} s")
        print(f"junitparser, load only:           {load_only:7.2f} s")
        print(f"flagci ingest:                    {ingest:7.2f} s")
        print(f"flagci dashboard with verdicts:   {board:7.2f} s")
        print(f"  of which verdicts alone:        {verdicts:7.2f} s")
        print(f"flagci total:                     {total:7.2f} s")
        print(f"ratio to junitparser reading every testcase: {total / read_all:.2f}x")
        print(f"ratio to junitparser load only:              {total / load_only:.2f}x")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
