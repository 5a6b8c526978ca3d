"""vLLM's and FlagGems' own kernels launched for real, their outputs checked.

The capture (``ci.smoke.realkernels.capture``) only binds launches and compiles them ahead of
time; the users' runs failed on Triton's JIT path, so the suite also launches the real kernels once,
through the packages' own launchers, on small inputs: vLLM's ``unified_attention`` (2D; 3D
with ``reduce_segments``) and ``fused_post_conv_prep`` on the mirrors' problems against the
mirrors' float64 references (``ci.smoke.mirrors.attention`` / ``ci.smoke.mirrors.gdn``), and
FlagGems' ops against torch. On a device lane they run on the device; on an interpreter lane vLLM's
run in Triton's interpreter (FlagGems picks its vendor from the device, so it needs one).

``python -m ci.smoke.realkernels.launches CORPUS DEVICE OUT`` runs every check of CORPUS (``vllm``,
``flaggems``) and writes one JSON document: per check its kernel, scenario and either the
mismatches found ("" when it matched) or the traceback of a launch that raised. A process of
its own for the reasons the capture has one: the packages decide things at import time, and
the interpreter must be set before Triton is imported.
``benchmarks/bench_real_kernels.py`` times the same launches on a GPU.
"""

import contextlib
import functools
import json
import os
import re
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Tuple

from ci.smoke import files
from ci.smoke.mirrors import attention, gdn
from ci.smoke.realkernels import vllm_corpus

if TYPE_CHECKING:
    from ci.smoke.checks import RecordProperty
    from ci.smoke.contract.lane import LaneContext

GDN_LEN = 37
# max |ours - torch| / max |torch| for FlagGems' bf16 ops (one bf16 rounding of the output
# plus a different summation order).
FLAGGEMS_TOLERANCE = 2e-2
LAUNCH_TIMEOUT_S = 900
# Triton's driver lookup where no device is (Triton 3.2's interpreter does it in vLLM's
# launches; later releases' interpreter does not).
NO_DRIVER = re.compile(r"RuntimeError: 0 active drivers")


@dataclass(frozen=True)
class LaunchCheck:
    """One real launch and how its output is judged: ``run`` returns the mismatches."""

    name: str
    kernel: str
    scenario: str
    run: Callable[[], List[str]]


def vllm_attention_call(p: "attention.AttentionProblem") -> Callable[[], None]:
    """vLLM's ``unified_attention`` on the mirror's problem, as vLLM's Triton backend calls
    it: with the backend's 3D threshold and softmax-segment buffers, so that vLLM's launcher
    itself picks the split-KV path (decode-only batches of few sequences) or the 2D one."""
    import torch

    unified_attention = vllm_corpus.launcher(vllm_corpus.ATTENTION)
    seqs = p.num_seqs
    query_lens = (p.query_start_loc[1:] - p.query_start_loc[:-1]).tolist()
    descale = torch.ones(1, 1, dtype=torch.float32, device=p.q.device).expand(seqs, p.num_kv_heads)
    heads, head = p.q.shape[1], p.q.shape[2]
    threshold = vllm_corpus.MIN_LAUNCH_GRID_SIZE_2D // p.num_kv_heads
    segments = (threshold, heads, vllm_corpus.NUM_SEGMENTS)
    f32 = {"dtype": torch.float32, "device": p.q.device}
    extra: Dict[str, Any] = {
        "seq_threshold_3D": threshold,
        "num_par_softmax_segments": vllm_corpus.NUM_SEGMENTS,
        "softmax_segm_output": torch.empty(*segments, head, **f32),
        "softmax_segm_max": torch.empty(*segments, **f32),
        "softmax_segm_expsum": torch.empty(*segments, **f32),
    }
    return partial(
        unified_attention,
        q=p.q,
        k=p.k_cache,
        v=p.v_cache,
        out=p.out,
        cu_seqlens_q=p.query_start_loc,
        max_seqlen_q=max(query_lens),
        seqused_k=p.seq_lens,
        max_seqlen_k=int(p.seq_lens.max()),
        softmax_scale=p.scale,
        causal=True,
        window_size=(-1, -1),
        block_table=p.block_table,
        softcap=0,
        q_descale=None,
        k_descale=descale,
        v_descale=descale,
        **extra,
    )


def vllm_gdn_call(config: "gdn.GdnConfig", p: "gdn.GdnProblem") -> Callable[[], Any]:
    """vLLM's ``fused_post_conv_prep`` on the mirror's problem: returns (q, k, v, g, beta)."""
    fused_post_conv_prep = vllm_corpus.launcher(vllm_corpus.GDN)
    s = config.shape
    return partial(fused_post_conv_prep, p.mixed_qkv, p.a, p.b, p.A_log, p.dt_bias, s.H, s.K, s.V)


def vllm_gdn(config: "gdn.GdnConfig") -> Callable[["gdn.GdnProblem"], Callable[[], None]]:
    """vLLM's GDN launch per problem, leaving its results in the problem's outputs."""

    def call(p: "gdn.GdnProblem") -> Callable[[], None]:
        run = vllm_gdn_call(config, p)

        def launch() -> None:
            p.q, p.k, p.v, p.g, p.beta = run()

        return launch

    return call


def _attention_check(device: str, head: int, decode_3d: bool) -> List[str]:
    config = attention.AttentionConfig(head, 16, 32, 4, 2, "bf16")
    # The mirror's batches of its 2D and 3D numerics: vLLM's launcher takes the 3D path for
    # the decode-only one (4 sequences, under its threshold of 128 // 2 KV heads).
    sequences = attention.DECODE_SEQUENCES if decode_3d else attention.SEQUENCES
    p = attention.make_problem(config, device, sequences=sequences)
    vllm_attention_call(p)()
    return attention.compare(p.out, attention.reference(p), config.dtype)


def _gdn_check(device: str) -> List[str]:
    config = next(c for c in gdn.CONFIGS if c.shape.name == "qwen3.6")
    p = gdn.make_problem(config, GDN_LEN, device)
    vllm_gdn(config)(p)()
    return gdn.compare(config, p, gdn.reference(config, p))


def vllm_checks(device: str) -> List[LaunchCheck]:
    checks = []
    for head in (128, 256):
        for path, decode_3d in (("2d-mixed", False), ("3d-decode", True)):
            checks.append(
                LaunchCheck(
                    f"attention-{path}-hd{head}",
                    "kernel_unified_attention" + (" + reduce_segments" if decode_3d else ""),
                    f"{path} hd{head} gqa{attention.NUM_QUERIES_PER_KV}",
                    partial(_attention_check, device, head, decode_3d),
                )
            )
    checks.append(
        LaunchCheck(
            "gdn-post-conv",
            "_fused_post_conv_kernel",
            f"qwen3.6 L{GDN_LEN}",
            partial(_gdn_check, device),
        )
    )
    return checks


def _relative_error(got: Any, want: Any) -> float:
    got, want = got.float(), want.float()
    return float((got - want).abs().max()) / max(float(want.abs().max()), 1e-30)


def _rotary_reference(x: Any, cos: Any, sin: Any, positions: Any) -> Any:
    """Rotate-half (GPT-NeoX) rotary embedding in fp32: (tokens, heads, head_dim)."""
    import torch

    half = x.shape[-1] // 2
    c, s = cos[positions][:, None, :].float(), sin[positions][:, None, :].float()
    x1, x2 = x[..., :half].float(), x[..., half:].float()
    return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1)


def _flaggems_cases(device: str) -> Dict[str, Tuple[Callable[[], Any], Callable[[], Any]]]:
    """(FlagGems' op, torch's) per op the corpus compiles, on the same small inputs."""
    import flag_gems as ops
    import torch

    F = torch.nn.functional
    gen = torch.Generator(device=device).manual_seed(0)

    def rand(*shape: int, dtype: Any = torch.bfloat16) -> Any:
        return torch.randn(*shape, generator=gen, device=device).to(dtype)

    def ints(high: int, *shape: int) -> Any:
        return torch.randint(0, high, shape, generator=gen, device=device)

    hidden = 1024
    x, y, w, b = rand(64, hidden), rand(64, hidden), rand(hidden), rand(hidden)
    a, m = rand(128, 256), rand(256, 128)
    batch_a, batch_b = rand(4, 64, 128), rand(4, 128, 64)
    # fp32 for the arg-reductions: ties among bf16 values would make either index right.
    logits = rand(16, 4096, dtype=torch.float32)
    labels = ints(4096, 16)
    table, index = rand(1000, 256), ints(1000, 64)
    q, k = rand(32, 8, 128), rand(32, 2, 128)
    cos, sin = rand(512, 64, dtype=torch.float32), rand(512, 64, dtype=torch.float32)
    positions = ints(512, 32)

    def layer_norm() -> Any:
        out = ops.layer_norm(x, [hidden], w, b, 1e-5)
        return out[0] if isinstance(out, tuple) else out

    def rotary() -> Any:
        q_out, k_out = ops.apply_rotary_pos_emb(q, k, cos, sin, positions)
        return torch.cat((q_out.float().flatten(), k_out.float().flatten()))

    def rotary_reference() -> Any:
        return torch.cat(
            (
                _rotary_reference(q, cos, sin, positions).flatten(),
                _rotary_reference(k, cos, sin, positions).flatten(),
            )
        )

    return {
        "add": (lambda: ops.add(x, y), lambda: x + y),
        "mul": (lambda: ops.mul(x, y), lambda: x * y),
        "mm": (lambda: ops.mm(a, m), lambda: a @ m),
        "bmm": (lambda: ops.bmm(batch_a, batch_b), lambda: torch.bmm(batch_a, batch_b)),
        "softmax": (lambda: ops.softmax(x, -1), lambda: torch.softmax(x, -1)),
        "layer_norm": (layer_norm, lambda: F.layer_norm(x, [hidden], w, b, 1e-5)),
        "rms_norm": (lambda: ops.rms_norm(x, [hidden], w), lambda: F.rms_norm(x, [hidden], w)),
        "div": (lambda: ops.div_mode(x, y), lambda: x.float() / y.float()),
        "silu_and_mul": (lambda: ops.silu_and_mul(x, y), lambda: F.silu(x.float()) * y.float()),
        "rotary_embedding": (rotary, rotary_reference),
        "topk": (lambda: ops.topk(logits, 8)[0], lambda: torch.topk(logits, 8)[0]),
        "argmax": (
            lambda: ops.argmax(logits, 1).to(torch.float32),
            lambda: torch.argmax(logits, 1).to(torch.float32),
        ),
        "cross_entropy": (
            lambda: ops.cross_entropy_loss(logits, labels),
            lambda: F.cross_entropy(logits, labels),
        ),
        "embedding": (lambda: ops.embedding(table, index), lambda: F.embedding(index, table)),
        "index_select": (
            lambda: ops.index_select(table, 0, index),
            lambda: torch.index_select(table, 0, index),
        ),
    }


def _flaggems_check(device: str, op: str) -> List[str]:
    ours, theirs = _flaggems_cases(device)[op]
    rel = _relative_error(ours(), theirs())
    if rel <= FLAGGEMS_TOLERANCE:
        return []
    return [f"{op}: max relative error {rel:.3e} against torch (tolerance {FLAGGEMS_TOLERANCE})"]


# The ops of ``flaggems_corpus.scenarios``, launched for real.
FLAGGEMS_OPS = (
    "add",
    "mul",
    "mm",
    "bmm",
    "softmax",
    "layer_norm",
    "rms_norm",
    "div",
    "silu_and_mul",
    "rotary_embedding",
    "topk",
    "argmax",
    "cross_entropy",
    "embedding",
    "index_select",
)


def flaggems_checks(device: str) -> List[LaunchCheck]:
    return [LaunchCheck(op, op, op, partial(_flaggems_check, device, op)) for op in FLAGGEMS_OPS]


CHECKS: Dict[str, Callable[[str], List[LaunchCheck]]] = {
    "vllm": vllm_checks,
    "flaggems": flaggems_checks,
}


def run_checks(corpus: str, device: str) -> List[Dict[str, Any]]:
    """Every check of ``corpus`` on ``device``: each result names its kernel and scenario."""
    guard: Any = contextlib.nullcontext()
    if device == "cpu":
        from ci.smoke.compile.interpreter import exact_bf16_dot

        guard = exact_bf16_dot()
    results = []
    with guard:
        for check in CHECKS[corpus](device):
            entry: Dict[str, Any] = {
                "name": check.name,
                "kernel": check.kernel,
                "scenario": check.scenario,
            }
            try:
                entry["mismatches"] = check.run()
            except Exception as exc:
                entry["error"] = f"{type(exc).__name__}: {exc}"
                entry["traceback"] = traceback.format_exc()
            results.append(entry)
    return results


class LaunchError(RuntimeError):
    """The launch process itself failed (not one check): the package does not import."""


def launch_env(corpus: str, device: str, work: Path) -> Dict[str, str]:
    """The launch process's environment: on the CPU, Triton's interpreter, and the case in
    which vLLM keeps Triton with no driver active (``CUDA_VISIBLE_DEVICES`` set empty);
    FlagGems keeps its tuned configs in memory and its generated kernels under ``work``,
    and picks its vendor from the device it finds, as on a user's machine."""
    from ci.smoke.realkernels import flaggems_corpus

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    if device == "cpu":
        env.update({"TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""})
    else:
        env.pop("TRITON_INTERPRET", None)
    if corpus == "flaggems":
        env[flaggems_corpus.ENV_DB] = "sqlite://"
        env[flaggems_corpus.ENV_CACHE] = str(work / "flaggems-cache")
    return env


def launch(corpus: str, device: str) -> List[Dict[str, Any]]:
    """Run ``corpus``'s checks in a process of their own; raise LaunchError if it broke."""
    with tempfile.TemporaryDirectory(prefix="flagci-launch-") as tmp:
        out = Path(tmp) / "launches.json"
        command = [sys.executable, "-m", "ci.smoke.realkernels.launches", corpus, device, str(out)]
        try:
            done = subprocess.run(
                command,
                env=launch_env(corpus, device, Path(tmp)),
                capture_output=True,
                text=True,
                timeout=LAUNCH_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise LaunchError(
                f"launching the {corpus} kernels took over {LAUNCH_TIMEOUT_S} s"
            ) from None
        if done.returncode != 0 or not out.exists():
            tail = "\n".join(done.stderr.strip().splitlines()[-40:])
            raise LaunchError(
                f"launching the {corpus} kernels failed (exit status {done.returncode}):\n{tail}"
            )
        results: List[Dict[str, Any]] = json.loads(out.read_text(encoding="utf-8"))
        return results


@functools.lru_cache(maxsize=None)
def launched(corpus: str, device: str) -> Tuple[Dict[str, Dict[str, Any]], str]:
    """The suite's launches of ``corpus``, once per process: results by check name, or the
    launch process's error ("" when it ran)."""
    try:
        return {r["name"]: r for r in launch(corpus, device)}, ""
    except LaunchError as err:
        return {}, str(err)


# The distribution each corpus's kernels come from (the ``source`` of its testcases).
PACKAGES = {"vllm": "vllm", "flaggems": "flag-gems"}


def source(corpus: str) -> str:
    """``<distribution> <version>`` of the installed package (no version: not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    name = PACKAGES[corpus]
    try:
        return f"{name} {version(name)}"
    except PackageNotFoundError:
        return name


def judge(corpus: str, name: str, lane: "LaneContext", record_property: "RecordProperty") -> None:
    """The smoke test of one check: launched on the lane's numerics device, failing with the
    mismatches (``numeric_mismatch``) or with the kind its launch's traceback shows."""
    import pytest

    from ci.smoke.checks import fail_with, numerics_device
    from ci.smoke.compile import tritonapi
    from ci.smoke.contract import properties, taxonomy

    check = next(c for c in CHECKS[corpus]("cpu") if c.name == name)
    record_property(properties.KERNEL, check.kernel)
    record_property(properties.SCENARIO, check.scenario)
    record_property(properties.SOURCE, source(corpus))
    device = numerics_device(lane)
    if corpus == "flaggems" and device == "cpu":
        pytest.skip(
            "FlagGems launches through its cache (LibEntry), which needs compiled kernels:"
            " Triton's interpreter makes none"
        )
    results, error = launched(corpus, device)
    if error:
        fail_with(taxonomy.HARNESS_ERROR, error, record_property)
    result = results[name]
    if "error" in result and device == "cpu" and NO_DRIVER.search(result["error"]):
        pytest.skip(
            f"Triton {tritonapi.compiler_version()}'s interpreter cannot run this launch: it"
            f" asks for the active driver, and a CPU lane has none ({result['error']})"
        )
    if "error" in result:
        kind = taxonomy.kind_of(taxonomy.clean_log(result["traceback"]))
        fail_with(kind, f"launching {check.kernel} raised:\n{result['traceback']}", record_property)
    if result["mismatches"]:
        fail_with(taxonomy.NUMERIC_MISMATCH, "\n".join(result["mismatches"]), record_property)


def main(argv: List[str]) -> int:
    corpus, device, out_path = argv
    results = run_checks(corpus, device)
    files.write_text(Path(out_path), json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
