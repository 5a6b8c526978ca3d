"""GitHub issue sync: one issue per new failure signature, kept up to date by every run.

- A new failure or regression the ledger does not know, whose signature has no open issue,
  opens one: the tests it hits, the pages to look at, and the report triage drafted beside
  the bundle (or, where there is none, the failure's text), labelled ``flagci`` and marked
  in its body with the signature's key.
- While the signature keeps failing, each run comments on its issue.
- When the ledger lists the signature under an issue whose claimed fix is verified (the
  issue's tests pass at that version), the run comments "fix verified in <version>" and
  closes it.

Through GitHub's REST API (``FLAGCI_GITHUB_API``, GitHub's by default) on the repository
``FLAGCI_ISSUE_REPO``, with the token in ``GITHUB_TOKEN``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from ci.core.errors import ConfigError, NotifyError
from ci.history.run_verdicts import RunVerdicts
from ci.history.verdicts import Verdict
from ci.publish import httpjson
from ci.smoke.contract.records import BUNDLE_NAME, REPORT_NAME

API_SETTING = "FLAGCI_GITHUB_API"
REPO_SETTING = "FLAGCI_ISSUE_REPO"
TOKEN_SETTING = "GITHUB_TOKEN"
DEFAULT_API = "https://api.github.com"
LABEL = "flagci"
PAGE = 100
MAX_TEXT = 20_000  # of a failure's text in an issue body (GitHub takes 65,536 in all)
_MARKER = re.compile(r"<!-- flagci-signature: ([0-9a-f]{16}) -->")


@dataclass(frozen=True)
class Tracker:
    api: str
    repo: str
    token: str = field(repr=False)

    def url(self, path: str) -> str:
        return f"{self.api.rstrip('/')}/repos/{self.repo}{path}"

    @property
    def headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self.token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
        }


@dataclass
class SyncResult:
    opened: list[int] = field(default_factory=list)
    commented: list[int] = field(default_factory=list)
    closed: list[int] = field(default_factory=list)


def tracker_from(repo: str, token: str, api: str = "") -> Tracker | None:
    """The tracker the settings (``$FLAGCI_ISSUE_REPO``, ``$GITHUB_TOKEN``,
    ``$FLAGCI_GITHUB_API``) name, or None when no repository is set."""
    if not repo:
        return None
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo):
        raise ConfigError(f"${REPO_SETTING}: '{repo}' is not owner/name")
    if not token:
        raise ConfigError(f"${REPO_SETTING} is set but ${TOKEN_SETTING} is not")
    return Tracker(api or DEFAULT_API, repo, token)


def key_of(signature: str) -> str:
    return hashlib.sha256(signature.encode()).hexdigest()[:16]


def _fence(text: str) -> str:
    """A Markdown code fence longer than any run of backticks in ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _what(verdict: Verdict) -> str:
    return f"regression of {verdict.regression_of}" if verdict.regression_of else "new"


def drafted_report(verdict: Verdict) -> str:
    """The upstream report triage drafted beside the failure's bundle (``bundle/report.md``,
    ci.smoke.triage.issuedraft), or "" where there is none (triage drafts one for compile
    failures)."""
    failure = verdict.failure
    if failure is None:
        return ""
    for path in failure.artifact_files:
        relative = Path(path)
        if relative.name == REPORT_NAME and relative.parent.name == BUNDLE_NAME:
            report = failure.run_dir / relative
            if report.is_file():
                return report.read_text(encoding="utf-8", errors="replace")[:MAX_TEXT]
    return ""


def draft(
    signature: str, verdicts: list[Verdict], run_id: str, link: Callable[[Verdict], str]
) -> str:
    """The issue's body: the signature's failures, then the drafted report of the first one
    (its failure text where triage drafted none)."""
    first = verdicts[0]
    failure = first.failure
    rows = "\n".join(
        f"| {v.lane} | `{v.test}` | {_what(v)} | [failure page]({link(v)}) |" for v in verdicts
    )
    head = (
        f"<!-- flagci-signature: {key_of(signature)} -->\n"
        f"flagci run `{run_id}` found {len(verdicts)} failing test(s) with the signature\n\n"
        f"{_fence(signature)}\n{signature}\n{_fence(signature)}\n\n"
        f"| lane | test | | |\n| --- | --- | --- | --- |\n{rows}\n\n"
    )
    report = drafted_report(first)
    if report:
        return head + f"### Drafted report ({first.lane})\n\n{report}\n"
    text = f"{failure.message}\n{failure.details}".strip()[:MAX_TEXT] if failure else ""
    fence = _fence(text)
    return head + (
        f"### Failure ({first.lane}, node {failure.node if failure else '?'})\n\n"
        f"{fence}text\n{text}\n{fence}\n"
    )


def _open_issues(tracker: Tracker) -> dict[str, int]:
    """Open issues labelled flagci, by signature key."""
    found: dict[str, int] = {}
    page = 1
    while True:
        answer = httpjson.request(
            "GET",
            tracker.url(f"/issues?state=open&labels={LABEL}&per_page={PAGE}&page={page}"),
            "GitHub: list issues",
            headers=tracker.headers,
        )
        issues = answer.json("GitHub: list issues")
        if not isinstance(issues, list):
            raise NotifyError(f"GitHub: list issues: not a list: {answer.text[:200]}")
        for issue in issues:
            if not isinstance(issue, dict) or "pull_request" in issue:
                continue
            marker = _MARKER.search(str(issue.get("body") or ""))
            if marker:
                found.setdefault(marker.group(1), int(issue["number"]))
        if len(issues) < PAGE:
            return found
        page += 1


def _comment(tracker: Tracker, number: int, text: str) -> None:
    httpjson.request(
        "POST",
        tracker.url(f"/issues/{number}/comments"),
        f"GitHub: comment on #{number}",
        body={"body": text},
        headers=tracker.headers,
    )


def sync(tracker: Tracker, run: RunVerdicts, link: Callable[[Verdict], str]) -> SyncResult:
    result = SyncResult()
    if not run.unknown and not any(c.issue.signatures for c in run.fixes_verified):
        return result  # nothing to open, comment on or close: GitHub is not asked
    issues = _open_issues(tracker)
    groups: dict[str, list[Verdict]] = {}
    for verdict in run.unknown:
        groups.setdefault(verdict.signature, []).append(verdict)
    for signature, verdicts in groups.items():
        number = issues.get(key_of(signature))
        if number is not None:
            tests = ", ".join(f"`{v.lane} {v.test}`" for v in verdicts[:10])
            _comment(tracker, number, f"Still failing in run `{run.run_id}`: {tests}")
            result.commented.append(number)
        elif any(v.new_failure or v.regression_of for v in verdicts):
            answer = httpjson.request(
                "POST",
                tracker.url("/issues"),
                "GitHub: open an issue",
                body={
                    "title": f"[flagci] {verdicts[0].lane}: {signature[:180]}",
                    "body": draft(signature, verdicts, run.run_id, link),
                    "labels": [LABEL],
                },
                headers=tracker.headers,
            )
            opened = answer.json("GitHub: open an issue")
            if not isinstance(opened, dict) or "number" not in opened:
                raise NotifyError(f"GitHub: open an issue: no number in {answer.text[:200]}")
            issues[key_of(signature)] = int(opened["number"])
            result.opened.append(int(opened["number"]))
    for check in run.fixes_verified:
        for signature in check.issue.signatures:
            number = issues.pop(key_of(signature), None)
            if number is None:
                continue
            _comment(
                tracker,
                number,
                f"fix verified in {check.version} (run `{run.run_id}`:"
                f" {check.passed} test(s) of {check.issue.id} pass on {', '.join(check.lanes)})",
            )
            httpjson.request(
                "PATCH",
                tracker.url(f"/issues/{quote(str(number))}"),
                f"GitHub: close #{number}",
                body={"state": "closed", "state_reason": "completed"},
                headers=tracker.headers,
            )
            result.closed.append(number)
    return result
