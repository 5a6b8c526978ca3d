"""The HTML templates (``ci/results/templates/``) shared by the run report and the dashboard.

One Jinja2 environment, autoescape on for every template: whatever came from a test (names,
messages, properties, file names) is escaped by the template engine, never by hand.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape


@cache
def environment() -> Environment:
    return Environment(
        loader=PackageLoader("ci.results", "templates"),
        autoescape=select_autoescape(["html"], default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
