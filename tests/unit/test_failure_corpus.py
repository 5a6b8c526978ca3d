"""The signatures on a corpus of real failure logs from public issues (tests/fixtures/failure_corpus).

Class accuracy is printed and must stay at 95% or more; logs labelled as one bug share one
key; different bugs never share one; keys do not move when run-specific text changes, and do
when only the kernel does.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ci.smoke.contract.taxonomy import KINDS, compile_failure_kind
from ci.smoke.triage.signatures import Signature, signature_of

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "failure_corpus" / "corpus.toml"
MIN_CLASS_ACCURACY = 0.95
FACTS = ("pass", "kernel", "resource", "op")
LABEL_KEYS = {"id", "source", "kind", "text", "same_bug", "job", "test", "stage", *FACTS}


@dataclass(frozen=True)
class Log:
    id: str
    kind: str
    text: str
    labels: dict[str, str]
    same_bug: str
    job: dict[str, str]


def _load() -> list[Log]:
    raw = tomllib.loads(CORPUS.read_text(encoding="utf-8"))
    logs = []
    for entry in raw["log"]:
        unknown = set(entry) - LABEL_KEYS
        assert not unknown, f"{CORPUS}: log {entry.get('id')}: unknown keys {sorted(unknown)}"
        assert entry["kind"] in KINDS, f"{CORPUS}: log {entry['id']}: unknown kind"
        assert entry["source"].startswith("https://github.com/"), entry["id"]
        logs.append(
            Log(
                id=entry["id"],
                kind=entry["kind"],
                text=entry["text"],
                labels={f: entry[f] for f in FACTS if entry.get(f)},
                same_bug=entry.get("same_bug", ""),
                job=entry.get("job", {}),
            )
        )
    return logs


LOGS = _load()


def _sign(text: str, job: dict[str, Any], folder: Path, message: str = "") -> Signature:
    folder.mkdir(parents=True, exist_ok=True)
    record = folder / "failure.json"
    if job:
        record.write_text(json.dumps({"job": job}), encoding="utf-8")
    elif record.exists():
        record.unlink()
    return signature_of(message, text, folder)


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Signature]:
    root = tmp_path_factory.mktemp("corpus")
    return {log.id: _sign(log.text, log.job, root / log.id) for log in LOGS}


def test_corpus_is_big_enough_and_unique() -> None:
    assert len(LOGS) >= 40
    assert len({log.id for log in LOGS}) == len(LOGS)
    assert any(log.same_bug for log in LOGS)


def test_class_accuracy(signed: dict[str, Signature]) -> None:
    wrong = [
        (log.id, log.kind, signed[log.id].kind) for log in LOGS if signed[log.id].kind != log.kind
    ]
    right = len(LOGS) - len(wrong)
    facts = [(log, f, v) for log in LOGS for f, v in log.labels.items()]
    kept = sum(1 for log, f, v in facts if signed[log.id].detail(f) == v)
    print(
        f"\nfailure corpus: class right for {right} of {len(LOGS)} ({right / len(LOGS):.0%});"
        f" labelled facts (pass, kernel, resource, op) in the signature: {kept} of {len(facts)}"
    )
    for item in wrong:
        print("  wrong class:", *item)
    assert right / len(LOGS) >= MIN_CLASS_ACCURACY, wrong


def test_same_bug_shares_one_key(signed: dict[str, Signature]) -> None:
    groups: dict[str, set[str]] = defaultdict(set)
    for log in LOGS:
        if log.same_bug:
            groups[log.same_bug].add(signed[log.id].key)
    assert groups
    split = {bug: keys for bug, keys in groups.items() if len(keys) > 1}
    assert not split


def test_different_bugs_never_share_a_key(signed: dict[str, Signature]) -> None:
    owners: dict[str, set[str]] = defaultdict(set)
    for log in LOGS:
        owners[signed[log.id].key].add(log.same_bug or log.id)
    shared = {key: bugs for key, bugs in owners.items() if len(bugs) > 1}
    assert not shared


def test_no_key_is_all_placeholders(signed: dict[str, Signature]) -> None:
    empty = [i for i, s in signed.items() if all(p == "?" for p in s.key.split("|")[1:])]
    assert not empty


# Rewrites of what differs between two runs of one bug on two nodes.
_REWRITES = (
    (re.compile(r"(?<=/)(?:home|opt|root|tmp|usr|workspace|data)/"), "srv/node-7/scratch/"),
    (re.compile(r"\b0x[0-9a-fA-F]{9,}\b"), "0x00007ffc0ffee123"),
    (re.compile(r"\bpid=\d+"), "pid=99173"),
    (re.compile(r"\btmp[a-z0-9_]{6,}"), "tmpq8z_3kd0"),
    (re.compile(r"(?<=\.mlir\":)\d+:\d+|(?<=\.mlir:)\d+:\d+"), "731:4"),
    (re.compile(r"(?<=line )\d+"), "4242"),
)


def _rewritten(text: str) -> str:
    for pattern, replacement in _REWRITES:
        text = pattern.sub(replacement, text)
    return text


def test_keys_survive_rewriting_run_specific_text(
    signed: dict[str, Signature], tmp_path: Path
) -> None:
    changed = [log for log in LOGS if _rewritten(log.text) != log.text]
    assert len(changed) >= 20
    moved = [
        log.id
        for log in changed
        if _sign(_rewritten(log.text), log.job, tmp_path / log.id).key != signed[log.id].key
    ]
    assert not moved


def _renamed_kernel(log: Log, signed: dict[str, Signature], folder: Path) -> Signature:
    kernel = signed[log.id].detail("kernel") or ""
    job = {**log.job, "kernel": "other_kernel"} if "kernel" in log.job else log.job
    return _sign(log.text.replace(kernel, "other_kernel"), job, folder)


def test_the_kernel_is_a_detail_where_the_failure_names_itself(
    signed: dict[str, Signature], tmp_path: Path
) -> None:
    # A compile failure with a diagnostic or an abort: a report of the same bug may not
    # show the kernel, so the kernel is a detail and renaming it keeps the key.
    named = [
        log
        for log in LOGS
        if signed[log.id].detail("kernel")
        and signed[log.id].kind in ("pass_failure", "codegen", "frontend")
        and (
            signed[log.id].detail("diagnostic")
            or signed[log.id].detail("abort")
            or signed[log.id].kind != "pass_failure"
        )
    ]
    assert len(named) >= 5
    moved = [
        log.id
        for log in named
        if _renamed_kernel(log, signed, tmp_path / log.id).key != signed[log.id].key
    ]
    assert not moved


def test_the_kernel_is_in_the_key_of_a_catch_all(
    signed: dict[str, Signature], tmp_path: Path
) -> None:
    # A pass failure with no diagnostic and no abort (PassManager::run failed, a wrapped
    # OutOfResources) has nothing else that tells two bugs apart.
    catch_all = [
        log
        for log in LOGS
        if signed[log.id].kind == "pass_failure"
        and signed[log.id].detail("kernel")
        and not signed[log.id].detail("diagnostic")
        and not signed[log.id].detail("abort")
    ]
    assert len(catch_all) >= 3
    same = [
        log.id
        for log in catch_all
        if _renamed_kernel(log, signed, tmp_path / log.id).key == signed[log.id].key
    ]
    assert not same


def test_the_message_a_caller_passes_does_not_change_the_key(
    signed: dict[str, Signature], tmp_path: Path
) -> None:
    moved = []
    for log in LOGS:
        lines = [ln for ln in log.text.strip().splitlines() if ln.strip()]
        for message in (lines[0], lines[-1]):
            if _sign(log.text, log.job, tmp_path / log.id, message).key != signed[log.id].key:
                moved.append((log.id, message))
    assert not moved


_EXCEPTION = re.compile(r"^\s*(?:[\w.]+\.)?(?P<type>[A-Z]\w+): (?P<message>.*)$", re.MULTILINE)


def test_failure_kind_and_signature_kind_agree(tmp_path: Path) -> None:
    # The compile worker's failure_kind for the exception line and log, and the signature
    # of the record it writes: one taxonomy, one answer.
    checked = 0
    for log in LOGS:
        found = list(_EXCEPTION.finditer(log.text))
        if not found:
            continue
        error = found[-1]
        kind = compile_failure_kind(error["type"], error["message"], log.text)
        plain = _sign(log.text, log.job, tmp_path / log.id).kind
        assert kind == plain or (kind == "compile_error" and plain == "unclassified"), log.id
        folder = tmp_path / f"{log.id}-record"
        folder.mkdir()
        outcome = {"status": kind, "message": f"{error['type']}: {error['message']}"}
        (folder / "failure.json").write_text(json.dumps({"job": log.job, "outcome": outcome}))
        assert signature_of("", log.text, folder).kind == kind, log.id
        checked += 1
    assert checked >= 20
