"""Side-by-side timing: ours against a peer, alternated in one run.

These machines are noisy, so absolute times mean little; each repeat times
ours and then the peer back to back, and the report gives both medians and the
ratio ``peer / ours`` (above 1: we are faster).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Case:
    """One comparison.

    Attributes
    ----------
    name : str
        Case label, e.g. ``"expected_max_normal[10000]"``.
    ours, peer : callable
        Zero-argument callables timed alternately.
    peer_label : str
        What the peer is (a library call, a naive loop, a rebuild, ...).
    work : float
        Items processed per call; throughput = work / median time.
    work_unit : str
        Name of the items (``"trials"``, ``"steps"``).
    extra : callable, optional
        Returns a dict of non-timing figures (accuracy, residuals) to print.
    """

    name: str
    ours: Callable[[], Any]
    peer: Callable[[], Any] | None
    peer_label: str = ""
    work: float = 1.0
    work_unit: str = "calls"
    extra: Callable[[], dict[str, Any]] | None = None
    repeats: int | None = None
    #: Run both once untimed first; off for one-shot jobs of minutes (the report).
    warmup: bool = True


@dataclass
class Measurement:
    name: str
    peer_label: str
    ours_s: float
    peer_s: float | None
    work: float
    work_unit: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        return None if self.peer_s is None else self.peer_s / self.ours_s

    def line(self) -> str:
        ours_rate = self.work / self.ours_s
        text = f"  {self.name:38s} ours {_fmt(self.ours_s)}"
        if self.peer_s is not None:
            text += f"  peer {_fmt(self.peer_s)}  ratio {self.ratio:8.2f}x  ({self.peer_label})"
        if self.work != 1.0:
            text += f"  [{ours_rate:.3g} {self.work_unit}/s ours]"
        for key, value in self.extra.items():
            text += f"\n    {key}: {value}"
        return text

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "peer": self.peer_label, "ours_median_s": self.ours_s,
            "peer_median_s": self.peer_s, "ratio_peer_over_ours": self.ratio,
            "work": self.work, "work_unit": self.work_unit, **self.extra,
        }


def _fmt(seconds: float) -> str:
    for unit, scale in (("s ", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:8.3f} {unit}"
    return f"{seconds / 1e-9:8.1f} ns"


def _time(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure(case: Case, repeats: int) -> Measurement:
    """Warm both callables once, then time them alternately ``repeats`` times."""
    repeats = case.repeats or repeats
    if case.warmup:
        case.ours()
        if case.peer is not None:
            case.peer()
    ours, peer = [], []
    for _ in range(repeats):
        ours.append(_time(case.ours))
        if case.peer is not None:
            peer.append(_time(case.peer))
    return Measurement(
        case.name, case.peer_label, statistics.median(ours),
        statistics.median(peer) if peer else None, case.work, case.work_unit,
        case.extra() if case.extra else {},
    )
