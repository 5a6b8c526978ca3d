"""The remote run: lanes run in their images on inventory nodes, through Ansible.

``run_lanes`` plans which lanes run on which node (a node takes the lanes of the vendors it
lists in ``flagci_vendors``), makes sure each lane's image exists on the controller, then
drives ``playbooks/run.yml`` through ansible-runner's Python API, printing per-host progress
from its events. Each node brings home one ``<node>__<lane>.tgz`` per lane (the collect
role), unpacked into ``results/<run-id>/lanes/<node>__<lane>/``: the same layout as the local
run, finished by ``ci.runrecord.finish``.

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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ansible_runner

from ci import engine, environment, images, inventory, runrecord
from ci.errors import EnvironmentSetupError, InfrastructureError
from ci.lanes import Lane, LaneMatrix

# SSH: a node that stops answering is given up on within about 30 s; a host that does not
# accept a connection within 10 s is unreachable.
SSH_ARGS = (
    "-C -o ControlMaster=auto -o ControlPersist=60s"
    " -o ServerAliveInterval=10 -o ServerAliveCountMax=3"
)
CONNECT_TIMEOUT_S = 10
# Roles whose failure says nothing about the lanes' tests.
SMOKE_ROLE = "smoke"


@dataclass(frozen=True)
class RemoteRunOptions:
    results_root: Path
    inventory: Path
    limit: str | None = None
    workers: str = "auto"
    pytest_args: tuple[str, ...] = ()
    retries: int = 1
    cache: Path | None = None
    playbook: Path = field(default_factory=lambda: inventory.playbooks_root() / "run.yml")


def lane_vars(lane: Lane, image: str, repo_digests: list[str], archive: Path) -> dict[str, Any]:
    """One value of ``flagci_lanes``: all the roles need to know about a lane."""
    return {
        "name": lane.name,
        "vendor": lane.vendor,
        "image": image,
        "content_hash": image.rpartition(":")[2],
        "repo_digests": repo_digests,
        "archive": str(archive),
        "smi": lane.device.smi,
        "device_count": lane.hardware.count if lane.hardware and lane.device.smi else 0,
        "driver_version": inventory.driver_version(lane) if lane.device.smi else "",
        "devices": list(lane.device.devices),
        "env": dict(lane.device.env),
        "docker_args": list(lane.device.docker_args),
        "timeout_s": lane.timeout_s,
        "test_timeout_s": lane.test_timeout_s,
        "context": lane.smoke_context(),
    }


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
    out: Any = sys.stdout

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
        print(f"[{host}] {line}", file=self.out, flush=True)


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
) -> ansible_runner.Runner:
    """Run ``playbook`` for the hosts of ``extravars['flagci_plan']``; return the runner."""
    hosts = sorted(extravars["flagci_plan"])
    # ansible-playbook of this controller's venv, whose Python imports ``ci`` (the filters).
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    private_dir.mkdir(parents=True, exist_ok=True)
    print(f"+ ansible-playbook -i {inventory_file} {playbook} --limit {','.join(hosts)}")
    return ansible_runner.run(
        private_data_dir=str(private_dir),
        playbook=str(playbook),
        inventory=str(inventory_file),
        extravars=dict(extravars),
        limit=",".join(hosts),
        forks=max(1, min(len(hosts), 50)),
        envvars={
            "PATH": path,
            "ANSIBLE_SSH_ARGS": SSH_ARGS,
            "ANSIBLE_TIMEOUT": str(CONNECT_TIMEOUT_S),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_RETRY_FILES_ENABLED": "0",
            # One SSH round trip per task instead of three (no sudo with requiretty is used).
            "ANSIBLE_PIPELINING": "1",
        },
        event_handler=progress,
        quiet=True,
    )


def run_attempt(
    number: int,
    options: RemoteRunOptions,
    extravars: Mapping[str, Any],
    run_dir: Path,
) -> Attempt:
    progress = Progress()
    private_dir = run_dir / "ansible" / f"attempt-{number}"
    runner = play(options.playbook, options.inventory, extravars, private_dir, progress)
    plan: Mapping[str, list[str]] = extravars["flagci_plan"]
    if runner.rc != 0 and not progress.hosts:
        tail = "\n".join(runner.stdout.read().splitlines()[-20:]) if runner.stdout else ""
        raise InfrastructureError(
            f"ansible-playbook {options.playbook} failed (exit {runner.rc}) before reaching"
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
    status_file = folder / "status.json"
    if not status_file.is_file():
        return "the lane did not run (no status.json came back)"
    try:
        status = json.loads(status_file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        return f"status.json is unreadable: {err}"
    if status.get("timed_out"):
        return f"the smoke suite ran past the lane timeout ({status.get('timeout_s')} s)"
    code = status.get("exit_code")
    if code in (0, 1):
        return ""
    if code is None:
        return f"waiting for the lane container failed: {status.get('wait_error') or 'unknown'}"
    return f"the smoke suite exited with status {code} (see container.log)"


def run_lanes(
    matrix: LaneMatrix, lanes: list[Lane], options: RemoteRunOptions
) -> runrecord.RunResult:
    run = runrecord.start(options.results_root, "remote")
    run_dir, run_id = run.run_dir, run.run_id
    steps = runrecord.Steps()
    with steps.step("read the inventory, plan lanes on nodes"):
        nodes = inventory.load(options.inventory, options.limit)
        plan = inventory.plan(lanes, nodes, options.inventory)
    for host, names in sorted(plan.items()):
        print(f"  {host}: {', '.join(names)}", flush=True)

    parts = {
        (host, name): runrecord.Part(
            node=host,
            lane=name,
            folder=run_dir / "lanes" / runrecord.part_name(host, name),
        )
        for host, names in plan.items()
        for name in names
    }
    cache = options.cache or environment.cache_root()
    lanes_vars: dict[str, Any] = {}
    with steps.step("lane images on the controller"), engine.connect() as docker:
        for lane in lanes:
            try:
                report = images.build(docker, matrix, lane, cache / "wheelhouse")
            except EnvironmentSetupError as err:
                for (_, name), part in parts.items():
                    if name == lane.name:
                        part.infrastructure_error = f"image: {err}"
                print(f"flagci: lane '{lane.name}': no image: {err}", file=sys.stderr)
                continue
            info = docker.image(report.ref)
            digests = list(info.repo_digests) if info is not None else []
            archive = cache / "images" / images.archive_name(report.ref)
            lanes_vars[lane.name] = lane_vars(lane, report.ref, digests, archive)

    pending = {host: [name for name in names if name in lanes_vars] for host, names in plan.items()}
    pending = {host: names for host, names in pending.items() if names}
    collect_dest = run_dir / "collected"
    for number in range(1, options.retries + 2):
        if not pending:
            break
        extravars = {
            "flagci_run_id": run_id,
            "flagci_lanes": lanes_vars,
            "flagci_plan": pending,
            "flagci_collect_dest": str(collect_dest),
            "flagci_pytest_args": list(options.pytest_args),
            "flagci_workers": options.workers,
        }
        with steps.step(f"attempt {number}: {', '.join(sorted(pending))}"):
            attempt = run_attempt(number, options, extravars, run_dir)
        pending = _settle(attempt, parts, collect_dest, last=number == options.retries + 1)

    with steps.step("merge JUnit, write report"):
        result = runrecord.finish(
            run_dir, run_id, "remote", run.started, matrix, lanes, list(parts.values())
        )
    shutil.rmtree(collect_dest, ignore_errors=True)
    print("\nsteps:\n" + steps.table(), flush=True)
    return result


def _settle(
    attempt: Attempt,
    parts: Mapping[tuple[str, str], runrecord.Part],
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
            archive = collect_dest / f"{runrecord.part_name(host, name)}.tgz"
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
            print(f"flagci: {host}: {failure}; trying it once more", file=sys.stderr)
        elif host in retry:
            print(f"flagci: {host}: {failure}; giving up on it", file=sys.stderr)
    return {} if last else retry
