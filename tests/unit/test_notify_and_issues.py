"""News after a run: the webhook (Feishu, Slack) and the GitHub issue sync, through the
product's real HTTP client against a loopback server (tests/fixtures/loopback_http.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci.commands.options import publishing_from
from ci.core.errors import ConfigError, NewFailureError, NotifyError, UnknownFailureError
from ci.history.ledger import Ledger, load_ledger
from ci.history.store import Store
from ci.publish import after_run
from tests.fixtures.history_runs import LANES, Case, LaneSpec, finished, write_run
from tests.fixtures.loopback_http import TOKEN, LoopbackState, loopback_server

CPU = "cpu-triton-3.6.0"
FIXED = "cpu-triton-3.7.0"
SPECS = {CPU: LANES[CPU], FIXED: LaneSpec("cpu", "triton", "3.7.0")}
SIGNATURE = "pass_failure|?|TritonGPUPipeline|operand #0 does not dominate this use|?|k.py:7:3"
BROKEN = Case(CPU, "s::t", "failed", "PassManager::run failed", {"signature": SIGNATURE})


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopbackState]:
    with loopback_server() as state:
        monkeypatch.setenv("FLAGCI_WEBHOOK_URL", f"{state.base}/feishu/hook-secret")
        monkeypatch.setenv("FLAGCI_WEBHOOK_FORMAT", "feishu")
        monkeypatch.setenv("FLAGCI_ISSUE_REPO", "flagos-ai/flagci-nightly")
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("FLAGCI_GITHUB_API", state.base)
        yield state


class Nights:
    """Runs stored one after another, each finished as ``flagci run`` finishes it."""

    def __init__(self, tmp_path: Path) -> None:
        self.results = tmp_path / "results"
        self.store = Store(self.results / "history.sqlite")
        self.count = 0

    def run(self, cases: list[Case], ledger: Ledger | None = None) -> object:
        lanes = {c.lane: SPECS[c.lane] for c in cases}
        folder = write_run(self.results, self.count, cases, lanes=lanes)
        self.count += 1
        self.store.ingest(folder)
        return after_run.after_run(
            finished(folder),
            store=self.store,
            ledger=ledger or load_ledger(),
            dashboard=None,
            publishing=publishing_from(os.environ),
        ).error


def _ledger_with_the_fix(tmp_path: Path) -> Ledger:
    path = tmp_path / "known_issues.toml"
    path.write_text(
        f"""[[issue]]
id = "cpu-dominance"
title = "A pipeline pass breaks dominance"
upstream = "https://github.com/triton-lang/triton/issues/1"
vendors = ["cpu"]
pattern = "does not dominate"
signatures = ['{SIGNATURE}']
tests = 's::t'
affected = ["3.6.0"]
claimed_fixes = ["3.7.0"]
"""
    )
    return load_ledger(path)


def test_a_new_failure_posts_once_opens_one_issue_and_the_verified_fix_closes_it(
    tmp_path: Path, server: LoopbackState
) -> None:
    nights = Nights(tmp_path)
    assert nights.run([Case(CPU, "s::t")]) is None
    assert server.requests == []  # nothing new: nothing posted, no issue asked for

    error = nights.run([BROKEN])
    assert isinstance(error, NewFailureError) and error.exit_code == 11
    (post,) = server.calls("POST", "/feishu/")
    assert post.body["msg_type"] == "text"
    assert f"{CPU} s::t: new" in post.body["content"]["text"]
    (issue,) = server.issues.values()
    assert issue["labels"] == ["flagci"] and SIGNATURE in issue["body"]
    assert "PassManager::run failed" in issue["body"] and issue["title"].startswith("[flagci]")

    nights.run([BROKEN])  # still failing: a comment, no second message, no second issue
    assert len(server.calls("POST", "/feishu/")) == 1 and len(server.issues) == 1
    assert server.comments[1] == [
        f"Still failing in run `{'20261103T020000Z-nightly'}`: `{CPU} s::t`"
    ]

    # The vendor claims a fix in 3.7.0; the ledger says so; the 3.7.0 lane passes the test.
    ledger = _ledger_with_the_fix(tmp_path)
    assert nights.run([BROKEN, Case(FIXED, "s::t")], ledger) is None
    assert server.issues[1]["state"] == "closed"
    assert server.comments[1][-1].startswith("fix verified in 3.7.0")
    assert len(server.calls("POST", "/feishu/")) == 1


def test_the_issue_is_opened_with_the_report_triage_drafted(
    tmp_path: Path, server: LoopbackState
) -> None:
    results = tmp_path / "results"
    store = Store(results / "history.sqlite")
    store.ingest(write_run(results, 0, [Case(CPU, "s::t")]))
    broken = Case(
        CPU,
        "s::t",
        "failed",
        "PassManager::run failed",
        {"signature": SIGNATURE, "artifacts": "artifacts/s_t"},
    )
    folder = write_run(results, 1, [broken])
    bundle = folder / "artifacts" / "s_t" / "bundle"
    bundle.mkdir(parents=True)
    (bundle / "report.md").write_text(
        "## Environment\n\n| triton | 3.6.0 |\n\nReplay: `python replay.py`\n"
    )
    store.ingest(folder)
    outcome = after_run.after_run(
        finished(folder),
        store=store,
        ledger=load_ledger(),
        dashboard=None,
        publishing=publishing_from(os.environ),
    )
    assert isinstance(outcome.error, NewFailureError)
    (issue,) = server.issues.values()
    assert f"### Drafted report ({CPU})" in issue["body"]
    assert "Replay: `python replay.py`" in issue["body"] and SIGNATURE in issue["body"]


def test_slack_format(
    tmp_path: Path, server: LoopbackState, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLAGCI_WEBHOOK_URL", f"{server.base}/slack/T000/B000/XXXX")
    monkeypatch.setenv("FLAGCI_WEBHOOK_FORMAT", "slack")
    monkeypatch.delenv("FLAGCI_ISSUE_REPO")
    nights = Nights(tmp_path)
    nights.run([Case(CPU, "s::t")])
    nights.run([BROKEN])
    (post,) = server.calls("POST", "/slack/")
    assert set(post.body) == {"text"} and "1 new failure(s)" in post.body["text"]
    assert server.calls("GET", "/repos/") == []


def test_a_refused_or_unreachable_webhook_is_exit_9_unless_the_verdict_says_more(
    tmp_path: Path, server: LoopbackState, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FLAGCI_ISSUE_REPO")
    monkeypatch.setenv("FLAGCI_WEBHOOK_URL", f"{server.base}/nowhere/hook")
    nights = Nights(tmp_path)
    nights.run([Case(CPU, "s::t")])
    error = nights.run([BROKEN])
    assert isinstance(error, NewFailureError)  # the verdict outranks the failed post

    with loopback_server() as gone:
        closed = gone.base
    monkeypatch.setenv("FLAGCI_WEBHOOK_URL", f"{closed}/feishu/hook-secret")
    from ci.history import run_verdicts
    from ci.publish import notify

    history = nights.store.evaluate(load_ledger())
    run = run_verdicts.of_run(history, history.runs[-1].run_id)
    hook = publishing_from(os.environ).webhook
    assert hook is not None
    with pytest.raises(NotifyError, match="unreachable") as caught:
        notify.send(hook, run_verdicts.RunOutcome(run), lambda v: "x")
    assert "hook-secret" not in str(caught.value)  # the URL's secret path is never echoed


def test_a_bad_token_is_logged_and_the_verdict_still_decides(
    tmp_path: Path,
    server: LoopbackState,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "wrong")
    monkeypatch.delenv("FLAGCI_WEBHOOK_URL")
    nights = Nights(tmp_path)
    error = nights.run([Case(CPU, "s::t", "failed", "boom")])
    assert isinstance(error, UnknownFailureError) and error.exit_code == 12
    assert "answered 401" in caplog.text and "Bad credentials" in caplog.text
    assert TOKEN not in caplog.text and "wrong" not in caplog.text


def test_an_unusable_tracker_setting_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from ci.publish import issue_sync

    with pytest.raises(ConfigError, match="GITHUB_TOKEN is not"):
        issue_sync.tracker_from("o/r", "")
    with pytest.raises(ConfigError, match="not owner/name"):
        issue_sync.tracker_from("o/r/x", "t")
    assert issue_sync.tracker_from("", "") is None
    unusable = publishing_from({"FLAGCI_ISSUE_REPO": "o/r"}).unusable
    assert [str(e) for e in unusable] == ["$FLAGCI_ISSUE_REPO is set but $GITHUB_TOKEN is not"]
