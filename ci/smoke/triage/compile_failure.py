"""Triage inside the lane environment, right where a compile failed.

For an out-of-resources or pass failure: write the reproducer bundle (kernel source, spec,
stack, MLIR reproducers, last good IR, one replay command); where a pass failure's
diagnostics name no pass (a backend that reports every pass failure as OutOfResources),
replay it once with IR dumps to name the pass and keep its input IR in the bundle; run the
fallback probe (lower num_stages, then smaller blocks) through that bundle's replay, so the
hint is proven by the very command a vendor engineer would run; and draft the upstream
report beside the bundle. Standard library and triton only.
"""

import importlib.util
from dataclasses import asdict
from pathlib import Path
from typing import Any, Mapping, NamedTuple, Optional

from ci.smoke.compile.compiler import CompileJob, CompileOutcome
from ci.smoke.contract import records, taxonomy
from ci.smoke.contract.records import (
    BUNDLE_NAME,
    FAILURE_NAME,
    PASS_REPLAY_NAME,
    REPLAY_NAME,
    SPEC_NAME,
)
from ci.smoke.triage import bundle, issuedraft, passdump, probe
from ci.smoke.triage.signatures import signature_of


def source_file(job: CompileJob) -> Path:
    """The kernel's source file: the job's own where it has one (real kernels: finding the
    module by name would import its package in the suite's process), else the module's."""
    if job.module_file:
        return Path(job.module_file)
    spec = importlib.util.find_spec(job.module)
    assert spec is not None and spec.origin is not None, job.module
    return Path(spec.origin)


class Triaged(NamedTuple):
    hint: str  # the fallback probe's ("" if none was looked for)
    named_pass: str  # the pass a replay with IR dumps named ("" if none was needed or found)


def triage_compile_failure(
    job: CompileJob, outcome: CompileOutcome, lane: Optional[Mapping[str, str]] = None
) -> Triaged:
    """Bundle, name the pass, probe and report a failed compile."""
    if outcome.status not in probe.PROBED:
        return Triaged("", "")
    artifacts = Path(job.artifacts)
    failure_file = artifacts / FAILURE_NAME
    folder = bundle.write(
        artifacts / BUNDLE_NAME,
        bundle.CompileSpec(
            source=source_file(job),
            function=job.kernel,
            signature=job.signature,
            constexprs=job.constexprs,
            attrs=job.attrs,
            options=job.options,
            target=asdict(job.target),
        ),
        outcome.summary(),
        artifacts,
    )
    named = None
    if outcome.status == taxonomy.PASS_FAILURE:
        before = signature_of(outcome.message, outcome.summary(), artifacts)
        if not before.detail("pass"):
            named = passdump.name_by_replay(
                folder / REPLAY_NAME,
                folder / SPEC_NAME,
                artifacts / PASS_REPLAY_NAME,
                job.timeout_s,
            )
            if named is not None:
                passdump.keep_input(named, folder)
                passdump.record(failure_file, named)
    result = probe.probe(
        probe.replay_compiler(folder / SPEC_NAME, job.timeout_s, out=artifacts),
        outcome.status,
        job.constexprs,
        # Lowering num_stages starts from the backend's default where the job set none.
        {**outcome.backend_defaults, **job.options},
        blocks=job.tunable_blocks,
    )
    probe.record(failure_file, result)
    draft_report(artifacts, outcome.message, outcome.summary(), lane=lane)
    return Triaged(result.hint, named.pass_name if named else "")


def draft_report(
    artifacts: Path,
    message: str = "",
    text: str = "",
    lane: Optional[Mapping[str, str]] = None,
    bisection: Optional[Mapping[str, Any]] = None,
) -> Path:
    """(Re)draft ``bundle/report.md`` of a triaged failure from what its artifacts hold.

    Called by triage, and by the controller after a bisection (with its result).
    """
    failure = records.read_failure(artifacts / FAILURE_NAME)
    signature = signature_of(message, text, artifacts)
    return issuedraft.write(
        artifacts / BUNDLE_NAME,
        signature.to_json(),
        lane=lane,
        hint=str(failure.get(records.FAILURE_HINT) or ""),
        replay=failure.get(records.FAILURE_REPLAY),
        bisection=bisection,
    )
