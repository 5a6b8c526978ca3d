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

import contextlib
import dataclasses
import hashlib
import inspect
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
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


def option_values(target: Any, options: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """The values the backend's parsed options hold for ``names`` given ``options`` (the
    defaults it picks for those left out); a name the backend has no option for is absent."""
    parsed = parse_options(make_backend(target), options)
    return {name: getattr(parsed, name) for name in names if hasattr(parsed, name)}


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


# ----------------------------------------------------------------------------------------
# Launch capture: what Triton's JIT would compile for a launch, without launching.
#
# ``kernel[grid](...)`` ends in ``JITFunction.run``, which binds the arguments with the
# backend's own binder (the specialisation: argument types, constexprs, the attributes such
# as ``tt.divisibility`` and, on AMD, ``tt.pointer_range``) and compiles what it found. The
# capture replaces ``run`` for the duration of a ``with`` block: the same binder runs for the
# backend of a given target (no driver needed), the result is recorded and nothing launches.
# Which binder a release has is found by feature detection: 3.3 and later bind with
# ``triton.runtime.jit.create_function_from_signature(sig, params, backend)`` and pack with
# ``JITFunction._pack_args`` (3.3.1 on; 3.3.0 packs inside ``run``, done here as it does);
# 3.2 binds with ``JITFunction.create_binder(backend)`` and describes attributes with the
# backend's ``AttrsDescriptor``.

# Keyword arguments ``run`` itself adds before binding (not options the launch passed).
_RUN_ADDED = ("debug", "instrumentation_mode")


@dataclass(frozen=True)
class CapturedLaunch:
    """One launch as the JIT binds it, in the shape ``ast_source`` takes."""

    kernel: str  # the JITFunction's name
    module: str  # the module that defines it
    signature: dict[str, str]  # every argument in order; constexprs typed "constexpr"
    constexprs: dict[str, Any]
    attrs: dict[str, list[tuple[str, Any]]]
    options: dict[str, Any] = field(default_factory=dict)  # options the launch passed
    file: str = ""  # the kernel's source file (FlagGems generates some into its cache)
    # What the package was doing when it launched (the capture's ``tags`` callback).
    tags: dict[str, Any] = field(default_factory=dict)


def _jit_class() -> Any:
    from triton.runtime.jit import JITFunction

    return JITFunction


def is_jit_function(obj: Any) -> bool:
    """True for a ``@triton.jit`` function, also under launch wrappers (autotuners ...), and
    for what ``@triton.jit`` gives under ``TRITON_INTERPRET=1``: an ``InterpretedFunction``,
    which keeps the plain function as ``fn``."""
    from triton.runtime.interpreter import InterpretedFunction

    kinds = (_jit_class(), InterpretedFunction)
    while not isinstance(obj, kinds) and hasattr(obj, "fn"):
        obj = obj.fn
    return isinstance(obj, kinds)


def jit_function(obj: Any) -> Any:
    """The ``JITFunction`` under launch wrappers (autotuners, heuristics, FlagGems' LibEntry),
    each of which keeps the function it wraps as ``fn``."""
    jit = _jit_class()
    while not isinstance(obj, jit) and hasattr(obj, "fn"):
        obj = obj.fn
    return obj


def _bind(fn: Any, backend: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> CapturedLaunch:
    from triton.runtime import jit as jit_module

    names = [p.name for p in fn.params]
    launch_options = {k: v for k, v in kwargs.items() if k not in names and k not in _RUN_ADDED}
    # Triton 3.2's JITFunction binds through its own ``binder`` (five values back); 3.3.0
    # has neither that nor ``_pack_args``; 3.4 and later pack with ``_pack_args``. Triton
    # 3.2's jit module also has ``create_function_from_signature``, so its presence decides
    # nothing.
    if hasattr(fn, "_pack_args") or not hasattr(fn, "binder"):
        binder = jit_module.create_function_from_signature(fn.signature, fn.params, backend)
        bound, specialization, options = binder(*args, **kwargs)
        if hasattr(fn, "_pack_args"):
            _, by_name, by_path, attrs_by_path = fn._pack_args(
                backend, kwargs, bound, specialization, options
            )
        else:
            by_name, by_path, attrs_by_path = _pack_33(jit_module, backend, bound, specialization)
        signature = dict(by_name)
        constexprs = {names[_top(path)]: value for path, value in by_path.items()}
        attrs = {
            names[_top(path)]: [(str(a), v) for a, v in pairs]
            for path, pairs in attrs_by_path.items()
            if pairs
        }
    else:
        signature, constexprs, attrs = _bind_32(fn, backend, args, kwargs)
    return CapturedLaunch(
        kernel=fn.__name__,
        module=fn.module,
        signature=signature,
        constexprs=constexprs,
        attrs=attrs,
        options=launch_options,
        file=inspect.getsourcefile(fn.fn) or "",
    )


def _pack_33(
    jit_module: Any, backend: Any, bound: Mapping[str, Any], specialization: Sequence[Any]
) -> tuple[dict[str, str], dict[Any, Any], dict[Any, Any]]:
    """Triton 3.3.0 binds as later releases do but has no ``JITFunction._pack_args``: the
    argument types, constexprs (by path) and attributes (by path) as its ``run`` packs them."""
    types = [s[0] for s in specialization]
    values = list(bound.values())
    constexprs = {
        path: jit_module.get_iterable_path(values, path)
        for path in jit_module.find_paths_if(types, lambda _, t: t == "constexpr")
    }
    attr_values = [s[1] for s in specialization]
    attrs = {
        path: backend.parse_attr(jit_module.get_iterable_path(attr_values, path))
        for path in jit_module.find_paths_if(attr_values, lambda _, a: isinstance(a, str))
    }
    return dict(zip(bound, types, strict=True)), constexprs, attrs


class UnsupportedLaunch(ValueError):
    """A JIT launch the capture cannot describe as a compile job (a tuple argument: its
    attributes are keyed by a path into the tuple, which ASTSource's signature cannot name)."""


def _top(path: Any) -> int:
    if len(path) != 1:
        raise UnsupportedLaunch(f"a tuple argument (attribute path {path}) cannot be captured")
    return int(path[0])


def _bind_32(
    fn: Any, backend: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[dict[str, str], dict[str, Any], dict[str, list[tuple[str, Any]]]]:
    """Triton 3.2: the binder gives the types of non-constexpr arguments; the backend's
    ``AttrsDescriptor`` gives the attributes and the arguments it turns into constants
    (equal to 1); ``None`` arguments are constants too."""
    if fn.binder is None:
        fn.create_binder(backend)
    bound, sig_and_spec, _, _, _ = fn.binder(*args, **kwargs)
    values = tuple(bound.values())
    descriptor = backend.get_attrs_descriptor(fn.params, values)
    constant_indices = set(descriptor.get_constants())
    types = iter(sig_and_spec[: len(fn.non_constexpr_indices)])
    signature: dict[str, str] = {}
    constexprs: dict[str, Any] = {}
    for param, value in zip(fn.params, values, strict=True):
        if param.is_constexpr:
            signature[param.name] = "constexpr"
            constexprs[param.name] = value
            continue
        kind = next(types)
        signature[param.name] = "*i8" if kind == "none" else kind
        if value is None or param.num in constant_indices:
            constexprs[param.name] = value
    attrs: dict[str, list[tuple[str, Any]]] = {}
    for prop, indices in descriptor.arg_properties.items():
        for index in indices:
            if index in constant_indices:
                continue  # a constant, not an attribute of a runtime argument
            pair = (prop, descriptor.property_values[prop])
            attrs.setdefault(fn.params[index].name, []).append(pair)
    return signature, constexprs, attrs


@contextlib.contextmanager
def captured_launches(
    target: Any, tags: Callable[[], dict[str, Any]] | None = None
) -> Iterator[list[CapturedLaunch]]:
    """Within the block, every ``kernel[grid](...)`` launch is bound for ``target``'s backend
    and recorded in the yielded list instead of compiling or running; ``tags()``, called at
    each launch, says what the caller was doing then."""
    jit = _jit_class()
    backend = make_backend(target)
    found: list[CapturedLaunch] = []
    original = jit.run

    def run(self: Any, *args: Any, grid: Any, warmup: Any, **kwargs: Any) -> None:
        launch = _bind(self, backend, args, kwargs)
        found.append(dataclasses.replace(launch, tags=tags()) if tags else launch)

    jit.run = run
    try:
        yield found
    finally:
        jit.run = original


def active_driver_count() -> int:
    """How many installed backends' drivers say a device is present."""
    from triton.backends import backends

    return sum(1 for b in backends.values() if b.driver is not None and b.driver.is_active())


_LOC_DEFINITION = re.compile(r"^#loc[0-9]* = .*$", re.MULTILINE)
_LOC_USE = re.compile(r" loc\(#loc[0-9]*\)")


def ir_identity(text: str) -> str:
    """sha256 of an IR text without its source locations: the identity of the variant
    compiled, the same for a bundle's copy of the kernel's file as for the original."""
    bare = _LOC_USE.sub("", _LOC_DEFINITION.sub("", text))
    return hashlib.sha256(bare.encode("utf-8")).hexdigest()
