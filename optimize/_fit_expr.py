"""Fitting laws written as expressions (:class:`~rlscale.theory.ExpressionLaw`).

A front end of the one fitting engine (:mod:`rlscale.optimize._lsq`), on the
built-in fitter's objective by default: the **summed** Huber loss (δ = 1e-3)
of the log residuals ``log f(x; θ) − log y`` (Hoffmann et al. 2022, approach 3,
as corrected by Besiroglu et al. 2024), or half the sum of squares
(``loss="squared"``, to match a published least-squares fit), on log or raw
residuals (``residuals="raw"`` for targets that can be ≤ 0).

:func:`fit_expression` is the pipeline

1. **validate** every argument and the data before any search
   (:func:`rlscale.optimize._fit_expr_problem.validate_data`);
2. **coordinates and bounds** (:class:`~rlscale.optimize._fit_expr_problem.ExpressionProblem`):
   declared ranges are hard bounds held at every iterate (``ranges="bounds"``,
   the default) or only place starts (``ranges="search"``); undeclared
   parameters have either sign;
3. **starts from the data** (:mod:`rlscale.optimize._fit_expr_starts`): the
   parameters the laws are linear in solved for by least squares, the others
   profiled and gridded;
4. **the start strategy** (:func:`rlscale.optimize._fit_starts.refine`):
   screen the best distinct candidates, polish until two agree; then one
   polish with every undeclared parameter free in sign;
5. **uncertainty**: bootstrap resamples of the runs, all through the engine at
   once (warm-started from the optimum and its runner-ups), or, for a fit with
   a prior, the Laplace approximation of the posterior
   ``(JᵀJ/σ² + Σ₀⁻¹)⁻¹`` (Gelman et al. 2013, §4.1) — honest where the prior,
   not the data, determines a parameter;
6. **diagnostics** (:mod:`rlscale.optimize._fit_identify`), the same codes as
   the built-in families', and the hold-out of the largest-scale runs.

The search is :mod:`rlscale.optimize._fit_expr_search`, the uncertainty and the
diagnostics :mod:`rlscale.optimize._fit_expr_uncertainty`, the problem (data,
coordinates, residuals) :mod:`rlscale.optimize._fit_expr_problem`; allocation of
a fitted expression :mod:`rlscale.optimize._fit_expr_allocate`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rlscale.optimize._fit_expr_allocate import ExpressionAllocation, allocate_expression
from rlscale.optimize._fit_expr_problem import ExpressionProblem, Prior, validate_data
from rlscale.optimize._fit_expr_result import ExpressionFit
from rlscale.optimize._fit_expr_search import search
from rlscale.optimize._fit_expr_uncertainty import (
    MAX_BATCH_WORK,
    extrapolate,
    uncertainty,
    warnings_of,
)
from rlscale.optimize._lsq import STATUS
from rlscale.theory._expr import ExpressionLaw
from rlscale.theory._threads import blas_threads
from rlscale.theory._validation import check_positive_int, check_scalar, seed_from

__all__ = ["ExpressionAllocation", "ExpressionFit", "allocate_expression", "fit_expression"]

#: Candidate starts evaluated by default (``starts="auto"``).
AUTO_STARTS = 2048
#: Bootstrap resamples at most.
MAX_BOOTSTRAP = 100_000
#: Parameters at most (the engine's SVD is p² per point and row).
MAX_PARAMS = 60

def _laws(law: Any, axes: Any, params: Any, n_targets: int) -> list[ExpressionLaw]:
    """One :class:`ExpressionLaw` per target, ``params`` ranges declared on each."""
    items = list(law) if isinstance(law, list | tuple) else [law]
    if not items:
        raise ValueError("law must be an expression, an ExpressionLaw or a non-empty list of "
                         "them (one per target)")
    if params is not None and not isinstance(params, Mapping):
        raise TypeError(f"params must be a mapping of name -> (low, high); got {params!r:.60}")
    out = []
    for item in items:
        if isinstance(item, str):
            if axes is None:
                raise ValueError("axes must name the data columns when law is an expression "
                                 "string")
            try:
                own = list(axes)
                if len(items) > 1 and not isinstance(axes, str):
                    # one law per output: each takes the axes it mentions
                    from rlscale.theory._expr import parse_expression

                    names = {sym.name for sym in parse_expression(item).free_symbols}
                    own = [a for a in axes if a in names] or list(axes)
                out.append(ExpressionLaw(item, own, None))
            except (TypeError, ValueError) as exc:  # name the argument the message is about
                raise type(exc)(f"law {item!r:.60}: {exc}") from None
        elif isinstance(item, ExpressionLaw):
            out.append(item)
        else:
            raise TypeError(f"law must be an ExpressionLaw or an expression string; got "
                            f"{type(item).__name__}")
    if params is not None:  # new ranges: the same laws, re-declared
        every = set().union(*(set(law.params) for law in out))
        unknown = sorted(set(params) - every)
        if unknown:
            raise ValueError(f"params names {unknown}, which are not parameters of the law "
                             f"(parameters: {sorted(every)})")
        out = [ExpressionLaw(law.expr, law.axes,
                             {**{p: law.ranges[p] for p in law.declared},
                              **{k: v for k, v in params.items() if k in law.params}})
               for law in out]
    if len(out) == 1 and n_targets > 1:
        out = out * n_targets
    if len(out) != n_targets:
        raise ValueError(f"give one law per target: got {len(out)} laws for {n_targets} "
                         f"targets")
    for law in out[1:]:  # a parameter shared by name must be declared alike
        for p in set(law.declared) & set(out[0].declared):
            if law.ranges[p] != out[0].ranges[p]:
                raise ValueError(f"parameter {p} is declared {out[0].ranges[p]} in one law and "
                                 f"{law.ranges[p]} in another")
    return out


def _prior(prior: Any, noise: Any, names: Sequence[str],
           declared: Mapping[str, tuple[float, float]]) -> Prior | None:
    if prior is None:
        if noise is not None:
            raise ValueError("noise= weighs a prior against the data; pass prior= with it")
        return None
    if not isinstance(prior, Mapping) or not prior:
        raise TypeError(f"prior must be a non-empty mapping name -> (centre, scale); got "
                        f"{prior!r:.60}")
    if noise is None:
        raise ValueError("a prior needs noise= (the standard deviation of a run's residual, "
                         "e.g. of log loss across seeds): it sets the prior's weight against "
                         "the data")
    noise = check_scalar("noise", noise, low=0.0, low_open=True)
    mu = np.full(len(names), np.nan)
    sigma = np.full(len(names), np.nan)
    log = np.zeros(len(names), dtype=bool)
    given = {}
    for name, spec in prior.items():
        if name not in names:
            raise ValueError(f"prior names {name!r}, which is not a parameter (parameters: "
                             f"{list(names)})")
        if (not isinstance(spec, Sequence) or isinstance(spec, str) or len(spec) not in (2, 3)
                or (len(spec) == 3 and spec[2] not in ("log", "normal"))):
            raise ValueError(f"prior[{name!r}] must be (centre, scale) or (centre, scale, "
                             f"'log' | 'normal'); got {spec!r:.60}")
        j = list(names).index(name)
        centre = check_scalar(f"prior[{name!r}][0]", spec[0])
        scale = check_scalar(f"prior[{name!r}][1]", spec[1], low=0.0, low_open=True)
        kind = spec[2] if len(spec) == 3 else (
            "log" if name in declared and declared[name][0] >= 0 else "normal")
        if kind == "log":
            if centre == 0:
                raise ValueError(f"prior[{name!r}] is log-normal: its centre must be "
                                 f"non-zero; got {centre:g}")
            mu[j], log[j] = math.log(abs(centre)), True
        else:
            mu[j] = centre
        sigma[j] = scale
        given[name] = (float(centre), float(scale), kind)
    return Prior(mu, sigma, log, float(noise), given)


def fit_expression(law: ExpressionLaw | str | Sequence[ExpressionLaw | str],
                   data: Mapping[str, Any], *, axes: Sequence[str] | None = None,
                   target: str | Sequence[str] = "loss",
                   params: Mapping[str, Any] | None = None, delta: float | None = None,
                   grid: int = 6, refine: int = 8, bootstrap: int = 0,
                   confidence: float = 0.9, seed: int = 0, holdout: float = 0.1,
                   loss: str = "huber", residuals: str = "log", ranges: str = "bounds",
                   starts: str | int = "auto", max_nfev: int | None = None,
                   prior: Mapping[str, tuple[float, float]] | None = None,
                   noise: float | None = None, rng: Any = None) -> ExpressionFit:
    """Fit an expression law to data (the summed Huber loss on log residuals by default).

    Parameters
    ----------
    law : ExpressionLaw, str, or a list of them
        A string needs ``axes``.  A list gives one law per ``target`` column; the
        laws share parameters by name (a multi-output law).  One law with several
        targets is fitted to all of them.
    data : mapping of column -> 1-d array
    axes : sequence of str
        The axis columns (values >= 0; 0 where the law is defined there).
    target : str or sequence of str
        The column(s) the law predicts.
    params : mapping name -> (low, high), optional
        Ranges of parameters (``-inf``/``inf`` leave a side open), added to those
        the law declares.  Hard bounds unless ``ranges="search"``.
    delta : float, optional
        Huber threshold: 1e-3 on log residuals (as published), ``1e-3 ×`` the
        median ``|y|`` on raw residuals.
    grid : int
        Values per parameter of the grid over declared ranges (at least 2).
    refine : int
        Distinct starts polished at most (the search stops earlier when two
        reach the same optimum); ``4·refine`` (at least 16) are screened.
    bootstrap : int
        Resamples of the runs for the percentile intervals (0: none).
    confidence : float
    seed : int
        Seed of the bootstrap's ``SeedSequence`` (same seed, same intervals).
    rng : int or numpy.random.Generator, optional
        rlscale's one spelling of the randomness (every verb takes it): an
        integer is the seed; a Generator is drawn from once for it.  ``seed=``
        is kept and means the same as an integer ``rng=``; pass one of them.
    holdout : float
        Fraction of the largest-scale runs (by the product of the axes) held out:
        the law refitted on the rest predicts them, ``extra["extrapolation"]``.
    loss : {"huber", "squared"}
    residuals : {"log", "raw"}
        ``log f − log y`` (targets and the law > 0), or ``f − y`` (any sign).
    ranges : {"bounds", "search"}
        Declared ranges are hard bounds (default), or search ranges only.
    starts : "auto" or int
        Candidate starts evaluated (auto: 2,048).
    max_nfev : int, optional
        Evaluations per polish (default ``max(500, 200·p)``); a fit that reaches
        it has ``status="max_evaluations"`` and an ``iteration-limit`` warning.
    prior : mapping name -> (centre, scale[, "log" | "normal"]), optional
        Gaussian priors: ``"normal"`` on the value (centre and scale in its
        units), ``"log"`` on ``log value`` (log-normal: the parameter is then
        positive; ``scale`` in log units, 0.5 is a factor ``e^0.5``); the default
        is ``"log"`` for a parameter declared ``>= 0``, else ``"normal"``.  Lets
        a fit have fewer runs than parameters; intervals are then the
        posterior's.  Needs ``noise``.
    noise : float, optional
        Standard deviation of one run's residual (log units for log residuals),
        the prior's weight against the data.

    Returns
    -------
    ExpressionFit

    Raises
    ------
    ValueError
        A bad argument or data, or fewer runs than parameters without a prior.

    Examples
    --------
    No ranges are needed: starts come from the data.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> N = np.geomspace(1e3, 1e7, 40)
    >>> y = (1.7 + 300.0 * N**-0.35) * np.exp(0.01 * rng.standard_normal(40))
    >>> fit = fit_expression("E + A/N**alpha", {"N": N, "loss": y}, axes=["N"])
    >>> round(fit.params["alpha"], 2), round(fit.params["E"], 1), fit.status
    (0.35, 1.7, 'converged')

    A declared range is a bound that holds:

    >>> low = fit_expression("E + A/N**alpha", {"N": N, "loss": y}, axes=["N"],
    ...                      params={"E": (1.8, 3.0)})
    >>> low.params["E"], [w.code for w in low.warnings]
    (1.8, ['at-bound'])
    """
    start_time = time.perf_counter()
    targets = [target] if isinstance(target, str) else list(target) if isinstance(
        target, Sequence) else None
    if not targets or not all(isinstance(t, str) for t in targets):
        raise TypeError(f"target must be a column name or a list of them; got "
                        f"{target!r:.60}")
    laws = _laws(law, axes, params, len(targets))
    axes_all = tuple(dict.fromkeys(a for lw in laws for a in lw.axes))
    for name, value, choices in (("loss", loss, ("huber", "squared")),
                                 ("residuals", residuals, ("log", "raw")),
                                 ("ranges", ranges, ("bounds", "search"))):
        if not isinstance(value, str) or value not in choices:
            raise ValueError(f"{name} must be one of {choices}; got {name}={value!r:.40}")
    grid = check_positive_int("grid", grid, minimum=2, maximum=1000)
    refine = check_positive_int("refine", refine, maximum=1000)
    bootstrap = check_positive_int("bootstrap", bootstrap, minimum=0, maximum=MAX_BOOTSTRAP)
    conf = check_scalar("confidence", confidence, low=0.0, high=1.0, low_open=True,
                        high_open=True)
    holdout = check_scalar("holdout", holdout, low=0.0, high=1.0, high_open=True)
    budget = AUTO_STARTS if starts == "auto" else check_positive_int(
        "starts", starts, maximum=10**6)
    seed = check_positive_int("seed", seed_from(seed, rng), minimum=0, maximum=2**63)
    data_ = validate_data(data, axes_all, targets, residuals)
    if delta is None:
        delta = 1e-3 if residuals == "log" else 1e-3 * max(float(np.median(np.abs(data_.y))),
                                                           1e-300)
    delta = check_scalar("delta", delta, low=0.0, low_open=True)
    base = ExpressionProblem(laws, data_, residuals=residuals, ranges=ranges)
    p = base.p
    if p > MAX_PARAMS:
        raise ValueError(f"the law has {p} parameters; the limit is {MAX_PARAMS}")
    nfev = max(500, 200 * p) if max_nfev is None else check_positive_int(
        "max_nfev", max_nfev, minimum=10, maximum=10**7)
    n_res = data_.n * len(laws)
    rng = np.random.default_rng(0)  # the search is deterministic: its own fixed seed
    linear = base.linear_parameters(rng)
    kinds = ["slog" if (j in linear and base.names[j] not in base.declared) else k
             for j, k in enumerate(base.kinds)]
    pri = _prior(prior, noise, base.names, base.declared)
    if pri is not None:  # a log-normal prior is a statement of sign: fitted through log θ
        kinds = ["log" if pri.log[j] else k for j, k in enumerate(kinds)]
    if n_res <= p and pri is None:
        raise ValueError(f"{data_.n} runs ({n_res} targets) cannot determine {p} parameters: "
                         f"pass prior={{name: (centre, scale)}} and noise= for the parameters "
                         f"the data cannot determine (a regularised fit states them)")
    if bootstrap * n_res > MAX_BATCH_WORK * 10:
        raise ValueError(f"bootstrap x targets = {bootstrap} x {n_res} exceeds "
                         f"{MAX_BATCH_WORK * 10:.0e}: use fewer resamples")
    prob = ExpressionProblem(laws, data_, residuals=residuals, ranges=ranges, prior=pri,
                             kinds=kinds)
    with blas_threads(1):
        found, final, n_cand = search(prob, linear, loss, delta, grid, refine, budget, nfev,
                                      rng)
        u = found.theta
        theta = final.theta(u)[0]
        fitted = {name: float(v) for name, v in zip(final.names, theta)}
        extrapolation, ext_warn = extrapolate(final, u, loss, delta, holdout, nfev)
        samples, intervals, method, se = uncertainty(final, u, found, loss, delta, bootstrap,
                                                     seed, conf, nfev)
    r = final.residual_rows(u[None, :])[0]
    fitted_y = (np.log(data_.y) if residuals == "log" else data_.y).T.ravel()
    rss = float(r @ r)
    tss = float(((fitted_y - fitted_y.mean()) ** 2).sum())
    k = p
    # One convention with fit_law's FitResult (optimize/_fit._summarise): n log(RSS/n) + 2k,
    # the Gaussian -2 log-likelihood at the MLE variance without its constant n(log 2π + 1)
    # (Burnham & Anderson 2002, §2.2).
    ll_term = n_res * math.log(max(rss / n_res, 1e-300))
    stop = "converged" if found.converged else (
        "max_evaluations" if found.status == 0 else "not_converged")
    warnings = warnings_of(final, fitted, u, r, samples, intervals, method, se, conf, found,
                           stop, nfev, extrapolation) + ext_warn
    objective = float(final.objective(u[None, :], loss, delta)[0])
    declared_bounds = ({name: final.declared[name] for name in final.names
                        if name in final.declared} if ranges == "bounds" else {})
    message = (f"best of {len(found.basins)} distinct optima from {found.n_screened} screened "
               f"of {n_cand} candidate starts; its solve: {STATUS.get(found.status, '?')} "
               f"after {found.nfev} evaluations (limit {nfev}); {loss} objective "
               f"{objective:.10g}")
    if warnings:
        codes = ", ".join(sorted({w.code for w in warnings}))
        message += f"; {len(warnings)} diagnostics ({codes})"
    return ExpressionFit(
        law=laws[0], params=fitted, objective=objective,
        r2=1 - rss / tss if tss > 0 else math.nan, rmse_log=math.sqrt(rss / n_res),
        aic=ll_term + 2 * k, bic=ll_term + k * math.log(n_res), intervals=intervals,
        bootstrap_samples=samples, warnings=tuple(warnings), n_points=data_.n,
        n_starts=n_cand, success=stop == "converged", message=message, confidence=conf,
        seconds=time.perf_counter() - start_time,
        extra={"extrapolation": extrapolation, "residuals": r}, laws=tuple(laws),
        targets=tuple(targets), loss=loss, residual_kind=residuals, delta=float(delta),
        ranges=ranges, bounds=declared_bounds, prior=None if pri is None else pri.given,
        noise=None if pri is None else pri.noise, interval_method=method,
        data_range={a: (float(v.min()), float(v.max())) for a, v in data_.x.items()},
        nfev=int(found.nfev), stop=stop, n_bootstrap=bootstrap)
