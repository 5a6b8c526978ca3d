"""How far two labellers agree on the class of a held-out log, and the code on either.

Every frozen split's labels are one person's reading of a log. A second pair of people
labelled frozen-17 to frozen-23 again, blind (``second_opinion.toml``: excerpts only,
shuffled, the same written class descriptions). Their agreement bounds what a score against
one labeller can say: a log the two read differently has no one right class. This prints
the agreement, the pairs of classes they differ on, and the code's classes now against the
first labels, the second, and the logs both agree on. With ``--first``, it also gives each
split's first, blind answers (that split's commit, as ``resemblance_before.py`` replays
them) on the logs both agree on. Run from the repository root (``--first``: a clone with
its history, a few minutes):

    .venv/bin/python benchmarks/label_agreement.py [--first]
"""

from __future__ import annotations

import argparse
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from benchmarks import resemblance_before, triage_score
from ci.smoke.contract.taxonomy import KINDS

SECOND = triage_score.CORPUS_DIR / "second_opinion.toml"
# The splits labelled twice, and the commit that added each (its first, blind answers).
RELABELLED = {
    17: "5d6ab6e",
    18: "1562d9d",
    19: "e779a3d",
    20: "7349709",
    21: "7a918c8",
    22: "436a3b5",
    23: "5e96123",
    24: "a9c08c0",
    25: "67ed98e",
    26: "d260aad",
    # The loader's commit after the one that added frozen-27: it reads a forum link as a
    # source; no rule changed between the two.
    27: "5ddee41",
    28: "93dd079",
    29: "7a643d5",
    30: "a18bcd0",
    31: "af43f24",
    32: "95173ce",
    33: "eeba1e5",
    34: "4647973",
    35: "041182d",
}


@dataclass(frozen=True)
class SecondLabel:
    kind: str
    sure: bool


def second_labels(path: Path = SECOND) -> dict[str, SecondLabel]:
    """The second labellers' classes by log id; a bad entry names the file and the key."""
    labels: dict[str, SecondLabel] = {}
    for index, entry in enumerate(tomllib.loads(path.read_text(encoding="utf-8"))["label"]):
        where = f"{path}: label {index + 1}"
        if set(entry) != {"id", "kind", "sure"}:
            raise ValueError(f"{where}: keys {sorted(entry)}, expected id, kind and sure")
        if entry["kind"] not in KINDS:
            raise ValueError(f"{where}: key 'kind': unknown kind {entry['kind']!r}")
        if entry["id"] in labels:
            raise ValueError(f"{where}: key 'id': {entry['id']!r} labelled twice")
        labels[entry["id"]] = SecondLabel(entry["kind"], bool(entry["sure"]))
    return labels


def first_labels() -> dict[str, str]:
    sets = dict(triage_score.every_set())
    return {
        log.id: log.kind
        for split in RELABELLED
        for log in triage_score.load(sets[f"frozen-{split}"])
    }


def code_now() -> dict[str, str]:
    """The code's classes now (each split guessed with centroids fitted without it)."""
    sets = dict(triage_score.every_set())
    classes: dict[str, str] = {}
    for split in RELABELLED:
        _, signed = triage_score.score_file(f"frozen-{split}", sets[f"frozen-{split}"])
        classes.update({i: s.kind for i, s in signed.items()})
    return classes


def code_first() -> dict[str, str]:
    """Each split's first, blind classes: the rules and guess at the commit that added it."""
    classes: dict[str, str] = {}
    for split, commit in RELABELLED.items():
        classes.update(resemblance_before.classes_then(commit, split))
    return classes


def _share(right: int, total: int) -> str:
    return f"{right} of {total} ({right / total:.0%})"


def report(
    first: dict[str, str], second: dict[str, SecondLabel], code: dict[str, dict[str, str]]
) -> str:
    missing = sorted(set(first) ^ set(second))
    if missing:
        raise ValueError(f"{SECOND}: ids not in both label sets: {missing[:5]}")
    both = [i for i in first if first[i] == second[i].kind]
    sure = [i for i in first if second[i].sure]
    agreed = _share(len(both), len(first))
    lines = [
        f"Two labellings of frozen-{min(RELABELLED)} to frozen-{max(RELABELLED)}:"
        f" the same class for {agreed} of the logs;"
        f" {_share(sum(first[i] == second[i].kind for i in sure), len(sure))}"
        " of those the second labellers were sure of.",
        "",
        "| first label | second label | logs |",
        "| --- | --- | --- |",
    ]
    differ = Counter((first[i], second[i].kind) for i in first if first[i] != second[i].kind)
    lines += [
        f"| {a} | {b} | {n} |" for (a, b), n in sorted(differ.items(), key=lambda x: (-x[1], x[0]))
    ]
    lines += [
        "",
        "| the code's classes | against the first | against the second | where both agree |",
    ]
    lines += ["| --- | --- | --- | --- |"]
    for name, classes in code.items():
        lines.append(
            f"| {name} | {_share(sum(classes[i] == first[i] for i in first), len(first))}"
            f" | {_share(sum(classes[i] == second[i].kind for i in first), len(first))}"
            f" | {_share(sum(classes[i] == first[i] for i in both), len(both))} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first", action="store_true", help="replay the first, blind answers")
    args = parser.parse_args(argv)
    code = {"now (every split read)": code_now()}
    if args.first:
        code["first, blind"] = code_first()
    print(report(first_labels(), second_labels(), code))


if __name__ == "__main__":
    main()
