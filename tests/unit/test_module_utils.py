"""The node modules' shared code (playbooks/module_utils/flagci_node.py), run for real: the
command runner, the docker client call, the atomic write; and every node module uses it."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from ci.nodes import inventory

ROOT = inventory.playbooks_root()
MODULES = sorted(ROOT.glob("roles/*/library/*.py"))


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "flagci_node", ROOT / "module_utils" / "flagci_node.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


node = _load()


def test_run_gives_exit_status_output_and_error_output() -> None:
    rc, out, err = node.run(["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert (rc, out, err) == (3, "out\n", "err\n")


def test_run_says_127_for_a_command_that_cannot_start_and_124_past_its_timeout() -> None:
    rc, out, err = node.run(["/nonexistent/flagci-tool"])
    assert (rc, out) == (node.NOT_STARTED, "")
    assert "/nonexistent/flagci-tool" in err
    rc, _, err = node.run(["sleep", "30"], timeout=0.2)
    assert rc == node.TIMED_OUT
    assert "timed out after 0.2 s" in err


def test_docker_runs_the_docker_client_found_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = tmp_path / "docker"
    client.write_text('#!/bin/sh\necho "docker $*"\n')
    client.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert node.docker("image", "inspect", "x:1") == (0, "docker image inspect x:1\n", "")


def test_write_replaces_the_file_whole_and_leaves_nothing_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "status.json"
    target.write_text("old")
    node.write(str(target), json.dumps({"exit_code": 0}))
    assert json.loads(target.read_text()) == {"exit_code": 0}
    assert [p.name for p in tmp_path.iterdir()] == ["status.json"]


def test_write_syncs_the_data_before_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    fsync, replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append("replace"), replace(a, b))[1])
    node.write(str(tmp_path / "lane.json"), "{}")
    # The file's data, then the rename, then the folder's entry.
    assert events == ["fsync", "replace", "fsync"]


def test_a_failed_write_keeps_the_old_file_and_no_part_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "status.json"
    target.write_text("old")

    def broken(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", broken)
    with pytest.raises(OSError, match="disk full"):
        node.write(str(target), "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["status.json"]


def test_every_node_module_runs_commands_and_writes_files_through_module_utils() -> None:
    assert len(MODULES) == 6
    for path in MODULES:
        tree = ast.parse(path.read_text())
        imported = {
            alias.name for n in ast.walk(tree) if isinstance(n, ast.Import) for alias in n.names
        }
        shared = {
            alias.name for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and n.module == "ansible.module_utils.flagci_node"
            for alias in n.names
        }  # fmt: skip
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert "subprocess" not in imported, path
        assert shared & {"run", "docker"}, f"{path} does not use ansible.module_utils.flagci_node"
        assert not defined & {"run", "docker", "write", "output"}, path


def test_ansible_packs_module_utils_into_a_node_module(tmp_path: Path) -> None:
    """The import form Ansible packs (AnsiballZ): a module run through ``ansible``."""
    ansible = Path(sys.executable).parent / "ansible"
    workdir = tmp_path / "work"
    done = subprocess.run(
        [str(ansible), "localhost", "--connection", "local", "-m", "flagci_probes",
         "-a", json.dumps({"probes": {"echo": ["echo", "hello"]}, "workdir": str(workdir)})],
        env={**os.environ, "ANSIBLE_LIBRARY": str(ROOT / "roles" / "preflight" / "library"),
             "ANSIBLE_MODULE_UTILS": str(ROOT / "module_utils"),
             "ANSIBLE_LOCALHOST_WARNING": "0", "ANSIBLE_NOCOLOR": "1"},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"stdout": "hello\\n"' in done.stdout
    assert workdir.is_dir()
