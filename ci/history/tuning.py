"""The tuning gap: a kernel timed through its real launcher (vLLM's, which picks tiles, warps
and stages itself) against the best config of the same kernel's mirror that the perf group
measured at the same shape, on the same GPU model, in the same run.

vLLM's launcher picks, for Hopper prefill, a tile 3.2x (head 128) to 3.9x (head 256) slower
than the best config measured beside it (the H200 sample of 2026-12-01): the dashboard and
the run's summary show each gap above ``GAP_RATIO`` with the config that won.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from statistics import median

from ci.history.store import PerfRecord
from ci.smoke.contract import launchers

GAP_RATIO = 1.5


@dataclass(frozen=True)
class TuningGap:
    lane: str
    run_id: str
    gpu: str
    kernel: str  # the launched kernel
    shape: str
    launcher_ms: float
    best_config: str  # the mirror's fastest config at the shape
    best_ms: float

    @property
    def ratio(self) -> float:
        """How many times slower the launcher's own choice is than the best config."""
        return self.launcher_ms / self.best_ms


def shape_of(test: str, config: str) -> str:
    """The shape a perf test timed: its parameters less the config (``prefill-hd128-...``)."""
    params = test[test.find("[") + 1 : -1] if test.endswith("]") else test
    return params.removesuffix(f"-{config}")


def tuning_gaps(records: Iterable[PerfRecord], runs: Mapping[str, str]) -> list[TuningGap]:
    """Every launcher time of run ``runs[lane]`` of each lane against the best mirror config
    at its shape (the median of a run's nodes), largest gap first; a launcher time with no
    mirror measured beside it has none."""
    times: dict[tuple[str, str, str, str, str], list[float]] = defaultdict(list)
    for r in records:
        if runs.get(r.lane) == r.run_id:
            times[(r.lane, r.gpu, r.kernel, r.config, shape_of(r.test, r.config))].append(r.perf_ms)
    best: dict[tuple[str, str, str, str], tuple[float, str]] = {}
    for (lane, gpu, kernel, config, shape), ms in times.items():
        key = (lane, gpu, kernel, shape)
        if config != launchers.LAUNCHER_CONFIG and (median(ms), config) < best.get(
            key, (float("inf"), "")
        ):
            best[key] = (median(ms), config)
    gaps = []
    for (lane, gpu, kernel, config, shape), ms in sorted(times.items()):
        mirror = launchers.MIRRORS.get(kernel)
        won = best.get((lane, gpu, mirror, shape)) if mirror else None
        if config == launchers.LAUNCHER_CONFIG and won is not None:
            gaps.append(TuningGap(lane, runs[lane], gpu, kernel, shape, median(ms), won[1], won[0]))
    return sorted(gaps, key=lambda g: -g.ratio)
