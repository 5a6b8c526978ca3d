"""Resemblance: which class's labelled real failures a log's words are closest to.

The taxonomy's rules decide a class from a log's structure and its known forms. Scored on
held-out splits of real public logs before any rule was written for them, about two thirds
of the rules' misses were logs that no rule recognised at all ("unclassified"): a new
vendor's wording, a new wrapper. Their words still resemble the logs of their class that
came before (a HIP load error reads like a CUDA one; a watchdog like a watchdog). So when the
rules decide nothing, the log is compared with each class's centroid over the labelled
corpora (tf-idf of words, their CamelCase parts and adjacent pairs; the lines that say
error, fail, fault and the like count twice; paths left out). The closest class is a
guess, used only above a floor of similarity and always marked as a guess.

The centroids are data, ``resemblance.json`` beside this module, fitted by ``fit`` from the
labelled corpora (``benchmarks/triage_score.py --fit`` writes it; a unit test fails when the
file is not the fit of the corpora as they are). The rules always come first: where they
decide, the guess is never asked for. Standard library only: part of the lane package.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Tuple

MODEL = Path(__file__).with_name("resemblance.json")

# Below this cosine similarity the closest class is no better than any other: the log stays
# unclassified. Chosen on the rules' past misses (docs/triage.md, "Resemblance"): above it
# 44 of 80 guesses were right; of the 5 logs below it, 1 would have been.
FLOOR = 0.1
# Terms kept per class: the centroid's heaviest. Fewer makes a smaller file; on the past
# misses 300 guessed as well as the whole vocabulary (15,000 terms).
TERMS_PER_CLASS = 300
_DIGITS = 5

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_CAMEL_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
# Paths say where a user keeps their files, not what failed.
_PATHS = re.compile(r"File \"[^\"]*\"|/[\w.\-/]+")
_ERROR_LINE = re.compile(
    r"error|fail|fault|assert|abort|killed|timeout|timed out|not found|unable|cannot", re.I
)


def _words(text: str) -> List[str]:
    out = []
    for word in _WORD.findall(text):
        lowered = word.lower()
        out.append(lowered)
        out.extend(
            part.lower()
            for part in _CAMEL_PART.findall(word)
            if len(part) > 2 and part.lower() != lowered
        )
    # Adjacent pairs (no itertools.pairwise: the lane side runs on Python 3.8 too).
    return out + [f"{out[i]}_{out[i + 1]}" for i in range(len(out) - 1)]


def terms(text: str) -> List[str]:
    """The log's terms: every word once, and the error lines' words again."""
    text = _PATHS.sub(" ", text)
    out = _words(text)
    for line in text.splitlines():
        if _ERROR_LINE.search(line):
            out.extend(_words(line))
    return out


def _unit(vector: Mapping[str, float]) -> Dict[str, float]:
    norm = math.sqrt(sum(x * x for x in vector.values()))
    return {t: x / norm for t, x in vector.items()} if norm else {}


@dataclass(frozen=True)
class Guess:
    kind: str
    similarity: float
    # The next class and its similarity: how clear the choice was.
    runner_up: str
    runner_up_similarity: float

    def describe(self) -> str:
        return (
            f"{self.kind} {self.similarity:.2f}"
            f" (next {self.runner_up} {self.runner_up_similarity:.2f})"
        )


@dataclass(frozen=True)
class Centroids:
    """Per class, the unit centroid of its logs' tf-idf vectors; and the terms' idf."""

    idf: Mapping[str, float]
    classes: Mapping[str, Mapping[str, float]]

    def _vector(self, text: str) -> Dict[str, float]:
        counts = Counter(t for t in terms(text) if t in self.idf)
        return _unit({t: (1 + math.log(n)) * self.idf[t] for t, n in counts.items()})

    def similarities(self, text: str) -> List[Tuple[float, str]]:
        vector = self._vector(text)
        ranked = [
            (round(sum(x * centroid.get(t, 0.0) for t, x in vector.items()), _DIGITS), kind)
            for kind, centroid in self.classes.items()
        ]
        # Ties go to the class named first alphabetically, so a guess never depends on order.
        return sorted(ranked, key=lambda pair: (-pair[0], pair[1]))

    def guess(self, text: str) -> Optional[Guess]:
        """The closest class, or None when it is under ``FLOOR``."""
        ranked = self.similarities(text)
        if len(ranked) < 2 or ranked[0][0] < FLOOR:
            return None
        (best, kind), (second, runner_up) = ranked[0], ranked[1]
        return Guess(kind, best, runner_up, second)

    def to_json(self) -> Dict[str, object]:
        return {
            "idf": dict(sorted(self.idf.items())),
            "classes": {k: dict(sorted(v.items())) for k, v in sorted(self.classes.items())},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object], source: str = "centroids") -> Centroids:
        idf, classes = data.get("idf"), data.get("classes")
        if not isinstance(idf, dict):
            raise ValueError(f"{source}: key 'idf': expected an object of term weights")
        if not isinstance(classes, dict) or not all(isinstance(c, dict) for c in classes.values()):
            raise ValueError(f"{source}: key 'classes': expected an object per class")
        unknown = sorted({t for c in classes.values() for t in c} - set(idf))
        if unknown:
            raise ValueError(f"{source}: key 'classes': terms without an idf: {unknown[:5]}")
        return cls(idf, classes)


def fit(examples: Iterable[Tuple[str, str]]) -> Centroids:
    """Centroids of (text, kind) examples: each class's ``TERMS_PER_CLASS`` heaviest terms."""
    counted = [(Counter(terms(text)), kind) for text, kind in examples]
    frequency: Counter[str] = Counter()
    for counts, _ in counted:
        frequency.update(set(counts))
    idf = {t: math.log(len(counted) / (1 + n)) + 1 for t, n in frequency.items()}
    sums: Dict[str, Counter[str]] = defaultdict(Counter)
    for counts, kind in counted:
        sums[kind].update(_unit({t: (1 + math.log(n)) * idf[t] for t, n in counts.items()}))
    classes = {}
    for kind, total in sums.items():
        heaviest = sorted(total.items(), key=lambda item: (-item[1], item[0]))[:TERMS_PER_CLASS]
        classes[kind] = {t: round(x, _DIGITS) for t, x in _unit(dict(heaviest)).items()}
    kept = {t for centroid in classes.values() for t in centroid}
    return Centroids({t: round(idf[t], _DIGITS) for t in sorted(kept)}, classes)


def write(centroids: Centroids, path: Path = MODEL) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(centroids.to_json(), indent=0) + "\n", encoding="utf-8")
    temporary.replace(path)


@lru_cache(maxsize=None)
def shipped() -> Centroids:
    """The centroids this lane package ships (``resemblance.json``)."""
    try:
        data = json.loads(MODEL.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"{MODEL}: cannot read the centroids: {err}") from None
    return Centroids.from_json(data, str(MODEL))
