"""The node executor: lanes run in their images on inventory nodes, through Ansible.

``NodeExecutor.execute`` plans which lanes run on which node (a node takes the lanes of the
vendors it lists in ``flagci_vendors``), makes sure each lane's image exists on the
controller, then drives ``playbooks/run.yml`` through ansible-runner's Python API,
reporting per-host progress from its events. Each node brings home one
``<node>__<lane>.tgz`` per lane (the collect role), unpacked into the run's part
``results/<run-id>/lanes/<node>__<lane>/``: the layout of every executor.

A node that fails for infrastructure reasons (unreachable, unhealthy at preflight, a failed
deploy, lost mid-run) is tried once more with the lanes it did not finish; a lane that ran
and reported failed tests is never run again.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tarfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ansible_runner

from ci.build import engine, images
from ci.core import process, reporter
from ci.core.errors import ConfigError, EnvironmentSetupError, InfrastructureError
from ci.lanes.matrix import Lane, LaneMatrix
from ci.nodes import inventory
from ci.run import container, executors, record
from ci.smoke.contract import lane as lanefile
from ci.smoke.contract import records

# SSH: a node that stops answering is given up on within about 30 s; a host that does not
# accept a connection within 10 s is unreachable.
SSH_ARGS = (
    "-C -o ControlMaster=auto -o ControlPersist=60s"
    " -o ServerAliveInterval=10 -o ServerAliveCountMax=3"
)
CONNECT_TIMEOUT_S = 10
SSH_RETRIES = 3
# Roles whose failure says nothing about the lanes' tests.
SMOKE_ROLE = "smoke"


# The names the playbooks share with the controller (see playbooks/README.md).
LABELS = {
    "run": container.RUN_LABEL,
    "node": container.NODE_LABEL,
    "lane": images.LANE_LABEL,
    "content_hash": images.HASH_LABEL,
}


def lane_vars(
    lane: Lane,
    image: str,
    repo_digests: list[str],
    archive: Path,
    request: executors.SuiteRequest,
    *,
    as_caller: bool,
) -> dict[str, Any]:
    """One value of ``flagci_lanes``: all the roles need to know about a lane."""
    return {
        "name": lane.name,
        "vendor": lane.vendor,
        "image": image,
        "content_hash": image.rpartition(":")[2],
        "repo_digests": repo_digests,
        "archive": str(archive),
        "timeout_s": lane.timeout_s,
        "command": executors.smoke_command("python", container.RESULTS, lane, request),
        "as_caller": as_caller,
        # The node writes this text as it is (the node's name and model folder go into the
        # container's environment, never into the file).
        "lane_file": lane.lane_json(),
    }


def lane_folder(run_id: str, node: inventory.Node, lane: Lane) -> str:
    """The lane's results folder on the node (mounted as the container's /results)."""
    return f"{node.workdir}/{run_id}/{lane.name}"


def capture_cache(node: inventory.Node) -> str:
    """The node's capture cache folder, kept between runs (the smoke role creates it)."""
    return f"{node.workdir}/capture-cache"


def node_container(
    run_id: str, node: inventory.Node, lane: Lane, *, as_caller: bool
) -> container.ContainerSpec:
    """The lane's container on ``node``, with the inventory's ``smoke_devices``,
    ``smoke_env`` and ``smoke_docker_args`` of the node, the node's model folder and
    tensor-parallel size in the suite's environment (``smoke_model_path``,
    ``smoke_tensor_parallel_size``: the lane file stays as the controller wrote it), and the
    lane file the smoke role writes into the lane's folder."""
    folder = lane_folder(run_id, node, lane)
    devices, args = node.hostvars.get("smoke_devices"), node.hostvars.get("smoke_docker_args")
    env = {str(key): str(value) for key, value in (node.hostvars.get("smoke_env") or {}).items()}
    model = model_path(node, lane)
    if model is not None and node.hostvars.get("smoke_model_path") is not None:
        env[lanefile.MODEL_PATH_ENV] = model
    parallel = node.hostvars.get("smoke_tensor_parallel_size")
    if lane.model is not None and parallel is not None:
        env[lanefile.TENSOR_PARALLEL_SIZE_ENV] = str(parallel)
    return container.lane_container(
        lane,
        run_id=run_id,
        node=node.name,
        results=folder,
        as_caller=as_caller,
        lane_file=f"{folder}/lane.json",
        capture_cache=capture_cache(node),
        env=env,
        devices=None if devices is None else [str(d) for d in devices],
        docker_args=None if args is None else [str(a) for a in args],
    )


def model_path(node: inventory.Node, lane: Lane) -> str | None:
    """Where the lane's model is on ``node``: the inventory's ``smoke_model_path``, else the
    lane's own (None for a lane without a model)."""
    if lane.model is None:
        return None
    given = node.hostvars.get("smoke_model_path")
    return str(given) if given is not None else lane.model.path


def host_vars(
    run_id: str, node: inventory.Node, lanes: Sequence[Lane], as_caller: Mapping[str, bool]
) -> dict[str, Any]:
    """One value of ``flagci_hosts``: the node's work folder, what preflight expects of it
    for ``lanes``, and each lane's container name, folder, ``docker run`` options (whether
    its image runs as the caller: ``as_caller``) and collected archive name."""
    expectation = node.expectation(list(lanes))
    return {
        "workdir": node.workdir,
        "expectation": {
            "smi": expectation.smi,
            "device_count": expectation.device_count,
            "driver_version": expectation.driver_version,
        },
        "containers": {
            lane.name: executors.container_name(run_id, node.name, lane.name) for lane in lanes
        },
        "folders": {lane.name: lane_folder(run_id, node, lane) for lane in lanes},
        "docker_options": {
            lane.name: node_container(run_id, node, lane, as_caller=as_caller[lane.name]).options()
            for lane in lanes
        },
        "model_paths": {lane.name: model_path(node, lane) for lane in lanes},
        "capture_cache": capture_cache(node),
        "archives": {lane.name: archive_name(node.name, lane.name) for lane in lanes},
    }


def archive_name(node: str, lane: str) -> str:
    return f"{record.part_name(node, lane)}.tgz"


@dataclass
class HostState:
    """What the events of one attempt said about one host."""

    smoke_started: bool = False
    failure: str = ""

    def note_failure(self, message: str) -> None:
        if not self.failure:
            self.failure = message


@dataclass
class Progress:
    """ansible-runner event handler: per-host progress lines, and each host's failure."""

    hosts: dict[str, HostState] = field(default_factory=dict)

    def __call__(self, event: Mapping[str, Any]) -> bool:
        kind = str(event.get("event", ""))
        data = event.get("event_data") or {}
        host = data.get("host")
        if not host or not kind.startswith("runner_on_"):
            return True
        state = self.hosts.setdefault(host, HostState())
        role = data.get("role") or "play"
        task = str(data.get("task", "")).strip()
        where = f"{role}: {task}"
        result = data.get("res") or {}
        if kind == "runner_on_start" and role == SMOKE_ROLE:
            state.smoke_started = True
        elif kind == "runner_on_unreachable":
            message = _message(result) or "host unreachable"
            if state.smoke_started:
                state.note_failure(f"lost mid-run during '{where}': {message}")
            else:
                state.note_failure(f"unreachable at '{where}': {message}")
            self._say(host, f"UNREACHABLE  {where}: {message}")
        elif kind == "runner_on_failed" and not data.get("ignore_errors"):
            message = _message(result)
            # The preflight role's own message starts with "preflight:".
            prefix = "" if message.startswith(f"{role}:") else f"{role}: "
            state.note_failure(f"{prefix}{message} (task '{task}')")
            self._say(host, f"FAILED       {where}: {message}")
        elif kind == "runner_on_ok":
            self._say(host, f"{'changed' if result.get('changed') else 'ok':<12} {where}")
        return True

    def _say(self, host: str, line: str) -> None:
        reporter.current().line(f"[{host}] {line}")


def _message(result: Mapping[str, Any]) -> str:
    text = str(result.get("msg") or result.get("stderr") or "").strip()
    return " ".join(text.split())[:2000]


@dataclass(frozen=True)
class Attempt:
    number: int
    plan: Mapping[str, list[str]]
    failures: Mapping[str, str]  # host -> infrastructure failure
    stats: Mapping[str, Any]


def play(
    playbook: Path,
    inventory_file: Path,
    extravars: Mapping[str, Any],
    private_dir: Path,
    progress: Progress,
    search_path: str,
    *,
    tags: Sequence[str] = (),
    check: bool = False,
) -> ansible_runner.Runner:
    """Run ``playbook`` for the hosts of ``extravars['flagci_plan']``; return the runner.
    Commands are looked up in this controller's venv, then in ``search_path`` (a PATH)."""
    hosts = sorted(extravars["flagci_plan"])
    # ansible-playbook of this controller's venv, whose Python imports ``ci`` (the filters).
    path = os.pathsep.join([str(Path(sys.executable).parent), search_path])
    private_dir.mkdir(parents=True, exist_ok=True)
    # ansible-runner starts ansible-playbook itself (for its events): echoed like the rest.
    process.echo(["ansible-playbook", "-i", inventory_file, playbook, "--limit", ",".join(hosts),
                  *(["--tags", ",".join(tags)] if tags else []),
                  *(["--check"] if check else [])])  # fmt: skip
    return ansible_runner.run(
        private_data_dir=str(private_dir),
        playbook=str(playbook),
        inventory=str(inventory_file),
        extravars=dict(extravars),
        limit=",".join(hosts),
        forks=max(1, min(len(hosts), 50)),
        tags=",".join(tags) or None,
        cmdline="--check" if check else None,
        envvars={
            "PATH": path,
            "ANSIBLE_SSH_ARGS": SSH_ARGS,
            "ANSIBLE_TIMEOUT": str(CONNECT_TIMEOUT_S),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_RETRY_FILES_ENABLED": "0",
            # One SSH round trip per task instead of three (no sudo with requiretty is used).
            "ANSIBLE_PIPELINING": "1",
            # A dropped connection (a poll of a running lane, say) is tried again.
            "ANSIBLE_SSH_RETRIES": str(SSH_RETRIES),
        },
        event_handler=progress,
        quiet=True,
    )


def run_attempt(
    number: int,
    executor: NodeExecutor,
    extravars: Mapping[str, Any],
    run_dir: Path,
) -> Attempt:
    progress = Progress()
    private_dir = run_dir / "ansible" / f"attempt-{number}"
    runner = play(
        executor.playbook,
        executor.inventory,
        extravars,
        private_dir,
        progress,
        executor.search_path,
    )
    plan: Mapping[str, list[str]] = extravars["flagci_plan"]
    if runner.rc != 0 and not progress.hosts:
        tail = "\n".join(runner.stdout.read().splitlines()[-20:]) if runner.stdout else ""
        raise InfrastructureError(
            f"ansible-playbook {executor.playbook} failed (exit {runner.rc}) before reaching"
            f" any host; its output is in {private_dir}\n{tail}"
        )
    failures = {}
    for host in plan:
        state = progress.hosts.get(host)
        if state is None:
            failures[host] = "the play never reached the host"
        elif state.failure:
            failures[host] = state.failure
    return Attempt(number, plan, failures, runner.stats or {})


def unpack(archive: Path, folder: Path) -> None:
    """Unpack a collected lane folder; paths leaving ``folder`` and links are refused."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="data")
    archive.unlink()


def lane_problem(folder: Path) -> str:
    """ "" when the lane's suite ran to its end (tests passed or failed), else what broke."""
    status_file = folder / records.STATUS_NAME
    if not status_file.is_file():
        return f"the lane did not run (no {records.STATUS_NAME} came back)"
    try:
        status = json.loads(status_file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        return f"{records.STATUS_NAME} is unreadable: {err}"
    if status.get(records.STATUS_TIMED_OUT):
        limit = status.get(records.STATUS_TIMEOUT_S)
        return f"the smoke suite ran past the lane timeout ({limit} s)"
    code = status.get(records.STATUS_EXIT_CODE)
    if code is None:
        why = status.get(records.STATUS_WAIT_ERROR) or "unknown"
        return f"waiting for the lane container failed: {why}"
    problem = executors.suite_problem(int(code))
    return f"{problem} (see {records.CONTAINER_LOG_NAME})" if problem else ""


@dataclass(frozen=True)
class NodeExecutor:
    """Inventory nodes: each lane in its image, through ``playbooks/run.yml``.

    A node that fails for infrastructure reasons is tried ``retries`` more times with the
    lanes it did not finish. The images' wheels and archives are kept in the cache folder
    ``cache``; Ansible's commands are looked up in ``search_path`` (a PATH) after this
    controller's venv.
    """

    matrix: LaneMatrix
    inventory: Path
    cache: Path
    search_path: str
    limit: str | None = None
    retries: int = 1
    playbook: Path = field(default_factory=lambda: inventory.playbooks_root() / "run.yml")

    @property
    def kind(self) -> str:
        return "remote"

    def execute(
        self, run: record.Run, lanes: Sequence[Lane], request: executors.SuiteRequest
    ) -> list[executors.LaneOutcome]:
        with run.step("read the inventory, plan lanes on nodes"):
            nodes = {n.name: n for n in inventory.load(self.inventory, self.limit)}
            plan = inventory.plan(list(lanes), list(nodes.values()), self.inventory)
        for host, names in sorted(plan.items()):
            reporter.current().line(f"  {host}: {', '.join(names)}")
        parts = {
            (host, name): run.part(host, name) for host, names in plan.items() for name in names
        }
        lanes_vars: dict[str, Any] = {}
        with run.step("lane images on the controller"), engine.connect() as docker:
            for lane in lanes:
                try:
                    built = images.build(docker, self.matrix, lane, self.cache / "wheelhouse")
                except (EnvironmentSetupError, ConfigError) as err:  # this lane's alone
                    for (_, name), part in parts.items():
                        if name == lane.name:
                            part.infrastructure_error = f"image: {err}"
                    continue
                info = docker.image(built.ref)
                lanes_vars[lane.name] = lane_vars(
                    lane,
                    built.ref,
                    list(info.repo_digests) if info is not None else [],
                    self.cache / "images" / images.archive_name(built.ref),
                    request,
                    as_caller=executors.runs_as_caller(info.user if info is not None else ""),
                )
        by_name = {lane.name: lane for lane in lanes}
        hosts = {
            host: host_vars(
                run.run_id,
                nodes[host],
                [by_name[n] for n in names if n in lanes_vars],
                {name: vars_["as_caller"] for name, vars_ in lanes_vars.items()},
            )
            for host, names in plan.items()
        }
        pending = {h: [n for n in names if n in lanes_vars] for h, names in plan.items()}
        pending = {h: names for h, names in pending.items() if names}
        collect_dest = run.folder / "collected"
        for number in range(1, self.retries + 2):
            if not pending:
                break
            extravars = {
                "flagci_run_id": run.run_id,
                "flagci_lanes": lanes_vars,
                "flagci_plan": pending,
                "flagci_hosts": hosts,
                "flagci_labels": LABELS,
                "flagci_collect_dest": str(collect_dest),
            }
            with run.step(f"attempt {number}: {', '.join(sorted(pending))}"):
                attempt = run_attempt(number, self, extravars, run.folder)
            pending = _settle(attempt, parts, collect_dest, last=number == self.retries + 1)
        shutil.rmtree(collect_dest, ignore_errors=True)
        return [
            executors.LaneOutcome(p.node, p.lane, p.infrastructure_error) for p in parts.values()
        ]


def _settle(
    attempt: Attempt,
    parts: Mapping[tuple[str, str], record.Part],
    collect_dest: Path,
    *,
    last: bool,
) -> dict[str, list[str]]:
    """Unpack what came back, note each part's fate; return the hosts to try again."""
    retry: dict[str, list[str]] = {}
    for host, names in attempt.plan.items():
        failure = attempt.failures.get(host, "")
        for name in names:
            part = parts[(host, name)]
            archive = collect_dest / archive_name(host, name)
            if archive.is_file():
                unpack(archive, part.folder)
            problem = lane_problem(part.folder) if part.folder.is_dir() else ""
            if failure and (problem or not part.folder.is_dir()):
                history = f"{part.infrastructure_error}; " if part.infrastructure_error else ""
                part.infrastructure_error = f"{history}attempt {attempt.number}: {failure}"
                retry.setdefault(host, []).append(name)
            else:
                # Ran to its end (tests passed or failed), or broke on its own: never retried.
                part.infrastructure_error = problem
        if host in retry and not last:
            reporter.current().warn(f"{host}: {failure}; trying it once more")
        elif host in retry:
            reporter.current().warn(f"{host}: {failure}; giving up on it")
    return {} if last else retry
