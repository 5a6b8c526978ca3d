"""Ahead-of-time compiles in a worker process, so that no diagnostic is ever lost.

``triton.compile`` runs in a child process (``python -m ci.smoke.compiler``) that takes one
JSON job per line on stdin and answers one JSON outcome per line. For each job the child
uses a fresh ``TRITON_CACHE_DIR`` and ``TRITON_REPRODUCER_PATH`` inside the test's artifact
folder (reproducers and dumps are not part of Triton's cache key: a cache hit would write
nothing) and sends its stdout and stderr (MLIR diagnostics, the ptxas report) to a log file
there. The parent waits at most the job's timeout: a hung compile is killed and reported
as a timeout, a compile that kills its process is reported as a crash with its signal.

Standard library only on the parent side; the child imports triton.
"""

import contextlib
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ci.smoke.lane import Target

LOG_NAME = "compile.log"
FAILURE_NAME = "failure.json"
# Stages in the order Triton produces them; the last one present is the last good stage.
STAGE_ORDER = ("ttir", "ttgir", "llir", "ptx", "cubin", "amdgcn", "hsaco")


@dataclass(frozen=True)
class CompileJob:
    module: str
    kernel: str
    signature: Dict[str, str]
    constexprs: Dict[str, Any]
    options: Dict[str, Any]
    target: Target
    artifacts: str
    timeout_s: float
    # Argument names Triton may assume are 16-byte aligned / divisible by 16.
    divisible_by_16: Tuple[str, ...] = ()
    # Block-size constexprs the fallback probe may shrink after a failure.
    tunable_blocks: Tuple[str, ...] = ()


@dataclass
class CompileOutcome:
    status: str  # "ok" or a failure kind, see FAILURE_KINDS
    message: str = ""
    seconds: float = 0.0
    shared: Optional[int] = None
    registers: Optional[int] = None
    spills: Optional[int] = None
    diagnostics: List[str] = field(default_factory=list)
    last_good_stage: Optional[str] = None
    files: List[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def summary(self) -> str:
        lines = [f"[{self.status}] {self.message}"]
        if self.diagnostics:
            lines.append("MLIR diagnostics:")
            lines.extend(f"  {d}" for d in self.diagnostics[:20])
        if self.last_good_stage:
            lines.append(f"last good stage: {self.last_good_stage}")
        if self.files:
            lines.append("kept: " + ", ".join(self.files))
        return "\n".join(lines)


FAILURE_KINDS = (
    "backend_resolution",
    "out_of_resources",
    "pass_failure",
    "compile_error",
    "timeout",
    "crash",
)

_DIAGNOSTIC = re.compile(r"^(?P<loc>\S+:\d+:\d+): (?P<sev>error|note|warning): (?P<msg>.*)$")
_PIPELINE = re.compile(r"Pipeline failed while executing \[`(?P<pass>[^`]+)`")
_PTXAS_REGS = re.compile(r"Used (?P<regs>\d+) registers")
_PTXAS_SPILL = re.compile(r"(?P<stores>\d+) bytes spill stores, (?P<loads>\d+) bytes spill loads")
_AMD_VGPR = re.compile(r"\.vgpr_count:\s+(\d+)")
_AMD_SPILL = re.compile(r"\.vgpr_spill_count:\s+(\d+)")


def out_of_resources_message(resource: str, required: int, limit: int) -> str:
    # Same wording as triton.runtime.errors.OutOfResources, so triage reads both alike.
    return (
        f"out of resource: {resource}, Required: {required}, Hardware limit: {limit}. "
        "Reducing block sizes or `num_stages` may help."
    )


def parse_diagnostics(log: str) -> List[str]:
    found = []
    for line in log.splitlines():
        line = line.strip()
        if _DIAGNOSTIC.match(line) or _PIPELINE.search(line):
            found.append(line)
    return found


def classify(exc_type: str, message: str, log: str) -> str:
    if "compatible backends for target" in message:
        return "backend_resolution"
    if exc_type == "OutOfResources" or message.startswith("out of resource"):
        return "out_of_resources"
    if "PassManager::run failed" in message or _PIPELINE.search(log):
        return "pass_failure"
    return "compile_error"


# ----------------------------------------------------------------------------------------
# Child side: runs inside the lane environment, imports triton.


def _stage_files(cache: Path) -> List[Path]:
    files = [p for p in cache.rglob("*") if p.is_file() and p.suffix.lstrip(".") in STAGE_ORDER]
    return sorted(files, key=lambda p: STAGE_ORDER.index(p.suffix.lstrip(".")))


def _compile_in_child(job: CompileJob) -> CompileOutcome:
    import importlib

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    artifacts = Path(job.artifacts)
    artifacts.mkdir(parents=True, exist_ok=True)
    cache = artifacts / "triton-cache"
    shutil.rmtree(cache, ignore_errors=True)
    os.environ["TRITON_CACHE_DIR"] = str(cache)
    os.environ["TRITON_REPRODUCER_PATH"] = str(artifacts / "repro")
    os.environ["TRITON_DUMP_PTXAS_LOG"] = "1"

    kernel = getattr(importlib.import_module(job.module), job.kernel)
    constexprs = dict(job.constexprs)
    attrs = {
        (kernel.arg_names.index(name),): [["tt.divisibility", 16]] for name in job.divisible_by_16
    }
    source = ASTSource(fn=kernel, signature=dict(job.signature), constexprs=constexprs, attrs=attrs)
    target = GPUTarget(job.target.backend, job.target.arch, job.target.warp_size)

    log_path = artifacts / LOG_NAME
    saved = os.dup(1), os.dup(2)
    started = time.perf_counter()
    with log_path.open("w") as log_file:
        os.dup2(log_file.fileno(), 1)
        os.dup2(log_file.fileno(), 2)
        try:
            compiled = triton.compile(source, target=target, options=dict(job.options))
            error: Optional[BaseException] = None
        except Exception as exc:
            compiled, error = None, exc
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
    seconds = time.perf_counter() - started
    log = log_path.read_text(errors="replace")

    if error is not None:
        message = f"{type(error).__name__}: {error}".strip()
        stages = _stage_files(cache)
        ir = artifacts / "ir"
        shutil.rmtree(ir, ignore_errors=True)
        ir.mkdir()
        for stage in stages:
            shutil.copy2(stage, ir / stage.name)
        shutil.rmtree(cache, ignore_errors=True)
        kept = sorted(p.name for p in artifacts.iterdir() if p.name.startswith("repro"))
        kept += [f"ir/{p.name}" for p in stages] + [LOG_NAME]
        return CompileOutcome(
            status=classify(type(error).__name__, message, log),
            message=message,
            seconds=seconds,
            diagnostics=parse_diagnostics(log),
            last_good_stage=stages[-1].suffix.lstrip(".") if stages else None,
            files=kept,
        )

    shared = int(compiled.metadata.shared)
    registers = spills = None
    match = _PTXAS_REGS.search(log)
    if match:
        registers = int(match.group("regs"))
        spill = _PTXAS_SPILL.search(log)
        spills = int(spill.group("stores")) + int(spill.group("loads")) if spill else None
    amdgcn = compiled.asm.get("amdgcn")
    if isinstance(amdgcn, str):
        vgpr, vspill = _AMD_VGPR.search(amdgcn), _AMD_SPILL.search(amdgcn)
        registers = int(vgpr.group(1)) if vgpr else None
        spills = int(vspill.group(1)) if vspill else None
    # A good compile leaves nothing behind: its IR and reproducers (Triton writes one per
    # stage even on success) are reproducible from the same job.
    shutil.rmtree(cache, ignore_errors=True)
    for repro in artifacts.glob("repro*"):
        repro.unlink()
    outcome = CompileOutcome(
        status="ok", seconds=seconds, shared=shared, registers=registers, spills=spills
    )
    limit = job.target.shared_limit
    if limit and shared > limit:
        outcome.status = "out_of_resources"
        outcome.message = out_of_resources_message("shared memory", shared, limit)
    else:
        log_path.unlink()
    return outcome


def _serve() -> None:
    """Child main loop: one JSON job in, one JSON outcome out, until stdin closes."""
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # stray prints must not corrupt the protocol stream
    for line in sys.stdin:
        raw = json.loads(line)
        raw["target"] = Target(**raw["target"])
        raw["divisible_by_16"] = tuple(raw.get("divisible_by_16", ()))
        raw["tunable_blocks"] = tuple(raw.get("tunable_blocks", ()))
        outcome = _compile_in_child(CompileJob(**raw))
        protocol.write(json.dumps(asdict(outcome)) + "\n")
        protocol.flush()


# ----------------------------------------------------------------------------------------
# Parent side: the pytest process.


class CompileWorker:
    """One long-lived child per pytest process; replaced after a timeout or a crash."""

    def __init__(self) -> None:
        self._proc: Optional["subprocess.Popen[str]"] = None

    def _start(self) -> "subprocess.Popen[str]":
        if self._proc is None or self._proc.poll() is not None:
            env = dict(os.environ)
            env.pop("TRITON_INTERPRET", None)  # the child compiles; it never interprets
            env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "ci.smoke.compiler"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
                start_new_session=True,
            )
        return self._proc

    def compile(self, job: CompileJob) -> CompileOutcome:
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        payload = asdict(job)
        started = time.perf_counter()
        try:
            proc.stdin.write(json.dumps(payload) + "\n")
            proc.stdin.flush()
        except BrokenPipeError:
            pass
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            ready = selector.select(timeout=job.timeout_s)
        if not ready:
            self.close(kill=True)
            outcome = CompileOutcome(
                status="timeout",
                message=f"compile did not finish within {job.timeout_s:g} s and was killed",
                seconds=time.perf_counter() - started,
            )
        else:
            line = proc.stdout.readline()
            if line:
                outcome = CompileOutcome(**json.loads(line))
            else:
                code = proc.wait()
                self._proc = None
                outcome = CompileOutcome(status="crash", message=_describe_exit(code))
                outcome.seconds = time.perf_counter() - started
        if not outcome.ok:
            outcome.files = sorted(set(outcome.files) | _existing(Path(job.artifacts)))
            record = {"job": payload, "outcome": asdict(outcome)}
            path = Path(job.artifacts) / FAILURE_NAME
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(record, indent=2, default=str))
        return outcome

    def close(self, kill: bool = False) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        else:
            assert proc.stdin is not None
            proc.stdin.close()
        proc.wait()


def _existing(folder: Path) -> "set[str]":
    if not folder.is_dir():
        return set()
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def _describe_exit(code: int) -> str:
    if code < 0:
        name = signal.Signals(-code).name
        return f"the compiler process was killed by signal {-code} ({name})"
    return f"the compiler process exited with status {code} without answering"


if __name__ == "__main__":
    _serve()
