"""vLLM end to end, as the users run it: the lane's model served by vLLM's OpenAI-compatible
server (``--tensor-parallel-size``, ``--trust-remote-code``, the lane's environment), one
completion of 10 greedy tokens; and the offline ``LLM`` path.

This is the users' own reproduction (the Kunlunxin report fails inside the GDN warm-up while
the server initialises Qwen3.6; the Iluvatar report in vLLM's Triton attention). Each test
asserts what matters: the attention backend vLLM chose is its Triton backend, the GDN
warm-up ran (kernels autotuned before the KV cache was sized), tokens came back. vLLM runs
in processes of its own (``ci/smoke/serving.py``, ``ci/smoke/vllm_offline.py``) whose log,
its workers' lines included, is the testcase's artifact; on a failure its end is the failure
text, so an ``OutOfResources`` in the warm-up gets the compile tests' signature. Needs vllm
and the model on the node; skipped with the reason where either is absent.
"""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from ci.smoke import serving
from ci.smoke.checks import RecordProperty
from ci.smoke.contract import properties
from ci.smoke.contract.lane import LaneContext
from ci.smoke.vllm_offline import RESULT_PREFIX

pytestmark = pytest.mark.group("vllm")

PROMPT = "Hello"
MAX_TOKENS = 10
# vLLM's Triton attention backend (vllm/v1/attention/backends/triton_attn.py).
TRITON_BACKEND = "TRITON_ATTN"
# Each test's vLLM takes this share of the GPU's memory (the two may share a GPU).
GPU_MEMORY_UTILIZATION = 0.3


def _model(lane: LaneContext) -> Path:
    """The lane's model on this node, or skip with the reason."""
    if lane.model is None:
        pytest.skip(f"lane {lane.lane} names no model")
    model_path = Path(lane.model["path"])
    if importlib.util.find_spec("vllm") is None:
        pytest.skip("vllm is not installed in this lane environment")
    if not model_path.exists():
        pytest.skip(f"model {lane.model['name']} not found at {model_path} on node {lane.node}")
    return model_path


def _environment(lane: LaneContext) -> Dict[str, str]:
    """The lane's environment (VLLM_PLUGINS ...) over ours; vLLM logs its warm-up (DEBUG)."""
    env = {**os.environ, **lane.env}
    env.setdefault("VLLM_LOGGING_LEVEL", "DEBUG")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _backend_args(lane: LaneContext) -> List[str]:
    """``--attention-backend X``, ``--gdn-prefill-backend Y`` where the lane's model entry
    names them: a stack that has other kernels too (the NVIDIA lane's vLLM has FlashAttention
    and FlashInfer's GDN prefill) is told to take Triton's; on the vendor lanes vLLM has only
    Triton's and chooses them itself."""
    assert lane.model is not None
    args = []
    for key in ("attention_backend", "gdn_prefill_backend"):
        if lane.model.get(key):
            args += ["--" + key.replace("_", "-"), str(lane.model[key])]
    return args


def _start_timeout_s(lane: LaneContext) -> float:
    return lane.test_timeout_s * 0.7


def _check_log(log: str, record_property: RecordProperty) -> None:
    backend = serving.attention_backend(log)
    warmed = serving.gdn_warmup(log)
    record_property(properties.ATTENTION_BACKEND, backend or "")
    record_property(properties.GDN_PREFILL, serving.gdn_prefill_kernel(log) or "")
    record_property(properties.GDN_WARMUP, ",".join(warmed))
    failure = serving.gdn_warmup_failure(log)
    if failure:
        pytest.fail(f"vLLM's GDN warm-up failed (it went on without it):\n{failure}", pytrace=False)
    assert backend == TRITON_BACKEND, (
        f"vLLM chose the attention backend {backend!r}, not its Triton backend {TRITON_BACKEND}"
    )
    assert warmed, "vLLM logged no completed GDN warm-up (_warmup_prefill_kernels)"


def test_serve_completion(
    lane: LaneContext, record_property: RecordProperty, artifacts: Path
) -> None:
    model_path = _model(lane)
    assert lane.model is not None
    size = int(lane.model["tensor_parallel_size"])
    record_property(properties.MODEL, lane.model["name"])
    record_property(properties.TENSOR_PARALLEL_SIZE, size)
    extra = [
        "--served-model-name",
        str(lane.model["name"]),
        "--max-model-len",
        str(lane.model["max_model_len"]),
        "--gpu-memory-utilization",
        str(GPU_MEMORY_UTILIZATION),
        "--enforce-eager",
        *_backend_args(lane),
    ]
    command = serving.server_command(str(model_path), size, serving.free_port(), extra)
    record_property(properties.SERVE_COMMAND, " ".join(command[1:]))
    server = serving.start_server(command, _environment(lane), artifacts / "vllm-server.log")
    completion: Optional[serving.Completion] = None
    failure = ""
    try:
        serving.wait_healthy(server, _start_timeout_s(lane))
        completion = serving.complete(server, str(lane.model["name"]), PROMPT, MAX_TOKENS)
    except serving.ServerFailed as err:
        failure = str(err)
    finally:
        server.stop()
    if failure:
        pytest.fail(failure, pytrace=False)
    assert completion is not None
    record_property(properties.GENERATED, completion.text)
    _check_log(server.log_path.read_text(encoding="utf-8", errors="replace"), record_property)
    assert completion.completion_tokens == MAX_TOKENS, (
        f"expected {MAX_TOKENS} tokens, got {completion.completion_tokens}: {completion.raw}"
    )


def test_generate_hello(
    lane: LaneContext, record_property: RecordProperty, artifacts: Path
) -> None:
    model_path = _model(lane)
    assert lane.model is not None
    record_property(properties.MODEL, lane.model["name"])
    record_property(properties.TENSOR_PARALLEL_SIZE, lane.model["tensor_parallel_size"])
    log_path = artifacts / "vllm-offline.log"
    command = [
        sys.executable,
        "-m",
        "ci.smoke.vllm_offline",
        "--model",
        str(model_path),
        "--tensor-parallel-size",
        str(lane.model["tensor_parallel_size"]),
        "--max-model-len",
        str(lane.model["max_model_len"]),
        "--gpu-memory-utilization",
        str(GPU_MEMORY_UTILIZATION),
        "--prompt",
        PROMPT,
        "--max-tokens",
        str(MAX_TOKENS),
        *_backend_args(lane),
    ]
    with log_path.open("wb") as log_file:
        done = subprocess.run(
            command,
            env=_environment(lane),
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            check=False,
        )
    log = log_path.read_text(encoding="utf-8", errors="replace")
    if done.returncode != 0:
        pytest.fail(
            f"vLLM's offline LLM exited with status {done.returncode}; the end of its log "
            f"({log_path.name}):\n{serving.log_tail(log)}",
            pytrace=False,
        )
    results = [
        line[len(RESULT_PREFIX) :] for line in log.splitlines() if line.startswith(RESULT_PREFIX)
    ]
    assert results, f"vLLM's offline LLM printed no result:\n{serving.log_tail(log)}"
    result = json.loads(results[-1])
    record_property(properties.GENERATED, result["text"])
    _check_log(log, record_property)
    assert len(result["token_ids"]) == MAX_TOKENS, f"expected {MAX_TOKENS} tokens, got {result!r}"
