"""The structure of a failure log, and the one table from structure to failure kind.

A log's structure is what does not depend on how a tool words its message: the exception
type (from the exception line, else from a ``raise X(`` line), the traceback's frames, the
layer that raised (Triton's frontend, a backend's ``make_*`` stage, the host build of the
launcher, the driver's loader, the launcher, a test, the import of a package) and the
process-level events around it (a collective's watchdog, a lost worker, a build's compiler
killed). ``decide`` looks the structure up in ``TABLE``: the first row whose layer,
exception and stage match gives the kind; a row's ``words`` only refine a row (they are
tried on the exception's message, never instead of the frames). A new vendor's log form is
a new row (or a new layer pattern), not a new function.

Standard library only: this module is part of the lane package. It names kinds by their
strings (``ci.smoke.contract.taxonomy`` holds the list and checks the table against it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple, Optional, Pattern, Tuple

# --------------------------------------------------------------------------------------
# Frames and layers

# A traceback frame ("File "x.py", line 3, in f"). A faulthandler dump's frames ("line 3 in
# f", no comma) are where threads stood when a signal came, not where anything was raised.
_FRAME = re.compile(
    r"^\s*(?:File )?\"(?P<path>[^\"]+)\", line \d+, in (?P<function>[\w<>.]+)"
    # IPython's and Colab's forms: "[/x/cuda.py](link) in make_llir(src, ...)", "File /x.py:9,
    # in f(".
    r"|^\s*(?:File )?\[?(?P<ipath>/[^\s\]]+?\.py)(?:\]\([^)]*\))?(?::\d+)?,? in"
    r" (?P<ifunction>\w+)\(",
    re.M,
)

# Triton's frontend: the code generator and the language.
FRONTEND_LAYER = "frontend"
PACKAGE_BUILD_LAYER = "package_build"
CALLER_API_LAYER = "caller_api"
# (layer, path pattern, function pattern): the first layer whose pattern matches a frame.
# Paths are matched with "/" separators.
LAYERS: Tuple[Tuple[str, Pattern[str], Optional[Pattern[str]]], ...] = (
    ("host_build", re.compile(r"triton/runtime/build\.py$"), None),
    # Triton 2.x built the launcher in triton/common/build.py (where it also looked for the
    # host's libraries: those frames are the SDK lookup's, below).
    ("host_build", re.compile(r"triton/common/build\.py$"), re.compile(r"^_build$")),
    # A backend looking for the host's SDK or tools (find_sycl, libcuda_dirs, the ptxas path):
    # what it fails on is the node's toolchain, not the kernel.
    (
        "sdk_lookup",
        re.compile(r"triton/(?:backends/\w+/\w+|common/build|runtime/build)\.py$"),
        re.compile(r"^_?(?:find_\w+|\w*_dirs|path_to_binary|get_\w*(?:home|path)\w*)$"),
    ),
    # Python's import machinery itself, innermost: a package's module broke while it was
    # imported (a half-installed package), whatever exception that raised.
    ("importer", re.compile(r"^<frozen importlib\._bootstrap(?:_external)?>$"), None),
    (FRONTEND_LAYER, re.compile(r"triton/(?:language/|compiler/code_generator\.py$)"), None),
    # The code generator of Triton 1.x (triton/code_gen.py) and 2.0 (triton/compiler.py)
    # visiting the kernel's syntax tree; the rest of those files is the JIT and the launcher.
    (
        FRONTEND_LAYER,
        re.compile(r"triton/(?:code_gen|compiler)\.py$"),
        re.compile(r"^(?:generic_)?visit(?:_\w+)?$"),
    ),
    # A package's own build script (its setup.py) failing in its Python code.
    (PACKAGE_BUILD_LAYER, re.compile(r"(?:^|/)setup\.py$"), None),
    # Helion's frontend: it reads the kernel's Python and propagates its types before it
    # generates any Triton.
    (FRONTEND_LAYER, re.compile(r"helion/_compiler/type_propagation\.py$"), None),
    (
        FRONTEND_LAYER,
        re.compile(r"triton/compiler/compiler\.py$"),
        re.compile(r"^(?:make_ir|ast_to_ttir)$"),
    ),
    (
        "backend",
        re.compile(
            r"triton/backends/\w+/(?:\w+/)*compiler\w*\.py$|triton/compiler/backends/\w+\.py$"
        ),
        None,
    ),
    ("loader", re.compile(r"triton/backends/\w+/driver\.py$|triton/runtime/driver\.py$"), None),
    ("launcher", re.compile(r"^<string>$"), re.compile(r"^launcher$")),
    # The argument binder the JIT generates for each kernel (3.3+): it reads the arguments'
    # types, with the type helpers it calls.
    (FRONTEND_LAYER, re.compile(r"^<string>$"), re.compile(r"^dynamic_func$")),
    (FRONTEND_LAYER, re.compile(r"triton/_utils\.py$"), re.compile(r"^canonicalize_\w+$")),
    ("launcher", re.compile(r"triton/runtime/jit\.py$"), re.compile(r"^(?:run|<lambda>)$")),
    # A caller setting an attribute of a kernel object: the JIT's guard, not its reading of
    # the kernel.
    (CALLER_API_LAYER, re.compile(r"triton/runtime/jit\.py$"), re.compile(r"^__setattr__$")),
    # The rest of the JIT reads the kernel's source and binds its arguments.
    (FRONTEND_LAYER, re.compile(r"triton/runtime/jit\.py$"), None),
    (
        "launcher",
        re.compile(r"triton/compiler/compiler\.py$"),
        re.compile(r"^(?:run|__getitem__|_init_handles)$"),
    ),
    ("compile", re.compile(r"triton/compiler/compiler\.py$"), None),
    ("import", re.compile(r"."), re.compile(r"^<module>$")),
)

# The layers that are the compiler under test.
TRITON_LAYERS = tuple(
    sorted(
        {layer for layer, _, _ in LAYERS}
        - {"import", "importer", PACKAGE_BUILD_LAYER, CALLER_API_LAYER}
    )
)

# Process-level events a log shows outside any traceback: (layer, form).
EVENTS: Tuple[Tuple[str, Pattern[str]], ...] = (
    (
        "collective",
        re.compile(
            r"Watchdog caught collective operation timeout|ProcessGroupNCCL\S*\s*watchdog"
            r"|\bwatchdog got stuck\b|Terminating the process after attempting to dump debug info",
            re.I,
        ),
    ),
    (
        "worker",
        re.compile(
            r"(?:Actor|RayActor)(?:Died)?Error: The actor died unexpectedly"
            r"|The actor is dead because its worker process has died"
            r"|A worker died or was killed while executing a task|\bActorDiedError\b"
            r"|Raylet is terminated|Worker proc \S+ died unexpectedly"
        ),
    ),
    ("build", re.compile(r"fatal error: Killed signal terminated program (?P<program>cc1\w*|\S+)")),
)

# A binary stage: the vendor's assembler or linker runs (ptxas, the HSACO linker, ocloc,
# bishengir): a failure raised there is codegen.
BINARY_STAGE = re.compile(r"^make_(?:cubin|hsaco|zebin|spv|\w*bin)$")
# The stages that emit machine code: LLVM's code generators (PTX, AMDGCN) and the binaries.
MACHINE_CODE_STAGE = re.compile(r"^make_(?:ptx|amdgcn|cubin|hsaco|zebin|spv|\w*bin)$")
_STAGE_FRAME = re.compile(r"^make_\w+$")
# A faulthandler dump's current thread (most recent call first): where the process stood
# when it aborted. Its frames are not a traceback (nothing was raised there), but the
# compile stage on it is the one that aborted.
_CURRENT_THREAD = re.compile(
    r"^Current thread [^\n]*\(most recent call first\):\n(?P<body>(?:[ \t]+File [^\n]*\n?)+)",
    re.M,
)
_DUMP_FRAME = re.compile(r"File \"[^\"]+\", line \d+ in (?P<function>\w+)")

# The exception line: "Name: message", "pkg.mod.NameError: ..." (the last one is the raised).
_EXCEPTION = re.compile(
    r"^\s*(?:[A-Za-z_][\w]*\.)*(?P<type>[A-Z]\w*(?:Error|Exception|Failed|Expired))(?::\s*(?P<message>.*))?$",
    re.M,
)
_RAISE = re.compile(
    r"^\s*raise (?:[\w]+\.)*(?P<type>[A-Z]\w*(?:Error|Exception|Expired|Timeout))"
    r"\((?P<message>.*)$",
    re.M,
)
# An exception printed as its repr on a line of its own ("NameError('x is not defined')"): how
# Triton's CompilationError prints the error raised inside the JIT'ed function, under the
# source line and its caret, so a log that lost the "CompilationError: at L:C" header still
# shows it.
_REPR = re.compile(
    r"^\s*(?P<type>[A-Z]\w*(?:Error|Exception))\((?P<message>.*)\)\s*$",
    re.M,
)


_WRAPPED = re.compile(r"(?:[A-Za-z_]\w*\.)*(?P<type>[A-Z]\w*(?:Error|Exception)): (?P<message>.*)")


@dataclass(frozen=True)
class Frame:
    path: str
    function: str


@dataclass(frozen=True)
class Structure:
    exception: str  # the raised exception's type ("" where the log shows none)
    message: str  # its message (from its exception line or its raise line)
    exception_source: str  # "exception line", "raise line" or ""
    frames: Tuple[Frame, ...]
    layer: str  # the raising layer: innermost frame of a known layer, else an event's
    stage: str  # the make_* stage on the call chain
    event: str  # a process-level event (collective, worker, build) or ""

    def found(self) -> str:
        """What structure the log has and lacks, in words (for an unclassified failure)."""
        parts = [
            f"exception {self.exception} (from its {self.exception_source})"
            if self.exception
            else "no exception line",
            f"{len(self.frames)} traceback frames" if self.frames else "no traceback frames",
            f"raised in the {self.layer} layer" if self.layer else "no known raising layer",
            f"stage {self.stage}" if self.stage else "no compile stage",
        ]
        return "; ".join(parts)


def layer_of(frame: Frame) -> str:
    """The layer of LAYERS a frame belongs to, "" for none."""
    path = frame.path.replace("\\", "/")
    for layer, path_form, function_form in LAYERS:
        if path_form.search(path) and (
            function_form is None or function_form.match(frame.function)
        ):
            return layer
    return ""


# A line that starts something else than a wrapped message: a frame, a traceback, an exception.
_NOT_CONTINUATION = re.compile(r"^\s*(?:File \"|Traceback|During handling|The above exception)")


def _continuation(text: str, end: int, limit: int = 4) -> list[str]:
    """The lines a tool wrapped an exception's message onto (up to a blank line)."""
    lines = []
    for line in text[end:].split("\n")[1 : limit + 1]:
        if not line.strip() or _NOT_CONTINUATION.match(line) or _EXCEPTION.match(line):
            break
        lines.append(line.strip())
    return lines


def parse(text: str) -> Structure:
    """The structure of a (cleaned) log."""
    frames = tuple(
        Frame(m["path"] or m["ipath"], m["function"] or m["ifunction"])
        for m in _FRAME.finditer(text)
    )
    exceptions = [
        (m, "exception line") for m in _EXCEPTION.finditer(text) if m["message"] is not None
    ]
    exceptions += [(m, "repr line") for m in _REPR.finditer(text)]
    exception, message, source = "", "", ""
    if exceptions:
        last, source = max(exceptions, key=lambda found: found[0].start())
        exception, message = last["type"], last["message"].strip()
        # A wrapper whose message is the exception it wraps ("InductorError: FileNotFoundError:
        # ..."): what was raised is the innermost.
        while (inner := _WRAPPED.match(message)) is not None:
            exception, message = inner["type"], inner["message"]
        if source == "repr line":
            message = message.strip("\"'")
        else:
            message = " ".join([message, *_continuation(text, last.end())]).strip()
    else:
        raised = list(_RAISE.finditer(text))
        if raised:
            exception, source = raised[-1]["type"], "raise line"
            message = raised[-1]["message"].strip().strip("\"')")
    layer = ""
    for frame in reversed(frames):
        layer = layer_of(frame)
        if layer and layer != "import":
            break
    stage = next((f.function for f in reversed(frames) if _STAGE_FRAME.match(f.function)), "")
    dump = _CURRENT_THREAD.search(text)
    if not stage and dump is not None:
        dumped = (m["function"] for m in _DUMP_FRAME.finditer(dump["body"]))
        stage = next((f for f in dumped if _STAGE_FRAME.match(f)), "")
    event = next((name for name, form in EVENTS if form.search(text)), "")
    return Structure(exception, message, source, frames, layer, stage, event)


# --------------------------------------------------------------------------------------
# The table: (raising layer, exception, stage, words) -> kind. First match wins.


# Triton's driver registry (runtime/driver.py) finding no active backend driver, or more
# than one: no backend serves the process. The class descriptions list it under backend
# resolution, as 9 of the 13 labelled reports do (docs/triage.md, "0 active drivers").
ACTIVE_DRIVERS = re.compile(r"\d+ active driver(?:s|\(s\)) ?(?:\(|found)")


@dataclass(frozen=True)
class Row:
    kind: str
    layer: str = "*"  # a layer of LAYERS, an event of EVENTS, or "*"
    exception: Optional[Pattern[str]] = None  # the exception type; None: any (or none)
    stage: Optional[Pattern[str]] = None  # the stage; None: any (or none)
    words: Optional[Pattern[str]] = None  # refines the row: the exception's message (or log)
    # Where the words are looked for: "message" (the exception's message, else the log) or
    # "log" (the whole log: reports that print their diagnosis outside any exception line) or
    # "any" (the message, with its wrapped lines, or any line of the log).
    scope: str = "message"
    # The log around the exception: a form that must be somewhere in the log (a banner).
    context: Optional[Pattern[str]] = None
    # Where the exception was read from ("exception line", "raise line", "repr line"); "" any.
    source: str = ""
    # Layers that rule the row out: the same words raised there mean something else.
    not_in: Tuple[str, ...] = ()
    # A form in the log that rules the row out (a compilation banner around the words).
    unless: Optional[Pattern[str]] = None
    why: str = ""

    def matches(self, found: Structure, text: str) -> bool:
        if self.layer != "*" and self.layer not in (found.layer, found.event):
            return False
        if self.exception is not None and not self.exception.fullmatch(found.exception):
            return False
        if self.stage is not None and not self.stage.match(found.stage):
            return False
        if self.source and self.source != found.exception_source:
            return False
        if found.layer in self.not_in:
            return False
        if self.unless is not None and self.unless.search(text):
            return False
        if self.context is not None and not self.context.search(text):
            return False
        if self.words is None:
            return True
        if self.scope == "any":
            return bool(self.words.search(found.message) or self.words.search(text))
        return bool(self.words.search(text if self.scope == "log" else found.message or text))


_IMPORT_ERROR = re.compile(r"ImportError|ModuleNotFoundError")
# The device runtimes' own libraries (CUDA's runtime and NVRTC, HIP's, Level Zero's loader,
# Ascend's ACL, MUSA's, Cambricon's CNRT, MetaX's): absent, they are the node's SDK missing.
RUNTIME_LIBRARY_MISSING = re.compile(
    r"(?P<tool>lib(?:cudart|nvrtc|amdhip64|ze_loader|ascendcl|musart?|cnrt|mcruntime)\b[\w.]*)"
    r": cannot open shared object file"
)
# A runtime API's symbol (hipGetDevicePropertiesR0600, cuTensorMapEncodeTiled, zeX, aclX)
# missing where a launcher or extension module is loaded.
_RUNTIME_SYMBOL_MISSING = re.compile(r"undefined symbol: (?:hip|cu|cuda|ze|acl|mu|mc)[A-Z]\w*")
# A device runtime's error, by what its code means, in any wrapper: Triton's launcher
# ("Triton Error [CUDA]: out of memory"), PyTorch's ("CUDA error: out of memory"), or the
# code's own name. Its one owner: the table's rows and the signatures' keys read it here.
# Triton's HIP launcher puts the code's number before its message ("Triton Error [HIP]:  Code:
# 2, Messsage: out of memory", its spelling in some releases).
# PyTorch's and its vendor forks' words for a runtime's error (Cambricon's torch_mlu says
# "CNRT error: X", MetaX's runtime "MACA Error: X").
RUNTIME_NAMES = r"CUDA|HIP|XPU|MUSA|CNRT|MACA"
_RUNTIME_SAYS = (
    rf"(?:\b(?:{RUNTIME_NAMES})(?: driver)? [Ee]rror|Triton Error \[\w+\]):\s*"
    r"(?:Code: -?\d+, Mess?s?age: )?"
)
# Ascend's runtime (CANN's ACL): the codes torch_npu reports ("NPU function error: ...,
# error code is 507035", "ACL stream synchronize failed, error code:507015") by what they
# mean (CANN's rt_error_codes.h), each with torch_npu's words for it (its table of codes), so
# either decides: (code, meaning, name, words or "").
_ACL_SAYS = r"(?:NPU function error|\bACL\b|\bacl\w*)[^\n]*?\berror code(?: is|:|\s*=)\s*"


class AclCode(NamedTuple):
    code: int
    meaning: str  # fault, timeout, memory, hardware (any code not listed: the driver)
    name: str  # the fault's name in keys
    words: str  # torch_npu's words for the code ("" where they are too generic to decide)


_ACL_CODES: Tuple[AclCode, ...] = tuple(
    AclCode(*row)
    for row in (
        (507015, "fault", "aicore exception", r"The aicore execution is abnormal"),
        (507016, "fault", "aicore trap exception", r"An exception occurs when the aicore trap is"),
        (507018, "fault", "aicpu exception", r"The aicpu execution is abnormal"),
        (507035, "fault", "vector core exception", r"The vector core execution is abnormal"),
        (
            507036,
            "fault",
            "vector core trap exception",
            r"An exception occurs when vector core traps",
        ),
        (507042, "fault", "aicore trap read out of bounds", r"aicore trap read out-of-bounds"),
        (507043, "fault", "aicore trap write out of bounds", r"aicore trap write out-of-bounds"),
        (
            507044,
            "fault",
            "vector core trap read out of bounds",
            r"Vector core trap read out-of-bounds",
        ),
        (
            507045,
            "fault",
            "vector core trap write out of bounds",
            r"Vector core trap write out-of-bounds",
        ),
        (
            507049,
            "fault",
            "internal task exception",
            r"An exception occurs during the execution of an",
        ),
        (507014, "timeout", "aicore timeout", r"The aicore execution times out"),
        (507017, "timeout", "aicpu timeout", r"The aicpu execution times out"),
        (507034, "timeout", "vector core timeout", r"Vector core execution timed out"),
        (
            507048,
            "timeout",
            "internal task timeout",
            r"The execution of the internal task times out",
        ),
        (207001, "memory", "memory allocation", ""),
        (207018, "memory", "device memory exhausted", r"The memory on the device is exhausted"),
        (
            507010,
            "hardware",
            "task scheduler lost heartbeat",
            r"The task scheduler loses the heartbeat",
        ),
        (
            507013,
            "hardware",
            "DMA hardware error",
            r"Direct Memory Access \(DMA\) hardware execution",
        ),
        (507901, "hardware", "HDC session disconnected", r"\(HDC\) session is disconnected"),
    )
)


def _acl(meaning: str) -> str:
    """A pattern of the ACL codes of one meaning: their numbers as reported, or their words."""
    rows = [row for row in _ACL_CODES if row.meaning == meaning]
    codes = "|".join(str(row.code) for row in rows)
    words = "".join(f"|{row.words}" for row in rows if row.words)
    return rf"{_ACL_SAYS}(?:{codes})\b{words}"


_ACL_FAULT = re.compile(_acl("fault"))


# A fault of the device while a kernel ran, reported through the driver's error path.
DEVICE_FAULT = re.compile(
    r"illegal memory access|misaligned address|unspecified launch failure|\billegal[ _]address\b"
    r"|illegal instruction|hardware (?:exception|stack error)|trapType"
    # CUDA's words for a kernel that jumped to a bad address or used one in the wrong space.
    r"|invalid program counter|operation not supported on [\w/]*shared address space"
    # The runtimes' names of the same codes (CUDA_ERROR_ILLEGAL_ADDRESS, hipErrorLaunchFailure).
    r"|\b(?:CUDA_ERROR_|cudaError|hipError)(?:ILLEGAL_?ADDRESS|MISALIGNED_?ADDRESS"
    r"|ILLEGAL_?INSTRUCTION|(?:PRIOR_?)?LAUNCH_?FAIL(?:ED|URE)|HARDWARE_?STACK_?ERROR|INVALID_?PC"
    r"|ASSERT)\b"
    # ROCm's HSA runtime's codes for a kernel's fault (a queue aborting with one of them).
    r"|\bHSA_STATUS_ERROR_(?:MEMORY_APERTURE_VIOLATION|ILLEGAL_INSTRUCTION|MEMORY_FAULT"
    r"|EXCEPTION)\b"
    # Not "enable device-side assertions": torch appends that advice to every device error.
    r"|device-side assert(?:ion)? triggered|DEVICE_LOST\b|\bdevice (?:was )?lost\b"
    # The runtime's report of the assert, its first words (a box or a wrap may cut the rest).
    rf"|{_RUNTIME_SAYS}device-side assert\b",
    re.I,
)
# The runtimes' names of fault codes, and the first words of a report cut short, in the words
# of the runtime's full message: one fault, one name, whichever form a report shows.
_FAULT_NAMES = (
    (re.compile(r"ILLEGAL_?ADDRESS$", re.I), "an illegal memory access was encountered"),
    (re.compile(r"MISALIGNED_?ADDRESS$", re.I), "misaligned address"),
    (re.compile(r"ILLEGAL_?INSTRUCTION$", re.I), "illegal instruction"),
    (re.compile(r"LAUNCH_?FAIL(?:ED|URE)$", re.I), "unspecified launch failure"),
    (re.compile(r"HARDWARE_?STACK_?ERROR$", re.I), "hardware stack error"),
    (re.compile(r"INVALID_?PC$", re.I), "invalid program counter"),
    (re.compile(r"(?:_|[a-z])ASSERT$|device-side assert$", re.I), "device-side assert triggered"),
)


def device_fault(text: str) -> str:
    """The device fault the text names (DEVICE_FAULT), in its runtime message's words; or ""."""
    fault = DEVICE_FAULT.search(text)
    if fault is None:
        acl = _ACL_FAULT.search(text)
        if acl is None:
            return ""
        said = acl[0]
        return next(
            name
            for code, meaning, name, words in _ACL_CODES
            if meaning == "fault" and (said.endswith(str(code)) or (words and words in said))
        )
    for form, name in _FAULT_NAMES:
        if form.search(fault[0]):
            return name
    return fault[0].lower()


# A device's own report that a kernel faulted, printed outside any exception line (Ascend's
# runtime: an AI core or vector core exception, an abnormal core execution).
_DEVICE_REPORT = re.compile(
    rf"{_ACL_FAULT.pattern}|"
    r"\bai ?core exception\b|\b(?:ai ?core|vector core|cube core) execution is abnormal"
    r"|\baivec error\b|\bai ?core error\b|\bAicore kernel execute failed"
    # Intel's kernel driver (xe): the engine faulted on the kernel's memory and was reset.
    r"|Engine memory CAT error|exec queue reset detected"
    # ROCm's runtime: the GPU faulted on an address (a page not present, a write to a
    # read-only page); the amdgpu kernel driver's own report of it.
    r"|Memory access fault by GPU node|amdgpu:? \[\w+\] page fault|GCVM_L2_PROTECTION_FAULT"
    # ... or a hardware exception it raised for the GPU (a hang the GPU was reset for).
    r"|HW Exception by GPU node"
    # NVIDIA's compute-sanitizer (memcheck) caught the kernel's access.
    r"|^=+ +Invalid __(?:shared|global|local)__ (?:read|write)\b",
    re.I,
)
# A device runtime's report of an error code that no form above names (PyTorch's "CUDA
# error: invalid argument"): the runtime refused what it was asked, a driver failure.
RUNTIME_ERROR = re.compile(
    rf"{_RUNTIME_SAYS}\S|\bHSA_STATUS_ERROR_\w+|{_ACL_SAYS}(?:[12]07|50[07])\d{{3}}\b"
)
# The device's memory ran out under the program's tensors (the model, a cache, a batch): the
# node's capacity for the job, not a kernel's limits (out_of_resources).
DEVICE_MEMORY = re.compile(
    r"\b(?:CUDA|HIP|XPU|NPU|MUSA|MLU) out of memory(?=\.)"
    rf"|{_RUNTIME_SAYS}out of memory\b"
    r"|\bCUDA_ERROR_OUT_OF_MEMORY\b|\bhipErrorOutOfMemory\b|\bcudaErrorMemoryAllocation\b"
    # NCCL's report of the CUDA call that failed under it.
    r"|\bCuda failure (?:\d+ )?'out of memory'"
    r"|\b(?:ZE|UR)_RESULT_ERROR_OUT_OF_DEVICE_MEMORY\b"
    rf"|{_acl('memory')}"
)
_RUNTIME_NAME = re.compile(r"CUDA|HIP|XPU|NPU|MUSA|MLU|MACA|ACL|CNRT|(?:ZE|UR)_", re.I)
# Runtimes named by their API's name: Intel's Level Zero and Unified Runtime are the XPU's,
# Ascend's ACL the NPU's, Cambricon's CNRT the MLU's.
_RUNTIME_OF_API = {"ZE_": "XPU", "UR_": "XPU", "ACL": "NPU", "CNRT": "MLU"}


def device_runtime(said: str) -> str:
    """The device runtime an error names, whichever form names it (PyTorch's words, a code's
    name: "CUDA out of memory", "hipErrorOutOfMemory", "UR_RESULT_ERROR_..."), or ""."""
    match = _RUNTIME_NAME.search(said)
    if match is None:
        return ""
    name = match[0].upper()
    return _RUNTIME_OF_API.get(name, name)


# The device's hardware failed under the job: its memory's ECC, an NVLink, the GPU lost from
# the bus. The node's, not the kernel's (a kernel's own fault is DEVICE_FAULT).
DEVICE_HARDWARE = re.compile(
    r"uncorrectable ECC error|\b(?:CUDA_ERROR_|cudaError)ECC_?UNCORRECTABLE\b"
    r"|\bhipErrorECCNotCorrectable\b"
    r"|uncorrectable NVLink error|\b(?:CUDA_ERROR_|cudaError)NVLINK_?UNCORRECTABLE\b"
    r"|GPU has fallen off the bus"
    rf"|{_acl('hardware')}",
    re.I,
)
# The device's watchdog ended a kernel that ran too long (a display GPU's time limit), or the
# runtime gave up waiting on the device.
LAUNCH_TIMEOUT = re.compile(
    rf"{_RUNTIME_SAYS}(?:the launch timed out and was terminated|wait operation timed out)"
    r"|\bCUDA_ERROR_LAUNCH_TIMEOUT\b|\bcudaErrorLaunchTimeout\b|\bhipErrorLaunchTimeOut\b"
    rf"|{_acl('timeout')}"
)
# The launch asked more of a multiprocessor than it has (registers for the block's threads,
# blocks for a cooperative launch): the kernel's resources, refused at launch.
LAUNCH_RESOURCES = re.compile(
    r"too many resources requested for launch|too many blocks in cooperative launch"
    r"|\b(?:CUDA_ERROR_|cudaError|hipError)"
    r"(?:LAUNCH_?OUT_?OF_?RESOURCES|COOPERATIVE_?LAUNCH_?TOO_?LARGE)\b"
    r"|\bHSA_STATUS_ERROR_OUT_OF_REGISTERS\b",
    re.I,
)
# The driver's own compiler failed to build the module from the IR it was given (a PTX or
# SPIR-V JIT, a vendor's finalizer): code generation, whichever layer reports it.
_DRIVER_BUILD = re.compile(
    r"MODULE_BUILD_FAILURE|\bbuild module failed|Internal Compiler Error"
    r"|CUDA_ERROR_INVALID_PTX|PTX JIT compil\w* failed"
)
# A timeout: the exception's type says so.
_TIMEOUT_TYPE = re.compile(r"\w*Timeout\w*|TimeoutExpired")
# A timeout in a tool's own words, on one line with what it waited on: a compile, an autotune
# or benchmark run, a compile worker.
_WAITED = r"(?:compil\w*|autotun\w*|benchmark\w*|precompil\w*)"
_TIMED_OUT = r"(?:time[sd]? ?out|did not (?:finish|complete) (?:with)?in)"
_COMPILE_TIMEOUT = re.compile(
    rf"^[^\n]*(?:\b{_TIMED_OUT}\b[^\n]*\b{_WAITED}|\b{_WAITED}[^\n]*\b{_TIMED_OUT}\b)[^\n]*$",
    re.I | re.M,
)
# A compiler's report of a limit a kernel exceeds, with both figures: out of resources,
# whatever layer or wrapper reports it. Intel's IGC ("total scratch space exceeds HW
# supported limit for kernel k: 345088 bytes (max permitted PTSS 262144 bytes)") and LLVM's
# AMDGPU backend ("stack frame size (164332) exceeds limit (131056) in function 'k'").
LIMIT_EXCEEDED = re.compile(
    r"(?:total )?(?P<resource>[a-z][a-z ]{2,30}?)(?: \((?P<required_p>\d+)\))? exceeds "
    r"(?:(?:the )?limit \((?P<limit_p>\d+)\)"
    r"|[^\n]{0,40}?limit[^\n]{0,80}?:?\s*(?P<required>\d+) bytes \(max[^\d)]{0,40}"
    r"(?P<limit>\d+) bytes\))"
)
# ... or in words with no figures ("Shared memory usage exceeds device limit").
LIMIT_WORDS = re.compile(
    r"\b(?P<resource>shared memory|local memory|registers)(?: usage| size)? exceeds? (?:the )?"
    r"(?:device|hardware|HW) limit",
    re.I,
)
# The package environment: a package is absent or does not import.
_PACKAGE_MISSING = re.compile(
    r"Cannot find a working \w+ installation|No module named '|\bTritonMissing\b"
)
# A file of Triton's kernel cache (~/.triton/cache, a TRITON_CACHE_DIR named triton_cache*)
# or one of its temporary files ("k.cubin.tmp.pid_72_945989").
TRITON_CACHE_FILE = re.compile(r"[\\/]\.?triton[\w-]*[\\/]cache[\\/]|triton_cache|\.tmp\.pid_\d")
# pip could not build a package from source: the environment cannot be installed.
_PACKAGE_BUILD = re.compile(
    r"Failed building (?:wheel|editable) for [\w.-]+|Failed to build installable wheels"
)
# The node's file system failed under whatever read it (an NFS cache, a full or read-only disk).
FILESYSTEM = re.compile(
    r"Stale file handle|Input/output error|Read-only file system"
    # Windows: another process holds the file (an antivirus, an indexer, a stuck build).
    r"|\[WinError 32\]|being used by another process"
    # libuv's errno names, as a CI runner's own steps (Node.js) print them.
    r"|\bE(?:ACCES|PERM|NOSPC|ROFS|IO): [a-z ]+, \w+ '"
)
# The network or a remote service failed under a download or an upload: an HTTP error status
# from a remote host (requests', httpx's, urllib's words), a connection pool's failure to one,
# a rate limit, a name that does not resolve, object storage refusing a call (botocore's
# words). Before the timeouts: a remote read that timed out is the network's. A local
# server's errors (a vLLM server under test on localhost refusing connections, answering
# 500) are not: its own failure may be the compiler's.
_LOCAL_HOST = r"(?:localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[::1\])"
NETWORK = re.compile(
    rf"\b[45]\d\d (?:Client|Server) Error: [A-Z][A-Za-z ]*[a-z] for url: https?://(?!{_LOCAL_HOST})"
    rf"|(?:Client|Server) error '[45]\d\d [A-Za-z ]+' for url '?https?://(?!{_LOCAL_HOST})"
    rf"|\bHTTPS?ConnectionPool\(host='(?!{_LOCAL_HOST})[^']+', port=\d+\)"
    r"|\bHTTP Error [45]\d\d\b|\bToo Many Requests\b|\brate[- ]limit(?:ed)? you\b"
    r"|\bhit the quota of\b|Temporary failure in name resolution|Name or service not known"
    r"|\bNetwork is unreachable\b"
    rf"|couldn't connect to '?https?://(?!{_LOCAL_HOST})"
    r"|An error occurred \(\w+\) when calling the \w+ operation|Unable to locate credentials"
    # A remote host closing the connection under a download from it (http.client's words).
    rf"|https?://(?!{_LOCAL_HOST})\S+[^\n]*\n(?:[^\n]*\n){{0,3}}?[^\n]*"
    r"Remote end closed connection without response"
)
# pip finds no build of a package at all for this platform and Python ("from versions:
# none"): the environment cannot be installed. Unless pip could not reach its index.
_NO_DISTRIBUTION = re.compile(r"\(from versions: none\)")
_INDEX_UNREACHABLE = re.compile(NETWORK.pattern + r"|connection broken by|Could not fetch URL")
# An extension module built for another Python or NumPy than the one running it: the
# C-API refuses its calls (Triton's launcher helpers before Python 3.10's rule).
_C_API_MISMATCH = re.compile(
    r"PY_SSIZE_T_CLEAN macro must be defined|module compiled against (?:ABI|API) version"
    r"|compiled using NumPy 1\.x cannot be run in"
)
# A shared library of the installed packages does not load: built against another version
# (a symbol it needs is not there) or missing from the install. A GPU driver's own library
# missing is the node's driver, not the packages.
_LIBRARY_LOAD = re.compile(r"\.so[\w.]*: (?:undefined symbol: \w+|cannot open shared object file)")
_DRIVER_LIBRARY = re.compile(r"\blib(?:cuda|nvidia-\w+|ze_loader|hsa-runtime64)\.so")
# The environment's torch was built without the device the test asks for.
_TORCH_WITHOUT_DEVICE = re.compile(r"Torch not compiled with \w+ enabled")
# A sanitizer's report whose stack runs through a compiler pass's sources (a Transforms or
# Conversion directory, a *Pass.cpp): the pass corrupted memory.
SANITIZER_IN_PASS = re.compile(
    r"ERROR: (?P<what>\w+Sanitizer: [\w-]+)[\s\S]{0,4000}?"
    r"(?:[/\\](?:Transforms|Conversion)[/\\](?:[\w.-]+[/\\])*(?P<source>[\w.-]+\.(?:cpp|h))"
    r"|(?P<pass_source>\w+Pass\.cpp))"
)
# An installed library cannot find a file of its own install (its kernel database, its code
# objects): a broken install. A GPU driver's library is the node's driver. The library's
# folder under lib/, where there is one, names it (the signature's package).
INSTALL_FILE = re.compile(
    r"(?:Cannot read|Could not load|[Ff]ailed to load) \S*[/\\]lib(?:64)?[/\\]"
    r"(?:(?P<package>[\w.+-]+)[/\\])?\S+?\.(?:dat|hsaco|co|bin|so(?:\.\d+)*)\b"
)
# The caller passes an argument the installed API does not take (a launch option of another
# release: num_ctas, a keyword a newer kernel signature has).
_UNEXPECTED_ARGUMENT = re.compile(r"got an unexpected keyword argument '\w+'")
# A kernel launched as kernel[grid](...) is a plain function: the decorator was not Triton's
# (a placeholder an application put in Triton's place when it would not import).
_NOT_JITTED = re.compile(r"TypeError: 'function' object is not subscriptable")
# pytest could not even collect the tests: the suite's own modules do not import.
_COLLECTION = re.compile(
    r"\d+ errors? during collection|^ERROR collecting |ImportError while (?:loading conftest"
    r"|importing test module)",
    re.M,
)
# A compiled extension rejects its caller's arguments (pybind11's words): the two sides
# were built for different versions.
_BINDING_MISMATCH = re.compile(r"incompatible function arguments\. The following argument types")
# The caller names an API the installed package lacks ("module 'triton' has no attribute
# 'code_gen'"): outside the compiler, the two are of different versions.
_API_MISSING = re.compile(
    r"(?:module|type object) '[\w.]+' has no attribute '\w+'"
    # PyTorch's helper that tries one API's names across releases ("cluster_dims",
    # "clusterDims") and finds none.
    r"|does not ha(?:s|ve) any of the attributes"
    # A name the caller imports that the installed package no longer has.
    r"|cannot import name '\w+' from '[\w.]+'"
    # Triton's JIT refusing an attribute a caller sets on a kernel (xformers' `fn.src = ...`
    # against a Triton that guards it).
    r"|Cannot set attribute '\w+' directly"
    # A caller reading what one release's runtime objects had (a kernel's `cache`, its
    # `cache_key`) from another's.
    r"|'(?:JITFunction|InterpretedFunction|Autotuner|Heuristics|CompiledKernel|ASTSource)'"
    r" object has no attribute '\w+'"
    # A library refusing the installed Triton's version ("not supported with triton
    # >=3.2.0"), or pip naming the version a package requires.
    r"|\b(?:not supported|unsupported|requires?|only supports?|incompatible)\b[^\n]{0,60}?"
    r"\btriton\s*(?:[<>=!]=?|version\b)\s*v?\d"
)
# A kernel needs memory at launch (a TMA descriptor, scratch) that Triton asks of the
# allocator the program sets; none was set (a program written for an older Triton).
_NO_ALLOCATOR = re.compile(r"no allocator was set\b|Use triton\.set_allocator\b")
# The caller's program misuses the API around the kernel, in the words of the layer that
# checks it: autotuned names passed again, tensors on two devices, an op the installed
# torch has no kernel of for the device.
_CALLER_MISUSE = re.compile(
    r"Conflicting meta-parameters: [\w, ]+\. Make sure that you don't re-define auto-tuned"
    r"|Expected all tensors to be on the same device"
    r"|Could not run '[\w:.]+' with arguments from the '\w+' backend"
    # Triton's launcher: the caller passed a keyword the kernel has no parameter of; the
    # caller defined a kernel where Triton cannot read its source (a notebook cell, exec).
    r"|Keyword argument \w+ was specified but unrecognised"
    r"|@jit functions should be defined in a Python file"
)
# pybind11's refusal of a call's arguments: outside Triton's compile (where its builder's
# functions are the frontend's), the caller misusing an extension's function.
_EXTENSION_MISUSE = re.compile(r"\w+\(\): incompatible function arguments")
# The test runner refused the run itself: its command line (argparse's words, pytest's), a
# fixture a test asks for that nothing provides.
_RUNNER_REFUSED = re.compile(
    r"^\S+: error: unrecognized arguments:|^\s*(?:E\s+)?fixture '[\w-]+' not found", re.M
)
# The caller uses an object its setup never made (``None`` where an op or module should be).
_NONE_OBJECT = re.compile(r"'NoneType' object has no attribute '\w+'")
# The banner of a frontend error, or the one caret Triton puts under the kernel's source
# column it points at (Python's own traceback markers are runs of carets).
_COMPILATION_BANNER = re.compile(
    r"CompilationError|\bcompilation (?:error|failed)\b|^\s*\^\s*$", re.I | re.M
)
# Python errors raised inside the JIT'ed function (the code generator re-raises them).
_PYTHON_ERROR = re.compile(
    r"NameError|IndexError|TypeError|ValueError|AttributeError|KeyError|AssertionError"
    r"|UnboundLocalError|NotImplementedError"
)

# A sampling profiler's report (perf top, perf report): "58.03%  libtriton.so  [.] symbol".
_PROFILE = re.compile(r"(?:^\s*\d+\.\d+%\s+\S+\s+\[[.k]\]\s+\S[^\n]*\n?){2,}", re.M)

TABLE: Tuple[Row, ...] = (
    # Not the compiler: the node, the network, the package install, the host toolchain.
    Row(
        "infrastructure",
        exception=re.compile(r"Dist(?:Network|Store)Error"),
        why="torch.distributed's workers could not reach each other or their store",
    ),
    Row("infrastructure", layer="collective", why="a collective's watchdog across workers"),
    Row("infrastructure", layer="worker", why="a worker process was lost"),
    Row("infrastructure", layer="build", why="a build's compiler was killed (memory)"),
    Row("infrastructure", words=FILESYSTEM, scope="any", why="the node's file system failed"),
    Row(
        "infrastructure",
        words=NETWORK,
        scope="any",
        why="the network or a remote service failed (an HTTP error, a connection, a rate limit)",
    ),
    # A device runtime's own library absent from the node (the SDK's), or one too old for
    # the launcher built against it (a runtime API's symbol it lacks): not the package's.
    Row(
        "toolchain",
        words=RUNTIME_LIBRARY_MISSING,
        scope="any",
        why="the device runtime's library is not on the node",
    ),
    Row(
        "driver",
        words=_RUNTIME_SYMBOL_MISSING,
        scope="any",
        why="the device runtime lacks an API the launcher was built against (too old)",
    ),
    Row(
        "harness_error", exception=_IMPORT_ERROR, why="a package of the environment does not import"
    ),
    Row("harness_error", words=_PACKAGE_MISSING, why="a package of the environment is missing"),
    Row(
        "harness_error",
        words=_NO_DISTRIBUTION,
        scope="log",
        unless=_INDEX_UNREACHABLE,
        why="pip finds no build of a package for this platform and Python (not installable)",
    ),
    Row(
        "harness_error",
        words=_C_API_MISMATCH,
        scope="any",
        why="an extension module built for another Python or NumPy C-API (versions disagree)",
    ),
    Row(
        "harness_error",
        words=_LIBRARY_LOAD,
        scope="any",
        unless=_DRIVER_LIBRARY,
        why="a shared library of the installed packages does not load (another version, missing)",
    ),
    Row(
        "harness_error",
        words=INSTALL_FILE,
        scope="any",
        unless=_DRIVER_LIBRARY,
        why="an installed library cannot find a file of its own install",
    ),
    Row(
        "harness_error",
        words=_TORCH_WITHOUT_DEVICE,
        scope="any",
        why="the environment's torch was built without the device the test runs on",
    ),
    Row(
        "harness_error",
        exception=re.compile(r"TypeError"),
        words=_UNEXPECTED_ARGUMENT,
        unless=_COMPILATION_BANNER,
        # Inside Triton's frontend it is the kernel's own call of a language function.
        not_in=(FRONTEND_LAYER,),
        why="the caller passes an argument the installed API does not take (versions disagree)",
    ),
    Row(
        "harness_error",
        words=_PACKAGE_BUILD,
        scope="log",
        why="pip could not build a package of the environment (it does not install)",
    ),
    Row(
        "harness_error",
        layer=PACKAGE_BUILD_LAYER,
        # A Python error of the script's own (a path it was not given, left None); a tool it
        # runs failing (CalledProcessError: the compiler's diagnostics) is decided by those.
        exception=re.compile(
            r"TypeError|ValueError|KeyError|AttributeError|NameError|IndexError|UnboundLocalError"
        ),
        why="a package's build script failed in its own code: the package does not install",
    ),
    Row(
        "harness_error",
        layer="importer",
        why="a package's module broke while Python imported it (a half-installed package)",
    ),
    Row(
        "harness_error",
        words=_NOT_JITTED,
        scope="any",
        why="the kernel is a plain function: Triton's JIT was replaced or not applied",
    ),
    Row(
        "harness_error",
        words=_COLLECTION,
        scope="log",
        why="pytest could not collect the tests (the test modules do not import)",
    ),
    Row(
        "harness_error",
        words=_API_MISSING,
        scope="any",
        unless=_COMPILATION_BANNER,
        # Inside Triton's frontend it is the kernel using an API this release lacks.
        not_in=TRITON_LAYERS,
        why="the caller uses an API the installed package lacks (versions disagree)",
    ),
    Row(
        "harness_error",
        words=_BINDING_MISMATCH,
        scope="any",
        # Inside the compiler's own layers the mismatch is the compiler package's (a vendor
        # backend built against another Triton): the compiler under test is broken; under a
        # compilation banner it is the frontend's call of its own builder.
        not_in=TRITON_LAYERS,
        unless=_COMPILATION_BANNER,
        why="a compiled extension and its caller outside the compiler are of different versions",
    ),
    Row(
        "harness_error",
        words=_NO_ALLOCATOR,
        scope="any",
        why="the caller set no allocator for the memory a kernel asks of Triton at launch",
    ),
    Row(
        "harness_error",
        words=_EXTENSION_MISUSE,
        scope="any",
        unless=_COMPILATION_BANNER,
        # Raised inside Triton (its frontend, a backend's compiler): Triton's own bindings.
        not_in=TRITON_LAYERS,
        why="the caller passed a C++ extension's function arguments it does not take",
    ),
    Row(
        "harness_error",
        words=_RUNNER_REFUSED,
        scope="log",
        why="the test runner refused its command line or a test's fixture",
    ),
    Row(
        "harness_error",
        words=_CALLER_MISUSE,
        scope="any",
        why="the caller's program misuses the API around the kernel (the layer that checks)",
    ),
    Row(
        "harness_error",
        exception=re.compile(r"AttributeError"),
        words=_NONE_OBJECT,
        unless=_COMPILATION_BANNER,
        # Inside Triton's frontend it is the kernel's code (a value the compiler lacks).
        not_in=TRITON_LAYERS,
        why="the caller's setup never made the object it uses (an op or module left None)",
    ),
    Row(
        "out_of_resources",
        words=LIMIT_EXCEEDED,
        scope="any",
        why="a compiler reports a limit the kernel exceeds, with the figures (whoever wraps it)",
    ),
    Row(
        "out_of_resources",
        words=LIMIT_WORDS,
        scope="any",
        why="a kernel's use of a resource exceeds the device's limit, in words with no figures",
    ),
    Row(
        "pass_failure",
        words=SANITIZER_IN_PASS,
        scope="log",
        why="a sanitizer caught memory corrupted inside a compiler pass",
    ),
    Row("toolchain", layer="host_build", why="building the launcher needs the host C compiler"),
    Row("toolchain", layer="sdk_lookup", why="a backend did not find the host's SDK or tools"),
    Row(
        "toolchain",
        # Triton's words, and Inductor's for the C++ compiler it builds with ("cl" on Windows;
        # a compiler that is there but does not work, InvalidCxxCompiler).
        words=re.compile(
            r"Failed to find C compiler|\bCompiler: \S+ is not found"
            r"|No working C\+\+ compiler found"
        ),
        why="no host C compiler (seen in the message or its raise line)",
    ),
    # What a device runtime's error code means, whoever reports it (a code no row names is
    # the driver's refusal: taxonomy's forms).
    Row(
        "infrastructure",
        words=DEVICE_MEMORY,
        scope="any",
        why="the device's memory ran out under the program's tensors (the node's capacity)",
    ),
    Row(
        "infrastructure",
        words=DEVICE_HARDWARE,
        scope="any",
        why="the device's hardware failed under the job (ECC, NVLink, lost from the bus)",
    ),
    Row(
        "timeout",
        words=LAUNCH_TIMEOUT,
        scope="any",
        why="the device's watchdog ended a kernel that ran too long",
    ),
    Row(
        "out_of_resources",
        words=LAUNCH_RESOURCES,
        scope="any",
        why="the launch asked more of a multiprocessor than it has (refused at launch)",
    ),
    # The device faulted while the kernel ran: the launcher or the driver reports it.
    Row(
        "crash",
        words=DEVICE_FAULT,
        exception=re.compile(r"RuntimeError|\w*Error"),
        why="device fault",
    ),
    Row("crash", words=_DEVICE_REPORT, scope="log", why="the device reports a kernel fault"),
    Row(
        "crash",
        words=DEVICE_FAULT,
        scope="log",
        # C++'s "terminate called ... what(): CUDA error: an illegal memory access" has no
        # exception line; a runtime's error code (hipErrorIllegalAddress) is not a refusal.
        why="a device fault named outside an exception line",
    ),
    # A timeout: a timeout exception, or a tool's words for a compile or autotune timeout.
    Row("timeout", exception=_TIMEOUT_TYPE, why="a timeout exception"),
    Row(
        "timeout",
        words=_COMPILE_TIMEOUT,
        scope="any",
        why="a compile, autotune or compile-worker wait timed out",
    ),
    Row(
        "timeout",
        exception=re.compile(""),
        words=_PROFILE,
        scope="log",
        why="no error, only a profile of where the time goes: a process that does not finish",
    ),
    Row(
        "compile_error",
        exception=re.compile(r"FileNotFoundError"),
        words=TRITON_CACHE_FILE,
        why="a compiled kernel's file went missing from Triton's cache (processes racing)",
    ),
    # Where the exception was raised.
    Row("frontend", layer="frontend", why="raised by Triton's frontend (code generator, language)"),
    Row(
        "frontend",
        exception=_PYTHON_ERROR,
        source="repr line",
        context=_COMPILATION_BANNER,
        why="a Python error raised in the JIT'ed function, printed under a compilation banner",
    ),
    Row("codegen", layer="backend", stage=BINARY_STAGE, why="raised in a backend's binary stage"),
    Row(
        "codegen",
        stage=MACHINE_CODE_STAGE,
        words=re.compile(r"LLVM ERROR: (?!out of memory)"),
        scope="log",
        why="LLVM aborted in a stage that emits machine code (PTX, AMDGCN, SPIR-V, a binary)",
    ),
    Row(
        "pass_failure",
        layer="backend",
        stage=re.compile(r"^make_(?:\w*ir|ttgir|llir)$"),
        # A real resource limit and a timeout keep their own kinds wherever raised.
        exception=re.compile(r"(?!OutOfResources$|\w*Timeout\w*$)\w+"),
        why="raised in a backend's IR stage: its pass pipeline failed (a C++ exception too)",
    ),
    Row(
        "codegen",
        words=_DRIVER_BUILD,
        scope="any",
        why="the driver's own compiler could not build the module (PTX or SPIR-V JIT)",
    ),
    Row(
        "backend_resolution",
        layer="loader",
        words=ACTIVE_DRIVERS,
        scope="any",
        why="Triton's driver registry found no active backend driver (or more than one)",
    ),
    Row("driver", layer="loader", why="the driver's loader refused the compiled kernel"),
    Row(
        "driver",
        exception=re.compile(r"SystemError|RuntimeError"),
        words=re.compile(r"\bload_binary\b|\bloadBinary\b"),
        why="the driver's loader failed on the binary (named in the error)",
    ),
    Row(
        "codegen",
        words=re.compile(r"Internal Triton \w+ codegen error"),
        why="a backend's assembler failed (older wording)",
    ),
)


_TIMEOUT_PHRASE = re.compile(
    rf"\b{_TIMED_OUT}\b[^\n]*?\b{_WAITED}|\b{_WAITED}[^\n]*?\b{_TIMED_OUT}\b", re.I
)


def timeout_phrase(found: Structure, text: str) -> str:
    """A tool's words for a compile or autotune timeout ("Timeout after 60s compiling"), or ""."""
    for where in (found.message, text):
        match = _TIMEOUT_PHRASE.search(where)
        if match:
            return match.group(0)
    return ""


def decide(found: Structure, text: str) -> Tuple[str, Optional[Row]]:
    """The kind the table gives the structure, and the row; ("", None) where none does."""
    for row in TABLE:
        if row.matches(found, text):
            return row.kind, row
    return "", None
