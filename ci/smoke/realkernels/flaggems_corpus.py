"""FlagGems' own Triton operators, driven through FlagGems' own op functions with meta tensors.

Runs in the capture process (``python -m ci.smoke.realkernels.capture flaggems``), one process per
FlagGems vendor: FlagGems picks its vendor once, at import (``GEMS_VENDOR``), and with it the
per-vendor kernels and tuned configs under ``flag_gems/runtime/backend/_<vendor>``. Three
things a compile-only node lacks are answered here, none of them a kernel of FlagGems:

- the device: ``torch_device_fn.device(...)`` / ``current_device()`` (``torch.cuda`` for
  most vendors) become a no-op and device 0, as there is no device to enter;
- FlagGems' ``LibEntry`` launch cache (it keeps the compiled kernel of a first launch to
  relaunch it cheaply) passes each launch straight to the JIT, as its first launch does;
- an autotuner's benchmark: each config is launched (and so captured) as a first launch
  would benchmark it, and every config is reported equally fast; each target's capture is
  such a first launch (no autotune results from Triton's disk cache either).
"""

import contextlib
import functools
import gc
import os
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, TypeVar

from ci.smoke.realkernels.jobs import AUTOTUNE_CANDIDATE

SOURCE_PACKAGE = "flag-gems"
# FlagGems' vendor names for a lane's vendor and a target's backend.
VENDORS: Dict[Tuple[str, str], str] = {
    ("cpu", "cuda"): "nvidia",
    ("cpu", "hip"): "amd",
    ("nvidia", "cuda"): "nvidia",
    ("ascend", "npu"): "ascend",
    ("iluvatar", "cuda"): "iluvatar",
    ("iluvatar", "corex"): "iluvatar",
    ("kunlun", "xpu"): "kunlunxin",
    ("kunlun", "cuda"): "kunlunxin",
}
# FlagGems' variants of vendors a lane has no device of, captured on it for its first
# ``cuda`` target with the lane's own Triton: the CPU lane compiles Iluvatar's and
# Kunlunxin's kernels and tuned configs with upstream Triton (the Triton-3.x ports of both
# claim ``cuda`` targets: Iluvatar's 3.2 baseline, Kunlunxin's since FlagTree PR #1211).
# Where a variant needs its vendor's own Triton, its testcases skip and say so.
FOREIGN_VENDORS: Dict[str, Tuple[str, ...]] = {"cpu": ("iluvatar", "kunlunxin")}
FOREIGN_BACKEND = "cuda"
T = TypeVar("T")
# Environment of FlagGems' own: the vendor, and its tuned-config database in memory (it
# would otherwise be named after the GPU the node does not have).
ENV_VENDOR = "GEMS_VENDOR"
ENV_DB = "FLAGGEMS_DB_URL"
ENV_CACHE = "FLAGGEMS_CACHE_DIR"

# (op, the call of FlagGems' op on meta tensors).
Scenario = Tuple[str, Callable[[], None]]


def vendor(lane_vendor: str, backend: str) -> Optional[str]:
    return VENDORS.get((lane_vendor, backend))


def foreign_groups(lane_vendor: str, targets: Sequence[T]) -> Dict[str, List[T]]:
    """FlagGems vendors captured on a lane of ``lane_vendor`` without their device, each for
    the lane's first ``cuda`` target (none where the lane has no such target)."""
    first = [t for t in targets if getattr(t, "backend", "") == FOREIGN_BACKEND][:1]
    return {name: first for name in FOREIGN_VENDORS.get(lane_vendor, ())} if first else {}


def vendor_env(name: str, work: Path) -> Dict[str, str]:
    """The capture's environment for vendor ``name``; FlagGems writes the kernels it generates
    (pointwise ops) under ``work``, where the compile worker loads them from."""
    return {ENV_VENDOR: name, ENV_DB: "sqlite://", ENV_CACHE: str(work / f"flaggems-{name}")}


def import_env() -> Dict[str, str]:
    """What the compile worker needs to import FlagGems' kernel modules as the capture did."""
    return {k: os.environ[k] for k in (ENV_VENDOR, ENV_DB, ENV_CACHE) if k in os.environ}


class _NoDevice:
    """``torch.cuda.device(d)`` where there is no device: entering it does nothing."""

    def __init__(self, device: Any) -> None:
        self.device = device

    def __enter__(self) -> "_NoDevice":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


@contextlib.contextmanager
def _patched(owner: Any, name: str, value: Any) -> Iterator[None]:
    saved = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, saved)


# True while an autotuner "benchmarks" a config: its launches are autotune candidates.
_benchmarking = [False]


def _bench_by_launching(self: Any, *args: Any, config: Any, **meta: Any) -> List[float]:
    current = dict(meta, **config.all_kwargs())
    # Before each launch of a config Triton's own benchmark runs the config's pre-hook, which
    # sets what that config needs of the arguments: FlagGems' host-TMA matmul (Hopper) gives
    # each tensor descriptor the config's block shape there. Without it every candidate but
    # the one finally launched is captured with stale descriptors.
    if config.pre_hook:
        config.pre_hook({**self.nargs, **current})
    _benchmarking[0] = True
    try:
        self.fn.run(*args, **current)
    finally:
        _benchmarking[0] = False
    return [1.0, 1.0, 1.0]


def _bench_without_disk_cache(self: Any, key: Any, configs: Any, bench: Callable[[], None]) -> bool:
    bench()
    return False


def launch_tags() -> Dict[str, Any]:
    return {AUTOTUNE_CANDIDATE: True} if _benchmarking[0] else {}


@contextlib.contextmanager
def context(target: Any) -> Iterator[None]:
    import triton
    from flag_gems import runtime
    from flag_gems.utils.libentry import LibEntry

    device_fn = runtime.torch_device_fn
    # Every target's capture is a first launch: Triton's autotuners forget what an earlier
    # target's capture "benchmarked", so that each benchmarks (launches) every config again.
    # FlagGems' LibTuner keeps its picks in its own database (a ConfigCache, in memory here):
    # later targets of one vendor reuse the first target's pick there.
    for tuner in (o for o in gc.get_objects() if isinstance(o, triton.runtime.Autotuner)):
        if isinstance(tuner.cache, dict):
            tuner.cache.clear()
    with contextlib.ExitStack() as stack:
        stack.enter_context(_patched(device_fn, "device", _NoDevice))
        stack.enter_context(_patched(device_fn, "current_device", lambda: 0))
        stack.enter_context(
            _patched(LibEntry, "run", lambda self, *args, **kwargs: self.fn.run(*args, **kwargs))
        )
        stack.enter_context(_patched(triton.runtime.Autotuner, "_bench", _bench_by_launching))
        # An autotuner with ``cache_results`` (Iluvatar's ``matmul_bf16``) keys its disk cache
        # by the active driver's target (Triton 3.3 and later): there is none; benchmark.
        if hasattr(triton.runtime.Autotuner, "check_disk_cache"):
            stack.enter_context(
                _patched(triton.runtime.Autotuner, "check_disk_cache", _bench_without_disk_cache)
            )
        yield


def _meta(*shape: int, dtype: Any = None) -> Any:
    import torch

    return torch.empty(*shape, dtype=dtype or torch.bfloat16, device="meta")


def _index(*shape: int) -> Any:
    import torch

    return torch.empty(*shape, dtype=torch.int64, device="meta")


def _rotary() -> None:
    import torch
    from flag_gems import apply_rotary_pos_emb

    tokens, heads, head_dim = 256, 32, 128
    apply_rotary_pos_emb(
        _meta(tokens, heads, head_dim),
        _meta(tokens, heads // 4, head_dim),
        _meta(4096, head_dim // 2, dtype=torch.float32),
        _meta(4096, head_dim // 2, dtype=torch.float32),
        _index(tokens),
    )


def _cross_entropy() -> None:
    import flag_gems
    import torch

    flag_gems.cross_entropy_loss(_meta(64, 32000, dtype=torch.float32), _index(64))


# Ops only some vendors' variants define (``_iluvatar/ops``): a scenario where FlagGems, as
# its vendor sets it up, has the op.
VENDOR_ONLY: Tuple[Tuple[str, Tuple[Tuple[int, ...], ...]], ...] = (
    # (M, K) @ (N, K)^T, the linear layer's layout.
    ("matmul_bf16", ((256, 4096), (1024, 4096))),
)


# What vllm-plugin-fl (``VLLM_PLUGINS=fl``, pinned on the Iluvatar lanes) hands FlagGems in
# a Qwen3.6-27B forward, read from flagos-ai/vllm-plugin-FL (commit 8e0422d):
# - ``vllm_fl/ops/custom_ops.py`` ``register_oot_ops`` (called by ``vllm_fl/worker/worker.py``
#   at start) replaces vLLM's ``SiluAndMul``, ``RMSNorm``, ``RotaryEmbedding``, ``FusedMoE``
#   and ``UnquantizedFusedMoEMethod``: ``vllm_fl/ops/activation.py`` calls
#   ``flag_gems.modules.activation.gems_silu_and_mul`` on the two halves of the input,
#   ``vllm_fl/ops/layernorm.py`` ``gems_rms_forward(x, residual, weight, eps)`` (with a
#   residual: FlagGems' fused add + RMS norm), ``vllm_fl/ops/rotary_embedding.py``
#   ``gems_rope_forward`` in place on the rotary part of query and key. The MoE ops do not
#   run: Qwen3.6-27B is dense.
# - ``vllm_fl/platform.py`` ``get_attn_backend_cls`` picks ``vllm_fl/attention/attention.py``,
#   whose ``forward`` calls ``flag_gems.reshape_and_cache_flash`` and the paged
#   ``flag_gems.flash_attn_varlen_func`` (the gated-attention layers; the Gated DeltaNet
#   layers keep vLLM's own Triton kernels, the vLLM corpus). Not captured here:
#   ``flash_attn_varlen_func`` asks the device for its SM count before it launches
#   (``flag_gems/ops/flash_api.py`` ``mha_varlan_fwd``), which a compile-only node has none of.
# - ``vllm_fl/worker/worker.py`` ``flag_gems.enable(record=False, unused=["index",
#   "index_put_"])``: every other aten op FlagGems has runs as FlagGems', the linear layers'
#   ``mm`` first among them.
# Heads are the model's (``vllm_corpus.QWEN36_*``, at tensor parallel size 1); the hidden size
# is this module's ``HIDDEN``, not read from the model.
PLUGIN_VENDORS = ("iluvatar",)
HIDDEN = 4096
TOKENS = 256


def _silu_and_mul_halves() -> None:
    from flag_gems.modules.activation import gems_silu_and_mul

    x = _meta(TOKENS, 2 * HIDDEN)
    gems_silu_and_mul(x[..., :HIDDEN], x[..., HIDDEN:])


def _rms_forward(residual: bool) -> None:
    from flag_gems.modules.normalization import gems_rms_forward

    gems_rms_forward(
        _meta(TOKENS, HIDDEN), _meta(TOKENS, HIDDEN) if residual else None, _meta(HIDDEN), 1e-6
    )


def _rope_forward() -> None:
    import torch
    from flag_gems.modules.rotary_embedding import gems_rope_forward

    from ci.smoke.realkernels.vllm_corpus import QWEN36_HEAD, QWEN36_KV_HEADS, QWEN36_Q_HEADS

    cos_sin = _meta(4096, QWEN36_HEAD, dtype=torch.float32)
    cos, sin = cos_sin.chunk(2, dim=-1)
    gems_rope_forward(
        _meta(TOKENS, QWEN36_Q_HEADS, QWEN36_HEAD),
        _meta(TOKENS, QWEN36_KV_HEADS, QWEN36_HEAD),
        cos,
        sin,
        position_ids=_index(TOKENS),
        rotary_interleaved=False,
        inplace=True,
    )


# The plugin's KV cache, ``AttentionFLBackend.get_kv_cache_shape``: (2, blocks, block size (a
# multiple of 16), KV heads, head size), key and value caches unbound from it; one new
# token of each of ``SEQS`` sequences cached.
BLOCK, BLOCKS, SEQS = 16, 64, 4


def _kv_cache() -> Tuple[Any, Any]:
    from ci.smoke.realkernels.vllm_corpus import QWEN36_HEAD, QWEN36_KV_HEADS

    key_cache, value_cache = _meta(2, BLOCKS, BLOCK, QWEN36_KV_HEADS, QWEN36_HEAD).unbind(0)
    return key_cache, value_cache


def _reshape_and_cache_flash() -> None:
    import torch
    from flag_gems import reshape_and_cache_flash

    from ci.smoke.realkernels.vllm_corpus import QWEN36_HEAD, QWEN36_KV_HEADS

    key_cache, value_cache = _kv_cache()
    scale = _meta(1, dtype=torch.float32)
    reshape_and_cache_flash(
        _meta(SEQS, QWEN36_KV_HEADS, QWEN36_HEAD),
        _meta(SEQS, QWEN36_KV_HEADS, QWEN36_HEAD),
        key_cache,
        value_cache,
        _index(SEQS),
        "auto",
        scale,
        scale,
    )


def _plugin_scenarios(ops: Any) -> List[Scenario]:
    return [
        ("silu_and_mul", _silu_and_mul_halves),
        ("rms_norm", functools.partial(_rms_forward, False)),
        ("fused_add_rms_norm", functools.partial(_rms_forward, True)),
        ("rotary_embedding", _rope_forward),
        ("reshape_and_cache_flash", _reshape_and_cache_flash),
        ("mm", functools.partial(ops.mm, _meta(TOKENS, HIDDEN), _meta(HIDDEN, 1024))),
    ]


def scenarios(target: Any) -> List[Scenario]:
    """What vllm-plugin-fl dispatches for a vendor whose lanes run it, else the ops vLLM on
    FlagOS uses most (picked by hand); and the vendor's own ops (``VENDOR_ONLY``)."""
    # FlagGems' top level, not ``flag_gems.ops``: at import FlagGems replaces the generic ops
    # there by its vendor's (``runtime.replace_customized_ops(globals())``, from
    # ``flag_gems/runtime/backend/_<vendor>/ops`` and ``fused``), so the vendor's variant is
    # what each scenario calls.
    import flag_gems as ops

    plugin = os.environ.get(ENV_VENDOR) in PLUGIN_VENDORS
    calls = _plugin_scenarios(ops) if plugin else _hand_picked(ops)
    for name, shapes in VENDOR_ONLY:
        if hasattr(ops, name):
            tensors = [_meta(*shape) for shape in shapes]
            calls.append((name, functools.partial(getattr(ops, name), *tensors)))
    return calls


def _hand_picked(ops: Any) -> List[Scenario]:
    hidden = HIDDEN
    return [
        ("add", functools.partial(ops.add, _meta(256, hidden), _meta(256, hidden))),
        ("mul", functools.partial(ops.mul, _meta(256, hidden), _meta(256, hidden))),
        ("mm", functools.partial(ops.mm, _meta(256, hidden), _meta(hidden, 1024))),
        ("bmm", functools.partial(ops.bmm, _meta(8, 256, 128), _meta(8, 128, 256))),
        ("softmax", functools.partial(ops.softmax, _meta(256, 4096), -1)),
        (
            "layer_norm",
            functools.partial(
                ops.layer_norm, _meta(256, hidden), [hidden], _meta(hidden), _meta(hidden), 1e-5
            ),
        ),
        ("rms_norm", functools.partial(ops.rms_norm, _meta(256, hidden), [hidden], _meta(hidden))),
        ("div", functools.partial(ops.div_mode, _meta(256, hidden), _meta(256, hidden))),
        ("silu_and_mul", functools.partial(ops.silu_and_mul, _meta(256, hidden), _meta(256, 4096))),
        ("rotary_embedding", _rotary),
        ("topk", functools.partial(ops.topk, _meta(64, 32000), 8)),
        ("argmax", functools.partial(ops.argmax, _meta(64, 32000), 1)),
        ("cross_entropy", _cross_entropy),
        ("embedding", functools.partial(ops.embedding, _meta(32000, hidden), _index(256))),
        ("index_select", functools.partial(ops.index_select, _meta(32000, hidden), 0, _index(256))),
    ]
