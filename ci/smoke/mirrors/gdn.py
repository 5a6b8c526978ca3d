"""GDN prefill post-conv: shapes, configs, compile jobs, inputs, launch and reference."""

from dataclasses import dataclass
from typing import Any, Dict, List, Tuple

from ci.smoke.compile.compiler import CompileJob, jit_attrs
from ci.smoke.contract.lane import LaneContext, Target

MODULE = "ci.smoke.mirrors.kernels.gdn_post_conv"
KERNEL = "gdn_post_conv_kernel"
# vLLM's fused_post_conv_prep passes these as constexprs.
EPS = 1e-6
SOFTPLUS_THRESHOLD = 20.0
# The token count the compile jobs' attrs are taken at: vLLM's GDN warm-up length.
COMPILE_SEQ_LEN = 64
POINTER_ARGS = (
    "mixed_qkv_ptr",
    "a_ptr",
    "b_ptr",
    "A_log_ptr",
    "dt_bias_ptr",
    "q_out_ptr",
    "k_out_ptr",
    "v_out_ptr",
    "g_out_ptr",
    "beta_out_ptr",
)
TOLERANCE = {"bf16": 1e-2, "fp16": 2e-3}


@dataclass(frozen=True)
class GdnShape:
    name: str
    H: int
    HV: int
    K: int
    V: int


SHAPES = (
    GdnShape("qwen3.6", H=128, HV=16, K=128, V=128),  # the Kunlunxin report's shapes
    GdnShape("qwen3-next", H=16, HV=32, K=128, V=128),
    GdnShape("small", H=4, HV=6, K=48, V=40),  # not powers of two: masks matter
)
# Prefill lengths the perf tests time at the Qwen3.6 shapes: one 4096-token prompt (the
# lane's max_model_len) and a 16384-token batch of them.
PERF_SEQ_LENS = (4096, 16384)


def next_power_of_2(n: int) -> int:
    return 1 << (n - 1).bit_length()


@dataclass(frozen=True)
class GdnConfig:
    shape: GdnShape
    block_t: int
    num_warps: int
    num_stages: int
    dtype: str

    @property
    def id(self) -> str:
        s = self.shape
        return (
            f"{s.name}-h{s.H}-hv{s.HV}-k{s.K}-v{s.V}-bt{self.block_t}"
            f"-w{self.num_warps}-s{self.num_stages}-{self.dtype}"
        )

    @property
    def bk(self) -> int:
        return next_power_of_2(self.shape.K)

    @property
    def bv(self) -> int:
        return next_power_of_2(self.shape.V)


# num_stages=2 is what vLLM launches (and what failed on Kunlunxin); 1 is the fallback.
CONFIGS: Tuple[GdnConfig, ...] = tuple(
    GdnConfig(shape, 16, 4, stages, "bf16") for shape in SHAPES for stages in (2, 1)
)
# Longer token tiles for lanes that measure performance, at the Qwen3.6 shapes they time.
PERF_CONFIGS: Tuple[GdnConfig, ...] = (
    GdnConfig(SHAPES[0], 64, 8, 2, "bf16"),
    GdnConfig(SHAPES[0], 128, 8, 2, "bf16"),
)


def configs_for(lane: LaneContext) -> Tuple[GdnConfig, ...]:
    """The lane's config matrix: every config, plus the perf ones where it measures speed."""
    return CONFIGS + PERF_CONFIGS if lane.runs("perf") else CONFIGS


def constexprs(config: GdnConfig) -> Dict[str, Any]:
    s = config.shape
    return {
        "H": s.H,
        "HV": s.HV,
        "K": s.K,
        "V": s.V,
        "L2NORM_EPS": EPS,
        "SOFTPLUS_THRESHOLD": SOFTPLUS_THRESHOLD,
        "BLOCK_T": config.block_t,
        "BK": config.bk,
        "BV": config.bv,
    }


def strides(shape: GdnShape) -> Dict[str, int]:
    """The integer arguments at a launch (contiguous tensors), but the token count."""
    return {
        "stride_x": 2 * shape.H * shape.K + shape.HV * shape.V,
        "stride_a": shape.HV,
        "stride_b": shape.HV,
        "stride_q": shape.H * shape.K,
        "stride_k": shape.H * shape.K,
        "stride_v": shape.HV * shape.V,
    }


def compile_job(config: GdnConfig, target: Target, artifacts: str, timeout_s: float) -> CompileJob:
    dtype = config.dtype
    signature = {
        "mixed_qkv_ptr": f"*{dtype}",
        "a_ptr": f"*{dtype}",
        "b_ptr": f"*{dtype}",
        "A_log_ptr": "*fp32",
        "dt_bias_ptr": f"*{dtype}",
        "q_out_ptr": f"*{dtype}",
        "k_out_ptr": f"*{dtype}",
        "v_out_ptr": f"*{dtype}",
        "g_out_ptr": "*fp32",
        "beta_out_ptr": "*fp32",
    }
    ints = {**strides(config.shape), "seq_len": COMPILE_SEQ_LEN}
    signature.update({name: "i32" for name in ints})
    consts = constexprs(config)
    signature.update({name: "constexpr" for name in consts})
    return CompileJob(
        module=MODULE,
        kernel=KERNEL,
        signature=signature,
        constexprs=consts,
        options={"num_warps": config.num_warps, "num_stages": config.num_stages},
        target=target,
        artifacts=artifacts,
        timeout_s=timeout_s,
        attrs=jit_attrs(target, POINTER_ARGS, ints),
        tunable_blocks=("BLOCK_T",),
    )


@dataclass
class GdnProblem:
    mixed_qkv: Any
    a: Any
    b: Any
    A_log: Any
    dt_bias: Any
    q: Any
    k: Any
    v: Any
    g: Any
    beta: Any

    @property
    def outputs(self) -> Dict[str, Any]:
        return {"q": self.q, "k": self.k, "v": self.v, "g": self.g, "beta": self.beta}


def make_problem(config: GdnConfig, seq_len: int, device: str, seed: int = 0) -> GdnProblem:
    import torch

    # Large inputs are drawn where they live: the CPU would take seconds per gigabyte.
    gen = torch.Generator(device=device).manual_seed(seed)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[config.dtype]
    s = config.shape
    width = 2 * s.H * s.K + s.HV * s.V

    def rand(*shape: int, scale: float = 1.0, dt: Any = dtype) -> Any:
        drawn = torch.randn(*shape, generator=gen, device=device)
        return (drawn * scale + 0.1).to(dt)

    def poisoned(*shape: int, dt: Any = dtype) -> Any:
        return torch.full(shape, float("nan"), dtype=dt, device=device)

    # `a` spans the softplus threshold (20) so both branches are exercised.
    return GdnProblem(
        mixed_qkv=rand(seq_len, width),
        a=rand(seq_len, s.HV, scale=12.0),
        b=rand(seq_len, s.HV),
        A_log=rand(s.HV, scale=0.5, dt=torch.float32),
        dt_bias=rand(s.HV),  # bf16, as the model's checkpoint has it
        q=poisoned(seq_len, s.H, s.K),
        k=poisoned(seq_len, s.H, s.K),
        v=poisoned(seq_len, s.HV, s.V),
        g=poisoned(seq_len, s.HV, dt=torch.float32),
        beta=poisoned(seq_len, s.HV, dt=torch.float32),
    )


def grid(config: GdnConfig, seq_len: int) -> Tuple[int, int]:
    return ((seq_len + config.block_t - 1) // config.block_t, config.shape.H + config.shape.HV)


def launch(kernel: Any, config: GdnConfig, p: GdnProblem) -> None:
    seq_len = p.mixed_qkv.shape[0]
    kernel[grid(config, seq_len)](
        p.mixed_qkv,
        p.a,
        p.b,
        p.A_log,
        p.dt_bias,
        p.q,
        p.k,
        p.v,
        p.g,
        p.beta,
        p.mixed_qkv.stride(0),
        p.a.stride(0),
        p.b.stride(0),
        p.q.stride(0),
        p.k.stride(0),
        p.v.stride(0),
        seq_len,
        num_warps=config.num_warps,
        num_stages=config.num_stages,
        **constexprs(config),
    )


def reference(config: GdnConfig, p: GdnProblem) -> Dict[str, Any]:
    import torch

    s = config.shape
    x = p.mixed_qkv.double().cpu()
    seq_len = x.shape[0]
    q = x[:, : s.H * s.K].reshape(seq_len, s.H, s.K)
    k = x[:, s.H * s.K : 2 * s.H * s.K].reshape(seq_len, s.H, s.K)
    v = x[:, 2 * s.H * s.K :].reshape(seq_len, s.HV, s.V)

    def l2(t: Any) -> Any:
        return t / torch.sqrt((t * t).sum(dim=-1, keepdim=True) + EPS)

    z = p.a.double().cpu() + p.dt_bias.double().cpu()
    softplus = torch.where(z > SOFTPLUS_THRESHOLD, z, torch.log1p(torch.exp(z)))
    g = -torch.exp(p.A_log.double().cpu()) * softplus
    beta = torch.sigmoid(p.b.double().cpu())
    return {"q": l2(q), "k": l2(k), "v": v, "g": g, "beta": beta}


def eager_torch(config: GdnConfig, p: GdnProblem) -> Dict[str, Any]:
    """The same step in eager torch on the problem's device: the perf tests' torch reference."""
    import torch

    s = config.shape
    x = p.mixed_qkv
    seq_len = x.shape[0]
    q, k, v = torch.split(x, [s.H * s.K, s.H * s.K, s.HV * s.V], dim=-1)

    def l2(t: Any) -> Any:
        t = t.reshape(seq_len, s.H, s.K).float()
        return (t * torch.rsqrt((t * t).sum(dim=-1, keepdim=True) + EPS)).to(x.dtype)

    g = -torch.exp(p.A_log) * torch.nn.functional.softplus(p.a.float() + p.dt_bias.float())
    beta = torch.sigmoid(p.b.float())
    v = v.reshape(seq_len, s.HV, s.V).contiguous()
    return {"q": l2(q), "k": l2(k), "v": v, "g": g, "beta": beta}


def bytes_moved(p: GdnProblem) -> int:
    tensors = (p.mixed_qkv, p.a, p.b, p.q, p.k, p.v, p.g, p.beta)
    return sum(t.numel() * t.element_size() for t in tensors)


def compare(config: GdnConfig, p: GdnProblem, ref: Dict[str, Any]) -> List[str]:
    import torch

    problems = []
    for name, out in p.outputs.items():
        got = out.double().cpu()
        nans = int(torch.isnan(got).sum())
        if nans:
            problems.append(
                f"{name}: {nans} of {got.numel()} elements are NaN (not written or invalid)"
            )
            continue
        err = (got - ref[name]).abs()
        rel = float(err.max()) / max(float(ref[name].abs().max()), 1e-30)
        bound = TOLERANCE[config.dtype] if out.dtype != torch.float32 else 1e-5
        if not rel <= bound:
            where = tuple(int(i) for i in torch.nonzero(err == err.max())[0])
            problems.append(
                f"{name}: numeric mismatch: max relative error {rel:.3e} > {bound:.1e} "
                f"(max abs error {float(err.max()):.3e} at {where})"
            )
    return problems
