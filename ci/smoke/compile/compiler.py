"""Ahead-of-time compiles in a worker process, so that no diagnostic is ever lost.

``triton.compile`` runs in a child process (``python -m ci.smoke.compile.compiler``) that takes one
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
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, TextIO, Tuple

from ci.smoke.contract import records, taxonomy
from ci.smoke.contract.lane import Target
from ci.smoke.contract.records import COMPILE_LOG_NAME, WORKER_LOG_NAME

# Protocol lines the child writes: a phase marker before triton.compile runs, then the outcome.
PHASE_COMPILING = {"phase": "compiling"}
# Launch options a job may leave out (as vLLM's attention launch does): the backend's
# defaults apply, and the outcome records what they were.
DEFAULTED_OPTIONS = ("num_warps", "num_stages")


@dataclass(frozen=True)
class CompileJob:
    module: str
    kernel: str
    signature: Dict[str, str]
    constexprs: Dict[str, Any]
    # What the launch passes, nothing more: an option left out is the backend's default
    # (spec.json of a bundle leaves it out alike, so the replay takes the same default).
    options: Dict[str, Any]
    target: Target
    artifacts: str
    timeout_s: float
    # Per-argument attributes as Triton's JIT sets them at a launch, e.g.
    # {"x_ptr": [("tt.divisibility", 16), ("tt.pointer_range", 32)]} (see ``tritonapi``).
    attrs: Dict[str, List[Tuple[str, Any]]] = field(default_factory=dict)
    # Block-size constexprs the fallback probe may shrink after a failure.
    tunable_blocks: Tuple[str, ...] = ()
    # Stages whose IR a good compile keeps in the artifacts (it keeps none by default).
    keep_ir: Tuple[str, ...] = ()
    # Environment the worker sets (where unset) before it first imports ``module``: a real
    # package decides things at import time (vLLM: whether Triton is usable at all).
    import_env: Dict[str, str] = field(default_factory=dict)
    # The module's source file: loaded from there where the module is not importable by
    # name (FlagGems' generated kernels); what a reproducer bundle copies.
    module_file: str = ""


def jit_attrs(
    target: Target, pointers: Sequence[str], ints: Mapping[str, int]
) -> Dict[str, List[Tuple[str, Any]]]:
    """Attrs as Triton's JIT sets them at a launch of contiguous tensors under 2 GB: every
    pointer 16-byte aligned (on AMD also ``tt.pointer_range`` 32, its buffer loads and
    stores), every integer argument divisible by 16 whose value at the launch is."""
    pointer = [("tt.divisibility", 16)]
    if target.backend == "hip":
        pointer.append(("tt.pointer_range", 32))
    attrs = {name: list(pointer) for name in pointers}
    attrs.update({name: [("tt.divisibility", 16)] for name, v in ints.items() if v % 16 == 0})
    return attrs


@dataclass
class CompileOutcome:
    status: str  # "ok" or a failure kind of ci.smoke.contract.taxonomy
    message: str = ""
    seconds: float = 0.0
    shared: Optional[int] = None
    # Why ``shared`` is absent when the backend reports none (the xpu backend says -1).
    shared_note: str = ""
    registers: Optional[int] = None
    spills: Optional[int] = None
    diagnostics: List[str] = field(default_factory=list)
    # The last stage whose IR exists: where a failed compile stopped, or where a compile
    # ended because the node's toolchain cannot run the next stage (see Target.last_stage).
    last_stage: Optional[str] = None
    stages: List[str] = field(default_factory=list)
    files: List[str] = field(default_factory=list)
    # The TTGIR's identity (``tritonapi.ir_identity``) of a good compile: the variant compiled.
    ttgir_sha256: Optional[str] = None
    # The values the backend chose for the DEFAULTED_OPTIONS the job left out.
    backend_defaults: Dict[str, Any] = field(default_factory=dict)
    traceback: str = ""
    exit_status: Optional[int] = None
    stderr_tail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def summary(self) -> str:
        lines = [f"[{self.status}] {self.message}"]
        if self.status == taxonomy.HARNESS_ERROR:
            lines.append(
                "this is a failure of the flagci harness on this lane (an API mismatch, an "
                "import error, a bug of ours), not of the compiler under test"
            )
        elif self.status == taxonomy.TOOLCHAIN:
            lines.append("this is a toolchain problem of the node, not of the compiler")
        if self.backend_defaults:
            chosen = ", ".join(f"{k}={v}" for k, v in self.backend_defaults.items())
            lines.append(f"options left to the backend's defaults: {chosen}")
        if self.exit_status is not None:
            lines.append(f"worker exit status: {self.exit_status}")
        if self.diagnostics:
            lines.append("MLIR diagnostics:")
            lines.extend(f"  {d}" for d in self.diagnostics[:20])
        if self.last_stage:
            lines.append(f"last good stage: {self.last_stage}")
        if self.traceback:
            lines.append("traceback:")
            lines.extend(f"  {line}" for line in self.traceback.rstrip().splitlines()[-30:])
        if self.stderr_tail:
            lines.append("worker stderr (last lines):")
            lines.extend(f"  {line}" for line in self.stderr_tail.rstrip().splitlines())
        if self.files:
            lines.append("kept: " + ", ".join(self.files))
        return "\n".join(lines)


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


# ----------------------------------------------------------------------------------------
# Child side: runs inside the lane environment, imports triton (through ci.smoke.compile.tritonapi).


class _Prepared:
    """A job made ready to compile: every use of Triton's API before ``triton.compile``."""

    def __init__(self, job: CompileJob) -> None:
        from ci.smoke.compile import tritonapi

        for name, value in job.import_env.items():
            os.environ.setdefault(name, value)
        kernel = tritonapi.jit_function(
            getattr(_load_module(job.module, job.module_file), job.kernel)
        )
        self.target = tritonapi.gpu_target(
            job.target.backend, job.target.arch, job.target.warp_size
        )
        self.source = tritonapi.ast_source(
            kernel, job.signature, job.constexprs, job.attrs, self.target
        )
        # The backend's own stage order and defaults; a backend that cannot be made leaves
        # them empty and triton.compile reports that itself (backend resolution).
        left_out = [name for name in DEFAULTED_OPTIONS if name not in job.options]
        try:
            self.stages: Tuple[str, ...] = tritonapi.stage_names(self.target, job.options)
            self.backend_defaults = tritonapi.option_values(self.target, job.options, left_out)
        except RuntimeError:
            self.stages = ()
            self.backend_defaults = {}


def _findable(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        # A parent only the package's own import puts on sys.path (FlagGems' ``_iluvatar``).
        return False


def _top_package(file: Path) -> str:
    """The outermost package holding ``file`` (``flag_gems`` for a module under
    ``flag_gems/runtime/backend/_nvidia/hopper/ops/``); "" for a file outside packages."""
    top = ""
    folder = file.parent
    while (folder / "__init__.py").is_file():
        top = folder.name
        folder = folder.parent
    return top if top.isidentifier() else ""


def _load_module(name: str, file: str) -> Any:
    import importlib
    import importlib.util

    if name in sys.modules:
        return sys.modules[name]
    if not file or _findable(name):
        return importlib.import_module(name)
    # A module whose top package exists only once its distribution's own import has run
    # (FlagGems puts ``runtime/backend/_<vendor>`` on sys.path and imports the GPU's arch
    # ops, ``hopper.ops``, as it initialises). Import that distribution first, as the
    # capture did: the module is then loaded once, by its package. Loading the file by
    # itself first would import the distribution from inside it, and the distribution's
    # ``from .mm import mm`` would meet this module half made (ImportError).
    top = _top_package(Path(file))
    if top and top not in sys.modules and _findable(top):
        importlib.import_module(top)
        if name in sys.modules:
            return sys.modules[name]
        if _findable(name):
            return importlib.import_module(name)
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ImportError(f"{file}: not a Python source file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _stage_files(cache: Path, stages: Tuple[str, ...]) -> List[Path]:
    files = [p for p in cache.rglob("*") if p.is_file() and p.suffix.lstrip(".") in stages]
    return sorted(files, key=lambda p: stages.index(p.suffix.lstrip(".")))


def _harness_error(message: str, seconds: float = 0.0) -> CompileOutcome:
    return CompileOutcome(
        status=taxonomy.HARNESS_ERROR,
        message=message,
        seconds=seconds,
        traceback=traceback.format_exc(),
    )


def _compile_in_child(job: CompileJob, protocol: TextIO) -> CompileOutcome:
    artifacts = Path(job.artifacts)
    artifacts.mkdir(parents=True, exist_ok=True)
    cache = artifacts / "triton-cache"
    shutil.rmtree(cache, ignore_errors=True)
    os.environ["TRITON_CACHE_DIR"] = str(cache)
    os.environ["TRITON_REPRODUCER_PATH"] = str(artifacts / "repro")
    os.environ["TRITON_DUMP_PTXAS_LOG"] = "1"
    try:
        import triton

        prepared = _Prepared(job)
    except Exception as exc:
        return _harness_error(f"preparing the compile: {type(exc).__name__}: {exc}")

    log_path = artifacts / COMPILE_LOG_NAME
    saved = os.dup(1), os.dup(2)
    protocol.write(json.dumps(PHASE_COMPILING) + "\n")
    protocol.flush()
    started = time.perf_counter()
    with log_path.open("w") as log_file:
        os.dup2(log_file.fileno(), 1)
        os.dup2(log_file.fileno(), 2)
        try:
            compiled = triton.compile(
                prepared.source, target=prepared.target, options=dict(job.options)
            )
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
        outcome = _failed(job, prepared.stages, error, log, seconds)
    else:
        try:
            outcome = _succeeded(job, compiled, log, seconds)
        except Exception as exc:
            message = f"reading the compiled kernel: {type(exc).__name__}: {exc}"
            return _harness_error(message, seconds)
    outcome.backend_defaults = dict(prepared.backend_defaults)
    return outcome


def _failed(
    job: CompileJob, stages: Tuple[str, ...], error: BaseException, log: str, seconds: float
) -> CompileOutcome:
    artifacts = Path(job.artifacts)
    cache = artifacts / "triton-cache"
    message = f"{type(error).__name__}: {error}".strip()
    found = _stage_files(cache, stages)
    reached = found[-1].suffix.lstrip(".") if found else None
    kind = taxonomy.compile_failure_kind(type(error).__name__, message, log)
    expected = job.target.last_stage
    if (
        kind == taxonomy.TOOLCHAIN
        and expected
        and reached
        and expected in stages
        and stages.index(reached) >= stages.index(expected)
    ):
        # The lane says this node's toolchain ends here: the compile did all it can.
        shutil.rmtree(cache, ignore_errors=True)
        _drop_reproducers(artifacts)
        (artifacts / COMPILE_LOG_NAME).unlink(missing_ok=True)
        return CompileOutcome(
            status="ok",
            message=f"stopped after {reached} as the lane expects here: "
            f"{taxonomy.missing_tool(f'{message}{chr(10)}{log}')} is absent on this node",
            seconds=seconds,
            last_stage=reached,
            stages=[p.suffix.lstrip(".") for p in found],
        )
    if kind == taxonomy.TOOLCHAIN:
        message += (
            f" (the lane expects {job.target.label} to reach "
            f"{expected or 'every stage'} on this node)"
        )
    ir = artifacts / "ir"
    shutil.rmtree(ir, ignore_errors=True)
    ir.mkdir()
    for stage in found:
        shutil.copy2(stage, ir / stage.name)
    shutil.rmtree(cache, ignore_errors=True)
    kept = sorted(p.name for p in artifacts.iterdir() if p.name.startswith("repro"))
    kept += [f"ir/{p.name}" for p in found] + [COMPILE_LOG_NAME]
    return CompileOutcome(
        status=kind,
        message=message,
        seconds=seconds,
        diagnostics=parse_diagnostics(log),
        last_stage=reached,
        stages=[p.suffix.lstrip(".") for p in found],
        files=kept,
        traceback="".join(traceback.format_exception(type(error), error, error.__traceback__)),
    )


def _drop_reproducers(artifacts: Path) -> None:
    for repro in artifacts.glob("repro*"):
        repro.unlink()


def _succeeded(job: CompileJob, compiled: Any, log: str, seconds: float) -> CompileOutcome:
    from ci.smoke.compile import tritonapi

    artifacts = Path(job.artifacts)
    facts = tritonapi.compiled_facts(compiled)
    registers = spills = None
    match = _PTXAS_REGS.search(log)
    if match:
        registers = int(match.group("regs"))
        spill = _PTXAS_SPILL.search(log)
        spills = int(spill.group("stores")) + int(spill.group("loads")) if spill else None
    ttgir = compiled.asm.get("ttgir")
    amdgcn = compiled.asm.get("amdgcn")
    if isinstance(amdgcn, str):
        vgpr, vspill = _AMD_VGPR.search(amdgcn), _AMD_SPILL.search(amdgcn)
        registers = int(vgpr.group(1)) if vgpr else None
        spills = int(vspill.group(1)) if vspill else None
    # A good compile leaves nothing behind but the IR the job asks to keep: its IR and
    # reproducers (Triton writes one per stage even on success) are reproducible from the job.
    kept = []
    for stage in job.keep_ir:
        text = compiled.asm.get(stage)
        if isinstance(text, str):
            (artifacts / f"{job.kernel}.{stage}").write_text(text, encoding="utf-8")
            kept.append(f"{job.kernel}.{stage}")
    shutil.rmtree(artifacts / "triton-cache", ignore_errors=True)
    _drop_reproducers(artifacts)
    outcome = CompileOutcome(
        status="ok",
        seconds=seconds,
        shared=facts.shared,
        registers=registers,
        spills=spills,
        last_stage=facts.binary,
        stages=list(facts.stages),
        files=kept,
        ttgir_sha256=tritonapi.ir_identity(ttgir) if isinstance(ttgir, str) else None,
    )
    if facts.shared is None:
        outcome.shared_note = (
            f"not checked: the backend reports shared={facts.shared_reported} "
            "(no shared-memory figure on this target)"
        )
    limit = job.target.shared_limit
    if limit and facts.shared is not None and facts.shared > limit:
        outcome.status = taxonomy.OUT_OF_RESOURCES
        outcome.message = out_of_resources_message("shared memory", facts.shared, limit)
    else:
        (artifacts / COMPILE_LOG_NAME).unlink(missing_ok=True)
    return outcome


def _serve() -> None:
    """Child main loop: one JSON job in, a phase line and one JSON outcome out, until EOF."""
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # stray prints must not corrupt the protocol stream
    for line in sys.stdin:
        try:
            raw = json.loads(line)
            raw["target"] = Target(**raw["target"])
            raw["attrs"] = {
                name: [tuple(pair) for pair in pairs] for name, pairs in raw["attrs"].items()
            }
            raw["tunable_blocks"] = tuple(raw.get("tunable_blocks", ()))
            raw["keep_ir"] = tuple(raw.get("keep_ir", ()))
            job = CompileJob(**raw)
        except Exception as exc:
            outcome = _harness_error(f"reading the compile job: {type(exc).__name__}: {exc}")
        else:
            outcome = _compile_in_child(job, protocol)
        protocol.write(json.dumps(asdict(outcome)) + "\n")
        protocol.flush()


# ----------------------------------------------------------------------------------------
# Parent side: the pytest process.


class CompileWorker:
    """One long-lived child per pytest process; replaced after a timeout or a crash.

    The child's stderr goes to a file of the worker's own, so that a child that dies without
    answering (an import error, an abort) leaves its last words in the test's artifacts.
    """

    def __init__(self) -> None:
        self._proc: Optional["subprocess.Popen[bytes]"] = None
        self._stderr: Optional[Any] = None
        self._pending = b""  # bytes read from the child past the last full line

    def _start(self) -> "subprocess.Popen[bytes]":
        if self._proc is None or self._proc.poll() is not None:
            env = dict(os.environ)
            env.pop("TRITON_INTERPRET", None)  # the child compiles; it never interprets
            env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
            if self._stderr is not None:
                self._stderr.close()
            # Lives as long as the child it belongs to; closed when the child is replaced.
            self._stderr = tempfile.TemporaryFile("w+b")  # noqa: SIM115
            self._pending = b""
            # Unbuffered: the deadline is kept with select() on the pipe itself, which must
            # not have lines waiting in a buffer of ours that select() cannot see.
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "ci.smoke.compile.compiler"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                bufsize=0,
                env=env,
                start_new_session=True,
            )
        return self._proc

    def _read_line(self, deadline: float) -> Optional[bytes]:
        """The child's next protocol line; b"" at end of file; None when the deadline passed."""
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        while b"\n" not in self._pending:
            ready, _, _ = select.select([fd], [], [], max(deadline - time.perf_counter(), 0))
            if not ready:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return b""
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return line

    def _stderr_since(self, offset: int) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(offset)
        data = self._stderr.read()
        self._stderr.seek(0, os.SEEK_END)
        return str(data.decode("utf-8", errors="replace"))

    def compile(self, job: CompileJob) -> CompileOutcome:
        proc = self._start()
        assert proc.stdin is not None and self._stderr is not None
        payload = asdict(job)
        stderr_offset = self._stderr.seek(0, os.SEEK_END)
        started = time.perf_counter()
        deadline = started + job.timeout_s
        try:
            proc.stdin.write(json.dumps(payload).encode() + b"\n")
            proc.stdin.flush()
        except BrokenPipeError:
            pass
        compiling = False
        outcome: Optional[CompileOutcome] = None
        while outcome is None:
            line = self._read_line(deadline)
            if line is None:
                self.close(kill=True)
                outcome = CompileOutcome(
                    status=taxonomy.TIMEOUT,
                    message=f"compile did not finish within {job.timeout_s:g} s and was killed",
                    seconds=time.perf_counter() - started,
                )
            elif not line:
                outcome = self._died(job, compiling, stderr_offset)
                outcome.seconds = time.perf_counter() - started
            else:
                answer = json.loads(line)
                if answer == PHASE_COMPILING:
                    compiling = True
                else:
                    outcome = CompileOutcome(**answer)
        if not outcome.ok:
            outcome.files = sorted(set(outcome.files) | _existing(Path(job.artifacts)))
            records.update_failure(
                Path(job.artifacts) / records.FAILURE_NAME,
                {records.FAILURE_JOB: payload, records.FAILURE_OUTCOME: asdict(outcome)},
                fresh=True,
            )
        return outcome

    def _died(self, job: CompileJob, compiling: bool, stderr_offset: int) -> CompileOutcome:
        """The child ended without answering: a crash of the compiler if it was compiling,
        else a failure of our harness (it never reached triton.compile)."""
        assert self._proc is not None
        code = self._proc.wait()
        self._proc = None
        stderr = self._stderr_since(stderr_offset)
        if stderr:
            folder = Path(job.artifacts)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / WORKER_LOG_NAME).write_text(stderr, encoding="utf-8")
        tail = "\n".join(stderr.rstrip().splitlines()[-20:])
        if compiling:
            return CompileOutcome(
                status=taxonomy.CRASH,
                message=_describe_exit(code),
                exit_status=code,
                stderr_tail=tail,
            )
        return CompileOutcome(
            status=taxonomy.HARNESS_ERROR,
            message=f"{_describe_exit(code)} before triton.compile ran",
            exit_status=code,
            stderr_tail=tail,
        )

    def close(self, kill: bool = False) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            if kill:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
            else:
                assert proc.stdin is not None
                proc.stdin.close()
            proc.wait()
        if self._stderr is not None and kill is False:
            self._stderr.close()
            self._stderr = None


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
