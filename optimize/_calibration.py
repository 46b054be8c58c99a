"""Does a predicted η interval cover the truth as often as it says?

A calibration study for the plug-in plan's predicted efficiency (issue 11, item 9):
draw many synthetic sweeps from a **known** law with the report's design and
noise, fit each with :func:`~rlscale.optimize.fit_law` (bootstrap included),
carry the bootstrap laws into η against every baseline (as
:func:`~rlscale.optimize.plan_uncertainty` does), and count how often the
interval contains the truth.

Two truths are scored (issue 29, item 1).  **η_deployed** is what the user gets: the
plug-in plan's path (the fitted law's optimum along budgets) judged under the known law
(:func:`~rlscale.optimize.deployed_efficiency`); it differs from data set to data set,
since each data set's fit picks its own plan, and is the estimand an interval for the
deployed plan must cover (:attr:`EtaCalibration.table_deployed`).  The **oracle η** is
the known law's own optimum path against the baseline, the same for every data set
(:attr:`EtaCalibration.table`, the earlier estimand); it is an upper bound of η_deployed,
reached only when the data pick the known law's optimum.  One set of fits and
bootstrap η per data set serves every interval method
(:mod:`rlscale.optimize._eta_interval`) and every baseline, so one study
gives a table method × baseline → coverage.  A ``confidence`` interval
should cover in about ``confidence`` of the data sets; each coverage carries
a Wilson score interval (Wilson 1927) so that "about" is explicit.

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
from rlscale.optimize._baselines import ETA_FLOOR, compare_baselines, eta_bootstrap
from rlscale.optimize._eta_interval import (
    DEFAULT_METHOD,
    INTERVAL_METHODS,
    bootstrap_interval,
    check_interval_method,
)
from rlscale.theory._laws import Law
from rlscale.theory._result import Result
from rlscale.theory._validation import check_positive_int, check_scalar, seed_from

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
class EtaCalibration(Result):
    """Coverage of predicted η intervals on data sets from a known law.

    The headline fields (``coverage`` … ``intervals``) are for one
    ``baseline`` and ``method``; :attr:`table` holds every method × baseline.

    Attributes
    ----------
    coverage : float
        Share of data sets whose interval (``baseline``, ``method``) contained
        ``truth``.
    coverage_interval : tuple
        Wilson 95 % interval of the coverage.
    truth : float
        η of ``baseline`` under the known law.
    baseline : str
    confidence : float
        The nominal level of each interval.
    n_datasets, n_failed : int
        Data sets used, and those whose fit or point plan failed (left out).
    intervals : list of tuple
        Each data set's ``(low, high)`` for ``baseline`` and ``method``.
    failures : list of tuple
        ``(index, reason)`` of each data set left out: a study that drops data
        sets must say why, since dropping the hard ones can flatter coverage.
    method : str
        The interval method of the headline fields.
    table : dict
        ``{method: {baseline: {"coverage", "wilson", "below", "above",
        "median_width", "n"}}}``: coverage with its Wilson 95 % interval, the
        misses with the whole interval below and above the truth, and the
        median interval width.  A method that cannot form an interval on some
        data set (e.g. "basic-log" when the point η sits on the floor 1) is
        counted over the data sets where it can, ``n`` of them.
    truths : dict
        η of every baseline under the known law.
    estimates, samples : list of dict
        Per data set used, the point η and the bootstrap η of each baseline.
    jackknife : list of dict
        Per data set used, the jackknife η of each baseline (empty lists
        unless ``jackknife=True``).
    laws_used, laws_skipped, laws_invalid : list of int
        Per data set used: the bootstrap laws whose η entered the interval; the
        laws carried into η but skipped (an exponent beyond the solver's
        ±1000, or no solvable plan; ``laws_used + laws_skipped`` were carried);
        and the resamples the fit could not turn into a law at all (an
        exponent at its bound 0; :meth:`FitResult.bootstrap_laws`), out of
        ``bootstrap``.
    seconds : float
        Wall time of the study.
    deployed : list of dict
        Per data set used, η_deployed of its plug-in plan's path against each baseline
        (under the known law).
    table_deployed : dict
        As :attr:`table`, each data set's interval scored against its own η_deployed.
    coverage_deployed, coverage_deployed_interval : float, tuple
        The headline coverage (``baseline``, ``method``) against η_deployed, with its
        Wilson 95 % interval.
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
    method: str = DEFAULT_METHOD
    table: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict, repr=False)
    truths: dict[str, float] = field(default_factory=dict, repr=False)
    estimates: list[dict[str, float]] = field(default_factory=list, repr=False)
    samples: list[dict[str, np.ndarray]] = field(default_factory=list, repr=False)
    jackknife: list[dict[str, list[float]]] = field(default_factory=list, repr=False)
    laws_used: list[int] = field(default_factory=list, repr=False)
    laws_skipped: list[int] = field(default_factory=list, repr=False)
    laws_invalid: list[int] = field(default_factory=list, repr=False)
    seconds: float = 0.0
    deployed: list[dict[str, float]] = field(default_factory=list, repr=False)
    table_deployed: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict,
                                                                 repr=False)
    coverage_deployed: float = math.nan
    coverage_deployed_interval: tuple[float, float] = (math.nan, math.nan)

    def as_dict(self) -> dict[str, Any]:
        out = super().as_dict()
        out["samples"] = [{k: v.tolist() for k, v in s.items()} for s in self.samples]
        return out


def _coverage_row(intervals: Sequence[tuple[float, float] | None],
                  truth: float | Sequence[float]) -> dict[str, Any]:
    """Coverage, Wilson interval, misses below/above and median width of some intervals.

    ``truth`` is one value for every interval (the oracle η) or one per interval (each
    data set's η_deployed)."""
    truths = [truth] * len(intervals) if np.ndim(truth) == 0 else list(truth)
    pairs = [(iv, t) for iv, t in zip(intervals, truths) if iv is not None]
    if not pairs:
        return {"coverage": None, "wilson": None, "below": 0, "above": 0,
                "median_width": None, "n": 0}
    hits = sum(lo <= t <= hi for (lo, hi), t in pairs)
    return {"coverage": hits / len(pairs), "wilson": _wilson(hits, len(pairs)),
            "below": sum(hi < t for (_, hi), t in pairs),
            "above": sum(lo > t for (lo, _), t in pairs),
            "median_width": float(np.median([hi - lo for (lo, hi), _ in pairs])),
            "n": len(pairs)}


def _interval_or_none(samples: np.ndarray, estimate: float, confidence: float, method: str,
                      jackknife: Sequence[float]) -> tuple[float, float] | None:
    """The interval by ``method``, or ``None`` where the method cannot form one."""
    if method == "BCa" and len(jackknife) < 2:
        return None
    try:
        return bootstrap_interval(samples, estimate, confidence, method, floor=ETA_FLOOR,
                                  jackknife=jackknife if method == "BCa" else None)
    except ValueError:
        return None


def score_intervals(truths: Mapping[str, float], estimates: Sequence[Mapping[str, float]],
                    samples: Sequence[Mapping[str, Any]],
                    jackknife: Sequence[Mapping[str, Sequence[float]]], confidence: float,
                    deployed: Sequence[Mapping[str, float]] | None = None
                    ) -> tuple[dict[str, dict[str, list]], dict[str, dict[str, dict[str, Any]]]]:
    """Every method's interval per data set and baseline, and the coverage table.

    The part of :func:`calibrate_eta` after the fits: it needs only the point and
    bootstrap η of each data set (and jackknife η for "BCa", which is scored only
    when every data set has them), so a saved study can be re-scored
    (``python -m benchmarks.calibration_eta --rescore FILE``).  With ``deployed``
    (each data set's η_deployed per baseline) the table scores against those instead
    of the single ``truths``.
    """
    with_jack = bool(jackknife) and all(len(v) >= 2 for j in jackknife for v in j.values())
    methods = [m for m in INTERVAL_METHODS if m != "BCa" or with_jack]
    per: dict[str, dict[str, list[tuple[float, float] | None]]] = {
        m: {k: [_interval_or_none(np.asarray(s[k], dtype=float), e[k], confidence, m,
                                  j[k] if with_jack else [])
                for s, e, j in zip(samples, estimates, jackknife)] for k in truths}
        for m in methods}
    if deployed is None:
        table = {m: {k: _coverage_row(per[m][k], truths[k]) for k in truths} for m in methods}
    else:
        table = {m: {k: _coverage_row(per[m][k], [d[k] for d in deployed]) for k in truths}
                 for m in methods}
    return per, table


def _jackknife_laws(data: dict[str, np.ndarray], axes: list[str], family: str,
                    n_points: int, replicates: int, seed: int) -> list[Law]:
    """The fitted law with each design point (all its replicates) left out in turn."""
    from rlscale.optimize._fit import fit_law

    out = []
    for j in range(n_points):
        keep = np.ones(n_points * replicates, dtype=bool)
        keep[j * replicates:(j + 1) * replicates] = False
        try:
            fit = fit_law({k: v[keep] for k, v in data.items()}, law=family, axes=axes,
                          target="loss", seed=seed, n_jobs=1)
        except (ValueError, RuntimeError, ArithmeticError):
            continue
        out.append(fit.law)
    return out


def calibrate_eta(law: Law, cost: str, budget: float, centre: Mapping[str, float],
                  design: Sequence[Mapping[str, float]], *, noise: float,
                  replicates: int = 3, bounds: Mapping[str, Any] | None = None,
                  substitute: Mapping[str, Any] | None = None, baseline: str = "k only",
                  method: str = DEFAULT_METHOD, n_datasets: int = 200, bootstrap: int = 200,
                  plan_laws: int = 40, confidence: float = 0.9, seed: int = 0,
                  jackknife: bool = False, progress: bool = False,
                  rng: Any = None) -> EtaCalibration:
    """Coverage of the predicted-η intervals on synthetic sweeps, every method and baseline.

    Each data set is drawn as ``loss = L(x)·exp(noise·ε)`` at the design's
    points (``replicates`` rows each), fitted with a ``bootstrap``-resample
    bootstrap, and ``plan_laws`` of its bootstrap laws (evenly spaced, as the
    report takes them) are carried into η against every baseline.  Every
    interval method is then formed from those same η, so one study measures
    them all (:attr:`EtaCalibration.table`).  Bootstrap laws the solver cannot
    take (an exponent beyond ±1000) or plan are dropped from that data set's
    η and counted (:attr:`EtaCalibration.laws_skipped`); a data set is left
    out only when its point law cannot be planned.

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
    baseline, method : str
        The baseline (a key of :attr:`BaselineComparison.baselines`) and the
        interval method (one of "symmetric", "percentile", "basic",
        "basic-log", "bc", "BCa"; "BCa" needs ``jackknife=True``) of the
        headline fields.
    n_datasets, bootstrap, plan_laws, confidence, seed :
        Size of the study (at most 1e4 data sets); bootstrap resamples per
        fit (2 to 1e4; n_datasets x bootstrap at most 1e6 refits); laws
        carried into each plan (2 to 1000); the nominal level; the seed of
        everything (an integer >= 0).
    rng : int or numpy.random.Generator, optional
        rlscale's one spelling of the randomness (every verb takes it): an
        integer is the seed; a Generator is drawn from once for it.  ``seed=``
        is kept and means the same as an integer ``rng=``; pass one of them.
    jackknife : bool
        Also refit each data set with each design point (all its replicates)
        left out, for the BCa acceleration (one refit per design point: the
        study's cost roughly doubles).  A grouped jackknife: the bootstrap
        resamples rows, the jackknife deletes points.

    Raises
    ------
    ValueError, TypeError
        An argument outside its range, named; a ``ValueError`` also when every
        data set failed to fit or plan (the last failure is quoted).

    Examples
    --------
    >>> from rlscale.theory import AdditiveLaw
    >>> law = AdditiveLaw(0.1, {"E": 1.0, "k": 1.0}, {"E": 0.5, "k": 0.5})
    >>> design = star_design({"E": 8, "k": 8}, {"E": [1, 4, 16, 64], "k": [1, 4, 16, 64]})
    >>> cal = calibrate_eta(law, "E + k", 200.0, {"E": 10.0, "k": 10.0}, design, noise=0.02,
    ...                     bounds={"E": (1, 1e6), "k": (1, 1e6)}, n_datasets=2,
    ...                     bootstrap=20, plan_laws=5)
    >>> cal.n_datasets, cal.method, sorted(cal.table)
    (2, 'symmetric', ['basic', 'basic-log', 'bc', 'percentile', 'symmetric'])
    >>> cal.table["symmetric"]["k only"]["coverage"] == cal.coverage   # the headline entry
    True
    """
    import time
    import warnings

    from rlscale.optimize._decision_paths import optimum_path, path_budgets
    from rlscale.optimize._deployed import path_etas
    from rlscale.optimize._fit import LAWS, fit_law

    start = time.perf_counter()
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
    seed = check_positive_int("seed", seed_from(seed, rng), minimum=0,
                              maximum=2**63 - MAX_DATASETS)
    design = _check_design(design, law.axes)
    if len(design) * replicates > MAX_ROWS:
        raise ValueError(f"design of {len(design)} points x replicates={replicates} exceeds "
                         f"{MAX_ROWS:.0e} rows per data set")
    if not isinstance(baseline, str):
        raise TypeError(f"baseline must be a baseline name (str); got {baseline!r:.60}")
    method = check_interval_method(method)
    if not isinstance(jackknife, bool):
        raise TypeError(f"jackknife must be True or False; got {jackknife!r:.60}")
    if method == "BCa" and not jackknife:
        raise ValueError("method='BCa' needs jackknife=True (its acceleration comes from "
                         "jackknife refits)")
    truth_cmp = compare_baselines(AllocationProblem(law, cost, bounds, substitute), budget,
                                  centre)
    if baseline not in truth_cmp.baselines:
        raise ValueError(f"baseline must be one of {sorted(truth_cmp.baselines)}; got "
                         f"{baseline!r}")
    truths = {k: float(v["eta"]) for k, v in truth_cmp.baselines.items()}
    axes = list(law.axes)
    x = {a: np.repeat([float(p[a]) for p in design], replicates) for a in axes}
    clean = np.asarray(law.loss(x), dtype=float)
    rng = np.random.default_rng(seed)
    failures: list[tuple[int, str]] = []
    estimates: list[dict[str, float]] = []
    deployed: list[dict[str, float]] = []
    samples: list[dict[str, np.ndarray]] = []
    jacks: list[dict[str, list[float]]] = []
    used: list[int] = []
    skipped: list[int] = []
    invalid_laws: list[int] = []
    it = range(n_datasets)
    if progress:
        from tqdm import tqdm

        it = tqdm(it, desc="data sets", unit="set", file=sys.stderr)
    for i in it:
        data = {**x, "loss": clean * np.exp(noise * rng.standard_normal(clean.size))}
        try:
            with warnings.catch_warnings():
                # A resample whose coefficient overflows exp() is a law fit_law already
                # leaves out of bootstrap_laws(); its overflow warning says nothing more.
                warnings.filterwarnings("ignore", "overflow encountered in exp",
                                        RuntimeWarning)
                fit = fit_law(data, law=law.family, axes=axes, target="loss",
                              bootstrap=bootstrap, confidence=confidence, seed=seed + i,
                              n_jobs=1)
            laws = fit.bootstrap_laws()
            invalid = bootstrap - len(laws)
            if len(laws) > plan_laws:
                laws = [laws[j] for j in np.linspace(0, len(laws) - 1, plan_laws).astype(int)]
            fitted = AllocationProblem(fit.law, cost, bounds, substitute)
            point = compare_baselines(fitted, budget, centre)
            path = optimum_path(fit.law, cost, bounds, substitute,
                                 path_budgets(fitted, budget), budget, point.plan.values,
                                 "plug-in")
            dep = {k: float(path_etas(path, [law], fitted.effective(v["values"]),
                                      v["cost"])[0][0])
                   for k, v in point.baselines.items()}
            boot = eta_bootstrap(point, laws, cost, bounds, substitute, allocations=False)
            if len(boot["good"]) < 2:
                raise ValueError(f"only {len(boot['good'])} of {len(laws)} bootstrap laws gave "
                                 "a solvable plan")
            jack = {k: [] for k in point.baselines}
            if jackknife:
                jl = _jackknife_laws(data, axes, law.family, len(design), replicates, seed + i)
                if jl:
                    jack = {k: v.tolist() for k, v in eta_bootstrap(
                        point, jl, cost, bounds, substitute, allocations=False)["etas"].items()}
        except (ValueError, RuntimeError, ArithmeticError) as exc:
            failures.append((i, f"{type(exc).__name__}: {exc}"))
            continue
        estimates.append({k: float(v["eta"]) for k, v in point.baselines.items()})
        deployed.append(dep)
        samples.append(boot["etas"])
        jacks.append(jack)
        used.append(len(boot["good"]))
        skipped.append(boot["skipped"])
        invalid_laws.append(invalid)
    if not samples:
        raise ValueError(f"every one of the n_datasets={n_datasets} data sets failed to fit or "
                         f"plan (noise={noise:g}, bootstrap={bootstrap}); the last: "
                         f"{failures[-1][1]}")
    per, table = score_intervals(truths, estimates, samples, jacks, confidence)
    _, table_dep = score_intervals(truths, estimates, samples, jacks, confidence, deployed)
    if method not in per:
        raise ValueError("method='BCa' could not be scored: a data set has fewer than 2 "
                         "jackknife refits that solved; see EtaCalibration.table of another "
                         "method")
    head = per[method][baseline]
    if any(iv is None for iv in head):
        raise ValueError(f"method={method!r} could not form an interval on every data set "
                         f"against {baseline!r}; see EtaCalibration.table of another method")
    intervals = [iv for iv in head if iv is not None]
    row = table[method][baseline]
    return EtaCalibration(row["coverage"], row["wilson"], truths[baseline], baseline,
                          confidence, len(samples), len(failures), intervals, failures,
                          method=method, table=table, truths=truths, estimates=estimates,
                          samples=samples, jackknife=jacks, laws_used=used,
                          laws_skipped=skipped, laws_invalid=invalid_laws,
                          seconds=time.perf_counter() - start, deployed=deployed,
                          table_deployed=table_dep,
                          coverage_deployed=table_dep[method][baseline]["coverage"],
                          coverage_deployed_interval=table_dep[method][baseline]["wilson"])
