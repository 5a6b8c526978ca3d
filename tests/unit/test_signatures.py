"""Signatures of the two user reports (exact text) and of variants of them on other nodes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci.smoke.signatures import EvidenceError, Signature, normalise, signature_of

FAILURES = Path(__file__).resolve().parents[1] / "fixtures" / "failures"


def _text(name: str) -> str:
    return (FAILURES / name).read_text(encoding="utf-8")


def _sign(text: str, artifacts: Path | None = None) -> Signature:
    return signature_of(text.strip().splitlines()[-1], text, artifacts)


def test_iluvatar_backend_resolution() -> None:
    sig = _sign(_text("iluvatar-backend-resolution.txt"))
    assert sig.kind == "backend_resolution"
    assert sig.key == "backend_resolution|0 backends|target cuda|[]"
    assert sig.detail("target") == "cuda"


def test_iluvatar_pass_failure_names_pass_diagnostic_and_location() -> None:
    sig = _sign(_text("iluvatar-pass-failure.txt"))
    assert sig.kind == "pass_failure"
    assert sig.detail("pass") == "TritonILUVATARGPUMMAReduceThreadLocality"
    assert sig.detail("diagnostic") == "operand #0 does not dominate this use"
    assert sig.detail("location") == "triton_attention_helpers.py:415:19"
    assert sig.detail("called_from") == "triton_unified_attention.py:539:44"
    assert "TritonILUVATARGPUMMAReduceThreadLocality" in sig.key
    assert "vllm/" not in sig.key


def test_kunlun_placeholder_figures_are_called_out() -> None:
    sig = _sign(_text("kunlun-uni-sram.txt"))
    assert sig.kind == "pass_failure"
    assert sig.detail("wrapper") == "OutOfResources(uni_sram)"
    assert sig.detail("placeholders") == "Required: 0, Hardware limit: 0"
    assert sig.detail("stage") == "make_ttxir"
    assert "placeholders" in sig.summary
    assert "does not name the failing pass" in sig.summary


def test_wrapped_pass_failure_names_the_underlying_pass_when_diagnostics_exist(
    tmp_path: Path,
) -> None:
    # The backend's OutOfResources plus the MLIR diagnostics the harness kept in stderr.
    (tmp_path / "compile.stderr").write_text(
        "/opt/k/fused_gdn_prefill_post_conv.py:41:12: error: 'tt.load' op"
        " uni_sram allocation exceeds the local memory\n"
        "/opt/k/fused_gdn_prefill_post_conv.py:20:0: note: Pipeline failed while executing"
        " [`TritonXPUAlloca` on 'builtin.module' operation]\n"
    )
    sig = _sign(_text("kunlun-uni-sram.txt"), tmp_path)
    assert sig.kind == "pass_failure"
    assert sig.detail("pass") == "TritonXPUAlloca"
    assert sig.detail("op") == "tt.load"
    assert sig.detail("location") == "fused_gdn_prefill_post_conv.py:41:12"
    assert "underlying: pass TritonXPUAlloca" in sig.summary
    assert sig.key != _sign(_text("kunlun-uni-sram.txt")).key


def test_same_bug_on_another_node_has_the_same_key() -> None:
    text = _text("iluvatar-pass-failure.txt")
    moved = text.replace("vllm/v1/attention/ops/", "/home/ci/node-7/tmp/pip-abc123/vllm/ops/")
    assert moved != text
    assert _sign(moved).key == _sign(text).key
    kunlun = _text("kunlun-uni-sram.txt")
    other = kunlun.replace("/opt/flagtree", "/tmp/tmpq9x_2/flagtree").replace(
        "line 367", "line 370"
    )
    assert _sign(other).key == _sign(kunlun).key


def test_different_failures_have_different_keys() -> None:
    keys = {_sign(_text(n)).key for n in sorted(p.name for p in FAILURES.glob("*.txt"))}
    assert len(keys) == 3
    text = _text("iluvatar-pass-failure.txt")
    assert _sign(text.replace("415:19", "416:3")).key != _sign(text).key


@pytest.mark.parametrize(
    ("text", "kind", "key"),
    [
        (
            "RuntimeError: 0 active drivers ([]). There should only be one.",
            "driver",
            "driver|0 drivers|[]",
        ),
        (
            "RuntimeError: 2 active drivers ([<triton.backends.nvidia.driver.CudaDriver object"
            " at 0x7f3a2c1d0e50>, <triton.backends.amd.driver.HIPDriver object"
            " at 0x7f3a2c1d0f10>])."
            " There should only be one.",
            "driver",
            "driver|2 drivers|[CudaDriver, HIPDriver]",
        ),
        (
            "ptxas error   : Entry function 'k' uses too much shared data (0x40000 bytes,"
            " 0xc000 max)",
            "out_of_resources",
            "out_of_resources|shared memory|262144|49152|?",
        ),
        (
            "Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f1c (most recent"
            ' call first):\n  File "/usr/lib/triton/compiler/compiler.py", line 300 in make_llir',
            "crash",
            "crash|SIGSEGV|make_llir|?",
        ),
        ("compile worker died with signal 6", "crash", "crash|SIGABRT|?|?"),
        (
            "Failed: Timeout (>300.0s) from pytest-timeout.",
            "timeout",
            "timeout|test|?|?",
        ),
        (
            "ssh: connect to host node-3.lab port 22: Connection refused",
            "infrastructure",
            "infrastructure|ssh|connection refused",
        ),
        (
            "docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock."
            " Is the docker daemon running?",
            "infrastructure",
            "infrastructure|docker|cannot connect to the docker daemon",
        ),
        (
            'fatal: [xpu-node-2]: UNREACHABLE! => {"changed": false}',
            "infrastructure",
            "infrastructure|node|unreachable",
        ),
    ],
)
def test_classes(text: str, kind: str, key: str) -> None:
    sig = signature_of(text.splitlines()[0], text, None)
    assert (sig.kind, sig.key) == (kind, key)


def test_infrastructure_key_ignores_the_node() -> None:
    one = signature_of("", "ssh: connect to host node-3 port 22: No route to host", None)
    two = signature_of("", "ssh: connect to host 10.0.0.9 port 2222: No route to host", None)
    assert one.key == two.key
    assert one.detail("node") == "node-3"


def test_numeric_mismatch_key_keeps_the_output_not_the_figures() -> None:
    def mismatch(error: str, index: str) -> str:
        return (
            "AssertionError: output 'g' of gdn_post_conv: Tensor-likes are not close!\n\n"
            "Mismatched elements: 80 / 80 (100.0%)\n"
            f"Greatest absolute difference: {error} at index ({index}) (up to 1e-05 allowed)\n"
        )

    one = signature_of("", mismatch("3.9559829235076904", "36, 0"), None)
    two = signature_of("", mismatch("2.125", "3, 1"), None)
    assert one.kind == "numeric_mismatch"
    assert one.key == two.key == "numeric_mismatch|g|?"
    assert one.detail("max_error") == "3.9559829235076904"
    assert signature_of("", mismatch("1.0", "0, 0").replace("'g'", "'beta'"), None).key != one.key


def test_artifacts_name_the_kernel(tmp_path: Path) -> None:
    (tmp_path / "failure.json").write_text(json.dumps({"kernel": "gdn_post_conv"}))
    sig = signature_of("", "compile of gdn_post_conv timed out after 300 s", tmp_path)
    assert sig.key == "timeout|compile|?|gdn_post_conv"


def test_smoke_harness_failure_record(tmp_path: Path) -> None:
    # The layout ci/smoke/compiler.py writes: {"job": {...}, "outcome": {...}}.
    record = {
        "job": {"kernel": "kernel_unified_attention", "module": "attention"},
        "outcome": {
            "status": "pass_failure",
            "message": "PassManager::run failed",
            "diagnostics": [
                "/tmp/x/attention.py:88:19: error: operand #0 does not dominate this use",
                "/tmp/x/attention.py:40:0: note: Pipeline failed while executing"
                " [`TritonGPUPipeline` on 'builtin.module' operation]",
            ],
        },
    }
    (tmp_path / "failure.json").write_text(json.dumps(record))
    sig = signature_of("pass_failure", "", tmp_path)
    assert sig.kind == "pass_failure"
    assert sig.detail("kernel") == "kernel_unified_attention"
    assert sig.detail("pass") == "TritonGPUPipeline"
    assert sig.detail("location") == "attention.py:88:19"


def test_broken_failure_json_is_reported(tmp_path: Path) -> None:
    (tmp_path / "failure.json").write_text("{not json")
    with pytest.raises(EvidenceError, match=r"failure\.json: not valid JSON"):
        signature_of("", "", tmp_path)


def test_unclassified_key_drops_numbers_and_addresses() -> None:
    one = signature_of("", "ValueError: bad block 37 at 0x7ffd1234", None)
    two = signature_of("", "ValueError: bad block 12 at 0x7ffd9999", None)
    assert one.kind == "unclassified"
    assert one.key == two.key


def test_json_round_trip_and_rejects_unknown_keys() -> None:
    sig = _sign(_text("kunlun-uni-sram.txt"))
    assert Signature.from_json(json.loads(json.dumps(sig.to_json()))) == sig
    with pytest.raises(EvidenceError, match="unknown keys"):
        Signature.from_json({**sig.to_json(), "extra": 1})
    with pytest.raises(EvidenceError, match="unknown kind"):
        Signature.from_json({**sig.to_json(), "kind": "weird"})


def test_normalise() -> None:
    assert normalise("at 0xdeadBEEF in /tmp/tmpab_12/x.py pid 4242 %17") == (
        "at 0xADDR in x.py pid N %N"
    )
