"""The node health judge, on the output of the fixture SMI tools and of real commands."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ci.core import tables
from ci.core.errors import ConfigError
from ci.nodes import check, health, inventory

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sshnode"
DOCKER_OK = health.ProbeResult(0, "Client:\n Version: 20.10\nServer:\n Server Version: 20.10.24\n")
DF_OK = health.ProbeResult(
    0, "Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/vda 1000 10 52428800 1% /\n"
)  # 50 GiB free


@pytest.fixture(scope="module")
def rules() -> health.HealthRules:
    return health.load_rules()


def smi(tool: str, mode: str, tmp_path: Path, rules: health.HealthRules) -> health.ProbeResult:
    """Run the fixture SMI script in ``mode`` with the query of the rules file."""
    argv = list(rules.smi_rule(tool).query)
    script = (
        (FIXTURES / tool)
        .read_text()
        .replace("/etc/flagci-fixture/smi-mode", str(tmp_path / "mode"))
    )
    (tmp_path / "mode").write_text(mode)
    (tmp_path / tool).write_text(script)
    done = subprocess.run(
        ["bash", str(tmp_path / tool), *argv[1:]], capture_output=True, text=True, check=False
    )
    return health.ProbeResult(done.returncode, done.stdout, done.stderr)


@pytest.mark.parametrize(
    ("tool", "driver"), [("ixsmi", "4.5.0"), ("xpu-smi", "5.37.1"), ("npu-smi", "24.1.rc2")]
)
def test_a_healthy_vendor_node_is_healthy(
    tool: str, driver: str, tmp_path: Path, rules: health.HealthRules
) -> None:
    expectation = health.Expectation(smi=tool, device_count=8, driver_version=driver)
    observed = {"docker": DOCKER_OK, "disk": DF_OK, "smi": smi(tool, "healthy", tmp_path, rules)}
    verdict = health.judge(rules, expectation, observed)
    assert verdict.healthy, verdict.problems
    assert verdict.facts == {"docker": "20.10.24", "free_gib": 50.0, "devices": 8, "driver": driver}


@pytest.mark.parametrize(
    ("tool", "mode", "problem"),
    [
        ("ixsmi", "missing-device", "smi: ixsmi reports 7 device(s), 8 expected"),
        ("ixsmi", "wrong-driver", "smi: driver version 4.3.0, 4.5.0 expected"),
        (
            "ixsmi",
            "broken",
            "smi: ixsmi does not answer (exit 9: ixsmi: Failed to initialize IXML: Driver Not Loaded)",
        ),
        ("xpu-smi", "missing-device", "smi: xpu-smi reports 7 device(s), 8 expected"),
        ("xpu-smi", "wrong-driver", "smi: driver version 5.0.21, 5.37.1 expected"),
        (
            "xpu-smi",
            "broken",
            "smi: xpu-smi does not answer (exit 1: xpu-smi: xpu_device_count failed: XPU driver is not loaded)",
        ),
        ("npu-smi", "missing-device", "smi: npu-smi reports 7 device(s), 8 expected"),
        ("npu-smi", "wrong-driver", "smi: driver version 23.0.rc3, 24.1.rc2 expected"),
        (
            "npu-smi",
            "broken",
            "smi: npu-smi does not answer (exit 255: dcmi model initialized failed, because the"
            " device is used. ret is -8020)",
        ),
    ],
)
def test_each_unhealthy_smi_variant_is_named(
    tool: str, mode: str, problem: str, tmp_path: Path, rules: health.HealthRules
) -> None:
    driver = {"ixsmi": "4.5.0", "xpu-smi": "5.37.1", "npu-smi": "24.1.rc2"}[tool]
    expectation = health.Expectation(smi=tool, device_count=8, driver_version=driver)
    observed = {"docker": DOCKER_OK, "disk": DF_OK, "smi": smi(tool, mode, tmp_path, rules)}
    verdict = health.judge(rules, expectation, observed)
    assert (verdict.healthy, verdict.problems) == (False, (problem,))


def test_docker_down_and_a_full_disk_are_both_reported(rules: health.HealthRules) -> None:
    observed = {
        "docker": health.ProbeResult(
            1, "Client:\n", "Cannot connect to the Docker daemon at unix:///var/run/docker.sock"
        ),
        "disk": health.ProbeResult(
            0,
            "Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/vda 1 1 1048576 99% /\n",
        ),
    }
    verdict = health.judge(rules, health.Expectation(), observed)
    assert verdict.problems == (
        "docker: the engine does not answer (Cannot connect to the Docker daemon at unix:///var/run/docker.sock)",
        "disk: 1.0 GiB free, 20 GiB needed",
    )
    lenient = health.Expectation(min_free_gib=1)
    assert health.judge(rules, lenient, observed).problems[1:] == ()


def test_a_missing_probe_is_a_problem_not_a_pass(rules: health.HealthRules) -> None:
    verdict = health.judge(rules, health.Expectation(smi="ixsmi", device_count=8), {})
    assert not verdict.healthy
    assert len(verdict.problems) == 3


def test_real_df_and_the_probe_commands(tmp_path: Path, rules: health.HealthRules) -> None:
    commands = health.probes(rules, health.Expectation(smi="xpu-smi"), str(tmp_path))
    assert commands == {
        "docker": ["docker", "info"],
        "disk": ["df", "-Pk", str(tmp_path)],
        "smi": ["xpu-smi"],
    }
    done = subprocess.run(commands["disk"], capture_output=True, text=True, check=True)
    verdict = health.judge(
        rules,
        health.Expectation(min_free_gib=0),
        {"docker": DOCKER_OK, "disk": health.ProbeResult(0, done.stdout)},
    )
    assert verdict.healthy and verdict.facts["free_gib"] > 0


def test_ansible_loop_results_become_probe_results() -> None:
    records = [
        {
            "item": {"key": "docker", "value": ["docker", "info"]},
            "rc": 0,
            "stdout": "x",
            "stderr": "",
        },
        {
            "item": {"key": "smi", "value": ["ixsmi"]},
            "msg": "[Errno 2] No such file or directory: b'ixsmi'",
        },
    ]
    observed = health.results_from(records)
    assert observed["docker"] == health.ProbeResult(0, "x", "")
    assert observed["smi"] == health.ProbeResult(
        127, "", "[Errno 2] No such file or directory: b'ixsmi'"
    )


def test_a_bad_rules_file_names_the_file_and_key(tmp_path: Path) -> None:
    bad = tmp_path / "rules.toml"
    bad.write_text(
        'min_free_gib = "lots"\ndocker = ["docker", "info"]\ndisk = ["df"]\n[smi.x]\nquery=["x"]\nsnapshot=["x"]\nformat="csv"\n'
    )
    with pytest.raises(ConfigError) as err:
        health.load_rules(bad)
    assert f"{bad}: key 'min_free_gib'" in str(err.value)
    assert f"{bad}: key 'smi.x.format'" in str(err.value)
    with pytest.raises(ConfigError, match=r"no \[smi.nvsmi\] rule"):
        health.load_rules().smi_rule("nvsmi")


def test_the_nodes_table_is_one_greppable_row_per_node() -> None:
    healthy = health.Verdict(True, (), {"docker": "26.1.5", "free_gib": 120, "devices": 8})
    sick = health.Verdict(False, ("smi: driver version 5.0.21, 5.37.1 expected",), {})
    checks = [
        check.NodeCheck(inventory.Node("n1", {"ansible_host": "10.0.0.1"}), healthy),
        check.NodeCheck(inventory.Node("n2", {"ansible_connection": "local"}), sick),
        check.NodeCheck(inventory.Node("n3", {}), None, "timed out"),
    ]
    rows = tables.text(check.table(checks)).splitlines()
    assert rows[0].split() == [
        "node", "address", "reachable", "docker", "free", "GiB", "devices", "driver", "verdict"
    ]  # fmt: skip
    assert rows[1].split() == ["n1", "10.0.0.1:22", "yes", "26.1.5", "120", "8", "-", "healthy"]
    assert rows[2].split()[:3] == ["n2", "local", "yes"]
    assert rows[2].endswith("  unhealthy: smi: driver version 5.0.21, 5.37.1 expected")
    assert rows[3].split()[:3] == ["n3", "n3:22", "no"]
    assert rows[3].endswith("  unreachable: timed out")
