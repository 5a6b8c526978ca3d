"""The real-kernel corpus's plain-data parts: JIT attrs of the mirrors, the IR identity, the
capture document read back into compile jobs, FlagGems' vendor names (no Triton needed)."""

from __future__ import annotations

from pathlib import Path

from ci.smoke.compile.compiler import jit_attrs
from ci.smoke.compile.tritonapi import ir_identity
from ci.smoke.contract.lane import Target
from ci.smoke.realkernels import flaggems_corpus, jobs

HIP = Target("hip", "gfx942", 64, 65536)
CUDA = Target("cuda", 90, 32, 232448)


def test_jit_attrs_mark_pointers_and_multiples_of_16_and_amd_pointer_ranges() -> None:
    ints = {"stride_x": 4096, "stride_a": 6}
    assert jit_attrs(CUDA, ["x_ptr"], ints) == {
        "x_ptr": [("tt.divisibility", 16)],
        "stride_x": [("tt.divisibility", 16)],
    }
    assert jit_attrs(HIP, ["x_ptr"], ints)["x_ptr"] == [
        ("tt.divisibility", 16),
        ("tt.pointer_range", 32),
    ]


def test_ir_identity_ignores_source_locations_only() -> None:
    here = '%0 = tt.load %p loc(#loc3)\n#loc3 = loc("/site-packages/vllm/x.py":415:19)\n'
    there = '%0 = tt.load %p loc(#loc7)\n#loc7 = loc("/bundle/kernel_x.py":415:19)\n'
    other = '%0 = tt.load %q loc(#loc3)\n#loc3 = loc("/site-packages/vllm/x.py":415:19)\n'
    assert ir_identity(here) == ir_identity(there)
    assert ir_identity(here) != ir_identity(other)


def test_a_capture_document_becomes_compile_jobs_with_its_attrs_and_environment() -> None:
    document = {
        "package": "vllm",
        "version": "0.24.0",
        "import_env": {"CUDA_VISIBLE_DEVICES": ""},
        "results": [
            {
                "target": "gfx942",
                "scenario": "decode",
                "launches": [
                    {
                        "kernel": "reduce_segments",
                        "module": "vllm.v1.attention.ops.triton_unified_attention",
                        "signature": {"out_ptr": "*bf16", "TILE_SIZE": "constexpr"},
                        "constexprs": {"TILE_SIZE": 16},
                        "attrs": {"out_ptr": [["tt.divisibility", 16], ["tt.pointer_range", 32]]},
                        "options": {},
                        "module_file": "/site/vllm/v1/attention/ops/triton_unified_attention.py",
                        "tags": {},
                    }
                ],
            },
            {"target": "gfx942", "scenario": "broken", "error": "E", "traceback": "Trace"},
        ],
    }
    launch, broken = jobs._launches(document)
    assert (launch.source, launch.id, broken.error) == (
        "vllm 0.24.0",
        "decode-reduce_segments",
        "Trace",
    )
    job = jobs.compile_job(launch, HIP, "art", 10.0, ("ttgir",))
    assert job.attrs == {"out_ptr": [("tt.divisibility", 16), ("tt.pointer_range", 32)]}
    assert job.import_env == {"CUDA_VISIBLE_DEVICES": ""}
    assert job.keep_ir == ("ttgir",) and job.module_file.endswith("triton_unified_attention.py")


def test_flaggems_vendor_names_and_environment() -> None:
    assert flaggems_corpus.vendor("cpu", "hip") == "amd"
    assert flaggems_corpus.vendor("kunlun", "xpu") == "kunlunxin"
    assert flaggems_corpus.vendor("cpu", "npu") is None
    env = flaggems_corpus.vendor_env("nvidia", Path("/w"))
    assert env == {
        "GEMS_VENDOR": "nvidia",
        "FLAGGEMS_DB_URL": "sqlite://",
        "FLAGGEMS_CACHE_DIR": "/w/flaggems-nvidia",
    }


def test_the_cpu_lane_captures_iluvatar_and_kunlunxin_for_its_first_cuda_target_only() -> None:
    groups = flaggems_corpus.foreign_groups("cpu", [HIP, CUDA, Target("cuda", 80, 32, 0)])
    assert groups == {"iluvatar": [CUDA], "kunlunxin": [CUDA]}
    assert flaggems_corpus.foreign_groups("cpu", [HIP]) == {}
    assert flaggems_corpus.foreign_groups("iluvatar", [CUDA]) == {}


def _launch(kernel: str, num_warps: int, foreign: str = "") -> jobs.RealLaunch:
    return jobs.RealLaunch(
        source="flag-gems 5.0.2",
        scenario="mm",
        target="sm_90",
        kernel=kernel,
        module="flag_gems.ops.mm",
        signature={"a": "*bf16"},
        constexprs={},
        attrs={},
        options={"num_warps": num_warps},
        foreign_vendor=foreign,
    )


def test_a_foreign_variant_keeps_only_launches_the_lanes_own_capture_lacks() -> None:
    own = [_launch("mm_kernel", 4)]
    found = [_launch("mm_kernel", 4, "iluvatar"), _launch("mm_kernel", 8, "iluvatar")]
    kept = jobs._new_to_lane(own, found)
    assert [la.options for la in kept] == [{"num_warps": 8}]
    assert kept[0].id == "iluvatar-mm-mm_kernel"


def test_a_vllm_kernel_is_found_by_its_name_wherever_a_release_put_it(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from ci.smoke.realkernels import vllm_corpus

    moved = tmp_path / "vllm" / "third_party" / "fla" / "ops"
    moved.mkdir(parents=True)
    (moved / "fused_gdn_prefill_post_conv.py").write_text(
        "@triton.jit\ndef _fused_post_conv_kernel(x):\n    pass\n", "utf-8"
    )
    (moved / "other.py").write_text("def _fused_post_conv_kernel_v2(x):\n    pass\n", "utf-8")
    package = SimpleNamespace(__path__=[str(tmp_path / "vllm")])
    assert vllm_corpus._defining_modules(package, "_fused_post_conv_kernel") == [
        "vllm.third_party.fla.ops.fused_gdn_prefill_post_conv"
    ]
    assert vllm_corpus._defining_modules(package, "kernel_unified_attention") == []


def test_a_kernel_module_under_a_parent_only_its_package_puts_on_the_path_loads_from_its_file(
    tmp_path: Path,
) -> None:
    from ci.smoke.compile.compiler import _load_module

    source = tmp_path / "matmul_bf16.py"
    source.write_text("KERNEL = 'matmul_kernel'\n", "utf-8")
    module = _load_module("_flagci_absent_vendor.ops.matmul_bf16", str(source))
    assert module.KERNEL == "matmul_kernel"
