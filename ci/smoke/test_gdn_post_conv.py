"""GDN prefill post-conv (vLLM's _fused_post_conv_kernel structure): compile for every
target of the lane at the Qwen3.6 report's shapes and others, then check numerics."""

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
from ci.smoke.mirrors import gdn

pytestmark = pytest.mark.group("gdn_post_conv")
CONFIGS = gdn.configs_for(current_context())
# Tokens in the numerics problem: not a multiple of BLOCK_T, so the tail mask matters.
NUMERICS_SEQ_LEN = 37


@pytest.fixture(params=CONFIGS, ids=[c.id for c in CONFIGS])
def config(request: pytest.FixtureRequest, record_property: RecordProperty) -> gdn.GdnConfig:
    record_property(properties.KERNEL, "gdn_post_conv")
    record_property(properties.CONFIG, request.param.id)
    config: gdn.GdnConfig = request.param
    return config


def test_compile(
    lane: LaneContext,
    target: Target,
    config: gdn.GdnConfig,
    artifacts: Path,
    compile_kernel: Callable[[CompileJob], CompileOutcome],
) -> None:
    compile_kernel(gdn.compile_job(config, target, str(artifacts), compile_timeout_s(lane)))


def test_numerics(
    lane: LaneContext, config: gdn.GdnConfig, record_property: RecordProperty
) -> None:
    device = numerics_device(lane)
    kernel = importlib.import_module(gdn.MODULE).gdn_post_conv_kernel
    problem = gdn.make_problem(config, NUMERICS_SEQ_LEN, device)
    with launch_guard(lane):
        gdn.launch(kernel, config, problem)
    problems = gdn.compare(config, problem, gdn.reference(config, problem))
    if problems:
        fail_with(taxonomy.NUMERIC_MISMATCH, "\n".join(problems), record_property)
