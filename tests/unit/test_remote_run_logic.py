"""The remote run's bookkeeping: events to host failures, retries, what came back."""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from ci.core import reporter
from ci.core.errors import ConfigError, UsageError
from ci.lanes.matrix import LaneMatrix
from ci.nodes import inventory
from ci.run import executors, record, remote


def event(kind: str, host: str, role: str, task: str, **res: object) -> dict[str, object]:
    return {"event": kind, "event_data": {"host": host, "role": role, "task": task, "res": res}}


def test_events_tell_unreachable_preflight_and_lost_mid_run_apart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = io.StringIO()
    monkeypatch.setattr(reporter, "_installed", reporter.Reporter(out=out))
    progress = remote.Progress()
    for item in [
        event(
            "runner_on_unreachable",
            "a",
            "preflight",
            "Create the work folder",
            msg="ssh: connect to host 10.0.0.1 port 22: Connection refused",
        ),
        event(
            "runner_on_failed",
            "b",
            "preflight",
            "Stop here on an unhealthy node",
            msg="preflight: b is unhealthy: smi: driver version 4.3.0, 4.5.0 expected",
        ),
        event("runner_on_start", "c", "smoke", "Wait for the smoke suite (lane timeout)"),
        event(
            "runner_on_unreachable",
            "c",
            "smoke",
            "Wait for the smoke suite (lane timeout)",
            msg="Connection closed",
        ),
        event("runner_on_failed", "d", "deploy", "Load the archive", msg="no space left on device"),
        {
            "event": "runner_on_failed",
            "event_data": {
                "host": "e",
                "role": "smoke",
                "task": "x",
                "ignore_errors": True,
                "res": {"msg": "ignored"},
            },
        },
        event("runner_on_ok", "e", "smoke", "Start the lane container", changed=True),
    ]:
        assert progress(item) is True
    failures = {host: state.failure for host, state in progress.hosts.items()}
    assert failures == {
        "a": "unreachable at 'preflight: Create the work folder': ssh: connect to host 10.0.0.1 port 22: Connection refused",
        "b": "preflight: b is unhealthy: smi: driver version 4.3.0, 4.5.0 expected (task 'Stop here on an unhealthy node')",
        "c": "lost mid-run during 'smoke: Wait for the smoke suite (lane timeout)': Connection closed",
        "d": "deploy: no space left on device (task 'Load the archive')",
        "e": "",
    }
    assert "[e] changed      smoke: Start the lane container" in out.getvalue()
    assert "[c] UNREACHABLE" in out.getvalue()


def pack(dest: Path, files: dict[str, str]) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(dest, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def status(code: int | None, timed_out: bool = False) -> str:
    return json.dumps(
        {"exit_code": code, "timed_out": timed_out, "timeout_s": 60, "wait_error": ""}
    )


def test_a_test_failure_is_never_retried_and_a_lost_host_is_retried_once(tmp_path: Path) -> None:
    collected = tmp_path / "collected"
    parts = {
        (h, "lane"): record.Part(h, "lane", tmp_path / "lanes" / f"{h}__lane")
        for h in ("red", "lost", "hung")
    }
    pack(collected / "red__lane.tgz", {"status.json": status(1), "junit.xml": "<testsuite/>"})
    pack(collected / "lost__lane.tgz", {"smi.txt": "..."})  # collect ran, the suite did not
    pack(collected / "hung__lane.tgz", {"status.json": status(None, timed_out=True)})
    plan = {"red": ["lane"], "lost": ["lane"], "hung": ["lane"]}
    first = remote.Attempt(1, plan, {"lost": "lost mid-run during 'smoke: Wait'"}, {})

    retry = remote._settle(first, parts, collected, last=False)

    assert retry == {"lost": ["lane"]}
    assert parts[("red", "lane")].infrastructure_error == ""
    assert (
        parts[("hung", "lane")].infrastructure_error
        == "the smoke suite ran past the lane timeout (60 s)"
    )
    assert (
        parts[("lost", "lane")].infrastructure_error
        == "attempt 1: lost mid-run during 'smoke: Wait'"
    )
    assert (parts[("red", "lane")].folder / "junit.xml").is_file()
    assert not list(collected.iterdir())

    second = remote.Attempt(2, retry, {"lost": "unreachable at 'preflight: x': refused"}, {})
    assert remote._settle(second, parts, collected, last=True) == {}
    assert parts[("lost", "lane")].infrastructure_error == (
        "attempt 1: lost mid-run during 'smoke: Wait'; attempt 2: unreachable at 'preflight: x': refused"
    )


def test_a_retry_that_succeeds_clears_the_error(tmp_path: Path) -> None:
    collected = tmp_path / "collected"
    part = record.Part("n", "lane", tmp_path / "lanes" / "n__lane")
    first = remote.Attempt(1, {"n": ["lane"]}, {"n": "unreachable at 'x': y"}, {})
    assert remote._settle(first, {("n", "lane"): part}, collected, last=False) == {"n": ["lane"]}
    pack(collected / "n__lane.tgz", {"status.json": status(0), "junit.xml": "<testsuite/>"})
    second = remote.Attempt(2, {"n": ["lane"]}, {}, {})
    assert remote._settle(second, {("n", "lane"): part}, collected, last=True) == {}
    assert part.infrastructure_error == ""


def test_unpacking_refuses_paths_that_leave_the_lane_folder(tmp_path: Path) -> None:
    archive = tmp_path / "evil.tgz"
    pack(archive, {"../escaped.txt": "x"})
    with pytest.raises(tarfile.OutsideDestinationError):
        remote.unpack(archive, tmp_path / "lane")
    assert not (tmp_path / "escaped.txt").exists()


@pytest.mark.parametrize(
    ("files", "problem"),
    [
        ({}, "the lane did not run (no status.json came back)"),
        ({"status.json": "{"}, "status.json is unreadable"),
        ({"status.json": status(0)}, ""),
        ({"status.json": status(4)}, "the smoke suite exited with status 4 (see container.log)"),
    ],
)
def test_lane_problem(files: dict[str, str], problem: str, tmp_path: Path) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert remote.lane_problem(tmp_path).startswith(problem)
    assert (remote.lane_problem(tmp_path) == "") == (problem == "")


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_the_lab_inventory_plans_each_family_on_its_group(matrix: LaneMatrix) -> None:
    lab = inventory.inventory_path("lab")
    iluvatar = inventory.load(lab, "iluvatar_bi_v150")
    assert [n.name for n in iluvatar] == ["bi-v150-01", "bi-v150-02"]
    lanes = matrix.family("iluvatar")
    assert inventory.plan(lanes, iluvatar, lab) == {
        "bi-v150-01": ["iluvatar-triton-3.2.0", "iluvatar-flagtree-0.6.0"],
        "bi-v150-02": ["iluvatar-triton-3.2.0", "iluvatar-flagtree-0.6.0"],
    }
    expectation = iluvatar[0].expectation(lanes)
    assert (expectation.smi, expectation.device_count, expectation.driver_version) == (
        "ixsmi",
        8,
        "4.5.0",
    )
    assert iluvatar[0].key_file is not None and not iluvatar[0].key_file.startswith("~")
    kunlun = inventory.load(lab, "kunlun_p800")
    with pytest.raises(UsageError, match="no host runs iluvatar lanes"):
        inventory.plan(lanes, kunlun, lab)


def test_the_cpu_lane_expects_no_smi_and_the_playbooks_get_facts_and_names_from_python(
    matrix: LaneMatrix,
) -> None:
    node = inventory.Node("n", {"flagci_vendors": ["cpu"]})
    assert node.expectation([matrix.default]) == inventory.health.Expectation()
    kunlun = matrix.lane("kunlun-flagtree-0.6.1")
    request = executors.SuiteRequest(workers=3, pytest_args=("-k", "gdn"))
    lane = remote.lane_vars(
        kunlun, "flagci/kunlun:0123456789abcdef", [], Path("/a.tar"), request, as_caller=False
    )
    assert lane["content_hash"] == "0123456789abcdef"
    assert json.loads(lane["lane_file"])["lane"] == "kunlun-flagtree-0.6.1"
    # The one smoke command line, as the local executors write it.
    assert lane["command"] == executors.smoke_command("python", "/results", kunlun, request)
    assert lane["command"][-5:] == ["-n", "3", f"--timeout={kunlun.test_timeout_s}", "-k", "gdn"]
    p800 = inventory.Node("p800-01", {"flagci_vendors": ["kunlun"]})
    host = remote.host_vars("RUN", p800, [kunlun], {kunlun.name: False})
    assert host["workdir"] == inventory.DEFAULT_WORKDIR
    assert host["expectation"] == {"smi": "xpu-smi", "device_count": 8, "driver_version": "5.37.1"}
    assert host["containers"] == {kunlun.name: f"flagci-RUN-p800-01-{kunlun.name}"}
    assert host["archives"] == {kunlun.name: f"p800-01__{kunlun.name}.tgz"}
    folder = f"{inventory.DEFAULT_WORKDIR}/RUN/{kunlun.name}"
    assert host["folders"] == {kunlun.name: folder}
    options = host["docker_options"][kunlun.name]
    assert "--device=/dev/xpuctrl" in options and f"--volume={folder}:/results" in options
    # An inventory's preflight_* override what the lanes imply, for flagci and Ansible alike.
    tuned = inventory.Node("p", {"flagci_vendors": ["kunlun"], "preflight_device_count": 4})
    tuned_host = remote.host_vars("RUN", tuned, [kunlun], {kunlun.name: False})
    assert tuned_host["expectation"]["device_count"] == 4


def test_local_and_node_lane_containers_get_the_same_docker_run_options(
    matrix: LaneMatrix, tmp_path: Path
) -> None:
    """One ContainerSpec for both: a lane run with `flagci run --image` and on a node gets
    the same flags (labels, user home and /tmp, environment, devices, mounts), the node's
    only addition being its lane file; the capture cache folder mounted is this machine's
    (beside the lane venvs) or the node's (in its work folder), kept between runs."""
    request = executors.SuiteRequest()
    node = inventory.Node("localhost", {"flagci_vendors": ["cpu", "kunlun"],
                                        "flagci_node_workdir": str(tmp_path)})  # fmt: skip
    for lane, image_user in (
        (matrix.default, "flagci"),
        (matrix.lane("kunlun-flagtree-0.6.1"), ""),
    ):
        folder = tmp_path / "RUN" / lane.name
        local = executors.image_argv(
            "img:1", image_user, lane, folder, "RUN", request, tmp_path / "cache"
        )
        as_caller = executors.runs_as_caller(image_user)
        host = remote.host_vars("RUN", node, [lane], {lane.name: as_caller})
        on_node = host["docker_options"][lane.name]
        lane_file = ["--env=FLAGCI_LANE_FILE=/etc/flagci/lane.json",
                     f"--volume={folder}/lane.json:/etc/flagci/lane.json:ro"]  # fmt: skip
        assert set(lane_file) <= set(on_node)
        cache = "/var/cache/flagci/capture"
        assert f"--env=FLAGCI_CAPTURE_CACHE={cache}" in on_node
        assert host["capture_cache"] == f"{tmp_path}/capture-cache"
        node_cache = f"--volume={tmp_path}/capture-cache:{cache}"
        local_cache = f"--volume={tmp_path}/cache/capture:{cache}"
        assert (tmp_path / "cache" / "capture").is_dir()
        options = local[local.index("--name") + 2 : local.index("img:1")]
        user = ["--user", f"{os.getuid()}:{os.getgid()}"] if as_caller else []
        on_node = [local_cache if o == node_cache else o for o in on_node if o not in lane_file]
        assert options == user + on_node, lane.name
        assert ("--tmpfs" in options) == as_caller, lane.name
        vars_ = remote.lane_vars(lane, "img:1", [], Path("/a.tar"), request, as_caller=as_caller)
        assert local[local.index("img:1") + 1 :] == vars_["command"]


def test_a_nodes_inventory_replaces_the_lanes_devices_and_adds_environment(
    matrix: LaneMatrix,
) -> None:
    kunlun = matrix.lane("kunlun-flagtree-0.6.1")
    node = inventory.Node("p", {"flagci_vendors": ["kunlun"], "smoke_devices": ["/dev/xpu0"],
                                "smoke_env": {"XPU_X": 1}, "smoke_docker_args": ["--ipc=host"]})  # fmt: skip
    options = remote.node_container("RUN", node, kunlun, as_caller=False).options()
    assert [o for o in options if o.startswith("--device")] == ["--device=/dev/xpu0"]
    assert "--env=XPU_X=1" in options and "--env=FLAGCI_NODE=p" in options
    assert options[-1] == "--ipc=host"
    assert "--tmpfs" not in options


def test_workers_have_one_spelling_and_only_unprivileged_images_run_as_the_caller() -> None:
    assert executors.workers_arg(0) == "auto" and executors.workers_arg(2) == "2"
    assert executors.runs_as_caller("1000:1000") and executors.runs_as_caller("lane")
    assert not any(executors.runs_as_caller(u) for u in ("", "0", "root", "0:0"))
    assert [executors.suite_problem(c) for c in (0, 1)] == ["", ""]
    assert executors.suite_problem(2) == "the smoke suite exited with status 2"
    assert executors.suite_problem(5) == "the smoke suite exited with status 5"


def test_a_bad_inventory_names_the_file_host_and_key(tmp_path: Path) -> None:
    bad = write(tmp_path / "inv.yml", "all:\n  hosts:\n    n1:\n      flagci_vendors: [cpu, tpu]\n")
    with pytest.raises(ConfigError, match=rf"{bad}: host 'n1': key 'flagci_vendors'"):
        inventory.load(bad)
    relative = write(
        tmp_path / "inv2.yml",
        "all:\n  hosts:\n    n1:\n      flagci_vendors: [cpu]\n      flagci_node_workdir: tmp\n",
    )
    with pytest.raises(ConfigError, match="key 'flagci_node_workdir' must be absolute"):
        inventory.load(relative)
    with pytest.raises(UsageError, match="no hosts matching 'nothing'"):
        inventory.load(bad, "nothing")
    with pytest.raises(UsageError, match="no inventory at nowhere"):
        inventory.inventory_path("nowhere")
