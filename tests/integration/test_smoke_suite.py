"""The smoke suite for real, in the CPU lane's environment (upstream triton, torch CPU).

Each test here guards one promise of the suite: failures end as failing testcases with
their message and kind, never as a crashed run.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from ci.build import environment
from ci.commands.options import cache_from
from ci.core import process
from ci.core.errors import EnvironmentSetupError
from ci.lanes.matrix import Lane, LaneMatrix
from tests.fixtures.junit_cases import SmokeCase, smoke_cases
from tests.smoke_runner import run_smoke

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


def results_of(folder: Path) -> dict[str, SmokeCase]:
    return {c.test_id: c for c in smoke_cases(folder / "junit.xml")}


def test_broken_mask_turns_numerics_red(
    tmp_path: Path, cpu_lane: Lane, cpu_lane_env: environment.LaneEnvironment
) -> None:
    """Break the causal mask of our attention kernel in a copy of the suite: numerics fail."""
    copy = tmp_path / "src"
    shutil.copytree(REPO / "ci", copy / "ci", ignore=shutil.ignore_patterns("__pycache__"))
    kernel = copy / "ci" / "smoke" / "mirrors" / "kernels" / "unified_attention.py"
    source = kernel.read_text()
    good = "seq_mask = seq_offset[None, :] <= query_abs_pos"
    assert good in source
    kernel.write_text(source.replace(good, good.replace("<=", "<")))

    done = run_smoke(
        cpu_lane_env.python,
        cpu_lane.smoke_context("mutant"),
        tmp_path / "res",
        "-k",
        "test_numerics and (hd128-bm16-t16-w4-s2 or hd256-bm64-t32-w4-s3)",
        env={"PYTHONPATH": str(copy)},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    cases = results_of(tmp_path / "res")
    numerics = [c for c in cases.values() if c.name.startswith("test_numerics")]
    assert len(numerics) == 4
    for case in numerics:
        assert case.outcome == "failed"
        assert case.properties["failure_kind"] == "numeric_mismatch"
        # A query that no longer sees its own key: rows with nothing visible go NaN (0/0),
        # the others drift. Either way the check names what it found.
        assert "numeric mismatch: max relative error" in case.message or "are NaN" in case.message


def test_a_broken_adapter_is_a_harness_error_with_its_traceback(
    tmp_path: Path, cpu_lane: Lane, cpu_lane_env: environment.LaneEnvironment
) -> None:
    """Call ASTSource the Triton 3.2 way on 3.6 (in a copy of the suite): every compile
    fails before triton.compile runs, as our harness's fault, never the compiler's."""
    copy = tmp_path / "src"
    shutil.copytree(REPO / "ci", copy / "ci", ignore=shutil.ignore_patterns("__pycache__"))
    adapter = copy / "ci" / "smoke" / "compile" / "tritonapi.py"
    source = adapter.read_text()
    good = "    if takes_constexprs():\n"
    assert good in source
    adapter.write_text(source.replace(good, "    if not takes_constexprs():\n"))

    done = run_smoke(
        cpu_lane_env.python,
        cpu_lane.smoke_context("mutant"),
        tmp_path / "res",
        "-k",
        "test_compile and small and s2",
        env={"PYTHONPATH": str(copy)},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    compiles = [
        c for c in results_of(tmp_path / "res").values() if c.name.startswith("test_compile")
    ]
    assert len(compiles) == len(cpu_lane.targets)
    for case in compiles:
        assert case.outcome == "failed"
        assert case.properties["failure_kind"] == "harness_error"
        assert "[harness_error] preparing the compile: " in case.message
        assert "not of the compiler under test" in case.text
        assert "traceback:" in case.text and "ci/smoke/compile/tritonapi.py" in case.text


# Tests that fail with an uncaught exception, dropped into a copy of the suite: one a rule
# decides (the host has no C compiler), one no rule knows, worded like a lost worker.
UNCAUGHT = """
def test_without_a_c_compiler():
    raise RuntimeError("Failed to find C compiler. Please specify via CC environment variable.")


def test_lost_heartbeat():
    raise RuntimeError("ZorpError: the ray actor died unexpectedly and its heartbeat was lost")
"""


def test_an_uncaught_failure_gets_the_rules_kind_and_a_guess_decides_nothing(
    tmp_path: Path, cpu_lane: Lane, cpu_lane_env: environment.LaneEnvironment
) -> None:
    """A test that records no failure kind gets the one the rules decide, so the verdicts
    know a missing toolchain is not the compiler's; a resemblance guess is shown in the
    triage summary and leaves the kind unclassified."""
    copy = tmp_path / "src"
    shutil.copytree(REPO / "ci", copy / "ci", ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "ci" / "smoke" / "test_uncaught.py").write_text(UNCAUGHT)

    done = run_smoke(
        cpu_lane_env.python,
        cpu_lane.smoke_context("mutant"),
        tmp_path / "res",
        "-k",
        "test_uncaught",
        env={"PYTHONPATH": str(copy)},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    cases = {c.name: c for c in results_of(tmp_path / "res").values()}
    toolchain, lost = cases["test_without_a_c_compiler"], cases["test_lost_heartbeat"]
    assert toolchain.properties["failure_kind"] == "toolchain"
    assert "lacks the host C compiler" in toolchain.properties["triage"]
    assert toolchain.properties["signature"].startswith("toolchain|")
    assert lost.properties["failure_kind"] == "unclassified"
    assert "[no rule decided; by resemblance: " in lost.properties["triage"]


def _corex_env(tmp_path: Path, cache: Path) -> Path:
    """A venv like a FlagTree 0.6.0 install: Triton with only a corex-only backend plugin."""
    venv = tmp_path / "corex-venv"
    house = cache / "wheelhouse" / "cpu-triton-3.6.0"
    what = "building the corex fixture environment"
    process.run(
        [sys.executable, "-m", "venv", "--without-pip", venv],
        error=EnvironmentSetupError,
        what=what,
    )
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q"]
    offline = ["--no-index", "--find-links", str(house)]
    process.run(
        [
            *pip,
            *offline,
            "--no-deps",
            "triton==3.6.0",
            "pytest",
            "pluggy",
            "iniconfig",
            "packaging",
            "pygments",
        ],
        error=EnvironmentSetupError,
        what=what,
    )
    site = next((venv / "lib").glob("python*/site-packages"))
    # FlagTree's wheel registers only its vendor backend: drop upstream's nvidia and amd.
    entry_points = next(site.glob("triton-*.dist-info")) / "entry_points.txt"
    entry_points.write_text("")
    # Built from a copy: pip's in-tree build would leave build/ in the repository.
    plugin = shutil.copytree(
        REPO / "tests" / "fixtures" / "corex_backend", tmp_path / "corex_backend"
    )
    process.run(
        [*pip, *offline, str(plugin)],
        error=EnvironmentSetupError,
        what=what,
    )
    (site / "flagci-smoke.pth").write_text(f"{REPO}\n")
    return venv / "bin" / "python"


def test_stack_facts_name_both_values_when_the_driver_contradicts_the_lane(
    tmp_path: Path, matrix: LaneMatrix, cpu_lane_env: environment.LaneEnvironment
) -> None:
    """The Iluvatar baseline lane's file says `cuda`; a driver that answers `corex` (the
    fixture, as FlagTree 0.6.0's does) turns test_stack_facts red, and compiles use `corex`."""
    python = _corex_env(tmp_path, cache_from(os.environ))
    context = matrix.lane("iluvatar-triton-3.2.0").smoke_context("fixture-node")
    context["devices"] = []  # the fixture's device is its driver: no /dev/iluvatar* here
    done = run_smoke(
        python,
        context,
        tmp_path / "res",
        "-k",
        "test_stack or (test_compile and small and s2)",
        env={"FLAGCI_FIXTURE_DRIVER_ACTIVE": "1"},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    cases = results_of(tmp_path / "res")
    facts = cases["test_stack::test_stack_facts"]
    assert facts.outcome == "failed"
    assert "target backend: the lane file says 'cuda', the stack says 'corex'" in facts.message
    assert facts.properties["failure_kind"] == "stack_facts"
    assert facts.properties["driver_target"] == "corex:71:64"
    # The compile tests used what the stack says.
    compiles = [c for c in cases.values() if c.name.startswith("test_compile[")]
    assert compiles and all(c.properties["backend"] == "corex" for c in compiles), compiles
    assert all(c.outcome == "passed" for c in compiles), [c.message for c in compiles]


def test_corex_only_backend_fails_the_cuda_target_and_the_run_completes(
    tmp_path: Path, matrix: LaneMatrix, cpu_lane_env: environment.LaneEnvironment
) -> None:
    python = _corex_env(tmp_path, cache_from(os.environ))
    lane = matrix.lane("iluvatar-flagtree-0.6.0")
    done = run_smoke(
        python,
        lane.smoke_context("fixture-node"),
        tmp_path / "res",
        "-k",
        "backends or vllm or hd128-bm16-t16-w4-s2-bf16 or small",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    cases = results_of(tmp_path / "res")

    inductor = cases["test_backends::test_inductor_target"]
    assert inductor.outcome == "failed"
    assert (
        "0 compatible backends for target (cuda) ([]). There should only be one."
        in inductor.message
    )
    assert inductor.properties["failure_kind"] == "backend_resolution"
    assert inductor.properties["node"] == "fixture-node"
    assert inductor.properties["signature"] == "backend_resolution|0 backends|target cuda|[]"

    claimed = cases["test_backends::test_target_claimed[ivcore11]"]
    assert claimed.outcome == "passed"
    assert claimed.properties["claimed_by"] == "flagci_corex_fixture.compiler"
    assert cases["test_backends::test_installed_backends"].properties["backends"] == "corex"

    # The rest of the run completed: kernels compiled through the corex backend...
    compiles = [c for c in cases.values() if c.name.startswith("test_compile[ivcore11")]
    assert len(compiles) == 3 and all(c.outcome == "passed" for c in compiles), compiles
    # ...numerics were skipped with their reason (no torch there), vLLM likewise.
    assert all(c.outcome == "skipped" for c in cases.values() if c.name.startswith("test_numerics"))
    assert cases["test_vllm::test_generate_hello"].outcome == "skipped"


def test_shared_memory_over_the_limit_is_out_of_resources(
    tmp_path: Path, cpu_lane_env: environment.LaneEnvironment
) -> None:
    """An attention config too big for sm_80's 166912 bytes per block."""
    script = tmp_path / "oversized.py"
    script.write_text(
        "import json, sys\n"
        "from ci.smoke.mirrors import attention\n"
        "from ci.smoke.compile.compiler import CompileWorker\n"
        "from ci.smoke.contract.lane import Target\n"
        "config = attention.AttentionConfig(256, 128, 256, 4, 3, 'bf16')\n"
        "worker = CompileWorker()\n"
        "job = attention.compile_job(config, Target('cuda', 80, 32, 166912), sys.argv[1], 600)\n"
        "print(json.dumps(worker.compile(job).__dict__))\n"
        "worker.close()\n"
    )
    artifacts = tmp_path / "artifacts"
    done = process.run(
        [cpu_lane_env.python, script, artifacts],
        error=EnvironmentSetupError,
        what="oversized compile",
        capture=True,
    )
    import json

    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome["status"] == "out_of_resources"
    assert outcome["shared"] > 166912
    assert (
        f"out of resource: shared memory, Required: {outcome['shared']}, Hardware limit: 166912"
        in outcome["message"]
    )
    failure = json.loads((artifacts / "failure.json").read_text())
    assert failure["outcome"]["status"] == "out_of_resources"
    assert failure["job"]["options"] == {"num_warps": 4, "num_stages": 3}


def test_options_left_to_the_backend_stay_out_of_the_bundle_and_are_recorded(
    tmp_path: Path, cpu_lane_env: environment.LaneEnvironment
) -> None:
    """An oversized config that passes no num_warps / num_stages (as vLLM launches): the
    compile takes sm_80's defaults and records them; its bundle's spec leaves them out (the
    replay takes the same defaults); the probe lowers num_stages from the default."""
    script = tmp_path / "defaulted.py"
    script.write_text(
        "import json, sys\n"
        "from ci.smoke.mirrors import attention\n"
        "from ci.smoke.compile.compiler import CompileWorker\n"
        "from ci.smoke.contract.lane import Target\n"
        "from ci.smoke.triage.compile_failure import triage_compile_failure\n"
        "config = attention.AttentionConfig(256, 64, 128, None, None, 'bf16')\n"
        "worker = CompileWorker()\n"
        "job = attention.compile_job(config, Target('cuda', 80, 32, 166912), sys.argv[1], 600)\n"
        "outcome = worker.compile(job)\n"
        "worker.close()\n"
        "print(json.dumps({'outcome': outcome.__dict__, 'hint': triage_compile_failure(job, outcome).hint}))\n"
    )
    artifacts = tmp_path / "artifacts"
    done = process.run(
        [cpu_lane_env.python, script, artifacts],
        error=EnvironmentSetupError,
        what="compile with the backend's default options",
        capture=True,
    )
    import json

    result = json.loads(done.stdout.strip().splitlines()[-1])
    outcome = result["outcome"]
    assert outcome["status"] == "out_of_resources"
    # Upstream Triton 3.6's NVIDIA defaults.
    assert outcome["backend_defaults"] == {"num_warps": 4, "num_stages": 3}
    failure = json.loads((artifacts / "failure.json").read_text())
    assert failure["job"]["options"] == {}
    assert failure["outcome"]["backend_defaults"] == {"num_warps": 4, "num_stages": 3}
    spec = json.loads((artifacts / "bundle" / "spec.json").read_text())
    assert spec["options"] == {}
    assert "options left to the backend's defaults: num_warps=4, num_stages=3" in (
        (artifacts / "bundle" / "failure.txt").read_text()
    )
    attempts = failure["probe"]["attempts"]
    assert attempts[0]["changes"] == {"num_stages": 2}, attempts
    assert result["hint"] == "compiles with num_stages=1", attempts


def test_hung_compile_is_cut_and_reported_as_timeout(
    tmp_path: Path, cpu_lane: Lane, cpu_lane_env: environment.LaneEnvironment
) -> None:
    done = run_smoke(
        cpu_lane_env.python,
        cpu_lane.smoke_context("n1"),
        tmp_path / "res",
        "-k",
        "test_compile and sm_90 and hd256-bm64-t32-w4-s3-bf16",
        env={"FLAGCI_COMPILE_TIMEOUT_S": "0.05"},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    (case,) = results_of(tmp_path / "res").values()
    assert case.outcome == "failed"
    assert case.properties["failure_kind"] == "timeout"
    assert "compile did not finish within 0.05 s and was killed" in case.message
    assert case.properties["signature"].startswith("timeout|compile|")


def _blocked_corpus(results: Path) -> list[SmokeCase]:
    return [c for c in results_of(results).values() if c.classname.endswith("test_vllm_kernels")]


def _assert_one_clear_failure(results: Path, what: str) -> None:
    """The stack check fails with one harness_error saying what is missing; the corpus's
    other testcases are skipped as blocked by it; nothing was captured."""
    cases = _blocked_corpus(results)
    failed = [c for c in cases if c.outcome == "failed"]
    assert [c.name for c in failed] == ["test_package_ready"], [(c.name, c.outcome) for c in cases]
    assert failed[0].properties["failure_kind"] == "harness_error"
    assert what in failed[0].message + failed[0].text
    others = [c for c in cases if c.name != "test_package_ready"]
    assert others and all(c.outcome == "skipped" for c in others)
    assert all("blocked by test_package_ready" in c.message for c in others), others[0].message
    assert not list(results.rglob("capture-vllm.json"))


STACK_SELECTION = "test_vllm_kernels and (test_package_ready or test_capture or test_launch)"


def test_a_shadowed_vllm_blocks_the_corpus_with_one_clear_failure(
    tmp_path: Path, cpu_lane: Lane, cpu_lane_env: environment.LaneEnvironment
) -> None:
    """A module named vllm ahead of the installed one (a source tree on PYTHONPATH)."""
    shadow = tmp_path / "shadow" / "vllm"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    done = run_smoke(
        cpu_lane_env.python,
        cpu_lane.smoke_context("broken"),
        tmp_path / "res",
        "-k",
        STACK_SELECTION,
        env={"PYTHONPATH": f"{REPO}:{shadow.parent}"},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    _assert_one_clear_failure(tmp_path / "res", f"vllm is imported from {shadow}/__init__.py")


def test_vllm_without_its_metadata_blocks_the_corpus_with_one_clear_failure(
    tmp_path: Path, cpu_lane: Lane, cpu_lane_env: environment.LaneEnvironment
) -> None:
    """The lane's environment again, in a throwaway venv whose site-packages links every
    entry of the lane's but vLLM's dist-info (vLLM installed without its metadata)."""
    venv = tmp_path / "venv"
    process.run(
        [str(cpu_lane_env.python), "-m", "venv", "--without-pip", str(venv)],
        error=EnvironmentSetupError,
        what="making a throwaway venv",
        capture=True,
    )
    # The folder the lane's packages are installed in (its venv may add it by a .pth file).
    found = process.run(
        [
            str(cpu_lane_env.python),
            "-c",
            "import triton, os; print(os.path.dirname(os.path.dirname(triton.__file__)))",
        ],
        error=EnvironmentSetupError,
        what="finding the lane's site-packages",
        capture=True,
    )
    lane_site = Path(found.stdout.strip())
    site = next((venv / "lib").glob("python*/site-packages"))
    for entry in lane_site.iterdir():
        if not entry.name.startswith("vllm-"):
            (site / entry.name).symlink_to(entry)
    done = run_smoke(
        venv / "bin" / "python",
        cpu_lane.smoke_context("broken"),
        tmp_path / "res",
        "-k",
        STACK_SELECTION,
        env={"PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    _assert_one_clear_failure(tmp_path / "res", "vllm has no installed metadata")
