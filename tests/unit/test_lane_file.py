"""lane.json: written by `ci.smoke.contract.lane.lane_text` (through Lane.lane_json), read by
`load_context`."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci.lanes.matrix import load_matrix
from ci.smoke.contract.lane import LaneFileError, load_context


@pytest.mark.parametrize("name", sorted(load_matrix().lanes))
def test_every_lane_round_trips(name: str, tmp_path: Path) -> None:
    lane = load_matrix().lane(name)
    path = tmp_path / "lane.json"
    path.write_text(lane.lane_json("node-1"))
    context = load_context(path)
    assert (context.lane, context.vendor, context.node) == (lane.name, lane.vendor, "node-1")
    assert context.tests == lane.tests
    assert context.devices == lane.device.devices
    assert [
        (t.backend, t.arch, t.warp_size, t.shared_limit, t.last_stage)
        for t in context.declared_targets
    ] == [(t.backend, t.arch, t.warp_size, t.shared_limit, t.last_stage) for t in lane.targets]
    assert [t.label for t in context.declared_targets] == [t.label for t in lane.targets]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{", "not a JSON lane file"),
        ("[]", "a lane file is a JSON object"),
        ('{"targets": []}', "key 'lane': missing or malformed"),
        ('{"targets": [{"backend": "cuda"}]}', "key 'targets': missing or malformed"),
    ],
)
def test_a_malformed_lane_file_names_the_file_and_key(
    text: str, problem: str, tmp_path: Path
) -> None:
    path = tmp_path / "lane.json"
    path.write_text(text)
    with pytest.raises(LaneFileError, match=problem) as caught:
        load_context(path)
    assert str(path) in str(caught.value)
