"""Does a predicted η interval cover the truth as often as it says?

A calibration study for the report's predicted efficiency (issue 11, item 9):
draw many synthetic sweeps from a **known** law with the report's design and
noise, fit each with :func:`~rlscale.optimize.fit_law` (bootstrap included),
carry the bootstrap laws into η with
:func:`~rlscale.optimize.plan_uncertainty`, and count how often the interval
contains the η the known law implies.  A ``confidence`` interval should cover
in about ``confidence`` of the data sets; the result carries a Wilson score
interval for the measured coverage (Wilson 1927) so that "about" is explicit.

Noise is multiplicative, ``loss_obs = L(x)·exp(σ·ε)`` with ``ε ~ N(0, 1)``,
matching the fitter's model of log residuals.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlscale.optimize._allocate import AllocationProblem
from rlscale.optimize._baselines import compare_baselines, plan_uncertainty
from rlscale.theory._laws import Law
from rlscale.theory._validation import check_positive_int, check_scalar

__all__ = ["EtaCalibration", "calibrate_eta", "star_design"]


def star_design(base: Mapping[str, float], axes: Mapping[str, Sequence[float]]
                ) -> list[dict[str, float]]:
    """The points of a star ("axes") design: each axis varied alone around ``base``.

    Examples
    --------
    >>> star_design({"E": 8, "k": 8}, {"E": [1, 8, 64], "k": [2, 8]})
    [{'E': 1.0, 'k': 8.0}, {'E': 8.0, 'k': 8.0}, {'E': 64.0, 'k': 8.0}, {'E': 8.0, 'k': 2.0}]
    """
    from rlscale.theory._validation import check_mapping

    base, axes = check_mapping("base", base), check_mapping("axes", axes)
    for axis, values in axes.items():
        if isinstance(values, str | bytes) or not isinstance(values, Sequence):
            raise TypeError(f"axes[{axis!r}] must be a list of values; got {values!r:.60}")
    points: list[dict[str, float]] = []
    for axis, values in axes.items():
        for v in values:
            p = {a: check_scalar(f"base[{a!r}]", b) for a, b in base.items()}
            p[axis] = check_scalar(f"axes[{axis!r}]", v)
            if p not in points:
                points.append(p)
    return points


def _wilson(hits: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95 % by default)."""
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class EtaCalibration:
    """Coverage of predicted η intervals on data sets from a known law.

    Attributes
    ----------
    coverage : float
        Share of data sets whose interval contained ``truth``.
    coverage_interval : tuple
        Wilson 95 % interval of the coverage.
    truth : float
        η of ``baseline`` under the known law.
    baseline : str
    confidence : float
        The nominal level of each interval.
    n_datasets, n_failed : int
        Data sets used, and those whose fit or plan failed (left out).
    intervals : list of tuple
        Each data set's ``(low, high)``.
    """

    coverage: float
    coverage_interval: tuple[float, float]
    truth: float
    baseline: str
    confidence: float
    n_datasets: int
    n_failed: int
    intervals: list[tuple[float, float]] = field(repr=False)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def calibrate_eta(law: Law, cost: str, budget: float, centre: Mapping[str, float],
                  design: Sequence[Mapping[str, float]], *, noise: float,
                  replicates: int = 3, bounds: Mapping[str, Any] | None = None,
                  substitute: Mapping[str, Any] | None = None, baseline: str = "k only",
                  n_datasets: int = 200, bootstrap: int = 200, plan_laws: int = 40,
                  confidence: float = 0.9, seed: int = 0,
                  progress: bool = False) -> EtaCalibration:
    """Coverage of the predicted-η interval against ``baseline`` on synthetic sweeps.

    Parameters
    ----------
    law : Law
        The known law (over the axes of ``design``).
    cost, budget, centre, bounds, substitute :
        The allocation problem and the baselines' reference point, as for
        :func:`~rlscale.optimize.plan_uncertainty`.
    design : sequence of mappings
        The sweep's points (axis values), e.g. from :func:`star_design`.
    noise : float
        Standard deviation of the multiplicative log noise.
    replicates : int
        Seeds per design point.
    baseline : str
        Which baseline's η to calibrate (a key of
        :attr:`BaselineComparison.baselines`).
    n_datasets, bootstrap, plan_laws, confidence, seed :
        Size of the study; bootstrap resamples per fit; laws carried into
        each plan; the nominal level; the seed of everything.
    """
    from rlscale.optimize._fit import fit_law

    noise = check_scalar("noise", noise, low=0.0)
    replicates = check_positive_int("replicates", replicates)
    n_datasets = check_positive_int("n_datasets", n_datasets)
    plan_laws = check_positive_int("plan_laws", plan_laws, minimum=2)
    truth_cmp = compare_baselines(AllocationProblem(law, cost, bounds, substitute), budget,
                                  centre)
    if baseline not in truth_cmp.baselines:
        raise ValueError(f"baseline must be one of {sorted(truth_cmp.baselines)}; got "
                         f"{baseline!r}")
    truth = float(truth_cmp.baselines[baseline]["eta"])
    axes = list(law.axes)
    x = {a: np.repeat([float(p[a]) for p in design], replicates) for a in axes}
    clean = np.asarray(law.loss(x), dtype=float)
    rng = np.random.default_rng(seed)
    intervals: list[tuple[float, float]] = []
    failed = 0
    it = range(n_datasets)
    if progress:
        from tqdm import tqdm

        it = tqdm(it, desc="data sets", unit="set", file=sys.stderr)
    for i in it:
        data = {**x, "loss": clean * np.exp(noise * rng.standard_normal(clean.size))}
        try:
            fit = fit_law(data, law=law.family, axes=axes, target="loss",
                          bootstrap=bootstrap, confidence=confidence, seed=seed + i, n_jobs=1)
            laws = fit.bootstrap_laws()
            if len(laws) > plan_laws:
                laws = [laws[j] for j in np.linspace(0, len(laws) - 1, plan_laws).astype(int)]
            unc = plan_uncertainty(fit.law, laws, cost, budget, centre, bounds,
                                   substitute=substitute, confidence=confidence)
        except (ValueError, RuntimeError, ArithmeticError):
            failed += 1
            continue
        intervals.append(tuple(unc.eta_intervals[baseline]))
    if not intervals:
        raise RuntimeError(f"every one of the {n_datasets} data sets failed to fit or plan")
    hits = sum(lo <= truth <= hi for lo, hi in intervals)
    return EtaCalibration(hits / len(intervals), _wilson(hits, len(intervals)), truth,
                          baseline, confidence, len(intervals), failed, intervals)
