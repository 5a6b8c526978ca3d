"""The resemblance guess: used only where no rule decides, marked as a guess, fitted data.

The shipped centroids are the fit of the labelled corpora as they are: a corpus edited
without re-fitting (``benchmarks/triage_score.py --fit``) fails here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import triage_score
from ci.smoke.contract import resemblance
from ci.smoke.contract.taxonomy import kind_of
from ci.smoke.triage.signatures import RESEMBLES, signature_of

# Two classes, in words no rule of the taxonomy knows (checked below).
EXAMPLES = [
    ("frobnicator quux wibble failed: the wibble stage broke", "codegen"),
    ("frobnicator quux wibble failed: wibble broke again", "codegen"),
    ("zorp gateway unreachable, flux capacitor lost heartbeat", "infrastructure"),
    ("zorp gateway lost heartbeat to the flux capacitor", "infrastructure"),
]
TOY = resemblance.fit(EXAMPLES)


def test_the_shipped_centroids_are_the_fit_of_the_corpora() -> None:
    assert resemblance.shipped() == triage_score.fitted()


def test_the_closest_class_is_guessed_and_how_close_is_said() -> None:
    guess = TOY.guess("the zorp gateway lost its heartbeat")
    assert guess is not None
    assert (guess.kind, guess.runner_up) == ("infrastructure", "codegen")
    assert guess.similarity > resemblance.FLOOR > guess.runner_up_similarity
    assert guess.describe().startswith("infrastructure 0.")


def test_words_no_class_has_are_not_guessed() -> None:
    assert TOY.guess("an entirely different sentence") is None
    assert resemblance.Centroids({}, {}).guess("anything at all") is None


def test_paths_do_not_count() -> None:
    assert resemblance.terms('File "/home/zorp/gateway/x.py", line 3') == ["line"]


def test_the_centroids_round_trip_and_bad_data_names_the_key(tmp_path: Path) -> None:
    path = tmp_path / "model.json"
    resemblance.write(TOY, path)
    assert resemblance.Centroids.from_json(json.loads(path.read_text())) == TOY
    with pytest.raises(ValueError, match=r"m\.json: key 'idf'"):
        resemblance.Centroids.from_json({"classes": {}}, "m.json")
    with pytest.raises(ValueError, match=r"m\.json: key 'classes': terms without an idf"):
        resemblance.Centroids.from_json({"idf": {}, "classes": {"crash": {"x": 1.0}}}, "m.json")


def test_a_log_no_rule_decides_gets_the_guess_marked_as_one() -> None:
    log = "ZorpError: the zorp gateway lost its heartbeat"
    assert kind_of(log) == "unclassified"
    signature = signature_of("", log, None, TOY)
    assert signature.kind == "infrastructure"
    assert "no rule decided; by resemblance: infrastructure" in signature.summary
    assert signature.guessed
    assert (signature.detail(RESEMBLES) or "").startswith("infrastructure ")
    assert signature.detail("structure") == (
        "exception ZorpError (from its exception line); no traceback frames;"
        " no known raising layer; no compile stage"
    )


def test_the_rules_decide_before_any_resemblance() -> None:
    # A log the rules class, worded like the toy's codegen examples: the rules' class stands.
    log = "frobnicator quux wibble failed\nRuntimeError: CUDA error: an illegal memory access"
    assert kind_of(log) == "crash"
    signature = signature_of("", log, None, TOY)
    assert signature.kind == "crash"
    assert not signature.guessed


def test_a_log_nothing_resembles_stays_unclassified_with_its_structure() -> None:
    signature = signature_of("", "an entirely different sentence", None, TOY)
    assert signature.kind == "unclassified"
    assert not signature.guessed
    assert signature.detail("structure") is not None
