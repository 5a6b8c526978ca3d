"""Node health: which probes run on a node, and how their output is judged.

The rules live in ``ci/data/node_health.toml``. ``flagci nodes check`` runs the probes over
SSH with Fabric; the preflight role runs the same probes with Ansible and calls ``judge``
through a filter plugin. One set of rules, one judge: a node is healthy for both or neither.

Standard library and pydantic only: the filter plugin imports this module inside
``ansible-playbook``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from ci.core import datafile
from ci.core.errors import ConfigError

Argv = Annotated[tuple[StrictStr, ...], Field(min_length=1)]

PROBE_SMI = "smi"
PROBE_DOCKER = "docker"
PROBE_DISK = "disk"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SmiRule(_Model):
    query: Argv
    snapshot: Argv
    format: Literal["query-csv", "xpu-smi-table", "npu-smi-info"]


class HealthRules(_Model):
    source: StrictStr
    min_free_gib: Annotated[StrictInt, Field(ge=0)]
    docker: Argv
    disk: Argv
    smi: dict[StrictStr, SmiRule]

    def smi_rule(self, tool: str) -> SmiRule:
        try:
            return self.smi[tool]
        except KeyError:
            raise ConfigError(
                f"{self.source}: no [smi.{tool}] rule (known: {', '.join(sorted(self.smi))})"
            ) from None


def default_rules_path() -> Path:
    return datafile.packaged("node_health.toml")


def load_rules(path: Path | None = None) -> HealthRules:
    """Read and validate the health rules; raise ConfigError naming file and key."""
    return datafile.load(HealthRules, path or default_rules_path(), what="node health rules")


@dataclass(frozen=True)
class Expectation:
    """What a node must show: its SMI tool (empty: no accelerator), devices, driver, disk."""

    smi: str = ""
    device_count: int = 0
    driver_version: str = ""
    min_free_gib: int | None = None  # None: the rules' threshold


@dataclass(frozen=True)
class ProbeResult:
    rc: int
    stdout: str = ""
    stderr: str = ""


@dataclass(frozen=True)
class Verdict:
    healthy: bool
    problems: tuple[str, ...]
    facts: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"healthy": self.healthy, "problems": list(self.problems), "facts": dict(self.facts)}


def probes(rules: HealthRules, expectation: Expectation, workdir: str) -> dict[str, list[str]]:
    """The commands to run on the node, by probe name."""
    commands = {PROBE_DOCKER: list(rules.docker), PROBE_DISK: [*rules.disk, workdir]}
    if expectation.smi:
        commands[PROBE_SMI] = list(rules.smi_rule(expectation.smi).query)
    return commands


@dataclass(frozen=True)
class SmiReport:
    devices: int
    driver: str


class SmiParser(Protocol):
    def __call__(self, output: str) -> SmiReport: ...


def _parse_query_csv(output: str) -> SmiReport:
    rows = [
        [cell.strip() for cell in line.split(",")] for line in output.splitlines() if line.strip()
    ]
    rows = [row for row in rows if len(row) >= 3 and row[0].isdigit()]
    drivers = sorted({row[2] for row in rows})
    return SmiReport(devices=len(rows), driver=", ".join(drivers))


_XPU_DRIVER = re.compile(r"^\s*Driver Version:\s*(\S+)", re.MULTILINE)
_XPU_DEVICE_ROW = re.compile(r"^\|\s*\d+\s*\|")


def _parse_xpu_smi_table(output: str) -> SmiReport:
    driver = _XPU_DRIVER.search(output)
    devices, section = 0, ""
    for line in output.splitlines():
        title = line.strip()
        if title in ("DEVICES", "PROCESSES"):
            section = title
        elif section == "DEVICES" and _XPU_DEVICE_ROW.match(line):
            devices += 1
    return SmiReport(devices=devices, driver=driver.group(1) if driver else "")


_NPU_DRIVER = re.compile(r"^\|\s*npu-smi\s+\S+\s+Version:\s*(\S+)", re.MULTILINE)
# An NPU's first row: its index and its name ("| 0     910B3   | OK  |"); the chip row
# under it has no name ("| 0                         | 0000:C1:00.0 |").
_NPU_DEVICE_ROW = re.compile(r"^\|\s*\d+\s+[A-Za-z0-9][\w.-]*\s*\|")


def _parse_npu_smi_info(output: str) -> SmiReport:
    driver = _NPU_DRIVER.search(output)
    devices = sum(1 for line in output.splitlines() if _NPU_DEVICE_ROW.match(line))
    return SmiReport(devices=devices, driver=driver.group(1) if driver else "")


SMI_PARSERS: dict[str, SmiParser] = {
    "query-csv": _parse_query_csv,
    "xpu-smi-table": _parse_xpu_smi_table,
    "npu-smi-info": _parse_npu_smi_info,
}

_SERVER_VERSION = re.compile(r"^\s*Server Version:\s*(\S+)", re.MULTILINE)


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def judge(
    rules: HealthRules, expectation: Expectation, observed: Mapping[str, ProbeResult]
) -> Verdict:
    """Healthy only if every probe answered and showed what ``expectation`` asks."""
    problems: list[str] = []
    facts: dict[str, Any] = {}

    docker = observed.get(PROBE_DOCKER)
    version = _SERVER_VERSION.search(docker.stdout) if docker else None
    if docker is None or docker.rc != 0 or version is None:
        detail = _first_line(docker.stderr or docker.stdout) if docker else "not probed"
        problems.append(f"docker: the engine does not answer ({detail})")
    else:
        facts["docker"] = version.group(1)

    disk = observed.get(PROBE_DISK)
    free_gib = _free_gib(disk.stdout) if disk and disk.rc == 0 else None
    threshold = rules.min_free_gib if expectation.min_free_gib is None else expectation.min_free_gib
    if free_gib is None:
        detail = _first_line(disk.stderr or disk.stdout) if disk else "not probed"
        problems.append(f"disk: free space unknown ({detail})")
    else:
        facts["free_gib"] = round(free_gib, 1)
        if free_gib < threshold:
            problems.append(f"disk: {free_gib:.1f} GiB free, {threshold} GiB needed")

    if expectation.smi:
        rule = rules.smi_rule(expectation.smi)
        smi = observed.get(PROBE_SMI)
        if smi is None or smi.rc != 0:
            detail = _first_line(smi.stderr or smi.stdout) if smi else "not probed"
            rc = f"exit {smi.rc}" if smi else "no result"
            problems.append(f"smi: {expectation.smi} does not answer ({rc}: {detail})")
        else:
            report = SMI_PARSERS[rule.format](smi.stdout)
            facts.update(devices=report.devices, driver=report.driver)
            if report.devices != expectation.device_count:
                problems.append(
                    f"smi: {expectation.smi} reports {report.devices} device(s),"
                    f" {expectation.device_count} expected"
                )
            if expectation.driver_version and report.driver != expectation.driver_version:
                problems.append(
                    f"smi: driver version {report.driver or '(none reported)'},"
                    f" {expectation.driver_version} expected"
                )
    return Verdict(healthy=not problems, problems=tuple(problems), facts=facts)


def _free_gib(df_output: str) -> float | None:
    """Available space from ``df -Pk``'s last line (POSIX format: 4th column, KiB)."""
    lines = [line for line in df_output.splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    columns = lines[-1].split()
    if len(columns) < 4 or not columns[3].isdigit():
        return None
    return int(columns[3]) / (1024 * 1024)


def results_from(records: Sequence[Mapping[str, Any]]) -> dict[str, ProbeResult]:
    """Probe results from Ansible's registered loop results (``item.key`` names the probe)."""
    observed: dict[str, ProbeResult] = {}
    for record in records:
        name = str(record["item"]["key"])
        # A command that does not exist: the module fails with a message and no rc.
        rc = record.get("rc")
        observed[name] = ProbeResult(
            rc=int(rc) if rc is not None else 127,
            stdout=str(record.get("stdout") or ""),
            stderr=str(record.get("stderr") or record.get("msg") or ""),
        )
    return observed
