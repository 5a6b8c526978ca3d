"""Failure signatures: a class and a normalised key for a failing test's output.

The key is what the known-issue ledger matches and what the smoke suite writes into the
JUnit property ``signature``: the same bug on two nodes or two nights must give the same
key, and two bugs must not. So the key holds the failure's identity (the pass, the
diagnostic or the abort, the op, the kernel, the resource, the signal, the target of a
codegen failure) and never what differs between runs: addresses, paths (cut to their
basename), PIDs, temp names, seconds, generated IR line numbers. dtype and architecture
tokens (``fp16``, ``sm_121a``, ``tcgen05``) are kept. A key is never all placeholders: with
no fact found it falls back to the normalised error line plus the kernel.

The class comes from ``ci.smoke.contract.taxonomy.kind_of`` (the one taxonomy); a compile failure
record written by the compile worker carries the kind the worker gave it, decided by the
same function, and that kind is kept. Where no rule decides, the class the log's words
resemble most (``ci.smoke.contract.resemblance``) is taken as a guess, marked as one in the
summary and the details (never in the key: one bug's reports, guessed or decided, share it).

Calling convention: ``signature_of(message, text, artifacts)``. ``text`` is the whole failure
output; ``message`` is whatever one-line summary the caller has (the first line, the last
line, the exception string, or ""). The message is evidence only where the text does not
already hold it, so which line a caller passes never changes the signature.
"""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ci.smoke.contract import records, resemblance, structure, taxonomy
from ci.smoke.contract.taxonomy import KINDS, clean_log, kind_of


class EvidenceError(ValueError):
    """A failing test's evidence (``failure.json``, a stored signature) is malformed."""


# The detail that holds the resemblance guess, where the kind is one.
RESEMBLES = "resembles"

# Artifact files read as extra evidence, besides failure.json; bigger ones are cut.
_EVIDENCE_SUFFIXES = (".txt", ".log", ".stderr", ".err")
_EVIDENCE_LIMIT = 1 << 20


@dataclass(frozen=True)
class Signature:
    kind: str
    key: str
    summary: str
    details: tuple[tuple[str, str], ...] = ()

    def detail(self, name: str) -> str | None:
        return dict(self.details).get(name)

    @property
    def guessed(self) -> bool:
        """True when no rule decided the kind and it is the resemblance guess."""
        return self.detail(RESEMBLES) is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "key": self.key,
            "summary": self.summary,
            "details": dict(self.details),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str = "signature") -> Signature:
        unknown = set(data) - {"kind", "key", "summary", "details"}
        if unknown:
            raise EvidenceError(f"{source}: unknown keys {sorted(unknown)}")
        try:
            kind, key, summary = str(data["kind"]), str(data["key"]), str(data["summary"])
            details = data.get("details", {})
        except KeyError as err:
            raise EvidenceError(f"{source}: missing key {err}") from None
        if kind not in KINDS:
            raise EvidenceError(f"{source}: key 'kind': unknown kind {kind!r}")
        if not isinstance(details, Mapping):
            raise EvidenceError(f"{source}: key 'details': expected an object")
        return cls(kind, key, summary, tuple((str(k), str(v)) for k, v in details.items()))


@dataclass(frozen=True)
class Evidence:
    """Everything a failing test left behind, as cleaned text, and its failure record."""

    text: str
    failure: Mapping[str, Any] = field(default_factory=dict)
    reproducers: tuple[str, ...] = ()
    # Reproducer pipelines (``pipeline: "builtin.module(...)"``) and the stage of the file
    # each came from ("" where the pipeline was in the text).
    pipelines: tuple[tuple[str, str], ...] = ()

    def job(self, name: str) -> str:
        # The smoke harness nests the job as "job"; a flat record is accepted too.
        job = self.failure.get(records.FAILURE_JOB)
        value = job.get(name) if isinstance(job, Mapping) else self.failure.get(name)
        return value if isinstance(value, str) else ""

    @property
    def recorded_kind(self) -> str:
        """The kind the compile worker gave this failure, where it wrote one."""
        outcome = self.failure.get(records.FAILURE_OUTCOME)
        status = outcome.get("status") if isinstance(outcome, Mapping) else None
        return status if isinstance(status, str) and status in KINDS else ""


def signature_of(
    message: str,
    text: str,
    artifacts: Path | None = None,
    centroids: resemblance.Centroids | None = None,
) -> Signature:
    """The signature of one failing test (see the module's calling convention).

    Where no rule decides the kind, the closest class by resemblance (``centroids``, the
    shipped ones by default) is taken as a guess, and the details say so.
    """
    evidence = gather(message, text, artifacts)
    kind = evidence.recorded_kind or kind_of(evidence.text)
    if kind != taxonomy.UNCLASSIFIED:
        return _IDENTITY.get(kind, _headline_signature)(kind, evidence)
    guess = (centroids or resemblance.shipped()).guess(evidence.text)
    if guess is None:
        return _headline_signature(kind, evidence)
    guessed = _IDENTITY.get(guess.kind, _headline_signature)(guess.kind, evidence)
    # What the rules found and lacked stays with the guess: it is where a reader starts.
    found = structure.parse(evidence.text).found()
    return replace(
        guessed,
        summary=f"{guessed.summary} [no rule decided; by resemblance: {guess.describe()}]",
        details=(*guessed.details, *_details(**{RESEMBLES: guess.describe()}, structure=found)),
    )


def gather(message: str, text: str, artifacts: Path | None) -> Evidence:
    parts = [text] if message.strip() and message.strip() in text else [message, text]
    failure: dict[str, Any] = {}
    reproducers: list[str] = []
    pipelines: list[tuple[str, str]] = []
    if artifacts is not None and artifacts.is_dir():
        failure_file = artifacts / records.FAILURE_NAME
        if failure_file.is_file():
            try:
                loaded = json.loads(failure_file.read_text(encoding="utf-8", errors="replace"))
            except json.JSONDecodeError as err:
                raise EvidenceError(f"{failure_file}: not valid JSON: {err}") from None
            if not isinstance(loaded, dict):
                raise EvidenceError(f"{failure_file}: expected a JSON object")
            failure = loaded
        outcome = failure.get(records.FAILURE_OUTCOME)
        record = outcome if isinstance(outcome, Mapping) else failure
        parts.extend(str(record[k]) for k in ("message", "stderr") if record.get(k))
        diagnostics = record.get("diagnostics")
        if isinstance(diagnostics, list):
            parts.extend(str(d) for d in diagnostics)
        for path in sorted(artifacts.rglob("*")):
            if not path.is_file():
                continue
            if path.name.endswith(".repro.mlir"):
                reproducers.append(path.name)
                stage = _reproducer_stage(path.name)
                pipelines.extend((stage, p) for p in _reproducer_pipelines(path))
            elif path.suffix in _EVIDENCE_SUFFIXES:
                with path.open("rb") as handle:
                    parts.append(handle.read(_EVIDENCE_LIMIT).decode("utf-8", errors="replace"))
    joined = "\n".join(p for p in parts if p)
    pipelines.extend(("", m["pipeline"]) for m in _PIPELINE_LINE.finditer(joined))
    return Evidence(clean_log(joined), failure, tuple(reproducers), tuple(pipelines))


_PIPELINE_LINE = re.compile(r"pipeline:\s*\"(?P<pipeline>[^\"]+)\"")


def _reproducer_stage(name: str) -> str:
    # Triton 3.6 names reproducers <prefix>.<stage>.repro.mlir.
    parts = name.split(".")
    return parts[-3] if len(parts) >= 3 else ""


def _reproducer_pipelines(path: Path) -> list[str]:
    # The pipeline is in the file's trailing {-# external_resources ... #-} block.
    with path.open("rb") as handle:
        handle.seek(0, 2)
        handle.seek(max(0, handle.tell() - 65536))
        tail = handle.read().decode("utf-8", errors="replace")
    return [m["pipeline"] for m in _PIPELINE_LINE.finditer(tail)]


# --------------------------------------------------------------------------------------
# Normalisation

_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")
_OBJECT_AT = re.compile(r"<(?:[\w.]+\.)?(?P<cls>\w+) object at 0x[0-9a-fA-F]+>")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\w.+~<>-]*[/\\])+(?P<name>[\w.+<>-]+)")
_PID = re.compile(r"\b(pid|process|thread|tid)([ =:#]*)\d+", re.IGNORECASE)
_TEMP = re.compile(r"\btmp[\w-]{5,}")
_HEX_SUFFIX = re.compile(r"(?<=[\w])[-_.](?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,}\b")
_LONG_HEX = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{12,}\b")
# A base64 cache or temporary name ("bqVQ8Qyv6VxjF26uwYSgIU3aPYssG68esGVDjNtRZ2I"): a word
# with a run of 16 or more of lower case, upper case and digits, mixed so that the class
# changes every two characters or sooner.
# A test's parameters ("1-128-True-tf32"), an identifier ("test_Linear_cuda_tf32") or a
# mangled C++ name keep their words: they name what failed.
_WORD = re.compile(r"[\w-]{16,}")
_CHARACTER_CLASS = re.compile(r"[a-z]+|[A-Z]+|\d+")
_SSA = re.compile(r"%\d+|<<UNKNOWN SSA VALUE>>")
# A location in a generated IR file: its line numbers change with any change upstream.
_IR_LOCATION = re.compile(
    r"(?:loc\(\")?\b[\w.-]+\.(?:mlir|ttir|ttgir|llir|ll|ptx)\"?:\d+(?::\d+)?\)?"
)
_SPACE = re.compile(r"\s+")
_TRAILING = re.compile(r"[\s.,;:!]+$")


def _hash_if_random(word: re.Match[str]) -> str:
    """HASH for a word with a random run, else the word (a mangled C++ name is kept)."""
    if word.group().startswith("_Z"):
        return word.group()
    for run in re.split(r"[-_]", word.group()):
        classes = _CHARACTER_CLASS.findall(run)
        kinds = {"digit" if c[0].isdigit() else c[0].isupper() for c in classes}
        if len(run) >= 16 and len(kinds) == 3 and len(classes) * 2 >= len(run):
            return "HASH"
    return word.group()


def normalise(text: str) -> str:
    """Cut what differs between runs of the same bug, keep what names it."""
    text = _OBJECT_AT.sub(r"\g<cls>", text)
    text = _ADDRESS.sub("0xADDR", text)
    text = _PATH.sub(r"\g<name>", text)
    text = _IR_LOCATION.sub("IR", text)
    text = _PID.sub(r"\1\2N", text)
    text = _TEMP.sub("TMP", text)
    text = _HEX_SUFFIX.sub("-HASH", text)
    text = _LONG_HEX.sub("HASH", text)
    text = _WORD.sub(_hash_if_random, text)
    text = _SSA.sub("%N", text)
    return _TRAILING.sub("", _SPACE.sub(" ", text).strip())


# Standalone numbers only: "fp16", "sm_121a", "tcgen05", "i32" keep their digits.
_NUMBER = re.compile(r"(?<![\w.%#])[-+]?\d+(?:\.\d+)?(?![\w])")


def without_numbers(text: str) -> str:
    """For text whose figures are as likely run-specific as not (an unknown message)."""
    return _NUMBER.sub("N", normalise(text))


# What a line says before the message of the innermost exception it names: an exception's
# type ("RuntimeError: "), C++'s "what(): ", a stage or a source location in front of them.
# Reports of one failure wrap its message in different ones.
_MESSAGE_PREFIX = re.compile(r"^.*\b(?:[A-Z]\w*(?:Error|Exception)|what\(\)):\s+(?=\S)")


def message_words(line: str) -> str:
    """An error line as a key's part: the innermost exception's message, numbers as N (the
    whole line where it names no exception, or its message is empty)."""
    return without_numbers(_MESSAGE_PREFIX.sub("", line.strip()) or line)


def make_key(kind: str, *parts: str) -> str:
    """``kind|part|...``; a missing part is "?"; never all "?" (see ``_with_fallback``)."""
    return "|".join([kind, *(normalise(p).replace("|", "/") or "?" for p in parts)])


def _details(**values: str) -> tuple[tuple[str, str], ...]:
    return tuple((k, v) for k, v in values.items() if v)


def _last(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    matches = list(pattern.finditer(text))
    return matches[-1] if matches else None


# --------------------------------------------------------------------------------------
# Facts shared by the kinds

# An exception line: "NameError: ...", "pkg.mod.Name: ..." (OutOfResources, ErrorImpl).
_EXCEPTION_LINE = re.compile(
    r"^\s*(?P<line>(?:(?:[\w]+\.)*[A-Z]\w*(?:Error|Exception|Failed)\b(?:\(|:)?"
    r"|(?:[a-z_]\w*\.)+[A-Z]\w+: )[^\n]*)$",
    re.MULTILINE,
)
# A compile stage of Triton or of a vendor backend (make_ttgir, make_ttxir, make_cubin).
_STAGE = re.compile(
    r"(?<![\w.])(?P<stage>make_(?:[a-z0-9]*ir|ptx|cubin|amdgcn|hsaco|spv|zebin|[a-z0-9]*bin))\b"
)
# The stage's lambda in a traceback: stages["ttgir"] = lambda src, metadata: ...
_STAGE_LAMBDA = re.compile(r"stages\[\"(?P<ir>\w+)\"\] = lambda")
_KERNEL_FORMS = (
    re.compile(r"tt\.func (?:public |private )?@(?P<name>\w+)"),
    re.compile(r"operation:\s*@(?P<name>\w+)"),
    re.compile(r"In function: (?P<name>\w+)"),
    # LLVM's verifier names the function it found broken on a line of its own.
    re.compile(r"^in function (?P<name>\w+)\s*$", re.M),
    re.compile(r"kernelName: (?P<name>\w+)"),
    re.compile(r"operator name is (?P<name>\w+)"),  # Ascend's runtime
    # Inductor's resource error names the kernel: "out of resource: triton_tem_fused_x_0".
    re.compile(r"out of resource: (?P<name>triton_\w+)"),
    re.compile(r"^Name=(?P<name>\w+)", re.MULTILINE),
    re.compile(r"CompilationError: at \d+:\d+:\s*(?:\n\s*)?def (?P<name>\w+)\("),
    # A launch line, as code or as a call chain a tool prints ("-> k[grid](...)").
    re.compile(
        r"^\s*(?:->\s*)?(?:[\w.]+\s*=\s*)?(?P<name>[A-Za-z_]\w*)\[[^\]\n]*\]\(", re.MULTILINE
    ),
    # Triton 2's launcher: generated code ("<string>") in a function named after the kernel.
    # (3.3+ generates an argument binder there too: "dynamic_func" is not a kernel.)
    re.compile(
        r"File \"<string>\", line \d+, in (?P<name>(?!launcher\b|dynamic_func\b|<)[A-Za-z_]\w*)"
    ),
    # Intel's graphics compiler, in the driver's module build log.
    re.compile(r"\bin kernel:? '(?P<name>\w+)'"),
    # Inductor's report of a kernel that did not compile.
    re.compile(r"Triton compilation failed: (?P<name>\w+)"),
    re.compile(r"\blimit for kernel (?P<name>\w+):"),
)


# A line that says something failed, for a log with no exception line; and a logger's line
# that only reports progress (INFO, DEBUG), never the error line.
_ERROR_WORDS = re.compile(
    r"\b(?:error|fail\w*|fault|assert\w*|abort\w*|killed|timed? ?out|fatal|unable|cannot)\b",
    re.IGNORECASE,
)
_PROGRESS_LINE = re.compile(r"^\s*\[?(?:INFO|DEBUG)\b")
# A test runner's section rule ("----- live log call -----", "===== 1 failed in 3s ====="):
# it names a part of the report, never the error.
_SECTION_RULE = re.compile(r"^\s*([-=_*])\1{2,}(?: .* \1{3,})?\s*$")


def headline(evidence: Evidence) -> str:
    """The error line: the last exception line, else the first line that says something
    failed, else the first line that is not a logger's progress report."""
    found = _last(_EXCEPTION_LINE, evidence.text)
    if found:
        return found["line"].strip()
    lines = [
        ln.strip()
        for ln in evidence.text.splitlines()
        if ln.strip() and not _SECTION_RULE.match(ln)
    ]
    erring = [ln for ln in lines if _ERROR_WORDS.search(ln) and not _PROGRESS_LINE.match(ln)]
    quiet = [ln for ln in lines if not _PROGRESS_LINE.match(ln)]
    return next(iter(erring or quiet or lines), "no output")


def stage_of(evidence: Evidence) -> str:
    stage = evidence.failure.get("stage")
    if isinstance(stage, str) and stage:
        return stage
    found = _last(_STAGE, evidence.text)
    if found:
        return found["stage"]
    lambda_line = _last(_STAGE_LAMBDA, evidence.text)
    if lambda_line:
        return f"make_{lambda_line['ir']}"
    # The stage whose reproducer holds the one failing pass, else the first reproducer's.
    local = next((st for st, p in evidence.pipelines if st and _pass_from_pipeline(p)), "")
    return local or next(filter(None, map(_reproducer_stage, evidence.reproducers)), "")


_BACKEND_FRAME = re.compile(r"triton[\\/]+backends[\\/]+(?P<backend>\w+)[\\/]")


def backend_of(evidence: Evidence) -> str:
    """The Triton backend that compiled: the job's target, else the traceback's frames."""
    job = evidence.failure.get(records.FAILURE_JOB)
    target = job.get("target") if isinstance(job, Mapping) else None
    if isinstance(target, Mapping) and isinstance(target.get("backend"), str):
        return str(target["backend"])
    found = _last(_BACKEND_FRAME, evidence.text)
    return found["backend"] if found else ""


def kernel_of(evidence: Evidence) -> str:
    """The kernel: from the job, else the IR's function, the pass anchor, a launch line."""
    named = evidence.job("kernel")
    if named:
        return named
    for form in _KERNEL_FORMS:
        found = form.search(evidence.text)
        if found:
            return found["name"]
    return ""


def _with_fallback(kind: str, parts: list[str], evidence: Evidence, line: str = "") -> str:
    """The key; where every part is missing, the normalised error line takes their place."""
    if not any(normalise(p) for p in parts):
        parts = [message_words(line or headline(evidence))[:200], *parts[1:]]
    return make_key(kind, *parts)


# --------------------------------------------------------------------------------------
# MLIR: the failing pass, the diagnostic, the abort

_PIPELINE_FAILED = re.compile(
    r"Pipeline failed\s+while\s+executing\s+\[?`?(?P<pass>[\w.-]+)`?"
    r"(?:\s+on\s+'(?P<anchor>[^']+)'\s+operation)?"
)
_PASS_PHRASE = re.compile(
    r"[`'](?P<pass>[\w-]+)[`'] pass\b"
    # triton-ascend's report of the pass that failed: "[ConvertTritonIRToLinalgIR] encounters
    # error:".
    r"|^\s*\[(?P<bracketed>[A-Z]\w+)\] encounters error\b",
    re.M,
)
_DIAGNOSTIC = re.compile(
    r"^\s*(?:loc\(\"(?P<qfile>[^\"]+)\":(?P<qline>\d+):(?P<qcol>\d+)\)"
    r"|(?P<file>[^\s:\"]+):(?P<line>\d+):(?P<col>\d+))?:?\s*error:\s*(?P<message>.+?)\s*$",
    re.MULTILINE,
)
# Diagnostics printed without "error:": an op's verifier, an unfinished conversion.
_BARE_DIAGNOSTIC = re.compile(
    r"^\s*(?:PassManager::run failed:\s*)?"
    r"(?P<message>'[a-z_]+\.[\w.]+' op .+|failed to legalize .+)$",
    re.MULTILINE,
)
_BANNERS = ("Failures have been detected while processing an MLIR pass pipeline",)
_CALLED_FROM = re.compile(
    r"^\s*(?P<file>[^\s:]+):(?P<line>\d+):(?P<col>\d+):\s*note: called from", re.MULTILINE
)
_OP_IN_MESSAGE = re.compile(
    r"'(?P<op>[a-z_]+\.[\w.]+)' op\b|operation '(?P<op2>[a-z_]+\.[\w.]+)'"
    # "error: triton_xpu.unpack reached lowering ...": the op as the diagnostic's subject.
    r"|(?:\berror: |^)(?P<op3>[a-z_]+\.[a-z_]\w*) (?=[a-z])"
)
_CURRENT_OP = re.compile(r"see current operation:[^\n]*?\"?(?P<op>\b[a-z_]+\.[a-z_][\w.]*)\"?\(")
# The IR line MLIR quotes under a diagnostic on a file it read (an -opt tool's input), with
# its caret under the op: "%64 = tt.atomic_rmw fadd, ..." then "^".
_QUOTED_OP = re.compile(
    r":\d+:\d+: error: [^\n]*\n[ \t]*(?:%[\w#:]+(?:, ?%[\w#:]+)* = )?\"?"
    r"(?P<op>[a-z_]+\.[a-z_][\w.]*)\"?[ (<][^\n]*\n[ \t]*\^"
)
# glibc's assertion ("file.cpp:36: f(): Assertion `cond' failed.") and MSVC's
# ("Assertion failed: cond, file C:\\x\\file.cpp, line 40").
_ASSERTION = re.compile(
    r"Assertion `(?P<condition>[^'`]+?)' failed"
    r"|Assertion failed: (?P<msvc>.+?), file (?P<msvc_site>\S+\.(?:cpp|h|hpp|cc)), line \d+"
)
# The site, then the function's signature, which a report may wrap over lines.
_ASSERTION_SITE = re.compile(
    r"(?P<site>[\w./\\+-]+\.(?:cpp|h|hpp|cc)):(?P<line>\d+):[^`]{0,400}?Assertion `"
)
# glibc's header of an assertion, up to the function that asserted: the part of it every
# report shows (a terminal or an issue cuts the long line, and the condition is last). The
# function's signature may be wrapped over lines.
_ASSERTED_IN = re.compile(
    r"(?P<site>[\w./\\+-]+\.(?:cpp|h|hpp|cc)):\d+: [^(`]{0,300}?(?P<function>[A-Za-z_~][\w~]*)\("
    r"[^`]{0,400}?:\s+Asser"
)
# macOS's and LLVM's own: "Assertion failed: (cond), function getCvtOrder, file x.cpp".
_FUNCTION_NAMED = re.compile(r", function (?P<function>[\w~]+)\b")
_UNREACHABLE = re.compile(
    r"UNREACHABLE executed at (?P<site>[\w./\\+-]+\.(?:cpp|h|hpp|cc)):(?P<line>\d+)"
)
_LLVM_ERROR = re.compile(r"LLVM ERROR: (?P<message>[^\n]+)")
_PASS_FRAME = re.compile(r"\b(?P<pass>[A-Z]\w*?)Pass::(?:runOnOperation|\w+)")
_ANON_PASS_FRAME = re.compile(r"\(anonymous namespace\)::(?P<pass>\w+)::runOnOperation")
_PASS_SOURCE_DIR = re.compile(
    r"[/\\](?:Transforms|Conversion|Analysis)[/\\](?:[\w]+[/\\])*(?P<pass>\w+)\.cpp"
)
# LLVM's "Program arguments:" (the command on its line or the next), and the flags a report
# wrapped onto indented lines after it.
_PROGRAM_ARGUMENTS = re.compile(r"Program arguments:[ \t]*\n?(?P<args>[^\n]+(?:\n[ \t]+-[^\n]*)*)")
_PIPELINE_PASS = re.compile(r"(?P<pass>[a-z][\w-]*)(?:\{[^}]*\})?\)*\s*$")


@dataclass(frozen=True)
class MlirFailure:
    pass_name: str
    # Where the pass name came from: "diagnostic", "pass phrase", "reproducer",
    # "program arguments", "frame", "abort site"; only the first three enter the key.
    pass_source: str
    anchor: str
    diagnostic: str
    op: str
    location: str
    called_from: tuple[str, ...]
    abort: str
    # The asserted condition, where the report shows it (a detail: reports cut it).
    condition: str

    @property
    def keyed_pass(self) -> str:
        return self.pass_name if self.pass_source in _KEYED_PASS_SOURCES else ""


_KEYED_PASS_SOURCES = ("diagnostic", "pass phrase", "reproducer")


def _location(file: str, line: str, col: str) -> str:
    return f"{Path(file.replace(chr(92), '/')).name}:{line}:{col}"


def _first_diagnostic(text: str) -> tuple[str, str]:
    for match in _DIAGNOSTIC.finditer(text):
        message = match["message"]
        if any(banner in message for banner in _BANNERS):
            continue
        if match["qfile"]:
            return message, _location(match["qfile"], match["qline"], match["qcol"])
        if match["file"]:
            return message, _location(match["file"], match["line"], match["col"])
        return message, ""
    bare = _BARE_DIAGNOSTIC.search(text)
    return (bare["message"].strip(), "") if bare else ("", "")


def _abort(text: str) -> tuple[str, str]:
    """The C++ abort (assertion, unreachable, LLVM fatal error) and its source file."""
    # An assertion is keyed by the function that asserted where the report names it: the
    # condition comes last on the line, where reports are cut.
    asserted_in = _ASSERTED_IN.search(text)
    if asserted_in:
        return f"assertion in {asserted_in['function']}", asserted_in["site"]
    assertion = _ASSERTION.search(text)
    if assertion and assertion["msvc"]:
        named = _FUNCTION_NAMED.search(assertion["msvc"])
        if named:
            return f"assertion in {named['function']}", assertion["msvc_site"]
        return f"assertion {assertion['msvc']}", assertion["msvc_site"]
    if assertion:
        asserted_at = _ASSERTION_SITE.search(text)
        return f"assertion {assertion['condition']}", asserted_at["site"] if asserted_at else ""
    unreachable = _UNREACHABLE.search(text)
    if unreachable:
        site: str = unreachable["site"]
        return f"UNREACHABLE at {Path(site).name}:{unreachable['line']}", site
    fatal = _LLVM_ERROR.search(text)
    if fatal:
        return f"LLVM ERROR: {fatal['message']}", ""
    return "", ""


def _pass_from_pipeline(pipeline: str) -> str:
    """The pass of a local reproducer (a pipeline of one pass); a whole pipeline names none."""
    inner = re.sub(r"\{[^{}]*\}", "", pipeline.strip())
    if "," in inner:
        return ""
    found = _PIPELINE_PASS.search(inner)
    return found["pass"] if found else ""


def _pass_from_arguments(args: str) -> str:
    flags = [a.lstrip("-").split("=")[0] for a in args.split() if a.startswith("-")]
    passes = [f for f in flags if not f.startswith(("mlir-", "allow-", "o"))]
    return passes[-1] if passes else ""


def parse_mlir(evidence: Evidence) -> MlirFailure:
    text = evidence.text
    diagnostic, location = _first_diagnostic(text)
    abort, site = _abort(text)
    pass_name, source, anchor = "", "", ""
    pipeline = _PIPELINE_FAILED.search(text)
    phrase = _PASS_PHRASE.search(text)
    arguments = _PROGRAM_ARGUMENTS.search(text)
    frame = _PASS_FRAME.search(text) or _ANON_PASS_FRAME.search(text)
    directory = _PASS_SOURCE_DIR.search(site.replace("\\", "/")) if site else None
    reproduced = next(
        (found for _, p in evidence.pipelines if (found := _pass_from_pipeline(p))), ""
    )
    if pipeline:
        pass_name, source, anchor = pipeline["pass"], "diagnostic", pipeline["anchor"] or ""
    elif phrase:
        pass_name, source = phrase["pass"] or phrase["bracketed"], "pass phrase"
    elif reproduced:
        pass_name, source = reproduced, "reproducer"
    elif arguments and _pass_from_arguments(arguments["args"]):
        pass_name, source = _pass_from_arguments(arguments["args"]), "program arguments"
    elif frame:
        pass_name, source = frame["pass"], "frame"
    elif directory:
        pass_name, source = directory["pass"], "abort site"
    op_match = (
        _OP_IN_MESSAGE.search(diagnostic)
        or _CURRENT_OP.search(text)
        or (None if diagnostic else _OP_IN_MESSAGE.search(text))
        or _QUOTED_OP.search(text)
    )
    op_groups = op_match.groupdict() if op_match else {}
    op = op_groups.get("op") or op_groups.get("op2") or op_groups.get("op3") or ""
    called = tuple(_location(m["file"], m["line"], m["col"]) for m in _CALLED_FROM.finditer(text))
    asserted = _ASSERTION.search(text)
    condition = (asserted["condition"] or "") if asserted else ""
    return MlirFailure(
        pass_name, source, anchor, diagnostic, op, location, called, abort, condition
    )


def _mlir_details(mlir: MlirFailure) -> dict[str, str]:
    return {
        "pass": mlir.pass_name,
        "pass_source": mlir.pass_source if mlir.pass_name else "",
        "anchor": mlir.anchor,
        "diagnostic": normalise(mlir.diagnostic),
        "abort": normalise(mlir.abort),
        "condition": normalise(mlir.condition),
        "op": mlir.op,
        "location": mlir.location,
        "called_from": " <- ".join(mlir.called_from),
    }


def _mlir_summary(mlir: MlirFailure) -> str:
    what = f"pass {mlir.pass_name}" if mlir.pass_name else "an unnamed pass"
    if mlir.pass_name and mlir.pass_source not in ("diagnostic", ""):
        what += f" (from the {mlir.pass_source})"
    if mlir.diagnostic:
        what += f": {normalise(mlir.diagnostic)}"
    if mlir.abort:
        what += f"; {normalise(mlir.abort)}"
        if mlir.condition and mlir.abort.startswith("assertion in "):
            what += f" ({normalise(mlir.condition)})"
    if mlir.op:
        what += f" ({mlir.op})"
    if mlir.location:
        what += f" at {mlir.location}"
    return what


# --------------------------------------------------------------------------------------
# Identity per kind: each returns the signature of evidence of its kind


def _pass_failure(kind: str, evidence: Evidence) -> Signature:
    mlir = parse_mlir(evidence)
    resource = taxonomy.resource_failure(evidence.text)
    stage, kernel = stage_of(evidence), kernel_of(evidence)
    # What failed: the diagnostic (with the abort that followed it), else the abort, else
    # the stage's bare "PassManager::run failed".
    what = " / ".join(p for p in (mlir.diagnostic, mlir.abort) if p)
    if not what:
        # A bare "PassManager::run failed": which backend's stage is all there is to tell.
        bare = "PassManager::run failed" in evidence.text
        base = "PassManager::run failed" if bare else message_words(headline(evidence))
        backend = backend_of(evidence)
        base += f" ({backend})" if backend and bare else ""
        what = (f"{stage}: {base}" if stage else base) if bare else (base if stage else "")
        # A sanitizer's report: what it caught and the pass's source it caught it in.
        sanitized = structure.SANITIZER_IN_PASS.search(evidence.text)
        if sanitized is not None:
            what = f"{sanitized['what']} in {sanitized['source'] or sanitized['pass_source']}"
    wrapper = f"wrapped:{resource.resource}" if resource is not None else ""
    # Kernels and locations are details (a report of the same bug may lack them), except
    # in a catch-all: a failure that reports no diagnostic and no abort has no identity
    # of its own, and the kernel is all that tells two of them apart; with no kernel and
    # no pass named, the test that met it.
    catch_all = not (mlir.diagnostic or mlir.abort)
    identity = ""
    if catch_all:
        identity = kernel or ("" if mlir.keyed_pass else test_identity(test_of(evidence)))
    key = _with_fallback(kind, [what, mlir.keyed_pass, mlir.op, identity, wrapper], evidence)
    where = f" in {stage}" if stage else ""
    summary = f"MLIR pass failure{where}: {_mlir_summary(mlir)}"
    details = _mlir_details(mlir)
    if resource is not None:
        figures = f"Required: {resource.required or '?'}, Hardware limit: {resource.limit or '?'}"
        called = "placeholders" if resource.placeholders else "not a measurement"
        summary = (
            f"pass failure{where} reported as OutOfResources ({resource.resource}); the"
            f" figures '{figures}' are {called}; "
        )
        if mlir.keyed_pass or mlir.diagnostic or mlir.abort:
            summary += f"underlying: {_mlir_summary(mlir)}"
        else:
            summary += (
                "the output does not name the failing pass (the backend catches every"
                " PassManager failure); the replay with IR dumps names it"
            )
        details.update(
            resource=resource.resource,
            wrapper=f"OutOfResources({resource.resource})",
            placeholders=figures if resource.placeholders else "",
            wrapped_message=normalise(resource.message.splitlines()[0] if resource.message else ""),
        )
    replayed = evidence.failure.get(records.FAILURE_REPLAY)
    if isinstance(replayed, Mapping) and isinstance(replayed.get("pass"), str):
        details["named_by_replay"] = replayed["pass"]
        summary += f" [pass {replayed['pass']} named by replay]"
    return Signature(
        kind=kind,
        key=key,
        summary=summary,
        details=_details(stage=stage, kernel=kernel, target=evidence.job("target"), **details),
    )


def _codegen(kind: str, evidence: Evidence) -> Signature:
    tool = message = stage = ""
    for name, form in taxonomy.CODEGEN_FORMS:
        found = form.search(evidence.text)
        if found is None:
            continue
        groups = found.groupdict()
        tool = name
        message = "crashed" if groups.get("crashed") else found["message"]
        stage = groups.get("stage") or ""
        if name == "binary" and not message.strip():
            following = evidence.text[found.end() :].strip().splitlines()
            message = following[0] if following else ""
        break
    kernel, target = kernel_of(evidence), evidence.job("target")
    resource = "registers" if re.search(r"[Rr]egister", message) else ""
    op = _OP_IN_MESSAGE.search(evidence.text)
    key = _with_fallback(kind, [f"{tool}: {message}", target], evidence)
    summary = f"codegen failure ({stage or tool}): {normalise(message)}"
    if target:
        summary += f" for {target}"
    return Signature(
        kind=kind,
        key=key,
        summary=summary,
        details=_details(
            tool=tool,
            message=normalise(message),
            stage=stage or stage_of(evidence),
            target=target,
            kernel=kernel,
            resource=resource,
            op=(op["op"] or op["op2"] or op["op3"] or "") if op else "",
            **({"pass": stage} if stage else {}),
        ),
    )


_FRONTEND_LOCATION = re.compile(r"CompilationError: at (?P<line>\d+):(?P<col>\d+)")
# The message Triton prints under the caret of a CompilationError, where it is no exception
# line ("create_dot(): incompatible function arguments. ...").
_UNDER_CARET = re.compile(r"^\s*\^\s*\n(?P<line>\S[^\n]*)", re.M)
# The source line the caret points at: Triton's excerpt points at a column with one caret
# (Python's traceback underlines an expression with a run of them).
_ABOVE_CARET = re.compile(r"^(?P<line>[^\n]*\S[^\n]*)\n[ \t]*\^[ \t]*$", re.M)
_REPR_ERROR = re.compile(r"^\s*(?P<line>[A-Z]\w*(?:Error|Exception)\(.*\))\s*$", re.MULTILINE)


_REPR_PARTS = re.compile(r"^(?P<type>\w+)\((?P<quote>['\"])(?P<message>.*)(?P=quote)\)$")


def _as_exception_line(text: str) -> str:
    """``NameError('x')``, as CompilationError prints the error, the way a traceback ends
    with it (``NameError: x``): one error, one key, whichever way it was printed."""
    parts = _REPR_PARTS.match(text)
    return f"{parts['type']}: {parts['message']}" if parts else text


# Triton's banner over a kernel source's error (taxonomy.SOURCE_ERROR_TYPES): the error is
# below it, or after it on its line.
_BANNER_PREFIX = re.compile(
    rf"^(?:[\w.]+\.)?(?:{taxonomy.SOURCE_ERROR_TYPES.pattern}): at \d+:\d+:"
)


def _frontend(kind: str, evidence: Evidence) -> Signature:
    location = _FRONTEND_LOCATION.search(evidence.text)
    errors = [
        m["line"]
        for m in _EXCEPTION_LINE.finditer(evidence.text)
        if not taxonomy.SOURCE_ERROR_TYPES.search(m["line"])
    ]
    reprs = [_as_exception_line(m["line"]) for m in _REPR_ERROR.finditer(evidence.text)]
    under = [m["line"] for m in _UNDER_CARET.finditer(evidence.text)]
    # With no message at all (a report cut after the source excerpt), the source line the
    # caret points at is what tells one frontend error from another, never the banner.
    pointed = [m["line"].strip() for m in _ABOVE_CARET.finditer(evidence.text)]
    error = (reprs or errors or under or pointed or [headline(evidence)])[0 if reprs else -1]
    # A banner with its error on the same line: the error, as when it is printed below.
    error = _BANNER_PREFIX.sub("", error).strip() or error
    kernel = kernel_of(evidence)
    where = f"{location['line']}:{location['col']}" if location else ""
    key = _with_fallback(kind, [without_numbers(error)], evidence)
    return Signature(
        kind=kind,
        key=key,
        summary=f"frontend error{f' in {kernel}' if kernel else ''}"
        f"{f' at {where}' if where else ''}: {normalise(error)[:300]}",
        details=_details(error=normalise(error)[:300], kernel=kernel, location=where),
    )


def _resource(kind: str, evidence: Evidence) -> Signature:
    found = taxonomy.resource_failure(evidence.text)
    resource = found.resource if found else ""
    required = found.required if found else ""
    limit = found.limit if found else ""
    kernel = kernel_of(evidence)
    key = _with_fallback(kind, [resource, required, limit], evidence)
    return Signature(
        kind=kind,
        key=key,
        summary=f"out of {resource or 'a resource'}: {required or '?'} required,"
        f" the limit is {limit or '?'}",
        details=_details(
            resource=resource,
            required=required,
            limit=limit,
            stage=stage_of(evidence),
            kernel=kernel,
            hint=str(evidence.failure.get(records.FAILURE_HINT) or ""),
        ),
    )


_BACKENDS = re.compile(
    r"(?P<count>\d+) compatible backends for target \((?P<target>[^)]*)\) "
    r"\((?P<actives>\[[^\]]*\])\)"
)
_DRIVERS = re.compile(r"(?P<count>\d+) active drivers \((?P<actives>\[[^\]]*\])\)")
# Triton's launcher and driver ("Triton Error [CUDA]: ...", its HIP launcher's code number
# before the message: one message, one key), the CUDA and HIP runtimes' own form ("CUDA:
# Error- ...") and PyTorch's ("HIP error: invalid device function", "CUDA driver error: ...").
_DEVICE_ERROR = re.compile(
    r"Triton Error \[(?P<api>\w+)\]:\s*(?:Code: -?\d+, Mess?s?age: )?(?P<message>[^\n']*)"
    r"|\b(?P<api2>CUDA|HIP): Error- (?P<message2>[^\n']*)"
    rf"|\b(?P<api3>{structure.RUNTIME_NAMES})(?: driver)? [Ee]rror: (?P<message3>[^\n']*)"
    # torch_npu's report of an Ascend runtime (ACL) code, with the call that returned it.
    r"|(?:NPU function error: (?P<call4>[^\n]*?)|\b(?P<call5>ACL [\w ]+?) failed),?"
    r" error code(?: is|:|\s*=)\s*(?P<code4>\d+)"
)


# PyTorch's refusal of a GPU older than Triton supports, naming the GPU and what it needs.
_DEVICE_TOO_OLD = re.compile(
    r"Found (?P<device>[^\n]+?) which is too old to be supported by the triton GPU compiler"
    r"(?:[^\n]*?Capability >= (?P<needed>\d+(?:\.\d+)?))?"
)


def _backend_resolution(kind: str, evidence: Evidence) -> Signature:
    drivers = _DRIVERS.search(evidence.text)
    if drivers is not None:
        actives = normalise(drivers["actives"])
        count = drivers["count"]
        return Signature(
            kind=kind,
            key=make_key(kind, f"{count} drivers", actives),
            summary=f"{count} active drivers {actives}: "
            + ("no backend found a usable device" if count == "0" else "ambiguous"),
            details=_details(count=count, actives=actives),
        )
    match = _BACKENDS.search(evidence.text)
    if match is None:
        return _headline_signature(kind, evidence)
    count, target, actives = match["count"], match["target"], normalise(match["actives"])
    return Signature(
        kind=kind,
        key=make_key(kind, f"{count} backends", f"target {target}", actives),
        summary=f"{count} compatible backends for target '{target}' {actives}:"
        " no installed backend's supports_target() accepts it"
        if count == "0"
        else f"{count} compatible backends for target '{target}' {actives}: ambiguous",
        details=_details(count=count, target=target, actives=actives),
    )


def _driver(kind: str, evidence: Evidence) -> Signature:
    too_old = _DEVICE_TOO_OLD.search(evidence.text)
    if too_old is not None:
        # The framework refuses the node's GPU: which GPU it is is the node's, what it
        # needs is the refusal's identity.
        needed = too_old["needed"] or "?"
        return Signature(
            kind=kind,
            key=make_key(kind, "device too old", f"needs capability >= {needed}"),
            summary=f"{too_old['device']} is too old for Triton: it needs CUDA capability >="
            f" {needed}",
            details=_details(device=too_old["device"], needed=needed),
        )
    device = _DEVICE_ERROR.search(evidence.text)
    if device is None:
        return _headline_signature(kind, evidence)
    kernel = kernel_of(evidence)
    api = device["api"] or device["api2"] or device["api3"] or "NPU"
    said = next(
        (device[m] for m in ("message", "message2", "message3") if device[m] is not None),
        # The call that failed is in every report of the code, and tells one use from another.
        f"{device['call4'] or device['call5']}: code {device['code4']}",
    )
    # The driver's error code is its identity, not an address.
    message = re.sub(r"^0x(?=[0-9a-fA-F]+\b)", "code ", said)
    told_apart = kernel or device["code4"]
    return Signature(
        kind=kind,
        key=_with_fallback(
            kind, [api, message, "" if told_apart else _surfaced(evidence)], evidence
        ),
        summary=f"the {api} driver refused the kernel: {normalise(said)}",
        details=_details(api=api, message=normalise(said), kernel=kernel),
    )


def _toolchain(kind: str, evidence: Evidence) -> Signature:
    tool = taxonomy.missing_tool(evidence.text)
    return Signature(
        kind=kind,
        key=_with_fallback(kind, [tool], evidence),
        summary=f"the node's toolchain lacks {normalise(tool)}",
        details=_details(tool=normalise(tool)),
    )


_EVENT_REASONS = {
    "collective": "a collective's watchdog timed out",
    "worker": "a worker process was lost",
    "build": "a build's compiler was killed",
}
_KILLED_PROGRAM = re.compile(r"Killed signal terminated program (?P<program>\S+)")


def _event_signature(kind: str, evidence: Evidence, event: str) -> Signature:
    """A process-level event (structure.EVENTS): the component and what it waited on."""
    text = evidence.text
    what = ""
    if event == "collective":
        collective = _COLLECTIVE.search(text)
        what = f"{collective['op']} of {collective['numel']}" if collective else ""
    elif event == "build":
        killed = _KILLED_PROGRAM.search(text)
        what = f"{killed['program']} killed (memory)" if killed else ""
    elif event == "worker":
        # Ray's own daemon lost, or a worker (the log's prefixes, cut, named which).
        what = "the raylet terminated" if _RAYLET_LOST.search(text) else ""
    reason = _EVENT_REASONS[event]
    return Signature(
        kind=kind,
        key=make_key(kind, event, what or reason),
        summary=f"infrastructure ({event}): {reason}" + (f": {what}" if what else ""),
        details=_details(component=event, reason=reason, waiting=what),
    )


def _infrastructure(kind: str, evidence: Evidence) -> Signature:
    event = structure.parse(evidence.text).event
    if event:
        return _event_signature(kind, evidence, event)
    for component, pattern in (*taxonomy.INFRASTRUCTURE_FORMS, *taxonomy.LATE_INFRASTRUCTURE_FORMS):
        match = pattern.search(evidence.text)
        if match is None:
            continue
        node = match.groupdict().get("node") or ""
        reason = match["reason"].replace(node, "NODE") if node else match["reason"]
        reason = normalise(reason)
        # The device's memory running out is one failure in each wrapper that reports it.
        said = reason.lower()
        if component == "device memory":
            said = f"{structure.device_runtime(reason)} out of memory".strip()
        return Signature(
            kind=kind,
            key=make_key(kind, component, said),
            summary=f"infrastructure ({component}){f' on {node}' if node else ''}: {reason}",
            details=_details(component=component, node=node, reason=reason),
        )
    return _headline_signature(kind, evidence)


_COLLECTIVE = re.compile(r"OpType=(?P<op>\w+), NumelIn=(?P<numel>\d+)")
_RAYLET_LOST = re.compile(r"Raylet is terminated")


_STDLIB_FRAME = re.compile(r"[\\/]python3?\.?\d*[\\/](?!site-packages|dist-packages)[^\\/]+\.py$")


def _timeout_site(found: structure.Structure) -> str:
    """Where a timeout exception was raised: the innermost frame outside Python's stdlib."""
    for frame in reversed(found.frames):
        if not _STDLIB_FRAME.search(frame.path.replace("\\", "/")):
            return f"{normalise(frame.path)} {frame.function}"
    return ""


_LIBRARY_PATH = re.compile(
    r"site-packages|dist-packages|[\\/]python3?\.?\d*[\\/]|^<|[\\/](?:torch|triton)[\\/]"
)


# Where a C++ library raised what it reports ("Exception raised from insert_events at
# /x/HIPCachingAllocator.cpp:3837 (most recent call first)"); not the error check every CUDA
# or HIP error passes through (c10_cuda_check_implementation), which says nothing of where.
_NATIVE_RAISE = re.compile(
    r"Exception raised from (?!\w*check)(?P<function>\w+) at \S*?(?P<file>[\w.]+):\d+"
)


def _raise_site(text: str, found: structure.Structure) -> str:
    """Where a failure with no identity of its own surfaced: the innermost traceback frame
    outside Python's and the installed packages' files (the program's own code), else the C++
    function a library says raised it."""
    for frame in reversed(found.frames):
        if not _LIBRARY_PATH.search(frame.path.replace("\\", "/")):
            return f"{normalise(frame.path)} {frame.function}"
    native = _NATIVE_RAISE.search(text)
    return f"{native['file']} {native['function']}" if native else ""


def _surfaced(evidence: Evidence) -> str:
    """What tells apart failures whose own words are the same for every kernel (a device
    fault, a driver's bare error code): the test that met it, else where it surfaced."""
    test = test_of(evidence)
    return f"test {test}" if test else _raise_site(evidence.text, structure.parse(evidence.text))


_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}


def _seconds(groups: Mapping[str, str | None]) -> str:
    """A timeout's figure in seconds, from ``seconds`` or from ``amount`` and ``unit``."""
    if groups.get("seconds"):
        return str(groups["seconds"])
    amount, unit = groups.get("amount"), (groups.get("unit") or "s")[0].lower()
    if not amount:
        return ""
    return f"{float(amount) * _UNIT_SECONDS.get(unit, 1):g}"


# A test runner's names for the test that timed out: CTest's "6 - name (Timeout)", a
# pytest node id (the last one printed before the timeout); a profiler's hottest symbol.
_TIMED_OUT_FORMS = (
    re.compile(r"^\s*\d+ - (?P<what>\S+) \(Timeout\)", re.M),
    re.compile(r"(?P<what>\b[\w/.-]+\.py::[\w:\[\].-]+)(?![\s\S]*\b[\w/.-]+\.py::\w)"),
    re.compile(r"^\s*\d+\.\d+%\s+\S+\s+\[[.k]\]\s+(?P<what>\S+)", re.M),
)


def _timed_out(text: str) -> str:
    match = next((m for form in _TIMED_OUT_FORMS if (m := form.search(text))), None)
    return match["what"] if match else ""


def _timeout(kind: str, evidence: Evidence) -> Signature:
    text = evidence.text
    match = next((m for p in taxonomy.TIMEOUT_FORMS if (m := p.search(text))), None)
    line = ""
    if match is not None:
        line = text[text.rfind("\n", 0, match.start()) + 1 : text.find("\n", match.end())]
    found = structure.parse(text)
    waited = structure.timeout_phrase(found, text)
    if not line and waited:
        line = waited
    phase = "compile" if re.search(r"compil", line, re.IGNORECASE) else "test"
    if re.search(r"autotun|benchmark", line, re.IGNORECASE):
        phase = "autotune"
    if waited and match is None:
        # The tool's words for what timed out, figures cut: same wording, same key.
        phase = f"{phase}: {re.sub(r'[0-9]+(?:[.][0-9]+)?', 'N', normalise(waited)).lower()}"
    elif not match and structure.LAUNCH_TIMEOUT.search(text):
        # The device's watchdog ended a running kernel: the runtime's words say what timed
        # out, not the exception's type (PyTorch's changed from one release to the next).
        phase = "kernel launch (device watchdog)"
    elif not match and found.exception:
        site = _timeout_site(found)
        phase = f"{found.exception}" + (f" in {site}" if site else "")
    collective = _COLLECTIVE.search(text)
    what = f"collective {collective['op']} of {collective['numel']}" if collective else ""
    if collective:
        phase = "collective"
    elif phase.startswith("kernel launch") and not kernel_of(evidence):
        what = _surfaced(evidence)
    elif phase == "test" and not kernel_of(evidence):
        # Which test ran out of time (or, in a profile of a hang, where the time went): two
        # suites' timeouts are different failures.
        what = _timed_out(text)
    stage, kernel = stage_of(evidence), kernel_of(evidence)
    seconds = _seconds(match.groupdict()) if match else ""
    return Signature(
        kind=kind,
        key=make_key(kind, phase, what, stage, kernel),
        summary=f"{phase} timed out"
        + (f" ({what})" if what else "")
        + (f" after {seconds} s" if seconds else "")
        + (f" in {stage}" if stage else ""),
        details=_details(phase=phase, stage=stage, seconds=seconds, kernel=kernel, waiting=what),
    )


_FATAL = {
    "Segmentation fault": "SIGSEGV",
    "segmentation fault": "SIGSEGV",
    "segfault": "SIGSEGV",
    "Aborted": "SIGABRT",
    "abort": "SIGABRT",
    "Bus error": "SIGBUS",
    "core dumped": "",
}
_TOOL_FAILED = re.compile(r"`?(?P<tool>llc|ptxas|ld\.lld|clang|opt)`? failed with error code -\d+")
_TRITON_FRAME = re.compile(
    r"File \"[^\"]*[\\/]triton[\\/](?P<path>[^\"]*?(?P<file>[\w]+\.py))\", line \d+ in"
    r" (?P<function>\w+)"
)


def _signal_name(text: str) -> str:
    for form in taxonomy.CRASH_FORMS:
        match = form.search(text)
        if match is None:
            continue
        groups = match.groupdict()
        if groups.get("name"):
            return str(groups["name"])
        if groups.get("fatal"):
            named = _FATAL[groups["fatal"]]
            if named:
                return named
            continue
        if groups.get("device"):
            return f"device fault ({groups['device'].removeprefix('trapType: ')})"
        if groups.get("number"):
            number = int(groups["number"])
            try:
                return signal.Signals(number).name
            except ValueError:
                return f"signal {number}"
    # A device fault reported only through the driver's error path (a misaligned address,
    # an unspecified launch failure): the words the table decided it by.
    fault = structure.device_fault(text)
    return f"device fault ({fault})" if fault else ""


def _crash(kind: str, evidence: Evidence) -> Signature:
    text = evidence.text
    name = _signal_name(text)
    tool = _TOOL_FAILED.search(text)
    arguments = _PROGRAM_ARGUMENTS.search(text)
    frame = _TRITON_FRAME.search(text)
    stage, kernel = stage_of(evidence), kernel_of(evidence)
    # The layer of Triton the first Triton frame belongs to: reports of one crash show more
    # or fewer of its frames (a faulthandler dump, a cut traceback), not another layer.
    layer = (
        structure.layer_of(structure.Frame(f"triton/{frame['path']}", frame["function"]))
        if frame
        else ""
    )
    if tool:
        where = tool["tool"]
    elif arguments and _pass_from_arguments(arguments["args"]):
        where = f"pass {_pass_from_arguments(arguments['args'])}"
    elif stage == "make_ir" or (layer == structure.FRONTEND_LAYER and not stage):
        where = structure.FRONTEND_LAYER
    elif stage:
        where = stage
    else:
        where = layer or (f"{frame['file']} {frame['function']}" if frame else "")
    if not where:
        # An abort with no frame of Triton's: where it asserted, and what (one line however
        # the report wrapped it), is what every report of it shows.
        abort, site = _abort(text)
        where = f"{Path(site).name}: {' '.join(abort.split())}"[:200] if abort else ""
    if not where and not kernel:
        # Nothing of the compiler's: the crash itself says only what happened (a device
        # fault, a signal), the same words for every kernel that ever faulted. What tells one
        # from another is the test that met it, else where the program surfaced it.
        where = _surfaced(evidence)
    return Signature(
        kind=kind,
        key=_with_fallback(kind, [name, where, kernel], evidence),
        summary=f"crashed{f' with {name}' if name else ''}{f' in {where}' if where else ''}",
        details=_details(
            signal=name,
            where=where,
            frame=f"{frame['file']} {frame['function']}" if frame else "",
            stage=stage,
            kernel=kernel,
            **({"pass": where[5:]} if where.startswith("pass ") else {}),
        ),
    )


_NUMBER_TEXT = r"[-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|nan|inf)"
_MAX_ERROR = (
    re.compile(
        rf"Greatest absolute difference: (?P<error>{_NUMBER_TEXT}) at index \((?P<index>[^)]*)\)"
    ),
    re.compile(rf"Max absolute difference(?: among violations)?: (?P<error>{_NUMBER_TEXT})"),
    re.compile(
        rf"max(?:imum)? (?:abs(?:olute)? )?err(?:or)?\s*[=:]?\s*(?P<error>{_NUMBER_TEXT})", re.I
    ),
)
_OUTPUT_NAME = re.compile(r"\b(?:output|tensor)\s+'?(?P<name>[A-Za-z_]\w*)'?")


# The failing test's id: pytest's node id (a FAILED line, a summary line), a unittest id
# from PyTorch's repro line, a report's header or unittest's own FAIL header.
_TEST_IDS = (
    re.compile(r"(?P<id>[\w./\\-]+\.py::[^\s`'\\]+)"),
    re.compile(r"\bpython\S* [\w./-]+\.py (?P<id>[A-Z]\w*\.test\w*)"),
    re.compile(r"^_{3,} (?P<id>[A-Z]\w*\.test\w*|test\w*(?:\[[^\]\s]*\])?) _{3,}", re.M),
    # unittest's header of a failed test: "FAIL: test_x (module.Class.test_x)".
    re.compile(r"^(?:FAIL|ERROR): (?P<id>test\w* \([\w.]+\))", re.M),
    # PyTorch's benchmark runner (benchmarks/dynamo): "xpu  eval  AllenaiLongformerBase".
    re.compile(r"^(?:cuda|xpu|cpu|hip|npu|mps)\s+(?:eval|train)\s+(?P<id>[A-Za-z]\w+)", re.M),
    # A bare test function after FAILED (a runner's or a person's summary, a count before it).
    re.compile(r"^\s*(?:\d+\s+)?FAILED\s+(?P<id>test_\w+(?:\[[^\]\s]*\])?)", re.M),
)


def test_of(evidence: Evidence) -> str:
    """The failing test's id: the record's, else the first the text names."""
    named = evidence.job("test") or evidence.failure.get("test")
    if isinstance(named, str) and named:
        return named
    for form in _TEST_IDS:
        found = form.search(evidence.text)
        if found:
            return found["id"].rstrip("*")  # a report's Markdown bold around the id
    return ""


# A test id's function and parameters, after its file and class ("a/test_x.py::TestX::
# test_y[p]", unittest's "test_y (module.TestX.test_y)" or "TestX.test_y").
_TEST_FUNCTION = re.compile(
    r"(?:^|::|\.)(?P<function>[^.:\s\[(]+)(?P<parameters>\[[^\]]*\]?)?(?:\s*\(.*)?$"
)


_PARAMETER_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.])")


def test_identity(test: str) -> str:
    """What names a failing test in every report of it: its function and its parameters
    with their sizes as N. A report shows the id with or without its file and class; one
    test failing alike at several sizes is one bug, at another dtype or model maybe not."""
    found = _TEST_FUNCTION.search(test.strip())
    if not found:
        return test
    return found["function"] + _PARAMETER_NUMBER.sub("N", found["parameters"] or "")


# torch.testing's report of a mismatch, whichever of its lines an excerpt keeps.
_ASSERT_CLOSE_LINES = re.compile(
    r"Tensor-likes are not close|Mismatched elements|Greatest (?:absolute|relative) difference"
)


# How many elements the check compared (torch's and numpy's reports): the compared tensor's
# size, the same in every report of one test's mismatch, whichever elements failed.
_COMPARED = re.compile(r"Mismatched elements: \d+ / (?P<size>\d+)")


def _numeric_mismatch(kind: str, evidence: Evidence) -> Signature:
    text = evidence.text
    error = next((m for p in _MAX_ERROR if (m := p.search(text))), None)
    output = _OUTPUT_NAME.search(text)
    where = output["name"] if output else ""
    index = (error.groupdict().get("index") or "") if error else ""
    max_error = error["error"] if error else ""
    kernel, test = kernel_of(evidence), test_of(evidence)
    compared = _COMPARED.search(text)
    size = f"of {compared['size']}" if compared else ""
    form = next((m for p in taxonomy.NUMERIC_FORMS if (m := p.search(text))), None)
    line = ""
    if _ASSERT_CLOSE_LINES.search(text):
        line = "Tensor-likes are not close"
    elif form is not None:
        line = text[text.rfind("\n", 0, form.start()) + 1 : text.find("\n", form.end())]
    return Signature(
        kind=kind,
        # The test is the identity of a wrong answer (the tolerance line is a template);
        # with no test named, the output, the kernel and the size of what was compared.
        key=_with_fallback(
            kind, [test_identity(test), where] if test else [where, kernel, size], evidence, line
        ),
        summary="numeric mismatch"
        + (f" in {test}" if test else "")
        + (f" in output '{where}'" if where else "")
        + (f": max abs error {max_error}" if max_error else "")
        + (f" at ({index})" if index else ""),
        details=_details(test=test, output=where, max_error=max_error, index=index, kernel=kernel),
    )


# The package a harness error names: absent, not importable, or not a working install.
_PACKAGE_FORMS = (
    ("no module", re.compile(r"No module named '(?P<package>[\w.]+)")),
    ("cannot import from", re.compile(r"cannot import name '\w+' from '(?P<package>[\w.]+)")),
    ("not a working install", re.compile(r"Cannot find a working (?P<package>\w+) installation")),
    ("undefined symbol", re.compile(r"(?P<package>lib\w+)\.so[\w.]*: undefined symbol")),
    # An installed library cannot find a file of its own install: its folder under lib/.
    ("a file of its install is missing", structure.INSTALL_FILE),
    ("does not load", re.compile(r"DLL load failed while importing (?P<package>\w+)")),
    # pip has no build of it for this platform and Python: the name, not the version asked.
    (
        "no distribution for this platform",
        re.compile(r"satisfies the requirement (?P<package>[A-Za-z0-9][\w.-]*)"),
    ),
    # The caller names an API the installed package lacks: which API is the identity.
    (
        "no attribute",
        re.compile(r"(?:module|type object) '(?P<package>[\w.]+)' has no attribute '(?P<api>\w+)'"),
    ),
)


def _harness(kind: str, evidence: Evidence) -> Signature:
    """The package that does not import, and how: its message's wording is not the identity."""
    found = next(
        (
            (form, m)
            for form, p in _PACKAGE_FORMS
            if (m := p.search(evidence.text)) and m["package"]  # a form may name none
        ),
        None,
    )
    if found is None:
        # The environment's fault is the same whichever kernel met it first: not keyed by it.
        return _headline_signature(kind, evidence, keyed_by_kernel=False)
    form, match = found
    package = match["package"].lower()
    if match.groupdict().get("api"):
        form = f"{form} {match['api']}"
    return Signature(
        kind=kind,
        key=make_key(kind, f"package {package}", form),
        summary=f"harness error: the package {package} does not import ({form})",
        details=_details(package=package, form=form, headline=normalise(headline(evidence))[:300]),
    )


def _headline_signature(kind: str, evidence: Evidence, keyed_by_kernel: bool = True) -> Signature:
    """Kinds with no identity of their own: the error line, the stage and the kernel."""
    line = headline(evidence)
    stage, kernel = stage_of(evidence), kernel_of(evidence)
    described = "unclassified failure" if kind == taxonomy.UNCLASSIFIED else kind.replace("_", " ")
    # What the log's structure has and lacks, so the reader knows where to look.
    found = structure.parse(evidence.text).found() if kind == taxonomy.UNCLASSIFIED else ""
    return Signature(
        kind=kind,
        key=make_key(kind, message_words(line)[:200], stage, kernel if keyed_by_kernel else ""),
        summary=f"{described}: {normalise(line)[:300]}" + (f" [{found}]" if found else ""),
        details=_details(
            headline=normalise(line)[:300], stage=stage, kernel=kernel, structure=found
        ),
    )


_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|\u2018[^\u2019\n]*\u2019")


def _compile_error(kind: str, evidence: Evidence) -> Signature:
    """A compile failure of no finer kind; one whose compiled file went missing from Triton's
    cache is one failure whatever kernel and temporary name met it (processes racing); a host
    source rejected by the C or C++ compiler is keyed by the source (Triton's launcher, under
    any of its names) and the diagnostic without its quoted names (a report may wrap the
    line before them)."""
    rejected = taxonomy.source_rejected(evidence.text)
    if rejected is not None:
        said = normalise(rejected["message"])
        launcher = taxonomy.LAUNCHER_SOURCE.match(rejected["file"])
        source = "the kernel's launcher" if launcher else rejected["file"]
        what = f"the host compiler rejects {source}"
        return Signature(
            kind=kind,
            key=make_key(kind, what, " ".join(_QUOTED.sub("", said).split())),
            summary=f"compile error: {what}: {said}",
            details=_details(diagnostic=said, source=rejected["file"], kernel=kernel_of(evidence)),
        )
    if not structure.TRITON_CACHE_FILE.search(evidence.text):
        return _headline_signature(kind, evidence)
    what = "a compiled kernel's file went missing from Triton's cache"
    return Signature(
        kind=kind,
        key=make_key(kind, what),
        summary=f"compile error: {what}: {normalise(headline(evidence))[:300]}",
        details=_details(headline=normalise(headline(evidence))[:300], kernel=kernel_of(evidence)),
    )


_IDENTITY = {
    taxonomy.BACKEND_RESOLUTION: _backend_resolution,
    taxonomy.DRIVER: _driver,
    taxonomy.PASS_FAILURE: _pass_failure,
    taxonomy.OUT_OF_RESOURCES: _resource,
    taxonomy.CODEGEN: _codegen,
    taxonomy.FRONTEND: _frontend,
    taxonomy.TIMEOUT: _timeout,
    taxonomy.CRASH: _crash,
    taxonomy.NUMERIC_MISMATCH: _numeric_mismatch,
    taxonomy.TOOLCHAIN: _toolchain,
    taxonomy.INFRASTRUCTURE: _infrastructure,
    taxonomy.HARNESS_ERROR: _harness,
    taxonomy.COMPILE_ERROR: _compile_error,
}
