"""Remote runs for real: SSH nodes (containers of the local Debian base running sshd), the
playbooks through ansible-runner, the CPU lane's image on the host's Docker engine.

A small subset of the smoke suite (``-k test_backends``) is enough here: the suite itself is
covered by tests/integration/test_smoke_suite.py; what is tested is that results cross SSH.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci import cli
from ci.build import baseimage, images
from ci.build.engine import Engine, connect
from ci.core import tables
from ci.lanes.matrix import Lane, LaneMatrix
from ci.nodes import check, health, inventory
from ci.run import executors, remote
from tests.fixtures import sshnodes

pytestmark = [pytest.mark.integration, pytest.mark.docker]

CPU_LANE = "cpu-triton-3.6.0"
SUBSET = ("-k", "test_backends")
REPO = Path(__file__).resolve().parents[2]
XPU_OVERRIDES = {
    "preflight_smi": "xpu-smi",
    "preflight_device_count": 8,
    "preflight_driver_version": "5.37.1",
}


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    with connect() as engine:
        yield engine


@pytest.fixture(scope="module")
def node_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("nodes")


@pytest.fixture(scope="module")
def key(node_root: Path) -> Path:
    return sshnodes.ssh_key(node_root)


@pytest.fixture(scope="module")
def node_image(engine: Engine) -> str:
    return sshnodes.node_image(engine)


@pytest.fixture(scope="module")
def two_nodes(
    engine: Engine, node_image: str, key: Path, node_root: Path
) -> Iterator[list[sshnodes.SshNode]]:
    started = [sshnodes.start_node(engine, node_image, n, key, node_root) for n in ("n1", "n2")]
    yield started
    sshnodes.remove(engine, started)


@pytest.fixture(scope="module")
def cpu_image(engine: Engine, matrix: LaneMatrix) -> str:
    assert cli.main(["images", "build", CPU_LANE]) == 0
    return images.recipe_for(matrix.lane(CPU_LANE)).ref


def junit_cases(path: Path) -> dict[str, ET.Element]:
    root = ET.parse(path).getroot()
    return {case.get("name", ""): case for case in root.iter("testcase")}


def test_a_cpu_lane_run_on_two_nodes_brings_home_complete_junit_from_each(
    two_nodes: list[sshnodes.SshNode], key: Path, cpu_image: str, tmp_path: Path
) -> None:
    inv = sshnodes.write_inventory(tmp_path / "inventory.yml", two_nodes, key)
    results = tmp_path / "results"

    code = cli.main(
        ["run", "--lanes", CPU_LANE, "--inventory", str(inv), "--results", str(results),
         "--no-history", "--workers", "1", "--", *SUBSET]
    )  # fmt: skip

    assert code == 0
    (run_dir,) = results.iterdir()
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "passed"
    assert record["nodes"] == ["n1", "n2"]
    per_node = {}
    for node in ("n1", "n2"):
        part = run_dir / "lanes" / f"{node}__{CPU_LANE}"
        cases = junit_cases(part / "junit.xml")
        per_node[node] = set(cases)
        for case in cases.values():
            assert case.find("failure") is None and case.find("error") is None
            props = {p.get("name"): p.get("value") for p in case.iter("property")}
            assert (props["node"], props["lane"]) == (node, CPU_LANE)
        status = json.loads((part / "status.json").read_text())
        assert (status["exit_code"], status["timed_out"]) == (0, False)
        inspect = json.loads((part / "image-inspect.json").read_text())
        assert inspect[0]["RepoTags"] and cpu_image in inspect[0]["RepoTags"]
        assert (part / "container.log").stat().st_size > 0
    assert per_node["n1"] == per_node["n2"]
    assert "test_installed_backends" in per_node["n1"]
    merged = junit_cases(run_dir / "merged.xml")
    assert len(list(ET.parse(run_dir / "merged.xml").getroot().iter("testcase"))) == 2 * len(
        per_node["n1"]
    )
    assert merged
    # cleanup ran: no container of this run is left, and no run folder on the nodes; the
    # node's capture cache stays for the next run
    for node in two_nodes:
        kept = [p.name for p in node.workdir.iterdir()]
        where = inventory.Node(node.name, {"flagci_node_workdir": str(node.workdir)})
        assert kept in ([], [Path(remote.capture_cache(where)).name]), kept


def _stage(
    inv: Path,
    lanes: dict[str, tuple[Lane, dict[str, object]]],
    plan: dict[str, list[str]],
    where: Path,
    *,
    check: bool = False,
    tags: tuple[str, ...] = ("stage",),
) -> tuple[remote.Attempt, list[dict[str, object]]]:
    """run.yml with the extra variables flagci would pass (``--tags stage``: preflight and
    deploy only)."""
    events: list[dict[str, object]] = []
    progress = remote.Progress()

    def keep(event: dict[str, object]) -> bool:
        events.append(event)
        return progress(event)

    nodes = {n.name: n for n in inventory.load(inv)}
    extravars = {
        "flagci_run_id": "stage-test",
        "flagci_lanes": {name: lane_vars for name, (_, lane_vars) in lanes.items()},
        "flagci_plan": plan,
        "flagci_hosts": {
            host: remote.host_vars(
                "stage-test",
                nodes[host],
                [lanes[n][0] for n in names],
                {lanes[n][0].name: bool(lanes[n][1]["as_caller"]) for n in names},
            )
            for host, names in plan.items()
        },
        "flagci_labels": remote.LABELS,
        "flagci_collect_dest": str(where / "collected"),
    }
    runner = remote.play(
        inventory.playbooks_root() / "run.yml",
        inv,
        extravars,
        where,
        keep,  # type: ignore[arg-type]
        os.environ.get("PATH", ""),
        tags=tags,
        check=check,
    )
    failures = {h: s.failure for h, s in progress.hosts.items() if s.failure}
    return remote.Attempt(1, plan, failures, runner.stats or {}), events


def _lane_vars(lane: Lane, image: str, archive: Path, name: str = "") -> dict[str, object]:
    request = executors.SuiteRequest(workers=1, pytest_args=SUBSET)
    lane_vars = remote.lane_vars(lane, image, [], archive, request, as_caller=True)
    return {**lane_vars, "name": name or lane.name}


def _changed_tasks(events: list[dict[str, object]]) -> list[str]:
    found = []
    for event in events:
        data = event.get("event_data") or {}
        assert isinstance(data, dict)
        if event.get("event") == "runner_on_ok" and (data.get("res") or {}).get("changed"):
            found.append(str(data.get("task")))
    return found


def test_deploy_ships_a_missing_image_over_ssh_once_and_its_second_run_changes_nothing(
    engine: Engine,
    two_nodes: list[sshnodes.SshNode],
    key: Path,
    matrix: LaneMatrix,
    cpu_image: str,
    tmp_path: Path,
) -> None:
    # A small lane image the engine does not have: only its `docker save` archive exists.
    content_hash = os.urandom(8).hex()
    lane_name = "ship-test"
    ref = f"flagci/{lane_name}:{content_hash}"
    engine.client.images.build(
        fileobj=io.BytesIO(
            f"FROM {baseimage.DEBIAN_BASE.ref}\n"
            f"LABEL org.flagci.lane={lane_name} org.flagci.content-hash={content_hash}\n".encode()
        ),
        tag=ref,
        rm=True,
    )
    archive = tmp_path / "archives" / images.archive_name(ref)
    images.save(engine, ref, archive.parent)
    engine.remove_image(ref)
    assert engine.image(ref) is None

    lane = matrix.lane(CPU_LANE)
    ship_lane = lane.model_copy(update={"name": lane_name})
    lanes_vars = {
        lane_name: (ship_lane, _lane_vars(lane, ref, archive, lane_name)),
        CPU_LANE: (lane, _lane_vars(lane, cpu_image, tmp_path / "never-written.tar")),
    }
    plan = {"n1": [lane_name, CPU_LANE], "n2": [CPU_LANE]}
    inv = sshnodes.write_inventory(tmp_path / "inventory.yml", two_nodes, key)
    try:
        first, events = _stage(inv, lanes_vars, plan, tmp_path / "first")
        assert first.failures == {}
        assert first.stats["changed"].get("n1", 0) > 0
        changed = _changed_tasks(events)
        assert (
            "Copy the archive to the node" in changed
            and "Load the archive and remove it" in changed
        )
        info = engine.image(ref)
        assert info is not None and info.labels["org.flagci.content-hash"] == content_hash
        # The CPU lane's image was already there: its archive was never written.
        assert not (tmp_path / "never-written.tar").exists()

        second, events = _stage(inv, lanes_vars, plan, tmp_path / "second")
        assert second.failures == {}
        assert second.stats["changed"] == {}, _changed_tasks(events)
        assert second.stats["ok"]["n1"] > 0 and second.stats["ok"]["n2"] > 0
    finally:
        engine.remove_image(ref)


def test_nodes_check_and_preflight_judge_a_node_alike(
    two_nodes: list[sshnodes.SshNode], key: Path, matrix: LaneMatrix, cpu_image: str, tmp_path: Path
) -> None:
    sick = two_nodes[1]
    overrides = {"n1": {**XPU_OVERRIDES, "preflight_smi": "ixsmi", "preflight_driver_version": "4.5.0"},
                 "n2": XPU_OVERRIDES}  # fmt: skip
    inv = sshnodes.write_inventory(tmp_path / "inventory.yml", two_nodes, key, host_vars=overrides)
    sick.set_smi_mode("wrong-driver")
    try:
        checks = check.check(matrix, inventory.load(inv), health.load_rules())
        by_name = {c.node.name: c for c in checks}
        assert by_name["n1"].healthy
        assert by_name["n1"].verdict is not None
        assert by_name["n1"].verdict.facts["devices"] == 8
        assert by_name["n2"].verdict is not None and not by_name["n2"].healthy
        problem = "smi: driver version 5.0.21, 5.37.1 expected"
        assert by_name["n2"].verdict.problems == (problem,)
        rows = {line.split()[0]: line for line in tables.text(check.table(checks)).splitlines()}
        assert rows["node"].split()[-1] == "verdict"
        assert rows["n1"].endswith("  healthy") and rows["n2"].endswith("unhealthy: " + problem)

        lane = matrix.lane(CPU_LANE)
        lanes_vars = {CPU_LANE: (lane, _lane_vars(lane, cpu_image, tmp_path / "x.tar"))}
        attempt, _ = _stage(inv, lanes_vars, {"n1": [CPU_LANE], "n2": [CPU_LANE]}, tmp_path / "a")
        assert "n1" not in attempt.failures
        assert attempt.failures["n2"].startswith("preflight: n2 is unhealthy: " + problem)

        sick.set_smi_mode("broken")
        (n2,) = check.check(matrix, inventory.load(inv, "n2"), health.load_rules())
        assert n2.verdict is not None
        assert n2.verdict.problems == (
            "smi: xpu-smi does not answer (exit 1: xpu-smi: xpu_device_count failed:"
            " XPU driver is not loaded)",
        )
    finally:
        sick.set_smi_mode("healthy")


def test_a_node_killed_mid_run_and_an_unreachable_host_end_as_infrastructure_errors(
    engine: Engine,
    node_image: str,
    key: Path,
    node_root: Path,
    cpu_image: str,
    tmp_path: Path,
) -> None:
    started = [
        sshnodes.start_node(engine, node_image, name, key, node_root)
        for name in ("steady", "victim")
    ]
    try:
        victim = started[1]
        inv = sshnodes.write_inventory(
            tmp_path / "inventory.yml", started, key, unreachable=("ghost",)
        )
        results = tmp_path / "results"
        command = [sys.executable, "-m", "ci.cli", "run", "--lanes", CPU_LANE,
                   "--inventory", str(inv), "--results", str(results), "--no-history",
                   "--workers", "1", "--", *SUBSET]  # fmt: skip
        with (tmp_path / "flagci.log").open("w") as log:
            process = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
            # Kill the victim as soon as its lane container exists.
            while process.poll() is None:
                if sshnodes.lane_containers(engine, victim, all=False):
                    victim.kill()
                    break
                time.sleep(0.2)
            code = process.wait(timeout=1200)
        assert code == 5, (tmp_path / "flagci.log").read_text()[-5000:]

        (run_dir,) = results.iterdir()
        record = json.loads((run_dir / "run.json").read_text())
        errors = {p["node"]: p["infrastructure_error"] for p in record["parts"]}
        assert record["status"] == "error"
        assert errors["steady"] == ""
        # Killed once its lane container exists: while starting it or waiting for it.
        assert "attempt 1: lost mid-run during 'smoke: " in errors["victim"]
        assert "attempt 2: unreachable" in errors["victim"]
        assert (
            "attempt 1: unreachable" in errors["ghost"]
            and "attempt 2: unreachable" in errors["ghost"]
        )
        steady_cases = junit_cases(run_dir / "lanes" / f"steady__{CPU_LANE}" / "junit.xml")
        assert "test_installed_backends" in steady_cases
        assert all(c.find("failure") is None for c in steady_cases.values())
        merged = ET.parse(run_dir / "merged.xml").getroot()
        infra = [c for c in merged.iter("testcase") if c.find("error") is not None]
        assert sorted(
            {p.get("value") for c in infra for p in c.iter("property") if p.get("name") == "node"}
        ) == ["ghost", "victim"]
        log_text = (tmp_path / "flagci.log").read_text()
        assert "victim: " in log_text and "trying it once more" in log_text
    finally:
        sshnodes.remove(engine, started)


def test_check_mode_across_run_yml_changes_nothing_and_says_what_would_run(
    engine: Engine,
    two_nodes: list[sshnodes.SshNode],
    key: Path,
    matrix: LaneMatrix,
    cpu_image: str,
    tmp_path: Path,
) -> None:
    lane = matrix.lane(CPU_LANE)
    node = two_nodes[0]
    inv = sshnodes.write_inventory(tmp_path / "inventory.yml", [node], key)
    before = sorted(p.name for p in node.workdir.iterdir())
    lanes_vars = {CPU_LANE: (lane, _lane_vars(lane, cpu_image, tmp_path / "x.tar"))}

    attempt, events = _stage(
        inv, lanes_vars, {node.name: [CPU_LANE]}, tmp_path / "check", check=True, tags=()
    )

    assert attempt.failures == {}
    assert attempt.stats["failures"] == {} and attempt.stats["dark"] == {}
    # The lane would run; nothing did: no folder, no container, nothing fetched.
    assert "Start the lane's smoke suite in its container" in _changed_tasks(events)
    assert sorted(p.name for p in node.workdir.iterdir()) == before
    assert not sshnodes.lane_containers(engine, node)
    assert not (tmp_path / "check" / "collected").exists()


def test_a_lane_past_its_timeout_is_ended_on_the_node_and_reported_not_retried(
    engine: Engine, two_nodes: list[sshnodes.SshNode], key: Path, cpu_image: str, tmp_path: Path
) -> None:
    node = two_nodes[0]
    # The suite needs more than a second to start: the container's own `timeout` ends it.
    inv = sshnodes.write_inventory(
        tmp_path / "inventory.yml", [node], key, host_vars={node.name: {"smoke_timeout_s": 1}}
    )
    results = tmp_path / "results"

    code = cli.main(
        ["run", "--lanes", CPU_LANE, "--inventory", str(inv), "--results", str(results),
         "--no-history", "--workers", "1", "--", *SUBSET]
    )  # fmt: skip

    assert code == 5
    (run_dir,) = results.iterdir()
    record = json.loads((run_dir / "run.json").read_text())
    assert [p["infrastructure_error"] for p in record["parts"]] == [
        "the smoke suite ran past the lane timeout (1 s)"
    ]
    assert [p.name for p in (run_dir / "ansible").iterdir()] == ["attempt-1"]
    status = json.loads(
        (run_dir / "lanes" / f"{node.name}__{CPU_LANE}" / "status.json").read_text()
    )
    assert (status["exit_code"], status["timed_out"]) == (124, True)
    assert not sshnodes.lane_containers(engine, node)


def _cut_ssh_sessions(node: sshnodes.SshNode) -> int:
    """Kill every SSH session process on the node (sshd itself keeps listening); return
    how many there were."""
    script = (
        "import os, signal\n"
        "n = 0\n"
        "for pid in filter(str.isdigit, os.listdir('/proc')):\n"
        "    try:\n"
        "        cmd = open(f'/proc/{pid}/cmdline', 'rb').read().decode(errors='replace')\n"
        "    except OSError:\n"
        "        continue\n"
        "    if cmd.startswith('sshd: root'):\n"
        "        os.kill(int(pid), signal.SIGKILL)\n"
        "        n += 1\n"
        "print(n)\n"
    )
    result = node.container.exec_run(["python3", "-c", script])
    assert result.exit_code == 0, result.output
    return int(result.output.decode().strip() or 0)


def test_a_lane_survives_its_ssh_connection_being_cut_and_is_collected(
    engine: Engine, node_image: str, key: Path, node_root: Path, cpu_image: str, tmp_path: Path
) -> None:
    node = sshnodes.start_node(engine, node_image, "cut", key, node_root)
    try:
        inv = sshnodes.write_inventory(tmp_path / "inventory.yml", [node], key)
        results = tmp_path / "results"
        command = [sys.executable, "-m", "ci.cli", "run", "--lanes", CPU_LANE,
                   "--inventory", str(inv), "--results", str(results), "--no-history",
                   "--workers", "1", "--", *SUBSET]  # fmt: skip
        cuts = 0
        with (tmp_path / "flagci.log").open("w") as log:
            process = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
            # While the lane container runs, cut every SSH connection to the node, again
            # and again: each poll of the lane may find its connection gone.
            while process.poll() is None and not sshnodes.lane_containers(engine, node, all=False):
                time.sleep(0.2)
            while process.poll() is None and sshnodes.lane_containers(engine, node, all=False):
                cuts += _cut_ssh_sessions(node)
                time.sleep(1.0)
            code = process.wait(timeout=600)
        log_text = (tmp_path / "flagci.log").read_text()
        assert code == 0, log_text[-5000:]
        assert cuts > 0, "no SSH session was cut while the lane ran"
        (run_dir,) = results.iterdir()
        record = json.loads((run_dir / "run.json").read_text())
        assert record["status"] == "passed"
        assert [p["infrastructure_error"] for p in record["parts"]] == [""]
        # Completed and collected in the first attempt: the lane was never run again.
        assert [p.name for p in (run_dir / "ansible").iterdir()] == ["attempt-1"]
        assert "trying it once more" not in log_text
        part = run_dir / "lanes" / f"cut__{CPU_LANE}"
        assert "test_installed_backends" in junit_cases(part / "junit.xml")
        status = json.loads((part / "status.json").read_text())
        assert (status["exit_code"], status["timed_out"]) == (0, False)
    finally:
        sshnodes.remove(engine, [node])


BISECT_LANES = REPO / "tests" / "fixtures" / "lanes-bisect.toml"


def test_bisect_over_ssh_nodes_walks_the_family_in_order_as_an_ordinary_run(
    engine: Engine, node_image: str, key: Path, node_root: Path, tmp_path: Path
) -> None:
    node = sshnodes.start_node(engine, node_image, "bisect", key, node_root)
    try:
        inv = sshnodes.write_inventory(tmp_path / "inventory.yml", [node], key)
        results, report = tmp_path / "results", tmp_path / "bisect.json"
        code = cli.main(
            ["--lanes-file", str(BISECT_LANES), "bisect", "--family", "cpu",
             "--test", "test_backends.py::test_inductor_target", "--inventory", str(inv),
             "--results", str(results), "--json", str(report)]
        )  # fmt: skip
        assert code == 0
        data = json.loads(report.read_text())
        lanes = ["cpu-triton-3.2.0", "cpu-triton-3.4.0", "cpu-triton-3.5.1"]
        assert [lane["lane"] for lane in data["lanes"]] == lanes  # the family's order
        outcomes = [lane["outcome"] for lane in data["lanes"]]
        assert outcomes == ["passed", "failed", "passed"], data["lanes"]
        assert "0 compatible backends for target (corex)" in data["lanes"][1]["detail"]
        assert (data["first_bad"], data["last_good"], data["first_good"]) == (
            "cpu-triton-3.4.0",
            "cpu-triton-3.2.0",
            "cpu-triton-3.5.1",
        )
        run_dir = results / data["run"]
        record = json.loads((run_dir / "run.json").read_text())
        assert record["kind"] == "bisect" and record["nodes"] == ["bisect"]
        assert [p["lane"] for p in record["parts"]] == lanes
        for lane in lanes:
            part = run_dir / "lanes" / f"bisect__{lane}"
            cases = junit_cases(part / "junit.xml")
            assert set(cases) == {"test_inductor_target"}  # only the test, on each lane
            props = {
                p.get("name"): p.get("value")
                for p in cases["test_inductor_target"].iter("property")
            }
            assert props["triton_version"] == lane.rpartition("-")[2]
        assert (results / "history.sqlite").is_file()
    finally:
        sshnodes.remove(engine, [node])
