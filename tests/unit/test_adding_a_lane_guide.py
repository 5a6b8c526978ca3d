"""docs/adding-a-lane.md still matches the code: its files, keys and commands exist, and the
worked example (the Ascend lane) has every piece the guide walks through."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml

from ci.build import images
from ci.cli import main
from ci.lanes.matrix import VENDORS, Device, Lane, Target, load_matrix
from ci.nodes import health

ROOT = Path(__file__).resolve().parents[2]
GUIDE = (ROOT / "docs" / "adding-a-lane.md").read_text(encoding="utf-8")
EXAMPLE = "ascend-triton-3.2.0"
CODE = re.findall(r"`([^`]+)`", GUIDE)


def test_every_file_the_guide_names_exists() -> None:
    paths = [c for c in CODE if re.match(r"^(ci|docker|playbooks|tests|docs)/", c)]
    assert len(paths) >= 10
    example = load_matrix().lane(EXAMPLE)
    missing = []
    for path in paths:
        concrete = path.replace("<vendor>", example.vendor).replace("<group>", "ascend_910b")
        # "compiler,driver" spelled as a brace list names FlagTree's files, not ours.
        if "{" in concrete or "third_party" in concrete:
            continue
        if not (ROOT / concrete.rstrip("/")).exists():
            missing.append(path)
    assert missing == []


def test_every_lane_key_the_guide_lists_is_a_key_of_the_model() -> None:
    keys = set(Lane.model_fields) | set(Device.model_fields) | set(Target.model_fields)
    listed = re.findall(r"^- `([a-z_]+)`", GUIDE, re.MULTILINE)
    listed += re.findall(r"[,(] `([a-z_]+)`", GUIDE)
    lane_keys = {k for k in listed if k in keys or k.endswith("_s") or k == "extends"}
    assert {"vendor", "compiler", "targets", "last_stage", "pins", "tests"} <= lane_keys
    unknown = sorted(k for k in lane_keys if k not in keys and k != "extends")
    assert unknown == []


def test_the_worked_example_has_every_piece() -> None:
    lane = load_matrix().lane(EXAMPLE)
    assert lane.vendor in VENDORS
    assert EXAMPLE in load_matrix().families[lane.vendor]
    assert lane.targets[0].last_stage == "ttadapter"
    assert images.recipe_for(lane).dockerfile == ROOT / "docker/lane/Dockerfile"
    assert images.build_arguments(lane)["USER_ID"] == str(lane.device.uid) == "0"
    hosts = yaml.safe_load((ROOT / "playbooks/inventories/lab/hosts.yml").read_text())
    assert "ascend_910b" in hosts["all"]["children"]
    group = yaml.safe_load(
        (ROOT / "playbooks/inventories/lab/group_vars/ascend_910b.yml").read_text()
    )
    assert group["flagci_vendors"] == [lane.vendor]
    assert group["preflight_smi"] == lane.device.smi
    assert group["smoke_devices"] == list(lane.device.devices)
    rules = tomllib.loads((ROOT / "ci/data/node_health.toml").read_text())
    rule = rules["smi"][lane.device.smi]
    assert rule["format"] in health.SMI_PARSERS
    assert (ROOT / "tests/fixtures/sshnode" / lane.device.smi).is_file()


@pytest.mark.parametrize("command", re.findall(r"`(flagci [^`]+)`", GUIDE))
def test_the_guides_flagci_commands_parse(command: str) -> None:
    argv = command.split()[1:]
    if argv[:1] == ["lanes"]:
        assert main(argv) == 0  # runs for real: no node needed
    else:
        from ci.cli import build_parser

        build_parser().parse_args(argv)  # exits (SystemExit) on a command that no longer exists
