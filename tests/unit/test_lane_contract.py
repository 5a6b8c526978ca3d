"""The lane <-> controller contract (``ci/smoke/contract/``): what one side writes is what the
other reads, each file with one writer."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import os
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

import ci
from ci.lanes.matrix import load_matrix
from ci.nodes import inventory
from ci.run import executors, remote
from ci.smoke import files
from ci.smoke.contract import lane, properties, records, taxonomy


def test_the_lane_side_atomic_write_leaves_no_temporary_file_and_the_usual_mode(
    tmp_path: Path,
) -> None:
    path = tmp_path / "deep" / "capture.json"
    files.write_text(path, "one")
    files.write_text(path, "two")
    assert path.read_text() == "two"
    assert [p.name for p in path.parent.iterdir()] == ["capture.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_failure_json_has_one_updater_that_keeps_what_triage_added(tmp_path: Path) -> None:
    path = tmp_path / records.FAILURE_NAME
    records.update_failure(path, {records.FAILURE_HINT: "stale"})
    records.update_failure(path, {records.FAILURE_JOB: {"kernel": "k"}}, fresh=True)
    records.update_failure(path, {records.FAILURE_REPLAY: {"pass": "P"}})
    records.update_failure(path, {records.FAILURE_HINT: "num_stages=1"})
    assert json.loads(path.read_text()) == {
        records.FAILURE_JOB: {"kernel": "k"},
        records.FAILURE_REPLAY: {"pass": "P"},
        records.FAILURE_HINT: "num_stages=1",
    }
    assert records.read_failure(tmp_path / "none.json") == {}


# --------------------------------------------------------------------------------------
# JUnit properties and failure kinds

CI = Path(ci.__file__).parent
LANE_SIDE = CI / "smoke"
CONTRACT = LANE_SIDE / "contract"
# The controller's modules that read what a lane wrote.
READING = ("results", "history", "publish", "triage", "run")


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _property_names_used(path: Path) -> set[str]:
    """The ``properties.NAME`` a module uses (the module imported as ``properties``)."""
    tree = _tree(path)
    used = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "properties"
    }
    if used:
        imported = [
            alias
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "ci.smoke.contract"
            for alias in node.names
            if alias.name == "properties"
        ]
        assert imported and all(a.asname is None for a in imported), path
    return used


def _modules(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "kernels" not in p.parts)


def _written() -> set[str]:
    return {
        name
        for path in _modules(LANE_SIDE)
        if CONTRACT not in path.parents
        for name in _property_names_used(path)
    }


def _read() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in _modules(CI):
        if LANE_SIDE not in path.parents:
            for name in _property_names_used(path):
                found.setdefault(name, set()).add(str(path.relative_to(CI)))
    return found


def _defined() -> dict[str, str]:
    return {k: v for k, v in vars(properties).items() if k.isupper() and isinstance(v, str)}


def test_every_property_the_controller_reads_is_one_the_lane_side_writes() -> None:
    read = _read()
    assert read, "the controller reads no property through ci.smoke.contract.properties"
    unwritten = {name: where for name, where in read.items() if name not in _written()}
    assert not unwritten, f"read by the controller, written by no lane-side module: {unwritten}"


def test_every_property_name_is_defined_once_and_written() -> None:
    defined = _defined()
    assert len(set(defined.values())) == len(defined), "two constants for one property"
    assert set(defined) == _written(), "a property constant that no lane-side module writes"


def _is_properties(node: ast.expr) -> bool:
    """A JUnit property mapping: ``props``, ``properties``, ``x.properties``."""
    if isinstance(node, ast.Name):
        return node.id in ("props", "properties")
    return isinstance(node, ast.Attribute) and node.attr in ("properties", "user_properties")


def _spelt_out(path: Path, names: set[str], kinds: set[str]) -> list[str]:
    """String literals naming a property (where properties are written or read) or a
    failure kind (where a kind is recorded or compared)."""
    found: list[tuple[ast.expr, set[str]]] = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("record_property", "add_property", "fail_with"):
                found += [(node.args[0], names | kinds), *((a, kinds) for a in node.args[1:2])]
            elif (isinstance(func, ast.Attribute) and _is_properties(func.value)) or (
                isinstance(func, ast.Name) and func.id == "get"  # get = props.get
            ):
                found += [(node.args[0], names)]  # props.get(NAME), .append((NAME, value))
                if isinstance(node.args[0], ast.Tuple) and node.args[0].elts:
                    found += [(node.args[0].elts[0], names)]
        elif isinstance(node, ast.Subscript) and _is_properties(node.value):
            found += [(node.slice, names)]
        elif isinstance(node, ast.Compare):
            found += [(e, kinds) for e in (node.left, *node.comparators)]
        elif isinstance(node, ast.BoolOp):
            found += [(e, kinds) for e in node.values]
    return [
        f"{path.relative_to(CI)}:{e.lineno}: {e.value!r}"
        for e, among in found
        if isinstance(e, ast.Constant) and e.value in among
    ]


def test_property_names_and_failure_kinds_are_never_spelt_out() -> None:
    """Writers and readers name properties and kinds by their constants only."""
    props = set(_defined().values())
    kinds = set(taxonomy.KINDS)
    lane_side = [p for p in _modules(LANE_SIDE) if CONTRACT not in p.parents]
    controller = [p for folder in READING for p in _modules(CI / folder)]
    spelt = [hit for path in lane_side + controller for hit in _spelt_out(path, props, kinds)]
    assert not spelt, "\n".join(spelt)


# --------------------------------------------------------------------------------------
# lane.json: one writer (lane.lane_text) for the controller, the image and the node


@pytest.mark.parametrize("name", sorted(load_matrix().lanes))
def test_lane_json_round_trips_through_the_one_writer_and_reader(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in (lane.NODE_ENV, lane.MODEL_PATH_ENV, lane.TENSOR_PARALLEL_SIZE_ENV):
        monkeypatch.delenv(variable, raising=False)
    matrix_lane = load_matrix().lane(name)
    fields = matrix_lane.smoke_context("node-1")
    text = matrix_lane.lane_json("node-1")
    assert text == lane.lane_text(fields)
    assert json.loads(text) == fields
    path = tmp_path / records.LANE_FILE_NAME
    path.write_text(text)
    context = lane.load_context(path)
    assert (context.lane, context.vendor, context.node) == (name, matrix_lane.vendor, "node-1")
    assert context.model == fields["model"]
    # What the image and the node get is the same text (the node's values go elsewhere).
    vars_ = remote.lane_vars(
        matrix_lane, "i:0", [], Path("/a"), executors.SuiteRequest(), as_caller=False
    )
    assert vars_["lane_file"] == matrix_lane.lane_json()


def test_the_lane_file_writer_refuses_fields_the_reader_does_not_know() -> None:
    fields = load_matrix().default.smoke_context()
    with pytest.raises(ValueError, match=r"unknown \['nodes'\]"):
        lane.lane_text({**fields, "nodes": []})
    with pytest.raises(ValueError, match=r"missing \['targets'\]"):
        lane.lane_text({k: v for k, v in fields.items() if k != "targets"})


def test_the_nodes_own_values_come_from_the_environment_over_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_model = next(m for m in load_matrix().lanes.values() if m.model is not None)
    path = tmp_path / records.LANE_FILE_NAME
    path.write_text(with_model.lane_json("written"))
    monkeypatch.setenv(lane.NODE_ENV, "bi-v150-01")
    monkeypatch.setenv(lane.MODEL_PATH_ENV, "/models/here")
    monkeypatch.setenv(lane.TENSOR_PARALLEL_SIZE_ENV, "4")
    context = lane.load_context(path)
    assert context.node == "bi-v150-01"
    assert context.model is not None and with_model.model is not None
    assert context.model == {
        **with_model.model.model_dump(exclude_none=True),
        "path": "/models/here",
        "tensor_parallel_size": 4,
    }
    monkeypatch.setenv(lane.TENSOR_PARALLEL_SIZE_ENV, "four")
    with pytest.raises(lane.LaneFileError, match="FLAGCI_TENSOR_PARALLEL_SIZE"):
        lane.load_context(path)


def test_the_smoke_role_merges_nothing_into_the_lane_file() -> None:
    role = inventory.playbooks_root() / "roles" / "smoke"
    tasks = yaml.safe_load((role / "tasks" / "main.yml").read_text())
    start = next(t for t in tasks if "flagci_lane" in t)
    assert start["flagci_lane"]["lane_file"] == "{{ smoke_lane.lane_file }}"
    assert "combine" not in (role / "vars" / "main.yml").read_text()


def test_the_nodes_own_values_reach_the_suite_in_its_environment() -> None:
    """The node's name, model folder and tensor-parallel size go into the container's
    environment, under the names the suite reads over the lane file."""
    kunlun = load_matrix().lane("kunlun-flagtree-0.6.1")
    node = inventory.Node("p800-01", {"flagci_vendors": ["kunlun"], "smoke_model_path": "/m/q",
                                      "smoke_tensor_parallel_size": 2})  # fmt: skip
    options = remote.node_container("RUN", node, kunlun, as_caller=False).options()
    for name, value in (
        (lane.NODE_ENV, "p800-01"),
        (lane.MODEL_PATH_ENV, "/m/q"),
        (lane.TENSOR_PARALLEL_SIZE_ENV, "2"),
    ):
        assert f"--env={name}={value}" in options
    assert remote.host_vars("RUN", node, [kunlun], {kunlun.name: False})["model_paths"] == {
        kunlun.name: "/m/q"
    }
    # Without the inventory's values the lane file's stand.
    bare = inventory.Node("p800-02", {"flagci_vendors": ["kunlun"]})
    options = remote.node_container("RUN", bare, kunlun, as_caller=False).options()
    assert not any(o.startswith(f"--env={lane.MODEL_PATH_ENV}=") for o in options)
    assert not any(o.startswith(f"--env={lane.TENSOR_PARALLEL_SIZE_ENV}=") for o in options)


# --------------------------------------------------------------------------------------
# status.json: written by one node module, read by ci.run.remote.lane_problem


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _node_module(role: str, name: str) -> ModuleType:
    """A node module as Ansible runs it, its shared module_utils importable under the name
    Ansible packs it as."""
    shared = "ansible.module_utils.flagci_node"
    if shared not in sys.modules:
        utils = inventory.playbooks_root() / "module_utils" / "flagci_node.py"
        sys.modules[shared] = _load(shared, utils)
    return _load(name, inventory.playbooks_root() / "roles" / role / "library" / f"{name}.py")


def test_the_node_module_writes_the_status_json_that_remote_reads(tmp_path: Path) -> None:
    status = _node_module("smoke", "flagci_lane_status")
    variables = yaml.safe_load(
        (inventory.playbooks_root() / "roles" / "smoke" / "vars" / "main.yml").read_text()
    )
    given_keys = re.findall(r"'(\w+)':", variables["_smoke_status"])
    given = dict.fromkeys(given_keys, "x") | {records.STATUS_TIMEOUT_S: 600}
    cases = [
        (status.status_record(given, 0), ""),
        (status.status_record(given, 1), ""),
        (status.status_record(given, 124), "ran past the lane timeout (600 s)"),
        (status.status_record(given, 3), "status 3 (see container.log)"),
        (status.status_record(given, None, "docker run: no image"), "failed: docker run: no"),
    ]
    for record, problem in cases:
        assert tuple(record) == records.STATUS_KEYS
        (tmp_path / records.STATUS_NAME).write_text(json.dumps(record))
        found = remote.lane_problem(tmp_path)
        assert (problem in found) if problem else found == "", (record, found)
    # The one writer: the module that starts the container only reports why it could not.
    start = inspect.getsource(_node_module("smoke", "flagci_lane"))
    assert "json.dumps" not in start and "start_error" in start
