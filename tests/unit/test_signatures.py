"""Signatures of the two user reports (exact text) and of variants of them on other nodes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci.smoke.contract import resemblance
from ci.smoke.contract.taxonomy import compile_failure_kind
from ci.smoke.triage.signatures import (
    EvidenceError,
    Signature,
    gather,
    headline,
    normalise,
    signature_of,
    without_numbers,
)

FAILURES = Path(__file__).resolve().parents[1] / "fixtures" / "failures"
# A log, the kind it must get, and facts its signature must name.
Case = tuple[str, str, dict[str, str]]


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
    assert _sign(text.replace("does not dominate", "is not used by")).key != _sign(text).key


def test_the_source_location_is_a_detail_not_part_of_the_key() -> None:
    # The same bug is reported with and without locations, and an edit of the kernel's
    # file moves them: the key holds pass, diagnostic, op and kernel.
    text = _text("iluvatar-pass-failure.txt")
    moved = _sign(text.replace("415:19", "416:3"))
    assert moved.key == _sign(text).key
    assert moved.detail("location") == "triton_attention_helpers.py:416:3"


@pytest.mark.parametrize(
    ("text", "kind", "key"),
    [
        (
            "RuntimeError: 0 active drivers ([]). There should only be one.",
            "backend_resolution",
            "backend_resolution|0 drivers|[]",
        ),
        (
            "RuntimeError: 2 active drivers ([<triton.backends.nvidia.driver.CudaDriver object"
            " at 0x7f3a2c1d0e50>, <triton.backends.amd.driver.HIPDriver object"
            " at 0x7f3a2c1d0f10>])."
            " There should only be one.",
            "backend_resolution",
            "backend_resolution|2 drivers|[CudaDriver, HIPDriver]",
        ),
        (
            "ptxas error   : Entry function 'k' uses too much shared data (0x40000 bytes,"
            " 0xc000 max)",
            "out_of_resources",
            "out_of_resources|shared memory|262144|49152",
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
            "timeout|test|?|?|?",
        ),
        # pytest-timeout's older wording.
        ("E       Failed: Timeout >300.0s", "timeout", "timeout|test|?|?|?"),
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
    # The rules alone: a guess by resemblance must not pass for a rule.
    sig = signature_of(text.splitlines()[0], text, None, resemblance.Centroids({}, {}))
    assert (sig.kind, sig.key) == (kind, key)


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.",
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).",
        "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable",
        "RuntimeError: CUDA error: system not yet initialized",
        "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you"
        " run some cuda functions before calling NumCudaDevices()? Error 804",
    ],
)
def test_a_runtime_that_cannot_start_on_the_nodes_driver_is_the_driver(text: str) -> None:
    # The rules alone: no device or driver is usable, whatever the kernel.
    assert signature_of("", text, None, resemblance.Centroids({}, {})).kind == "driver"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (
            "triton.compiler.errors.UnsupportedLanguageConstruct: at 3:4: unsupported AST node"
            " type: Try",
            "frontend",
        ),
        ("ValueError: arange's arguments must be of type tl.constexpr", "frontend"),
        ("AssertionError: Input shapes should have M >= 16, N >= 16 and K >= 16", "frontend"),
        (
            "ValueError: Conflicting meta-parameters: BLOCK_M. Make sure that you don't"
            " re-define auto-tuned symbols.",
            "harness_error",
        ),
        (
            "RuntimeError: Expected all tensors to be on the same device, but found at least two"
            " devices, cuda:0 and cpu!",
            "harness_error",
        ),
        (
            "NotImplementedError: Could not run 'aten::empty_strided' with arguments from the"
            " 'CUDA' backend.",
            "harness_error",
        ),
        (
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
            "infrastructure",
        ),
        ("RuntimeError: XPU out of memory. Tried to allocate 1.00 GiB", "infrastructure"),
        ("error: unknown target CPU 'gfx1151'", "codegen"),
        ("RuntimeError: operation scheduled before its operands", "pass_failure"),
        (
            "torch._inductor.exc.InductorError: LoweringException: AssertionError:\n"
            "  target: aten.index.Tensor",
            "compile_error",
        ),
        # A kernel's own limit, in the exception torch gives it, stays out of resources.
        (
            "torch.OutOfMemoryError: out of resource: shared memory, Required: 98304, Hardware"
            " limit: 65536.",
            "out_of_resources",
        ),
        (
            "RuntimeError: cannot locate libcuda.so after attempted paths ['/usr/lib64']",
            "toolchain",
        ),
        ("KeyError: 'Keyword argument BLOCK was specified but unrecognised'", "harness_error"),
        ("ValueError: @jit functions should be defined in a Python file", "harness_error"),
        ("torch._inductor.exc.InductorError: CppCompileError: C++ compile error", "compile_error"),
        ("torch._inductor.exc.CUDACompileError: nvcc failed", "compile_error"),
        (
            "torch._inductor.exc.MissingOperatorWithoutDecomp: missing lowering\n"
            "  target: aten.foo.default",
            "compile_error",
        ),
        # Inductor's C++ compiler there but not working is the node's toolchain.
        (
            "torch._inductor.exc.InvalidCxxCompiler: No working C++ compiler found in"
            " torch._inductor.config.cpp.cxx: (None, 'g++')",
            "toolchain",
        ),
        # A child killed from outside (SIGKILL: the memory killer), in torch's launchers' words
        # and the shell's; a signal of the child's own stays a crash.
        (
            "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with"
            " signal SIGKILL",
            "infrastructure",
        ),
        (
            "  exitcode  : -9 (pid: 1234)\n  traceback : Signal 9 (SIGKILL) received",
            "infrastructure",
        ),
        ("  exitcode  : -11 (pid: 1234)\n  traceback : Signal 11 (SIGSEGV) received", "crash"),
        (
            "RuntimeError: DataLoader worker (pid 12345) is killed by signal: Killed.",
            "infrastructure",
        ),
        ("python bench.py --quick\nKilled", "infrastructure"),
        # Workers that could not meet; NCCL's transport failing under them.
        (
            "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients."
            " 1/2 clients joined.",
            "infrastructure",
        ),
        (
            "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970,"
            " unhandled system error (run with NCCL_DEBUG=INFO for details)",
            "infrastructure",
        ),
        # The test runner's own words: a worker lost under a test, a command line or a
        # fixture it refused.
        ("[gw3] node down: Not properly terminated\nreplacing crashed worker gw3", "crash"),
        ("pytest: error: unrecognized arguments: -n 4", "harness_error"),
        ("E       fixture 'device' not found", "harness_error"),
        # NCCL's own failures, a CUDA call failing under it for memory, the workers' network.
        (
            "RuntimeError: NCCL error in: NCCLUtils.hpp:219, internal error, NCCL version"
            " 2.19.3\nncclInternalError: Internal check failed.",
            "infrastructure",
        ),
        (
            "RuntimeError: NCCL communicator was aborted on rank 0. Original reason for failure"
            " was: NCCL error: remote process exited or there was a network error",
            "infrastructure",
        ),
        (
            "ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\n"
            "Cuda failure 'out of memory'",
            "infrastructure",
        ),
        (
            "torch.distributed.DistNetworkError: The client socket has timed out after 1800s"
            " while trying to connect to (127.0.0.1, 29500).",
            "infrastructure",
        ),
        (
            "RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from"
            " [0] via c10d key-value store by key '0', but store->get('0') got error: Connection"
            " reset by peer",
            "infrastructure",
        ),
        (
            "OSError: We couldn't connect to 'https://huggingface.co' to load this file",
            "infrastructure",
        ),
        # A CI service ending a job past its limit.
        (
            "##[error]The job running on runner gpu-3 has exceeded the maximum execution time"
            " of 360 minutes.",
            "timeout",
        ),
        ("ERROR: Job failed: execution took longer than 1h0m0s seconds", "timeout"),
    ],
)
def test_forms_no_split_had_shown(text: str, kind: str) -> None:
    # Written from the tools' own words, not from a labelled log: no split holds them.
    assert signature_of("", text, None, resemblance.Centroids({}, {})).kind == kind


# A device runtime's error code in each wrapper that reports one: PyTorch's, PyTorch's driver
# API's, Triton's launcher, the code's own name.
_RUNTIME_FORMS = (
    "RuntimeError: CUDA error: {said}\nCUDA kernel errors might be asynchronously reported at"
    " some other API call, so the stacktrace below might be incorrect.",
    "torch.AcceleratorError: CUDA error: {said}",
    "RuntimeError: CUDA driver error: {said}",
    "RuntimeError: Triton Error [CUDA]: {said}",
)


@pytest.mark.parametrize(
    ("said", "kind"),
    [
        # What the code means decides: a kernel's fault, the node's memory or hardware, the
        # device's watchdog, a launch asking more than a multiprocessor has.
        ("unspecified launch failure", "crash"),
        ("invalid program counter", "crash"),
        ("out of memory", "infrastructure"),
        ("uncorrectable ECC error encountered", "infrastructure"),
        ("the launch timed out and was terminated", "timeout"),
        ("too many resources requested for launch", "out_of_resources"),
        # Any other code is the runtime refusing what it was asked.
        ("invalid argument", "driver"),
        ("initialization error", "driver"),
        ("the provided PTX was compiled with an unsupported toolchain.", "driver"),
        ("named symbol not found", "driver"),
    ],
)
def test_a_runtime_error_code_is_classed_by_what_it_means_in_any_wrapper(
    said: str, kind: str
) -> None:
    for form in _RUNTIME_FORMS:
        text = form.format(said=said)
        assert signature_of("", text, None, resemblance.Centroids({}, {})).kind == kind, text


def test_a_device_fault_is_one_key_by_its_message_or_its_codes_name() -> None:
    illegal = [
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "RuntimeError: Triton Error [CUDA]: CUDA_ERROR_ILLEGAL_ADDRESS",
        "hipErrorIllegalAddress",
    ]
    assert {signature_of("", text, None).key for text in illegal} == {
        "crash|device fault (an illegal memory access was encountered)|?|?"
    }
    launch = ["RuntimeError: HIP error: unspecified launch failure", "cudaErrorLaunchFailure"]
    assert {signature_of("", text, None).key for text in launch} == {
        "crash|device fault (unspecified launch failure)|?|?"
    }
    # A report cut inside the assert's message (a box, a wrap) keeps its first words.
    asserted = [
        "RuntimeError: CUDA error: device-side assert triggered",
        "<repr-error 'CUDA error: device-side assert            │ │\n   triggered",
    ]
    assert {signature_of("", text, None).key for text in asserted} == {
        "crash|device fault (device-side assert triggered)|?|?"
    }


# HIP's runtime in each wrapper that reports its codes: PyTorch's, Triton's HIP launcher (the
# code's number before the message, "Messsage" as some releases spell it), the code's name.
_HIP_FORMS = (
    "RuntimeError: HIP error: {said}",
    "torch.AcceleratorError: HIP error: {said}",
    "RuntimeError: Triton Error [HIP]:  Code: 7, Messsage: {said}",
    "RuntimeError: Triton Error [HIP]: Code: 7, Message: {said}",
)


@pytest.mark.parametrize(
    ("name", "said", "kind"),
    [
        ("hipErrorOutOfMemory", "out of memory", "infrastructure"),
        ("hipErrorECCNotCorrectable", "uncorrectable ECC error encountered", "infrastructure"),
        ("hipErrorLaunchTimeOut", "the launch timed out and was terminated", "timeout"),
        ("hipErrorPriorLaunchFailure", "unspecified launch failure in prior launch", "crash"),
        (
            "hipErrorLaunchOutOfResources",
            "too many resources requested for launch",
            "out_of_resources",
        ),
        ("hipErrorInvalidImage", "device kernel image is invalid", "driver"),
        ("hipErrorInvalidValue", "invalid argument", "driver"),
    ],
)
def test_a_hip_error_code_is_classed_by_what_it_means_in_any_wrapper(
    name: str, said: str, kind: str
) -> None:
    empty = resemblance.Centroids({}, {})
    texts = [form.format(said=said) for form in _HIP_FORMS] + [f"RuntimeError: {name}"]
    for text in texts:
        assert signature_of("", text, None, empty).kind == kind, text
    # One code, one key, whichever wrapper reports it.
    assert len({signature_of("", text, None, empty).key for text in texts[:4]}) == 1, texts


def test_inductors_c_plus_plus_compiler_missing_is_keyed_by_the_compiler() -> None:
    # Absent (Windows' "cl") or not working (InvalidCxxCompiler): the tool Inductor named.
    assert (
        signature_of(
            "",
            "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
            "RuntimeError: Compiler: cl is not found.",
            None,
        ).key
        == "toolchain|the host C++ compiler (cl)"
    )
    assert (
        signature_of(
            "",
            "InvalidCxxCompiler: No working C++ compiler found in"
            " torch._inductor.config.cpp.cxx: (None, 'g++')",
            None,
        ).key
        == "toolchain|the host C++ compiler (g++)"
    )


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        # ROCm's HSA runtime: a kernel's fault, registers a launch lacks, any other refusal.
        ("HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION", "crash"),
        ("HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION", "crash"),
        ("HSA_STATUS_ERROR_OUT_OF_REGISTERS", "out_of_resources"),
        ("HSA_STATUS_ERROR_INVALID_ISA", "driver"),
        ("HSA_STATUS_ERROR_INVALID_CODE_OBJECT", "driver"),
    ],
)
def test_an_hsa_status_is_classed_by_what_it_means(code: str, kind: str) -> None:
    empty = resemblance.Centroids({}, {})
    for text in (f"{code}: the runtime's words", f"RuntimeError: {code}"):
        assert signature_of("", text, None, empty).kind == kind, text


# torch_npu's two reports of an Ascend runtime (ACL) code; the second adds its words for it.
_ACL_FORMS = (
    "RuntimeError: ACL stream synchronize failed, error code:{code}",
    "RuntimeError: npuSynchronizeDevice:NPUFunctions.cpp:467 NPU function error:"
    " AclrtSynchronizeDevice, error code is {code}\n[ERROR] 2025-01-01-00:00:00 (PID:1234,"
    " Device:0, RankID:-1) ERR00100 PTA call acl api failed\n[Error]: {words}",
)


@pytest.mark.parametrize(
    ("code", "words", "kind"),
    [
        (507015, "The aicore execution is abnormal.", "crash"),
        (507035, "The vector core execution is abnormal.", "crash"),
        (507044, "Vector core trap read out-of-bounds exception.", "crash"),
        (507014, "The aicore execution times out.", "timeout"),
        (207018, "The memory on the device is exhausted.", "infrastructure"),
        (507013, "System Direct Memory Access (DMA) hardware execution error.", "infrastructure"),
        (507899, "An internal error occurs in the Driver module.", "driver"),
        (107000, "Parameter verification failed.", "driver"),
    ],
)
def test_an_ascend_runtime_code_is_classed_by_what_it_means(
    code: int, words: str, kind: str
) -> None:
    empty = resemblance.Centroids({}, {})
    for form in _ACL_FORMS:
        text = form.format(code=code, words=words)
        assert signature_of("", text, None, empty).kind == kind, text


def test_an_ascend_fault_is_one_key_by_its_code_or_torch_npus_words() -> None:
    texts = [
        "RuntimeError: ACL stream synchronize failed, error code:507035",
        "[Error]: The vector core execution is abnormal.",
    ]
    assert {signature_of("", text, None).key for text in texts} == {
        "crash|device fault (vector core exception)|?|?"
    }
    # Any other code: the call that returned it and the code.
    refused = "RuntimeError: x.cpp:286 NPU function error: c10_npu::SetDevice(device), error code is 107001"
    assert signature_of("", refused, None).key == (
        "driver|NPU|c10_npu::SetDevice(device): code 107001|?"
    )


@pytest.mark.parametrize(
    ("text", "kind", "key"),
    [
        # Vendor forks' words for their runtimes' errors: Cambricon's torch_mlu, MetaX's.
        ("RuntimeError: CNRT error: invalid argument.", "driver", "driver|CNRT|invalid argument|?"),
        (
            "torch.OutOfMemoryError: MLU out of memory. Tried to allocate 2.00 GiB",
            "infrastructure",
            "infrastructure|device memory|MLU out of memory",
        ),
        (
            "MACA Error: an illegal memory access was encountered at kernel.cpp:12",
            "crash",
            "crash|device fault (an illegal memory access was encountered)|?|?",
        ),
    ],
)
def test_vendor_runtimes_errors_are_read_as_cudas_are(text: str, kind: str, key: str) -> None:
    signature = signature_of("", text, None, resemblance.Centroids({}, {}))
    assert (signature.kind, signature.key) == (kind, key)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # Round 35, from frozen-35's misses both labellings agree on (each case written
        # here, not copied from the split).
        (
            "error: g++: internal compiler error: Segmentation fault signal terminated",
            "compile_error",
        ),
        ("ERROR AclNN_Inner_Error(EZ9999): x\n  AclOpKernelInit failed opType", "driver"),
        ("error: 64-bit data type not supported on GCU300!", "codegen"),
        ("error: Double type is not supported on this platform.", "codegen"),
        ("internal compiler error, abnormal program termination", "codegen"),
        (
            "TypeError: fused_op(): incompatible function arguments. Invoked with: 1",
            "harness_error",
        ),
        ("ImportError: /tmp/x/hip_utils.so: undefined symbol: hipGetDeviceProperties", "driver"),
        ("OSError: libamdhip64.so.7: cannot open shared object file: No such file", "toolchain"),
        ("RuntimeError: Shared memory usage exceeds device limit", "out_of_resources"),
        # Left as they were: a C++ ABI mismatch between packages, another library missing,
        # Triton's own bindings refusing arguments inside its compiler.
        ("ImportError: /x/libtriton.so: undefined symbol: _ZN3c105ErrorC1E", "harness_error"),
        ("OSError: libroctracer64.so.4: cannot open shared object file", "harness_error"),
        (
            '  File "/x/site-packages/triton/backends/metax/compiler.py", line 2, in load\n'
            "TypeError: load_dialects(): incompatible function arguments.",
            "compile_error",
        ),
    ],
)
def test_round_35_forms(text: str, kind: str) -> None:
    assert signature_of("", text, None, resemblance.Centroids({}, {})).kind == kind, text


def test_the_devices_memory_running_out_is_one_key_in_any_wrapper() -> None:
    texts = [
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "RuntimeError: CUDA error: out of memory",
        "RuntimeError: Triton Error [CUDA]: out of memory",
        "CUDA_ERROR_OUT_OF_MEMORY",
    ]
    assert {signature_of("", text, None).key for text in texts} == {
        "infrastructure|device memory|CUDA out of memory"
    }
    assert signature_of("", "hipErrorOutOfMemory", None).key == (
        "infrastructure|device memory|HIP out of memory"
    )
    assert signature_of("", "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", None).key == (
        "infrastructure|device memory|XPU out of memory"
    )


def test_a_kernel_the_devices_watchdog_ended_is_keyed_by_the_runtimes_words() -> None:
    # PyTorch raised RuntimeError, later releases torch.AcceleratorError: one failure.
    said = "CUDA error: the launch timed out and was terminated"
    keys = {
        signature_of("", f"{wrapper}: {said}", None).key
        for wrapper in ("RuntimeError", "torch.AcceleratorError")
    }
    assert keys == {"timeout|kernel launch (device watchdog)|?|?|?"}


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # The language's own terms in a bare Python error: the frontend checking the kernel.
        ("ValueError: `other` cannot be provided without `mask`", "frontend"),
        ("TypeError: values element 0 must have type `constexpr`", "frontend"),
        ("ValueError: program_id axis must be 0, 1, or 2 but got 3", "frontend"),
        ("NotImplementedError: __setitem__ is not supported in triton", "frontend"),
        ("ValueError: Cache modifier .cg not supported", "frontend"),
        # The caller's program using an API the release lacks stays a harness error.
        ("AttributeError: module 'triton.language' has no attribute 'math'", "harness_error"),
        # Words that are no language's: left to the other rules (here none decides).
        ("ValueError: x is already defined.", "unclassified"),
    ],
)
def test_a_bare_error_in_the_languages_terms_is_the_frontend(text: str, kind: str) -> None:
    assert signature_of("", text, None, resemblance.Centroids({}, {})).kind == kind


def test_a_frontend_error_is_one_key_on_its_banners_line_or_below_it() -> None:
    # Triton prints the error under the source excerpt; a report may keep it on the
    # banner's line. Its banner may be a subclass of CompilationError.
    forms = [
        "triton.compiler.errors.CompilationError: at 3:4: unsupported AST node type: Try",
        "UnsupportedLanguageConstruct: at 3:4: unsupported AST node type: Try",
        "triton.compiler.errors.UnsupportedLanguageConstruct: at 7:8:\n    try:\n    ^\n"
        "unsupported AST node type: Try",
    ]
    keys = {signature_of("", text, None).key for text in forms}
    assert keys == {"frontend|unsupported AST node type: Try"}


def test_a_test_runners_section_rule_is_never_the_error_line() -> None:
    text = (
        "-------------------------------- live log call ---------------------------------\n"
        "hipcc_check: waiting for device 0\n"
        "=============================== 1 failed in 3.73s ===============================\n"
    )
    assert signature_of("", text, None).key == "unclassified|hipcc_check: waiting for device N|?|?"


def test_a_gpu_too_old_for_triton_is_keyed_by_what_it_needs_not_by_the_gpu() -> None:
    def refused(gpu: str, has: str) -> str:
        return (
            f"RuntimeError: Found {gpu} which is too old to be supported by the triton GPU"
            " compiler, which is used as the backend. Triton only supports devices of CUDA"
            f" Capability >= 7.0, but your device is of CUDA capability {has}"
        )

    gtx = signature_of("", refused("NVIDIA GeForce GTX 1070", "6.1"), None)
    p100 = signature_of("", refused("Tesla P100-SXM2-16GB", "6.0"), None)
    assert (gtx.kind, gtx.key) == ("driver", "driver|device too old|needs capability >= 7.0")
    assert p100.key == gtx.key
    assert p100.detail("device") == "Tesla P100-SXM2-16GB"
    newer = refused("NVIDIA GeForce GTX 1070", "6.1").replace(">= 7.0", ">= 7.5")
    assert signature_of("", newer, None).key != gtx.key


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
    assert one.key == two.key == "numeric_mismatch|g|?|of 80"
    assert one.detail("max_error") == "3.9559829235076904"
    assert signature_of("", mismatch("1.0", "0, 0").replace("'g'", "'beta'"), None).key != one.key


def test_numeric_mismatch_without_a_test_is_told_apart_by_the_size_compared() -> None:
    """With no test and no output named, the tensor's element count is the report's only
    fact of which comparison failed: the same test reports it every time, whatever fails."""

    def mismatch(wrong: int, size: int) -> str:
        return (
            "AssertionError: Tensor-likes are not close!\n\n"
            f"Mismatched elements: {wrong} / {size} ({100 * wrong / size:.1f}%)\n"
        )

    attention = signature_of("", mismatch(14534, 16384), None)
    assert attention.key == "numeric_mismatch|?|?|of 16384"
    assert signature_of("", mismatch(20, 16384), None).key == attention.key
    assert signature_of("", mismatch(2, 32), None).key != attention.key
    # numpy's assert_allclose reports the same count.
    numpy = (
        "AssertionError: \nNot equal to tolerance rtol=1e-07\nMismatched elements: 1 / 64 (1.56%)\n"
    )
    assert signature_of("", numpy, None).key.endswith("|of 64")


def test_numeric_mismatch_key_is_the_test_in_any_form_of_its_id() -> None:
    def key(test_id: str) -> str:
        text = f"FAILED {test_id} - AssertionError: Tensor-likes are not close!\n"
        return signature_of("", text, None).key

    mixtral = key("test/conv/test_models.py::test_mini[mini_mixtral-32-1e-05]")
    assert mixtral == "numeric_mismatch|test_mini[mini_mixtral-N-N]|?"
    # Without its file, at another size: the same test failing alike.
    assert key("test_models.py::test_mini[mini_mixtral-64-1e-05]") == mixtral
    # Another model, another test function: other failures.
    assert key("test_models.py::test_mini[mini_gemma-32-1e-05]") != mixtral
    assert key("test_models.py::test_other[mini_mixtral-32-1e-05]") != mixtral
    # unittest's form of an id; a summary's bare function after FAILED.
    unittest = "FAIL: test_linear (test_nn.TestNN.test_linear)\nTensor-likes are not close!\n"
    assert signature_of("", unittest, None).key == "numeric_mismatch|test_linear|?"
    summary = "  36 FAILED test_linear\n  AssertionError: Tensor-likes are not equal!\n"
    assert signature_of("", summary, None).key == "numeric_mismatch|test_linear|?"


def test_numeric_mismatch_without_a_test_keys_torchs_report_by_its_template() -> None:
    counts = "Mismatched elements: 89 / 4224 (2.1%)\n"
    headline = "AssertionError: Tensor-likes are not close!\n\n" + counts
    cut = counts + "Greatest absolute difference: 0.05 at index (4, 39)\n"
    assert signature_of("", headline, None).key == signature_of("", cut, None).key


def test_artifacts_name_the_kernel(tmp_path: Path) -> None:
    (tmp_path / "failure.json").write_text(json.dumps({"kernel": "gdn_post_conv"}))
    sig = signature_of("", "compile of gdn_post_conv timed out after 300 s", tmp_path)
    assert sig.key == "timeout|compile|?|?|gdn_post_conv"


def test_smoke_harness_failure_record(tmp_path: Path) -> None:
    # The layout ci/smoke/compile/compiler.py writes: {"job": {...}, "outcome": {...}}.
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
    # The rules alone: centroids with no class never guess.
    rules_only = resemblance.Centroids({}, {})
    one = signature_of("", "ValueError: bad block 37 at 0x7ffd1234", None, rules_only)
    two = signature_of("", "ValueError: bad block 12 at 0x7ffd9999", None, rules_only)
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


def test_normalise_hashes_random_names_and_keeps_words() -> None:
    # A base64 temporary name (from triton-ascend's bishengir logs) is not the failure's.
    assert normalise("kernel_bqVQ8Qyv6VxjF26uwYSgIU3aPYssG68esGVDjNtRZ2I.o") == "HASH.o"
    assert normalise("rLkuzPEI5g-fTGv2bcltZEvjfZ8aYwN8cC2bvu58qqM") == "HASH"
    # A test's name and parameters, a mangled C++ name: they name what failed.
    for word in (
        "test_AdaptiveLogSoftmax_cuda_tf32",
        "test_dot[1-128-128-64-4-True-False-none-tf32-int8-int8-1_1]",
        "_ZN10flashinfer5vec_tIhLm16EE4loadEPKh",
        "N3c1016DistBackendErrorE",
    ):
        assert normalise(word) == word


# --------------------------------------------------------------------------------------
# The vendor log forms, one by one (variants of the corpus's real logs)

KUNLUN = _text("kunlun-uni-sram.txt")


def test_wrapped_uni_sram_over_lines_and_with_punctuation_keeps_its_key() -> None:
    key = _sign(KUNLUN).key
    wrapped = KUNLUN.replace(
        "uni_sram PassManager::run failed, Required: 0",
        "uni_sram PassManager::run failed,\n  Required: 0",
    )
    comma = KUNLUN.replace("uni_sram PassManager", "uni_sram, PassManager")
    assert wrapped != KUNLUN and comma != KUNLUN
    assert _sign(wrapped).key == key
    assert _sign(comma).key == key
    assert _sign(comma).detail("resource") == "uni_sram"


def test_uni_sram_without_figures_is_still_a_wrapped_pass_failure() -> None:
    text = "OutOfResources: out of resource: uni_sram\nPassManager::run failed: 'tt.load' op bad\n"
    sig = signature_of("", text, None)
    assert sig.kind == "pass_failure"
    assert sig.detail("wrapper") == "OutOfResources(uni_sram)"
    assert sig.detail("op") == "tt.load"


def test_the_kernel_is_in_the_key() -> None:
    other = KUNLUN.replace("_fused_post_conv_kernel", "_chunk_scan_kernel")
    assert _sign(other).detail("kernel") == "_chunk_scan_kernel"
    assert _sign(other).key != _sign(KUNLUN).key


@pytest.mark.parametrize(
    "prefix",
    [
        "(Worker_TP1 pid=4711) ERROR 12-01 07:00:00 [multiproc_executor.py:590] ",
        "[rank0]: ",
        "2026-12-01T07:00:00.1234567Z ",
        "E1201 07:00:00.123456 4711 torch/_inductor/runtime/triton_heuristics.py:714] ",
        "E       ",
    ],
)
def test_log_prefixes_do_not_hide_the_exception_line(prefix: str) -> None:
    plain = _text("iluvatar-pass-failure.txt")
    prefixed = "".join(prefix + line + "\n" for line in plain.splitlines())
    assert _sign(prefixed).key == _sign(plain).key
    assert _sign(prefixed).detail("pass") == "TritonILUVATARGPUMMAReduceThreadLocality"


def test_a_crash_key_never_falls_back_to_the_stack_dump_banner() -> None:
    text = (
        "PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/\n"
        "Stack dump:\n0.\tProgram arguments: triton-opt --tritongpu-pipeline x.ttgir\n"
    )
    sig = signature_of("", text, None)
    assert sig.kind == "crash"
    assert sig.detail("pass") == "tritongpu-pipeline"
    assert "Stack dump" not in sig.key and "Program arguments" not in sig.key


def test_dtype_and_architecture_tokens_stay_temp_names_go() -> None:
    assert without_numbers("fp16 bf16 sm_121a tcgen05 gfx942 i32 at 12 and 3.5") == (
        "fp16 bf16 sm_121a tcgen05 gfx942 i32 at N and N"
    )
    assert normalise("llc: mt_triton_kernel-ce9202.ll and /tmp/tmpkw7ug6t8.ptx") == (
        "llc: mt_triton_kernel-HASH.ll and TMP.ptx"
    )


def test_the_reproducer_pipeline_names_the_pass(tmp_path: Path) -> None:
    (tmp_path / "k.make_ttgir.repro.mlir").write_text(
        "module {\n}\n{-#\n  external_resources: {\n    mlir_reproducer: {\n"
        '      pipeline: "builtin.module(tritongpu-coalesce)",\n'
        "      disable_threading: true\n    }\n  }\n#-}\n"
    )
    sig = signature_of("RuntimeError: PassManager::run failed", "", tmp_path)
    assert sig.kind == "pass_failure"
    assert (sig.detail("pass"), sig.detail("pass_source")) == ("tritongpu-coalesce", "reproducer")
    assert sig.detail("stage") == "make_ttgir"
    assert "tritongpu-coalesce" in sig.key
    # A whole pipeline (the reproducer Triton prints to stderr) does not say which failed.
    (tmp_path / "k.make_ttgir.repro.mlir").write_text(
        'pipeline: "builtin.module(tritongpu-coalesce, tritongpu-pipeline{num-stages=3})"'
    )
    assert (
        signature_of("RuntimeError: PassManager::run failed", "", tmp_path).detail("pass") is None
    )


def test_a_pass_named_only_as_x_pass() -> None:
    sig = signature_of("", "error: Failure to run `tritonintelgpu-pipeline` pass", None)
    assert (sig.kind, sig.detail("pass")) == ("pass_failure", "tritonintelgpu-pipeline")


@pytest.mark.parametrize(
    ("text", "kind", "facts"),
    [
        (
            "python: /src/lib/Dialect/TritonGPU/Transforms/Coalesce.cpp:88: void f():"
            " Assertion `isa<T>(v)' failed.\n #3 0x00007f (anonymous namespace)::"
            "CoalescePass::runOnOperation()\nAborted (core dumped)",
            "pass_failure",
            {
                "pass": "Coalesce",
                "pass_source": "frame",
                "abort": "assertion in f",
                "condition": "isa<T>(v)",
            },
        ),
        (
            "UNREACHABLE executed at /src/lib/Conversion/TritonToLinalg/TritonToLinalg.cpp:440!",
            "pass_failure",
            {"pass": "TritonToLinalg", "pass_source": "abort site"},
        ),
        (
            "LLVM ERROR: Failed to translate TritonGPU to LLVM IR.",
            "pass_failure",
            {"abort": "LLVM ERROR: Failed to translate TritonGPU to LLVM IR"},
        ),
        (
            "Fatal Python error: Aborted\n\nCurrent thread 0x00007f1c",
            "crash",
            {"signal": "SIGABRT"},
        ),
        ("[repro fft N=250 run 1]  HANG (90.08s timeout)", "timeout", {"seconds": "90.08"}),
        (
            "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'",
            "codegen",
            {"tool": "ptxas", "message": "Value 'sm_121a' is not defined for option 'gpu-name'"},
        ),
        ("error: ran out of registers during register allocation", "codegen", {"tool": "llc"}),
        (
            "triton.compiler.errors.CompilationError: at 12:8:\ndef my_kernel(x):\n"
            "ValueError('unsupported shape')",
            "frontend",
            {"kernel": "my_kernel", "location": "12:8"},
        ),
    ],
)
def test_forms(text: str, kind: str, facts: dict[str, str]) -> None:
    sig = signature_of("", text, None)
    assert sig.kind == kind
    assert {name: sig.detail(name) for name in facts} == facts


def test_failure_kind_and_signature_agree_on_the_wrapped_uni_sram() -> None:
    message = "out of resource: uni_sram PassManager::run failed, Required: 0, Hardware limit: 0."
    kind = compile_failure_kind("OutOfResources", message, "")
    assert kind == "pass_failure"
    assert signature_of("", f"OutOfResources: {message}", None).kind == kind
    real = "out of resource: shared memory, Required: 98304, Hardware limit: 65536."
    assert compile_failure_kind("OutOfResources", real, "") == "out_of_resources"


def test_unclassified_says_what_structure_it_found_and_lacked() -> None:
    # The rules alone: whether the shipped centroids would guess these moves with the data.
    rules_alone = resemblance.Centroids({}, {})
    bare = signature_of("", "the node printed something odd", None, rules_alone)
    assert bare.kind == "unclassified"
    assert bare.detail("structure") == (
        "no exception line; no traceback frames; no known raising layer; no compile stage"
    )
    framed = signature_of(
        "",
        '  File "/x/site-packages/mylib/ops.py", line 3, in go\nKeyError: 3\n',
        None,
        rules_alone,
    )
    assert framed.kind == "unclassified"
    assert "exception KeyError (from its exception line)" in (framed.detail("structure") or "")
    assert "1 traceback frames" in framed.summary


# Round 3 (docs/triage.md): forms by the layer that raised or by what a tool's words are
# about, not by one report's wording. Each case is written here, not taken from a corpus.
ROUND_3: list[Case] = [
    (  # the driver's loader refuses the module: raised in load_binary, in any words
        '  File "/v/site-packages/triton/backends/amd/driver.py", line 9, in load_binary\n'
        "    return self.lib.load_binary(args)\nRuntimeError: the module has no code here",
        "driver",
        {},
    ),
    (  # the driver API's own error code
        "RuntimeError: hipErrorNoBinaryForGpu",
        "driver",
        {},
    ),
    (  # the same code with no traceback at all
        "load failed: ZE_RESULT_ERROR_INVALID_ARGUMENT while loading kernel",
        "driver",
        {},
    ),
    (  # the driver's JIT could not build the module: code generation, not a refusal
        '  File "/v/site-packages/triton/backends/intel/driver.py", line 9, in load_binary\n'
        "RuntimeError: ZE_RESULT_ERROR_MODULE_BUILD_FAILURE",
        "codegen",
        {},
    ),
    (
        "Triton is installed but 0 active driver(s) found (expected 1).",
        "backend_resolution",
        {},
    ),
    (  # pytest never ran a test: the suite's modules do not import
        "ERROR test/test_ops.py\n!!!! Interrupted: 2 errors during collection !!!!",
        "harness_error",
        {},
    ),
    (  # two packages outside the compiler disagree on an extension's signature
        '  File "/v/site-packages/mypkg/lowering.py", line 3, in lower\n'
        "TypeError: pack(): incompatible function arguments. The following argument types"
        " are supported:\n    1. (self: ext.Call, arg0: str) -> bytes",
        "harness_error",
        {},
    ),
    (  # the raise line is all the report kept; the resource is its last argument
        '  File "/v/site-packages/triton/compiler/compiler.py", line 9, in _init_handles\n'
        '    raise OutOfResources(self.metadata.shared, max_shared, "shared memory")',
        "out_of_resources",
        {"resource": "shared memory"},
    ),
    (  # the same raise with placeholder figures wraps a pass failure
        '    raise OutOfResources(0, 0, f"uni_sram {e}")',
        "pass_failure",
        {},
    ),
    (  # a vendor compiler's words for an on-chip buffer it overflowed, with figures
        "error: vmem overflow, requires 4096 bytes while 2048 bytes available",
        "out_of_resources",
        {"resource": "vmem", "required": "4096", "limit": "2048"},
    ),
    (
        "##[error]The job 'Build' has timed out after 90 minutes.",
        "timeout",
        {"seconds": "5400"},
    ),
    (
        "/tmp/tmpab12cd/launcher.c:2:10: fatal error: cuda.h: No such file or directory",
        "toolchain",
        {"tool": "the host's C headers (cuda.h)"},
    ),
    (
        "FAILED tests/test_attn.py::test_decode[64] - AssertionError: max abs diff: 0.031",
        "numeric_mismatch",
        {"test": "tests/test_attn.py::test_decode[64]"},
    ),
    (
        "ValueError: Cannot broadcast <['64', '32'], fp16> with <['32'], fp32>",
        "frontend",
        {},
    ),
    (
        "OSError: cannot open /v/lib/python3.11/site-packages/triton/_C/libtriton.so",
        "harness_error",
        {},
    ),
]


def test_a_binding_mismatch_inside_the_compiler_is_the_compilers() -> None:
    # A vendor backend built against another Triton: the compiler package under test is
    # broken, which must not be filed away as a harness error.
    text = (
        '  File "/v/site-packages/triton/backends/vendor/compiler.py", line 5, in load_dialects\n'
        "TypeError: load_dialects(): incompatible function arguments. The following argument"
        " types are supported:\n    1. (arg0: mlir::MLIRContext) -> None"
    )
    assert signature_of("", text, None).kind not in ("harness_error", "toolchain", "infrastructure")


def test_one_frontend_crash_has_one_key_however_much_of_its_stack_a_report_shows() -> None:
    dump = "Fatal Python error: Segmentation fault\n\nStack (most recent call first):\n"
    site = "/env/lib/python3.11/site-packages/triton"
    deep = (
        f'  File "{site}/compiler/code_generator.py", line 223 in __init__\n'
        f'  File "{site}/compiler/code_generator.py", line 1069 in call_JitFunction\n'
    )
    shallow = f'  File "{site}/compiler/code_generator.py", line 1234 in ast_to_ttir\n'
    staged = shallow + f'  File "{site}/compiler/compiler.py", line 117 in make_ir\n'
    keys = {signature_of("", dump + frames, None).key for frames in (deep, shallow, staged)}
    assert keys == {"crash|SIGSEGV|frontend|?"}
    backend = f'  File "{site}/backends/nvidia/compiler.py", line 5 in make_llir\n'
    assert signature_of("", dump + backend, None).key == "crash|SIGSEGV|make_llir|?"


# Round 4: other tools' words for the same things (host compilers, ptxas's own line, the
# node killing a process, Triton 2's driver errors and launchers).
ROUND_4: list[Case] = [
    (
        "C:/Temp/tmpab12cd/cuda_utils.c:14: error: include file 'Python.h' not found",
        "toolchain",
        {"tool": "the host's C headers (Python.h)"},
    ),
    (  # MSVC's words are localised; its error code is not
        "C:\\Temp\\tmpq\\main.c(12): fatal error C1083: \u65e0\u6cd5\u6253\u5f00:"
        " \u201cPython.h\u201d: No such file or directory",
        "toolchain",
        {"tool": "the host's C headers (Python.h)"},
    ),
    (
        "/usr/bin/ld: cannot find -lcuda: No such file or directory",
        "toolchain",
        {"tool": "the host's libraries (cuda)"},
    ),
    (
        "LINK : fatal error LNK1181: cannot open input file 'cuda.lib'",
        "toolchain",
        {"tool": "the host's libraries (cuda.lib)"},
    ),
    ("Process completed with exit code 137.", "infrastructure", {"component": "node"}),
    (
        "ERROR: No matching distribution found for triton==9.9.9",
        "infrastructure",
        {"component": "package index"},
    ),
    (
        "(raylet) A worker died or was killed while executing a task by an unexpected"
        " system error.",
        "infrastructure",
        {"component": "worker"},
    ),
    (
        "ptxas /tmp/tmpx1.ptx, line 601; error   : Modifier '.a' cannot be combined"
        " with modifier '.b'",
        "codegen",
        {"tool": "ptxas", "message": "Modifier '.a' cannot be combined with modifier '.b'"},
    ),
    (
        "exception=RuntimeError('CUDA: Error- invalid source')>\n"
        'Traceback (most recent call last):\n  File "<string>", line 21, in _my_kernel',
        "driver",
        {"api": "CUDA", "message": "invalid source", "kernel": "_my_kernel"},
    ),
    (  # the caller names an API this Triton lacks
        '  File "/v/site-packages/mylib/norm.py", line 68, in layer_norm\n'
        "AttributeError: module 'triton' has no attribute 'code_gen'",
        "harness_error",
        {},
    ),
    (  # the kernel names it: the frontend rejects the kernel
        '  File "/v/site-packages/triton/compiler/code_generator.py", line 9, in visit\n'
        "AttributeError: module 'triton.language' has no attribute 'make_tensor_descriptor'",
        "frontend",
        {},
    ),
]


# Round 5: MSVC's assertion, the JIT's own reading of a kernel, the CUDA runtime's words for a
# binary that does not fit, a test's own assertion, Inductor's kernel in a resource error.
ROUND_5: list[Case] = [
    (
        'Assertion failed: x && "unsupported", file C:\\src\\lib\\Dialect\\TritonGPU'
        "\\Transforms\\Fuse.cpp, line 12",
        "pass_failure",
        {"abort": 'assertion x && "unsupported"'},
    ),
    (
        '  File "/v/site-packages/triton/runtime/jit.py", line 682, in __init__\n'
        "    self.src = self.src[m.start():]\n"
        "AttributeError: 'NoneType' object has no attribute 'start'",
        "frontend",
        {},
    ),
    ("CUDA error: no kernel image is available for execution on the device", "driver", {}),
    (
        ">       assert (out - ref).abs().max().item() <= 1e-3\n"
        "E       AssertionError: assert 0.5 <= 0.001",
        "numeric_mismatch",
        {},
    ),
    (
        "OutOfMemoryError: out of resource: triton_tem_fused_mm_0\n"
        "Required: 139776  Hardware limit: 101376",
        "out_of_resources",
        {"kernel": "triton_tem_fused_mm_0", "required": "139776", "limit": "101376"},
    ),
]


# Round 6: IPython's frames and Triton 2's backends, any exception out of a backend's IR
# stage, pytest's conftest, the SYCL runtime's codes, the host compiler rejecting the
# launcher source, a tolerance a test asserts, which API a caller lacks.
ROUND_6: list[Case] = [
    (
        "/v/site-packages/triton/compiler/backends/cuda.py in make_llir(src, metadata)\n"
        "--> 173 ret = translate_triton_gpu_to_llvmir(src, capability)\n"
        "KeyError: 'some key'",
        "pass_failure",
        {},
    ),
    (
        '  File "/v/site-packages/triton/backends/amd/compiler.py", line 9, in make_ttgir\n'
        "    pm.run(mod)\nRuntimeError: vector::_M_range_check",
        "pass_failure",
        {},
    ),
    ("ImportError while loading conftest '/w/tests/conftest.py'.", "harness_error", {}),
    (
        "RuntimeError: Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES)",
        "driver",
        {},
    ),
    (
        "/tmp/tmpq1/main.c:354:3: error: 'for' loop initial declarations are only allowed"
        " in C99 mode",
        "toolchain",
        {"tool": "a host C compiler that builds the launcher"},
    ),
    (
        "FAILED test_x.py::test_out[4] - AssertionError: assert 0.0078125 <= ((2 * 0.0) + 3e-05)",
        "numeric_mismatch",
        {"test": "test_x.py::test_out[4]"},
    ),
    (
        "ERROR [config.py:32] Failed to import kernels. Error: module 'triton.language' has no"
        " attribute 'constexpr_function'",
        "harness_error",
        {"package": "triton.language", "form": "no attribute constexpr_function"},
    ),
]


# Round 7: an assertion the report wrapped, a type's missing attribute, a frame whose "File"
# was cut, the node's file system, a tool Triton cannot find, Python's caret markers.
ROUND_7: list[Case] = [
    (
        "python: lib/Dialect/TritonGPU/Transforms/X.cpp:5: f()\nconst: Assertion `a ==\nb' failed.",
        "pass_failure",
        {"abort": "assertion in f", "condition": "a == b"},
    ),
    (
        '  File "/v/site-packages/torch/_inductor/runtime/triton_heuristics.py", line 9, in'
        " make_launcher\n    binary.__class__.launch_enter_hook,\n"
        "                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "InductorError: AttributeError: type object 'CompiledKernel' has no attribute 'hook'",
        "harness_error",
        {"package": "compiledkernel", "form": "no attribute hook"},
    ),
    (
        '"/v/site-packages/triton/runtime/jit.py", line 78, in visit_Attribute\n'
        "AttributeError: module 'triton.language' has no attribute 'cast'",
        "frontend",
        {},
    ),
    (
        '  File "/v/site-packages/triton/runtime/build.py", line 69, in _load_module\n'
        "ImportError: /root/.triton/cache/X/cuda_utils.so: cannot read file data: Stale"
        " file handle",
        "infrastructure",
        {},
    ),
    ("RuntimeError: Cannot find ptxas.exe", "toolchain", {"tool": "ptxas"}),
]


# Round 8: the host failing a process, a vendor's binary compiler run as a subprocess, a
# kernel that is a plain function, a test's words for a wrong answer, ray's dead actor, an
# op named as a diagnostic's subject.
ROUND_8: list[Case] = [
    (
        "terminate called after throwing an instance of 'std::system_error'\n"
        "LLVM ERROR: pthread_create failed: Resource temporarily unavailable",
        "crash",
        {},
    ),
    (
        "subprocess.CalledProcessError: Command '['/opt/bin/bishengir-compile', 'k.mlir',"
        " '-o', 'k']' returned non-zero exit status 1.\n"
        "loc(\"m.mlir\":1:1): error: 'tensor.empty' op Unsupported op",
        "codegen",
        {"tool": "binary", "message": "bishengir-compile"},
    ),
    (
        "    kernel[grid](x, y)\nTypeError: 'function' object is not subscriptable",
        "harness_error",
        {},
    ),
    ("Kernel ran. Checking...\nTest failed (incorrect output)", "numeric_mismatch", {}),
    (
        "ray.exceptions.RayTaskError(ActorDiedError): ray::Runner.run() (pid=1)",
        "infrastructure",
        {"component": "worker"},
    ),
    (
        "error: triton_xpu.unpack reached lowering without a buffer\nPassManager::run failed",
        "pass_failure",
        {"op": "triton_xpu.unpack"},
    ),
]


# Round 9: a CI runner lost, the loader named in the error, a dtype the target lacks, a
# native library that does not load, an op named where no diagnostic line survived, a test
# id in Markdown bold.
ROUND_9: list[Case] = [
    (
        "The self-hosted runner: gpu-7 lost communication with the server.",
        "infrastructure",
        {"component": "runner"},
    ),
    (
        "SystemError: <built-in function load_binary> returned NULL without setting an exception",
        "driver",
        {},
    ),
    (
        "ValueError: type fp8e4nv not supported in this architecture. The supported fp8"
        " dtypes are ('fp8e5',)",
        "frontend",
        {},
    ),
    (
        "ImportError: DLL load failed while importing libtriton: Die Routine fehlt.",
        "harness_error",
        {"package": "libtriton", "form": "does not load"},
    ),
    (
        "oc(\"k.py\":3:4)): error: 'tt.fp_to_fp' op operand #0 must be floating point",
        "pass_failure",
        {"op": "tt.fp_to_fp"},
    ),
    (
        "**FAILED tests/t.py::test_x[a-1]** - Mismatched elements: 3 / 8",
        "numeric_mismatch",
        {"test": "tests/t.py::test_x[a-1]"},
    ),
]


# Round 10: the kernel's own log of a segfault, CUDA's device-side assertion, C++'s
# headers without an extension, the runtime refusing a launch's configuration.
ROUND_10: list[Case] = [
    (
        "[Apr 23 15:57:34] python[1788]: segfault at 18 ip 00007f63 sp 00007fff error 4 in"
        " libx.so[28a57,7f63+6b000]",
        "crash",
        {"signal": "SIGSEGV"},
    ),
    ("Assertion `index out of bounds` failed.", "crash", {}),
    (
        "fatal error: 'climits' file not found\n   41 | #include <climits>",
        "toolchain",
        {"tool": "the host's C headers (climits)"},
    ),
    (
        "RuntimeError: operator name is my_kernel.\nKernelLaunch failed because value 9 for"
        " parameter coreDim is invalid.",
        "driver",
        {"kernel": "my_kernel"},
    ),
]

ROUND_11: list[Case] = [
    # An assertion in code every pass shares, no pass named: the process aborted.
    (
        "python: /src/llvm-project/llvm/include/llvm/ADT/SmallVector.h:291: T&"
        " llvm::SmallVectorTemplateCommon<T>::operator[](size_type): Assertion `idx < size()'"
        " failed.\nAborted (core dumped)",
        "crash",
        {},
    ),
    # The same assertion where the log names the pass that ran: the pass failed.
    (
        "python: /src/llvm-project/llvm/include/llvm/ADT/SmallVector.h:291: T&"
        " llvm::SmallVectorTemplateCommon<T>::operator[](size_type): Assertion `idx < size()'"
        " failed.\n #7 0x7f mlir::triton::gpu::TritonGPUCoalescePass::runOnOperation()",
        "pass_failure",
        {},
    ),
    # An -opt tool runs nothing but a pass pipeline.
    (
        "triton-opt: /x/llvm/include/llvm/Support/Casting.h:566: decltype(auto) llvm::cast(const"
        ' From&): Assertion `isa<To>(Val) && "cast<Ty>() argument of incompatible type!"\' failed.',
        "pass_failure",
        {},
    ),
    ("RuntimeError: `ptxas` raised SIGABRT", "codegen", {"tool": "ptxas", "message": "crashed"}),
    (
        "RuntimeError: Please run `ptxas /tmp/t.ptx` to confirm that this is a bug in `ptxas`\n"
        "ptxas fatal   : Input file '/tmp/t.ptx' could not be opened",
        "codegen",
        {"tool": "ptxas", "message": "crashed"},
    ),
    (
        "RuntimeError: Device does not support shared memory of 98304bytes",
        "out_of_resources",
        {"resource": "shared memory"},
    ),
    (
        '  File "/site-packages/triton/backends/nvidia/driver.py", line 709, in __call__\n'
        "    global_scratch = allocate_scratch(self.global_scratch_size)\n"
        "RuntimeError: Kernel requires a runtime memory allocation, but no allocator was set."
        " Use triton.set_allocator to specify an allocator.",
        "harness_error",
        {},
    ),
    (
        ">       layer.op.forward(x)\nE       AttributeError: 'NoneType' object has no attribute"
        " 'forward'\n\ntests/test_layer.py:12: AttributeError",
        "harness_error",
        {},
    ),
    ("RuntimeError: CUDA error: invalid device ordinal", "driver", {}),
    ("RuntimeError: No HIP GPUs are available", "driver", {}),
]

ROUND_12: list[Case] = [
    (
        "AssertionError:\nArrays are not almost equal to 3 decimals\n\nx and y nan location mismatch:",
        "numeric_mismatch",
        {},
    ),
    (
        '  File "t.py", line 9, in test_op\n    np.testing.assert_array_equal(a, b)\nAssertionError',
        "numeric_mismatch",
        {},
    ),
    (
        "FAILED t.py::test_x[1] - AssertionError: Tensor must have same nan elements",
        "numeric_mismatch",
        {"test": "t.py::test_x[1]"},
    ),
    # The argument binder Triton generates meets a dtype this release does not know.
    (
        '  File "<string>", line 2, in dynamic_func\n'
        '  File "/x/triton/_utils.py", line 105, in canonicalize_dtype\n'
        "    return type_canonicalisation_dict[dtype_str]\nKeyError: 'float4_e2m1'",
        "frontend",
        {},
    ),
    (
        "[rank0]:[E1 ProcessGroupNCCL.cpp:1743] [PG ID 0 Rank 0] ProcessGroupNCCL's watchdog got"
        " stuck for 480 seconds without making progress in monitoring enqueued collectives.",
        "infrastructure",
        {},
    ),
    ("FAILED a.py::t[1] - worker 'gw3' crashed while running 'a.py::t[1]'", "crash", {}),
    (
        "error: total scratch space exceeds HW supported limit for kernel k:\n"
        "  300000 bytes (max permitted PTSS 262144 bytes)\nerror: backend compiler failed build.",
        "out_of_resources",
        {"resource": "scratch space"},
    ),
    (
        "RuntimeError: Triton Error [ZE]: 0x70000004\n\nL0 build module failed. Log:\nerror: bad"
        "\nin kernel: 'my_kernel'\nerror: backend compiler failed build.",
        "codegen",
        {"kernel": "my_kernel"},
    ),
]

ROUND_13: list[Case] = [
    # glibc's assertion header in a pass's source, the report cut before the condition.
    (
        "python3: /src/lib/Dialect/TritonGPU/Transforms/Pipeliner.cpp:88: void f(): Assertio",
        "pass_failure",
        {},
    ),
    ("LLVM ERROR: Can't find libdevice at /x/lib/libdevice.10.bc", "toolchain", {}),
    ("/bin/sh: 1: /opt/llvm/bin/clang++: not found", "toolchain", {}),
    (
        "/x/include/sycl_functions.h:13:10: fatal error:\n      'level_zero/ze_api.h' file not found",
        "toolchain",
        {},
    ),
    # The binary holds no code for this device; torch's advice about DSA is not a fault.
    (
        "RuntimeError: HIP error: invalid device function\nCompile with `TORCH_USE_HIP_DSA` to"
        " enable device-side assertions.",
        "driver",
        {},
    ),
    (
        "[HIP] x.h:85 fail to call hipModuleLoad(&m, path) ---> [HIP error](file not found)",
        "driver",
        {},
    ),
    (
        "RuntimeError: level_zero backend failed with error: 20 (UR_RESULT_ERROR_DEVICE_LOST)",
        "crash",
        {},
    ),
    ("[drm] Tile0: GT0: Engine memory CAT error [18]: class=ccs, guc_id=12", "crash", {}),
    ("(raylet) Raylet is terminated. Termination is unexpected.", "infrastructure", {}),
    # A limit exceeded with its figures, inside the driver's module build log.
    (
        "RuntimeError: Triton Error [ZE]: ZE_RESULT_ERROR_MODULE_BUILD_FAILURE\nL0 build module"
        " failed. Log:\nerror: total scratch space exceeds HW supported limit for kernel k_1:"
        " 271680 bytes (max permitted PTSS 262144 bytes)",
        "out_of_resources",
        {"kernel": "k_1", "resource": "scratch space"},
    ),
]

ROUND_14: list[Case] = [
    (
        "E0205 [0/0] Triton compilation failed: triton_per_fused_add_0\n"
        "E0205 [0/0] def triton_per_fused_add_0(in_ptr0, out_ptr0, xnumel):",
        "compile_error",
        {"kernel": "triton_per_fused_add_0"},
    ),
    ("The following tests are hanging:\ntest_a.py::test_b[1]", "timeout", {}),
    (
        "/src/bootstrap_uid.cpp:bootstrap_net_init:160: No socket interface found\n"
        "/src/init.cu:269: non-zero status: 7 bootstrap pre-initialization failed",
        "infrastructure",
        {},
    ),
    ("test_core.py::test_op[1] Windows fatal exception: access violation", "crash", {}),
    (
        "[ConvertTritonIRToLinalgIR] encounters error: PassManager::run failed\n"
        "  -> _my_jit_function[grid](...) at ~/.cache/k.py",
        "pass_failure",
        {"kernel": "_my_jit_function"},
    ),
]

ROUND_15: list[Case] = [
    (
        "Memory access fault by GPU node-2 (Agent handle: 0x1) on address 0x7f00. Reason:"
        " Page not present or supervisor privilege.",
        "crash",
        {},
    ),
    (
        "Fatal Python error: PyThreadState_Get: the function must be called with the GIL held\n"
        '  File "/x/triton/backends/nvidia/compiler.py", line 204 in make_ptx',
        "crash",
        {},
    ),
    (
        "error: k.py:211:0: stack frame size (164332) exceeds limit (131056) in function 'k_0'",
        "out_of_resources",
        {"resource": "stack frame size"},
    ),
    (
        "Command '['pip', 'install', 'triton']' died with <Signals.SIGKILL: 9>.",
        "infrastructure",
        {},
    ),
    (
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "NotImplementedError: could not find kernel for HigherOrderOperator x",
        "compile_error",
        {},
    ),
    ("HIP error: Invalid device function", "driver", {}),
    ("RuntimeError: No XPU devices are available.", "driver", {}),
    ("UserWarning: XPU Device count is zero!", "driver", {}),
    ("clang++: error: gen compiler command failed with exit code 1", "toolchain", {}),
]

ROUND_16: list[Case] = [
    (
        "terminate called after throwing an instance of 'c10::AcceleratorError'\n"
        "  what():  HIP error: an illegal memory access was encountered\n"
        "Search for `hipErrorIllegalAddress' in the HIP documentation for more information.",
        "crash",
        {},
    ),
    (
        "[  +0.000012] amdgpu 0000:03:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:40)\n"
        "[  +0.000002] amdgpu 0000:03:00.0: amdgpu: GCVM_L2_PROTECTION_FAULT_STATUS:0x00841051",
        "crash",
        {},
    ),
    # An -opt tool's assertion, the report cut inside the condition: the pass it ran failed.
    (
        "$ triton-opt --convert-triton-gpu-to-llvm r.ttgir\n\ntriton-opt: /src/lib/Tools/"
        "LinearLayout.cpp:512: LinearLayout LinearLayout::reshapeIns() const: Assertion `a == b",
        "pass_failure",
        {},
    ),
    # The same cut assertion from Python, no pass named: the process aborted.
    (
        "python: /src/lib/Tools/LinearLayout.cpp:512: LinearLayout LinearLayout::reshapeIns()"
        " const: Assertion `a == b",
        "crash",
        {},
    ),
    (
        '{-# external_resources: { mlir_reproducer: {\n  pipeline: "builtin.module(tritongpu-'
        'coalesce, tritonamdgpu-fold-true-cmpi)",',
        "pass_failure",
        {},
    ),
    (
        "torch._inductor.exc.InductorError: RuntimeError: LLD failed to link hsaco source",
        "codegen",
        {"tool": "lld"},
    ),
]

# Round 17 (from frozen-17's blind misses; the round 16 rules with the resemblance guess).
ROUND_17: list[Case] = [
    # A backend looking for its SDK fails an assertion: the node lacks the SDK.
    (
        '  File "/v/site-packages/triton/backends/intel/driver.py", line 80, in find_sycl\n'
        "    assert sycl_dirs\nAssertionError",
        "toolchain",
        {},
    ),
    (
        '  File "/v/site-packages/triton/backends/nvidia/driver.py", line 31, in libcuda_dirs\n'
        '    assert any(os.path.exists(p) for p in dirs), "libcuda.so cannot be found"\n'
        "AssertionError: libcuda.so cannot be found",
        "toolchain",
        {},
    ),
    (
        "RuntimeError: zero headers not found, please set LEVEL_ZERO_ROOT",
        "toolchain",
        {"tool": "the zero headers"},
    ),
    ("ValueError: Cannot find backend for musa", "backend_resolution", {}),
    # A half-installed package: the import machinery is the innermost frame, whatever it
    # raised, and a compile wrapper around it does not make it the compiler's.
    (
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "KeyError: 'vendor.runtime.tiles'\n"
        '  File "/v/site-packages/vendor/runtime/__init__.py", line 3, in <module>\n'
        "    from .tiles import pick\n"
        '  File "<frozen importlib._bootstrap>", line 1176, in _find_and_load\n'
        "KeyError: 'vendor.runtime.tiles'",
        "harness_error",
        {},
    ),
    # Only a profile of where the time goes: the process does not finish.
    (
        "  71.20%  libtriton.so   [.] mlir::topologicalSort\n"
        "   9.04%  libc.so.6      [.] malloc\n"
        "   2.11%  libtriton.so   [.] mlir::Operation::getBlock",
        "timeout",
        {},
    ),
]


# Round 18 (from frozen-18's blind misses; round 17 with the resemblance guess).
ROUND_18: list[Case] = [
    # pip could not build a package of the environment: it does not install.
    (
        "      error: command 'gcc' failed\n      [end of output]\n"
        "  ERROR: Failed building wheel for flash-attn\nFailed to build flash-attn",
        "harness_error",
        {},
    ),
    # tl.arange's verifier in older releases' words: the kernel's source breaks the rule.
    (
        'loc("k.py":9:18): error: Number of elements must be power-of-two, but %3 = '
        '"tt.make_range"() <{end = 96 : i32, start = 0 : i32}> : () -> tensor<96xi32>',
        "frontend",
        {},
    ),
    (
        "RuntimeError: Found Quadro P4000 which is too old to be supported by the triton GPU"
        " compiler, which is used as the backend.",
        "driver",
        {},
    ),
    ("LLVM ERROR: Broken module found, compilation aborted!", "codegen", {"tool": "llvm"}),
    (
        "RuntimeError: ACME backend expected acmebin at /tmp/k.o.acmebin, but it was not found",
        "codegen",
        {"tool": "binary"},
    ),
    # A C++ CHECK (glog, absl) failed: the process aborted.
    (
        "F0101 00:00:00.000 42 tiling.cc:88] Check failed: a == b (4 vs. 3)\n"
        "*** Check failure stack trace: ***\n    @     0x5ce5  Abort()",
        "crash",
        {},
    ),
    # A message a web table re-flowed, its line breaks left as runs of spaces.
    (
        "a.py | T | t | RuntimeError: Failed to find C   compiler. Please specify via CC",
        "toolchain",
        {"tool": "the host C compiler (CC)"},
    ),
]


# Round 19 (from frozen-19's blind misses; round 18 with the resemblance guess).
ROUND_19: list[Case] = [
    # ptxas's per-line diagnostic of severity "fatal" is the failure, not its summary line.
    (
        "ptxas k.ptx, line 7; fatal   : Unsupported .version 8.7; current version is '8.1'\n"
        "ptxas fatal   : Ptx assembly aborted due to errors",
        "codegen",
        {"message": "Unsupported .version 8.7; current version is '8.1'"},
    ),
    (
        "FileNotFoundError: [Errno 2] No such file or directory: "
        "'/home/u/.triton/cache/0a1b/add_kernel.json.tmp.pid_9_1234'",
        "compile_error",
        {},
    ),
    (
        "ERROR 01-01 00:00:00 [multiproc_executor.py:1] Worker proc VllmWorker-3 died"
        " unexpectedly, shutting down executor.",
        "infrastructure",
        {},
    ),
    ("AssertionError: libcuda.so cannot found!", "toolchain", {"tool": "libcuda.so"}),
]


# Round 20 (from frozen-20's blind misses; round 19 with the resemblance guess).
ROUND_20: list[Case] = [
    (
        "torch._dynamo.utils: [ERROR] RMSE (res-fp64): 0.0041, (ref-fp64): 0.00000\n"
        "torch._dynamo.utils: [ERROR] Accuracy failed for key name fc.weight.grad\nfail_accuracy",
        "numeric_mismatch",
        {},
    ),
    # A native backtrace through libc's abort, no signal named: the process aborted.
    (
        "4  libc.so.6  0x00007f00 raise + 22\n5  libc.so.6  0x00007f01 abort + 211\n"
        "6  triton-opt 0x000055ed5ae51d8a",
        "crash",
        {"signal": "SIGABRT"},
    ),
    # The launcher's C source rejected by the host compiler, with no path before its name
    # (toolchain in round 20; from round 22 the launcher's own source rejected is Triton's
    # compile error, and only the compiler's dialect or age is the node's).
    (
        "__triton_launcher.c:88:5: error: cannot jump from this goto statement to its label",
        "compile_error",
        {},
    ),
    (
        "Helion compiler triton codegen error for @helion.kernel(config=helion.Config())\n"
        "Traceback (most recent call last):",
        "compile_error",
        {},
    ),
]


# Round 21 (from frozen-21's blind misses; round 20 with the resemblance guess).
ROUND_21: list[Case] = [
    # Triton 2.x built the launcher in triton/common/build.py: gcc failing there is the node's.
    (
        '  File "/v/site-packages/triton/common/build.py", line 90, in _build\n'
        "    ret = subprocess.check_call(cc_cmd)\n"
        "subprocess.CalledProcessError: Command '['/usr/bin/gcc', '/tmp/t/main.c', '-O3',",
        "toolchain",
        {},
    ),
    # The network or a remote service: an HTTP status, a rate limit, object storage.
    (
        "requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url: "
        "https://hub.example/api/models/m",
        "infrastructure",
        {"component": "network"},
    ),
    (
        "Error retrieving file list: Server error '503 Service Unavailable' for url 'https://h/x'",
        "infrastructure",
        {"component": "network"},
    ),
    (
        "requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='h', port=443): Read timed out.",
        "infrastructure",
        {"component": "network"},
    ),
    (
        "botocore.exceptions.ClientError: An error occurred (AccessDenied) when calling the"
        " PutObject operation: Access Denied",
        "infrastructure",
        {"component": "network"},
    ),
    # A shared library of the install does not load; a driver's own library is the node's.
    (
        "OSError: /v/site-packages/pkg/_ext.abi3.so: undefined symbol: PyFoo_New",
        "harness_error",
        {},
    ),
    (
        "Error: ERROR:libfoo_smi.so.2: cannot open shared object file: No such file or directory",
        "harness_error",
        {},
    ),
    # The caller passes a launch option the installed Triton does not take.
    (
        "TypeError: my_kernel() got an unexpected keyword argument 'num_ctas'",
        "harness_error",
        {},
    ),
    # LLVM aborting in a stage that emits machine code, seen on the dump's current thread.
    (
        "LLVM ERROR: unsupported opcode in DIExpression\nFatal Python error: Aborted\n\n"
        "Current thread 0x00007f (most recent call first):\n"
        '  File "/x/triton/backends/intel/compiler.py", line 366 in make_spv\n'
        '  File "/x/triton/compiler/compiler.py", line 324 in compile\n',
        "codegen",
        {"stage": "make_spv"},
    ),
    # No device at all, in ROCm's and a CI tool's words.
    ('HIP API error = 0100 "no ROCm-capable device is\ndetected"', "driver", {}),
    ("Query device error: cannot get device count\nError: No devices found", "driver", {}),
    # GoogleTest caught a Windows access violation.
    (
        "unknown file: error: SEH exception with code 0xc0000005 thrown in the test body.",
        "crash",
        {},
    ),
    # A C++ or CUDA compiler rejects a generated source (not Triton's C launcher).
    (
        '/tmp/tmpab12cd.cu(210): error: identifier "foo" is undefined\n'
        '1 error detected in the compilation of "/tmp/tmpab12cd.cu".',
        "codegen",
        {"tool": "cc"},
    ),
    # (A launcher's C++, triton-cpu's: codegen in round 21, a compile error from round 22.)
    ("/tmp/t/main.cpp:9:3: error: expected ';' before '}' token", "compile_error", {}),
    ("/tmp/tmpab12cd/kernel.cpp:9:3: error: expected ';' before '}' token", "codegen", {}),
    # Pallas has no lowering for a primitive the kernel uses.
    (
        "NotImplementedError: Unimplemented primitive in Pallas GPU lowering: erf_inv.",
        "frontend",
        {},
    ),
    # XLA's runtime refuses a kernel's shared memory, no figures.
    (
        "INTERNAL: Shared memory requested exceeds device resources.",
        "out_of_resources",
        {"resource": "Shared memory"},
    ),
    # unittest's FAIL header names the test of a numeric mismatch.
    (
        "FAIL: test_mean (test_ops.TestOps.test_mean)\n----\n"
        "AssertionError: Tensor-likes are not close!",
        "numeric_mismatch",
        {"test": "test_mean (test_ops.TestOps.test_mean)"},
    ),
]


# Round 22 (from frozen-22's blind misses; round 21 with the resemblance guess).
ROUND_22: list[Case] = [
    (
        "FAILED t/test_x.py::test_a[1] - AssertionError: Torch not compiled with CUDA enabled",
        "harness_error",
        {},
    ),
    # Any program the node lacks: the shell's words, GNU's "missing" script.
    ("/w/build.sh: line 9: bison: command not found", "toolchain", {"tool": "bison"}),
    (
        "WARNING: 'makeinfo' is missing on your system.\nmake[3]: *** [Makefile:9: a.info] Error 127",
        "toolchain",
        {"tool": "makeinfo"},
    ),
    # A job killed from outside, where nothing else in the log decides.
    (
        "[10/20] Linking CXX executable x\n/r/_temp/a.sh: line 58: 38771 Killed"
        "                  docker exec -t c bash -c make",
        "infrastructure",
        {"reason": "Killed"},
    ),
    ("LLVM ERROR: pthread_join failed: Invalid argument", "crash", {}),
    # The host compiler rejects the launcher's own source: Triton's compile error; for its
    # C dialect it stays the node's compiler.
    (
        "/tmp/t/__triton_launcher.c:90:5: error: use of undeclared identifier 'CUstream'",
        "compile_error",
        {},
    ),
    (
        "/tmp/t/main.c:354:3: error: 'for' loop initial declarations are only allowed in C99 mode",
        "toolchain",
        {},
    ),
    # Helion's frontend propagates the kernel's types.
    (
        '  File "/h/helion/_compiler/type_propagation.py", line 1703, in _assign\n'
        "IndexError: list index out of range",
        "frontend",
        {},
    ),
    ("original: [1.0, 2.0]\nvariant : [0.0, 0.0]\nequal: False", "numeric_mismatch", {}),
    (
        "error: couldn't allocate output register for constraint 'f'",
        "codegen",
        {"tool": "llc"},
    ),
    # A sanitizer's report: inside a pass's sources it is the pass's failure; elsewhere a
    # crash.
    (
        "==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x5\n"
        "    #4 0x5 in f [lib/Dialect/TritonGPU/Transforms/Pipeliner/Schedule.cpp:11]:5",
        "pass_failure",
        {},
    ),
    (
        "==1==ERROR: AddressSanitizer: stack-buffer-overflow on address 0x5\n"
        "    #0 0x5 in main [tools/runner/main.cc:9]",
        "crash",
        {},
    ),
]


# Round 23 (from frozen-23's blind misses; round 22 with the resemblance guess).
ROUND_23: list[Case] = [
    # Triton 0.x's driver exception for a kernel's bad address: a device fault.
    (
        "terminate called after throwing an instance of 'triton::driver::exception::cuda::"
        "illegal_address'\n  what():  CUDA: Error- illegal address\nAborted (core dumped)",
        "crash",
        {},
    ),
    # compute-sanitizer's memcheck caught the kernel's access.
    (
        "========= Invalid __global__ read of size 4 bytes\n=========     at 0x70 in k\n"
        "=========     Address 0x7f00 is out of bounds",
        "crash",
        {},
    ),
    (
        "Stack dump without symbol names (ensure you have llvm-symbolizer in your PATH):\n"
        "0  libtriton.so 0x00007c5fff21e850",
        "crash",
        {},
    ),
    (
        "'gfx942' is not a recognized processor for this target (ignoring processor)\n"
        "LLVM ERROR: Cannot emit physreg copy instruction",
        "codegen",
        {"tool": "llvm"},
    ),
    # An assertion in LLVM's shared code, with the pass named in Intel's words.
    (
        "python: /l/llvm/Support/Casting.h:650: llvm::dyn_cast(...)\n"
        'Assertion `detail::isPresent(Val) && "dyn_cast"\' failed.\n\n'
        "The failing pass is:\nTritonIntelGPUAccelerateMatmul",
        "pass_failure",
        {},
    ),
    # The code generator's call of its own builder, under a compilation banner.
    (
        "triton.compiler.errors.CompilationError: at 2:8:\n    acc = tl.dot(x, w)\n        ^\n"
        "create_dot(): incompatible function arguments. The following argument types are"
        " supported:",
        "frontend",
        {},
    ),
    (
        "PermissionError: [WinError 32] The process cannot access the file because it is being"
        " used by another process: 'D:\\b\\dist\\x.h'",
        "infrastructure",
        {},
    ),
    (
        "lib_error: Could not load /opt/x/lib/foolib/library/Kernels_gfx950.dat\n"
        "lib_error: Could not initialize the kernel library",
        "harness_error",
        {},
    ),
]

ROUND_24: list[Case] = [
    # A compiler built from its source tree: a warning made an error (GCC's words wrapped
    # over lines, Clang's), a header its build generates (TableGen's .inc) missing.
    (
        "FAILED: lib/Dialect/IR/CMakeFiles/IR.dir/Ops.cpp.o\n"
        "/src/triton/lib/Dialect/IR/Ops.cpp:280:1: error: control\n"
        "reaches end of non-void function [-Werror=return-type]",
        "compile_error",
        {"source": "Ops.cpp"},
    ),
    (
        "/w/triton/third_party/x/lib/Planner.cpp:675:17: error: 'run' overrides a member"
        " function but is not marked 'override' [-Werror,-Winconsistent-missing-override]",
        "compile_error",
        {"source": "Planner.cpp"},
    ),
    (
        "/s/include/triton/Dialect/IR/Interfaces.h:10:10: fatal error:"
        " 'triton/Dialect/IR/OpInterfaces.h.inc' file not found",
        "compile_error",
        {"source": "Interfaces.h"},
    ),
    # An SDK's header missing is still the node's toolchain.
    (
        "/tmp/tmpab12cd/main.c:1:10: fatal error: Python.h: No such file or directory",
        "toolchain",
        {},
    ),
    # Host code another compiler generated (AOTriton's autotune tables).
    (
        "src/flash/autotune.fwd/FONLY__bf16___gfx1151.cc:81:14: error: no member named 'x'",
        "compile_error",
        {},
    ),
    # LLVM's tools rejecting the LLVM IR handed to them: on the .ll file, or with the IR
    # call quoted under the diagnostic.
    (
        "  /x/bin/opt: peano-linked_gelu.ll:\n  error: floating point constant invalid for type\n"
        "    %2 = fmul <16 x bfloat> %1, splat (float 1.702000e+00)",
        "codegen",
        {"tool": "llvm"},
    ),
    (
        "  error: floating point constant invalid for type\n"
        "    call <16 x bfloat> @llvm.aie2p.v16accfloat.to.v16bf16(",
        "codegen",
        {"tool": "llvm"},
    ),
    # A SPIR-V tool failing on the SPIR-V the backend generated.
    (
        "E   subprocess.CalledProcessError: Command '['/r/bin/spirv-dis', '/tmp/tmpsa8ey3op']'"
        " returned non-zero exit status 252.\nerror: 7: Invalid capability operand: 6257",
        "codegen",
        {"tool": "binary"},
    ),
    # A remote host closing the connection under a download; a CI runner's own file
    # system refusing a write (libuv's errno words).
    (
        "downloading and extracting https://example.org/llvm-11.tar.xz ...\n"
        "error: Remote end closed connection without response",
        "infrastructure",
        {},
    ),
    (
        "Error: EACCES: permission denied, open '/__w/_temp/_runner_file_commands/save_state'\n"
        "    at Object.writeFileSync (node:fs:2415:20)",
        "infrastructure",
        {},
    ),
    # A wrapper whose message is the exception it wraps: the innermost decides (a file of
    # Triton's cache gone, under Inductor's error).
    (
        "torch._inductor.exc.InductorError: FileNotFoundError: [Errno 2] No such file or"
        " directory: '/h/triton_cache_25/E5DA/triton_red_fused_0.json'",
        "compile_error",
        {},
    ),
]

ROUND_25: list[Case] = [
    # An assertion of LLVM's machine-code generator, however the report wrapped it.
    (
        "llvm/lib/CodeGen/LiveVariables.cpp:159: void\nllvm::LiveVariables::HandleVirtRegUse"
        ' (llvm::Register): Assertion\n`MRI->getVRegDef(Reg) && "Register use before def!"\''
        " failed.",
        "codegen",
        {"tool": "llvm"},
    ),
    # A release that says which SDK version it needs.
    ("Triton requires CUDA 11.4+", "toolchain", {}),
    # A header of the compiler's own install rejecting the compile (a header for GPU
    # offloading, included by the launcher from a HIP SDK on Windows): the toolchain.
    (
        "In file included from C:\\Temp\\tmpebjwqxit\\main.c:4:\n"
        "C:\\Program Files\\AMD\\ROCm\\6.2\\lib\\clang\\19\\include\\llvm_libc_wrappers\\stdio.h:10:2:"
        ' error: "This file is for GPU offloading compilation only"',
        "toolchain",
        {},
    ),
    (
        "/usr/lib/llvm-19/lib/clang/19/include/cuda_wrappers/new:12:2: error: x\n"
        "/usr/include/stdio.h:27:10: error: unknown type name '__gnuc_va_list'",
        "toolchain",
        {},
    ),
]

ROUND_27: list[Case] = [
    # A package's build script failing in its own Python code: the package does not install.
    (
        'Traceback (most recent call last):\n  File "/src/pkg/setup.py", line 88, in'
        ' build_extension\n    cmake_args = ["-DLLVM_DIR=" + llvm_dir]\nTypeError: can only'
        ' concatenate str (not "NoneType") to str',
        "harness_error",
        {},
    ),
    # The same script running a build whose compiler rejects a source: that source's error.
    (
        "/src/lib/Foo.cpp:12:3: error: use of undeclared identifier 'bar'\n"
        '  File "/src/setup.py", line 120, in build_extension\n'
        "subprocess.CalledProcessError: Command '['cmake', '--build', '.']' returned non-zero"
        " exit status 1.",
        "compile_error",
        {},
    ),
    # Triton 1.x's and 2.0's code generator visiting the kernel's syntax tree.
    (
        '  File "/usr/lib/python3.8/site-packages/triton/code_gen.py", line 703, in'
        " visit_Attribute\n    assert isinstance(lhs, triton.language.tensor)\nAssertionError",
        "frontend",
        {},
    ),
    (
        '  File "/opt/triton/python/triton/compiler.py", line 291, in visit_For\n'
        "    raise RuntimeError('Only `range` iterator currently supported')\n"
        "RuntimeError: Only `range` iterator currently supported",
        "frontend",
        {},
    ),
    # The host's compiler does not know an option the build passes: its age.
    ("g++: error: unrecognized command-line option '-std=c++20'", "toolchain", {}),
    ("clang-14: error: unknown argument: '-fno-foo'", "toolchain", {}),
    # The shell finds no build tool a build step runs (a pip build environment's cmake gone).
    (
        "/bin/bash: line 1: /tmp/pip-build-env-x/bin/cmake: No such file or directory\n"
        "FAILED: build.ninja\nninja: error: rebuilding 'build.ninja': subcommand failed",
        "toolchain",
        {},
    ),
    # gdb's backtrace: an abort inside one of Triton 1.x's passes, and one outside any.
    (
        "#1  0x00007f in raise () from /lib/libc.so.6\n#2  0x00007f in abort () from"
        " /lib/libc.so.6\n#4  0x00007f in triton::codegen::transform::coalesce::run("
        "triton::ir::module&) () at lib/codegen/transform/coalesce.cc:80",
        "pass_failure",
        {},
    ),
    (
        "#1  0x00007f in raise () from /lib/libc.so.6\n#2  0x00007f in abort () from"
        " /lib/libc.so.6\n#3  0x00007f in main () at app.c:9",
        "crash",
        {"signal": "SIGABRT"},
    ),
    # MLIR quotes the IR line it rejects, the caret under the op.
    (
        "in.mlir:9:11: error: unexpected op in ptr sequence\n"
        "    %7 = tt.atomic_cas acq_rel, gpu, %1, %2, %3 : (tensor<8x!tt.ptr<i32>>) -> i32\n"
        "         ^",
        "pass_failure",
        {"op": "tt.atomic_cas"},
    ),
]

ROUND_28: list[Case] = [
    # A tool the compile runs is there but cannot be run: the node's toolchain.
    (
        "PermissionError: [Errno 13] Permission denied:"
        " '/venv/lib/python3.11/site-packages/triton/backends/nvidia/bin/ptxas'",
        "toolchain",
        {},
    ),
    # LLVM's target rejects the target it was asked to emit for.
    (
        "LLVM ERROR: PTX version 7.8 does not support target 'sm_90a'. Minimum\n"
        "required PTX version is 8.0.",
        "codegen",
        {"tool": "llvm"},
    ),
    # Inductor's words for a compile worker that died.
    (
        "RuntimeError: A compilation subprocess exited unexpectedly. This is likely due to a"
        " crash. To facilitate debugging, you can re-run with TORCHINDUCTOR_COMPILE_THREADS=1",
        "crash",
        {},
    ),
    # A C++ exception thrown in Triton 1.x's lowering (std::map::at), as a profiler's stack.
    (
        "std::__throw_out_of_range(char const*) (@std::__throw_out_of_range(char const*):17)\n"
        "triton::codegen::generator::init_idx(triton::ir::value*) (lib/codegen/selection/"
        "generator.cc:2781)",
        "pass_failure",
        {},
    ),
    # Clang on Windows: the MSVC linker cannot open a library the launcher links.
    (
        "C:\\Temp\\tmpab\\main.c:8: warning: x\nclang: error: linker command failed with exit"
        " code 1181 (use -v to see invocation)",
        "toolchain",
        {},
    ),
]

ROUND_29: list[Case] = [
    # PyTorch's helper finding none of an API's names across releases: versions disagree.
    (
        '  File "/x/torch/_inductor/runtime/triton_heuristics.py", line 369, in'
        ' _precompile_config\n    cluster_dims = get_first_attr(binary, "cluster_dims",'
        ' "clusterDims")\n  File "/x/torch/_dynamo/utils.py", line 2428, in get_first_attr\n'
        '    raise AssertionError(f"{obj} does not has any of the attributes: {attrs}")',
        "harness_error",
        {},
    ),
    # Inductor's autotuning with no choice that compiled, under Ray's task tag.
    (
        "(task, pid=3369) [rank7]: torch._inductor.exc.LoweringException: NoValidChoicesError:"
        " No choices to select, please consider adding ATEN into max_autotune_gemm_backends",
        "compile_error",
        {},
    ),
    # Ray's task tag before a traceback: its frames are read (Triton's language: frontend).
    (
        '(task, pid=9) [rank1]:   File "/v/lib/python3.11/site-packages/triton/language/'
        'core.py", line 40, in wrapper\n(task, pid=9) [rank1]: ValueError: unsupported shape',
        "frontend",
        {},
    ),
    # ROCm's runtime reporting a hardware exception of the GPU.
    ("HW Exception by GPU node-1 (Agent handle: 0x5a2b3c0) reason :GPU Hang", "crash", {}),
    # A serving scheduler's own watchdog: its work did not finish.
    (
        "[TP3] Scheduler watchdog timeout (self.watchdog_timeout=600, self.soft=False)",
        "timeout",
        {},
    ),
    # A test printing the kernel's output beside the reference's, the kernel's not finite.
    (
        "out_ref: tensor([[ 1.5000, -2.0000],\n        [ 0.2500,  3.0000]])\n"
        "out_triton: tensor([[nan, -inf],\n        [0.2500, inf]])",
        "numeric_mismatch",
        {},
    ),
    # triton-ascend names the pass that failed in brackets.
    (
        "[ConvertTritonIRToLinalgIR] encounters error:\nPassManager::run failed",
        "pass_failure",
        {"pass": "ConvertTritonIRToLinalgIR"},
    ),
]

ROUND_30: list[Case] = [
    # A Windows crash report's access violation, in the HIP runtime's launch.
    (
        "Exception Code: 0xC0000005\n0x00007FFC7656C8EE, C:\\WINDOWS\\SYSTEM32\\amdhip64.dll"
        "(0x00007FFC76160000) + 0x40C8EE byte(s), hipModuleLaunchKernel() + 0x1068 byte(s)",
        "crash",
        {},
    ),
    # ComfyUI's error report: the exception's type and message on two lines.
    (
        "## Error Details\n- **Node Type:** TorchCompileModel\n- **Exception Type:** ImportError\n"
        "- **Exception Message:** cannot import name 'AttrsDescriptor' from"
        " 'triton.compiler.compiler' (C:\\py\\triton\\compiler\\compiler.py)",
        "harness_error",
        {},
    ),
    # A caller setting an attribute Triton's JIT guards: the caller and Triton disagree.
    (
        '  File "C:\\py\\Lib\\site-packages\\xformers\\triton\\vararg_kernel.py", line 244,'
        " in unroll_varargs\n    jitted_fn.src = new_src\n"
        '  File "C:\\py\\Lib\\site-packages\\triton\\runtime\\jit.py", line 718, in __setattr__\n'
        "!!! Exception during processing !!! AttributeError: Cannot set attribute 'src' directly.",
        "harness_error",
        {},
    ),
]


ROUND_31: list[Case] = [
    # The language's limit on a block's elements, as an autotuner's report repeats it.
    ("ValueError('numel (2097152) exceeds triton maximum tensor numel (1048576)')", "frontend", {}),
    # A caller reading what an older release's kernel object had.
    (
        '  File "/w/lecture_06.py", line 607, in print_ptx\n'
        '    return list(kernel.cache[0].values())[0].asm["ptx"]\n'
        "AttributeError: 'JITFunction' object has no attribute 'cache'",
        "harness_error",
        {},
    ),
    # A library refusing the installed Triton's version.
    (
        '  File "/m/megablocks/layers/arguments.py", line 82, in __post_init__\n'
        "    raise ValueError(\n"
        "ValueError: Sparse MLP is not supported with triton >=3.2.0. Please use"
        ' mlp_impl="grouped" instead.',
        "harness_error",
        {},
    ),
]


ROUND_32: list[Case] = [
    # Intel's offline compiler refusing what the kernel uses, in Triton's report of it.
    (
        "RuntimeError: `ocloc` failed with error code 245\n`ocloc` stderr:\n"
        "Compilation from IR - skipping loading of FCL\n\n"
        "error: Double type is not supported on this platform.\n"
        "in kernel: 'triton_per_fused_mean_0'\nerror: backend compiler failed build.\n",
        "codegen",
        {"kernel": "triton_per_fused_mean_0"},
    ),
]


ROUND_34: list[Case] = [
    # Inductor finding no host C++ compiler (MSVC's cl on Windows), under Dynamo's wrapper.
    (
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "RuntimeError: Compiler: cl is not found.",
        "toolchain",
        {},
    ),
]


ROUND_33: list[Case] = [
    # pip has no build of the package for this platform at all: not installable here.
    (
        "ERROR: Could not find a version that satisfies the requirement triton==3.1.0"
        " (from versions: none)\nERROR: No matching distribution found for triton==3.1.0",
        "harness_error",
        {},
    ),
    # The same words when pip could not reach its index: the network.
    (
        "WARNING: Retrying (Retry(total=0)) after connection broken by"
        " 'NewConnectionError(': Failed to establish a new connection: [Errno 101] Network is"
        " unreachable')': /simple/triton/\nERROR: Could not find a version that satisfies the"
        " requirement triton (from versions: none)",
        "infrastructure",
        {},
    ),
    # Python's C-API refusing a helper module built before Python 3.10's rule.
    (
        '  File "/e/triton/compiler/compiler.py", line 390, in _init_handles\n'
        "    self.module, self.function = driver.utils.load_binary(\n"
        "SystemError: PY_SSIZE_T_CLEAN macro must be defined for '#' formats",
        "harness_error",
        {},
    ),
    # BiSheng naming the unified buffer it overflowed, without figures.
    (
        'loc("k.py":12:0): error: Failed to run BiShengHIR pipeline\n'
        "[NOTE] Due to Ub overflow, automatically set enable-code-motion to false;"
        " compilation still failed.",
        "out_of_resources",
        {"resource": "ub"},
    ),
    # Not a device's memory: a stack overflow stays what the rest says.
    (
        "Fatal Python error: Cannot recover from stack overflow.\nAborted (core dumped)",
        "crash",
        {},
    ),
]


def test_no_distribution_of_a_package_is_keyed_by_its_name_not_the_version_asked() -> None:
    def pip(requirement: str) -> str:
        return (
            f"ERROR: Could not find a version that satisfies the requirement {requirement}"
            f" (from versions: none)\nERROR: No matching distribution found for {requirement}"
        )

    keys = {signature_of("", pip(r), None).key for r in ("triton", "triton>=2.0.0", "Triton")}
    assert keys == {"harness_error|package triton|no distribution for this platform"}
    assert signature_of("", pip("xformers"), None).key not in keys


def test_a_bare_pass_manager_failure_is_told_apart_by_the_model_that_met_it() -> None:
    # Round 27: PyTorch's benchmark runner names the model it runs; a failure with no
    # identity of its own takes it.
    def run(model: str) -> str:
        text = f"xpu  eval  {model}\nERROR:common:backend='inductor' raised:\n"
        return text + "RuntimeError: PassManager::run failed\n"

    one, other = (
        signature_of("", run("BertForMaskedLM"), None),
        signature_of("", run("T5Small"), None),
    )
    assert one.kind == other.kind == "pass_failure"
    assert one.key != other.key
    assert signature_of("", run("BertForMaskedLM"), None).key == one.key


# One check for every round's cases (docs/triage.md): the kind, and the facts named.
@pytest.mark.parametrize(
    ("text", "kind", "facts"),
    [
        *ROUND_3,
        *ROUND_4,
        *ROUND_5,
        *ROUND_6,
        *ROUND_7,
        *ROUND_8,
        *ROUND_9,
        *ROUND_10,
        *ROUND_11,
        *ROUND_12,
        *ROUND_13,
        *ROUND_14,
        *ROUND_15,
        *ROUND_16,
        *ROUND_17,
        *ROUND_18,
        *ROUND_19,
        *ROUND_20,
        *ROUND_21,
        *ROUND_22,
        *ROUND_23,
        *ROUND_24,
        *ROUND_25,
        *ROUND_27,
        *ROUND_28,
        *ROUND_29,
        *ROUND_30,
        *ROUND_31,
        *ROUND_32,
        *ROUND_33,
        *ROUND_34,
    ],
)
def test_forms_by_round(text: str, kind: str, facts: dict[str, str]) -> None:
    # The rules alone: a guess by resemblance must not pass for a rule.
    sig = signature_of("", text, None, resemblance.Centroids({}, {}))
    assert sig.kind == kind, sig
    assert {name: sig.detail(name) for name in facts} == facts


@pytest.mark.parametrize(
    "text",
    [
        "requests.exceptions.HTTPError: 500 Server Error: Internal Server Error for url:"
        " http://localhost:8000/v1/completions",
        "requests.exceptions.ConnectionError: HTTPConnectionPool(host='127.0.0.1', port=8000):"
        " Max retries exceeded with url: /health (Caused by NewConnectionError: Connection"
        " refused)",
    ],
)
def test_a_local_server_failing_is_not_the_network(text: str) -> None:
    # Round 21: the vLLM server under test answers on localhost; when it fails, its own
    # failure may be the compiler's, so its client's errors are not infrastructure.
    assert signature_of("", text, None, resemblance.Centroids({}, {})).kind != "infrastructure"


def test_a_launcher_diagnostic_wrapped_before_its_name_keeps_its_key() -> None:
    # Round 22: one bug of the launcher, one report wrapped the line before the quoted name.
    one = "/tmp/a/main.cpp:148:5: error: no matching function for call to '_PyFloat_Pack2'"
    wrapped = "/tmp/b/main.cpp:148:5: error: no matching function for call to\n'_PyFloat_Pack2'"
    other = "__triton_launcher.c:172:5: error: no matching function for call to '_PyFloat_Pack2'"
    keys = {signature_of("", t, None).key for t in (one, wrapped, other)}
    assert len(keys) == 1
    assert signature_of("", "/t/main.c:3:1: error: expected ';'", None).key not in keys


def test_two_sanitized_passes_are_two_keys() -> None:
    head = "==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x5\n"
    one = head + "    #4 0x5 in f [lib/Dialect/TritonGPU/Transforms/Pipeliner/Loop.cpp:11]:5"
    two = head + "    #4 0x5 in g [lib/Dialect/TritonGPU/Transforms/WarpSpecialize.cpp:7]:3"
    assert signature_of("", one, None).key != signature_of("", two, None).key


def test_a_job_killed_after_its_own_failure_is_that_failure() -> None:
    text = (
        "OutOfResources: out of resource: shared memory, Required: 147456, Hardware limit: 101376\n"
        "./run.sh: line 19: 867080 Killed                  python -m server"
    )
    assert signature_of("", text, None).kind == "out_of_resources"


def test_a_frontend_message_under_the_caret_is_the_key() -> None:
    # Round 23: two frontend errors were one key, the banner "CompilationError: at N:N".
    banner = "triton.compiler.errors.CompilationError: at 2:8:\n    acc = tl.dot(x, w)\n        ^\n"
    one = signature_of("", banner + "create_dot(): incompatible function arguments.", None)
    two = signature_of("", banner + "dot() got an unexpected operand type", None)
    assert one.kind == two.kind == "frontend"
    assert one.key != two.key


def test_one_missing_install_file_is_one_key_in_either_wording() -> None:
    read = "lib_error: Cannot read /opt/a/lib/foolib/library/T_gfx950.dat: No such file"
    load = "lib_error: Could not load /home/t/lib/foolib/library/T_gfx950.dat"
    assert signature_of("", read, None).key == signature_of("", load, None).key
    other = "lib_error: Could not load /home/t/lib/barlib/library/T_gfx950.dat"
    assert signature_of("", other, None).key != signature_of("", load, None).key


def test_a_locked_windows_file_is_one_key_under_any_step() -> None:
    locked = (
        "PermissionError: [WinError 32] The process cannot access the file because it is"
        " being used by another process: '{}'"
    )
    build = "[build] FAILED: dist.stamp\n" + locked.format("D:\\b\\x.h")
    test = "FAILED t.py::test_retry - " + locked.format("C:\\t\\locked.txt")
    assert signature_of("", build, None).key == signature_of("", test, None).key


def test_a_pasted_line_in_markdown_bold_keeps_its_key() -> None:
    # Round 21: a report's "**Exception: ...**" was a key of its own.
    line = "Exception: Failed to import Triton-based component: fused_thing"
    assert signature_of("", f"**{line}", None).key == signature_of("", line, None).key


def test_a_missing_gpu_driver_library_is_not_a_broken_install() -> None:
    text = "OSError: libcuda.so.1: cannot open shared object file: No such file or directory"
    assert signature_of("", text, None, resemblance.Centroids({}, {})).kind != "harness_error"


def test_an_actor_that_died_in_its_creation_is_what_killed_it() -> None:
    # Tried in round 10 and taken back: a Ray actor that died in its creation task is not a
    # lost worker by itself; the error raised there decides (here: no active driver).
    text = (
        "The actor died because of an error raised in its creation task, ray::W.__init__()\n"
        "RuntimeError: 0 active drivers ([]). There should only be one."
    )
    assert signature_of("", text, None).kind == "backend_resolution"


def test_one_ptxas_crash_is_one_key_in_either_triton_wording() -> None:
    old = "RuntimeError: Please run `ptxas /tmp/a.ptx` to confirm that this is a bug in `ptxas`"
    new = "RuntimeError: `ptxas` raised SIGSEGV\n`ptxas` stderr:\n\nRepro command: ptxas /tmp/b.ptx"
    assert signature_of("", old, None).key == signature_of("", new, None).key


def test_an_assertion_is_keyed_by_the_function_that_asserted_however_cut_or_wrapped() -> None:
    """glibc prints the file, the function's signature, then the condition, on one long
    line: reports wrap it, or cut it before the condition. The function is in every one."""
    site = "python: /p/lib/Tools/LinearLayout.cpp:503: LinearLayout LinearLayout::reshapeOuts("
    whole = f"{site}ArrayRef<int>) const: Assertion `a == b' failed."
    wrapped = f"{site}ArrayRef<int>)\nconst: Assertion `a ==\nb' failed."
    cut = f"{site}ArrayRef<int>) const: Assertio"
    # Wrapped just before the condition too (round 33, frozen-31's getCvtOrder pair).
    wrapped_before = f"{site}\nArrayRef<int>) const: \nAssertion `a == b' failed."
    macos = "Assertion failed: (a == b), function reshapeOuts, file LinearLayout.cpp, line 503."
    keys = {signature_of("", text, None).key for text in (whole, wrapped, cut, wrapped_before)}
    assert keys == {"crash|?|LinearLayout.cpp: assertion in reshapeOuts|?"}
    # macOS's form names the function too.
    assert signature_of("", macos, None).detail("abort") == "assertion in reshapeOuts"
    other = "python: /p/lib/Tools/LinearLayout.cpp:90: LinearLayout LinearLayout::invert() const:"
    assert signature_of("", f"{other} Assertion `a == b' failed.", None).key not in keys


def test_a_harness_errors_key_is_not_the_kernel_that_met_it() -> None:
    line = "RuntimeError: Kernel requires a runtime memory allocation, but no allocator was set."
    frame = '  File "/x/kernels.py", line 626, in forward\n    my_kernel[grid](x)\n'
    assert signature_of("", frame + line, None).key == signature_of("", line, None).key


def test_an_error_printed_as_its_repr_or_as_a_line_is_one_key() -> None:
    frame = '  File "/x/triton/compiler/code_generator.py", line 1066, in visit_Attribute\n'
    as_line = frame + "AttributeError: 'tensor' object has no attribute 'cast'"
    as_repr = (
        "triton.compiler.errors.CompilationError: at 4:31:def k(a):\n    x = a.cast(1)\n"
        "            ^\nAttributeError(\"'tensor' object has no attribute 'cast'\")"
    )
    line, repr_ = signature_of("", as_line, None), signature_of("", as_repr, None)
    assert line.kind == repr_.kind == "frontend"
    assert line.key == repr_.key


def test_a_test_timeout_is_keyed_by_the_test_that_ran_out_of_time() -> None:
    # Round 17: two suites' timeouts were one key ("timeout|test"), whatever timed out.
    ctest = (
        "The following tests FAILED:\n\t  3 - scan_by_key.hip (Timeout)\nErrors while running CTest"
    )
    pytest_one = (
        "suite.py::TestMm::test_mm\n##[error]The action 'smoke' has timed out after 9 minutes."
    )
    pytest_two = (
        "suite.py::TestMm::test_bmm\n##[error]The action 'smoke' has timed out after 9 minutes."
    )
    keys = [signature_of("", t, None).key for t in (ctest, pytest_one, pytest_two)]
    assert [signature_of("", t, None).kind for t in (ctest, pytest_one)] == ["timeout"] * 2
    assert len(set(keys)) == 3, keys
    assert "scan_by_key.hip" in keys[0]
    # The same hang profiled twice, with different sampling: one key.
    one = "  58.03%  libtriton.so  [.] mlir::sortTopologically\n   3.1%  libc.so  [.] free"
    two = "  61.50%  libtriton.so  [.] mlir::sortTopologically\n   2.2%  libm.so  [.] exp"
    assert signature_of("", one, None).key == signature_of("", two, None).key


def test_with_no_exception_line_the_headline_is_the_line_that_says_what_failed() -> None:
    # Not the first line when that is a logger's progress report (a server's INFO lines).
    text = (
        "INFO 03-01 10:00:01 engine.py:12] Added request 7f3a\n"
        "python: /src/Allocation.cpp:40: getCvtOrder: Assertion `!(mma && mma)' failed.\n"
        "Aborted (core dumped)"
    )
    assert headline(gather("", text, None)).startswith("python: /src/Allocation.cpp:40")
    assert headline(gather("", "INFO starting\nthe node printed something odd", None)) == (
        "the node printed something odd"
    )


def test_a_file_missing_from_tritons_cache_is_one_key_whatever_the_kernel() -> None:
    # Round 19: processes racing on one cache lose a kernel's file; which kernel and which
    # temporary name differ between reports of that one failure.
    one = "FileNotFoundError: [Errno 2] No such file: '/r/.triton/cache/ab/k1.cubin.tmp.pid_7_1'"
    two = "FileNotFoundError: [Errno 2] No such file: '/s/triton_cache_4/cd/k2.json.tmp.pid_9_22'"
    first, second = signature_of("", one, None), signature_of("", two, None)
    assert first.kind == second.kind == "compile_error"
    assert first.key == second.key
    other = signature_of("", "FileNotFoundError: [Errno 2] No such file: '/data/x.bin'", None)
    assert other.key != first.key


_FAULT = (
    "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call."
)


def test_a_device_fault_is_told_apart_by_the_test_else_where_it_surfaced() -> None:
    # A device fault's words are the same for every kernel that ever faulted: the test that
    # met it, else the program's own frame, else the library's raise site tells them apart.
    in_test = [signature_of("", f"FAILED t.py::{name} - {_FAULT}", None) for name in "ab"]
    assert all(s.kind == "crash" for s in in_test)
    assert in_test[0].key != in_test[1].key
    assert "t.py::a" in in_test[0].key
    frame = '  File "/home/u/proj/{}.py", line 9, in {}\n    o = torch.zeros_like(q)\n'
    library = '  File "/usr/lib/python3.12/site-packages/torch/cuda/__init__.py", line 9, in sync\n'
    mine = signature_of("", frame.format("attn", "fwd") + library + _FAULT, None)
    other = signature_of("", frame.format("loss", "backward") + _FAULT, None)
    assert mine.key != other.key
    assert "attn.py fwd" in mine.key
    native = "Exception raised from {} at /p/c10/hip/{}.cpp:3837 (most recent call first):"
    allocator = signature_of("", _FAULT + "\n" + native.format("insert_events", "Alloc"), None)
    device = signature_of("", _FAULT + "\n" + native.format("SetDevice", "Functions"), None)
    assert allocator.key != device.key
    # The check every CUDA error passes through says nothing of where.
    check = signature_of(
        "", _FAULT + "\n" + native.format("c10_cuda_check_implementation", "CUDAException"), None
    )
    assert check.key == signature_of("", _FAULT, None).key


def test_a_misaligned_address_is_a_device_fault_in_any_wrapper() -> None:
    triton = signature_of("", "RuntimeError: Triton Error [CUDA]: misaligned address", None)
    torch = signature_of("", "torch.AcceleratorError: CUDA error: misaligned address", None)
    assert triton.kind == torch.kind == "crash"
    assert triton.key == torch.key
    assert "device fault (misaligned address)" in triton.key


def test_a_drivers_bare_error_code_is_told_apart_by_the_test() -> None:
    line = "RuntimeError: Triton Error [CUDA]: invalid argument"
    one, two = (signature_of("", f"FAILED t.py::{n} - {line}", None) for n in ("a", "b"))
    assert one.kind == two.kind == "driver"
    assert one.key != two.key
    # PyTorch's form of a driver error is the driver's error, not a line of its own.
    torch = signature_of("", "RuntimeError: HIP error: invalid device function", None)
    logged = signature_of(
        "", "ERROR 05-15 18:58:58 [engine.py:448] HIP error: invalid device function", None
    )
    assert torch.kind == "driver"
    assert torch.key == logged.key == "driver|HIP|invalid device function|?"


def test_one_error_in_two_wrappers_is_one_key() -> None:
    # The message of the innermost exception a line names is the key, not what wraps it:
    # C++'s what(), a source location, the exception's type.
    python = (
        "RuntimeError: Native API failed. Native API returns: -2 (PI_ERROR_DEVICE_NOT_AVAILABLE)"
    )
    cpp = "  what():  Native API failed. Native API returns: -2 (PI_ERROR_DEVICE_NOT_AVAILABLE)"
    assert signature_of("", python, None).key == signature_of("", cpp, None).key
    located = "single_decode.cu:84: RuntimeError: Check failed: launch failed, error: no image"
    bare = "RuntimeError: Check failed: launch failed, error: no image"
    assert signature_of("", located, None).key == signature_of("", bare, None).key
    # A bare exception with no message keeps its type.
    assert "AssertionError()" in signature_of("", "AssertionError()", None).key


def test_a_frontend_error_cut_before_its_message_is_keyed_by_the_line_it_points_at() -> None:
    banner = "triton.compiler.errors.CompilationError: at 33:39:\n"
    one = banner + "    head = pos * GROUP_SIZE\n                 ^\n"
    other = banner + "    acc = tl.dot(a, b, acc)\n          ^\n"
    first, second = signature_of("", one, None), signature_of("", other, None)
    assert first.kind == second.kind == "frontend"
    assert first.key != second.key
    assert "head = pos * GROUP_SIZE" in first.key
    # Python's own underline of an expression in a traceback is not Triton's caret.
    traceback = (
        '  File "/x/triton/compiler/compiler.py", line 83, in make_ir\n'
        "    return ast_to_ttir(self.fn, self)\n           ^^^^^^^^^^^^^^^^^^^^^^^\n"
    )
    assert signature_of("", traceback + one, None).key == first.key


def test_a_source_built_from_its_tree_is_keyed_by_its_file_and_diagnostic() -> None:
    line = "/s/triton/lib/{}:146:23: error: using the result of an assignment as a condition"
    one = signature_of("", line.format("Reorder.cpp"), None)
    other = signature_of("", line.format("Combine.cpp"), None)
    assert one.kind == other.kind == "compile_error"
    assert one.key != other.key
    assert (
        one.key == signature_of("", line.format("Reorder.cpp").replace("146:23", "150:9"), None).key
    )


def test_a_pass_failure_keyed_by_its_message_leaves_the_stage_to_the_details() -> None:
    # A report with the traceback shows the stage, one without does not: the same key. A
    # bare "PassManager::run failed" has nothing but its stage, which stays in its key.
    frame = '  File "/x/triton/backends/nvidia/compiler.py", line 9, in make_llir\n    pm.run(m)\n'
    with_stage = signature_of("", frame + "IndexError: map::at", None)
    bare = signature_of("", "IndexError: map::at", None)
    assert with_stage.kind == bare.kind == "pass_failure"
    assert with_stage.key == bare.key
    assert with_stage.detail("stage") == "make_llir"
    catch_all = signature_of("", frame + "RuntimeError: PassManager::run failed", None)
    assert "make_llir: PassManager::run failed" in catch_all.key


def test_llvms_verifier_names_the_kernel_and_wrapped_program_arguments_name_the_pass() -> None:
    broken = (
        "Operand is null\n  %7 = call i32 @__nv_isnanf(<null operand!>)\nin function kernel_0d1\n"
        "LLVM ERROR: Broken function found, compilation aborted!"
    )
    assert signature_of("", broken, None).detail("kernel") == "kernel_0d1"
    wrapped = (
        "triton-shared-opt: .../llvm/ADT/SmallVector.h:300:\nAssertion `idx < size()' failed.\n\n"
        "Program arguments:\ntriton-shared-opt k.ttir.mlir\n"
        "  --triton-to-linalg-experimental=structured-ldst-mode=tensor-first\n"
        "  --mlir-print-debuginfo\n  -o /tmp/k.mlir\n"
    )
    assert signature_of("", wrapped, None).detail("pass") == "triton-to-linalg-experimental"


def test_no_active_driver_raised_in_the_registry_is_backend_resolution() -> None:
    """The registry's frame (runtime/driver.py) is the loader's layer; its words decide."""
    text = (
        '  File "/venv/lib/python3.12/site-packages/triton/runtime/driver.py", line 8,'
        " in _create_driver\n"
        '    raise RuntimeError(f"{len(actives)} active drivers ({actives}).")\n'
        "RuntimeError: 0 active drivers ([]). There should only be one."
    )
    signed = signature_of("", text, None)
    assert (signed.kind, signed.key) == ("backend_resolution", "backend_resolution|0 drivers|[]")
