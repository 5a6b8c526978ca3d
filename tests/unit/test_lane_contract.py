"""The lane <-> controller contract (``ci/smoke/contract/``): what one side writes is what the
other reads, each file with one writer."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import ci
from ci.smoke import files
from ci.smoke.contract import properties, records, taxonomy


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
