"""Failure signatures: a class and a normalised key for a failing test's output.

The key is what the known-issue ledger matches and what the smoke suite writes into the
JUnit property ``signature``: the same bug on two nodes or two nights must give the same
key, so addresses, temp paths, PIDs, host names and run-specific figures (durations, the
size of a numeric error) are kept out of it, and source paths are cut to their basename.

Classifiers are tried in order; the first that recognises the output wins. Catch-all
wrappers come first: a backend that reports any pass failure as ``OutOfResources`` with
``Required: 0, Hardware limit: 0`` (Kunlunxin's ``uni_sram``) gets a pass-failure
signature that says the figures are placeholders and names the real pass when the MLIR
diagnostics are there.
"""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


class EvidenceError(ValueError):
    """A failing test's evidence (``failure.json``, a stored signature) is malformed."""


KINDS = (
    "backend_resolution",
    "driver",
    "pass_failure",
    "out_of_resources",
    "numeric_mismatch",
    "timeout",
    "crash",
    "infrastructure",
    "unclassified",
)

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
    """Everything a failing test left behind, as text."""

    message: str
    text: str
    artifact_text: str = ""
    failure: Mapping[str, Any] = field(default_factory=dict)
    reproducers: tuple[str, ...] = ()

    @property
    def all(self) -> str:
        return "\n".join(p for p in (self.message, self.text, self.artifact_text) if p)

    @property
    def kernel(self) -> str:
        # The smoke harness nests it as job.kernel; a flat "kernel" is accepted too.
        job = self.failure.get("job")
        name = job.get("kernel") if isinstance(job, Mapping) else self.failure.get("kernel")
        return name if isinstance(name, str) else ""


class Classifier(Protocol):
    @property
    def kind(self) -> str: ...

    def classify(self, evidence: Evidence) -> Signature | None: ...


def signature_of(message: str, text: str, artifacts: Path | None = None) -> Signature:
    """The signature of one failing test from its failure message, text and artifact folder."""
    evidence = gather(message, text, artifacts)
    for classifier in CLASSIFIERS:
        found = classifier.classify(evidence)
        if found is not None:
            return found
    raise AssertionError("the unclassified classifier always answers")  # pragma: no cover


def gather(message: str, text: str, artifacts: Path | None) -> Evidence:
    if artifacts is None or not artifacts.is_dir():
        return Evidence(message, text)
    failure: dict[str, Any] = {}
    failure_file = artifacts / "failure.json"
    if failure_file.is_file():
        try:
            loaded = json.loads(failure_file.read_text(encoding="utf-8", errors="replace"))
        except json.JSONDecodeError as err:
            raise EvidenceError(f"{failure_file}: not valid JSON: {err}") from None
        if isinstance(loaded, dict):
            failure = loaded
    outcome = failure.get("outcome")
    record = outcome if isinstance(outcome, Mapping) else failure
    parts = [str(record[k]) for k in ("message", "stderr") if record.get(k)]
    diagnostics = record.get("diagnostics")
    if isinstance(diagnostics, list):
        parts.extend(str(d) for d in diagnostics)
    reproducers: list[str] = []
    for path in sorted(artifacts.rglob("*")):
        if not path.is_file():
            continue
        if path.name.endswith(".repro.mlir"):
            reproducers.append(path.name)
        elif path.suffix in _EVIDENCE_SUFFIXES:
            with path.open("rb") as handle:
                parts.append(handle.read(_EVIDENCE_LIMIT).decode("utf-8", errors="replace"))
    return Evidence(message, text, "\n".join(parts), failure, tuple(reproducers))


# --------------------------------------------------------------------------------------
# Normalisation

_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b")
_PATH = re.compile(r"(?:[\w.+~-]*/)+([\w.+-]+)")
_PID = re.compile(r"\b(pid|process|thread)([ =:#]*)\d+", re.IGNORECASE)
_LONG_HEX = re.compile(r"\b[0-9a-f]{12,}\b")
_SSA = re.compile(r"%\d+")
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Cut what differs between runs of the same bug: addresses, paths, PIDs, SSA numbers."""
    text = _ADDRESS.sub("0xADDR", text)
    text = _PATH.sub(r"\1", text)
    text = _PID.sub(r"\1\2N", text)
    text = _LONG_HEX.sub("HASH", text)
    text = _SSA.sub("%N", text)
    return _SPACE.sub(" ", text).strip()


def make_key(kind: str, *parts: str) -> str:
    return "|".join([kind, *(normalise(p) or "?" for p in parts)])


def _details(**values: str) -> tuple[tuple[str, str], ...]:
    return tuple((k, v) for k, v in values.items() if v)


def _last(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    matches = list(pattern.finditer(text))
    return matches[-1] if matches else None


# --------------------------------------------------------------------------------------
# MLIR diagnostics

_PIPELINE_FAILED = re.compile(
    r"Pipeline failed while executing \[`(?P<pass>[^`]+)` on '(?P<anchor>[^']+)' operation\]"
)
_DIAGNOSTIC = re.compile(
    r"^\s*(?:loc\(\"(?P<qfile>[^\"]+)\":(?P<qline>\d+):(?P<qcol>\d+)\)"
    r"|(?P<file>[^\s:]+):(?P<line>\d+):(?P<col>\d+)):\s*error:\s*(?P<message>.+?)\s*$",
    re.MULTILINE,
)
_PIPELINE_BANNER = "Failures have been detected while processing an MLIR pass pipeline"
_CALLED_FROM = re.compile(r"^\s*(?P<file>[^\s:]+):(?P<line>\d+):(?P<col>\d+):\s*note: called from")
_OP_IN_MESSAGE = re.compile(r"'(?P<op>[a-z_]+\.[\w.]+)' op\b")
_CURRENT_OP = re.compile(r"see current operation:[^\n]*?\"?(?P<op>\b[a-z_]+\.[a-z_][\w.]*)\"?\(")
_STAGE = re.compile(r"\bin (?P<stage>make_[a-z0-9_]+)\b")
_PASS_MANAGER = re.compile(r"PassManager::run failed")


@dataclass(frozen=True)
class MlirFailure:
    pass_name: str
    anchor: str
    diagnostic: str
    op: str
    location: str
    called_from: tuple[str, ...]

    @property
    def found(self) -> bool:
        return bool(self.pass_name or self.diagnostic)


def _location(file: str, line: str, col: str) -> str:
    return f"{Path(file).name}:{line}:{col}"


def parse_mlir(text: str) -> MlirFailure:
    """The failing pass, its first error diagnostic, the op and the kernel source location."""
    pipeline = _PIPELINE_FAILED.search(text)
    diagnostic = location = ""
    for match in _DIAGNOSTIC.finditer(text):
        if _PIPELINE_BANNER in match["message"]:
            continue
        diagnostic = match["message"]
        if match["qfile"]:
            location = _location(match["qfile"], match["qline"], match["qcol"])
        else:
            location = _location(match["file"], match["line"], match["col"])
        break
    op_match = _OP_IN_MESSAGE.search(diagnostic) or _CURRENT_OP.search(text)
    called = tuple(
        _location(m["file"], m["line"], m["col"])
        for line in text.splitlines()
        if (m := _CALLED_FROM.match(line))
    )
    return MlirFailure(
        pass_name=pipeline["pass"] if pipeline else "",
        anchor=pipeline["anchor"] if pipeline else "",
        diagnostic=diagnostic,
        op=op_match["op"] if op_match else "",
        location=location,
        called_from=called,
    )


def _stage(evidence: Evidence) -> str:
    stage = evidence.failure.get("stage")
    if isinstance(stage, str) and stage:
        return stage
    found = _last(_STAGE, evidence.all)
    if found:
        return found["stage"]
    for name in evidence.reproducers:
        # Triton 3.6 names reproducers <prefix>.<stage>.repro.mlir.
        parts = name.split(".")
        if len(parts) >= 3:
            return parts[-3]
    return ""


def _mlir_details(mlir: MlirFailure) -> dict[str, str]:
    return {
        "pass": mlir.pass_name,
        "anchor": mlir.anchor,
        "diagnostic": normalise(mlir.diagnostic),
        "op": mlir.op,
        "location": mlir.location,
        "called_from": " <- ".join(mlir.called_from),
    }


def _mlir_summary(mlir: MlirFailure) -> str:
    what = f"pass {mlir.pass_name}" if mlir.pass_name else "an unnamed pass"
    if mlir.diagnostic:
        what += f": {normalise(mlir.diagnostic)}"
    if mlir.op:
        what += f" ({mlir.op})"
    if mlir.location:
        what += f" at {mlir.location}"
    return what


# --------------------------------------------------------------------------------------
# Classifiers, in the order they are tried

_OUT_OF_RESOURCE = re.compile(
    r"out of resources?: (?P<name>[^\n]+?),? Required: (?P<required>\d+),? "
    r"Hardware limit: (?P<limit>\d+)"
)


@dataclass(frozen=True)
class WrappedPassFailure:
    """A pass failure that a backend re-raised as ``OutOfResources`` with placeholder figures."""

    kind: str = "pass_failure"

    def classify(self, evidence: Evidence) -> Signature | None:
        text = evidence.all
        match = _OUT_OF_RESOURCE.search(text)
        if match is None:
            return None
        name = match["name"].strip()
        placeholders = match["required"] == "0" and match["limit"] == "0"
        if not (placeholders or _PASS_MANAGER.search(name)):
            return None
        resource = name.split()[0] if name.split() else "?"
        mlir = parse_mlir(text)
        stage = _stage(evidence)
        figures = f"Required: {match['required']}, Hardware limit: {match['limit']}"
        summary = (
            f"pass failure{f' in {stage}' if stage else ''} reported as OutOfResources"
            f" ({resource}); the figures '{figures}' are placeholders, not a measurement; "
        )
        if mlir.found:
            summary += f"underlying: {_mlir_summary(mlir)}"
        else:
            summary += (
                "the output does not name the failing pass (the backend catches every"
                " PassManager failure); replay the MLIR reproducer to find it"
            )
        return Signature(
            kind=self.kind,
            key=make_key(
                self.kind,
                stage,
                mlir.pass_name,
                mlir.diagnostic,
                mlir.location,
                f"wrapped-as-out_of_resources:{resource}",
            ),
            summary=summary,
            details=_details(
                wrapper=f"OutOfResources({resource})",
                placeholders=figures if placeholders else "",
                wrapped_message=normalise(name),
                stage=stage,
                kernel=evidence.kernel,
                **_mlir_details(mlir),
            ),
        )


@dataclass(frozen=True)
class PassFailure:
    kind: str = "pass_failure"

    def classify(self, evidence: Evidence) -> Signature | None:
        text = evidence.all
        mlir = parse_mlir(text)
        if not (mlir.found or _PASS_MANAGER.search(text)):
            return None
        stage = _stage(evidence)
        where = f" in {stage}" if stage else ""
        return Signature(
            kind=self.kind,
            key=make_key(self.kind, stage, mlir.pass_name, mlir.diagnostic, mlir.op, mlir.location),
            summary=f"MLIR pass failure{where}: {_mlir_summary(mlir)}",
            details=_details(stage=stage, kernel=evidence.kernel, **_mlir_details(mlir)),
        )


_BACKENDS = re.compile(
    r"(?P<count>\d+) compatible backends for target \((?P<target>[^)]*)\) "
    r"\((?P<actives>\[[^\]]*\])\)"
)


@dataclass(frozen=True)
class BackendResolution:
    kind: str = "backend_resolution"

    def classify(self, evidence: Evidence) -> Signature | None:
        match = _BACKENDS.search(evidence.all)
        if match is None:
            return None
        count, target, actives = match["count"], match["target"], normalise(match["actives"])
        return Signature(
            kind=self.kind,
            key=make_key(self.kind, f"{count} backends", f"target {target}", actives),
            summary=f"{count} compatible backends for target '{target}' {actives}:"
            " no installed backend's supports_target() accepts it"
            if count == "0"
            else f"{count} compatible backends for target '{target}' {actives}: ambiguous",
            details=_details(count=count, target=target, actives=actives),
        )


_DRIVERS = re.compile(r"(?P<count>\d+) active drivers \((?P<actives>\[[^\]]*\])\)")
_OBJECT_REPR = re.compile(r"<(?:[\w.]+\.)?(?P<cls>\w+) object at 0x[0-9a-fA-F]+>")


@dataclass(frozen=True)
class DriverResolution:
    kind: str = "driver"

    def classify(self, evidence: Evidence) -> Signature | None:
        match = _DRIVERS.search(evidence.all)
        if match is None:
            return None
        actives = normalise(_OBJECT_REPR.sub(r"\g<cls>", match["actives"]))
        count = match["count"]
        return Signature(
            kind=self.kind,
            key=make_key(self.kind, f"{count} drivers", actives),
            summary=f"{count} active drivers {actives}: "
            + ("no backend found a usable device" if count == "0" else "ambiguous"),
            details=_details(count=count, actives=actives),
        )


_PTXAS_SHARED = re.compile(
    r"uses too much shared data \((?P<required>0x[0-9a-f]+|\d+) bytes, "
    r"(?P<limit>0x[0-9a-f]+|\d+) max\)"
)


@dataclass(frozen=True)
class OutOfResources:
    kind: str = "out_of_resources"

    def classify(self, evidence: Evidence) -> Signature | None:
        text = evidence.all
        match = _OUT_OF_RESOURCE.search(text)
        if match is not None:
            resource, required, limit = match["name"].strip(), match["required"], match["limit"]
        elif (ptxas := _PTXAS_SHARED.search(text)) is not None:
            resource = "shared memory"
            required = str(int(ptxas["required"], 0))
            limit = str(int(ptxas["limit"], 0))
        else:
            return None
        stage = _stage(evidence)
        return Signature(
            kind=self.kind,
            key=make_key(self.kind, resource, required, limit, evidence.kernel),
            summary=f"out of {resource}: {required} required, the limit is {limit}",
            details=_details(
                resource=resource,
                required=required,
                limit=limit,
                stage=stage,
                kernel=evidence.kernel,
                hint=str(evidence.failure.get("hint") or ""),
            ),
        )


_INFRASTRUCTURE: tuple[tuple[str, re.Pattern[str]], ...] = (
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
    ("node", re.compile(r"node '?(?P<node>[\w.-]+)'? (?:is )?(?P<reason>unreachable)")),
)


@dataclass(frozen=True)
class Infrastructure:
    kind: str = "infrastructure"

    def classify(self, evidence: Evidence) -> Signature | None:
        text = evidence.all
        for component, pattern in _INFRASTRUCTURE:
            match = pattern.search(text)
            if match is None:
                continue
            groups = match.groupdict()
            node = groups.get("node") or ""
            reason = match["reason"]
            if node:
                reason = reason.replace(node, "NODE")
            reason = normalise(reason)
            return Signature(
                kind=self.kind,
                key=make_key(self.kind, component, reason.lower()),
                summary=f"infrastructure ({component}){f' on {node}' if node else ''}: {reason}",
                details=_details(component=component, node=node, reason=reason),
            )
        return None


_TIMEOUTS = (
    re.compile(r"Timeout \(>\s*(?P<seconds>[\d.]+)s\) from pytest-timeout"),
    re.compile(r"timed out after (?P<seconds>[\d.]+) ?s(?:econds)?\b", re.IGNORECASE),
    re.compile(r"TimeoutExpired"),
    # The smoke suite's compile worker.
    re.compile(r"did not finish within (?P<seconds>[\d.]+) s and was killed"),
)


@dataclass(frozen=True)
class Timeout:
    kind: str = "timeout"

    def classify(self, evidence: Evidence) -> Signature | None:
        text = evidence.all
        match = next((m for p in _TIMEOUTS if (m := p.search(text))), None)
        if match is None:
            return None
        line = text[text.rfind("\n", 0, match.start()) + 1 : text.find("\n", match.end())]
        phase = "compile" if re.search(r"compil", line, re.IGNORECASE) else "test"
        stage = _stage(evidence)
        seconds = match.groupdict().get("seconds") or ""
        return Signature(
            kind=self.kind,
            key=make_key(self.kind, phase, stage, evidence.kernel),
            summary=f"{phase} timed out"
            + (f" after {seconds} s" if seconds else "")
            + (f" in {stage}" if stage else ""),
            details=_details(phase=phase, stage=stage, seconds=seconds, kernel=evidence.kernel),
        )


_SIGNALS = (
    re.compile(r"\b(?:Signals\.)?(?P<name>SIG(?:SEGV|ABRT|BUS|ILL|FPE|KILL|TERM))\b"),
    re.compile(r"signal (?P<number>\d+)\b"),
    re.compile(r"exit (?:code|status) -(?P<number>\d+)\b"),
    re.compile(r"Fatal Python error: (?P<fatal>Segmentation fault|Aborted|Bus error)"),
)
_FATAL = {"Segmentation fault": "SIGSEGV", "Aborted": "SIGABRT", "Bus error": "SIGBUS"}


def _signal_name(match: re.Match[str]) -> str:
    groups = match.groupdict()
    if groups.get("name"):
        return str(groups["name"])
    if groups.get("fatal"):
        return _FATAL[groups["fatal"]]
    number = int(groups["number"])
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


@dataclass(frozen=True)
class Crash:
    kind: str = "crash"

    def classify(self, evidence: Evidence) -> Signature | None:
        text = evidence.all
        match = next((m for p in _SIGNALS if (m := p.search(text))), None)
        if match is None:
            return None
        name = _signal_name(match)
        stage = _stage(evidence)
        return Signature(
            kind=self.kind,
            key=make_key(self.kind, name, stage, evidence.kernel),
            summary=f"crashed with {name}" + (f" in {stage}" if stage else ""),
            details=_details(signal=name, stage=stage, kernel=evidence.kernel),
        )


_NUMBER = r"[-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|nan|inf)"
_MISMATCH = re.compile(
    r"Tensor-likes are not close|Scalars are not close|Not equal to tolerance"
    r"|numeric mismatch|Mismatched elements",
    re.IGNORECASE,
)
_MAX_ERROR = (
    re.compile(
        rf"Greatest absolute difference: (?P<error>{_NUMBER}) at index \((?P<index>[^)]*)\)"
    ),
    re.compile(rf"Max absolute difference(?: among violations)?: (?P<error>{_NUMBER})"),
    re.compile(rf"max(?:imum)? (?:abs(?:olute)? )?err(?:or)?\s*[=:]?\s*(?P<error>{_NUMBER})", re.I),
)
_OUTPUT_NAME = re.compile(r"\b(?:output|tensor)\s+'?(?P<name>[A-Za-z_]\w*)'?")


@dataclass(frozen=True)
class NumericMismatch:
    kind: str = "numeric_mismatch"

    def classify(self, evidence: Evidence) -> Signature | None:
        text = evidence.all
        if _MISMATCH.search(text) is None:
            return None
        error = next((m for p in _MAX_ERROR if (m := p.search(text))), None)
        output = _OUTPUT_NAME.search(text)
        where = output["name"] if output else ""
        index = (error.groupdict().get("index") or "") if error else ""
        max_error = error["error"] if error else ""
        return Signature(
            kind=self.kind,
            key=make_key(self.kind, where, evidence.kernel),
            summary="numeric mismatch"
            + (f" in output '{where}'" if where else "")
            + (f": max abs error {max_error}" if max_error else "")
            + (f" at ({index})" if index else ""),
            details=_details(
                output=where, max_error=max_error, index=index, kernel=evidence.kernel
            ),
        )


_EXCEPTION_LINE = re.compile(r"^(?:E\s+)?(?P<line>(?:[\w.]+\.)?\w*(?:Error|Exception)\b:?[^\n]*)$")


@dataclass(frozen=True)
class Unclassified:
    kind: str = "unclassified"

    def classify(self, evidence: Evidence) -> Signature:
        lines = [
            m["line"] for row in evidence.all.splitlines() if (m := _EXCEPTION_LINE.match(row))
        ]
        headline = lines[-1] if lines else next(_non_empty(evidence.all), "no output")
        # Numbers in an unknown message are as likely run-specific as not: cut them all.
        stable = re.sub(r"\d+(?:\.\d+)?", "N", normalise(headline))
        return Signature(
            kind=self.kind,
            key=make_key(self.kind, stable[:200]),
            summary=f"unclassified failure: {normalise(headline)[:300]}",
            details=_details(headline=normalise(headline)[:300], kernel=evidence.kernel),
        )


def _non_empty(text: str) -> Iterator[str]:
    return (line.strip() for line in text.splitlines() if line.strip())


CLASSIFIERS: tuple[Classifier, ...] = (
    WrappedPassFailure(),
    PassFailure(),
    BackendResolution(),
    DriverResolution(),
    OutOfResources(),
    Infrastructure(),
    Timeout(),
    Crash(),
    NumericMismatch(),
    Unclassified(),
)
