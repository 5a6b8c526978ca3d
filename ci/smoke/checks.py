"""Helpers the smoke tests share: where numerics run, and failing with a failure kind."""

import contextlib
import itertools
import os
import re
from pathlib import Path
from typing import Any, Callable, ContextManager, List, Set, Union

import pytest
from _pytest.mark import KeywordMatcher
from _pytest.mark.expression import Expression

from ci.smoke.contract import properties
from ci.smoke.contract.lane import LaneContext

RecordProperty = Callable[[str, object], None]


def fail_with(kind: str, message: str, record_property: RecordProperty) -> None:
    record_property(properties.FAILURE_KIND, kind)
    pytest.fail(message, pytrace=False)


def numerics_device(lane: LaneContext) -> str:
    """The torch device numerics run on, or skip the test with the reason."""
    torch = pytest.importorskip("torch", reason="numerics need torch")
    if lane.execution == "interpreter":
        return "cpu"
    if torch.cuda.is_available():
        return "cuda"
    pytest.skip(f"lane {lane.lane} runs numerics on a device and none is visible to torch")
    raise AssertionError("unreachable")


def launch_guard(lane: LaneContext) -> ContextManager[Any]:
    """Around a numerics launch: the interpreter's bf16 dot fix where we interpret."""
    if lane.execution != "interpreter":
        return contextlib.nullcontext()
    from ci.smoke.compile.interpreter import exact_bf16_dot

    return exact_bf16_dot()


def compile_timeout_s(lane: LaneContext) -> float:
    """Seconds a single compile may take before it is killed and reported as a timeout."""
    explicit = os.environ.get("FLAGCI_COMPILE_TIMEOUT_S")
    return float(explicit) if explicit else lane.test_timeout_s * 0.8


def artifacts_root() -> Path:
    """Where each test's artifact folder goes (``python -m ci.smoke`` sets it)."""
    return Path(os.environ.get("FLAGCI_ARTIFACTS", "smoke-artifacts"))


_NO_NAMES = KeywordMatcher(set())
# More names of ``-k`` than this that a test's parameter ids decide: take it as selected.
_MAX_UNDECIDED = 8


def may_select(metafunc: pytest.Metafunc) -> bool:
    """Whether the run's ``-m`` and ``-k`` can select a test of ``metafunc``'s function,
    whatever the ids its parameters get: a function whose parameters cost something to make
    (the real-kernel capture) makes them only where this is True.

    ``-k`` is matched as pytest matches it (pytest's own expression and keyword matcher, on
    the function's definition); a name that none of the function's own names holds could
    still be in a parameter id (targets, scenarios, kernels), so both answers are tried,
    except for a name that starts with ``test`` and has no ``[``: that names a test, never
    part of an id."""
    definition = metafunc.definition
    markexpr = metafunc.config.option.markexpr
    if markexpr:
        marks = {m.name for m in definition.iter_markers()}
        if not Expression.compile(markexpr).evaluate(_Matcher(_NO_NAMES, marks)):
            return False
    keyword = metafunc.config.option.keyword
    if not keyword:
        return True
    known = KeywordMatcher.from_item(definition)
    names = [n for n in re.split(r"[\s()]+", keyword) if n and n not in ("and", "or", "not")]
    undecided: List[str] = [
        n for n in dict.fromkeys(names) if not known(n) and not _names_a_test(n)
    ]
    if len(undecided) > _MAX_UNDECIDED:
        return True
    expression = Expression.compile(keyword)
    for values in itertools.product((False, True), repeat=len(undecided)):
        assumed = {name for name, value in zip(undecided, values) if value}  # noqa: B905
        if expression.evaluate(_Matcher(known, assumed)):
            return True
    return False


class _Matcher:
    """A ``-k`` name matches the function's own names, or an assumed parameter id."""

    def __init__(self, known: KeywordMatcher, assumed: Set[str]) -> None:
        self.known = known
        self.assumed = assumed

    def __call__(self, name: str, /, **kwargs: Union[str, int, bool, None]) -> bool:
        return self.known(name) or name in self.assumed


def _names_a_test(name: str) -> bool:
    return name.lower().startswith("test") and "[" not in name
