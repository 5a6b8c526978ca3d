"""The real-kernel corpus's plain-data parts: JIT attrs of the mirrors, the IR identity, the
capture document read back into compile jobs, FlagGems' vendor names (no Triton needed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

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


def test_a_kernel_module_its_package_imports_as_it_initialises_loads_through_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # FlagGems' form on a Hopper GPU (seen on the H200): ``flag_gems`` puts its backend folder
    # on sys.path and imports ``hopper.ops``, whose ``__init__`` does ``from .mm import mm``,
    # and ``hopper/ops/mm.py`` itself starts with ``from flag_gems import runtime``.
    from ci.smoke.compile.compiler import _load_module

    top = tmp_path / "flagci_gems_like"
    ops = top / "backend" / "hopper" / "ops"
    ops.mkdir(parents=True)
    (top / "__init__.py").write_text(
        "import sys, os\n"
        "sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'backend'))\n"
        "import hopper.ops\n"
        "runtime = 'ready'\n",
        "utf-8",
    )
    (top / "backend" / "__init__.py").write_text("", "utf-8")
    (top / "backend" / "hopper" / "__init__.py").write_text("", "utf-8")
    (ops / "__init__.py").write_text("from .mm import mm\n", "utf-8")
    (ops / "mm.py").write_text(
        "import flagci_gems_like\n\ndef mm():\n    return 'mm_kernel'\n", "utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        module = _load_module("hopper.ops.mm", str(ops / "mm.py"))
        assert module.mm() == "mm_kernel"
        assert sys.modules["hopper.ops"].mm is module.mm
    finally:
        for name in ("flagci_gems_like", "hopper", "hopper.ops", "hopper.ops.mm"):
            sys.modules.pop(name, None)


def test_a_benchmarked_config_runs_its_pre_hook_before_its_launch_as_triton_does() -> None:
    # FlagGems' host-TMA matmul: each config's pre-hook gives the tensor descriptors that
    # config's block shape; a candidate launched without it compiles with stale shapes
    # ("accumulator shape is incompatible", seen on the H200).
    seen: list[tuple[str, object]] = []

    class Config:
        def all_kwargs(self) -> dict[str, object]:
            return {"BLOCK_M": 64, "num_warps": 4}

        @staticmethod
        def pre_hook(nargs: dict[str, object]) -> None:
            seen.append(("pre_hook", dict(nargs)))

    class Kernel:
        @staticmethod
        def run(*args: object, **meta: object) -> None:
            seen.append(("run", (args, meta, flaggems_corpus.launch_tags())))

    class Tuner:
        def __init__(self) -> None:
            self.nargs = {"a_desc": "descriptor"}
            self.fn = Kernel()

    times = flaggems_corpus._bench_by_launching(Tuner(), "x", config=Config(), M=8)
    assert times == [1.0, 1.0, 1.0]
    assert seen == [
        ("pre_hook", {"a_desc": "descriptor", "M": 8, "BLOCK_M": 64, "num_warps": 4}),
        ("run", (("x",), {"M": 8, "BLOCK_M": 64, "num_warps": 4}, {jobs.AUTOTUNE_CANDIDATE: True})),
    ]
    assert flaggems_corpus.launch_tags() == {}
