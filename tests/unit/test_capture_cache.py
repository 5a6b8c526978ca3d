"""The real-kernel capture costs only what is asked and cannot go stale: a capture with an
error is never cached, the cache key holds the installed packages, and a run that selects no
test needing the capture makes none (no Triton needed here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ci.lanes.matrix import load_matrix
from ci.smoke.contract.lane import LaneContext, lane_text, load_context
from ci.smoke.realkernels import jobs

REPO = Path(__file__).resolve().parents[2]
LAUNCH = {
    "kernel": "reduce_segments",
    "module": "vllm.v1.attention.ops.triton_unified_attention",
    "signature": {"out_ptr": "*bf16"},
    "constexprs": {},
    "attrs": {},
    "options": {},
    "module_file": "/site/vllm/v1/attention/ops/triton_unified_attention.py",
    "tags": {},
}


def _lane(tmp_path: Path) -> LaneContext:
    path = tmp_path / "lane.json"
    path.write_text(
        lane_text(load_matrix().lane("cpu-triton-3.6.0").smoke_context("n1")), encoding="utf-8"
    )
    return load_context(path)


def _document(broken: bool) -> dict[str, Any]:
    result: dict[str, Any] = {"target": "sm_90", "scenario": "decode-hd128-gqa8"}
    if broken:
        result.update(error="ModuleNotFoundError: x", traceback="Traceback: x")
    else:
        result["launches"] = [LAUNCH]
    return {"package": "vllm", "version": "0.24.0", "import_env": {}, "results": [result]}


def _install(site: Path, record: str) -> None:
    """A vllm distribution's metadata in ``site`` (what pip leaves: METADATA and RECORD)."""
    info = site / "vllm-0.24.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm\nVersion: 0.24.0\n")
    (info / "RECORD").write_text(record)


class Install:
    """The install the capture processes see: ``broken`` decides whether the next one's
    scenario fails; ``ran`` lists the captures made, broken or not."""

    def __init__(self) -> None:
        self.broken = False
        self.ran: list[bool] = []

    def run_capture(self, corpus: str, vendor: str, request: Any, env: Any) -> dict[str, Any]:
        self.ran.append(self.broken)
        return _document(broken=self.broken)


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Install:
    monkeypatch.setenv(jobs.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    _install(tmp_path / "site", "vllm/__init__.py,sha256=aaaa,10\n")
    state = Install()
    monkeypatch.setattr(jobs, "_run_capture", state.run_capture)
    return state


def test_fixing_a_broken_install_clears_the_failure_on_the_next_run(
    tmp_path: Path, install: Install
) -> None:
    lane = _lane(tmp_path)
    install.broken = True  # the scenario fails in vLLM's launcher
    first = jobs.capture("vllm", lane, tmp_path / "run1")
    assert [launch.error for launch in first] == ["Traceback: x"]
    assert not list((tmp_path / "cache").rglob("capture.json"))
    install.broken = False  # fixed; the cache folder is not touched
    second = jobs.capture("vllm", lane, tmp_path / "run2")
    assert [(launch.kernel, launch.error) for launch in second] == [("reduce_segments", "")]
    third = jobs.capture("vllm", lane, tmp_path / "run3")
    assert third == second
    assert install.ran == [True, False]  # the third run read the cache


def test_the_cache_key_holds_each_installed_package_and_its_files(
    tmp_path: Path, install: Install
) -> None:
    lane = _lane(tmp_path)
    jobs.capture("vllm", lane, tmp_path / "run1")
    jobs.capture("vllm", lane, tmp_path / "run2")
    assert install.ran == [False]
    # The same version reinstalled with other files (a rebuilt wheel, a fixed install).
    _install(tmp_path / "site", "vllm/__init__.py,sha256=bbbb,10\n")
    jobs.capture("vllm", lane, tmp_path / "run3")
    assert install.ran == [False, False]
    assert len(list((tmp_path / "cache").rglob("capture.json"))) == 2
    assert jobs.installed("vllm").startswith("vllm 0.24.0\nvllm/__init__.py,sha256=bbbb")


# A corpus module in miniature: its test_compile's parameters cost a capture, which is
# recorded in CAPTURED when made.
CORPUS = """
import pathlib
import pytest
from ci.smoke.checks import may_select

IDS = ["sm_90-decode-hd128-gqa8-kernel_unified_attention", "sm_90-gdn-warmup-l64-_fused_post_conv_kernel"]


def pytest_generate_tests(metafunc):
    if "launch" in metafunc.fixturenames:
        found = IDS if may_select(metafunc) else []
        if found:
            pathlib.Path("CAPTURED").write_text("yes")
        metafunc.parametrize("launch", found, ids=found)


@pytest.mark.group("vllm_kernels")
def test_compile(launch):
    pass


def test_package_ready():
    pass
"""


@pytest.mark.parametrize(
    ("selection", "captured", "selected"),
    [
        ((), True, 3),
        (("-k", "test_backends or test_stack"), False, 0),
        (("-k", "test_package_ready"), False, 1),
        (("-k", "test_compile"), True, 2),
        (("-k", "decode"), True, 1),
        (("-k", "kernel_unified_attention or test_stack"), True, 1),
        (("-k", "not test_corpus_standin"), False, 0),
        (("-k", "test_compile[sm_90-gdn"), True, 1),
        (("-m", "gpu"), False, 0),
        (("-m", "group"), True, 2),
    ],
)
def test_a_run_that_selects_no_capture_test_captures_nothing(
    tmp_path: Path, selection: tuple[str, ...], captured: bool, selected: int
) -> None:
    (tmp_path / "test_corpus_standin.py").write_text(CORPUS, encoding="utf-8")
    pytest_args = ["-q", "-p", "no:cacheprovider", "-o", "addopts=", "-o", "markers=group\n gpu"]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *pytest_args,
            "--junitxml=junit.xml",
            *selection,
            "test_corpus_standin.py",
        ],
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 5), done.stdout + done.stderr
    assert (tmp_path / "CAPTURED").exists() == captured
    ran = (tmp_path / "junit.xml").read_text().count("<testcase ")
    assert ran == selected, done.stdout
