"""The attention mirror's config matrix as data: both of vLLM's paths, and configs that pass
no num_warps / num_stages, as compile jobs (no Triton needed)."""

from __future__ import annotations

from ci.smoke.contract.lane import Target
from ci.smoke.mirrors import attention

CUDA = Target("cuda", 90, 32, 232448)


def by_id(config_id: str) -> attention.AttentionConfig:
    (config,) = [c for c in attention.CONFIGS if c.id == config_id]
    return config


def test_backend_default_configs_pass_no_launch_options() -> None:
    defaults = [c for c in attention.CONFIGS if c.num_warps is None and c.num_stages is None]
    # vLLM's 2D prefill shape and its 3D decode shape, at both head sizes and dtypes.
    assert {(c.is_3d, c.head_size, c.dtype) for c in defaults} == {
        (is_3d, hd, dtype)
        for is_3d in (False, True)
        for hd in (128, 256)
        for dtype in ("bf16", "fp16")
    }
    config = by_id("hd128-bm16-t32-wdefault-sdefault-bf16")
    assert config.options == {}
    assert attention.compile_job(config, CUDA, "art", 60.0).options == {}
    explicit = by_id("hd128-bm16-t32-w4-s2-bf16")
    assert attention.compile_job(explicit, CUDA, "art", 60.0).options == {
        "num_warps": 4,
        "num_stages": 2,
    }


def test_a_3d_config_compiles_both_kernels_with_float32_segments() -> None:
    config = by_id("hd128-bm16-t16-seg16-wdefault-sdefault-bf16")
    job = attention.compile_job(config, CUDA, "art", 60.0)
    assert (job.constexprs["IS_3D"], job.constexprs["NUM_SEGMENTS"]) == (True, 16)
    assert {job.signature[name] for name in attention.SEGMENT_POINTERS} == {"*fp32"}
    reduce = attention.reduce_compile_job(config, CUDA, "art", 60.0)
    assert reduce.kernel == attention.REDUCE_KERNEL and reduce.options == {}
    assert reduce.signature["out_ptr"] == "*bf16" and reduce.signature["segm_max_ptr"] == "*fp32"
    assert reduce.constexprs["NUM_SEGMENTS"] == 16
    # The output strides are multiples of 16 at the launch: the JIT marks them so.
    assert reduce.attrs["output_stride_0"] == [("tt.divisibility", 16)]


def test_a_2d_config_passes_its_output_as_the_unused_segment_buffers() -> None:
    job = attention.compile_job(by_id("hd128-bm16-t16-w4-s2-fp16"), CUDA, "art", 60.0)
    assert (job.constexprs["IS_3D"], job.constexprs["NUM_SEGMENTS"]) == (False, 1)
    assert {job.signature[name] for name in attention.SEGMENT_POINTERS} == {"*fp16"}
