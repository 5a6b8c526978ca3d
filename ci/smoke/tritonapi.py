"""The one place the lane side touches Triton's Python API, on every release and vendor fork.

Triton's ahead-of-time API moved between releases: 3.2 builds a compile source as
``ASTSource(fn, signature, constants=..., attrs=AttrsDescriptor)`` with constants keyed by
argument name and left out of the argument types; 3.3 and later take ``constexprs=`` and attrs
as a dict ``{(index,): [[name, value], ...]}``; ``add_stages`` gained a ``language`` argument;
vendor backends add stages of their own (``ttxir``, ``ttadapter``, ``npubin`` ...) and report
metadata their own way (the xpu backend's ``shared`` is -1). Every difference is found by
feature detection (does ``ASTSource`` take ``constexprs``?), never by version strings, so a
vendor fork that reports an upstream version but carries another API still works.

Standard library only at import time; triton is imported when a function needs it.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Argument attributes as the harness describes them: argument name -> [(attribute, value)],
# e.g. {"x_ptr": [("tt.divisibility", 16), ("tt.pointer_range", 32)]}.
ArgAttrs = Mapping[str, Sequence[tuple[str, Any]]]


def gpu_target(backend: str, arch: int | str, warp_size: int) -> Any:
    from triton.backends.compiler import GPUTarget

    return GPUTarget(backend, arch, warp_size)


def make_backend(target: Any) -> Any:
    """The backend ``triton.compile`` would pick (raises Triton's own "N compatible backends")."""
    from triton.compiler.compiler import make_backend as _make_backend

    return _make_backend(target)


def takes_constexprs() -> bool:
    """True where ``ASTSource`` takes ``constexprs=`` (3.3 and later), False for ``constants=``."""
    from triton.compiler import ASTSource

    return "constexprs" in inspect.signature(ASTSource.__init__).parameters


def ast_source(
    fn: Any,
    signature: Mapping[str, str],
    constexprs: Mapping[str, Any],
    attrs: ArgAttrs,
    target: Any,
) -> Any:
    """The compile source of ``fn``: ``signature`` holds every argument in order, constexprs
    typed ``"constexpr"``; ``attrs`` are the per-argument attributes Triton's JIT would set."""
    from triton.compiler import ASTSource

    names = list(fn.arg_names)
    unknown = sorted(set(attrs) - set(names))
    if unknown:
        raise ValueError(f"attrs name arguments {fn.__name__} does not have: {unknown}")
    if takes_constexprs():
        by_index = {
            (names.index(name),): [[attr, value] for attr, value in pairs]
            for name, pairs in attrs.items()
            if pairs
        }
        return ASTSource(
            fn=fn, signature=dict(signature), constexprs=dict(constexprs), attrs=by_index
        )
    # Triton 3.2: constexprs are not argument types; attrs are the backend's descriptor.
    typed = {k: v for k, v in signature.items() if k not in constexprs}
    return ASTSource(
        fn, typed, constants=dict(constexprs), attrs=_attrs_descriptor(names, attrs, target)
    )


def _attrs_descriptor(names: Sequence[str], attrs: ArgAttrs, target: Any) -> Any:
    descriptor = make_backend(target).get_attrs_descriptor([], [])
    by_property: dict[str, list[int]] = {}
    for name, pairs in attrs.items():
        for attr, value in pairs:
            # A property the backend does not know (pointer_range on NVIDIA) is dropped, as
            # the JIT's own binder would never set it there.
            if descriptor.property_values.get(attr) == value:
                by_property.setdefault(attr, []).append(names.index(name))
    for attr, indices in by_property.items():
        descriptor.arg_properties[attr] = sorted(indices)
    descriptor._init_slots()
    return descriptor


def parse_options(backend: Any, options: Mapping[str, Any]) -> Any:
    return backend.parse_options(dict(options))


def stage_names(target: Any, options: Mapping[str, Any]) -> tuple[str, ...]:
    """The stages the backend runs for ``target``, in order, read from its ``add_stages``."""
    backend = make_backend(target)
    parsed = parse_options(backend, options)
    stages: dict[str, Any] = {}
    params = inspect.signature(backend.add_stages).parameters
    if "language" in params:
        from triton.backends.compiler import Language

        backend.add_stages(stages, parsed, Language.TRITON)
    else:
        backend.add_stages(stages, parsed)
    return tuple(stages)


@dataclass(frozen=True)
class CompiledFacts:
    """What a compiled kernel says about itself, in one shape on every release."""

    stages: tuple[str, ...]
    shared: int | None  # None where the backend reports no shared bytes (xpu: -1)
    shared_reported: str  # the raw value, for the property that says why it is absent
    binary: str  # the last stage: the binary the driver would load


def compiled_facts(compiled: Any) -> CompiledFacts:
    stages = tuple(compiled.asm)
    raw = getattr(compiled.metadata, "shared", None)
    shared = int(raw) if isinstance(raw, int) and raw >= 0 else None
    return CompiledFacts(stages, shared, repr(raw), stages[-1] if stages else "")


def installed_backends() -> dict[str, str]:
    """Backend name -> the module of its compiler class, for every installed backend."""
    from triton.backends import backends

    return {name: type_module(b.compiler) for name, b in sorted(backends.items())}


def type_module(cls: Any) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def claims(target: Any) -> list[str]:
    """The installed backends whose compiler claims ``target``."""
    from triton.backends import backends

    return sorted(n for n, b in backends.items() if b.compiler.supports_target(target))


def active_target() -> Any:
    """The target the active driver reports (``get_current_target``); raises without a device."""
    from triton.runtime import driver

    return driver.active.get_current_target()


def max_shared_per_block() -> int | None:
    """The current device's shared memory per block, as the active driver's utils report it."""
    from triton.runtime import driver

    active = driver.active
    props = active.utils.get_device_properties(active.get_current_device())
    value = props.get("max_shared_mem")
    return int(value) if value else None


def bench_median_ms(fn: Any, warmup_ms: int, rep_ms: int) -> float:
    """``triton.testing.do_bench``'s median in milliseconds (device events, L2 flushed)."""
    from triton.testing import do_bench

    return float(do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median"))


def compiler_version() -> str:
    import triton

    return str(triton.__version__)
