"""The compile worker's reading of a failed compile: kind and MLIR diagnostics."""

from __future__ import annotations

from ci.smoke.compile.compiler import out_of_resources_message, parse_diagnostics
from ci.smoke.contract.taxonomy import compile_failure_kind as classify

# The Iluvatar report's compile output, verbatim (../shared/seeds/).
ILUVATAR_LOG = """\
vllm/v1/attention/ops/triton_unified_attention.py:179:0: error: Failures have been detected while processing an MLIR pass pipeline
vllm/v1/attention/ops/triton_unified_attention.py:179:0: note: Pipeline failed while executing [`TritonILUVATARGPUMMAReduceThreadLocality` on 'builtin.module' operation]
vllm/v1/attention/ops/triton_attention_helpers.py:415:19: error: operand #0 does not dominate this use
vllm/v1/attention/ops/triton_unified_attention.py:539:44: note: called from
vllm/v1/attention/ops/triton_attention_helpers.py:415:19: note: operand defined here (op in the same block)
some unrelated line of output
"""


def test_diagnostics_keep_pass_operand_and_locations() -> None:
    found = parse_diagnostics(ILUVATAR_LOG)
    assert len(found) == 5
    assert any("TritonILUVATARGPUMMAReduceThreadLocality" in d for d in found)
    assert (
        "triton_attention_helpers.py:415:19: error: operand #0 does not dominate this use"
        in found[2]
    )
    assert all("unrelated" not in d for d in found)


def test_classify_each_kind() -> None:
    assert classify("RuntimeError", "PassManager::run failed", ILUVATAR_LOG) == "pass_failure"
    assert (
        classify(
            "RuntimeError",
            "0 compatible backends for target (cuda) ([]). There should only be one.",
            "",
        )
        == "backend_resolution"
    )
    kunlun = "out of resource: uni_sram PassManager::run failed, Required: 0, Hardware limit: 0."
    # A pass failure wrapped as OutOfResources is a pass failure: the signature says so too.
    assert classify("OutOfResources", kunlun, "") == "pass_failure"
    real = "out of resource: shared memory, Required: 327680, Hardware limit: 166912."
    assert classify("OutOfResources", real, "") == "out_of_resources"
    assert classify("CompilationError", "at 12:4: unsupported", "") == "frontend"
    assert classify("RuntimeError", "LLVM went wrong", "") == "compile_error"
    # Triton 3.2 / 3.3.1 wheels ship no ROCm linker: a fact about the node, not the kernel.
    lld = "ROCm linker /opt/rocm/llvm/bin/ld.lld not found. Set 'TRITON_HIP_LLD_PATH' to its path."
    assert classify("Exception", lld, "") == "toolchain"
    cann = "[ConvertLinalgRToBinary] encounters error: ASCEND_HOME_PATH is not set"
    assert classify("Exception", cann, "") == "toolchain"


def test_out_of_resources_message_matches_tritons_wording() -> None:
    assert out_of_resources_message("shared memory", 327680, 166912) == (
        "out of resource: shared memory, Required: 327680, Hardware limit: 166912. "
        "Reducing block sizes or `num_stages` may help."
    )
