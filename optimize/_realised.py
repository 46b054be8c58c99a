"""Realised efficiency with an interval: η measured by training, resampled over seeds.

The law predicts η; training measures it.  The realised η is an estimate of
**η_deployed** (:mod:`rlscale.optimize._deployed`) with the trainer as the generating
law: the plan is trained at a few costs along its budget path and a baseline at its
budget, each over several seeds, and ``η = baseline_cost / cost*``, where ``cost*`` is
where the plan's measured success path reaches the baseline's score.

``method="isotonic"`` (the default) reads ``cost*`` off a **monotone fit** of the path:
the per-point scores (the interquartile mean over seeds, Agarwal et al. 2021) are fitted
by weighted isotonic regression in cost (pool-adjacent-violators, Barlow et al. 1972;
:func:`scipy.optimize.isotonic_regression`, weights the seeds per point), and ``cost*``
is interpolated linearly in ``log cost`` between the fitted points that bracket the
baseline's score.  A path that falls where it should rise (seed noise crossing itself)
is pooled instead of read at whichever crossing the noise puts first.  ``method=
"interpolate"`` is the raw rule of :func:`~rlscale.optimize.cost_to_reach` on the
per-point scores (the method before; kept for comparison).

**When it cannot be estimated.**  A crossing read off a path that does not rise is
noise.  The path's rise is tested by the weighted least-squares slope of the per-point
scores on ``log cost``: when the central ``confidence`` bootstrap interval of that slope
does not lie above 0, the result is ``bound="not estimable"`` with ``eta`` and
``interval`` ``None`` and a note giving the slope and its interval -- never a number.

Its uncertainty comes from the seeds and the fit together: each bootstrap replicate
redraws the seeds of every path point and of the baseline with replacement, recomputes
the scores, refits the monotone path and locates ``cost*`` again.  Where a replicate's
target lies outside the fitted path, only a bound is known; the share of such replicates
is reported, and a percentile interval is then an interval of bounds (its note says so).

The replicates are located at once (``_costs_to_reach``, the arithmetic of
:func:`~rlscale.optimize.cost_to_reach` row by row, bit-identical); the isotonic fits run
one replicate at a time (a few microseconds each for a path of ten points).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import trim_mean

from rlscale.optimize._efficiency import cost_to_reach
from rlscale.theory._result import Result
from rlscale.theory._validation import check_positive_int, check_real, check_scalar

__all__ = ["RealisedEfficiency", "realised_efficiency"]


#: The realised-η methods (see the module docstring).
METHODS = ("isotonic", "interpolate")


@dataclass(frozen=True)
class RealisedEfficiency(Result):
    """Measured η with a bootstrap interval (:func:`realised_efficiency`).

    An estimate of η_deployed with the trainer as the generating law
    (:mod:`rlscale.optimize._deployed`).

    Attributes
    ----------
    eta : float or None
        ``baseline_cost / iso_cost`` on the full data; ``None`` when the path does not
        measurably rise (``bound == "not estimable"``).
    bound : str
        ``"exact"``, ``"at least"`` or ``"at most"`` (the point estimate is a bound when
        the baseline's score lies outside the fitted path), or ``"not estimable"``.
    interval : tuple of float or None
        Central ``confidence`` percentile interval over the replicates (``None`` when
        not estimable).
    bounded_fraction : float
        Share of replicates in which only a bound on ``cost*`` was known.
    iso_cost : float or None
    baseline_cost, baseline_score : float
    confidence : float
    n_boot : int
    note : str
    method : str
        ``"isotonic"`` or ``"interpolate"``.
    slope, slope_interval : float, tuple
        Weighted least-squares slope of the per-point scores on ``log cost`` (score per
        e-fold of cost) and its central ``confidence`` bootstrap interval: the test of
        whether the path rises at all.
    fitted : tuple of float
        The path's scores as read (the isotonic fit, or the raw scores), in cost order.
    success, status, message
        The result convention: ``status`` is ``"estimated"``, ``"bound"`` or
        ``"not_estimable"``; ``success`` is False only for the last.
    """

    eta: float | None
    bound: str
    interval: tuple[float, float] | None
    bounded_fraction: float
    iso_cost: float | None
    baseline_cost: float
    baseline_score: float
    confidence: float
    n_boot: int
    note: str = ""
    method: str = "isotonic"
    slope: float = math.nan
    slope_interval: tuple[float, float] = (math.nan, math.nan)
    fitted: tuple[float, ...] = ()

    @property
    def estimable(self) -> bool:
        return self.bound != "not estimable"

    @property
    def success(self) -> bool:
        return self.estimable

    @property
    def status(self) -> str:
        if not self.estimable:
            return "not_estimable"
        return "estimated" if self.bound == "exact" else "bound"

    @property
    def message(self) -> str:
        if not self.estimable:
            return self.note
        what = {"exact": "=", "at least": ">=", "at most": "<="}[self.bound]
        return (f"realised eta {what} {self.eta:.4g} ({self.method}); "
                f"{self.confidence:.0%} interval [{self.interval[0]:.4g}, "
                f"{self.interval[1]:.4g}]" + (f"; {self.note}" if self.note else ""))

    def overlaps(self, low: float, high: float) -> bool:
        """Whether ``[low, high]`` (a predicted interval, say) meets this interval.

        ``low <= high``; either end may be infinite (an unbounded prediction).  A
        realised η that cannot be estimated overlaps nothing: there is no interval to
        agree with.
        """
        low = check_scalar("low", low, allow_inf=True)
        high = check_scalar("high", high, allow_inf=True)
        if low > high:
            raise ValueError(f"low must be <= high; got low={low!r}, high={high!r}")
        if self.interval is None:
            return False
        return low <= self.interval[1] and self.interval[0] <= high

    def as_dict(self) -> dict[str, Any]:
        out = super().as_dict()
        out.update(estimable=self.estimable, success=self.success, status=self.status,
                   message=self.message)
        return out


_ETA_BOUND = {"exact": "exact", "upper": "at least", "lower": "at most"}


def _costs_to_reach(costs: np.ndarray, scores: np.ndarray, targets: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~rlscale.optimize.cost_to_reach` for each row of ``scores`` at once.

    ``scores`` is ``(n, len(costs))`` (one measured path per bootstrap replicate)
    and ``targets`` ``(n,)``; returns the costs and whether each was bracketed
    (``"exact"``).  The same arithmetic as the scalar function, row by row, on
    checked input (the replicates of :func:`realised_efficiency`): points sorted
    by cost, the first point whose score reaches the target, and between it and
    the one before ``w = (target - s[i-1]) / (s[i] - s[i-1])``, ``cost =
    exp((1 - w) log c[i-1] + w log c[i])``; the cheapest cost when the first
    point already reaches it, the largest when none does.
    """
    order = np.argsort(costs, kind="stable")
    c, s = costs[order], scores[:, order]
    log_c = np.array([math.log(x) for x in c])
    reached = s >= targets[:, None]
    first = np.where(reached.any(axis=1), reached.argmax(axis=1), c.size)
    out = np.where(first == 0, c[0], c[-1])
    exact = (first > 0) & (first < c.size)
    rows = np.flatnonzero(exact)
    if rows.size:
        i = first[rows]
        lo, hi = s[rows, i - 1], s[rows, i]
        w = (targets[rows] - lo) / (hi - lo)
        z = (1 - w) * log_c[i - 1] + w * log_c[i]
        out[rows] = [math.exp(v) for v in z.tolist()]
    return out, exact


def _isotonic_rows(scores: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted isotonic (non-decreasing) fit of each row of ``scores`` (points in cost order)."""
    from scipy.optimize import isotonic_regression

    return np.stack([isotonic_regression(row, weights=weights).x for row in scores])


def _slopes(log_c: np.ndarray, scores: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted least-squares slope of each row of ``scores`` on ``log_c``."""
    w = weights / weights.sum()
    xc = log_c - w @ log_c
    return (scores - (scores @ w)[:, None]) @ (w * xc) / float(w @ (xc * xc))


def realised_efficiency(path_costs: Sequence[float], path_scores: Sequence[Sequence[float]],
                        baseline_cost: float, baseline_scores: Sequence[float], *,
                        method: str = "isotonic", n_boot: int = 2000, confidence: float = 0.9,
                        rng: np.random.Generator | int | None = 0) -> RealisedEfficiency:
    """η realised by training, with a bootstrap interval over seeds.

    Parameters
    ----------
    path_costs : sequence of float
        Cost of each trained point of the plan's budget path (at least two distinct).
    path_scores : sequence of sequences
        Per path point, the score (held-out success) of each seed.
    baseline_cost : float
        What the baseline spent.
    baseline_scores : sequence of float
        The baseline's score per seed.
    method : {"isotonic", "interpolate"}
        How ``cost*`` is read off the path (see the module docstring).
    n_boot : int
        Bootstrap replicates.
    confidence : float
        Level of the percentile interval and of the rise test.
    rng : Generator or int
        Randomness of the resampling.

    Examples
    --------
    >>> r = realised_efficiency([100.0, 400.0, 1600.0],
    ...                         [[0.10, 0.12, 0.11], [0.30, 0.29, 0.31], [0.50, 0.51, 0.49]],
    ...                         1600.0, [0.40, 0.41, 0.39], n_boot=500, rng=1)
    >>> round(r.eta, 3), r.bound          # 0.4 is halfway in log between 400 and 1600
    (2.0, 'exact')
    >>> r.interval[0] < r.eta < r.interval[1], r.bounded_fraction
    (True, 0.0)
    >>> flat = realised_efficiency([250.0, 500.0, 1000.0, 2000.0],
    ...                            [[0.49, 0.50, 0.48], [0.51, 0.50, 0.51], [0.50, 0.49, 0.50],
    ...                             [0.48, 0.49, 0.48]], 1000.0, [0.50, 0.49, 0.51], rng=0)
    >>> flat.bound, flat.eta, flat.status
    ('not estimable', None, 'not_estimable')
    """
    from rlscale.theory._validation import check_choice

    costs = check_real("path_costs", path_costs, low=0.0, low_open=True).ravel()
    if isinstance(path_scores, str | bytes) or not isinstance(path_scores, Sequence | np.ndarray):
        raise TypeError(f"path_scores must be a list of score lists; got "
                        f"{type(path_scores).__name__}")
    if costs.size == 0 or len(path_scores) != costs.size:
        raise ValueError(f"path_scores must give one list of scores per entry of path_costs "
                         f"({costs.size}); got {len(path_scores)}")
    scores = [check_real(f"path_scores[{i}]", s).ravel() for i, s in enumerate(path_scores)]
    if any(s.size == 0 for s in scores):
        raise ValueError("path_scores must not hold an empty list of scores")
    base_cost = check_scalar("baseline_cost", baseline_cost, low=0.0, low_open=True)
    base = check_real("baseline_scores", baseline_scores).ravel()
    if base.size == 0:
        raise ValueError("baseline_scores must not be empty")
    method = check_choice("method", method, METHODS)
    n_boot = check_positive_int("n_boot", n_boot, minimum=2, maximum=10**6)
    if n_boot * (sum(s.size for s in scores) + base.size) > 10**8:
        raise ValueError(f"n_boot={n_boot} resamples of these scores exceed 1e8 draws; lower "
                         "n_boot")
    if not isinstance(rng, np.random.Generator) and rng is not None:
        rng = check_positive_int("rng", rng, minimum=0)
    conf = check_scalar("confidence", confidence, low=0.0, high=1.0, low_open=True,
                        high_open=True)
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    order = np.argsort(costs, kind="stable")
    costs, scores = costs[order], [scores[i] for i in order]
    if np.unique(costs).size < 2:
        raise ValueError(f"path_costs must hold at least two distinct costs (a path); got "
                         f"{costs.tolist()}")
    weights = np.array([s.size for s in scores], dtype=float)
    log_c = np.log(costs)

    def iqm(x: np.ndarray, axis: int = -1) -> Any:
        return trim_mean(x, 0.25, axis=axis)

    def read(rows: np.ndarray) -> np.ndarray:
        return _isotonic_rows(rows, weights) if method == "isotonic" else rows

    raw = np.array([[float(iqm(s)) for s in scores]])
    fitted = read(raw)[0]
    target = float(iqm(base))
    boot_path = np.stack([iqm(s[gen.integers(0, s.size, (n_boot, s.size))]) for s in scores],
                         axis=1)
    boot_base = iqm(base[gen.integers(0, base.size, (n_boot, base.size))])
    q = (1 - conf) / 2
    slope = float(_slopes(log_c, raw, weights)[0])
    s_lo, s_hi = (float(v) for v in np.quantile(_slopes(log_c, boot_path, weights), [q, 1 - q]))
    common = {"baseline_cost": base_cost, "baseline_score": target, "confidence": conf,
              "n_boot": n_boot, "method": method, "slope": slope, "slope_interval": (s_lo, s_hi),
              "fitted": tuple(float(v) for v in fitted)}
    if not s_lo > 0:
        return RealisedEfficiency(
            eta=None, bound="not estimable", interval=None, bounded_fraction=1.0,
            iso_cost=None, note=(
                f"realised η cannot be estimated: the measured success does not rise along "
                f"the plan's path (slope {slope:+.3g} per e-fold of cost, {conf:.0%} interval "
                f"[{s_lo:+.3g}, {s_hi:+.3g}] includes 0), so where it meets the baseline's "
                f"score {target:.3g} would be read off seed noise"), **common)
    point = cost_to_reach(costs, fitted, target)
    reach, exact = _costs_to_reach(costs, read(boot_path), boot_base)
    etas = base_cost / reach
    bounded = int(np.count_nonzero(~exact))
    lo, hi = np.quantile(etas, [q, 1 - q])
    frac = bounded / n_boot
    note = point.note
    if frac > 0:
        note = (note + "; " if note else "") + (
            f"in {frac:.0%} of the bootstrap replicates the baseline's score lay outside the "
            "measured path, so the interval partly bounds η rather than estimating it")
    return RealisedEfficiency(
        eta=base_cost / point.cost, bound=_ETA_BOUND[point.bound],
        interval=(float(lo), float(hi)), bounded_fraction=frac, iso_cost=point.cost,
        note=note, **common)
