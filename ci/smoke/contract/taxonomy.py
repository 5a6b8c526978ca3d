"""The failure taxonomy: every kind a failing testcase can have, and how a log shows it.

One list, used by the compile worker (``compile_failure_kind``), the fallback probe, the
signatures (``kind_of``) and, through the JUnit property ``failure_kind``, by the
controller's ledger and dashboard. The compile worker and the signatures decide a kind with
the same function on the same text, so a testcase's ``failure_kind`` and its signature's
kind cannot disagree.

A vendor's log is read after ``clean_log`` has cut the prefixes that loggers put before
each line (worker and rank tags, timestamps, glog headers, pytest's ``E``), so that the
exception line and the MLIR diagnostics are found wherever they sit. Standard library only:
this module is part of the lane package.
"""

from __future__ import annotations

import html
import math
import re
from collections import Counter
from dataclasses import dataclass

from ci.smoke.contract import structure

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

# --------------------------------------------------------------------------------------
# Log prefixes, cut from the start of every line before anything is looked for. Each is
# tried repeatedly, since loggers nest (a GitHub Actions timestamp before a glog header).
# A prefix takes the one space after it: the spaces after that are the line's indentation.
_PREFIXES = (
    # A CI service's annotation of a line ("##[error]" of GitHub Actions and Azure Pipelines).
    re.compile(r"##\[[a-z]+\]"),
    # An ISO-8601 timestamp (any fraction, "Z" or a UTC offset), and the stream and tag a
    # container runtime's log (CRI, Kubernetes) puts after it: "...+01:00 stderr F ".
    re.compile(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?[ \t]"
        r"(?:(?:stdout|stderr) [FP] )?"
    ),
    # A date and time in brackets (Jenkins' timestamper, many loggers), cut from a log of one
    # line too.
    re.compile(r"\[\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\] ?"),
    # A syslog or journald line: "Dec 09 13:35:40 host unit[123]: ".
    re.compile(r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ [\w.@-]+(?:\[\d+\])?:\s"),
    # Ray's and vLLM's process tags: (Worker_TP1 pid=N), (VllmWorker rank=1 pid=N),
    # (task, pid=N), (RayWorker pid=N, ip=10.0.0.2).
    re.compile(r"\((?:\w[\w-]*,?\s+)?(?:\w+=\S+?,?\s+)*pid=\d+(?:,\s*ip=[\d.]+)?\) ?"),
    re.compile(r"\[rank\d+\]: ?"),  # torch.distributed
    # vLLM's logger: "[file.py:12]", and before 0.6 "file.py:12]".
    re.compile(
        r"(?:ERROR|WARNING|INFO|DEBUG)\s+\d\d-\d\d \d\d:\d\d:\d\d\s+(?:\[[^\]]+|[\w.]+:\d+)\]\s?"
    ),
    re.compile(r"[EWIF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+\S+:\d+\]\s?(?:\[[\d/]+\]\s)?"),  # glog
    re.compile(r"\[[EWIF]\d{4} [\d:.]+ \S+:\d+\] ?"),  # glog in brackets (ProcessGroupNCCL)
    # TensorFlow's and XLA's logging (TSL): "2024-09-30 16:07:48.549145: E path/x.cc:958] ".
    re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [EWIF] \S+:\d+\] ?"),
    re.compile(r"\[\d{4}-\d\d-\d\d [\d:,.]+ [EWIF] \d+ \d+\] \S+:\d+:\s*"),  # ray's logging.cc
    re.compile(r"\[\d\d:\d\d:\d\d\]\s+\w+/\w+\s+"),  # [16:10:33] stdout/INFO
    re.compile(r"E {2,}"),  # pytest's failure lines ("E       RuntimeError: ...")
    re.compile(r">+ ?"),  # a log quoted in an issue or e-mail
    re.compile(r"-?\s*\*\*[\w ]+:\*\*\s*"),  # "- **Exception Message:** ..." (report templates)
    re.compile(r"\*\*(?=\w)"),  # a report's Markdown bold around a pasted line ("**Exception: ")
    re.compile(r"!!! Exception during processing !!!\s*"),  # ComfyUI's log of a failed node
)


def _cut_prefixes(line: str) -> str:
    """The line without its logger prefixes; the indentation before what is left is kept."""
    changed = True
    while changed:
        changed = False
        indent = len(line) - len(line.lstrip(" \t"))
        for prefix in _PREFIXES:
            match = prefix.match(line, indent)
            if match and match.end() > indent:
                line = line[:indent] + line[match.end() :]
                changed = True
                break
    return line


def clean_log(text: str) -> str:
    """The text as its tools printed it: markup undone, and every line's logger prefixes cut.

    The known prefixes (``_PREFIXES``) are cut first; then a header that most of the log's
    lines begin with (``_common_header``), whatever logger or CI service wrote it. Leading
    indentation is kept.
    """
    if _ENTITY.search(text):
        text = html.unescape(text)  # a log copied from a web page's source
    lines = [_cut_prefixes(_ANSI.sub("", line)) for line in text.splitlines()]
    # Loggers nest ("[2] [rank0]: ..."): each header is cut in turn, the outermost first.
    for nested in range(_HEADERS_NESTED):
        header = _common_header(lines, inner=nested > 0)
        if header is None:
            break
        cut = {i: line[m.end() :] for i, line in enumerate(lines) if (m := header.match(line))}
        # A severity after the header is the logger's too where most of its lines have one
        # (its word varies line by line); on a line or two it is the tool's own words.
        leveled = sum(bool(_LEVEL.match(line)) for line in cut.values())
        if leveled >= _HEADER_SHARE * len(cut):
            cut = {i: _LEVEL.sub("", line, count=1) for i, line in cut.items()}
        cut = {i: _cut_prefixes(line) for i, line in cut.items()}
        lines = [cut.get(i, line) for i, line in enumerate(lines)]
    # What every line still has in front is a paste's indentation or a header's separator, not
    # the tool's: the log is dedented.
    margin = min((len(line) - len(line.lstrip(" ")) for line in lines if line.strip()), default=0)
    lines = [line[margin:] for line in lines]
    # A message re-flowed by a web table or a terminal keeps runs of spaces where its line
    # breaks were ("Failed to find C   compiler"): one space, as the tool printed it.
    text = "\n".join(_SPACE_RUN.sub(" ", line) for line in lines)
    # A debugger's report of an exception, as Python prints it: "TypeError: message".
    return _DEBUGGER_EXCEPTION.sub(_as_python_exception, text)


# VS Code's (debugpy's) report of an uncaught exception: its type on one line, its message
# (if any) on the next, then the frames.
_DEBUGGER_EXCEPTION = re.compile(
    r"^Exception has occurred: (?P<type>[\w.]+)[ \t]*(?:\n(?P<message>(?![ \t]|File )[^\n]+))?$",
    re.M,
)


def _as_python_exception(found: re.Match[str]) -> str:
    message = found["message"]
    return f"{found['type']}: {message}" if message else found["type"]


# ANSI colour and cursor codes anywhere in a line, raw or as a browser prints ESC ("^[").
_ANSI = re.compile(r"(?:\x1b|\^\[)\[[0-9;?]*[A-Za-z]")
_ENTITY = re.compile(r"&(?:lt|gt|quot|amp|apos|#\d+|#x[0-9a-fA-F]+);")
# A logger's header: where it ends (after a bracket, a bar, a dash or a colon, and a space;
# one space: what follows is the line's indentation).
_HEADER_END = re.compile(r"[\]|│)>:-][ \t]")
# How a logger's header starts: a bracket or a bar, a date or a time, a test runner's number
# ("2: " of CTest), or a service's name before a bar (docker compose). A line of the tool's
# own that repeats ("FAILED test_x - ...", "frame #3: ", "/usr/bin/ld: ") starts otherwise.
_HEADER_START = re.compile(r"[\[(|│<]|9(?:[-/:]9|: $)|[\w.-]+ *\| ")
# A logger's name and the dash or bar after it ("vllm.worker - ").
_INNER_FIELD = re.compile(r"[\w.]+ [-|] $")
# A header is a logger's, never the tool's own words: no quotes (a path or an op a diagnostic
# names), no "file:line:" of a compiler's message, no lower-case "error"/"warning" word.
_NOT_A_HEADER = re.compile(r"[\"'`]|\.\w+:9(?::9)?:|\b(?:error|warning|note|in)\b|^\s")
# A severity word that a logger puts after its header (its level varies line by line).
_LEVEL = re.compile(
    r"^\[?(?:CRITICAL|FATAL|ERROR|WARNING|WARN|NOTICE|INFO|DEBUG|TRACE)\]?(?: ?[-:|] ?| )"
)
_HEADER_SHARE = 0.6  # of the log's non-empty lines
_HEADERS_NESTED = 4
_HEADER_WIDTH = 80  # characters a header is looked for in


def _common_header(lines: list[str], inner: bool = False) -> re.Pattern[str] | None:
    """The header most lines of the log start with, as a pattern; None if there is none.

    Loggers that are not in ``_PREFIXES`` (a CI service's timestamps, a compose service's
    name, a test runner's worker tag, line numbers) still start every line the same way, up
    to their numbers. So each line's beginnings up to a header end are compared with the
    digits taken out: one that most lines share and that starts as a header does is the
    header. Inside one (``inner``), a logger's name before a dash or a bar is one too.
    """
    shown = [line for line in lines if line.strip()]
    if len(shown) < 2:
        return None
    counts: Counter[str] = Counter()
    for line in shown:
        shape = _DIGITS.sub("9", _NUMBERED.sub("", line[:_HEADER_WIDTH]))
        counts.update({shape[: m.end()] for m in _HEADER_END.finditer(shape)})
    need = max(min(3, len(shown)), math.ceil(_HEADER_SHARE * len(shown)))
    found = [
        shape
        for shape, n in counts.items()
        if n >= need
        and (_HEADER_START.match(shape) or (inner and _INNER_FIELD.fullmatch(shape)))
        and not _NOT_A_HEADER.search(shape)
    ]
    if not found:
        return None
    # The shortest: a longer one that most lines share may run into what the tool printed.
    shortest = min(found, key=len)
    return re.compile(" *" + "".join(r"\d+" if c == "9" else re.escape(c) for c in shortest))


_DIGITS = re.compile(r"\d+")
_NUMBERED = re.compile(r"^ +(?=\d)")  # a right-aligned line number's padding
_SPACE_RUN = re.compile(r"(?<=\S) {2,}(?=\S)")


_SPACE_RUN = re.compile(r"(?<=\S) {2,}(?=\S)")


# --------------------------------------------------------------------------------------
# Toolchain

# A piece of the node's toolchain that a stage needs and cannot find: a linker or an SDK.
# Each pattern comes with how the missing piece is named ({tool}: the pattern's group).
# The path of a binary tool a backend runs, as an OS error quotes it.
_BACKEND_TOOL = r"[^']*(?:ptxas|ld\.lld|llc|nvlink)[^']*"
_MISSING_TOOL = (
    (re.compile(r"(?P<tool>ROCm linker \S+) not found"), "{tool}"),
    # A linker older than the release's code objects (Debian's lld 14 and Triton 3.3's COv5).
    (re.compile(r"(?P<tool>ld\.lld): error: unknown abi version"), "{tool} (too old)"),
    # The host's C or C++ compiler does not know an option a build passes it (a language
    # standard newer than the compiler): the compiler's age, not the source.
    (
        re.compile(
            r"\b(?P<tool>c\+\+|g\+\+|gcc|cc|clang\+\+|clang|icpx|icx)(?:-\d+)?: error:"
            r" (?:unrecognized (?:command[- ]line )?option|unknown argument|invalid value)"
            r"[^\n]*?(?P<option>-[\w=+.-]+)"
        ),
        "{tool} (too old for {option})",
    ),
    # An SDK older than the release needs, in the release's own words ("Triton requires
    # CUDA 11.4+").
    (
        re.compile(r"\brequires (?P<tool>CUDA|ROCm|HIP|CANN|oneAPI) (?P<version>\d+(?:\.\d+)*)\+"),
        "{tool} {version} or newer",
    ),
    (re.compile(r"ASCEND_HOME_PATH is not set"), "the CANN toolkit (ASCEND_HOME_PATH)"),
    # Building the launcher stub needs a host C compiler (triton/runtime/build.py).
    (re.compile(r"Failed to find C compiler"), "the host C compiler (CC)"),
    # Inductor's words for the C++ compiler it builds with: not on the node, or not working.
    (re.compile(r"\bCompiler: (?P<tool>\S+) is not found"), "the host C++ compiler ({tool})"),
    (
        re.compile(r"No working C\+\+ compiler found in [\w.]+: \(\w+, '(?P<tool>[^']+)'\)"),
        "the host C++ compiler ({tool})",
    ),
    # The driver library the launcher links against, looked for by name (Triton 2.x's words,
    # and later releases': "cannot locate libcuda.so after attempted paths").
    (re.compile(r"(?P<tool>libcuda\.so) cannot (?:be )?found"), "{tool}"),
    (re.compile(r"cannot locate (?P<tool>libcuda\.so)\b"), "{tool}"),
    # The device runtime's own library (its one owner: structure.RUNTIME_LIBRARY_MISSING).
    (structure.RUNTIME_LIBRARY_MISSING, "{tool}"),
    # The host C compiler is there but cannot build the launcher stub Triton generates.
    (
        re.compile(r"Failed to compile\. cc_cmd: \[\s*'(?P<tool>[^']+)'"),
        "a host C compiler that builds the launcher ({tool})",
    ),
    (
        re.compile(
            r"Command '\[\s*'(?P<tool>[^']+)',[^\n]*?\b(?:__triton_launcher|\w+_utils|main)\.c'"
            r"[^\n]*returned non-zero exit status"
        ),
        "a host C compiler that builds the launcher ({tool})",
    ),
    (re.compile(r"(?P<tool>bishengir-compile)\b.*(?:not found|No such file)"), "{tool}"),
    # The shell found no such program: a compiler, linker or build tool a build step calls.
    (
        re.compile(
            r"(?:^|\n)\s*(?:/bin/)?(?:ba)?sh: (?:\d+: |line \d+: )?(?P<tool>\S*?"
            r"(?:clang\+\+|clang|gcc|g\+\+|cc|c\+\+|nvcc|hipcc|icpx|ptxas|ld\.lld|llc|ocloc"
            r"|cmake|ninja|make))"
            r"(?:: not found|: command not found|: No such file or directory)"
        ),
        "{tool}",
    ),
    # Any other program a build or a script calls that the node lacks: the shell's words, or
    # the GNU build's "missing" script ("WARNING: 'makeinfo' is missing on your system").
    (re.compile(r"(?:^|[\s:])(?P<tool>[\w.+-]+): command not found\b", re.M), "{tool}"),
    (re.compile(r"WARNING: '(?P<tool>[\w.+-]+)' is missing on your system"), "{tool}"),
    # The SYCL driver could not run the GPU code generator it calls (ocloc, absent).
    (re.compile(r"\bgen compiler command failed\b"), "the GPU code generator (ocloc)"),
    # The CUDA device library the NVIDIA backend links every kernel with (bundled with Triton
    # or taken from the CUDA toolkit).
    (re.compile(r"Can't find libdevice\b|\blibdevice not found\b"), "libdevice"),
    (re.compile(r"Cannot find (?P<tool>ptxas|nvcc|nvdisasm|cuobjdump|ld\.lld|clang)\b"), "{tool}"),
    # An SDK's headers a backend looks for, named by the backend ("sycl headers not found").
    (
        re.compile(r"\b(?P<tool>\w+) headers (?:not found|are missing)\b", re.I),
        "the {tool} headers",
    ),
    # A header of the host's SDK that a C or C++ source includes (Python.h, cuda.h, climits):
    # GCC's, Clang's and TinyCC's words, MSVC's error code (its words are localised). Not
    # one a build generates for itself (TableGen's .inc): that is the build's own failure.
    (
        re.compile(
            r"(?:fatal error:\s+|error: include file |fatal error C1083:[^\n]*?)"
            r"(?:(?P<tool>[\w/.+-]+\.h)|['\"\u201c](?P<bare>[\w/.+-]+(?<!\.inc))['\"\u201d])"
            r"['\"\u201d]?(?:: No such file| file not found| not found)"
        ),
        "the host's C headers ({tool}{bare})",
    ),
    # A library the launcher links against (libcuda): GNU ld's words, MSVC's error code.
    (
        re.compile(
            r"cannot find -l(?P<tool>\w+)"
            r"|LNK1181:[^\n]*?['\"\u201c](?P<file>[^'\"\u201d\n]+)['\"\u201d]"
        ),
        "the host's libraries ({tool}{file})",
    ),
    # Clang on Windows reports only the MSVC linker's exit code: LNK1104 and LNK1181 are
    # "cannot open (input) file", a library the link needs.
    (
        re.compile(r"linker command failed with exit code (?P<code>1104|1181)\b"),
        "the host's libraries (LNK{code})",
    ),
    # A binary tool a backend runs (bundled with a wheel or taken from an SDK) is missing, or
    # is there but cannot be run (a wheel's bundled ptxas without its execute bit).
    (re.compile(rf"No such file or directory: '(?P<tool>{_BACKEND_TOOL})'"), "{tool}"),
    (re.compile(rf"Permission denied: '(?P<tool>{_BACKEND_TOOL})'"), "{tool} (not executable)"),
    # The host C compiler rejects the launcher source Triton generates for its dialect or
    # age: an old GCC's C89 default, MSVC (its error codes). Other rejections of the
    # launcher are the launcher's own (source_rejected).
    (
        re.compile(
            r"(?:^|[/\\\s])(?:main|\w+_utils|__triton_launcher)\.c[:(]\d+(?::\d+)?\)?:"
            r" (?:error[^\n]*only allowed in C99 mode|(?:fatal )?error C\d{4}:)",
            re.M,
        ),
        "a host C compiler that builds the launcher",
    ),
)


def missing_tool(text: str) -> str:
    """The toolchain piece the text says is absent (or unfit), or ""."""
    for pattern, name in _MISSING_TOOL:
        match = pattern.search(text)
        if match:
            return name.format(**{k: v or "" for k, v in match.groupdict().items()})
    header = next(
        (f for f in _SOURCE_DIAGNOSTIC.finditer(text) if _INSTALLED_HEADER.search(f["path"])), None
    )
    return f"the host's C headers ({header['file']})" if header else ""


# --------------------------------------------------------------------------------------
# Resource failures, and the backends that wrap pass failures as one

_RESOURCE = re.compile(r"out of resources?:[ \t]*")
# The figures, within the report's paragraph: a wrapped message may put them lines later.
_FIGURES = re.compile(r"Required:\s*(?P<required>\d+)[\s,]*Hardware limit:\s*(?P<limit>\d+)")
_PARAGRAPH = re.compile(r"\n\s*\n")
# The resource's name: one word, or two where the second is lower case ("shared memory").
_RESOURCE_NAME = re.compile(r"[A-Za-z_]\w*(?: (?!PassManager)[a-z]\w*)?")
_PTXAS_SHARED = re.compile(
    r"uses too much shared data \((?P<required>0x[0-9a-f]+|\d+) bytes, "
    r"(?P<limit>0x[0-9a-f]+|\d+) max\)"
)
# Triton 1.x and 2.0's check of a kernel's shared memory against the device's, before a launch.
_DEVICE_SHARED = re.compile(r"Device does not support shared memory of (?P<required>\d+) ?bytes")
# A runtime's refusal of a launch asking more shared memory than the device has, no figures
# (XLA's words for a Triton kernel it runs).
_SHARED_REQUESTED = re.compile(r"(?P<resource>[Ss]hared memory) requested exceeds device resources")
_PASS_IN_WRAPPER = re.compile(r"PassManager::run failed|'[a-z_]+\.[\w.]+' op\b|\berror:")
# The raise itself, where the report lost its message: ``raise OutOfResources(required,
# limit, "name")``; literal zeros for both figures are a wrapped pass failure's placeholders.
_RAISED = re.compile(
    r"raise (?:\w+\.)*OutOfResources\((?P<required>[^,\n]+),\s*(?P<limit>[^,\n]+),\s*"
    r"f?[\"'](?P<resource>[^\"'\n]*)"
)
# A vendor compiler's own words for a buffer it overflowed, with the figures ("ub overflow,
# requires 1835776 bits while 1572864 bits available").
_OVERFLOW = re.compile(
    r"\b(?P<resource>[A-Za-z_]\w*) overflow\W+requires? (?P<required>\d+) ?(?P<unit>[a-zA-Z]*)"
    r"\s+(?:while|but only|but) (?P<limit>\d+)"
)

# The same without figures: a vendor compiler naming the on-chip buffer it overflowed, as
# BiSheng's "Due to Ub overflow, ... compilation still failed" (round 33). Only memories'
# names: "stack overflow" or "integer overflow" are not a device's resource.
_NAMED_OVERFLOW = re.compile(
    r"\b(?P<resource>ub|uni_sram|sram|shared memory|scratch) overflow\b", re.I
)


@dataclass(frozen=True)
class ResourceFailure:
    resource: str
    required: str  # "" where the message gives no figures
    limit: str
    # The backend reports a pass failure as OutOfResources: placeholder figures
    # (Required: 0, Hardware limit: 0) or a pass failure inside the message.
    wrapped: bool
    message: str

    @property
    def placeholders(self) -> bool:
        return self.required == "0" and self.limit == "0"


def resource_failure(text: str) -> ResourceFailure | None:
    """The out-of-resources report in the text, wrapped or real, or None."""
    match = _RESOURCE.search(text)
    if match is not None:
        window = text[match.end() : match.end() + 600]
        window = _PARAGRAPH.split(window, maxsplit=1)[0]
        figures = _FIGURES.search(window)
        body = window[: figures.start()] if figures else window
        name = _RESOURCE_NAME.match(body.strip())
        resource = name.group(0) if name else "?"
        required, limit = (figures["required"], figures["limit"]) if figures else ("", "")
        wrapped = (required == limit == "0") or bool(_PASS_IN_WRAPPER.search(body))
        return ResourceFailure(resource, required, limit, wrapped, body.strip())
    ptxas = _PTXAS_SHARED.search(text)
    if ptxas is not None:
        required, limit = str(int(ptxas["required"], 0)), str(int(ptxas["limit"], 0))
        return ResourceFailure("shared memory", required, limit, False, ptxas.group(0))
    # A compiler's own words for a limit exceeded, with both figures (its one owner: structure).
    exceeds = structure.LIMIT_EXCEEDED.search(text)
    if exceeds is not None:
        required = exceeds["required"] or exceeds["required_p"]
        limit = exceeds["limit"] or exceeds["limit_p"]
        return ResourceFailure(exceeds["resource"], required, limit, False, exceeds.group(0))
    # ... or with none (its one owner too).
    worded = structure.LIMIT_WORDS.search(text)
    if worded is not None:
        return ResourceFailure(worded["resource"].lower(), "", "", False, worded.group(0))
    device = _DEVICE_SHARED.search(text)
    if device is not None:
        return ResourceFailure("shared memory", device["required"], "", False, device.group(0))
    requested = _SHARED_REQUESTED.search(text)
    if requested is not None:
        return ResourceFailure(requested["resource"], "", "", False, requested.group(0))
    overflow = _OVERFLOW.search(text)
    if overflow is not None:
        return ResourceFailure(
            overflow["resource"], overflow["required"], overflow["limit"], False, overflow.group(0)
        )
    launch = structure.LAUNCH_RESOURCES.search(text)
    if launch is not None:
        # The runtime's message and its code's name say one thing: one resource name for both.
        cooperative = "cooperative" in launch.group(0).replace("_", "").lower()
        resource = "blocks of a cooperative launch" if cooperative else "resources for a launch"
        return ResourceFailure(resource, "", "", False, launch.group(0))
    named = _NAMED_OVERFLOW.search(text)
    if named is not None:
        return ResourceFailure(named["resource"].lower(), "", "", False, named.group(0))
    raised = _RAISED.search(text)
    if raised is not None:
        words = raised["resource"].split()
        placeholders = raised["required"].strip() == raised["limit"].strip() == "0"
        wrapped = placeholders or bool(_PASS_IN_WRAPPER.search(raised["resource"]))
        return ResourceFailure(
            " ".join(words[:2]) if words else "?", "", "", wrapped, raised.group(0)
        )
    return None


# --------------------------------------------------------------------------------------
# The forms of each kind, in the order they are tried: the first kind whose form is in
# the log wins. Order matters where one log shows two forms: a pass failure's abort also
# kills the process (pass failure before crash), an LLVM instruction-selection error
# aborts too (codegen before pass failure and crash).

_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (BACKEND_RESOLUTION, re.compile(r"\d+ compatible backends for target")),
    # Older releases' words: no backend registered for the device a tensor is on.
    (BACKEND_RESOLUTION, re.compile(r"Cannot find backend for \w+")),
    # Triton's driver registry: no backend's driver active (or more than one).
    (BACKEND_RESOLUTION, structure.ACTIVE_DRIVERS),
    # The framework refuses the GPU before Triton compiles anything: too old a device.
    (DRIVER, re.compile(r"too old to be supported by the triton GPU compiler")),
    # The device driver refused the compiled kernel: Triton's wording, or the driver API's
    # own error code (Level Zero, CUDA driver, HIP).
    (DRIVER, re.compile(r"Triton Error \[(?:CUDA|HIP|ZE|MUSA|XPU|MACA)\]")),
    (DRIVER, re.compile(r"\b(?:CUDA|HIP): Error- ")),  # Triton 2.x
    # The driver's words for a binary it cannot load (CUDA_ERROR_INVALID_IMAGE, HIP's
    # hipErrorInvalidImage), whatever prints them.
    (
        DRIVER,
        re.compile(
            r"no kernel image is available for execution on the device"
            r"|device kernel image is invalid"
        ),
    ),
    # The runtime refuses a launch's configuration (grid, cores per block); a launch asking
    # more resources than a multiprocessor has is out of resources (structure.LAUNCH_RESOURCES).
    (DRIVER, re.compile(r"KernelLaunch failed|invalid configuration argument")),
    (
        DRIVER,
        re.compile(
            r"\bZE_RESULT_ERROR_\w+|\bCUDA_ERROR_[A-Z_]+|\bhipError[A-Z]\w+"
            r"|\bPI_ERROR_\w+|\bUR_RESULT_ERROR_\w+"
        ),
    ),
    # The binary holds no code the device can run (built for another architecture).
    (
        DRIVER,
        re.compile(
            r"\b(?:HIP|CUDA) error: invalid device function|hipErrorInvalidDeviceFunction"
            r"|cudaErrorInvalidDeviceFunction",
            re.I,
        ),
    ),
    # The runtime could not load the compiled module (HIP's, CUDA's loader).
    (
        DRIVER,
        re.compile(
            r"\b(?:hip|cu)ModuleLoad\w*\([^\n]*(?:\bfail|\berror|HIP error|CUDA error)", re.I
        ),
    ),
    (DRIVER, re.compile(r"fail(?:ed)? to call (?:hip|cu)ModuleLoad", re.I)),
    # ... Ascend's runtime could not load or initialise an operator's kernel.
    (DRIVER, re.compile(r"AclOpKernelInit failed|Failed to ParseDynamicKernels")),
    # A host C or C++ compiler crashed on the source it was given (an internal compiler
    # error): the build failed in the compiler, not for memory (a killed cc1plus is the node).
    (
        COMPILE_ERROR,
        re.compile(r"\b(?:[gc]\+\+|gcc|cc|clang(?:\+\+)?)(?:-\d+)?: internal compiler error\b"),
    ),
    # No usable device: the runtime has none, or refuses the one asked for (its ordinal,
    # its visibility), in CUDA's, HIP's, torch's and Ascend's words.
    (
        DRIVER,
        re.compile(
            r"invalid device ordinal|\bInvalid device ID\b|Failed to set visible device"
            r"|\bSetDevice\([^)\n]*\), error code"
            r"|No (?:CUDA |HIP |XPU |NPU )?(?:GPUs|devices) (?:are|is) available"
            r"|\bDevice count is zero\b|\bdevice_id is out of range\b"
            r"|Found no NVIDIA driver on your system"
            # A runtime's or a tool's report that it found no device at all (HIP's message
            # may be wrapped over two lines).
            r"|no (?:CUDA|ROCm|HIP)-capable device is\s+detected|\bcannot get device count\b"
            r"|\bNo (?:supported |usable )?(?:GPU |XPU |NPU |ROCm |CUDA )?devices?"
            r" (?:was |were )?found\b"
            # The runtime could not start on the node's driver or devices: none loaded, one
            # too old for it, the devices held by another process, the node's fabric not up.
            r"|CUDA driver initialization failed|driver on your system is too old"
            r"|device\(s\) is/are busy or unavailable|\bsystem not yet initialized\b"
            r"|Unexpected error from (?:cuda|hip)GetDeviceCount\(\)",
            re.I,
        ),
    ),
)

INFRASTRUCTURE_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ssh", re.compile(r"ssh: connect to host (?P<node>\S+) port \d+: (?P<reason>[^\n]+)")),
    ("ssh", re.compile(r"ssh: Could not resolve hostname (?P<node>[^:\s]+): (?P<reason>[^\n]+)")),
    ("ssh", re.compile(r"(?P<reason>Permission denied \(publickey[^)]*\))")),
    ("ssh", re.compile(r"(?P<reason>Host key verification failed)")),
    ("ssh", re.compile(r"(?P<reason>NoValidConnectionsError|AuthenticationException)")),
    ("docker", re.compile(r"(?P<reason>Cannot connect to the Docker daemon)")),
    ("docker", re.compile(r"docker: Error response from daemon: (?P<reason>[^\n]+)")),
    ("docker", re.compile(r"(?P<reason>OCI runtime (?:create|exec) failed)")),
    ("node", re.compile(r"(?P<node>\S+?)\s*\|\s*(?P<reason>UNREACHABLE)!")),
    ("node", re.compile(r"\[(?P<node>[^\]]+)\]: (?P<reason>UNREACHABLE)!")),
    ("node", re.compile(r"(?P<reason>No space left on device)")),
    # A CI runner lost, shut down or cancelled under the job.
    (
        "runner",
        re.compile(
            r"(?P<reason>lost communication with the server|runner has received a shutdown signal)"
        ),
    ),
    # The node's file system (its one owner: structure.FILESYSTEM).
    ("node", re.compile(f"(?P<reason>{structure.FILESYSTEM.pattern})")),
    # The node killed a process from outside (128 + SIGKILL: the memory killer, a runner).
    ("node", re.compile(r"(?P<reason>(?:exit|exited with|return) (?:code|status) 137)\b")),
    # Python's words for the same: a subprocess "died with <Signals.SIGKILL: 9>".
    ("node", re.compile(r"(?P<reason>died with <Signals\.SIGKILL: 9>)")),
    # ... and torch's launchers' words for a child killed so (multiprocessing's spawn,
    # torchelastic's failure report, a DataLoader worker).
    (
        "node",
        re.compile(
            r"(?P<reason>terminated with signal SIGKILL|Signal 9 \(SIGKILL\) received by PID"
            r"|exitcode\s*: -9\b|is killed by signal: Killed)"
        ),
    ),
    ("node", re.compile(r"(?P<reason>Out of memory: Killed process|oom-kill)")),
    # The device's memory ran out under the program's tensors, whoever reports it
    # (its one owner: structure.DEVICE_MEMORY), and its hardware failed under the job.
    ("device memory", re.compile(f"(?P<reason>{structure.DEVICE_MEMORY.pattern})")),
    ("device hardware", re.compile(f"(?P<reason>{structure.DEVICE_HARDWARE.pattern})", re.I)),
    # The package index an image is built from lacks a pinned package.
    ("package index", re.compile(r"(?P<reason>No matching distribution found for \S+)")),
    ("node", re.compile(r"node '?(?P<node>[\w.-]+)'? (?:is )?(?P<reason>unreachable)")),
    # The distributed runtime's bootstrap found no network to use (NVSHMEM's, NCCL's words).
    (
        "network",
        re.compile(
            r"(?P<reason>[Nn]o socket interface found|No usable listening interface found"
            r"|bootstrap pre-initialization failed)"
        ),
    ),
    # The workers could not meet: a rendezvous or store timed out waiting for them, NCCL's
    # transport failed under them (a socket, shared memory, a remote peer gone).
    (
        "collective",
        re.compile(
            r"(?P<reason>Timed out after \d+ seconds waiting for clients|RendezvousTimeoutError"
            r"|RendezvousConnectionError|unhandled system error|ncclSystemError|ncclRemoteError"
            # NCCL's own failures in its words (an internal check, a peer or the network
            # gone, the communicator aborted), and the store its workers meet at failing.
            r"|ncclInternalError|remote process exited or there was a network error"
            r"|NCCL communicator was aborted|via c10d key-value store)"
        ),
    ),
    # Last: the network or a remote service (its one owner: structure.NETWORK); its words are
    # the reason.
    ("network", re.compile(f"(?P<reason>{structure.NETWORK.pattern})")),
)

# Infrastructure only where nothing else in the log decides: the shell's report of a job
# killed from outside ("line 58: 38771 Killed   docker ..."), the memory killer or a runner.
# A process that failed is often killed after by its parent: its own failure comes first.
LATE_INFRASTRUCTURE_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("node", re.compile(r": line \d+: +\d+ (?P<reason>Killed) ")),
    # The shell's one word for its child killed so, on a line of its own.
    ("node", re.compile(r"^(?P<reason>Killed)\s*$", re.M)),
)

CODEGEN_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # (tool, form); group "message" is the identity of the failure; a form with a group
    # "crashed" says the tool itself died, whatever it printed (identity: the tool crashed).
    ("llvm", re.compile(r"LLVM ERROR: (?P<message>Cannot select:[^\n]*)")),
    # A target's code generator refusing a data type the device lacks (Enflame's GCU, Intel's
    # offline compiler: "Double type is not supported on this platform").
    (
        "target",
        re.compile(
            r"(?P<message>\b[\w-]+ (?:data )?type is not supported on [^\n!.]+|"
            r"\b[\w-]+ data type not supported on [^\n!.]+)"
        ),
    ),
    # Intel's graphics compiler crashed (its own words and support address).
    ("igc", re.compile(r"(?P<message>internal compiler error, abnormal program termination)")),
    # LLVM's verifier rejects the LLVM IR handed to code generation.
    ("llvm", re.compile(r"LLVM ERROR: (?P<message>Broken (?:function|module) found[^\n]*)")),
    # LLVM's target rejects the target it was asked to emit for (a PTX version older than
    # the GPU's architecture needs).
    ("llvm", re.compile(r"LLVM ERROR: (?P<message>[^\n]*?\bdoes not support target\b[^\n.]*)")),
    # A backend's binary stage left no binary where the backend reads it ("MUSA backend
    # expected mubin at /tmp/x.mubin, but it was not found").
    (
        "binary",
        re.compile(r"(?P<message>\w+ backend expected \w+ at \S+, but it was not found)"),
    ),
    ("llc", re.compile(r"error: (?P<message>ran out of registers during register allocation)")),
    # LLVM does not know the GPU it was asked to emit for ("gfx1151" on an older LLVM).
    ("llvm", re.compile(r"error: (?P<message>unknown target CPU '[\w-]+')")),
    # An assertion of LLVM's machine-code generator (its CodeGen and Target sources): the
    # file that asserted ("Register use before def!" in LiveVariables.cpp).
    (
        "llvm",
        re.compile(
            r"\blib[/\\](?:CodeGen|Target)[/\\](?:[\w.-]+[/\\])*(?P<message>[\w.-]+\.(?:cpp|h)):\d+:"
            r"[\s\S]{0,600}?Assert"
        ),
    ),
    # LLVM's target does not know the processor it was given, then aborts (a CPU target
    # handed a GPU's name): its code generator was set up for the wrong target.
    (
        "llvm",
        re.compile(
            r"is not a recognized processor for this target[\s\S]{0,2000}?"
            r"LLVM ERROR: (?P<message>[^\n]+)"
        ),
    ),
    # LLVM's code generator cannot give an inline assembly operand a register of its class
    # (a PTX constraint on AMD, a float constraint the target lacks).
    (
        "llc",
        re.compile(
            r"error: (?P<message>couldn't allocate (?:output|input) register for constraint)"
        ),
    ),
    # ptxas's diagnostic on a line of the PTX: the failure itself, whatever wraps it.
    # ptxas killed by a signal, in Triton's words: a crash of the assembler is its failure
    # (3.x names the signal; 2.x asked the user to rerun ptxas, on SIGSEGV). Before ptxas's
    # own diagnostics: a rerun by hand prints other errors (its input was a temporary file).
    ("ptxas", re.compile(r"`ptxas` raised (?P<crashed>SIG[A-Z]+)")),
    (
        "ptxas",
        re.compile(r"Please run `ptxas [^`]*` to confirm that this is a bug in `(?P<crashed>\w+)`"),
    ),
    # (A diagnostic's severity is "error" or, for an unsupported PTX version, "fatal".)
    ("ptxas", re.compile(r"ptxas [^\n,;]*, line \d+; (?:error|fatal)\s*: (?P<message>[^\n]+)")),
    ("ptxas", re.compile(r"ptxas (?:fatal|error)\s*: (?P<message>[^\n]+)")),
    ("ptxas", re.compile(r"(?P<message>`?ptxas`? failed with error code (?!-)\d+)")),
    ("ptxas", re.compile(r"PTXASError: (?P<message>[^\n]+)")),
    ("llc", re.compile(r"(?P<message>`?llc`? failed with error code (?!-)\d+)")),
    # Intel's offline compiler, run by the XPU backend as ptxas is by NVIDIA's: its first
    # diagnostic is the failure ("Double type is not supported on this platform").
    (
        "ocloc",
        re.compile(r"`ocloc` failed with error code \d+[\s\S]{0,600}?\berror: (?P<message>[^\n]+)"),
    ),
    ("ocloc", re.compile(r"(?P<message>`ocloc` failed with error code \d+)")),
    ("hsaco", re.compile(r"HSACOError: (?P<message>[^\n]+)")),
    # The AMD backend's linker, run in-process, failed on the code object.
    ("lld", re.compile(r"(?P<message>LLD failed to link hsaco[^\n`]*)")),
    # Ascend's binary stage: "[ConvertLinalgRToBinary] encounters error:" then the error.
    ("binary", re.compile(r"\[(?P<stage>\w*Binary\w*)\] encounters error:\s*(?P<message>[^\n]*)")),
    # A vendor's binary compiler run as a subprocess that failed, whatever its stderr shows
    # (ptxas has its own forms above).
    (
        "binary",
        re.compile(
            r"Command '\[\s*'[^']*?(?P<message>(?:bishengir-compile|ocloc|spirv-\w+|llvm-spirv)"
            r"(?:\.exe)?)'"
            r"[^\n]*?returned non-zero exit status"
        ),
    ),
    # A C, C++ or CUDA compiler (gcc, clang, nvcc, hipcc) rejects a source a compiler
    # generated at run time (TileLang's CUDA): its diagnostic, or nvcc's count of them. A
    # source of a build, or Triton's launcher, is a compile error (source_rejected, decided
    # first); a missing header is the node's SDK (toolchain).
    (
        "cc",
        re.compile(
            r"[\w.-]+\.(?:c|cc|cpp|cxx|cu|cuh|hip)(?::\d+(?::\d+)?|\(\d+\)): (?:fatal )?error"
            r"(?: \w+)?: (?P<message>[^\n]+)"
        ),
    ),
    ("cc", re.compile(r"(?P<message>\d+ errors? detected in the compilation of)")),
    # An LLVM tool (opt, llc, a vendor's LLVM) rejects the LLVM IR handed to it: its
    # diagnostic on the .ll file, or one whose next line quotes an IR call of an intrinsic.
    ("llvm", re.compile(r"\.(?:ll|bc):(?:\d+:\d+:)?\s*error: (?P<message>[^\n]+)")),
    (
        "llvm",
        re.compile(
            r"^\s*error: (?P<message>[^\n]+)\n\s*(?:%[\w.]+ = )?(?:tail )?call [^\n]*@llvm\.",
            re.M,
        ),
    ),
)

# Triton's errors of a kernel's source (triton.compiler.errors): the banner and its
# subclasses. Not MLIRCompilationError (a vendor's pass pipeline).
SOURCE_ERROR_TYPES = re.compile(
    r"(?<![A-Za-z])(?:CompilationError|UnsupportedLanguageConstruct|CompileTimeAssertionFailure)\b"
)

FRONTEND_FORMS = (
    SOURCE_ERROR_TYPES,
    re.compile(r"IncompatibleTypeError"),
    re.compile(r"Did you forget to add @triton\.jit"),
    re.compile(r"unsupported tensor index"),
    re.compile(r"TypeError: cannot convert .{0,400}? to tensor"),
    # The JIT reads the kernel's source; a generated kernel may have none.
    re.compile(r"OSError: could not get source code"),
    # A message about Triton's own block types ("<['256'], bf16>"): the frontend's type
    # checking, whatever the exception it raised.
    re.compile(r"<\[(?:'?\d+'?,\s*)*'?\d+'?\],\s*(?:fp|bf|i|u)\d+>"),
    # A Triton dtype the target lacks ("type fp8e4nv not supported in this architecture").
    re.compile(r"\btype (?:fp8\w*|bf16|fp16|fp64) not supported\b"),
    # tl.arange's op rejected by its verifier (a length not a power of two, an empty range):
    # the kernel's source breaks a rule of the language, in older releases' words.
    re.compile(r"error: [^\n]*\"tt\.make_range\"\(\)"),
    # A frontend that lowers another language to Triton (JAX's Pallas) has no lowering for
    # an operation the kernel uses.
    re.compile(r"Unimplemented primitive in \w+ (?:\w+ )?lowering"),
    # The language's limit on a block's elements, checked as the kernel's source is read.
    re.compile(r"exceeds triton maximum tensor numel"),
    # The language's own checks of its arguments, in releases that raise them bare.
    re.compile(r"arguments must be of type tl\.constexpr|Input shapes should have M >= 16"),
    # A Python error whose message speaks the language's own terms (its module, constexpr,
    # block types and pointers, its ranges, program ids, descriptors): the language checking
    # the kernel, raised bare (no banner in the excerpt). Where the caller's program uses an
    # API the release lacks, a row of the structure has decided before.
    re.compile(
        r"^[ \t]*(?:[\w.]+\.)?(?:ValueError|TypeError|AssertionError|NotImplementedError"
        r"|RuntimeError|NameError|AttributeError)(?:: |\(['\"])[^\n]*?"
        r"(?:\btl\.[a-z_]\w*|`?\bconstexpr\b|\bblock_type\b|\bblock pointers?\b"
        r"|@triton\.jit(?:'d)? function|\bin triton\b|\bstatic_(?:range|assert)\b"
        r"|\b(?:program_id|num_programs) axis\b|\barange(?:'s| must)\b|make_shape_compatible"
        r"|\b(?:tensor )?descriptor (?:block shape|last dim)\b"
        r"|\batomic_\w+ (?:not supported|only supports)"
        r"|\bpointer argument\b|\bconstant pointer\b|\badd pointers\b"
        # The options of its loads, stores and conversions, and its shape checks.
        r"|`(?:mask|other|padding_option|boundary_check|base)`|\bblock_shape\b"
        r"|\b(?:Cache modifier|Eviction policy|Padding option|Memory semantic) \S+ not supported"
        r"|\bfp_downcast_rounding\b|\bmax_num_imprecise_acc\b|Cannot broadcast, "
        r"|\bpermute dims\b|For loop bounds and step)",
        re.M | re.I,
    ),
)

# Triton 1.x's compiler passes, as a native stack names them
# ("triton::codegen::analysis::align::populate_is_constant").
TRITON_1_PASS = r"\btriton::codegen::(?:analysis|transform)::\w+"
PASS_FAILURE_FORMS = (
    re.compile(r"PassManager::run failed"),
    re.compile(r"Pipeline failed\s+while executing"),
    re.compile(r"MLIR pass pipeline"),
    re.compile(r"MLIRCompilationError"),
    # An MLIR diagnostic: at a line's start, after file:line:col or after loc(...).
    re.compile(r"(?:^\s*|:\d+:\d+:\s*|\)\s*:\s*)error: ", re.MULTILINE),
    re.compile(r"'[a-z_]+\.[\w.]+' op\b"),
    re.compile(r"failed to legalize"),
    re.compile(r"Assertion `[^'`]+?' failed"),  # its condition may be wrapped over lines
    # glibc's assertion header where the report cut the line before the condition closed:
    # "prog: /x/lib/Analysis/Allocation.cpp:43: f(): Assertio" (shared code with no pass
    # named is a crash, decided before these forms).
    re.compile(r"[\w./\\+-]+\.(?:cpp|h|hpp|cc):\d+: [^\n]*: Asser"),
    # An MLIR crash reproducer, which the pass manager writes only when a pipeline failed.
    re.compile(r"\bmlir_reproducer\b|^\s*pipeline: \"builtin\.module\(", re.M),
    re.compile(r"Assertion failed: .+?, file \S+, line \d+"),  # MSVC's C runtime
    re.compile(r"UNREACHABLE executed at"),
    re.compile(r"LLVM ERROR: "),
    # MLIR's translation of the LLVM dialect to LLVM IR (make_llir) failed on an op.
    re.compile(r"LLVM Translation failed for operation"),
    # MLIR's verifier after a pass reordered ops (Triton's software pipeliner).
    re.compile(r"operation scheduled before its operands"),
    # A C++ exception of the compiler, translated by its Python bindings.
    re.compile(
        r"IndexError: (?:map|unordered_map|vector)::(?:at|_M_range_check)"
        r"|std::(?:__throw_)?out_of_range"
    ),
    re.compile(r"[`'][\w-]+[`'] pass\b"),
    # A native stack through one of Triton 1.x's passes (its analyses and transforms).
    re.compile(TRITON_1_PASS),
)

TIMEOUT_FORMS = (
    re.compile(r"Timeout \(>\s*(?P<seconds>[\d.]+)s\) from pytest-timeout"),
    # pytest-timeout's older wording of the same failure.
    re.compile(r"Failed: Timeout >\s*(?P<seconds>[\d.]+)s"),
    re.compile(
        r"timed out after (?P<amount>[\d.]+) ?"
        r"(?P<unit>s|secs?|seconds?|m|mins?|minutes?|h|hours?)\b",
        re.IGNORECASE,
    ),
    re.compile(r"TimeoutExpired"),
    # The smoke suite's compile worker.
    re.compile(r"did not finish within (?P<seconds>[\d.]+) s and was killed"),
    re.compile(r"\bHANG \((?P<seconds>[\d.]+) ?s timeout\)"),
    re.compile(r"Watchdog caught collective operation timeout"),
    # A service's own watchdog (a serving scheduler's) fired: its work did not finish in
    # time. A collective's watchdog is the network's, decided before (structure.EVENTS).
    re.compile(r"\bwatchdog timeout\b", re.I),
    # A CI service ended a job that ran past its limit (GitHub Actions', GitLab's words).
    re.compile(
        r"has exceeded the maximum execution time of (?P<amount>\d+) ?(?P<unit>minutes?)"
        r"|Job failed: execution took longer than"
    ),
    # A test runner's or CI's report of tests that never finished.
    re.compile(r"\btests? (?:are|is|were|was) hanging\b|\bhanging tests?\b", re.I),
)

CRASH_FORMS = (
    re.compile(r"\b(?:Signals\.)?(?P<name>SIG(?:SEGV|ABRT|BUS|ILL|FPE|KILL|TERM))\b"),
    re.compile(r"Fatal Python error: (?P<fatal>Segmentation fault|Aborted|Bus error)"),
    # The interpreter stopped itself (a broken invariant: the GIL, the allocator).
    re.compile(r"(?P<python>Fatal Python error: [^\n]+)"),
    re.compile(r"\b(?P<fatal>segfault) at [0-9a-f]+ ip [0-9a-f]+"),  # the kernel's log (dmesg)
    # A kernel's device-side assertion: CUDA quotes its condition in backquotes on both sides
    # (glibc's host assertion closes with a quote).
    re.compile(r"(?P<device>Assertion `[^`'\n]+` failed)"),
    re.compile(r"\bsigno(?:@entry)?=(?P<number>\d+)"),
    re.compile(r"signal (?P<number>\d+)\b"),
    re.compile(r"(?:exit (?:code|status)|error code|exited with code) -(?P<number>\d+)\b"),
    re.compile(r"(?P<fatal>[Ss]egmentation fault)"),
    re.compile(r"\((?P<fatal>core dumped)\)"),
    re.compile(r"(?P<stack>Stack dump(?::| without symbol names)|PLEASE submit a bug report)"),
    # Windows' structured exception, as Python's faulthandler prints it, or as a test
    # framework caught it (GoogleTest's "SEH exception with code 0xc0000005": an access
    # violation).
    re.compile(r"(?P<windows>Windows fatal exception: [^\n]+)"),
    re.compile(r"SEH exception with code (?P<windows>0x[0-9a-fA-F]{8})"),
    # A Windows crash report's NTSTATUS ("Exception Code: 0xC0000005": an access violation).
    re.compile(r"Exception Code: (?P<windows>0x[Cc]0{3}[0-9a-fA-F]{4})\b"),
    # A sanitizer's report (AddressSanitizer's heap-use-after-free, ...): memory corrupted
    # outside any named pass (inside one it is the pass's failure: structure.TABLE).
    re.compile(r"ERROR: (?P<sanitizer>\w+Sanitizer: [\w-]+)"),
    # A C++ CHECK of glog or absl failed: the process aborts after its stack trace.
    re.compile(r"(?P<check>\*\*\* Check failure stack trace: \*\*\*)"),
    # A native backtrace (LLVM's, a symbolizer's) through the C library's abort, or gdb's
    # ("#2  0x00007ffff7676433 in abort () from libc.so.6").
    re.compile(r"^\s*\d+\s+libc\.so\.\d+\s+0x[0-9a-f]+ (?P<fatal>abort) \+ \d+", re.M),
    re.compile(r"^#\d+\s+(?:0x[0-9a-fA-F]+ in )?(?:__GI_)?(?P<fatal>abort) \(", re.M),
    # Inductor's compile workers: one died under a compile (its own words for the crash).
    re.compile(r"(?P<lost>compilation subprocess exited unexpectedly)"),
    # pytest-xdist lost the worker process that ran the test (it died under the test).
    re.compile(r"(?P<lost>worker '[^']+' crashed) while running"),
    # ... in its other words: the worker's node went down, the crashed worker was replaced.
    re.compile(r"(?P<lost>node down: Not properly terminated|replacing crashed worker \w+)"),
    # The device faulted in a kernel (a hardware trap, an illegal address).
    re.compile(r"(?P<device>trapType: [\w ]+|an illegal memory access was encountered)"),
)

NUMERIC_FORMS = (
    re.compile(
        r"Tensor-likes are not close|Scalars are not close|Not equal to tolerance"
        r"|numeric mismatch|Mismatched elements",
        re.IGNORECASE,
    ),
    re.compile(r"\bmismatch\s*=\s*\d+\s*/\s*\d+"),
    # A benchmark harness's accuracy check against its reference (TorchDynamo's, torchbench's).
    re.compile(r"\bAccuracy failed\b|\bfail_accuracy\b"),
    re.compile(
        r"\b(?:incorrect|wrong) (?:output|result)s?\b|\bresults? (?:do not|don't|does not) match",
        re.IGNORECASE,
    ),
    # The test's assertion itself, as pytest shows it: over a difference or a closeness check,
    # or a call of a closeness or array-equality helper (its own or a library's).
    re.compile(r"^\s*>?\s*assert\b[^\n]*(?:allclose|isclose|assert_close|\.abs\(\)|\babs\()", re.M),
    re.compile(
        r"^\s*>?\s*(?:[\w.]+\.)?\w*assert\w*(?:_close|allclose|_equal|array_equal)\w*\(", re.M
    ),
    # NumPy's and the array helpers' own words for values that differ.
    re.compile(
        r"Arrays are not (?:almost )?equal|\b(?:nan|inf) location mismatch"
        r"|must have (?:the )?same (?:infinite|nan|NaN) elements"
    ),
    # A test's own printed verdict on a comparison ("equal: False", "allclose = False").
    re.compile(r"^\s*(?:equal|allclose|close|match(?:es)?)\s*[:=]\s*False\b", re.M | re.I),
    # A test's assertion comparing figures, as pytest shows the values: a tolerance.
    re.compile(r"AssertionError: assert [-+]?\d+\.\d*(?:e[-+]?\d+)? *(?:<=|<|>=|>) "),
    # A test's own words for how far the values are: "Max diff: 0.29", "max_abs_diff=3e-2".
    re.compile(
        r"\b(?:max|maximum|mean)[ _](?:abs(?:olute)?[ _])?(?:diff|difference|err|error)\b"
        r"\s*[:=]?\s*[-+]?(?:\d|nan|inf)",
        re.IGNORECASE,
    ),
    # A test printing the kernel's output beside the reference's ("y_torch: tensor(...)",
    # "y_triton: tensor(...)"), the kernel's holding infinities or NaNs.
    re.compile(
        r"\b\w*(?:torch|ref|reference|expected)\w*\s*[:=]\s*tensor\([\s\S]{0,2000}?"
        r"\b\w*triton\w*\s*[:=]\s*tensor\([^)]*?(?<![\w.])-?(?:inf|nan)\b"
        r"|\b\w*triton\w*\s*[:=]\s*tensor\([^)]*?(?<![\w.])-?(?:inf|nan)\b[\s\S]{0,2000}?"
        r"\b\w*(?:torch|ref|reference|expected)\w*\s*[:=]\s*tensor\(",
        re.IGNORECASE,
    ),
)

# A file the installed package ships is missing or unreadable (its libdevice, its .so): a
# broken install. A missing tool is looked for first (the ptxas a wheel bundles).
_PACKAGE_FILE = re.compile(
    r"(?:Failed to load|No such file or directory|cannot open|not found)[^\n]*?"
    r"[/\\](?:site|dist)-packages[/\\]"
)

# The host could not give the process what it asked (a thread, memory): it aborts wherever
# it stood, in a pass or not; no pass failed.
_HOST_EXHAUSTED = re.compile(
    r"pthread_\w+ failed|std::system_error|std::bad_alloc|LLVM ERROR: out of memory"
)

# An assertion in code every pass shares (LLVM's containers and casts, Triton's layout
# algebra in lib/Tools) names no pass by itself: the process aborted. It is a pass's failure
# only where the log names one (a pass diagnostic, a pass frame, an -opt tool running a
# pipeline, a stage of passes); otherwise a crash.
_UTILITY_ASSERTION = re.compile(
    r"[/\\](?:llvm[/\\](?:ADT|Support)|lib[/\\]Tools)[/\\][\w./\\-]+\.(?:h|cpp):\d+:"
    r".{0,600}?Asser",
    re.S,
)
_PASS_NAMED = re.compile(
    r"PassManager::run failed|Pipeline failed\s+while executing|MLIR pass pipeline"
    r"|failed to legalize|'[a-z_]+\.[\w.]+' op\b|(?:^\s*|:\d+:\d+:\s*)error: "
    r"|[`'][\w-]+[`'] pass\b|\w+Pass::\w+|::runOnOperation\b|^\s*[\w.-]+-opt: "
    r"|\bmake_(?:tt\w*ir|llir)\b|The failing pass is:|" + TRITON_1_PASS,
    re.M,
)

# A C-family compiler's diagnostic on a source file (GCC's, Clang's, nvcc's, MSVC's form).
_SOURCE_DIAGNOSTIC = re.compile(
    r"(?:^|(?<=[\s'\"(]))(?P<path>[^\s'\"(]*?"
    r"(?P<file>[^/\\\s:'\"(]+\.(?:c|cc|cpp|cxx|cu|cuh|hip|h|hh|hpp|hxx|tpp|inc)))"
    r"(?::\d+(?::\d+)?|\(\d+\)): (?:fatal )?error(?: \w+)?: (?P<message>[^\n]+)",
    re.M,
)
# A header of a compiler's or an SDK's own install (Clang's resource headers, the system's,
# an SDK under Program Files): a diagnostic there says the node's toolchain does not fit the
# compile (a header for another mode or version), not that the source is wrong.
_INSTALLED_HEADER = re.compile(
    r"[/\\]lib[/\\]clang[/\\]\d+[/\\]include[/\\]|^/usr/(?:local/)?include/|[/\\]lib[/\\]gcc[/\\]"
    r"|Program Files[/\\]"
)
# Triton's launcher (its name differs between releases and backends).
LAUNCHER_SOURCE = re.compile(r"^(?:main|\w+_utils|__triton_launcher)\.(?:c|cpp)$")
# A file a compiler generated at run time: alone in the temporary folder or in one of
# Python's own temporary folders ("/tmp/tmpab12cd/kernel.cpp", "/tmp/tmp7v25so7h.cu").
_RUN_TIME_FILE = re.compile(r"(?:^|[/\\])(?:tmp|temp|Temp|TEMP|T|tmp[\w-]{6,})[/\\][^/\\]+$")


def source_rejected(text: str) -> re.Match[str] | None:
    """A C-family compiler's diagnostic that is a compile error: a source of a source tree
    being built (a compiler or extension built from source: a warning made an error, a
    header its build generates missing; host code another compiler generated into its build,
    AOTriton's autotune tables), or the launcher Triton generates for a kernel (its C, or
    C++ in triton-cpu), rejected for a reason of its own (not the compiler's dialect or age,
    not a missing header of the SDK: toolchain, above). Other code generated at run time
    and rejected (TileLang's CUDA) is the backend's code generation (CODEGEN_FORMS)."""
    for found in _SOURCE_DIAGNOSTIC.finditer(text):
        if _INSTALLED_HEADER.search(found["path"]):
            continue
        if LAUNCHER_SOURCE.match(found["file"]) or not _RUN_TIME_FILE.search(found["path"]):
            return found
    return None


# A caller's own report that a kernel did not compile, with nothing telling why (Inductor
# logs the kernel's source after it).
_COMPILE_FAILED = re.compile(
    r"Triton compilation failed: \w+|BackendCompilerFailed: backend='\w+' raised"
    # A compiler that generates Triton (Helion) failing in its Triton code generation.
    r"|\bcompiler triton codegen error\b"
    # Inductor's autotuning left with no choice that compiled, not saying why.
    r"|\bNoValidChoicesError\b"
    # Inductor's lowering of an op to its IR failed, before any Triton source existed.
    r"|\bLoweringException\b"
    # Inductor's C++ or CUDA build of the code it generated failed (the compiler's own words,
    # where the log has them, decide first).
    r"|\b(?:Cpp|CUDA)CompileError\b"
    # Inductor has no lowering for an op the graph holds (nor a decomposition of it).
    r"|\bMissingOperatorWith(?:out)?Decomp\b"
)

# An exception raised inside Triton's compile path, in none of the forms above.
_COMPILE_FRAME = re.compile(
    r"File \"[^\"]*[\\/]triton[\\/](?:compiler[\\/]compiler|backends[\\/]\w+[\\/]compiler\w*)\.py\""
)


def kind_of(text: str) -> str:
    """The kind of the failure this (cleaned) log shows; ``UNCLASSIFIED`` if none.

    The log's structure decides first (``structure.TABLE``: raising layer, exception,
    stage); the forms below refine what the structure leaves open.
    """
    decided, _ = structure.decide(structure.parse(text), text)
    if decided:
        return decided
    for kind, form in _FORMS:
        if form.search(text):
            return kind
    if missing_tool(text):
        return TOOLCHAIN
    if source_rejected(text):
        return COMPILE_ERROR
    if _PACKAGE_FILE.search(text):
        return HARNESS_ERROR
    if any(form.search(text) for _, form in INFRASTRUCTURE_FORMS):
        return INFRASTRUCTURE
    resource = resource_failure(text)
    if resource is not None:
        return PASS_FAILURE if resource.wrapped else OUT_OF_RESOURCES
    if any(form.search(text) for _, form in CODEGEN_FORMS):
        return CODEGEN
    if any(form.search(text) for form in FRONTEND_FORMS):
        return FRONTEND
    if _HOST_EXHAUSTED.search(text):
        return CRASH
    if _UTILITY_ASSERTION.search(text) and not _PASS_NAMED.search(text):
        return CRASH
    if any(form.search(text) for form in PASS_FAILURE_FORMS):
        return PASS_FAILURE
    if any(form.search(text) for form in TIMEOUT_FORMS):
        return TIMEOUT
    if any(form.search(text) for form in CRASH_FORMS):
        return CRASH
    if any(form.search(text) for form in NUMERIC_FORMS):
        return NUMERIC_MISMATCH
    if structure.RUNTIME_ERROR.search(text):
        return DRIVER
    if _COMPILE_FRAME.search(text) or _COMPILE_FAILED.search(text):
        return COMPILE_ERROR
    if any(form.search(text) for _, form in LATE_INFRASTRUCTURE_FORMS):
        return INFRASTRUCTURE
    return UNCLASSIFIED


def compile_failure_kind(error_type: str, message: str, log: str = "") -> str:
    """The kind of an exception that ``triton.compile`` itself raised.

    The same recognition as the signatures' (``kind_of``), on the exception line and the
    compile log; an exception in none of its forms is a ``compile_error``.
    """
    if error_type == "TimeoutExpired":
        return TIMEOUT
    headline = message if message.startswith(f"{error_type}:") else f"{error_type}: {message}"
    kind = kind_of(clean_log(f"{headline}\n{log}"))
    if kind == UNCLASSIFIED:
        return FRONTEND if error_type == "CompilationError" else COMPILE_ERROR
    return kind
