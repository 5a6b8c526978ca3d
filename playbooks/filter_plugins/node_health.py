"""Filters that let the preflight and collect roles use flagci's node health rules.

They run inside ansible-playbook on the controller, whose Python is flagci's venv: the rules
and the judge are ``ci.nodes.health``'s, the same that ``flagci nodes check`` uses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ci.nodes import health


def health_probes(smi: str, workdir: str) -> dict[str, list[str]]:
    rules = health.load_rules()
    return health.probes(rules, health.Expectation(smi=str(smi)), str(workdir))


def health_verdict(
    results: Sequence[Mapping[str, Any]],
    smi: str,
    device_count: int,
    driver_version: str,
    min_free_gib: int | None = None,
) -> dict[str, Any]:
    rules = health.load_rules()
    expectation = health.Expectation(
        smi=str(smi),
        device_count=int(device_count),
        driver_version=str(driver_version),
        min_free_gib=None if min_free_gib is None else int(min_free_gib),
    )
    return health.judge(rules, expectation, health.results_from(results)).as_dict()


def smi_snapshot(smi: str) -> list[str]:
    if not smi:
        return []
    return list(health.load_rules().smi_rule(str(smi)).snapshot)


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "flagci_health_probes": health_probes,
            "flagci_health_verdict": health_verdict,
            "flagci_smi_snapshot": smi_snapshot,
        }
