"""The webhook notifier: one message per run that found new failures or regressions.

The webhook's URL is a setting (``FLAGCI_WEBHOOK_URL``, read by the command layer), never
in the repository; its format (``FLAGCI_WEBHOOK_FORMAT``: ``feishu`` or ``slack``, Slack's
incoming webhooks by default) decides the body. Known failures, old failures and everything
else are in the run's summary, not in a message: a message means someone should look today.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ci.core.errors import ConfigError, NotifyError
from ci.history.run_verdicts import RunOutcome, RunVerdicts
from ci.history.verdicts import Verdict
from ci.publish import httpjson

URL_SETTING = "FLAGCI_WEBHOOK_URL"
FORMAT_SETTING = "FLAGCI_WEBHOOK_FORMAT"
MAX_LINES = 20

Format = Literal["feishu", "slack"]


@dataclass(frozen=True)
class Webhook:
    url: str
    format: Format


def webhook_from(url: str, kind: str = "slack") -> Webhook | None:
    """The webhook the settings (``$FLAGCI_WEBHOOK_URL``, ``$FLAGCI_WEBHOOK_FORMAT``)
    name, or None when there is none."""
    if not url:
        return None
    if kind not in ("feishu", "slack"):
        raise ConfigError(f"${FORMAT_SETTING}: '{kind}' is neither 'feishu' nor 'slack'")
    if not url.startswith(("https://", "http://")):
        raise ConfigError(f"${URL_SETTING}: not an http(s) URL")
    return Webhook(url, "feishu" if kind == "feishu" else "slack")


def news(run: RunVerdicts) -> tuple[Verdict, ...]:
    """What a message is sent for: new failures and regressions the ledger does not know."""
    seen: set[tuple[str, str]] = set()
    found = []
    for verdict in (*run.regressions, *run.new):
        if (verdict.lane, verdict.test) not in seen:
            seen.add((verdict.lane, verdict.test))
            found.append(verdict)
    return tuple(found)


def message(outcome: RunOutcome, link: Callable[[Verdict], str]) -> str:
    items = news(outcome.verdicts)
    lines = [
        f"flagci run {outcome.run_id}: {len(items)} new failure(s) or regression(s);"
        f" exit {outcome.exit_code}"
    ]
    for verdict in items[:MAX_LINES]:
        what = f"regression (passes on {verdict.regression_of})" if verdict.regression_of else "new"
        lines.append(f"- {verdict.lane} {verdict.test}: {what} {link(verdict)}")
    if len(items) > MAX_LINES:
        lines.append(f"... and {len(items) - MAX_LINES} more")
    return "\n".join(lines)


def body(hook: Webhook, text: str) -> dict[str, object]:
    if hook.format == "feishu":
        return {"msg_type": "text", "content": {"text": text}}
    return {"text": text}


def send(hook: Webhook, outcome: RunOutcome, link: Callable[[Verdict], str]) -> bool:
    """Post the run's message if it found news; return whether one was posted."""
    if not news(outcome.verdicts):
        return False
    what = f"{hook.format} webhook"
    answer = httpjson.request("POST", hook.url, what, body=body(hook, message(outcome, link)))
    if hook.format == "feishu":
        # Feishu answers 200 with an error code in the body.
        reply = answer.json(what)
        code = reply.get("code", reply.get("StatusCode")) if isinstance(reply, dict) else None
        if code != 0:
            raise NotifyError(f"{what}: refused the message: {answer.text[:300]}")
    elif answer.text.strip() != "ok":
        raise NotifyError(f"{what}: unexpected answer: {answer.text[:300]!r}")
    return True
