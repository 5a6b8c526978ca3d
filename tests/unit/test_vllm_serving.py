"""The vllm group's own logic against a stand-in server (tests/fixtures/vllm_standin.py):
the health wait, the completion, what the log says (the attention backend, the GDN warm-up),
and a worker's start-up failure becoming the failure text and its signature."""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci.smoke import serving
from ci.smoke.contract import taxonomy
from ci.smoke.triage.signatures import signature_of
from tests.fixtures import tiny_qwen36, vllm_standin

STANDIN = Path(vllm_standin.__file__)
SAMPLE = Path(__file__).parents[2] / "docs" / "samples" / "2026-12-01-h200-vllm"


def _start(tmp_path: Path, mode: str) -> serving.Server:
    command = serving.server_command(
        "tiny", 1, serving.free_port(), ["--enforce-eager"], launcher=(sys.executable, str(STANDIN))
    )
    env = {"PATH": "/usr/bin:/bin", vllm_standin.MODE_ENV: mode, "PYTHONUNBUFFERED": "1"}
    return serving.start_server(command, env, tmp_path / "vllm-server.log")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[serving.Server]:
    server = _start(tmp_path, "serve")
    yield server
    server.stop()


def test_health_then_completion(served: serving.Server) -> None:
    serving.wait_healthy(served, timeout_s=60, poll_s=0.1)
    completion = serving.complete(served, "tiny", "Hello", 10)
    assert completion.completion_tokens == 10
    log = served.log_text()
    assert log.startswith("$ ") and "--trust-remote-code" in log.splitlines()[0]
    assert serving.attention_backend(log) == "TRITON_ATTN"
    assert serving.gdn_prefill_kernel(log) == "Triton/FLA"
    assert len(serving.gdn_warmup(log)) == 3
    assert serving.gdn_warmup_failure(log) == ""


def test_stop_ends_the_server(served: serving.Server) -> None:
    serving.wait_healthy(served, timeout_s=60, poll_s=0.1)
    assert served.stop() is not None
    assert served.process.poll() is not None


def test_startup_failure_in_a_worker_is_the_failure_and_its_signature(tmp_path: Path) -> None:
    server = _start(tmp_path, "startup-oom")
    try:
        with pytest.raises(serving.ServerFailed) as failed:
            serving.wait_healthy(server, timeout_s=60, poll_s=0.1)
    finally:
        server.stop()
    message = str(failed.value)
    assert "exited with status 1 during start-up" in message
    assert "(EngineCore pid=" in message and "_warmup_prefill_kernels" in message
    signature = signature_of(message.splitlines()[0], message)
    assert signature.kind == taxonomy.OUT_OF_RESOURCES, signature


def test_caught_warmup_failure_is_found_with_its_traceback(tmp_path: Path) -> None:
    server = _start(tmp_path, "warmup-oom")
    try:
        serving.wait_healthy(server, timeout_s=60, poll_s=0.1)
        log = server.log_text()
    finally:
        server.stop()
    assert serving.gdn_warmup(log) == []
    failure = serving.gdn_warmup_failure(log)
    assert failure.startswith("GDN prefill kernel warmup (T=64) failed for layer")
    assert failure.count("Traceback") == 1 and "(EngineCore" not in failure
    assert signature_of(failure.splitlines()[0], failure).kind == taxonomy.OUT_OF_RESOURCES


def test_no_health_is_a_failure_with_the_log(tmp_path: Path) -> None:
    server = _start(tmp_path, "hang")
    try:
        with pytest.raises(serving.ServerFailed, match="not healthy after"):
            serving.wait_healthy(server, timeout_s=0.5, poll_s=0.1)
    finally:
        server.stop()


def test_the_h200_sample_says_triton_and_warmup() -> None:
    for log_path in sorted(SAMPLE.glob("artifacts/*/*.log")):
        log = log_path.read_text(encoding="utf-8")
        assert serving.attention_backend(log) == "TRITON_ATTN", log_path
        assert serving.gdn_prefill_kernel(log) == "Triton/FLA", log_path
        assert len(serving.gdn_warmup(log)) == 3, log_path


def test_tiny_qwen36_keeps_the_head_shapes_and_ratios() -> None:
    ids = {token: i for i, token in enumerate(tiny_qwen36.SPECIAL_TOKENS)}
    config = tiny_qwen36.config_dict(ids)
    text = config["text_config"]
    assert config["architectures"] == ["Qwen3_5ForConditionalGeneration"]
    assert text["head_dim"] == 256 and text["linear_key_head_dim"] == 128
    assert text["num_attention_heads"] // text["num_key_value_heads"] == 24 // 4
    assert text["linear_num_value_heads"] // text["linear_num_key_heads"] == 48 // 16
    assert text["layer_types"] == ["linear_attention"] * 3 + ["full_attention"]
    assert config["image_token_id"] == ids[tiny_qwen36.IMAGE_PAD]
    assert config["vision_config"]["out_hidden_size"] == text["hidden_size"]
