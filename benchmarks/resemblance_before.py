"""What the resemblance guess would have added to each frozen split's first, blind score.

Each frozen split from frozen-3 on was committed before the code's first run on it. For each,
this checks out that commit (a git worktree), runs that commit's rules on the split, and
takes the logs they left unclassified. Those are guessed with centroids fitted on what was
labelled before the split (the tuning set and the earlier splits) and never on the split:
the guess is scored as it would have been that day. Docs/triage.md quotes the output. Run
from the repository root of a clone with its history (a few minutes):

    .venv/bin/python benchmarks/resemblance_before.py
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import triage_score
from ci.smoke.contract import resemblance
from ci.smoke.contract.taxonomy import clean_log

ROOT = Path(__file__).resolve().parents[1]
# The commit that added each split: its rules are the ones the split was first scored with.
FIRST_SCORED_AT = {
    3: "8c15ec3",
    4: "ccdfef4",
    5: "4f5e478",
    6: "79e4a83",
    7: "803dbf8",
    8: "d0ce43e",
    9: "8ec1cd2",
    10: "c18653e",
    11: "3bbb70f",
    12: "88bfc0a",
    13: "c6ef35f",
    14: "3e36cf8",
    15: "ac25be5",
    16: "504a55f",
}
# Run inside the old worktree: that commit's classes for the split, as JSON.
_OLD_CLASSES = """
import json, sys
from pathlib import Path
sys.path.insert(0, "benchmarks")
import triage_score
_, signed = triage_score.score_file(sys.argv[1], Path(sys.argv[2]))
print(json.dumps({i: s.kind for i, s in signed.items()}))
"""


def classes_then(commit: str, split: int) -> dict[str, str]:
    """The classes the rules at ``commit`` gave the split's logs."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(tree), commit],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        try:
            done = subprocess.run(
                [sys.executable, "-c", _OLD_CLASSES, f"frozen-{split}", f"{tree}/{_path(split)}"],
                cwd=tree,
                env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
                check=True,
                capture_output=True,
                text=True,
            )
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=True
            )
    classes: dict[str, str] = json.loads(done.stdout)
    return classes


def _path(split: int) -> str:
    return f"tests/fixtures/failure_corpus/frozen{split}.toml"


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    sets = dict(triage_score.every_set())
    names = [name for name, _ in triage_score.every_set()]
    total = rules_right = guessed = guessed_right = unclassified = 0
    print("| split | logs | rules right, blind | unclassified | guessed | guessed right |")
    print("| --- | --- | --- | --- | --- | --- |")
    for split, commit in FIRST_SCORED_AT.items():
        name = f"frozen-{split}"
        before = names[: names.index(name)]
        centroids = resemblance.fit(
            (clean_log(log.text), log.kind) for n in before for log in triage_score.load(sets[n])
        )
        logs = triage_score.load(sets[name])
        then = classes_then(commit, split)
        right = sum(then[log.id] == log.kind for log in logs)
        left = [log for log in logs if then[log.id] == "unclassified"]
        guesses = [(log, centroids.guess(clean_log(log.text))) for log in left]
        made = [(log, g) for log, g in guesses if g is not None]
        good = sum(g.kind == log.kind for log, g in made)
        print(f"| {name} | {len(logs)} | {right} | {len(left)} | {len(made)} | {good} |")
        total, rules_right = total + len(logs), rules_right + right
        unclassified, guessed, guessed_right = (
            unclassified + len(left),
            guessed + len(made),
            guessed_right + good,
        )
    print(
        f"| all | {total} | {rules_right} ({rules_right / total:.0%}) | {unclassified} |"
        f" {guessed} | {guessed_right} |"
    )
    print(
        f"\nRules, blind: {rules_right} of {total} ({rules_right / total:.0%}); with the guess:"
        f" {rules_right + guessed_right} of {total} ({(rules_right + guessed_right) / total:.0%})"
    )


if __name__ == "__main__":
    main()
