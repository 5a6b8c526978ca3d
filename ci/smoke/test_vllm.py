"""vLLM end to end: the lane's model, greedy 10 tokens for "Hello".

This is the users' own reproduction (the Iluvatar and Kunlunxin reports both failed
inside vLLM's start-up); it needs vllm and the model on the node, and is skipped with the
reason where either is absent.
"""

import os
from pathlib import Path

import pytest

from ci.smoke.checks import RecordProperty
from ci.smoke.contract import properties
from ci.smoke.contract.lane import LaneContext

pytestmark = pytest.mark.group("vllm")


def test_generate_hello(lane: LaneContext, record_property: RecordProperty) -> None:
    if lane.model is None:
        pytest.skip(f"lane {lane.lane} names no model")
    model_path = Path(lane.model["path"])
    vllm = pytest.importorskip("vllm", reason="vllm is not installed in this lane environment")
    if not model_path.exists():
        pytest.skip(f"model {lane.model['name']} not found at {model_path} on node {lane.node}")
    for name, value in lane.env.items():
        os.environ[name] = value
    record_property(properties.MODEL, lane.model["name"])
    record_property(properties.TENSOR_PARALLEL_SIZE, lane.model["tensor_parallel_size"])
    llm = vllm.LLM(
        model=str(model_path),
        tensor_parallel_size=lane.model["tensor_parallel_size"],
        max_model_len=lane.model["max_model_len"],
        gpu_memory_utilization=0.6,
        enforce_eager=True,
        trust_remote_code=True,
    )
    params = vllm.SamplingParams(max_tokens=10, temperature=0.0)
    outputs = llm.generate(["Hello"], params)
    text = outputs[0].outputs[0].text
    record_property(properties.GENERATED, text)
    assert len(outputs[0].outputs[0].token_ids) == 10, f"expected 10 tokens, got {text!r}"
