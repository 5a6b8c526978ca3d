"""Finishing a run: merged JUnit, infrastructure stand-ins, the HTML page, run.json."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ci.core import reporter, tables
from ci.core.errors import ReportError
from ci.lanes.matrix import load_matrix
from ci.results import junit, reader, report
from ci.run import record

SMOKE_JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="cpu-triton-3.6.0" tests="2" failures="1">
<testcase classname="test_backends" name="test_inductor_target" time="0.01">
  <properties><property name="lane" value="cpu-triton-3.6.0"/><property name="node" value="n1"/>
  <property name="failure_kind" value="backend_resolution"/>
  <property name="artifacts" value="artifacts/test_backends__test_inductor_target"/></properties>
  <failure message="RuntimeError: 0 compatible backends for target (cuda) ([]). There should only be one.">details</failure>
</testcase>
<testcase classname="test_x" name="test_&lt;script&gt;alert(1)&lt;/script&gt;" time="0.2">
  <properties><property name="lane" value="cpu-triton-3.6.0"/><property name="node" value="n1"/></properties>
</testcase>
</testsuite></testsuites>
"""

BOMB = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;">]>
<testsuites><testsuite name="&lol2;"/></testsuites>
"""


def finish(
    tmp_path: Path, parts: list[record.Part], environ: Mapping[str, str] | None = None
) -> reader.RunData:
    matrix = load_matrix()
    made_in = record.ci_run(environ or {})
    run = record.Run("RUN", tmp_path, "local", datetime.now(UTC), made_in)
    run.parts.update({(p.node, p.lane): p for p in parts})
    return run.finish(matrix, [matrix.default])


def part(tmp_path: Path, node: str, text: str | None) -> record.Part:
    folder = tmp_path / "lanes" / record.part_name(node, "cpu-triton-3.6.0")
    folder.mkdir(parents=True)
    if text is not None:
        (folder / "junit.xml").write_text(text)
    return record.Part(node=node, lane="cpu-triton-3.6.0", folder=folder)


def test_merge_keeps_everything_and_makes_artifacts_run_relative(tmp_path: Path) -> None:
    result = finish(tmp_path, [part(tmp_path, "n1", SMOKE_JUNIT)])
    assert result.record.status == "failed"
    merged = reader.read_cases(tmp_path / "merged.xml", ["cpu-triton-3.6.0"])
    assert [c.outcome for c in merged] == ["failed", "passed"]
    assert merged == list(result.cases)
    failing = merged[0]
    assert failing.test == "test_backends::test_inductor_target"
    assert "0 compatible backends for target (cuda)" in failing.message
    assert failing.artifacts == (
        "lanes/n1__cpu-triton-3.6.0/artifacts/test_backends__test_inductor_target"
    )
    written = json.loads((tmp_path / "run.json").read_text())
    assert written["status"] == "failed"
    assert written["lanes"]["cpu-triton-3.6.0"]["pins"]["triton"] == "3.6.0"


def test_missing_and_hostile_junit_become_infrastructure_errors(tmp_path: Path) -> None:
    result = finish(tmp_path, [part(tmp_path, "dead", None), part(tmp_path, "evil", BOMB)])
    assert result.record.status == "error"
    kinds = {(c.node, c.failure_kind) for c in result.cases}
    assert kinds == {("dead", "infrastructure"), ("evil", "infrastructure")}
    evil = next(c for c in result.cases if c.node == "evil")
    assert "refused" in evil.message and "junit.xml" in evil.message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (BOMB, "refused"),
        ("<testsuites><testsuite name='x'>", "not well-formed"),
        ('<?xml version="1.0" encoding="utf-8"?><testsuites name="\xff"/>', "not well-formed"),
        ("<html/>", "neither <testsuites> nor <testsuite>"),
    ],
)
def test_read_refuses_bad_junit_naming_the_file(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "junit.xml"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(ReportError, match=expected) as caught:
        junit.read(path)
    assert str(path) in str(caught.value)


def test_html_escapes_what_came_from_tests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)  # a run made here: files beside it
    finish(tmp_path, [part(tmp_path, "n1", SMOKE_JUNIT)])
    page = (tmp_path / "index.html").read_text()
    assert "<script>alert(1)</script>" not in page
    assert "test_&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert (
        'href="lanes/n1__cpu-triton-3.6.0/artifacts/test_backends__test_inductor_target/"' in page
    )


def test_a_run_made_in_actions_records_it_and_links_its_files_to_the_artifact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    environ = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "flagos-ai/flagci",
        "GITHUB_RUN_ID": "123456",
    }
    finish(tmp_path, [part(tmp_path, "n1", SMOKE_JUNIT)], environ)
    read = reader.read_record(tmp_path)[0]
    url = "https://github.com/flagos-ai/flagci/actions/runs/123456#artifacts"
    assert read.artifacts_url == url
    page = (tmp_path / "index.html").read_text()
    assert f'<a href="{url}">artifacts</a>' in page
    assert 'href="lanes/' not in page

    # What lands in published pages is checked: a value that is no Actions run is not kept.
    environ["GITHUB_SERVER_URL"] = "javascript:alert(1)//"
    (tmp_path / "elsewhere").mkdir()
    finish(tmp_path / "elsewhere", [part(tmp_path / "elsewhere", "n1", SMOKE_JUNIT)], environ)
    assert "ci_run" not in json.loads((tmp_path / "elsewhere" / "run.json").read_text())
    assert "not recording the Actions run in run.json" in capsys.readouterr().err
    assert "javascript:" not in (tmp_path / "elsewhere" / "index.html").read_text()


def test_summary_table_counts_and_lists_failures(tmp_path: Path) -> None:
    result = finish(tmp_path, [part(tmp_path, "n1", SMOKE_JUNIT)])
    table = tables.text(report.of_run(result.cases, "t").table)
    header, row = table.splitlines()
    assert header.split() == ["lane", "@", "node", "passed", "failed", "error", "skipped"]
    assert row.startswith("cpu-triton-3.6.0 @ n1")
    assert row.split()[-4:] == ["1", "1", "0", "0"]
    failures = report.of_run(result.cases, "t").failures
    assert failures[0] == "1 failing testcase(s):"
    assert failures[1].startswith(
        "  [backend_resolution] cpu-triton-3.6.0 test_backends::test_inductor_target: "
    )


def test_a_run_names_its_folder_times_its_steps_and_records_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    matrix = load_matrix()
    run = record.Run.start(tmp_path, "local")
    assert run.folder == tmp_path.resolve() / run.run_id and run.folder.is_dir()
    assert run.run_id.endswith("-local")
    part = run.part("n1", matrix.default.name)
    assert run.part("n1", matrix.default.name) is part
    assert part.folder == run.folder / "lanes" / f"n1__{matrix.default.name}"
    with pytest.raises(RuntimeError), run.step("a step that breaks"):
        raise RuntimeError("boom")
    result = run.finish(matrix, [matrix.default])
    assert result.record.status == "error"  # the part never got its JUnit
    written = json.loads((run.folder / "run.json").read_text())
    # The keys and forms run.json has always had, written by the model the reader reads.
    assert list(written) == [
        *("run_id", "kind", "started", "finished", "lanes", "nodes", "parts", "steps"),
        "status",
    ]
    assert written["started"] == run.started.isoformat(timespec="seconds")
    assert written["parts"] == [
        {
            "node": "n1",
            "lane": matrix.default.name,
            "folder": part.folder.relative_to(run.folder).as_posix(),
            "infrastructure_error": written["parts"][0]["infrastructure_error"],
        }
    ]
    assert reader.read_record(run.folder)[0] == result.record
    # run.json is written within the last step, so it lists the steps before that one.
    assert [s["name"] for s in written["steps"]] == ["a step that breaks"]
    assert all(s["seconds"] >= 0 for s in written["steps"])
    out = capsys.readouterr().out
    assert "==> a step that breaks" in out and "<== a step that breaks (" in out
    assert "steps:" in out and f"flagci: run {run.run_id}" in out


def test_the_ci_reporter_groups_steps_and_annotates_warnings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        reporter, "_installed", reporter.for_environment({"GITHUB_ACTIONS": "true"})
    )
    assert isinstance(reporter.current(), reporter.CIReporter)
    run = record.Run.start(tmp_path, "local")
    with run.step("prepare"):
        reporter.current().warn("node n1 is lost\nfor good")
    out = capsys.readouterr().out.splitlines()
    assert out[1:4] == ["::group::prepare", "::warning::node n1 is lost%0Afor good", "::endgroup::"]
    assert not isinstance(
        reporter.for_environment({"GITHUB_ACTIONS": "false"}), reporter.CIReporter
    )
