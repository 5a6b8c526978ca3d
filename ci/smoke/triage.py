"""Triage inside the lane environment, right where a compile failed.

For an out-of-resources or pass failure: write the reproducer bundle (kernel source, spec,
stack, MLIR reproducers, last good IR, one replay command) and run the fallback probe
(lower num_stages, then smaller blocks) through that bundle's replay, so the hint is
proven by the very command a vendor engineer would run. Standard library and triton only.
"""

import importlib.util
from dataclasses import asdict
from pathlib import Path

from ci.smoke import bundle, probe
from ci.smoke.compiler import FAILURE_NAME, CompileJob, CompileOutcome

BUNDLE_NAME = "bundle"


def triage_compile_failure(job: CompileJob, outcome: CompileOutcome) -> str:
    """Bundle and probe a failed compile; return the hint ("" if none was looked for)."""
    if outcome.status not in probe.PROBED:
        return ""
    artifacts = Path(job.artifacts)
    spec = importlib.util.find_spec(job.module)
    assert spec is not None and spec.origin is not None, job.module
    folder = bundle.write(
        artifacts / BUNDLE_NAME,
        bundle.CompileSpec(
            source=Path(spec.origin),
            function=job.kernel,
            signature=job.signature,
            constexprs=job.constexprs,
            attrs=job.attrs(),
            options=job.options,
            target=asdict(job.target),
        ),
        outcome.summary(),
        artifacts,
    )
    result = probe.probe(
        probe.replay_compiler(folder / "spec.json", job.timeout_s, out=artifacts),
        outcome.status,
        job.constexprs,
        job.options,
        blocks=job.tunable_blocks,
    )
    probe.record(artifacts / FAILURE_NAME, result)
    return result.hint
