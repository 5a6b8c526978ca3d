"""The real-kernel corpus: what vLLM's and FlagGems' own launchers hand Triton's JIT.

The smoke suite's side of the capture (``ci.smoke.realkernels.capture`` runs in a process of
its own): one capture per corpus and FlagGems vendor, made when a selected test first needs it
(``Capture``), after the stack check (``ci.smoke.realkernels.stackcheck``) found the stack
ready; its document is kept in the artifacts (``capture-<corpus>.json``); each captured launch
becomes a compile job for the target it was bound for, with the JIT's own signature,
constexprs, attrs and options. Standard library only.
"""

import functools
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from importlib import import_module, metadata
from pathlib import Path
from typing import Any, Dict, List, Tuple

from ci.smoke import files
from ci.smoke.compile.compiler import CompileJob
from ci.smoke.contract import records
from ci.smoke.contract.lane import CAPTURE_CACHE_ENV, LaneContext, Target

CAPTURE_TIMEOUT_S = 900
# The launch tag a corpus sets on launches of an autotuner's benchmark.
AUTOTUNE_CANDIDATE = "autotune_candidate"


class CaptureError(RuntimeError):
    """The capture process itself failed (not one scenario): the package does not import."""


@dataclass(frozen=True)
class RealLaunch:
    """One JIT launch of a real kernel, as captured for one target."""

    source: str  # "vllm 0.24.0"
    scenario: str
    target: str  # the target's label
    kernel: str
    module: str
    signature: Dict[str, str]
    constexprs: Dict[str, Any]
    attrs: Dict[str, List[Tuple[str, Any]]]
    options: Dict[str, Any]
    import_env: Dict[str, str] = field(default_factory=dict)
    module_file: str = ""
    # Launched by an autotuner's benchmark: one config of several, which Triton's autotuner
    # drops at launch where it runs out of resources.
    autotune_candidate: bool = False
    # Where the scenario's launcher failed before any launch: the traceback.
    error: str = ""
    # The package's variant of a vendor the lane has no device of (FlagGems' ``iluvatar`` on
    # the CPU lane), captured with the lane's Triton; "" for the lane's own.
    foreign_vendor: str = ""

    @property
    def id(self) -> str:
        name = f"{self.scenario}-{self.kernel}" if self.kernel else self.scenario
        return f"{self.foreign_vendor}-{name}" if self.foreign_vendor else name


def vendor_groups(corpus: str, lane: LaneContext) -> Dict[str, List[Target]]:
    """Targets by the vendor the package selects for them ("" where it selects none)."""
    from importlib import import_module

    from ci.smoke.realkernels.capture import CORPORA

    module = import_module(CORPORA[corpus])
    groups: Dict[str, List[Target]] = {}
    for target in lane.targets:
        groups.setdefault(module.vendor(lane.vendor, target.backend) or "", []).append(target)
    return groups


def _corpus_module(corpus: str) -> Any:
    from ci.smoke.realkernels.capture import CORPORA

    return import_module(CORPORA[corpus])


def _capture_env(module: Any, vendor: str, home: Path) -> Dict[str, str]:
    """The environment the capture (and the stack check) runs in: this one without
    ``TRITON_INTERPRET``, with the suite's path and the package's vendor."""
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env.update(module.vendor_env(vendor, home) if vendor else {})
    return env


def capture(corpus: str, lane: LaneContext, work: Path) -> List[RealLaunch]:
    """Run the capture for every target of ``lane``; raise CaptureError if it broke. The
    capture's document is kept in ``work`` as ``capture-<corpus>.json``; a document without
    any error is cached, one with an error never is."""
    module = _corpus_module(corpus)
    launches: List[RealLaunch] = []
    documents = []
    foreign = module.foreign_groups(lane.vendor, lane.targets)
    for vendor, targets in [*vendor_groups(corpus, lane).items(), *foreign.items()]:
        request = {"targets": [{**t.__dict__, "label": t.label} for t in targets]}
        key = [corpus, vendor, request, lane.env, installed(module.SOURCE_PACKAGE)]
        cached = _cache_entry(corpus, vendor, key, module.__file__)
        home = cached if cached is not None else work.resolve()
        document = _cached(cached)
        if document is None:
            env = _capture_env(module, vendor, home)
            try:
                document = _run_capture(corpus, vendor, request, env)
            except CaptureError as err:
                if vendor not in foreign:
                    raise
                launches.append(_unavailable(vendor, targets[0], str(err)))
                continue
            document["vendor"] = vendor
            if cached is not None and not any("error" in r for r in document["results"]):
                _store(cached, document)
        documents.append(document)
        found = _launches(document, vendor if vendor in foreign else "")
        launches.extend(_new_to_lane(launches, found) if vendor in foreign else found)
    work.mkdir(parents=True, exist_ok=True)
    (work / records.capture_name(corpus)).write_text(json.dumps(documents, indent=1), "utf-8")
    return launches


def _run_capture(
    corpus: str, vendor: str, request: Dict[str, Any], env: Dict[str, str]
) -> Dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="flagci-capture-") as tmp:
        request_file = Path(tmp) / "request.json"
        out = Path(tmp) / "capture.json"
        request_file.write_text(json.dumps(request), encoding="utf-8")
        command = [
            sys.executable,
            "-m",
            "ci.smoke.realkernels.capture",
            corpus,
            str(request_file),
            str(out),
        ]
        try:
            done = subprocess.run(
                command,
                env=env,
                capture_output=True,
                text=True,
                timeout=CAPTURE_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise CaptureError(
                f"capturing the {corpus} corpus took over {CAPTURE_TIMEOUT_S} s"
            ) from None
        if done.returncode != 0 or not out.exists():
            tail = "\n".join(done.stderr.strip().splitlines()[-40:])
            raise CaptureError(
                f"capturing the {corpus} corpus failed (exit status {done.returncode})"
                f"{' for vendor ' + vendor if vendor else ''}:\n{tail}"
            )
        document: Dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        return document


# The capture of one lane environment is the same every run (its packages are pinned): it is
# kept, keyed by the request, the lane's environment variables, the code that captures and
# the installed packages it depends on (name, version and RECORD, so a reinstall or a fixed
# install is a new entry), so that each smoke run (and each ``-k`` run of one test) does not
# pay for it again. It is kept at ``$FLAGCI_CAPTURE_CACHE`` (an image run mounts the node's or
# this machine's cache folder there), else in the environment; where neither is writable it
# is captured every time.
CACHE_ENV = CAPTURE_CACHE_ENV
# The packages every capture depends on besides the corpus's own: the compiler that binds the
# launches and torch, whose meta tensors the launchers get.
CAPTURE_PACKAGES = ("triton", "triton-ascend", "flagtree", "torch")
_HERE = Path(__file__).parent
# The capturing code: a change to any of these makes a new cache entry.
CAPTURE_SOURCES = (
    _HERE / "capture.py",
    _HERE.parent / "compile" / "tritonapi.py",
    _HERE / "jobs.py",
)


def installed(name: str) -> str:
    """A distribution's name, version and installed files (its RECORD); "" where it is not
    installed."""
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return ""
    return f"{dist.metadata['Name']} {dist.version}\n{dist.read_text('RECORD') or ''}"


def _cache_entry(corpus: str, vendor: str, key: List[Any], corpus_file: Any) -> "Path | None":
    root = Path(os.environ.get(CACHE_ENV) or Path(sys.prefix) / "share" / "flagci" / "capture")
    packages = [installed(name) for name in CAPTURE_PACKAGES]
    digest = hashlib.sha256(json.dumps([*key, packages], sort_keys=True).encode())
    for source in [*CAPTURE_SOURCES, Path(str(corpus_file))]:
        digest.update(source.read_bytes())
    entry = root / f"{corpus}-{vendor or 'all'}-{digest.hexdigest()[:16]}"
    try:
        entry.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return entry if os.access(entry, os.W_OK) else None


def _cached(entry: "Path | None") -> "Dict[str, Any] | None":
    if entry is None:
        return None
    try:
        document: Dict[str, Any] = json.loads((entry / "capture.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return document


def _store(entry: Path, document: Dict[str, Any]) -> None:
    files.write_text(entry / "capture.json", json.dumps(document))


def _unavailable(vendor: str, target: Target, error: str) -> RealLaunch:
    """A foreign vendor's variant whose package did not import with the lane's Triton."""
    return RealLaunch(
        source=vendor,
        scenario="import",
        target=target.label,
        kernel="",
        module="",
        signature={},
        constexprs={},
        attrs={},
        options={},
        error=error,
        foreign_vendor=vendor,
    )


def _new_to_lane(lane_launches: List[RealLaunch], found: List[RealLaunch]) -> List[RealLaunch]:
    """A foreign variant's launches less those the lane's own capture already compiles (the
    same module, kernel, specialisation and options for the same target; a generated module
    is named by its code): its own kernels and tuned configs remain."""

    def key(la: RealLaunch) -> str:
        shape = [la.target, la.module, la.kernel, la.signature, la.constexprs]
        return json.dumps([*shape, la.attrs, la.options], sort_keys=True, default=str)

    known = {key(la) for la in lane_launches if not la.error}
    return [la for la in found if la.error or key(la) not in known]


def _launches(document: Dict[str, Any], foreign_vendor: str = "") -> List[RealLaunch]:
    source = f"{document['package']} {document['version']}".strip()
    found = []
    for entry in document["results"]:
        common = {
            "source": source,
            "scenario": entry["scenario"],
            "target": entry["target"],
            "foreign_vendor": foreign_vendor,
        }
        if "error" in entry:
            found.append(
                RealLaunch(
                    **common,
                    kernel="",
                    module="",
                    signature={},
                    constexprs={},
                    attrs={},
                    options={},
                    error=entry["traceback"],
                )
            )
            continue
        for launch in entry["launches"]:
            found.append(
                RealLaunch(
                    **common,
                    kernel=launch["kernel"],
                    module=launch["module"],
                    signature=launch["signature"],
                    constexprs=launch["constexprs"],
                    attrs={k: [tuple(p) for p in v] for k, v in launch["attrs"].items()},
                    options=launch["options"],
                    import_env=document["import_env"],
                    module_file=launch["module_file"],
                    autotune_candidate=bool(launch["tags"].get(AUTOTUNE_CANDIDATE)),
                )
            )
    return found


def compile_job(
    launch: RealLaunch, target: Target, artifacts: str, timeout_s: float, keep_ir: Tuple[str, ...]
) -> CompileJob:
    return CompileJob(
        module=launch.module,
        kernel=launch.kernel,
        signature=dict(launch.signature),
        constexprs=dict(launch.constexprs),
        options=dict(launch.options),
        target=target,
        artifacts=artifacts,
        timeout_s=timeout_s,
        attrs={k: list(v) for k, v in launch.attrs.items()},
        keep_ir=keep_ir,
        import_env=dict(launch.import_env),
        module_file=launch.module_file,
    )


def stack_problem(corpus: str, lane: LaneContext) -> str:
    """What the capture needs that the lane's stack lacks, as one message ("" when it is
    ready): the stack check run as the capture runs, once per vendor of the package."""
    module = _corpus_module(corpus)
    found: List[str] = []
    for vendor in vendor_groups(corpus, lane):
        with tempfile.TemporaryDirectory(prefix="flagci-stack-") as tmp:
            out = Path(tmp) / "problems.json"
            command = [sys.executable, "-m", "ci.smoke.realkernels.stackcheck", corpus]
            try:
                done = subprocess.run(
                    [*command, lane.vendor, str(out)],
                    env=_capture_env(module, vendor, Path(tmp)),
                    capture_output=True,
                    text=True,
                    timeout=CAPTURE_TIMEOUT_S,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                found.append(f"the stack check took over {CAPTURE_TIMEOUT_S} s")
                continue
            if done.returncode != 0 or not out.exists():
                tail = "\n".join(done.stderr.strip().splitlines()[-20:])
                found.append(f"the stack check failed (exit status {done.returncode}):\n{tail}")
                continue
            problems = json.loads(out.read_text(encoding="utf-8"))["problems"]
            found.extend(f"{p} (GEMS_VENDOR={vendor})" if vendor else p for p in problems)
    if not found:
        return ""
    listed = "\n".join(f"- {p}" for p in found)
    return f"the {corpus} corpus cannot be captured on lane {lane.lane}:\n{listed}"


@dataclass
class Capture:
    """One corpus on the lane, made when a selected test first needs it: the stack check
    first, then the capture, each once per process. Nothing where the lane does not run
    ``group``."""

    corpus: str
    group: str
    lane: LaneContext
    work: Path

    @functools.cached_property
    def stack_problem(self) -> str:
        return stack_problem(self.corpus, self.lane) if self.lane.runs(self.group) else ""

    @functools.cached_property
    def _result(self) -> Tuple[List[RealLaunch], str]:
        if not self.lane.runs(self.group) or self.stack_problem:
            return [], ""
        try:
            return capture(self.corpus, self.lane, self.work), ""
        except CaptureError as err:
            return [], str(err)

    @property
    def launches(self) -> List[RealLaunch]:
        return self._result[0]

    @property
    def error(self) -> str:
        """The capture's error ("" when it ran)."""
        return self._result[1]
