"""The lane matrix: parsed once from ``ci/data/lanes.toml`` into frozen, validated models.

Every error names the file, the lane and the key, so that a typo in a pin is found
before any environment, image or node is touched.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)

from ci.core import datafile
from ci.core.errors import ConfigError, UsageError
from ci.smoke.contract.lane import lane_text, target_label

SMOKE_TESTS = (
    "backends",
    "unified_attention",
    "gdn_post_conv",
    "vllm",
    "vllm_kernels",
    "flaggems_kernels",
    "perf",
)
VENDORS = ("iluvatar", "kunlun", "ascend", "nvidia", "cpu")
Vendor = Literal["iluvatar", "kunlun", "ascend", "nvidia", "cpu"]

Name = Annotated[StrictStr, Field(pattern=r"^[a-z0-9][a-z0-9.+_-]*$")]
EnvName = Annotated[StrictStr, Field(pattern=r"^[A-Z_][A-Z0-9_]*$")]
Sha256 = Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}$")]
PythonVersion = Annotated[StrictStr, Field(pattern=r"^3\.[0-9]+$")]
Positive = Annotated[StrictInt, Field(gt=0)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Index(_Model):
    """A package index; its URL is a setting: the environment variable ``env``, read by the
    command line (``ci.commands.options``) into ``LaneMatrix.with_index_urls``, else ``url``."""

    env: EnvName
    url: StrictStr | None = None

    def resolve(self, name: str) -> str:
        url = self.url
        if not url:
            raise ConfigError(
                f"package index '{name}' has no URL: set the environment variable {self.env}"
            )
        return url


class Pin(_Model):
    name: Name
    version: Annotated[StrictStr, Field(min_length=1)]
    index: Name
    sha256: Sha256 | None = None
    # False for a package installed for its kernel modules only (vllm, flag-gems on the CPU
    # lane): its declared requirements are for another stack, so `pip check` skips it.
    check_dependencies: StrictBool = True

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


class Target(_Model):
    """A Triton ``GPUTarget``; ``arch`` 0 on ``cuda`` means the GPU found at run time."""

    backend: Name
    arch: StrictInt | StrictStr
    # 0 where the backend has no warps to speak of (the ascend driver says 0).
    warp_size: Annotated[StrictInt, Field(ge=0)]
    shared_limit: Annotated[StrictInt, Field(ge=0)]
    name: Name | None = None
    # The last compile stage the lane's nodes can run for this target, where a stage needs a
    # tool they lack (a linker, a vendor SDK): a compile that reaches it passes, with the
    # stage recorded. None: every stage the backend has.
    last_stage: Name | None = None

    @property
    def label(self) -> str:
        return target_label(self.backend, self.arch, self.name)


class Hardware(_Model):
    accelerator: StrictStr
    count: Positive


class Sdk(_Model):
    name: StrictStr
    version: StrictStr


class Compiler(_Model):
    package: Literal["triton", "flagtree", "triton-ascend"]
    version: StrictStr
    triton: StrictStr


class Device(_Model):
    env: dict[EnvName, StrictStr] = {}
    devices: tuple[StrictStr, ...] = ()
    smi: StrictStr = ""
    docker_args: tuple[StrictStr, ...] = ()
    # The user the lane's image runs the suite as: 0 (root) where the device nodes reach the
    # container with whatever modes the node's driver gave them, as in the vendors' runtime
    # images; another uid gets an unprivileged user of that uid.
    uid: Annotated[StrictInt, Field(ge=0)] = 0


class Model(_Model):
    name: StrictStr
    path: StrictStr
    tensor_parallel_size: Positive
    max_model_len: Positive
    # vLLM's --attention-backend / --gdn-prefill-backend, where the lane's stack has other
    # kernels besides Triton's (the smoke test's vllm group asserts Triton's were used).
    attention_backend: StrictStr | None = None
    gdn_prefill_backend: StrictStr | None = None


class Lane(_Model):
    name: Name
    description: StrictStr
    vendor: Vendor
    hardware: Hardware | None = None
    sdk: Sdk | None = None
    base_image: StrictStr
    python: PythonVersion
    compiler: Compiler
    baseline: Name | None = None
    targets: Annotated[tuple[Target, ...], Field(min_length=1)]
    inductor_backend: Name
    execution: Literal["interpreter", "device"]
    pins: Annotated[tuple[Pin, ...], Field(min_length=1)]
    tests: Annotated[tuple[Literal[SMOKE_TESTS], ...], Field(min_length=1)]  # type: ignore[valid-type]
    timeout_s: Positive
    test_timeout_s: Positive
    device: Device = Device()
    model: Model | None = None

    @field_validator("pins")
    @classmethod
    def _unique_pins(cls, pins: tuple[Pin, ...]) -> tuple[Pin, ...]:
        seen: set[str] = set()
        for pin in pins:
            key = _normalise(pin.name)
            if key in seen:
                raise ValueError(f"package '{pin.name}' is pinned twice")
            seen.add(key)
        return pins

    @field_validator("tests")
    @classmethod
    def _unique_tests(cls, tests: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(tests)) != len(tests):
            raise ValueError("a smoke test is listed twice")
        return tests

    @model_validator(mode="after")
    def _consistent(self) -> Lane:
        if self.baseline == self.name:
            raise ValueError("baseline: a lane cannot be its own baseline")
        if "vllm" in self.tests and self.model is None:
            raise ValueError("model: the 'vllm' smoke test needs a [model] table")
        pinned = {_normalise(p.name): p.version for p in self.pins}
        if pinned.get(self.compiler.package) != self.compiler.version:
            raise ValueError(
                f"compiler: {self.compiler.package} {self.compiler.version} is not in pins"
                f" (pins have {pinned.get(self.compiler.package)!r})"
            )
        return self

    def pin(self, name: str) -> Pin | None:
        for pin in self.pins:
            if _normalise(pin.name) == _normalise(name):
                return pin
        return None

    def lane_json(self, node: str = "") -> str:
        """The text of ``lane.json``, the lane file of every lane environment (venv, image,
        node): written by ``ci.smoke.contract.lane.lane_text``, read by its ``load_context``."""
        return lane_text(self.smoke_context(node))

    def smoke_context(self, node: str = "") -> dict[str, Any]:
        """The lane file's fields: what the smoke suite needs to know about its lane."""
        return {
            "lane": self.name,
            "vendor": self.vendor,
            "node": node,
            "compiler": self.compiler.model_dump(),
            "targets": [t.model_dump() for t in self.targets],
            "inductor_backend": self.inductor_backend,
            "execution": self.execution,
            "tests": list(self.tests),
            "test_timeout_s": self.test_timeout_s,
            "env": dict(self.device.env),
            "devices": list(self.device.devices),
            "model": self.model.model_dump(exclude_none=True) if self.model else None,
        }


class LaneMatrix(_Model):
    source: StrictStr
    default_lane: Name
    indexes: dict[Name, Index]
    # A family named after a vendor (`kunlun`) is that vendor's: its lanes in release order of
    # their compiler. A family `<vendor>-<package>` (`cpu-vllm`) is an axis of that pin: its
    # lanes are one stack but for that package's version, in its release order. A lane is in
    # one family at least and may be in several (`cpu-triton-3.6.0` is in `cpu` and `cpu-vllm`).
    families: dict[Name, tuple[Name, ...]]
    lanes: dict[Name, Lane]

    @model_validator(mode="after")
    def _cross_references(self) -> LaneMatrix:
        errors: list[str] = []
        if self.default_lane not in self.lanes:
            errors.append(f"key 'default_lane': no lane named '{self.default_lane}'")
        in_family: set[str] = set()
        for family, names in self.families.items():
            where = f"key 'families.{family}'"
            vendor, axis = family_parts(family)
            if vendor is None:
                errors.append(
                    f"{where}: not a vendor ({', '.join(VENDORS)}) nor <vendor>-<package>"
                )
                continue
            for i, name in enumerate(names):
                lane = self.lanes.get(name)
                if lane is None:
                    errors.append(f"{where}: no lane named '{name}'")
                elif name in names[:i]:
                    errors.append(f"{where}: lane '{name}' is listed twice")
                elif lane.vendor != vendor:
                    errors.append(f"{where}: lane '{name}' has vendor '{lane.vendor}'")
                in_family.add(name)
            if axis is not None:
                errors.extend(
                    f"{where}: {e}"
                    for e in _axis_errors(
                        axis, [self.lanes[n] for n in dict.fromkeys(names) if n in self.lanes]
                    )
                )
        for name, lane in self.lanes.items():
            where = f"lane '{name}'"
            if name not in in_family:
                errors.append(f"{where}: key 'vendor': the lane is in no family")
            if lane.baseline is not None:
                base = self.lanes.get(lane.baseline)
                if base is None:
                    errors.append(f"{where}: key 'baseline': no lane named '{lane.baseline}'")
                elif base.vendor != lane.vendor:
                    errors.append(
                        f"{where}: key 'baseline': '{lane.baseline}' is a {base.vendor} lane"
                    )
            for i, pin in enumerate(lane.pins):
                if pin.index not in self.indexes:
                    errors.append(f"{where}: key 'pins[{i}].index': no index named '{pin.index}'")
        if errors:
            raise ConfigError("\n".join(f"{self.source}: {e}" for e in errors))
        return self

    @cached_property
    def default(self) -> Lane:
        return self.lanes[self.default_lane]

    def lane(self, name: str) -> Lane:
        try:
            return self.lanes[name]
        except KeyError:
            known = ", ".join(sorted(self.lanes))
            raise UsageError(f"no lane named '{name}' in {self.source} (known: {known})") from None

    def select(self, names: list[str]) -> list[Lane]:
        return [self.lane(n) for n in names] if names else [self.default]

    def family(self, family: str) -> list[Lane]:
        if family not in self.families:
            raise UsageError(f"no family '{family}' in {self.source}: {sorted(self.families)}")
        return [self.lanes[n] for n in self.families[family]]

    def release(self, family: str, lane: Lane) -> str:
        """What ``family`` varies, as ``lane`` has it: the axis package's pin (``vllm 0.33.0``),
        or the compiler of a vendor's family (``flagtree 0.6.1+xpu3.6``)."""
        axis = family_parts(family)[1]
        pin = lane.pin(axis) if axis else None
        if pin is not None:
            return f"{pin.name} {pin.version}"
        return f"{lane.compiler.package} {lane.compiler.version}"

    def index_url(self, name: str) -> str:
        return self.indexes[name].resolve(name)

    def with_index_urls(self, urls: Mapping[str, str]) -> LaneMatrix:
        """This matrix with each index named in ``urls`` at the URL given there."""
        indexes = {
            name: index.model_copy(update={"url": urls[name]}) if name in urls else index
            for name, index in self.indexes.items()
        }
        return self.model_copy(update={"indexes": indexes})


def family_parts(family: str) -> tuple[str | None, str | None]:
    """(vendor, axis package) of a family's name: ``cpu`` (cpu, None), ``cpu-vllm`` (cpu,
    vllm); (None, None) for a name that is neither."""
    for vendor in VENDORS:
        if family == vendor:
            return vendor, None
        if family.startswith(f"{vendor}-") and len(family) > len(vendor) + 1:
            return vendor, family[len(vendor) + 1 :]
    return None, None


def _axis_errors(axis: str, lanes: list[Lane]) -> list[str]:
    """What keeps ``lanes`` from being an axis of ``axis``: each pins it, at its own version,
    and is the others' stack but for it (the same compiler and other pins), so that a
    bisection over them names a release of that package."""
    errors: list[str] = []
    versions: dict[str, str] = {}
    first: Lane | None = None
    for lane in lanes:
        pin = lane.pin(axis)
        if pin is None:
            errors.append(f"lane '{lane.name}' does not pin '{axis}'")
            continue
        if pin.version in versions:
            errors.append(
                f"lanes '{versions[pin.version]}' and '{lane.name}' pin {axis} {pin.version}"
            )
        versions.setdefault(pin.version, lane.name)
        if first is None:
            first = lane
            continue
        differ = sorted(_stack(first, axis).symmetric_difference(_stack(lane, axis)))
        if differ:
            errors.append(
                f"lane '{lane.name}' differs from '{first.name}' in more than its {axis} pin:"
                f" {', '.join(sorted({d.partition(' ')[0] for d in differ}))}"
            )
    return errors


def _stack(lane: Lane, axis: str) -> set[str]:
    """The lane's compiler and pins, one string each, but for ``axis``."""
    pins = {f"{_normalise(p.name)} {p.model_dump_json()}" for p in lane.pins}
    return {
        f"compiler {lane.compiler.model_dump_json()}",
        *(p for p in pins if p.partition(" ")[0] != _normalise(axis)),
    }


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def default_matrix_path() -> Path:
    return datafile.packaged("lanes.toml")


def load_matrix(path: Path | None = None) -> LaneMatrix:
    """Read and validate a lane matrix; raise ConfigError naming file, lane and key."""
    path = path or default_matrix_path()

    def extend(raw: dict[str, Any]) -> dict[str, Any]:
        lanes = raw.get("lanes")
        if isinstance(lanes, dict):
            raw["lanes"] = {
                name: {"name": name, **_extended(path, lanes, name)}
                if isinstance(body, dict)
                else body
                for name, body in lanes.items()
            }
        return raw

    return datafile.load(
        LaneMatrix,
        path,
        what="lane matrix",
        entries={"lanes": datafile.Entries("lane")},
        prepare=extend,
    )


def _extended(path: Path, lanes: Mapping[str, Any], name: str) -> dict[str, Any]:
    """A lane's table with its ``extends`` chain applied: the base lane's keys, replaced by the
    lane's own, except ``pins``, merged by package name (see the header of lanes.toml)."""
    chain: list[str] = [name]
    body = lanes[name]
    while "extends" in body:
        base_name = body["extends"]
        if not isinstance(base_name, str) or not isinstance(lanes.get(base_name), dict):
            raise ConfigError(
                f"{path}: lane '{chain[-1]}': key 'extends': no lane named {base_name!r}"
            )
        if base_name in chain:
            loop = " -> ".join([*chain, base_name])
            raise ConfigError(f"{path}: lane '{name}': key 'extends': a loop ({loop})")
        chain.append(base_name)
        body = lanes[base_name]
    merged: dict[str, Any] = {}
    for lane_name in reversed(chain):
        own = {k: v for k, v in lanes[lane_name].items() if k != "extends"}
        pins = own.pop("pins", None)
        merged.update(own)
        if pins is not None:
            merged["pins"] = _merge_pins(merged.get("pins"), pins)
    return merged


def _merge_pins(base: Any, own: Any) -> Any:
    if not isinstance(base, list) or not isinstance(own, list):
        return own  # the model's validation names what is wrong with it
    by_name = {_normalise(str(p.get("name", ""))): p for p in own if isinstance(p, dict)}
    kept = [
        by_name.pop(_normalise(str(p.get("name", ""))), p) if isinstance(p, dict) else p
        for p in base
    ]
    return kept + [p for p in own if not isinstance(p, dict) or p in by_name.values()]
