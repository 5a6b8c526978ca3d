"""The known-issue ledger: failures already reported upstream, and the fixes vendors claimed.

Parsed once from ``ci/data/known_issues.toml`` into frozen models; every error names the
file, the issue and the key.
"""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictStr, field_validator

from ci.core import datafile

IssueId = Annotated[StrictStr, Field(pattern=r"^[a-z0-9][a-z0-9.+_-]*$")]
Version = Annotated[StrictStr, Field(min_length=1)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class KnownIssue(_Model):
    id: IssueId
    title: Annotated[StrictStr, Field(min_length=1)]
    upstream: Annotated[StrictStr, Field(pattern=r"^https://")]
    vendors: tuple[StrictStr, ...] = ()
    pattern: Annotated[StrictStr, Field(min_length=1)]
    signatures: tuple[StrictStr, ...] = ()
    tests: Annotated[StrictStr, Field(min_length=1)]
    affected: tuple[Version, ...] = ()
    claimed_fixes: tuple[Version, ...] = ()
    note: StrictStr = ""

    @field_validator("pattern", "tests")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as err:
            raise ValueError(f"not a valid regular expression: {err}") from None
        return value

    @cached_property
    def pattern_re(self) -> re.Pattern[str]:
        return re.compile(self.pattern)

    @cached_property
    def tests_re(self) -> re.Pattern[str]:
        return re.compile(self.tests)

    def applies_to(self, vendor: str) -> bool:
        return not self.vendors or vendor in self.vendors

    def expected_at(self, version: str) -> bool:
        """Whether the issue is expected at a compiler ``version``: no versions are listed,
        or it is an affected one, or one a fix was claimed for (a failure there is the issue,
        and its fix check says "claimed fix not verified")."""
        return not self.affected or version in self.affected or version in self.claimed_fixes

    def matches(self, vendor: str, version: str, signature: str, text: str, test: str = "") -> bool:
        """Whether a failure of ``test`` on a ``vendor`` lane at compiler ``version`` is this
        issue.

        A listed signature decides when the testcase carries one; otherwise the pattern
        is searched in the failure text, and only for the issue's tests: a catch-all
        message (``uni_sram``) from another kernel is another bug.
        """
        if not self.applies_to(vendor) or not self.expected_at(version):
            return False
        if signature and signature in self.signatures:
            return True
        if test and self.tests_re.search(test) is None:
            return False
        return self.pattern_re.search(text) is not None


class Ledger(_Model):
    source: StrictStr
    issue: tuple[KnownIssue, ...] = ()

    @field_validator("issue")
    @classmethod
    def _unique_ids(cls, issues: tuple[KnownIssue, ...]) -> tuple[KnownIssue, ...]:
        seen: set[str] = set()
        for issue in issues:
            if issue.id in seen:
                raise ValueError(f"issue id '{issue.id}' is used twice")
            seen.add(issue.id)
        return issues

    @property
    def issues(self) -> tuple[KnownIssue, ...]:
        return self.issue

    def match(
        self, vendor: str, version: str, signature: str, text: str, test: str = ""
    ) -> KnownIssue | None:
        for issue in self.issue:
            if issue.matches(vendor, version, signature, text, test):
                return issue
        return None


def default_ledger_path() -> Path:
    return datafile.packaged("known_issues.toml")


def load_ledger(path: Path | None = None) -> Ledger:
    """Read and validate the ledger; raise ConfigError naming file, issue and key."""
    return datafile.load(
        Ledger,
        path or default_ledger_path(),
        what="known-issue ledger",
        entries={"issue": datafile.Entries("issue", key="id")},
    )
