"""JUnit of a run: read each (node, lane) file safely, merge them into ``merged.xml``.

Files may come back from nodes, so they are parsed with defusedxml (no entity expansion,
no external entities, no network) and size-capped before junitparser sees them.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException
from junitparser import Error, Failure, JUnitXmlError, Skipped
from junitparser.xunit2 import JUnitXml, TestCase, TestSuite

from ci import atomic
from ci.errors import ReportError

MAX_JUNIT_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class CaseResult:
    """One testcase, flattened for reports and tables."""

    suite: str
    classname: str
    name: str
    outcome: str  # passed | failed | error | skipped
    seconds: float
    message: str = ""
    text: str = ""
    properties: dict[str, str] = field(default_factory=dict)

    @property
    def test_id(self) -> str:
        return f"{self.classname}::{self.name}"

    @property
    def lane(self) -> str:
        return self.properties.get("lane", self.suite)

    @property
    def node(self) -> str:
        return self.properties.get("node", "")


def _safe_parse(path: Path | str) -> Any:
    return SafeET.parse(str(path), forbid_dtd=True)


def read(path: Path) -> JUnitXml:
    """Parse one JUnit file; raise ReportError naming the file on anything hostile or broken."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise ReportError(f"{path}: JUnit file not found") from None
    if size > MAX_JUNIT_BYTES:
        raise ReportError(f"{path}: JUnit file is {size} bytes, over the {MAX_JUNIT_BYTES} limit")
    try:
        xml: Any = JUnitXml.fromfile(str(path), parse_func=_safe_parse)
    except DefusedXmlException as err:
        raise ReportError(f"{path}: refused: {type(err).__name__}: {err}") from None
    except (SafeET.ParseError, UnicodeDecodeError, ValueError) as err:
        raise ReportError(f"{path}: not well-formed JUnit XML: {err}") from None
    except JUnitXmlError:
        raise ReportError(
            f"{path}: the root element is neither <testsuites> nor <testsuite>"
        ) from None
    if isinstance(xml, TestSuite):
        merged = JUnitXml()
        merged.add_testsuite(xml)
        return merged
    return cast(JUnitXml, xml)


def cases(xml: Any) -> list[CaseResult]:
    found = []
    for suite in xml:
        for case in suite:
            found.append(_flatten(suite.name or "", case))
    return found


def _flatten(suite: str, case: Any) -> CaseResult:
    outcome, message, text = "passed", "", ""
    for result in case.result:
        if isinstance(result, Failure):
            outcome = "failed"
        elif isinstance(result, Error):
            outcome = "error"
        elif isinstance(result, Skipped):
            outcome = "skipped"
        else:
            continue
        message, text = result.message or "", result.text or ""
        break
    props = {p.name: p.value for p in case.properties()}
    return CaseResult(
        suite=suite,
        classname=case.classname or "",
        name=case.name or "",
        outcome=outcome,
        seconds=float(case.time or 0.0),
        message=message,
        text=text,
        properties=props,
    )


def merge(parts: list[tuple[Path, str]], dest: Path) -> JUnitXml:
    """Merge (junit file, artifact prefix) pairs; artifact paths become run-relative."""
    merged = JUnitXml(name="flagci")
    for path, prefix in parts:
        suite: Any
        for suite in read(path):
            for case in suite:
                for prop in case.properties():
                    if prop.name == "artifacts" and prop.value:
                        prop.value = f"{prefix}/{prop.value}"
            merged.add_testsuite(suite)
    buffer = io.BytesIO()
    merged.write(buffer)
    atomic.write_bytes(dest, buffer.getvalue())
    return merged


def infrastructure_case(lane: str, node: str, message: str, detail: str = "") -> TestSuite:
    """A testsuite standing for a (node, lane) that produced no JUnit: an infra error."""
    suite = TestSuite(lane)  # type: ignore[no-untyped-call]
    case = TestCase("infrastructure", classname="flagci")
    error = Error(message, "InfrastructureError")
    error.text = detail
    case.result = [error]
    for name, value in (("lane", lane), ("node", node), ("failure_kind", "infrastructure")):
        case.add_property(name, value)
    suite.add_testcase(case)
    return suite
