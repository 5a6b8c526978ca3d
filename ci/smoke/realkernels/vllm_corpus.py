"""vLLM's own Triton kernels, driven through vLLM's own launchers with meta tensors.

Runs in the capture process (``python -m ci.smoke.realkernels.capture vllm``): every scenario calls
``unified_attention`` or ``fused_post_conv_prep`` from the installed vllm with tensors on
torch's ``meta`` device (shapes, strides and dtypes, no memory), the way vLLM's Triton
attention backend and its Qwen3.6 GDN layer call them, and the capture records what each
``kernel[grid](...)`` launch would compile. Nothing of vLLM is re-implemented here; the only
thing the capture tells vLLM is the GPU it would see (``get_device_capability``): on a
compile-only node it sees none, and its B200 tuning (head 256) would never be captured.
"""

import contextlib
import functools
import inspect
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

SOURCE_PACKAGE = "vllm"


@dataclass(frozen=True)
class KernelRef:
    """A vLLM kernel found by what it is: the ``@triton.jit`` function's name and the
    launcher beside it in the same module that the scenarios call, with the keyword
    arguments they pass; ``module`` is where vLLM 0.24.0 has them (what a change is told
    against)."""

    kernel: str
    launcher: str
    module: str
    arguments: Tuple[str, ...]


class KernelChanged(RuntimeError):
    """The installed vLLM moved a kernel out of reach or changed its launcher: what changed,
    in one line, instead of the traceback of a scenario that no longer fits."""


ATTENTION = KernelRef(
    "kernel_unified_attention",
    "unified_attention",
    "vllm.v1.attention.ops.triton_unified_attention",
    (
        "q", "k", "v", "out", "cu_seqlens_q", "max_seqlen_q", "seqused_k", "max_seqlen_k",
        "softmax_scale", "causal", "window_size", "block_table", "softcap", "q_descale",
        "k_descale", "v_descale", "seq_threshold_3D", "num_par_softmax_segments",
        "softmax_segm_output", "softmax_segm_max", "softmax_segm_expsum", "sinks",
        "kv_quant_mode",
    ),
)  # fmt: skip
# vLLM 0.33.0 moved it to vllm/third_party/flash_linear_attention/ops/.
GDN = KernelRef(
    "_fused_post_conv_kernel",
    "fused_post_conv_prep",
    "vllm.model_executor.layers.fla.ops.fused_gdn_prefill_post_conv",
    ("conv_output", "a", "b", "A_log", "dt_bias", "num_k_heads", "head_k_dim", "head_v_dim"),
)


def _defining_modules(package: Any, kernel: str) -> List[str]:
    """The modules of ``package`` whose source defines a function named ``kernel``, read
    from the files (importing every module of vLLM would take long and fail on many)."""
    import re

    pattern = re.compile(rf"^def {re.escape(kernel)}\(", re.MULTILINE)
    found = []
    for root in package.__path__:
        base = Path(root)
        for path in sorted(base.rglob("*.py")):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if pattern.search(text):
                parts = path.relative_to(base.parent).with_suffix("").parts
                found.append(".".join(p for p in parts if p != "__init__"))
    return found


@functools.lru_cache(maxsize=None)
def launcher(ref: KernelRef) -> Callable[..., Any]:
    """The launcher of ``ref``'s kernel in the installed vLLM, wherever the kernel lives:
    the module defining a ``@triton.jit`` function of that name; ``KernelChanged`` where
    none does, or its launcher is gone or no longer takes the scenarios' arguments."""
    import importlib

    import vllm

    from ci.smoke.compile import tritonapi

    release = f"vLLM {getattr(vllm, '__version__', '?')}"
    for name in _defining_modules(vllm, ref.kernel):
        module = importlib.import_module(name)
        if not tritonapi.is_jit_function(getattr(module, ref.kernel, None)):
            continue
        moved = "" if name == ref.module else f" (moved from {ref.module})"
        call = getattr(module, ref.launcher, None)
        if call is None:
            raise KernelChanged(
                f"{release}: {ref.kernel} is in {name}{moved}, without its launcher"
                f" {ref.launcher} beside it"
            )
        params = inspect.signature(call).parameters
        gone = [a for a in ref.arguments if a not in params]
        new = [
            p.name
            for p in params.values()
            if p.name not in ref.arguments
            and p.default is inspect.Parameter.empty
            and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        ]
        if gone or new:
            raise KernelChanged(
                f"{release}: the launcher {name}.{ref.launcher}{moved} changed its signature:"
                f" it no longer takes {gone or 'nothing'}, it requires {new or 'nothing'} new"
            )
        result: Callable[..., Any] = call
        return result
    raise KernelChanged(
        f"{release}: no module of vllm defines the @triton.jit kernel {ref.kernel}"
        f" (vLLM 0.24.0 has it in {ref.module})"
    )


# vLLM's Triton backend (vllm/v1/attention/backends/triton_attn.py): KV pages of 16 tokens,
# 16 softmax segments, and the 3D path below 128 // kv_heads sequences.
KV_BLOCK_SIZE = 16
NUM_SEGMENTS = 16
MIN_LAUNCH_GRID_SIZE_2D = 128
NUM_KV_HEADS = 8


# Where a scenario's numbers come from.
VLLM_TESTS = "vLLM's Triton backend and its kernel tests (head sizes 128 and 256, GQA 4 and 8)"
KUNLUN_REPORT = "the Kunlunxin report (H=128, HV=16, K=128, V=128)"
QWEN36_27B = (
    "Qwen3.6-27B's config.json (Qwen3_5ForConditionalGeneration): gated attention 24 query"
    " and 4 KV heads of 256 (GQA 6); Gated DeltaNet 16 QK and 48 V heads of 128"
)
# The model's heads, split over tensor-parallel ranks as vLLM splits them.
QWEN36_Q_HEADS, QWEN36_KV_HEADS, QWEN36_HEAD = 24, 4, 256
QWEN36_GDN_QK_HEADS, QWEN36_GDN_V_HEADS, QWEN36_GDN_HEAD = 16, 48, 128
# Tensor-parallel sizes: 1, and the lanes' own (playbooks/inventories/lab/group_vars:
# Iluvatar 4, Kunlunxin 1).
TENSOR_PARALLEL_SIZES = (1, 4)


@dataclass(frozen=True)
class AttentionScenario:
    name: str
    head_size: int
    gqa: int  # query heads per KV head
    num_seqs: int
    query_len: int  # tokens per sequence in this step
    context_len: int  # tokens already in the cache
    sliding_window: int = -1  # vLLM's window_size[0]: -1 for none
    fp8_kv: bool = False
    softcap: float = 0.0
    sinks: bool = False
    kv_heads: int = NUM_KV_HEADS  # per rank
    source: str = VLLM_TESTS


@dataclass(frozen=True)
class GdnScenario:
    name: str
    seq_len: int
    H: int = 128
    HV: int = 16
    K: int = 128
    V: int = 128
    source: str = KUNLUN_REPORT


def _qwen36_attention(tp: int) -> Tuple[AttentionScenario, ...]:
    kv = QWEN36_KV_HEADS // tp
    gqa = QWEN36_Q_HEADS // QWEN36_KV_HEADS
    return tuple(
        AttentionScenario(
            f"qwen3.6-27b-tp{tp}-{kind}", QWEN36_HEAD, gqa, *shape, kv_heads=kv, source=QWEN36_27B
        )
        for kind, shape in (("prefill", (2, 512, 0)), ("decode", (8, 1, 2047)))
    )


def _qwen36_gdn(tp: int) -> GdnScenario:
    return GdnScenario(
        f"gdn-qwen3.6-27b-tp{tp}-l64",
        64,
        H=QWEN36_GDN_QK_HEADS // tp,
        HV=QWEN36_GDN_V_HEADS // tp,
        K=QWEN36_GDN_HEAD,
        V=QWEN36_GDN_HEAD,
        source=QWEN36_27B,
    )


ATTENTION_SCENARIOS: Tuple[AttentionScenario, ...] = (
    *(
        AttentionScenario(f"{kind}-hd{hd}-gqa{gqa}", hd, gqa, *shape)
        for kind, shape in (("prefill", (2, 512, 0)), ("decode", (8, 1, 2047)))
        for hd in (128, 256)
        for gqa in (4, 8)
    ),
    AttentionScenario("prefill-sliding-window", 128, 4, 2, 512, 512, sliding_window=1023),
    AttentionScenario("decode-sliding-window", 128, 4, 8, 1, 4095, sliding_window=1023),
    AttentionScenario("decode-fp8-kv", 128, 8, 8, 1, 2047, fp8_kv=True),
    AttentionScenario("prefill-fp8-kv", 128, 8, 2, 512, 0, fp8_kv=True),
    AttentionScenario("prefill-softcap-sinks", 128, 8, 2, 512, 0, softcap=30.0, sinks=True),
    AttentionScenario("decode-softcap-sinks", 128, 8, 8, 1, 2047, softcap=30.0, sinks=True),
    # The model's own gated attention: GQA 6 (not a power of two), head 256.
    *(s for tp in TENSOR_PARALLEL_SIZES for s in _qwen36_attention(tp)),
)
# The warm-up length of vLLM's GDN layer (64) and one long prefill, at the report's shapes;
# the warm-up at the model's own.
GDN_SCENARIOS: Tuple[GdnScenario, ...] = (
    GdnScenario("gdn-warmup-l64", 64),
    GdnScenario("gdn-prefill-l16384", 16384),
    *(_qwen36_gdn(tp) for tp in TENSOR_PARALLEL_SIZES),
)


def import_env() -> Dict[str, str]:
    """vLLM replaces Triton with a placeholder unless exactly one Triton driver is active,
    except where ``CUDA_VISIBLE_DEVICES`` is set empty (its distributed start-up case). A
    compile-only node has no active driver: take that case, so the real kernels load."""
    from ci.smoke.compile import tritonapi

    return {"CUDA_VISIBLE_DEVICES": ""} if tritonapi.active_driver_count() == 0 else {}


@contextlib.contextmanager
def target_platform(target: Any) -> Iterator[None]:
    """vLLM asks its platform for the GPU's compute capability: answer the target's."""
    from vllm.platforms import current_platform
    from vllm.platforms.interface import DeviceCapability

    if target.backend != "cuda" or not isinstance(target.arch, int) or target.arch == 0:
        yield
        return
    platform = type(current_platform)
    saved = platform.__dict__.get("get_device_capability")
    capability = DeviceCapability(major=target.arch // 10, minor=target.arch % 10)
    platform.get_device_capability = classmethod(lambda cls, device_id=0: capability)
    try:
        yield
    finally:
        if saved is None:
            del platform.get_device_capability
        else:
            platform.get_device_capability = saved


def _meta(*shape: int, dtype: Any) -> Any:
    import torch

    return torch.empty(*shape, dtype=dtype, device="meta")


def run_attention(s: AttentionScenario) -> None:
    import torch
    from vllm.platforms import current_platform
    from vllm.v1.kv_cache_interface import KVQuantMode

    unified_attention = launcher(ATTENTION)

    heads = s.kv_heads * s.gqa
    tokens = s.num_seqs * s.query_len
    seq_len = s.context_len + s.query_len
    blocks_per_seq = math.ceil(seq_len / KV_BLOCK_SIZE)
    cache_dtype = current_platform.fp8_dtype() if s.fp8_kv else torch.bfloat16
    cache_shape = (s.num_seqs * blocks_per_seq + 1, KV_BLOCK_SIZE, s.kv_heads, s.head_size)
    threshold = MIN_LAUNCH_GRID_SIZE_2D // s.kv_heads
    # The backend's descales: one per-tensor scale expanded over (sequences, KV heads).
    descale = _meta(1, 1, dtype=torch.float32).expand(s.num_seqs, s.kv_heads)
    segments = (threshold, heads, NUM_SEGMENTS)
    unified_attention(
        q=_meta(tokens, heads, s.head_size, dtype=torch.bfloat16),
        k=_meta(*cache_shape, dtype=cache_dtype),
        v=_meta(*cache_shape, dtype=cache_dtype),
        out=_meta(tokens, heads, s.head_size, dtype=torch.bfloat16),
        cu_seqlens_q=_meta(s.num_seqs + 1, dtype=torch.int32),
        max_seqlen_q=s.query_len,
        seqused_k=_meta(s.num_seqs, dtype=torch.int32),
        max_seqlen_k=seq_len,
        softmax_scale=s.head_size**-0.5,
        causal=True,
        window_size=(s.sliding_window, -1),
        block_table=_meta(s.num_seqs, blocks_per_seq, dtype=torch.int32),
        # The backend's logits_soft_cap: 0 (an int) when the model has none.
        softcap=s.softcap if s.softcap else 0,
        q_descale=None,
        k_descale=descale,
        v_descale=descale,
        seq_threshold_3D=threshold,
        num_par_softmax_segments=NUM_SEGMENTS,
        softmax_segm_output=_meta(*segments, s.head_size, dtype=torch.float32),
        softmax_segm_max=_meta(*segments, dtype=torch.float32),
        softmax_segm_expsum=_meta(*segments, dtype=torch.float32),
        sinks=_meta(heads, dtype=torch.float32) if s.sinks else None,
        kv_quant_mode=KVQuantMode.FP8_PER_TENSOR if s.fp8_kv else KVQuantMode.NONE,
    )


def run_gdn(s: GdnScenario) -> None:
    import torch

    fused_post_conv_prep = launcher(GDN)
    qkv_dim = 2 * s.H * s.K + s.HV * s.V
    fused_post_conv_prep(
        conv_output=_meta(s.seq_len, qkv_dim, dtype=torch.bfloat16),
        a=_meta(s.seq_len, s.HV, dtype=torch.bfloat16),
        b=_meta(s.seq_len, s.HV, dtype=torch.bfloat16),
        # The model's A_log is float32, its dt_bias bf16 (Qwen3.6's checkpoint).
        A_log=_meta(s.HV, dtype=torch.float32),
        dt_bias=_meta(s.HV, dtype=torch.bfloat16),
        num_k_heads=s.H,
        head_k_dim=s.K,
        head_v_dim=s.V,
    )


def has_fp8e4nv(target: Any) -> bool:
    """Triton has e4m3 (``fp8e4nv``) on NVIDIA from sm_89 on ("type fp8e4nv not supported in
    this architecture" before): FP8 KV caches are no scenario of older GPUs."""
    return target.backend != "cuda" or not isinstance(target.arch, int) or target.arch >= 89


def scenarios(target: Any) -> List[Tuple[str, Callable[[], None]]]:
    """(scenario name, the call of vLLM's launcher) for every scenario."""
    found: List[Tuple[str, Callable[[], None]]] = []
    for a in ATTENTION_SCENARIOS:
        if a.fp8_kv and not has_fp8e4nv(target):
            continue
        found.append((a.name, functools.partial(run_attention, a)))
    for g in GDN_SCENARIOS:
        found.append((g.name, functools.partial(run_gdn, g)))
    return found


def launch_tags() -> Dict[str, Any]:
    """vLLM's launchers launch each kernel once: nothing to tell apart."""
    return {}


def context(target: Any) -> "contextlib.AbstractContextManager[None]":
    return target_platform(target)


def vendor(lane_vendor: str, backend: str) -> Optional[str]:
    """vLLM has no vendor selection of its own kernels: one capture for every target."""
    return None


def foreign_groups(lane_vendor: str, targets: Sequence[Any]) -> Dict[str, List[Any]]:
    """No vendor's variant is captured without its device: vLLM has none."""
    return {}
