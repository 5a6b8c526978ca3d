"""Unified attention (vLLM's kernel_unified_attention structure): compile for every target
of the lane, then check numerics against a float64 reference."""

import importlib
from pathlib import Path
from typing import Callable

import pytest

from ci.smoke import attention
from ci.smoke.checks import (
    RecordProperty,
    compile_timeout_s,
    fail_with,
    launch_guard,
    numerics_device,
)
from ci.smoke.compiler import CompileJob, CompileOutcome
from ci.smoke.lane import LaneContext, Target, current_context

pytestmark = pytest.mark.group("unified_attention")
CONFIGS = attention.configs_for(current_context())


@pytest.fixture(params=CONFIGS, ids=[c.id for c in CONFIGS])
def config(
    request: pytest.FixtureRequest, record_property: RecordProperty
) -> attention.AttentionConfig:
    record_property("kernel", "unified_attention")
    record_property("config", request.param.id)
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


def test_numerics(
    lane: LaneContext, config: attention.AttentionConfig, record_property: RecordProperty
) -> None:
    device = numerics_device(lane)
    kernel = importlib.import_module(attention.MODULE).unified_attention_kernel
    problem = attention.make_problem(config, device)
    with launch_guard(lane):
        attention.launch(kernel, config, problem)
    problems = attention.compare(problem.out, attention.reference(problem), config.dtype)
    if problems:
        fail_with("numeric_mismatch", "\n".join(problems), record_property)
