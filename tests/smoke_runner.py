"""Run the smoke suite the way a node does: ``python -m ci.smoke`` in a lane environment."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path


def run_smoke(
    python: Path,
    lane_context: dict[str, object],
    results: Path,
    *pytest_args: str,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m ci.smoke`` for a lane context; return the finished process."""
    results.mkdir(parents=True, exist_ok=True)
    lane_file = results.parent / f"{results.name}-lane.json"
    lane_file.write_text(json.dumps(lane_context))
    full_env = {**os.environ, **(env or {})}
    full_env.pop("TRITON_INTERPRET", None)
    return subprocess.run(
        [
            str(python),
            "-m",
            "ci.smoke",
            "--results",
            str(results),
            "--lane-file",
            str(lane_file),
            "--",
            "-q",
            *pytest_args,
        ],
        text=True,
        capture_output=True,
        env=full_env,
        cwd=results,
        check=False,
        timeout=1500,
    )
