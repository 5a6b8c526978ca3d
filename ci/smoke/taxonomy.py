"""The failure taxonomy: every kind a failing testcase can have, and who is to blame.

One list, used by the compile worker, the fallback probe, the signatures and (through the
JUnit property ``failure_kind``) by the controller's ledger and dashboard. Standard library
only: this module is part of the lane package.
"""

from __future__ import annotations

import re

BACKEND_RESOLUTION = "backend_resolution"
DRIVER = "driver"
PASS_FAILURE = "pass_failure"
OUT_OF_RESOURCES = "out_of_resources"
CODEGEN = "codegen"
FRONTEND = "frontend"
COMPILE_ERROR = "compile_error"
NUMERIC_MISMATCH = "numeric_mismatch"
TIMEOUT = "timeout"
CRASH = "crash"
HARNESS_ERROR = "harness_error"
TOOLCHAIN = "toolchain"
STACK_FACTS = "stack_facts"
INFRASTRUCTURE = "infrastructure"
UNCLASSIFIED = "unclassified"

KINDS = (
    BACKEND_RESOLUTION,
    DRIVER,
    PASS_FAILURE,
    OUT_OF_RESOURCES,
    CODEGEN,
    FRONTEND,
    COMPILE_ERROR,
    NUMERIC_MISMATCH,
    TIMEOUT,
    CRASH,
    HARNESS_ERROR,
    TOOLCHAIN,
    STACK_FACTS,
    INFRASTRUCTURE,
    UNCLASSIFIED,
)
# Kinds that say nothing about the compiler under test: our harness broke, or the node lacks
# a tool, or the node/network failed. Verdicts, the FlagTree-regression verdict and bisection
# never count them against a compiler.
NOT_THE_COMPILER = (HARNESS_ERROR, TOOLCHAIN, INFRASTRUCTURE)

# A piece of the node's toolchain that a stage needs and cannot find: a linker or an SDK.
# Each pattern comes with how the missing piece is named ({tool}: the pattern's group).
_MISSING_TOOL = (
    (re.compile(r"(?P<tool>ROCm linker \S+) not found"), "{tool}"),
    # A linker older than the release's code objects (Debian's lld 14 and Triton 3.3's COv5).
    (re.compile(r"(?P<tool>ld\.lld): error: unknown abi version"), "{tool} (too old)"),
    (re.compile(r"ASCEND_HOME_PATH is not set"), "the CANN toolkit (ASCEND_HOME_PATH)"),
    (re.compile(r"(?P<tool>bishengir-compile)\b.*(?:not found|No such file)"), "{tool}"),
    (
        re.compile(
            r"No such file or directory: '(?P<tool>[^']*(?:ptxas|ld\.lld|llc|nvlink)[^']*)'"
        ),
        "{tool}",
    ),
)


def missing_tool(text: str) -> str:
    """The toolchain piece the text says is absent, or ""."""
    for pattern, name in _MISSING_TOOL:
        match = pattern.search(text)
        if match:
            return name.format(**match.groupdict())
    return ""


def compile_failure_kind(error_type: str, message: str, log: str = "") -> str:
    """The kind of an exception that ``triton.compile`` itself raised."""
    text = f"{message}\n{log}"
    if "compatible backends for target" in message or "active drivers" in message:
        return BACKEND_RESOLUTION
    if missing_tool(text):
        return TOOLCHAIN
    if error_type == "OutOfResources" or message.startswith("out of resource"):
        return OUT_OF_RESOURCES
    if (
        "PassManager::run failed" in text
        or "MLIR pass pipeline" in text
        or "Pipeline failed while executing" in text
    ):
        return PASS_FAILURE
    if error_type == "CompilationError":
        return FRONTEND
    if error_type == "TimeoutExpired":
        return TIMEOUT
    return COMPILE_ERROR
