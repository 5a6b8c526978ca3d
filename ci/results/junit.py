"""A run's JUnit: each (node, lane) part read safely, merged into ``merged.xml``.

The merge writes what other tools read right:

- every testcase carries its part's ``lane`` and ``node`` properties, first among its
  children (properties before results), and its classname is ``<lane>@<node>.<module>``, so
  tools that key results by classname and name (GitLab) keep one result per lane and node,
  also where one lane ran on several nodes;
- each suite is named ``<lane>@<node>`` (Jenkins and GitHub's reporters show suites by
  name), its ``hostname`` is the node, and the root carries the totals;
- the history's readers (``ci.results.reader``) take the ``<lane>@<node>`` off again, so one
  test has one id, ``<module>::<name>``, on every node;
- each failed testcase's artifact files are listed in its ``system-out`` as
  ``[[ATTACHMENT|path]]`` lines (paths relative to the run folder), which Jenkins and GitLab
  turn into links.

Part files come back from nodes, so they are parsed with defusedxml (no DTD, no entity
expansion, no network) and size-capped. Only the standard library's ElementTree is used, so
whether lxml is installed changes nothing. ``ci.results.reader`` reads the merged file back.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree
from xml.etree.ElementTree import Element, SubElement

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException
from junitparser import Error
from junitparser.xunit2 import JUnitXml, TestCase, TestSuite

from ci.core.errors import ReportError
from ci.results import reader
from ci.smoke.contract import properties, taxonomy

MAX_JUNIT_BYTES = 64 * 1024 * 1024
_COUNTS = ("tests", "failures", "errors", "skipped")
_COUNTED = {"failed": "failures", "error": "errors", "skipped": "skipped"}


@dataclass(frozen=True)
class Part:
    """One (node, lane) JUnit document (parsed once, by ``read``) and where its artifacts
    are, relative to the run folder."""

    document: Element
    lane: str
    node: str
    prefix: str


def read(path: Path) -> Element:
    """Parse one JUnit file; raise ReportError naming the file on anything hostile or broken."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise ReportError(f"{path}: JUnit file not found") from None
    if size > MAX_JUNIT_BYTES:
        raise ReportError(f"{path}: JUnit file is {size} bytes, over the {MAX_JUNIT_BYTES} limit")
    try:
        root: Element = SafeET.parse(str(path), forbid_dtd=True).getroot()
    except DefusedXmlException as err:
        raise ReportError(f"{path}: refused: {type(err).__name__}: {err}") from None
    except (SafeET.ParseError, UnicodeDecodeError, ValueError) as err:
        raise ReportError(f"{path}: not well-formed JUnit XML: {err}") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise ReportError(f"{path}: the root element is neither <testsuites> nor <testsuite>")
    return root


def merge(parts: list[Part], run_dir: Path) -> bytes:
    """The parts merged into one ``<testsuites>``: the text of the run's ``merged.xml``."""
    root = Element("testsuites", name="flagci")
    for part in parts:
        document = part.document
        suites = [document] if document.tag == "testsuite" else list(document.iter("testsuite"))
        for suite in suites:
            cases = suite.findall("testcase")
            if cases:
                root.append(_suite(suite, cases, part, run_dir))
    _count(root, root.findall("testsuite"))
    ElementTree.indent(root)
    merged: bytes = ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)
    return merged


def _suite(source: Element, cases: list[Element], part: Part, run_dir: Path) -> Element:
    suite = Element("testsuite", name=reader.suite_name(part.lane, part.node), hostname=part.node)
    if source.get("timestamp"):
        suite.set("timestamp", source.get("timestamp", ""))
    props = SubElement(suite, "properties")
    for name, value in ((properties.LANE, part.lane), (properties.NODE, part.node)):
        SubElement(props, "property", name=name, value=value)
    for case in cases:
        suite.append(_case(case, part, run_dir))
    _count(suite, suite.findall("testcase"))
    return suite


def _case(source: Element, part: Part, run_dir: Path) -> Element:
    case = Element("testcase", dict(source.attrib))
    module = source.get("classname") or ""
    case.set("classname", reader.lane_classname(part.lane, part.node, module))
    props = {
        p.get("name", ""): p.get("value", "")
        for container in source.findall("properties")
        for p in container.findall("property")
    }
    if props.get(properties.ARTIFACTS):
        props[properties.ARTIFACTS] = f"{part.prefix}/{props[properties.ARTIFACTS]}"
    props.update({properties.LANE: part.lane, properties.NODE: part.node})
    container = SubElement(case, "properties")
    for name, value in props.items():
        SubElement(container, "property", name=name, value=value)
    out_text = [e.text or "" for e in source.findall("system-out")]
    for child in source:
        if child.tag not in ("properties", "system-out"):
            case.append(child)
    outcome = reader.outcome_of(case)[0]
    if outcome in ("failed", "error") and props.get(properties.ARTIFACTS):
        files = reader.files_under(run_dir, props[properties.ARTIFACTS])
        out_text += [f"[[ATTACHMENT|{path}]]" for path in files]
    if any(out_text):
        SubElement(case, "system-out").text = "\n".join(t for t in out_text if t)
    return case


def _count(element: Element, children: list[Element]) -> None:
    """Totals on a suite (from its testcases) or on the root (from its suites)."""
    totals = dict.fromkeys(_COUNTS, 0)
    seconds = 0.0
    for child in children:
        if child.tag == "testcase":
            totals["tests"] += 1
            outcome = reader.outcome_of(child)[0]
            if outcome in _COUNTED:
                totals[_COUNTED[outcome]] += 1
            seconds += _seconds(child.get("time"))
        else:
            for key in _COUNTS:
                totals[key] += int(child.get(key, "0"))
            seconds += _seconds(child.get("time"))
    for key, value in totals.items():
        element.set(key, str(value))
    element.set("time", f"{seconds:.3f}")


def _seconds(text: str | None) -> float:
    try:
        return float(text or 0)
    except ValueError:
        return 0.0


def stand_in(lane: str, node: str, message: str) -> tuple[Element, bytes]:
    """The JUnit of a (node, lane) that produced none (``infrastructure.xml``): one
    infrastructure error testcase; its document and its text."""
    document = JUnitXml()
    document.add_testsuite(infrastructure_case(lane, node, message))
    text: bytes = document.tostring()  # type: ignore[no-untyped-call]
    return ElementTree.fromstring(text), text  # our own bytes, just made


def infrastructure_case(lane: str, node: str, message: str, detail: str = "") -> TestSuite:
    """A testsuite standing for a (node, lane) that produced no JUnit: an infra error."""
    suite = TestSuite(lane)  # type: ignore[no-untyped-call]
    case = TestCase("infrastructure", classname="flagci")
    error = Error(message, "InfrastructureError")
    error.text = detail
    case.result = [error]
    infrastructure = (
        (properties.LANE, lane),
        (properties.NODE, node),
        (properties.FAILURE_KIND, taxonomy.INFRASTRUCTURE),
    )
    for name, value in infrastructure:
        case.add_property(name, value)
    suite.add_testcase(case)
    return suite
