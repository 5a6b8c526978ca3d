"""Performance smoke: each kernel times itself on the device at realistic shapes.

Unified attention at prefill and decode for head sizes 128 and 256, against torch's
``scaled_dot_product_attention``; GDN post-conv at the Qwen3.6 shapes and prefill lengths,
against eager torch. Each test checks the numerics of the output it timed, then records its
figures (``perf_ms``, ``perf_gbps``, ``perf_tflops``, ``pct_of_ceiling``, ``ratio_to_torch``
...) as JUnit properties: whether a time is a regression is the history's verdict, against
the lane's earlier runs on the same GPU model, not a threshold here.
"""

import importlib
from typing import Dict, Tuple

import pytest

from ci.smoke import perf
from ci.smoke.checks import RecordProperty, fail_with
from ci.smoke.contract import launchers, properties, taxonomy
from ci.smoke.contract.lane import LaneContext, current_context
from ci.smoke.mirrors import attention, gdn
from ci.smoke.realkernels import launches

pytestmark = [pytest.mark.group("perf"), pytest.mark.gpu]

_LANE = current_context()
ATTENTION_CASES = [
    (scenario, config)
    for scenario in attention.PERF_SCENARIOS
    for config in attention.configs_for(_LANE)
    # The 2D path: vLLM takes the 3D one only for decode batches of at most 128 / KV heads
    # sequences, and these scenarios have more.
    if config.head_size == scenario.head_size and config.dtype == "bf16" and not config.is_3d
]
GDN_CASES = [
    (seq_len, config)
    for seq_len in gdn.PERF_SEQ_LENS
    for config in gdn.configs_for(_LANE)
    if config.shape.name == "qwen3.6"
]
# vLLM's own kernels at the same scenarios, launched as vLLM's backend launches them (its
# launcher picks tiles, warps and stages): on lanes whose environment has vllm.
VLLM_TIMED = _LANE.runs("vllm_kernels")
VLLM_ATTENTION = list(attention.PERF_SCENARIOS) if VLLM_TIMED else []
VLLM_GDN = list(gdn.PERF_SEQ_LENS) if VLLM_TIMED else []
# The problem's layout only: vLLM's launcher chooses its own config.
VLLM_CONFIG_ID = launchers.LAUNCHER_CONFIG
TorchTimes = Dict[str, Tuple[float, str]]


@pytest.fixture(scope="session")
def ceilings(lane: LaneContext) -> perf.Ceilings:
    return perf.measure_ceilings()


@pytest.fixture(scope="session")
def torch_times() -> TorchTimes:
    """SDPA's and eager torch's time per shape, measured once for all configs."""
    return {}


def _record(measurement: perf.Measurement, record_property: RecordProperty) -> None:
    record_property(properties.KERNEL, measurement.kernel)
    record_property(properties.CONFIG, measurement.config)
    record_property(properties.SHAPE, measurement.shape)
    for name, value in measurement.figures.properties().items():
        record_property(name, value)
    if measurement.problems:
        fail_with(taxonomy.NUMERIC_MISMATCH, "\n".join(measurement.problems), record_property)


@pytest.mark.parametrize(
    ("scenario", "config"), ATTENTION_CASES, ids=[f"{s.id}-{c.id}" for s, c in ATTENTION_CASES]
)
def test_unified_attention(
    scenario: attention.Scenario,
    config: attention.AttentionConfig,
    ceilings: perf.Ceilings,
    torch_times: TorchTimes,
    record_property: RecordProperty,
) -> None:
    call = perf.mirror_attention(importlib.import_module(attention.MODULE), config)
    measured = perf.measure_attention(
        call, "unified_attention", config, scenario, ceilings, torch_times
    )
    _record(measured, record_property)


@pytest.mark.parametrize(
    ("seq_len", "config"), GDN_CASES, ids=[f"L{n}-{c.id}" for n, c in GDN_CASES]
)
def test_gdn_post_conv(
    seq_len: int,
    config: gdn.GdnConfig,
    ceilings: perf.Ceilings,
    torch_times: TorchTimes,
    record_property: RecordProperty,
) -> None:
    call = perf.mirror_gdn(importlib.import_module(gdn.MODULE).gdn_post_conv_kernel, config)
    measured = perf.measure_gdn(call, "gdn_post_conv", config, seq_len, ceilings, torch_times)
    _record(measured, record_property)


@pytest.mark.parametrize("scenario", VLLM_ATTENTION, ids=[s.id for s in VLLM_ATTENTION])
def test_vllm_unified_attention(
    scenario: attention.Scenario,
    ceilings: perf.Ceilings,
    torch_times: TorchTimes,
    record_property: RecordProperty,
) -> None:
    """vLLM's ``kernel_unified_attention``: the figures vLLM users get, beside the mirror's."""
    record_property(properties.SOURCE, launches.source("vllm"))
    config = attention.AttentionConfig(scenario.head_size, 16, 32, 4, 2, "bf16")
    measured = perf.measure_attention(
        launches.vllm_attention_call,
        launchers.VLLM_ATTENTION,
        config,
        scenario,
        ceilings,
        torch_times,
        VLLM_CONFIG_ID,
    )
    _record(measured, record_property)


@pytest.mark.parametrize("seq_len", VLLM_GDN, ids=[f"L{n}" for n in VLLM_GDN])
def test_vllm_gdn_post_conv(
    seq_len: int,
    ceilings: perf.Ceilings,
    torch_times: TorchTimes,
    record_property: RecordProperty,
) -> None:
    """vLLM's ``_fused_post_conv_kernel`` through ``fused_post_conv_prep``."""
    record_property(properties.SOURCE, launches.source("vllm"))
    config = next(c for c in gdn.configs_for(_LANE) if c.shape.name == "qwen3.6")
    measured = perf.measure_gdn(
        launches.vllm_gdn(config),
        launchers.VLLM_GDN,
        config,
        seq_len,
        ceilings,
        torch_times,
        VLLM_CONFIG_ID,
    )
    _record(measured, record_property)
