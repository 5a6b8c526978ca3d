"""Scores the failure signatures on the tuning corpus and on the frozen evaluation split.

For each set: class accuracy, the labelled key facts found in the signatures' details, the
same-bug groups given one key, the collisions (one key for different bugs) and the
confusion of classes. The triage figures of docs/triage.md are this script's output. Run from the
repository root:

    .venv/bin/python benchmarks/triage_score.py [--markdown]

tests/fixtures/failure_corpus/corpus.toml is the tuning set (rules are written against it);
every frozen*.toml beside it is a held-out evaluation split (frozen.toml, frozen2.toml, ...),
scored only and each scored separately: a later split is collected after the earlier ones
were read, so it measures what the rules do on logs nobody has looked at.

Where no rule decides, the signatures guess by resemblance to the labelled corpora
(``ci.smoke.contract.resemblance``). Each set here is scored with centroids fitted on the
other sets only, so no log is guessed from its own label. ``--fit`` writes the shipped
centroids, fitted on every set.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci.smoke.contract import resemblance
from ci.smoke.contract.taxonomy import KINDS, clean_log
from ci.smoke.triage.signatures import Signature, signature_of

CORPUS_DIR = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "failure_corpus"
TUNING = CORPUS_DIR / "corpus.toml"
FROZEN = CORPUS_DIR / "frozen.toml"


def frozen_files() -> list[tuple[str, Path]]:
    """Every frozen split, in order: ("frozen", frozen.toml), ("frozen-2", frozen2.toml), ..."""
    found = []
    for path in CORPUS_DIR.glob("frozen*.toml"):
        number = path.stem.removeprefix("frozen")
        found.append((int(number) if number.isdigit() else 1, path))
    return [(f"frozen-{n}" if n > 1 else "frozen", path) for n, path in sorted(found)]


# Labelled facts, compared with the signature's details of the same name.
FACTS = ("pass", "kernel", "resource", "op", "test", "stage")
ENTRY_KEYS = {"id", "source", "kind", "text", "same_bug", "job", *FACTS}


@dataclass(frozen=True)
class Log:
    id: str
    source: str
    kind: str
    text: str
    labels: dict[str, str]
    same_bug: str
    job: dict[str, Any]


def load(path: Path) -> list[Log]:
    """The corpus file's logs; an unknown field or kind is an error."""
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    logs = []
    for entry in raw["log"]:
        unknown = set(entry) - ENTRY_KEYS
        if unknown:
            raise ValueError(f"{path}: log {entry.get('id')}: unknown keys {sorted(unknown)}")
        if entry["kind"] not in KINDS:
            raise ValueError(f"{path}: log {entry['id']}: unknown kind {entry['kind']!r}")
        # A public page that shows the log: an issue, a pull request, a forum thread.
        if not entry["source"].startswith("https://"):
            raise ValueError(f"{path}: log {entry['id']}: source is not a public https link")
        logs.append(
            Log(
                id=entry["id"],
                source=entry["source"],
                kind=entry["kind"],
                text=entry["text"],
                labels={f: entry[f] for f in FACTS if entry.get(f)},
                same_bug=entry.get("same_bug", ""),
                job=entry.get("job", {}),
            )
        )
    ids = [log.id for log in logs]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: duplicate ids")
    return logs


def every_set() -> list[tuple[str, Path]]:
    return [("tuning", TUNING), *frozen_files()]


def fitted(leaving_out: str = "") -> resemblance.Centroids:
    """Centroids of every set's logs but ``leaving_out``'s (the text the signatures read)."""
    return resemblance.fit(
        (clean_log(log.text), log.kind)
        for name, path in every_set()
        if name != leaving_out
        for log in load(path)
    )


def sign(
    log: Log,
    folder: Path,
    text: str | None = None,
    message: str = "",
    centroids: resemblance.Centroids | None = None,
) -> Signature:
    """The signature the smoke harness would write: the job (if any) in failure.json."""
    folder.mkdir(parents=True, exist_ok=True)
    record = folder / "failure.json"
    if log.job:
        record.write_text(json.dumps({"job": log.job}), encoding="utf-8")
    elif record.exists():
        record.unlink()
    return signature_of(message, log.text if text is None else text, folder, centroids)


@dataclass
class Score:
    name: str
    logs: int = 0
    right: int = 0
    facts: int = 0
    facts_kept: int = 0
    groups: int = 0
    groups_one_key: int = 0
    collisions: list[tuple[str, list[str]]] = field(default_factory=list)
    confusion: Counter[tuple[str, str]] = field(default_factory=Counter)
    wrong: list[tuple[str, str, str]] = field(default_factory=list)
    lost: list[tuple[str, str, str, str]] = field(default_factory=list)
    split: dict[str, list[str]] = field(default_factory=dict)

    @property
    def accuracy(self) -> float:
        return self.right / self.logs if self.logs else 0.0


def score(name: str, logs: list[Log], signed: dict[str, Signature]) -> Score:
    result = Score(name, logs=len(logs))
    for log in logs:
        got = signed[log.id]
        result.confusion[(log.kind, got.kind)] += 1
        if got.kind == log.kind:
            result.right += 1
        else:
            result.wrong.append((log.id, log.kind, got.kind))
        for fact, value in log.labels.items():
            result.facts += 1
            if got.detail(fact) == value:
                result.facts_kept += 1
            else:
                result.lost.append((log.id, fact, value, got.detail(fact) or ""))
    groups: dict[str, set[str]] = defaultdict(set)
    for log in logs:
        if log.same_bug:
            groups[log.same_bug].add(signed[log.id].key)
    result.groups = len(groups)
    result.groups_one_key = sum(1 for keys in groups.values() if len(keys) == 1)
    result.split = {bug: sorted(keys) for bug, keys in groups.items() if len(keys) > 1}
    owners: dict[str, set[str]] = defaultdict(set)
    for log in logs:
        owners[signed[log.id].key].add(log.same_bug or log.id)
    result.collisions = [(key, sorted(bugs)) for key, bugs in owners.items() if len(bugs) > 1]
    return result


def score_file(name: str, path: Path) -> tuple[Score, dict[str, Signature]]:
    """The set scored with centroids fitted on the other sets."""
    logs = load(path)
    centroids = fitted(leaving_out=name)
    with tempfile.TemporaryDirectory() as tmp:
        signed = {log.id: sign(log, Path(tmp) / log.id, centroids=centroids) for log in logs}
    return score(name, logs, signed), signed


def summary_line(result: Score) -> str:
    return (
        f"{result.name}: classes right {result.right} of {result.logs}"
        f" ({result.accuracy:.0%}); key facts kept {result.facts_kept} of {result.facts};"
        f" same-bug groups with one key {result.groups_one_key} of {result.groups};"
        f" collisions {len(result.collisions)}"
    )


def confusion_table(results: list[Score]) -> str:
    """Markdown: one row per labelled class, the classes given, per set."""
    lines = ["| labelled | " + " | ".join(f"{r.name}: given" for r in results) + " |"]
    lines.append("| --- |" + " --- |" * len(results))
    labelled = sorted({k for r in results for k, _ in r.confusion})
    for kind in labelled:
        cells = []
        for r in results:
            given = Counter({g: n for (k, g), n in r.confusion.items() if k == kind})
            cells.append(
                ", ".join(
                    f"{g} {n}" if g == kind else f"**{g} {n}**" for g, n in given.most_common()
                )
                or "-"
            )
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def combined(name: str, results: list[Score]) -> Score:
    """The splits' figures summed, each split scored alone (a key is compared within its
    split only): what the README quotes beside the tuning set."""
    total = Score(name)
    for r in results:
        total.logs += r.logs
        total.right += r.right
        total.facts += r.facts
        total.facts_kept += r.facts_kept
        total.groups += r.groups
        total.groups_one_key += r.groups_one_key
        total.collisions += r.collisions
        total.confusion.update(r.confusion)
        total.wrong += r.wrong
    return total


def report(results: list[Score], verbose: bool = True) -> str:
    """Each set's figures, the frozen splits' together, the confusion of the tuning set
    beside all frozen splits, then per set."""
    frozen = combined("frozen splits, all", [r for r in results if r.name != "tuning"])
    out = [summary_line(r) for r in results] + [summary_line(frozen)]
    if verbose:
        for r in results:
            out += [f"  {r.name} wrong class: {i} labelled {k}, given {g}" for i, k, g in r.wrong]
            out += [f"  {r.name} collision: {key} <- {bugs}" for key, bugs in r.collisions]
            out += [f"  {r.name} same bug, keys: {b} -> {keys}" for b, keys in r.split.items()]
            out += [f"  {r.name} fact lost: {i} {f}={v!r} (got {g!r})" for i, f, v, g in r.lost]
    tuning = [r for r in results if r.name == "tuning"]
    out += ["", confusion_table([*tuning, frozen]), "", confusion_table(results)]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quiet", action="store_true", help="figures and table only")
    parser.add_argument(
        "--fit", action="store_true", help=f"write {resemblance.MODEL.name}, fitted on every set"
    )
    args = parser.parse_args()
    if args.fit:
        resemblance.write(fitted())
        print(f"wrote {resemblance.MODEL}")
        return
    results = [score_file(name, path)[0] for name, path in every_set()]
    print(report(results, verbose=not args.quiet))


if __name__ == "__main__":
    main()
