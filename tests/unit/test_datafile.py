"""The one TOML data-file loader (ci/core/datafile.py): the same error format, naming the
file and the key (and the entry), for the lane matrix, the ledger and the health rules."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from ci.core import datafile
from ci.core.errors import ConfigError
from ci.history.ledger import load_ledger
from ci.lanes.matrix import load_matrix
from ci.nodes.health import load_rules

LOADERS: dict[str, Callable[[Path], Any]] = {
    "lane matrix": load_matrix,
    "known-issue ledger": load_ledger,
    "node health rules": load_rules,
}


@pytest.mark.parametrize("what", sorted(LOADERS))
def test_every_data_file_is_refused_in_the_same_words(tmp_path: Path, what: str) -> None:
    load, path = LOADERS[what], tmp_path / "data.toml"
    with pytest.raises(ConfigError, match=f"^{path}: {what} not found$"):
        load(path)
    path.write_text("x = [")
    with pytest.raises(ConfigError, match=f"^{path}: not valid TOML: "):
        load(path)
    path.write_text('colour = "red"\n')
    with pytest.raises(ConfigError) as caught:
        load(path)
    assert f"{path}: key 'colour': Extra inputs are not permitted" in str(caught.value).splitlines()


class Pin(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    version: int


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = ""
    pins: list[Pin] = []


class Data(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source: str
    item: list[Item] = []
    tables: dict[str, Item] = {}


def test_an_error_names_the_entry_and_the_dotted_key(tmp_path: Path) -> None:
    path = tmp_path / "data.toml"
    path.write_text(
        '[[item]]\nid = "first"\npins = [{name = "a", version = "x"}]\n'
        "[[item]]\ncolour = 1\n"
        '[tables.t1]\npins = [{name = "b"}]\n'
    )
    entries = {"item": datafile.Entries("item", key="id"), "tables": datafile.Entries("table")}
    with pytest.raises(ConfigError) as caught:
        datafile.load(Data, path, what="data", entries=entries)
    assert str(caught.value).splitlines() == [
        f"{path}: item 'first': key 'pins[0].version': Input should be a valid integer,"
        " unable to parse string as an integer",
        f"{path}: item '#2': key 'colour': Extra inputs are not permitted",
        f"{path}: table 't1': key 'pins[0].version': Field required",
    ]


def test_a_valid_file_is_the_model_with_its_source(tmp_path: Path) -> None:
    path = tmp_path / "data.toml"
    path.write_text('[[item]]\nid = "a"\n')
    data = datafile.load(Data, path, what="data", prepare=lambda raw: {**raw, "tables": {}})
    assert data == Data(source=str(path), item=[Item(id="a")])


def test_packaged_data_files_are_the_ci_packages() -> None:
    assert datafile.packaged("lanes.toml").is_file()
    assert load_matrix().source == str(datafile.packaged("lanes.toml"))
