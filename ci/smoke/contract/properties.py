"""The JUnit ``<property>`` names of a smoke testcase: written by the lane side
(``record_property``), read by the controller (``ci.results``, ``ci.history``, ``ci.triage``).

Both sides name a property only through these constants (``properties.KERNEL``, never
``"kernel"``); ``tests/unit/test_lane_contract.py`` holds every name the controller reads
against the names the lane side writes. ``docs/architecture.md`` shows each with an example.
Standard library only: part of the lane package.
"""

# Every testcase (ci/smoke/conftest.py, at collection); ci.results.junit.merge sets lane and
# node again on every testcase of merged.xml.
LANE = "lane"
NODE = "node"
VENDOR = "vendor"
COMPILER = "compiler"
TRITON_VERSION = "triton_version"
FLAGTREE_VERSION = "flagtree_version"

# What was compiled: mirrors and real kernels.
KERNEL = "kernel"
CONFIG = "config"
BACKEND = "backend"
TARGET = "target"
SOURCE = "source"
SCENARIO = "scenario"
MODULE = "module"
# FlagGems' variant of a vendor the lane has no device of (`iluvatar` on the CPU lane).
VENDOR_VARIANT = "vendor_variant"
LAUNCHES = "launches"
TTGIR_FILES = "ttgir_files"
AUTOTUNE_CANDIDATE = "autotune_candidate"

# A compile's figures (the compile_kernel fixture).
COMPILE_SECONDS = "compile_seconds"
SHARED_BYTES = "shared_bytes"
REGISTERS = "registers"
SPILLS = "spills"
SHARED_CHECK = "shared_check"
LAST_STAGE = "last_stage"
TTGIR_SHA256 = "ttgir_sha256"
BACKEND_DEFAULTS = "backend_defaults"
COMPILE_NOTE = "compile_note"
ACCEPTED_FAILURE = "accepted_failure"
ACCEPTED_MESSAGE = "accepted_message"
REPLAY_TTGIR_SHA256 = "replay_ttgir_sha256"

# A failure: its kind (ci.smoke.contract.taxonomy), its signature, what triage found, and
# the test's artifact folder (relative to the lane folder; to the run folder in merged.xml).
FAILURE_KIND = "failure_kind"
SIGNATURE = "signature"
# The signature's one-line summary: what triage found, what the log lacked, and for a class
# no rule decided, the class its words resemble (marked as a guess).
TRIAGE = "triage"
NAMED_PASS = "named_pass"
HINT = "hint"
ARTIFACTS = "artifacts"

# The stack (test_stack.py, test_backends.py).
INSTALLED_COMPILER = "installed_compiler"
TRITON_REPORTS = "triton_reports"
BACKENDS = "backends"
CLAIMED_BY = "claimed_by"
DRIVER_TARGET = "driver_target"
DRIVER_SHARED_PER_BLOCK = "driver_shared_per_block"

# The vLLM end-to-end test.
MODEL = "model"
TENSOR_PARALLEL_SIZE = "tensor_parallel_size"
GENERATED = "generated"
# From vLLM's log: its attention backend, GDN prefill kernel, the layers its GDN warm-up ran.
ATTENTION_BACKEND = "attention_backend"
GDN_PREFILL = "gdn_prefill"
GDN_WARMUP = "gdn_warmup"
SERVE_COMMAND = "serve_command"

# Performance (ci/smoke/perf.py).
SHAPE = "shape"
GPU = "gpu"
PERF_MS = "perf_ms"
PERF_GBPS = "perf_gbps"
PERF_TFLOPS = "perf_tflops"
PERF_BOUND = "perf_bound"
PCT_OF_CEILING = "pct_of_ceiling"
CEILING_GBPS = "ceiling_gbps"
CEILING_TFLOPS = "ceiling_tflops"
TORCH_MS = "torch_ms"
TORCH_REFERENCE = "torch_reference"
RATIO_TO_TORCH = "ratio_to_torch"
