"""The playbooks' static checks: ansible-lint's production profile, role READMEs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

from ci import inventory

ROLES = ("preflight", "deploy", "smoke", "collect", "cleanup")


def test_the_playbooks_pass_ansible_lint_with_the_production_profile() -> None:
    lint = Path(sys.executable).parent / "ansible-lint"
    result = subprocess.run(
        [str(lint), "run.yml", "deploy.yml", "roles", "inventories"],
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
