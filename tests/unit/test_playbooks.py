"""The playbooks' static checks: ansible-lint's production profile with role argument specs,
role READMEs and specs against the defaults, no world-writable modes, one workdir default."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

from ci.nodes import inventory

ROLES = ("preflight", "deploy", "smoke", "collect", "cleanup")


def test_the_playbooks_pass_ansible_lint_with_the_production_profile() -> None:
    lint = Path(sys.executable).parent / "ansible-lint"
    result = subprocess.run(
        [str(lint), "run.yml", "roles", "inventories"],
        cwd=inventory.playbooks_root(),
        capture_output=True,
        text=True,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Profile 'production' was required, and it passed" in output


def test_every_role_variable_is_prefixed_and_documented_in_the_role_readme() -> None:
    for role in ROLES:
        folder = inventory.playbooks_root() / "roles" / role
        defaults = yaml.safe_load((folder / "defaults" / "main.yml").read_text()) or {}
        readme = (folder / "README.md").read_text()
        for name in defaults:
            assert name.startswith(f"{role}_"), f"{role}: {name}"
            assert re.search(rf"`{name}`", readme), f"{role}/README.md lacks {name}"
        commented = re.findall(
            rf"^# ({role}_\w+):$", (folder / "defaults" / "main.yml").read_text(), re.M
        )
        for name in commented:  # required inputs, with no default
            assert f"`{name}`" in readme


def test_every_role_declares_its_variables_in_an_argument_spec() -> None:
    for role in ROLES:
        folder = inventory.playbooks_root() / "roles" / role
        spec = yaml.safe_load((folder / "meta" / "argument_specs.yml").read_text())
        options = spec["argument_specs"]["main"]["options"]
        defaults = yaml.safe_load((folder / "defaults" / "main.yml").read_text()) or {}
        required = {name for name, option in options.items() if option.get("required")}
        # Every default is declared; what has no default is required.
        assert set(options) == set(defaults) | required, role
        assert not required & set(defaults), role


def test_no_world_writable_modes_and_one_workdir_default() -> None:
    root = inventory.playbooks_root()
    texts = {
        path: path.read_text()
        for path in root.rglob("*")
        if path.is_file() and path.suffix in (".yml", ".py")
    }
    assert texts
    for path, text in texts.items():
        assert not re.search(r"0o?777|\ba\+w\b|o\+w", text), path
        # The default work folder is written once, in ci/nodes/inventory.py.
        assert inventory.DEFAULT_WORKDIR not in text, path
    assert not (root / "deploy.yml").exists()  # `run.yml --tags stage` does its work
