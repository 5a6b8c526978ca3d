"""The lane side is one self-contained package, and the image tag covers all of it."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from ci.build import images
from ci.lanes.matrix import load_matrix

ROOT = Path(__file__).resolve().parents[2]
LANE_PACKAGE = "ci.smoke"


def _module_file(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _ci_imports(path: Path) -> set[str]:
    """Every ``ci.*`` module a file imports (absolute imports, as the project writes them)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "ci")
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.split(".")[0] == "ci"
        ):
            found.add(node.module)
            # `from ci.smoke.triage import bundle` imports the submodule ci.smoke.triage.bundle.
            found.update(
                f"{node.module}.{a.name}"
                for a in node.names
                if _module_file(f"{node.module}.{a.name}") is not None
            )
    return found


def lane_side_files() -> set[Path]:
    """Files the lane side loads: every module of the package and what they import, transitively."""
    package = ROOT / "ci" / "smoke"
    todo = [p for p in package.rglob("*.py") if "__pycache__" not in p.parts]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for module in _ci_imports(path):
            parts = module.split(".")
            # Importing ci.a.b runs ci/__init__.py and ci/a/__init__.py too.
            for depth in range(1, len(parts) + 1):
                found = _module_file(".".join(parts[:depth]))
                if found is not None:
                    todo.append(found)
    return seen


def test_the_lane_side_imports_nothing_of_the_controller() -> None:
    outside = sorted(
        str(p.relative_to(ROOT))
        for p in lane_side_files()
        if not p.is_relative_to(ROOT / "ci" / "smoke") and p != ROOT / "ci" / "__init__.py"
    )
    assert outside == [], f"the lane side ({LANE_PACKAGE}) imports controller modules: {outside}"


def test_every_file_the_lane_side_loads_is_hashed_into_the_tag() -> None:
    hashed = {path for path, _ in images.smoke_suite_files(ROOT)}
    missing = sorted(
        str(p.relative_to(ROOT))
        for p in lane_side_files()
        if str(p.relative_to(ROOT)) not in hashed
    )
    assert missing == [], f"files the lane side imports but the image tag ignores: {missing}"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the files an image recipe reads: the Dockerfiles and the lane package."""
    copy = tmp_path_factory.mktemp("tree")
    shutil.copytree(ROOT / "docker", copy / "docker")
    shutil.copytree(ROOT / "ci", copy / "ci", ignore=shutil.ignore_patterns("__pycache__"))
    return copy


@pytest.mark.parametrize(
    "relative", sorted(str(p.relative_to(ROOT)) for p in lane_side_files()), ids=str
)
def test_changing_any_file_the_lane_side_loads_changes_the_tag(tree: Path, relative: str) -> None:
    lane = load_matrix().default
    before = images.recipe_for(lane, tree).content_hash
    target = tree / relative
    original = target.read_bytes()
    try:
        target.write_bytes(original + b"\n# changed\n")
        assert images.recipe_for(lane, tree).content_hash != before, relative
    finally:
        target.write_bytes(original)


def test_every_data_file_of_the_lane_package_is_in_its_wheel() -> None:
    """A file under ci/smoke that is not Python reaches the image only through package-data."""
    import fnmatch
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["ci"]
    data = [
        p.relative_to(ROOT / "ci").as_posix()
        for p in (ROOT / "ci" / "smoke").rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc")
    ]
    assert data, "the lane package ships no data files: this test checks nothing"
    missing = [d for d in data if not any(fnmatch.fnmatch(d, p) for p in patterns)]
    assert missing == [], f"not in [tool.setuptools.package-data] ci: {missing}"
