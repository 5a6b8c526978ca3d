"""Ingest takes JUnit as CI tools write it, on SQLite and on PostgreSQL.

Each dialect is written here in the shape its tool writes (Maven Surefire, go-junit-report,
nested suites, UTF-16) or really produced by running pytest (xunit2 with no properties, a
collection error, a teardown error after a skip); the counts stored must be the counts the
file says.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ci.core.errors import ReportError
from ci.history.store import Store, ingest_run
from ci.results import reader
from tests.fixtures.history_runs import LANES, Case, write_run

CPU = "cpu-triton-3.6.0"
NVIDIA = "nvidia-triton-3.6.0"

SUREFIRE = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
    xsi:noNamespaceSchemaLocation="https://maven.apache.org/surefire/maven-surefire-plugin/xsd/surefire-test-report-3.0.xsd"
    version="3.0" name="org.flagtree.KernelCompileTest" time="0.71" tests="5" errors="1"
    skipped="1" failures="1">
  <properties>
    <property name="java.version" value="17.0.12"/>
    <property name="surefire.test.class.path" value="/build/target/test-classes"/>
  </properties>
  <testcase name="compilesAttention" classname="org.flagtree.KernelCompileTest" time="0.412"/>
  <testcase name="rejectsUnknownTarget" classname="org.flagtree.KernelCompileTest" time="0.05">
    <failure message="expected: &lt;corex&gt; but was: &lt;cuda&gt;" type="org.opentest4j.AssertionFailedError"><![CDATA[org.opentest4j.AssertionFailedError: expected: <corex> but was: <cuda>
\tat org.flagtree.KernelCompileTest.rejectsUnknownTarget(KernelCompileTest.java:42)]]></failure>
    <system-out><![CDATA[resolving backend...]]></system-out>
  </testcase>
  <testcase name="driverGone" classname="org.flagtree.KernelCompileTest" time="0.001">
    <error message="device lost" type="java.lang.IllegalStateException">java.lang.IllegalStateException: device lost</error>
  </testcase>
  <testcase name="fp8Only" classname="org.flagtree.KernelCompileTest" time="0">
    <skipped message="no fp8 on this device"/>
  </testcase>
  <testcase name="passesOnRerun" classname="org.flagtree.KernelCompileTest" time="0.2">
    <flakyFailure message="timed out" type="java.util.concurrent.TimeoutException">
      <stackTrace>java.util.concurrent.TimeoutException: timed out</stackTrace>
    </flakyFailure>
  </testcase>
</testsuite>
"""

GO_JUNIT_REPORT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4" failures="1">
\t<testsuite name="github.com/flagos-ai/flagci/probe" tests="4" failures="1" errors="0" id="0" hostname="builder-7" time="0.014" timestamp="2026-11-30T02:00:00Z">
\t\t<properties>
\t\t\t<property name="go.version" value="go1.23.4 linux/amd64"></property>
\t\t</properties>
\t\t<testcase name="TestProbe" classname="github.com/flagos-ai/flagci/probe" time="0.001"></testcase>
\t\t<testcase name="TestProbe/empty_input" classname="github.com/flagos-ai/flagci/probe" time="0.000"></testcase>
\t\t<testcase name="TestRender" classname="github.com/flagos-ai/flagci/probe" time="0.010">
\t\t\t<failure message="Failed"><![CDATA[    render_test.go:12: got 1 row, want 2]]></failure>
\t\t</testcase>
\t\t<testcase name="TestSkipped" classname="github.com/flagos-ai/flagci/probe" time="0.000">
\t\t\t<skipped message="render_test.go:30: needs a GPU"></skipped>
\t\t</testcase>
\t\t<system-out><![CDATA[ok]]></system-out>
\t</testsuite>
</testsuites>
"""

# Suites inside suites (JUnit 5 platform reports, Gradle aggregations): the lane of a case
# is the nearest suite's lane property.
NESTED = f"""<?xml version="1.0" encoding="utf-8"?>
<testsuites name="two lanes">
  <testsuite name="cpu">
    <properties><property name="lane" value="{CPU}"/><property name="node" value="ci-1"/></properties>
    <testsuite name="compile">
      <testcase classname="compile" name="a" time="0.1"/>
      <testcase classname="compile" name="b" time="0.1"><failure message="boom">boom</failure></testcase>
    </testsuite>
    <testcase classname="top" name="c" time="0.1"/>
  </testsuite>
  <testsuite name="gpu">
    <properties><property name="lane" value="{NVIDIA}"/></properties>
    <testsuite name="inner">
      <properties><property name="node" value="h200"/></properties>
      <testcase classname="compile" name="a" time="0.3"/>
    </testsuite>
  </testsuite>
</testsuites>
"""

PYTEST_MODULE = """
import pytest


@pytest.fixture
def device():
    yield
    raise RuntimeError("CUDA error: an illegal memory access was encountered")


def test_ok():
    pass


def test_fail():
    assert 1 == 2


def test_skip_then_teardown_error(device):
    pytest.skip("no kernel for this dtype")
"""


def _counts(db: str) -> dict[str, int]:
    with Store(db).session(create=False) as session:
        return dict(session.rows("SELECT outcome, count(*) FROM results GROUP BY outcome"))


def _outcomes(db: str) -> dict[tuple[str, str], str]:
    with Store(db).session(create=False) as session:
        return {
            (lane, test): o
            for lane, test, o in session.rows("SELECT lane, test, outcome FROM results")
        }


def _real_pytest(workdir: Path) -> bytes:
    """Plain pytest xunit2, no properties: a pass, a failure, a skip whose teardown errors,
    and a module that does not import (a collection error)."""
    workdir.mkdir(parents=True)
    (workdir / "test_kernels.py").write_text(PYTEST_MODULE, encoding="utf-8")
    (workdir / "test_broken.py").write_text("import no_such_module_anywhere\n", encoding="utf-8")
    xml = workdir / "junit.xml"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "junit_family=xunit2",
            "-o",
            "addopts=",
            "--continue-on-collection-errors",
            f"--junitxml={xml}",
            "--rootdir",
            str(workdir),
            str(workdir),
        ],
        cwd=workdir,
        check=False,
        capture_output=True,
    )
    return xml.read_bytes()


def _ingest(tmp_path: Path, db: str, junit: bytes, lanes: tuple[str, ...] = (CPU,)) -> str:
    run = write_run(
        tmp_path / "results",
        0,
        [],
        lanes={name: LANES[name] for name in lanes},
        junit=junit,
    )
    ingest_run(db, run)
    return db


def test_maven_surefire(tmp_path: Path, history_db: str) -> None:
    db = _ingest(tmp_path, history_db, SUREFIRE.encode())
    assert _counts(db) == {"passed": 2, "failed": 1, "error": 1, "skipped": 1}
    outcomes = _outcomes(db)
    assert outcomes[(CPU, "org.flagtree.KernelCompileTest::passesOnRerun")] == "passed"


def test_go_junit_report(tmp_path: Path, history_db: str) -> None:
    db = _ingest(tmp_path, history_db, GO_JUNIT_REPORT.encode())
    assert _counts(db) == {"passed": 2, "failed": 1, "skipped": 1}
    assert (CPU, "github.com/flagos-ai/flagci/probe::TestProbe/empty_input") in _outcomes(db)


def test_nested_suites_give_their_lane_and_node(tmp_path: Path, history_db: str) -> None:
    db = _ingest(tmp_path, history_db, NESTED.encode(), lanes=(CPU, NVIDIA))
    with Store(db).session(create=False) as session:
        rows = set(session.rows("SELECT lane, node, test, outcome FROM results"))
    assert rows == {
        (CPU, "ci-1", "compile::a", "passed"),
        (CPU, "ci-1", "compile::b", "failed"),
        (CPU, "ci-1", "top::c", "passed"),
        (NVIDIA, "h200", "compile::a", "passed"),
    }


def test_utf16_as_written(tmp_path: Path, history_db: str) -> None:
    text = GO_JUNIT_REPORT.replace('encoding="UTF-8"', 'encoding="UTF-16"')
    db = _ingest(tmp_path, history_db, text.encode("utf-16"))
    assert _counts(db) == {"passed": 2, "failed": 1, "skipped": 1}


def test_real_pytest_xunit2_with_a_collection_error_and_a_teardown_error_after_a_skip(
    tmp_path: Path, history_db: str
) -> None:
    db = _ingest(tmp_path, history_db, _real_pytest(tmp_path / "suite"))
    outcomes = _outcomes(db)
    assert outcomes == {
        (CPU, "test_broken"): "error",  # no classname, no properties: the run's only lane
        (CPU, "test_kernels::test_ok"): "passed",
        (CPU, "test_kernels::test_fail"): "failed",
        (CPU, "test_kernels::test_skip_then_teardown_error"): "error",
    }
    with Store(db).session(create=False) as session:
        message = session.rows(
            "SELECT message FROM results WHERE test = 'test_kernels::test_skip_then_teardown_error'"
        )[0][0]
    assert "illegal memory access" in message


def test_duplicates_unnamed_cases_bad_numbers_and_long_names_are_stored_with_notes(
    tmp_path: Path, history_db: str
) -> None:
    long_name = "t" * (reader.MAX_NAME_CHARS + 50)
    junit = f"""<testsuites><testsuite name="s">
      <testcase classname="m" name="twice" time="0.1"/>
      <testcase classname="m" name="comma" time="1,5"/>
      <testcase classname="m" name="twice" time="0.2"><failure message="second">x</failure></testcase>
      <testcase classname="m" name="twice" time="0.2"/>
      <testcase classname="m" time="0.1"/>
      <testcase classname="m" name="{long_name}"/>
    </testsuite></testsuites>""".encode()
    run = write_run(tmp_path / "results", 0, [Case(CPU, "m::x")], junit=junit)
    result = ingest_run(history_db, run)
    assert result.testcases == 4
    with Store(history_db).session(create=False) as session:
        rows = {
            t: (o, d, n)
            for t, o, d, n in session.rows("SELECT test, outcome, duration, notes FROM results")
        }
    outcome, duration, notes = rows["m::twice"]
    assert (outcome, duration) == ("failed", 0.2)
    assert reader.DUPLICATE_NOTE in notes
    assert rows["m::(testcase #5 without a name)"][2] == "the testcase has no name"
    cut = "m::" + long_name[: reader.MAX_NAME_CHARS - 3]
    assert "name cut to" in rows[cut][2]
    assert rows["m::comma"][1] is None
    assert any(n.startswith("m::comma: 'time' is not a number: '1,5'") for n in result.notes)


def test_a_duplicate_across_insert_batches_is_folded(tmp_path: Path, history_db: str) -> None:
    """The second copy comes after the first was inserted: the worse one is kept."""
    cases = [Case(CPU, "m::first", "passed")] + [Case(CPU, f"m::t{i}") for i in range(2100)]
    cases.append(Case(CPU, "m::first", "error", "worker crashed"))
    run = write_run(tmp_path / "results", 0, cases)
    assert ingest_run(history_db, run).testcases == 2101
    with Store(history_db).session(create=False) as session:
        rows = session.rows("SELECT outcome, notes FROM results WHERE test = 'm::first'")
    assert rows == [("error", reader.DUPLICATE_NOTE)]


def test_a_case_no_lane_decides_is_refused_naming_it(tmp_path: Path, history_db: str) -> None:
    junit = (
        b"<testsuites><testsuite><testcase classname='m' name='orphan'/></testsuite></testsuites>"
    )
    run = write_run(
        tmp_path / "results", 0, [], lanes={n: LANES[n] for n in (CPU, NVIDIA)}, junit=junit
    )
    with pytest.raises(ReportError, match=r"merged\.xml: testcase 'm::orphan' has no 'lane'"):
        ingest_run(history_db, run)
    with Store(history_db).session() as session:
        assert session.rows("SELECT count(*) FROM runs") == [(0,)]


def test_the_run_finish_reads_the_same_cases(tmp_path: Path) -> None:
    """read_cases (the run's finish) folds duplicates as the store does."""
    path = tmp_path / "junit.xml"
    path.write_text(NESTED.replace('name="c"', 'name="a"').replace('"top"', '"compile"'))
    cases = reader.read_cases(path, [CPU, NVIDIA])
    by_key = {(c.lane, c.test): c for c in cases}
    assert len(cases) == 3
    assert by_key[(CPU, "compile::a")].notes == reader.DUPLICATE_NOTE
