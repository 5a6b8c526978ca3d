"""Where a lane's smoke suite runs: one ``LaneExecutor`` per kind of place, one ``Run``.

``run_lanes`` is the one skeleton of every run: start a ``Run``, let an executor run the
lanes into the run's parts (``results/<run-id>/lanes/<node>__<lane>/``), record each
``LaneOutcome``, finish the run. Executors:

- ``LocalVenvExecutor``: this machine, each lane in its hash-locked venv (the default);
- ``LocalImageExecutor``: this machine, each lane in its image on the local Docker engine;
- ``ci.run.remote.NodeExecutor``: inventory nodes, each lane in its image, through Ansible.

What they share is written here once: the smoke suite's command line (``smoke_command``),
what a suite's exit status means (``suite_problem``), and the worker count's spelling.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ci.build import engine, environment, images
from ci.core import process, reporter
from ci.core.errors import ConfigError, EnvironmentSetupError, InfrastructureError
from ci.lanes.matrix import Lane, LaneMatrix
from ci.results.reader import CIRunRecord, RunData
from ci.run import container, record

LOCAL_NODE = "localhost"
# pytest's exit statuses 0 (all passed) and 1 (some tests failed): the suite ran to its
# end. Anything else (interrupted, internal error, usage error, nothing collected) means
# the run itself broke.
SUITE_FINISHED = (0, 1)


@dataclass(frozen=True)
class SuiteRequest:
    """What to run of each lane's suite."""

    workers: int = 0  # pytest-xdist workers; 0: one per core of wherever the suite runs
    pytest_args: tuple[str, ...] = ()


@dataclass(frozen=True)
class LaneOutcome:
    """How one (node, lane) ended: ``problem`` is "" when its suite ran to its end (tests
    passed or failed), else what kept it from doing so (an infrastructure error)."""

    node: str
    lane: str
    problem: str = ""

    @property
    def finished(self) -> bool:
        return not self.problem


class LaneExecutor(Protocol):
    """Runs lanes' suites into the parts of ``run``; one outcome per (node, lane)."""

    @property
    def kind(self) -> str: ...

    def execute(
        self, run: record.Run, lanes: Sequence[Lane], request: SuiteRequest
    ) -> list[LaneOutcome]: ...


def workers_arg(workers: int) -> str:
    """pytest-xdist's ``-n`` value: ``auto`` counts the cores where the suite runs."""
    return str(workers) if workers > 0 else "auto"


def runs_as_caller(image_user: str) -> bool:
    """Whether a lane container runs as the user who starts it: yes for images made to run
    unprivileged (their results then belong to that user, in a folder of ordinary modes);
    no for images that run as root (the vendors' runtimes, for their device nodes)."""
    return image_user not in ("", "0", "root", "0:0", "root:root")


def smoke_command(python: str, results: str, lane: Lane, request: SuiteRequest) -> list[str]:
    """The smoke suite's command line, wherever it runs (the node name comes from
    ``FLAGCI_NODE`` or the lane file)."""
    return [
        python,
        *("-m", "ci.smoke", "--results", results, "--"),
        *("-q", "-n", workers_arg(request.workers), f"--timeout={lane.test_timeout_s}"),
        *request.pytest_args,
    ]


def suite_problem(exit_code: int) -> str:
    """ "" when a suite's exit status says it ran to its end, else the infrastructure error."""
    if exit_code in SUITE_FINISHED:
        return ""
    return f"the smoke suite exited with status {exit_code}"


def run_lanes(
    executor: LaneExecutor,
    matrix: LaneMatrix,
    lanes: list[Lane],
    request: SuiteRequest,
    results_root: Path,
    kind: str | None = None,
    made_in: CIRunRecord | None = None,
) -> RunData:
    """The skeleton of every run: start it, execute the lanes, record outcomes, finish."""
    run = record.Run.start(results_root, kind or executor.kind, made_in)
    for outcome in executor.execute(run, lanes, request):
        part = run.part(outcome.node, outcome.lane)
        part.infrastructure_error = outcome.problem
        if outcome.problem:
            reporter.current().warn(f"{outcome.node}: {outcome.problem}")
    return run.finish(matrix, lanes)


@dataclass(frozen=True)
class LocalVenvExecutor:
    """This machine, each lane in a venv holding exactly its pins (``ci.build.environment``)
    under the cache folder ``cache``."""

    matrix: LaneMatrix
    cache: Path

    @property
    def kind(self) -> str:
        return "local"

    def execute(
        self, run: record.Run, lanes: Sequence[Lane], request: SuiteRequest
    ) -> list[LaneOutcome]:
        outcomes = []
        for lane in lanes:
            part = run.part(LOCAL_NODE, lane.name)
            try:
                with run.step(f"{lane.name}: prepare environment"):
                    env = environment.prepare(self.matrix, lane, self.cache, node=LOCAL_NODE)
            except (EnvironmentSetupError, ConfigError) as err:  # this lane's, not the run's
                outcomes.append(LaneOutcome(LOCAL_NODE, lane.name, f"environment: {err}"))
                continue
            with run.step(f"{lane.name}: smoke suite"):
                problem = _run_suite(
                    smoke_command(str(env.python), str(part.folder), lane, request),
                    lane,
                    part.folder,
                    {"FLAGCI_LANE_FILE": str(env.lane_file), "FLAGCI_NODE": LOCAL_NODE},
                )
            outcomes.append(LaneOutcome(LOCAL_NODE, lane.name, problem))
        return outcomes


@dataclass(frozen=True)
class LocalImageExecutor:
    """This machine, each lane in its image (built if missing) on the local Docker engine.

    An unprivileged image runs as the calling user (``runs_as_caller``), so the results
    folder needs no wider modes; container names and labels are those of the node runs.
    The wheels of its images and the capture cache are kept in the cache folder ``cache``.
    """

    matrix: LaneMatrix
    cache: Path

    @property
    def kind(self) -> str:
        return "image"

    def execute(
        self, run: record.Run, lanes: Sequence[Lane], request: SuiteRequest
    ) -> list[LaneOutcome]:
        outcomes = []
        for lane in lanes:
            part = run.part(LOCAL_NODE, lane.name)
            try:
                with run.step(f"{lane.name}: image"), engine.connect() as docker:
                    ref = images.build(docker, self.matrix, lane, self.cache / "wheelhouse").ref
                    info = docker.image(ref)
                    user = info.user if info is not None else ""
            except (EnvironmentSetupError, ConfigError, InfrastructureError) as err:
                outcomes.append(LaneOutcome(LOCAL_NODE, lane.name, f"image: {err}"))
                continue
            with run.step(f"{lane.name}: smoke suite in {ref}"):
                problem = self._suite_in(ref, user, lane, part.folder, run.run_id, request)
            outcomes.append(LaneOutcome(LOCAL_NODE, lane.name, problem))
        return outcomes

    def _suite_in(
        self, ref: str, image_user: str, lane: Lane, folder: Path, run_id: str,
        request: SuiteRequest,
    ) -> str:  # fmt: skip
        name = container_name(run_id, LOCAL_NODE, lane.name)
        argv = image_argv(ref, image_user, lane, folder, run_id, request, self.cache)
        try:
            return _run_suite(argv, lane, folder, {})
        finally:
            # A timeout ends the docker client, not the container: remove it (it is gone
            # already when the suite ended on its own).
            process.run(
                ["docker", "rm", "--force", name],
                error=InfrastructureError,
                what=f"removing container {name}",
                capture=True,
                check=False,
                quiet=True,
            )


def local_capture_cache(cache: Path) -> Path:
    """This machine's capture cache folder for lane images, in the cache folder ``cache``
    (beside the lane venvs), made here: docker would make a missing one as root."""
    folder = cache / "capture"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def image_argv(
    ref: str,
    image_user: str,
    lane: Lane,
    folder: Path,
    run_id: str,
    request: SuiteRequest,
    cache: Path,
) -> list[str]:
    """The ``docker run`` command line of a lane's suite in its image on this machine
    (``cache``: the cache folder holding its capture cache)."""
    spec = container.lane_container(
        lane,
        run_id=run_id,
        node=LOCAL_NODE,
        results=str(folder),
        as_caller=runs_as_caller(image_user),
        capture_cache=str(local_capture_cache(cache)),
    )
    user = ["--user", f"{os.getuid()}:{os.getgid()}"] if spec.as_caller else []
    name = container_name(run_id, LOCAL_NODE, lane.name)
    return [
        *("docker", "run", "--rm", "--name", name, *user, *spec.options(), ref),
        *smoke_command("python", container.RESULTS, lane, request),
    ]


def container_name(run_id: str, node: str, lane: str) -> str:
    """The lane container's name (Docker allows [A-Za-z0-9_.-])."""
    raw = f"flagci-{run_id}-{node}-{lane}"
    return "".join(c if c.isalnum() or c in "_.-" else "-" for c in raw)


def _run_suite(argv: list[str], lane: Lane, folder: Path, env: dict[str, str]) -> str:
    """Run a suite command under the lane's timeout; "" or the infrastructure error."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        result = process.run(
            argv,
            cwd=folder,
            error=InfrastructureError,
            what=f"lane '{lane.name}': smoke suite",
            env={**lane.device.env, **env},
            timeout=lane.timeout_s,
            check=False,
        )
    except InfrastructureError as err:
        return str(err)
    return suite_problem(result.returncode)
