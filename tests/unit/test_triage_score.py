"""benchmarks/triage_score.py on both corpora: the figures the README quotes are a floor.

The tuning set (corpus.toml) must stay at 100%: every class right, every same-bug group
one key, no collision. The frozen split (frozen.toml) is never tuned on; its figures may
only go up (a rule that makes them worse fails here).
"""

from __future__ import annotations

import pytest

from benchmarks import triage_score
from ci.smoke.contract import structure
from ci.smoke.contract.taxonomy import KINDS

# What the frozen split scored when the structural rules were written (README).
FROZEN_RIGHT = 31
FROZEN_FACTS_KEPT = 10


@pytest.fixture(scope="module")
def scores() -> dict[str, triage_score.Score]:
    tuning, _ = triage_score.score_file("tuning", triage_score.TUNING)
    frozen, _ = triage_score.score_file("frozen", triage_score.FROZEN)
    print("\n" + triage_score.report([tuning, frozen], verbose=False))
    return {"tuning": tuning, "frozen": frozen}


def test_tuning_set_is_all_right(scores: dict[str, triage_score.Score]) -> None:
    tuning = scores["tuning"]
    assert tuning.logs >= 80
    assert tuning.right == tuning.logs, tuning.wrong
    assert tuning.groups_one_key == tuning.groups >= 6, tuning.split
    assert not tuning.collisions


def test_frozen_split_does_not_get_worse(scores: dict[str, triage_score.Score]) -> None:
    frozen = scores["frozen"]
    assert frozen.logs >= 35
    assert frozen.right >= FROZEN_RIGHT, frozen.wrong
    assert frozen.facts_kept >= FROZEN_FACTS_KEPT, frozen.lost
    assert frozen.groups_one_key == frozen.groups, frozen.split
    assert not frozen.collisions


def test_the_sets_share_no_log() -> None:
    tuning = {log.source: log.text for log in triage_score.load(triage_score.TUNING)}
    frozen = triage_score.load(triage_score.FROZEN)
    assert not [log.id for log in frozen if tuning.get(log.source) == log.text]


def test_the_table_names_only_known_kinds() -> None:
    assert {row.kind for row in structure.TABLE} <= set(KINDS)
    layers = {layer for layer, _, _ in structure.LAYERS} | {e for e, _ in structure.EVENTS}
    assert {row.layer for row in structure.TABLE} <= layers | {"*"}


def test_the_confusion_table_marks_wrong_classes() -> None:
    score = triage_score.Score("x", logs=2, right=1)
    score.confusion.update({("crash", "crash"): 1, ("crash", "driver"): 1})
    table = triage_score.confusion_table([score])
    assert "| crash | crash 1, **driver 1** |" in table
