"""`flagci run` of the embedded default, end to end: the CPU lane on this machine."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ci.build.engine import connect
from ci.build.environment import LaneEnvironment
from ci.cli import main
from ci.lanes.matrix import Lane
from ci.results import reader
from tests.fixtures.junit_cases import smoke_cases

pytestmark = pytest.mark.integration

# The 3D path's configs (split-KV decode: 16 segments, then reduce_segments).
ATTENTION_3D_CONFIGS = {
    f"hd{hd}-bm16-t16-seg16-{launch}-{dt}"
    for hd in (128, 256)
    for launch in ("wdefault-sdefault", "w4-s2")
    for dt in ("bf16", "fp16")
}
ATTENTION_CONFIGS = {
    *(
        f"hd{hd}-bm{bm}-t{t}-w4-s{s}-{dt}"
        for hd in (128, 256)
        for bm in (16, 64)
        for t in (16, 32)
        for s in (2, 3)
        for dt in ("bf16", "fp16")
    ),
    # vLLM's 2D launch: no num_warps / num_stages.
    *(f"hd{hd}-bm16-t32-wdefault-sdefault-{dt}" for hd in (128, 256) for dt in ("bf16", "fp16")),
    *ATTENTION_3D_CONFIGS,
}
GDN_CONFIGS = {
    f"{name}-bt16-w4-s{s}-bf16"
    for name in (
        "qwen3.6-h128-hv16-k128-v128",
        "qwen3-next-h16-hv32-k128-v128",
        "small-h4-hv6-k48-v40",
    )
    for s in (2, 1)
}


def test_cpu_lane_compiles_every_config_for_every_target_and_numerics_pass(
    tmp_path: Path,
    cpu_lane: Lane,
    cpu_lane_env: LaneEnvironment,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "--lane", cpu_lane.name, "--results", str(tmp_path)]) == 0
    (run_dir,) = (d for d in tmp_path.iterdir() if (d / "run.json").is_file())
    cases = reader.read_cases(run_dir / "merged.xml", [cpu_lane.name])
    by_kind: dict[tuple[str, str], set[tuple[str, str]]] = {}
    real: dict[str, set[tuple[str, str]]] = {}
    for case in cases:
        assert case.outcome in ("passed", "skipped") or case.test.endswith(
            "::test_interpreter_bf16_dot"
        ), case
        if case.outcome != "passed" or not case.kernel:
            continue
        if "source" in case.properties:  # the real-kernel corpus: no config, a scenario
            real.setdefault(case.properties["source"], set()).add((case.kernel, case.target))
            continue
        kind = "compile" if "::test_compile" in case.test else "numerics"
        target = case.target or "-"
        by_kind.setdefault((case.kernel, kind), set()).add((case.config, target))
        assert case.lane == cpu_lane.name and case.node == "localhost"
        if kind == "compile":
            assert case.compile_seconds is not None and case.compile_seconds > 0
            assert case.shared_bytes is not None and case.shared_bytes >= 0

    targets = {"sm_80", "sm_90", "sm_100", "gfx942", "gfx950"}
    assert by_kind[("unified_attention", "compile")] == {
        (c, t) for c in ATTENTION_CONFIGS for t in targets
    }
    assert by_kind[("gdn_post_conv", "compile")] == {(c, t) for c in GDN_CONFIGS for t in targets}
    assert by_kind[("reduce_segments", "compile")] == {
        (c, t) for c in ATTENTION_3D_CONFIGS for t in targets
    }
    assert by_kind[("unified_attention", "numerics")] == {(c, "-") for c in ATTENTION_CONFIGS}
    assert by_kind[("gdn_post_conv", "numerics")] == {(c, "-") for c in GDN_CONFIGS}

    vllm = {"kernel_unified_attention", "reduce_segments", "_fused_post_conv_kernel"}
    assert {(k, t) for k in vllm for t in targets} <= real["vllm 0.24.0"]
    gems = {k for k, _ in real["flag-gems 5.0.2"]}
    for op in ("mm_kernel", "bmm_kernel", "softmax", "layer_norm", "rms_norm", "topk", "argmax"):
        assert any(k.startswith(op) for k in gems), (op, sorted(gems))
    assert {t for _, t in real["flag-gems 5.0.2"]} == targets

    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "passed" and record["nodes"] == ["localhost"]
    assert (run_dir / "index.html").read_text().count('class="passed"') >= 190 + 38
    # Every failure known (there is none): exit 0, and the summary says so.
    assert "**OK**" in (run_dir / "summary.md").read_text()
    # The run went into the history, and the dashboard was rebuilt from it.
    assert (tmp_path / "history.sqlite").is_file()
    assert run_dir.name in (tmp_path / "dashboard" / "index.html").read_text()
    out = capsys.readouterr().out
    assert "cpu-triton-3.6.0 @ localhost" in out and "==> cpu-triton-3.6.0: smoke suite" in out


@pytest.mark.docker
def test_the_cpu_lane_in_its_image_on_the_local_engine(tmp_path: Path, cpu_lane: Lane) -> None:
    code = main(
        ["run", "--image", "--lane", cpu_lane.name, "--results", str(tmp_path), "--no-history",
         "--workers", "1", "--", "-k", "test_backends"]
    )  # fmt: skip
    assert code == 0
    (run_dir,) = (d for d in tmp_path.iterdir() if (d / "run.json").is_file())
    record = json.loads((run_dir / "run.json").read_text())
    assert record["kind"] == "image" and record["status"] == "passed"
    part = run_dir / "lanes" / f"localhost__{cpu_lane.name}"
    cases = smoke_cases(part / "junit.xml")
    assert {c.name for c in cases} >= {"test_installed_backends", "test_inductor_target"}
    assert all(c.properties["node"] == "localhost" for c in cases)
    # The unprivileged image ran as the caller: its results are the caller's, the folder's
    # modes are ordinary.
    assert (part / "junit.xml").stat().st_uid == os.getuid()
    assert part.stat().st_mode & 0o002 == 0
    with connect() as engine:
        leftover = engine.client.containers.list(
            all=True, filters={"label": f"org.flagci.run={run_dir.name}"}
        )
    assert leftover == []
