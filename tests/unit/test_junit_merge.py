"""``merged.xml`` as other tools read it: lane and node in the classname and the suite name,
attachments, host, totals.

Checked against the rules of Jenkins' JUnit schema (tests/fixtures/jenkins-junit.xsd). The one
rule the merge breaks on purpose is the one pytest's own dialect breaks too: ``<properties>``
inside a ``<testcase>`` (pytest's xunit1 ``record_property``); Jenkins ignores them, the
history reads them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from lxml import etree

from ci.lanes.matrix import load_matrix
from ci.results import junit, reader
from ci.run import record

CPU = "cpu-triton-3.6.0"
NVIDIA = "nvidia-triton-3.6.0"
SCHEMA = Path(__file__).resolve().parents[1] / "fixtures" / "jenkins-junit.xsd"

PART = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="3" hostname="vm" timestamp="2026-11-30T02:00:00">
<testcase classname="test_backends" name="test_inductor_target" time="0.25">
  <failure message="RuntimeError: 0 compatible backends for target (cuda)">trace</failure>
  <properties><property name="failure_kind" value="backend_resolution"/>
  <property name="artifacts" value="artifacts/inductor"/></properties>
  <system-out>probing</system-out>
</testcase>
<testcase classname="test_backends" name="test_ok" time="0.5"/>
<testcase classname="test_backends" name="test_skip" time="0"><skipped message="no"/></testcase>
</testsuite></testsuites>
"""


def _merged(tmp_path: Path) -> Path:
    parts = []
    for lane, node in ((CPU, "n1"), (NVIDIA, "h200")):
        folder = tmp_path / "lanes" / f"{node}__{lane}"
        (folder / "artifacts" / "inductor").mkdir(parents=True)
        (folder / "artifacts" / "inductor" / "kernel.ttgir").write_text("module {}")
        (folder / "junit.xml").write_text(PART)
        document = junit.read(folder / "junit.xml")
        parts.append(junit.Part(document, lane, node, f"lanes/{folder.name}"))
    dest = tmp_path / "merged.xml"
    dest.write_bytes(junit.merge(parts, tmp_path))
    return dest


def test_classname_carries_the_lane_so_each_lane_keeps_its_result(tmp_path: Path) -> None:
    root = ElementTree.parse(_merged(tmp_path)).getroot()
    keys = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    assert len(keys) == len(set(keys)) == 6
    assert (f"{CPU}@n1.test_backends", "test_ok") in keys
    assert (f"{NVIDIA}@h200.test_backends", "test_ok") in keys


def _one_lane_on_two_nodes(tmp_path: Path) -> Path:
    parts = []
    for node in ("n1", "n2"):
        folder = tmp_path / "lanes" / f"{node}__{CPU}"
        folder.mkdir(parents=True)
        (folder / "junit.xml").write_text(PART)
        parts.append(
            junit.Part(junit.read(folder / "junit.xml"), CPU, node, f"lanes/{folder.name}")
        )
    dest = tmp_path / "merged.xml"
    dest.write_bytes(junit.merge(parts, tmp_path))
    return dest


def test_one_lane_on_two_nodes_keeps_each_nodes_testcases_and_suite(tmp_path: Path) -> None:
    """GitLab keeps the first of testcases with one classname and name; Jenkins and GitHub's
    reporters show suites by name: the node is in both."""
    root = ElementTree.parse(_one_lane_on_two_nodes(tmp_path)).getroot()
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [f"{CPU}@n1", f"{CPU}@n2"]
    keys = [(s.get("name"), c.get("classname"), c.get("name")) for s in suites for c in s]
    keys = [k for k in keys if k[2]]
    assert len(keys) == len({k[1:] for k in keys}) == 6
    assert (f"{CPU}@n2", f"{CPU}@n2.test_backends", "test_ok") in keys


def test_the_history_reads_one_test_id_from_every_node(tmp_path: Path) -> None:
    """The verdicts key testcases by (lane, test): the node's testcases are one test."""
    cases = reader.read_cases(_one_lane_on_two_nodes(tmp_path), [CPU])
    by_node = {node: sorted(c.test for c in cases if c.node == node) for node in ("n1", "n2")}
    assert (
        by_node["n1"]
        == by_node["n2"]
        == [
            "test_backends::test_inductor_target",
            "test_backends::test_ok",
            "test_backends::test_skip",
        ]
    )


def test_classnames_of_runs_before_the_node_was_there_read_the_same() -> None:
    assert reader.module_of(f"{CPU}.test_backends", CPU, "n1") == "test_backends"
    assert reader.module_of(f"{CPU}@n1.test_backends", CPU, "n1") == "test_backends"
    assert reader.module_of(f"{CPU}@n1", CPU, "n1") == ""


def test_properties_first_node_as_hostname_and_totals_on_the_root(tmp_path: Path) -> None:
    root = ElementTree.parse(_merged(tmp_path)).getroot()
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "6",
        "failures": "2",
        "errors": "0",
        "skipped": "2",
    }
    assert root.get("time") == "1.500"
    suites = root.findall("testsuite")
    assert [(s.get("name"), s.get("hostname"), s.get("tests")) for s in suites] == [
        (f"{CPU}@n1", "n1", "3"),
        (f"{NVIDIA}@h200", "h200", "3"),
    ]
    for suite in suites:
        for case in suite.iter("testcase"):
            assert case[0].tag == "properties"
            props = {p.get("name"): p.get("value") for p in case[0]}
            assert (props["lane"], props["node"]) == (
                suite.get("name").split("@")[0],
                suite.get("hostname"),
            )


def test_failed_cases_list_their_artifacts_as_attachments(tmp_path: Path) -> None:
    root = ElementTree.parse(_merged(tmp_path)).getroot()
    failed = [c for c in root.iter("testcase") if c.find("failure") is not None]
    outputs = [c.findtext("system-out") for c in failed]
    assert outputs == [
        f"probing\n[[ATTACHMENT|lanes/n1__{CPU}/artifacts/inductor/kernel.ttgir]]",
        f"probing\n[[ATTACHMENT|lanes/h200__{NVIDIA}/artifacts/inductor/kernel.ttgir]]",
    ]
    passed = [c for c in root.iter("testcase") if c.get("name") == "test_ok"]
    assert all(c.find("system-out") is None for c in passed)


def test_the_history_reads_the_same_test_ids_back(tmp_path: Path) -> None:
    cases = reader.read_cases(_merged(tmp_path), [CPU, NVIDIA])
    assert sorted((c.lane, c.node, c.test, c.outcome) for c in cases)[:3] == [
        (CPU, "n1", "test_backends::test_inductor_target", "failed"),
        (CPU, "n1", "test_backends::test_ok", "passed"),
        (CPU, "n1", "test_backends::test_skip", "skipped"),
    ]
    failing = next(c for c in cases if c.failed)
    assert failing.artifacts == f"lanes/n1__{CPU}/artifacts/inductor"


def _schema_errors(path: Path, *, drop_case_properties: bool) -> list[str]:
    schema = etree.XMLSchema(etree.parse(str(SCHEMA)))
    document = etree.parse(str(path))
    if drop_case_properties:
        for props in document.xpath("//testcase/properties"):
            props.getparent().remove(props)
    schema.validate(document)
    return [error.message for error in schema.error_log]


def test_merged_xml_keeps_the_jenkins_schema_but_for_testcase_properties(tmp_path: Path) -> None:
    merged = _merged(tmp_path)
    assert _schema_errors(merged, drop_case_properties=True) == []
    errors = _schema_errors(merged, drop_case_properties=False)
    assert errors and all("'properties'" in e for e in errors), errors


def test_pytests_own_xunit1_breaks_the_same_rule(tmp_path: Path) -> None:
    (tmp_path / "test_m.py").write_text(
        "def test_a(record_property):\n    record_property('lane', 'x')\n"
    )
    xml = tmp_path / "junit.xml"
    subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
            *("-o", "junit_family=xunit1", "-o", "addopts=", f"--junitxml={xml}"),
            *("--rootdir", str(tmp_path), str(tmp_path / "test_m.py")),
        ],
        check=True,
        capture_output=True,
    )
    errors = _schema_errors(xml, drop_case_properties=False)
    assert errors and all("'properties'" in e for e in errors), errors
    assert _schema_errors(xml, drop_case_properties=True) == []


FINISH = """
import json, sys
from pathlib import Path
if sys.argv[2] == "without":
    sys.modules["lxml"] = None  # junitparser falls back to the standard library
from ci.run import record
import junitparser.junitparser as jp
from ci.lanes.matrix import load_matrix
matrix = load_matrix()
lanes = [matrix.default]
run = record.Run.start(Path(sys.argv[1]), "local")
good = run.part("n1", lanes[0].name)
good.folder.mkdir(parents=True)
good.junit.write_text(sys.stdin.read())
run.part("n2", lanes[0].name).infrastructure_error = "lost"
result = run.finish(matrix, lanes)
print(json.dumps([jp.etree.__name__, [(c.node, c.test, c.outcome) for c in result.cases]]))
"""


@pytest.mark.parametrize("lxml", ["with", "without"])
def test_the_run_finish_merges_with_and_without_lxml(tmp_path: Path, lxml: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", FINISH, str(tmp_path), lxml],
        input=PART.replace("test_backends", "m"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # The run's progress lines come first; the script's answer is its last line.
    backend, cases = json.loads(done.stdout.strip().splitlines()[-1])
    assert backend == ("lxml.etree" if lxml == "with" else "xml.etree.ElementTree")
    assert sorted(map(tuple, cases)) == [
        ("n1", "m::test_inductor_target", "failed"),
        ("n1", "m::test_ok", "passed"),
        ("n1", "m::test_skip", "skipped"),
        ("n2", "flagci::infrastructure", "error"),
    ]


def test_the_run_finish_result_is_the_merged_file_read_back(tmp_path: Path) -> None:
    matrix = load_matrix()
    run = record.Run.start(tmp_path, "local")
    part = run.part("n1", matrix.default.name)
    part.folder.mkdir(parents=True)
    part.junit.write_text(PART)
    result = run.finish(matrix, [matrix.default])
    merged = run.folder / "merged.xml"
    assert list(result.cases) == reader.read_cases(merged, [matrix.default.name])
    # The identity the history keys the run by: the folder, read back, is the same run.
    assert result.digest == reader.digest((run.folder / "run.json").read_bytes(), merged)
    assert result.record == reader.read_record(run.folder)[0]
