"""Unified attention (vLLM's kernel_unified_attention structure, 2D and 3D paths): compile
for every target of the lane, then check numerics against a float64 reference."""

import importlib
from pathlib import Path
from typing import Callable

import pytest

from ci.smoke.checks import (
    RecordProperty,
    compile_timeout_s,
    fail_with,
    launch_guard,
    numerics_device,
)
from ci.smoke.compile.compiler import CompileJob, CompileOutcome
from ci.smoke.contract import properties, taxonomy
from ci.smoke.contract.lane import LaneContext, Target, current_context
from ci.smoke.mirrors import attention

pytestmark = pytest.mark.group("unified_attention")
CONFIGS = attention.configs_for(current_context())
SEGMENTED = tuple(c for c in CONFIGS if c.is_3d)


@pytest.fixture(params=CONFIGS, ids=[c.id for c in CONFIGS])
def config(
    request: pytest.FixtureRequest, record_property: RecordProperty
) -> attention.AttentionConfig:
    record_property(properties.KERNEL, "unified_attention")
    record_property(properties.CONFIG, request.param.id)
    config: attention.AttentionConfig = request.param
    return config


@pytest.fixture(params=SEGMENTED, ids=[c.id for c in SEGMENTED])
def segmented_config(
    request: pytest.FixtureRequest, record_property: RecordProperty
) -> attention.AttentionConfig:
    record_property(properties.KERNEL, "reduce_segments")
    record_property(properties.CONFIG, request.param.id)
    config: attention.AttentionConfig = request.param
    return config


def test_compile(
    lane: LaneContext,
    target: Target,
    config: attention.AttentionConfig,
    artifacts: Path,
    compile_kernel: Callable[[CompileJob], CompileOutcome],
) -> None:
    compile_kernel(attention.compile_job(config, target, str(artifacts), compile_timeout_s(lane)))


def test_compile_reduce_segments(
    lane: LaneContext,
    target: Target,
    segmented_config: attention.AttentionConfig,
    artifacts: Path,
    compile_kernel: Callable[[CompileJob], CompileOutcome],
) -> None:
    """The 3D path's second kernel, for the same configs."""
    job = attention.reduce_compile_job(
        segmented_config, target, str(artifacts), compile_timeout_s(lane)
    )
    compile_kernel(job)


def test_numerics(
    lane: LaneContext, config: attention.AttentionConfig, record_property: RecordProperty
) -> None:
    """The output against float64 attention; on the 3D path also each segment's partials
    (a split that gave every segment the whole sequence would still reduce right)."""
    device = numerics_device(lane)
    kernels = importlib.import_module(attention.MODULE)
    problem = attention.make_problem(config, device)
    with launch_guard(lane):
        attention.launch(kernels, config, problem)
    problems = attention.compare(problem.out, attention.reference(problem), config.dtype)
    if config.is_3d:
        problems += attention.compare_segments(config, problem)
    if problems:
        fail_with(taxonomy.NUMERIC_MISMATCH, "\n".join(problems), record_property)
