"""A wheel whose metadata names another package or version is refused, naming both."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from ci.build.wheelhouse import WheelError, check_wheel
from ci.lanes.matrix import Lane, Pin, load_matrix


def wheel(folder: Path, name: str, version: str, metadata: str | None) -> Path:
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{name}/__init__.py", "")
        if metadata is not None:
            archive.writestr(f"{name}-{version}.dist-info/METADATA", metadata)
        archive.writestr(f"{name}-{version}.dist-info/RECORD", "")
    return path


@pytest.fixture
def lane() -> Lane:
    return load_matrix().default


PIN = Pin(name="typing-extensions", version="4.16.0", index="pypi")


def test_matching_metadata_passes(lane: Lane, tmp_path: Path) -> None:
    meta = "Metadata-Version: 2.1\nName: typing_extensions\nVersion: 4.16.0\n"
    path = wheel(tmp_path, "typing_extensions", "4.16.0", meta)
    assert len(check_wheel(lane, PIN, path)) == 64


@pytest.mark.parametrize(
    ("metadata", "says"),
    [
        (
            "Metadata-Version: 2.1\nName: typing_extensions\nVersion: 4.15.0\n",
            "typing_extensions 4.15.0",
        ),
        ("Metadata-Version: 2.1\nName: typing-inspect\nVersion: 4.16.0\n", "typing-inspect 4.16.0"),
    ],
)
def test_a_wheel_of_another_release_is_refused(
    lane: Lane, tmp_path: Path, metadata: str, says: str
) -> None:
    path = wheel(tmp_path, "typing_extensions", "4.16.0", metadata)
    with pytest.raises(WheelError) as caught:
        check_wheel(lane, PIN, path)
    assert str(caught.value) == (
        f"lane 'cpu-triton-3.6.0': package 'typing-extensions' 4.16.0 ({path}):"
        f" the wheel's metadata says {says}"
    )


def test_a_wheel_without_metadata_is_refused(lane: Lane, tmp_path: Path) -> None:
    path = wheel(tmp_path, "typing_extensions", "4.16.0", None)
    with pytest.raises(
        WheelError, match=r"package 'typing-extensions' .*no single \.dist-info/METADATA"
    ):
        check_wheel(lane, PIN, path)
