"""How much the way a log is wrapped moves its class and its key.

The same failure reaches the triage in many wrappings: a CI service's timestamps, a compose
service's name, a test runner's worker tag, Python's logging header, a quote in an issue,
colour codes, a web page's HTML escapes. None of them changes what failed, so none may
change the class or the key. This wraps every labelled log of the corpora (tuning and frozen
splits) in each form below and counts the logs whose class or key moved; the rules alone
decide (no resemblance guess), so a move is the rules' own. A log of one line has no other
lines to show which part of it is a header: only the known forms are cut there, and the
table counts such logs apart. README's triage section quotes the output. Run from the
repository root (about a minute):

    .venv/bin/python benchmarks/triage_wrappers.py
"""

from __future__ import annotations

import argparse
import html
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from benchmarks import triage_score
from ci.smoke.contract import resemblance

# No guess: what moves is the rules'.
RULES_ALONE = resemblance.Centroids({}, {})


def _each_line(header: Callable[[int], str]) -> Callable[[str], str]:
    return lambda text: "\n".join(header(i) + line for i, line in enumerate(text.splitlines()))


def _python_logging(i: int) -> str:
    level = ("INFO", "ERROR", "WARNING")[i % 3]  # the level varies line by line
    return f"2026-12-01 07:00:{i % 60:02d},{i * 7 % 1000:03d} - vllm.worker - {level} - "


# Each wrapping as its tool writes it, applied to every line of a log (or to the whole text).
WRAPPERS: dict[str, Callable[[str], str]] = {
    "GitHub Actions timestamps": _each_line(lambda i: f"2026-12-01T07:00:{i % 60:02d}.1234567Z "),
    "Jenkins timestamper": _each_line(lambda i: f"[2026-12-01T07:00:{i % 60:02d}.123Z] "),
    "docker compose service": _each_line(lambda i: "vllm-worker-1  | "),
    "pytest-xdist worker": _each_line(lambda i: "[gw3] "),
    "Kubernetes pod tag": _each_line(lambda i: "[pod/trainer-0/main] "),
    "Python logging header": _each_line(_python_logging),
    "quoted in an issue": _each_line(lambda i: "> "),
    "ANSI colour": lambda text: "\n".join(f"\x1b[31m{line}\x1b[0m" for line in text.splitlines()),
    "HTML escapes": html.escape,
    "CRLF line ends": lambda text: text.replace("\n", "\r\n"),
}


def _lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())


def moved(
    logs: Iterable[triage_score.Log], wrap: Callable[[str], str], folder: Path
) -> list[tuple[triage_score.Log, str]]:
    """The logs whose class or key the wrapping changes, each with what changed."""
    out = []
    for log in logs:
        plain = triage_score.sign(log, folder / log.id, centroids=RULES_ALONE)
        wrapped = triage_score.sign(log, folder / log.id, wrap(log.text), centroids=RULES_ALONE)
        if wrapped.kind != plain.kind:
            out.append((log, f"class {plain.kind} -> {wrapped.kind}"))
        elif wrapped.key != plain.key:
            out.append((log, f"key {plain.key!r} -> {wrapped.key!r}"))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="name every log that moved")
    args = parser.parse_args(argv)
    logs = [log for _, path in triage_score.every_set() for log in triage_score.load(path)]
    single = sum(_lines(log.text) < 2 for log in logs)
    print(f"{len(logs)} labelled logs ({single} of one line)\n")
    print("| wrapping | class moved | key moved | of them, logs of one line |")
    print("| --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for name, wrap in WRAPPERS.items():
            changes = moved(logs, wrap, Path(tmp))
            kinds = sum(change.startswith("class") for _, change in changes)
            one_line = sum(_lines(log.text) < 2 for log, _ in changes)
            print(f"| {name} | {kinds} | {len(changes) - kinds} | {one_line} |")
            if args.verbose:
                for log, change in changes:
                    print(f"|   {log.id} | {change} | | |")


if __name__ == "__main__":
    main()
