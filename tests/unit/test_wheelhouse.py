"""The wheelhouse refuses a wheel whose hash or archive is bad, naming package and lane."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from ci.build.wheelhouse import WheelError, prepare
from ci.lanes.matrix import load_matrix

MATRIX = """
default_lane = "cpu-a"
[indexes.local]
env = "FLAGCI_INDEX_LOCAL"
[families]
cpu = ["cpu-a"]
[lanes.cpu-a]
description = "cpu"
vendor = "cpu"
base_image = "debian:bookworm"
python = "3.11"
compiler = { package = "triton", version = "3.6.0", triton = "3.6.0" }
targets = [{ backend = "cuda", arch = 80, warp_size = 32, shared_limit = 166912 }]
inductor_backend = "cuda"
execution = "interpreter"
pins = [
  { name = "triton", version = "3.6.0", index = "local"%s },
  { name = "tiny-dep", version = "1.0", index = "local" },
]
tests = ["backends"]
timeout_s = 60
test_timeout_s = 30
"""


def make_wheel(folder: Path, name: str, version: str) -> Path:
    path = folder / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{name.replace('-', '_')}/__init__.py", "VALUE = 1\n" * 200)
        info = f"{name.replace('-', '_')}-{version}.dist-info"
        archive.writestr(
            f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        )
        archive.writestr(f"{info}/RECORD", "")
    return path


def setup(tmp_path: Path, sha: str | None = None) -> tuple[Path, Path, Path]:
    house = tmp_path / "house"
    house.mkdir()
    triton = make_wheel(house, "triton", "3.6.0")
    dep = make_wheel(house, "tiny-dep", "1.0")
    pin_sha = f', sha256 = "{sha}"' if sha else ""
    lanes = tmp_path / "lanes.toml"
    lanes.write_text(MATRIX % pin_sha)
    return lanes, triton, dep


def test_good_wheels_are_locked_with_their_hashes(tmp_path: Path) -> None:
    lanes, triton, _dep = setup(tmp_path)
    digest = hashlib.sha256(triton.read_bytes()).hexdigest()
    matrix = load_matrix(lanes)
    house = prepare(matrix, matrix.default, triton.parent)
    lock = house.lock.read_text()
    assert f"triton==3.6.0 --hash=sha256:{digest}" in lock
    assert "tiny-dep==1.0 --hash=sha256:" in lock


def test_hash_mismatch_names_package_and_lane(tmp_path: Path) -> None:
    lanes, triton, _ = setup(tmp_path, sha="0" * 64)
    matrix = load_matrix(lanes)
    with pytest.raises(
        WheelError, match=r"lane 'cpu-a': package 'triton' 3\.6\.0 .*sha256 mismatch"
    ):
        prepare(matrix, matrix.default, triton.parent)


def test_truncated_wheel_is_refused(tmp_path: Path) -> None:
    lanes, _, dep = setup(tmp_path)
    data = dep.read_bytes()
    dep.write_bytes(data[: len(data) // 2])
    matrix = load_matrix(lanes)
    with pytest.raises(
        WheelError, match=r"lane 'cpu-a': package 'tiny-dep' 1\.0 .*not a valid wheel archive"
    ):
        prepare(matrix, matrix.default, dep.parent)


def test_corrupt_member_is_refused(tmp_path: Path) -> None:
    lanes, _, dep = setup(tmp_path)
    data = bytearray(dep.read_bytes())
    start = data.index(b"VALUE = 1")
    data[start : start + 9] = b"XXXXXXXXX"  # payload changed, CRC in the header no longer matches
    dep.write_bytes(bytes(data))
    matrix = load_matrix(lanes)
    with pytest.raises(
        WheelError, match=r"package 'tiny-dep' .*(corrupt member|not a valid wheel)"
    ):
        prepare(matrix, matrix.default, dep.parent)


def test_zip_that_is_not_a_wheel_is_refused(tmp_path: Path) -> None:
    lanes, _, dep = setup(tmp_path)
    with zipfile.ZipFile(dep, "w") as archive:
        archive.writestr("readme.txt", "hello")
    matrix = load_matrix(lanes)
    with pytest.raises(WheelError, match=r"package 'tiny-dep' .*no \.dist-info/RECORD"):
        prepare(matrix, matrix.default, dep.parent)


def test_unset_index_is_named_before_any_download(tmp_path: Path) -> None:
    lanes, triton, dep = setup(tmp_path)
    dep.unlink()
    matrix = load_matrix(lanes)
    from ci.core.errors import ConfigError

    with pytest.raises(
        ConfigError,
        match="lane 'cpu-a': package index 'local' has no URL: set the environment variable FLAGCI_INDEX_LOCAL",
    ):
        prepare(matrix, matrix.default, triton.parent)


def test_a_wheel_changed_after_its_check_is_checked_again(tmp_path: Path) -> None:
    lanes, _, dep = setup(tmp_path)
    matrix = load_matrix(lanes)
    prepare(matrix, matrix.default, dep.parent)
    data = dep.read_bytes()
    dep.write_bytes(data[: len(data) // 2])
    with pytest.raises(WheelError, match=r"package 'tiny-dep' .*not a valid wheel archive"):
        prepare(matrix, matrix.default, dep.parent)
