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


#: Limits of a study: data sets, bootstrap resamples per fit, their product (refits in
#: all), laws per plan, replicates, sweep rows (design points x replicates), noise.
MAX_DATASETS, MAX_BOOTSTRAP, MAX_REFITS = 10**4, 10**4, 10**6
MAX_PLAN_LAWS, MAX_REPLICATES, MAX_ROWS, MAX_NOISE = 1000, 1000, 10**5, 10.0


def _wilson(hits: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95 % by default)."""
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _check_design(design: Any, axes: Sequence[str]) -> list[dict[str, float]]:
    """``design`` as a list of points with a positive finite value on every axis."""
    if isinstance(design, str | bytes | Mapping) or not isinstance(design, Sequence):
        raise TypeError(f"design must be a list of points (axis -> value); got "
                        f"{type(design).__name__}")
    if not design:
        raise ValueError("design must hold at least one point")
    out = []
    for i, p in enumerate(design):
        if not isinstance(p, Mapping):
            raise TypeError(f"design[{i}] must be a mapping axis -> value; got "
                            f"{type(p).__name__}")
        missing = [a for a in axes if a not in p]
        if missing:
            raise ValueError(f"design[{i}] has no value for the law's axes {missing}")
        out.append({a: check_scalar(f"design[{i}][{a!r}]", p[a], low=0.0, low_open=True)
                    for a in axes})
    return out


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
    failures : list of tuple
        ``(index, reason)`` of each data set left out: a study that drops data
        sets must say why, since dropping the hard ones can flatter coverage.
    """

    coverage: float
    coverage_interval: tuple[float, float]
    truth: float
    baseline: str
    confidence: float
    n_datasets: int
    n_failed: int
    intervals: list[tuple[float, float]] = field(repr=False)
    failures: list[tuple[int, str]] = field(default_factory=list, repr=False)

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
        Standard deviation of the multiplicative log noise, in [0, 10].
    replicates : int
        Seeds per design point (at most 1000; design points x replicates at
        most 1e5 rows).
    baseline : str
        Which baseline's η to calibrate (a key of
        :attr:`BaselineComparison.baselines`).
    n_datasets, bootstrap, plan_laws, confidence, seed :
        Size of the study (at most 1e4 data sets); bootstrap resamples per
        fit (2 to 1e4; n_datasets x bootstrap at most 1e6 refits); laws
        carried into each plan (2 to 1000); the nominal level; the seed of
        everything (an integer >= 0).

    Raises
    ------
    ValueError, TypeError
        An argument outside its range, named; a ``ValueError`` also when every
        data set failed to fit or plan (the last failure is quoted).
    """
    from rlscale.optimize._fit import LAWS, fit_law

    if not isinstance(law, Law) or law.family not in LAWS:
        raise TypeError(f"law must be an rlscale.theory law of a family fit_law fits {LAWS}; "
                        f"got {type(law).__name__}")
    noise = check_scalar("noise", noise, low=0.0, high=MAX_NOISE)
    replicates = check_positive_int("replicates", replicates, maximum=MAX_REPLICATES)
    n_datasets = check_positive_int("n_datasets", n_datasets, maximum=MAX_DATASETS)
    bootstrap = check_positive_int("bootstrap", bootstrap, minimum=2, maximum=MAX_BOOTSTRAP)
    if n_datasets * bootstrap > MAX_REFITS:
        raise ValueError(f"n_datasets={n_datasets} x bootstrap={bootstrap} exceed {MAX_REFITS:.0e} "
                         "refits; lower one of them")
    plan_laws = check_positive_int("plan_laws", plan_laws, minimum=2, maximum=MAX_PLAN_LAWS)
    confidence = check_scalar("confidence", confidence, low=0.0, high=1.0, low_open=True,
                              high_open=True)
    seed = check_positive_int("seed", seed, minimum=0, maximum=2**63 - MAX_DATASETS)
    design = _check_design(design, law.axes)
    if len(design) * replicates > MAX_ROWS:
        raise ValueError(f"design of {len(design)} points x replicates={replicates} exceeds "
                         f"{MAX_ROWS:.0e} rows per data set")
    if not isinstance(baseline, str):
        raise TypeError(f"baseline must be a baseline name (str); got {baseline!r:.60}")
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
    failures: list[tuple[int, str]] = []
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
        except (ValueError, RuntimeError, ArithmeticError) as exc:
            failures.append((i, f"{type(exc).__name__}: {exc}"))
            continue
        intervals.append(tuple(unc.eta_intervals[baseline]))
    if not intervals:
        raise ValueError(f"every one of the n_datasets={n_datasets} data sets failed to fit or "
                         f"plan (noise={noise:g}, bootstrap={bootstrap}); the last: "
                         f"{failures[-1][1]}")
    hits = sum(lo <= truth <= hi for lo, hi in intervals)
    return EtaCalibration(hits / len(intervals), _wilson(hits, len(intervals)), truth,
                          baseline, confidence, len(intervals), len(failures), intervals,
                          failures)
