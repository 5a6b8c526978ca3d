"""The one HTTP client of the controller: JSON requests to webhooks and the GitHub API.

Every failure (refused, unreachable, not JSON where JSON was promised) is a NotifyError
naming what was asked of whom; URLs are never echoed with their query strings, which is
where webhook secrets live.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from ci.core.errors import NotifyError

TIMEOUT_S = 15.0
MAX_RESPONSE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Response:
    status: int
    text: str
    headers: Mapping[str, str]

    def json(self, what: str) -> object:
        try:
            return json.loads(self.text)
        except json.JSONDecodeError:
            raise NotifyError(f"{what}: the answer is not JSON: {self.text[:200]!r}") from None


def where(url: str) -> str:
    """A URL without its path's secrets: scheme, host and port only."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def request(
    method: str,
    url: str,
    what: str,
    *,
    body: object | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """Send a JSON request; a status of 400 or more is a NotifyError."""
    data = None if body is None else json.dumps(body).encode("utf-8")
    sent = {"Accept": "application/json", "User-Agent": "flagci", **(headers or {})}
    if data is not None:
        sent["Content-Type"] = "application/json; charset=utf-8"
    outgoing = urllib.request.Request(url, data=data, method=method, headers=sent)
    try:
        with urllib.request.urlopen(outgoing, timeout=TIMEOUT_S) as answer:
            text = answer.read(MAX_RESPONSE_BYTES).decode("utf-8", "replace")
            return Response(answer.status, text, dict(answer.headers))
    except urllib.error.HTTPError as err:
        detail = err.read(2000).decode("utf-8", "replace")
        raise NotifyError(f"{what}: {where(url)} answered {err.code}: {detail}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise NotifyError(f"{what}: {where(url)} unreachable: {reason}") from None
