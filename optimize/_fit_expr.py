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

Allocation of a fitted expression: :mod:`rlscale.optimize._fit_expr_allocate`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rlscale.optimize._diagnostics import FitWarning
from rlscale.optimize._fit_expr_allocate import ExpressionAllocation, allocate_expression
from rlscale.optimize._fit_expr_problem import (
    LOG_LIMIT,
    ExpressionProblem,
    Prior,
    validate_data,
)
from rlscale.optimize._fit_expr_result import ExpressionFit
from rlscale.optimize._fit_identify import (
    bound_warnings,
    condition_warning,
    correlation_warnings,
    interval_warnings,
    local_covariance,
    sample_correlation,
)
from rlscale.optimize._lsq import STATUS, solve
from rlscale.theory._expr import ExpressionLaw
from rlscale.theory._threads import blas_threads
from rlscale.theory._validation import check_positive_int, check_scalar

__all__ = ["ExpressionAllocation", "ExpressionFit", "allocate_expression", "fit_expression"]

#: Candidate starts evaluated by default (``starts="auto"``).
AUTO_STARTS = 2048
#: Iterations of the screen (the robust majoriser, all screened starts at once).
SCREEN_NFEV = 40
#: Bootstrap resamples at most, and resamples x starts x residuals x columns per batch.
MAX_BOOTSTRAP, MAX_BATCH_WORK = 100_000, 2 * 10**7
#: Parameters at most (the engine's SVD is p² per point and row).
MAX_PARAMS = 60
#: |correlation| above which two estimates of an expression law are called confounded.
#: Higher than the built-in's 0.95: a coefficient and its own exponent are correlated
#: by the axis's unit alone (0.9992 for A and alpha on the Chinchilla points, which
#: determine both to 2 %), and an expression has no term structure to centre them by.
EXPR_CORRELATION_LIMIT = 0.9999


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
                   noise: float | None = None) -> ExpressionFit:
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
    seed = check_positive_int("seed", seed, minimum=0, maximum=2**63)
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
        found, final, n_cand = _search_components(prob, linear, loss, delta, grid, refine,
                                                  budget, nfev, rng)
        u = found.theta
        theta = final.theta(u)[0]
        fitted = {name: float(v) for name, v in zip(final.names, theta)}
        extrapolation, ext_warn = _extrapolate(final, u, loss, delta, holdout, nfev)
        samples, intervals, method, se = _uncertainty(final, u, found, loss, delta, bootstrap,
                                                      seed, conf, nfev)
    r = final.residual_rows(u[None, :])[0]
    fitted_y = (np.log(data_.y) if residuals == "log" else data_.y).T.ravel()
    rss = float(r @ r)
    tss = float(((fitted_y - fitted_y.mean()) ** 2).sum())
    k = p
    sigma2 = max(rss / n_res, 1e-300)
    loglik = -0.5 * n_res * (math.log(2 * math.pi * sigma2) + 1)
    stop = "converged" if found.converged else (
        "max_evaluations" if found.status == 0 else "not_converged")
    warnings = _warnings(final, fitted, u, r, samples, intervals, method, se, conf, found,
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
        aic=2 * k - 2 * loglik, bic=k * math.log(n_res) - 2 * loglik, intervals=intervals,
        bootstrap_samples=samples, warnings=tuple(warnings), n_points=data_.n,
        n_starts=n_cand, success=stop == "converged", message=message, confidence=conf,
        seconds=time.perf_counter() - start_time,
        extra={"extrapolation": extrapolation, "residuals": r}, laws=tuple(laws),
        targets=tuple(targets), loss=loss, residual_kind=residuals, delta=float(delta),
        ranges=ranges, bounds=declared_bounds, prior=None if pri is None else pri.given,
        noise=None if pri is None else pri.noise, interval_method=method,
        data_range={a: (float(v.min()), float(v.max())) for a, v in data_.x.items()},
        nfev=int(found.nfev), stop=stop, n_bootstrap=bootstrap)


# ---------------------------------------------------------------------------- search
def _engine(prob: ExpressionProblem, loss: str, delta: float, stage: str, nfev: int,
            lower: np.ndarray | None = None, upper: np.ndarray | None = None,
            weights: np.ndarray | None = None):
    """The engine call of one stage (screen: the robust majoriser, a few iterations;
    polish: the loss's own curvature to full precision), bounds held."""
    robust = prob.robust

    def run(U: np.ndarray):
        lo = prob.lower if lower is None else lower
        hi = prob.upper if upper is None else upper
        screen = stage == "screen"
        return solve(prob.model, U, prob.target, weights, lower=lo, upper=hi, loss=loss,
                     delta=delta, outside=1.0 if screen else 0.0, robust=robust,
                     x_scale="jac", free=prob.free, max_nfev=SCREEN_NFEV if screen else nfev,
                     ftol=1e-10 if screen else 1e-15, xtol=1e-10 if screen else 1e-15,
                     gtol=1e-10 if screen else 1e-15, nonfinite="drop")
    return run


def _predict(prob: ExpressionProblem):
    def predict(U: np.ndarray) -> np.ndarray:
        r = prob.residual_rows(U)
        return np.where(np.isfinite(r), r, 1e6)
    return predict


def _search(prob: ExpressionProblem, linear: list[int], loss: str, delta: float, grid: int,
            refine_n: int, budget: int, nfev: int, rng: np.random.Generator):
    """The optimum (in the final problem's rows), that problem, and the candidate count."""
    from rlscale.optimize._fit_expr_starts import candidates
    from rlscale.optimize._fit_starts import Basin, Found, pick_distinct, refine

    theta, _, moderate = candidates(prob, linear, loss, delta, grid, budget, rng)
    if not len(theta):
        raise ValueError("the law is undefined (or, on log residuals, not positive) at some "
                         "data point for every start: check the law and the data, or fit a "
                         "target that can be <= 0 with residuals='raw'")
    rows = prob.rows(theta)
    # The screen: the best distinct candidates, and the best distinct moderate ones
    # (module docstring of _fit_expr_starts: a profile can prefer a degenerate limit).
    n_screen = max(4 * refine_n, 16)
    preds = _predict(prob)(rows)
    best = pick_distinct(preds, list(range(len(rows))), 1e-3, n_screen // 2)
    mod = [int(j) for j in np.flatnonzero(moderate) if j not in best]
    best += pick_distinct(preds[mod], mod, 1e-3, n_screen - len(best)) if mod else []
    rows = rows[sorted(best)]

    def solve_stage(U, stage, lower, upper):
        return _engine(prob, loss, delta, stage, nfev, lower, upper)(U)

    found = refine(solve_stage, _predict(prob), rows, prob.lower, prob.upper,
                   max_polish=refine_n)
    # One polish with every undeclared parameter free in sign (linear coordinates).
    if not prob.slog.any():
        return found, prob, len(theta)
    free_kinds = ["linear" if k == "slog" else k for k in prob.kinds]
    final = prob.with_kinds(free_kinds)
    u0 = final.rows(prob.theta(found.theta))
    res = _engine(final, loss, delta, "polish", nfev)(u0)
    ok = np.isfinite(res.cost[0]) and res.cost[0] <= found.objective
    if ok:
        found = Found(theta=res.x[0], objective=float(res.cost[0]),
                      basins=[Basin(float(res.cost[0]), res.x[0], found.basins[0].count)]
                      + [Basin(b.objective, final.rows(prob.theta(b.theta))[0], b.count)
                         for b in found.basins[1:]],
                      n_screened=found.n_screened, n_converged=found.n_converged,
                      status=int(res.status[0]) if res.converged[0] or not found.converged
                      else found.status, nfev=int(res.nfev[0]))
        return found, final, len(theta)
    # The signed polish did not help: express the search optimum in the final rows.
    return (Found(theta=u0[0], objective=found.objective,
                  basins=[Basin(b.objective, final.rows(prob.theta(b.theta))[0], b.count)
                          for b in found.basins], n_screened=found.n_screened,
                  n_converged=found.n_converged, status=found.status, nfev=found.nfev),
            final, len(theta))


def _components(prob: ExpressionProblem) -> list[list[int]]:
    """Groups of outputs that share parameters (connected components): the objective is a
    sum over outputs, so each group is a separate problem."""
    groups: list[tuple[set[int], set[str]]] = []
    for i, law in enumerate(prob.laws):
        names = set(law.params)
        joined = [g for g in groups if g[1] & names]
        outputs, params = {i}, names
        for g in joined:
            outputs |= g[0]
            params |= g[1]
            groups.remove(g)
        groups.append((outputs, params))
    return sorted(sorted(g[0]) for g in groups)


def _search_components(prob: ExpressionProblem, linear: list[int], loss: str, delta: float,
                       grid: int, refine_n: int, budget: int, nfev: int,
                       rng: np.random.Generator):
    """:func:`_search` on each group of outputs that share parameters, then one joint
    polish of the assembled optimum (a multi-output law of separate blocks is searched
    block by block: a joint ranking of starts mixes a good block with a bad one)."""
    from rlscale.optimize._fit_expr_problem import ExprData
    from rlscale.optimize._fit_starts import Basin, Found

    groups = _components(prob)
    if len(groups) == 1:
        return _search(prob, linear, loss, delta, grid, refine_n, budget, nfev, rng)
    theta = np.zeros(prob.p)
    n_cand = n_screened = n_conv = 0
    for outputs in groups:
        laws = [prob.laws[i] for i in outputs]
        data = ExprData(prob.data.axes, prob.data.x, prob.data.y[:, outputs],
                        tuple(prob.data.targets[i] for i in outputs))
        names = sorted(set().union(*(set(law.params) for law in laws)))
        cols = np.array([prob.index[nm] for nm in names])
        sub = ExpressionProblem(laws, data, residuals=prob.residuals, ranges=prob.ranges,
                                prior=None if prob.prior is None else prob.prior.subset(cols),
                                kinds=[prob.kinds[j] for j in cols])
        sub_linear = [k for k, j in enumerate(cols) if j in linear]
        found, final, n = _search(sub, sub_linear, loss, delta, grid, refine_n,
                                  max(budget // len(groups), 64), nfev, rng)
        theta[cols] = final.theta(found.theta[None, :])[0]
        n_cand += n
        n_screened += found.n_screened
        n_conv += found.n_converged
    final = prob.with_kinds(["linear" if k == "slog" else k for k in prob.kinds])
    u0 = final.rows(theta[None, :])
    res = _engine(final, loss, delta, "polish", nfev)(u0)
    cost0 = float(final.objective(u0, loss, delta)[0])
    u_best, cost = (res.x[0], float(res.cost[0])) if res.cost[0] <= cost0 else (u0[0], cost0)
    return (Found(theta=u_best, objective=cost, basins=[Basin(cost, u_best, 1)],
                  n_screened=n_screened, n_converged=n_conv, status=int(res.status[0]),
                  nfev=int(res.nfev[0])), final, n_cand)


# ---------------------------------------------------------------------------- hold-out
def _extrapolate(prob: ExpressionProblem, u: np.ndarray, loss: str, delta: float,
                 holdout: float, nfev: int) -> tuple[dict[str, Any], list[FitWarning]]:
    """Refit without the largest-scale runs (scale = product of the axes); score them."""
    n = prob.data.n
    n_out = max(1, round(holdout * n)) if holdout > 0 else 0
    if not n_out or n - n_out <= prob.p:
        return {"n_holdout": 0}, []
    with np.errstate(divide="ignore"):
        scale = np.sum([np.log(v) for v in prob.data.x.values()], axis=0)
    order = np.argsort(scale, kind="stable")
    test = order[-n_out:]
    w_rows = np.ones(n)
    w_rows[test] = 0.0
    weights = np.tile(w_rows, len(prob.laws))
    if prob.prior is not None:
        weights = np.concatenate([weights, np.ones(int(prob.prior.mask.sum()))])
    res = _engine(prob, loss, delta, "polish", nfev, weights=weights)(u[None, :])
    theta = prob.theta(res.x)
    f, _ = prob.law_values(theta, jac=False)
    y = prob.data.y.T.ravel()
    idx = np.concatenate([test + i * n for i in range(len(prob.laws))])
    with np.errstate(all="ignore"):
        rel = np.abs(f[0, idx] / y[idx] - 1.0)
    out = {"n_holdout": int(n_out), "mean_abs_rel_error": float(np.mean(rel)),
           "max_abs_rel_error": float(np.max(rel))}
    if not np.all(np.isfinite(rel)):
        return out, [FitWarning(
            "extrapolation", "the law refitted without the largest-scale runs predicts them "
            "outside its domain (non-finite)", "check the law's form at large scale")]
    return out, []


# ---------------------------------------------------------------------------- uncertainty
def _natural_jacobian(prob: ExpressionProblem, u: np.ndarray) -> np.ndarray:
    """``∂ residual / ∂ θ`` at the optimum, data rows only, natural coordinates."""
    theta = prob.theta(u[None, :])
    f, J = prob.law_values(theta, jac=True)
    if prob.residuals == "log":
        with np.errstate(all="ignore"):
            J = J / f[:, :, None]
    return J[0]


def _uncertainty(prob: ExpressionProblem, u: np.ndarray, found: Any, loss: str, delta: float,
                 n_boot: int, seed: int, conf: float, nfev: int):
    """Bootstrap samples and intervals, or the posterior's for a prior; local se."""
    r = prob.residual_rows(u[None, :])[0]
    J = _natural_jacobian(prob, u)
    cov = local_covariance(J, r, prob.p) if prob.prior is None else None
    se = np.sqrt(np.diag(cov)) if cov is not None else np.full(prob.p, np.nan)
    q = ((1 - conf) / 2, (1 + conf) / 2)
    if prob.prior is not None:
        intervals, se = _posterior(prob, u, conf)
        samples = _bootstrap(prob, u, found, loss, delta, n_boot, seed, nfev) if n_boot else None
        return samples, intervals, "posterior", se
    if not n_boot:
        return None, {}, "none", se
    samples = _bootstrap(prob, u, found, loss, delta, n_boot, seed, nfev)
    intervals = {name: tuple(float(v) for v in np.quantile(samples[:, j], q))
                 for j, name in enumerate(prob.names)}
    return samples, intervals, "bootstrap", se


def _posterior(prob: ExpressionProblem, u: np.ndarray, conf: float):
    """Laplace intervals ``u ± z·sd``, ``cov = H⁻¹`` with ``H = J_augᵀ J_aug / noise²``
    (the data rows give ``JᵀJ/σ²``, the prior rows ``(∂g/∂u)ᵀ(∂g/∂u)/σ₀²``); a
    parameter with a component on a direction neither determines has no finite
    interval.  Also the posterior standard deviations in natural units."""
    from scipy.stats import norm

    pri = prob.prior
    theta = prob.theta(u[None, :])[0]
    _, Jaug = prob.model(u[None, :])
    Ja = Jaug[0][:, :prob.p]
    H = Ja.T @ Ja / pri.noise ** 2
    # Unit diagonal first, so the null-space test does not depend on the units.
    d = np.sqrt(np.diag(H))
    d = np.where(d > 0, d, 1.0)
    vals, vecs = np.linalg.eigh(H / np.outer(d, d))
    null = vals <= 1e-12 * max(float(vals.max()), 1e-300)
    inv = np.where(null, 0.0, 1.0 / np.where(null, 1.0, vals))
    cov = (vecs * inv) @ vecs.T / np.outer(d, d)
    free = np.any(np.abs(vecs[:, null]) > 1e-6, axis=1) if null.any() else np.zeros(
        prob.p, dtype=bool)
    free |= np.diag(H) == 0
    sd = np.sqrt(np.abs(np.diag(cov)))
    z = float(norm.ppf(0.5 + conf / 2))
    intervals = {}
    for j, name in enumerate(prob.names):
        if free[j]:  # neither the data nor the prior determines it
            intervals[name] = (-math.inf, math.inf)
            sd[j] = math.inf
            continue
        if prob.kinds[j] == "linear" and pri.log[j] and theta[j] != 0:
            # a log-normal prior: the posterior is nearer normal in log|θ| (delta method)
            sd_log = sd[j] / abs(theta[j])
            v = np.sign(theta[j]) * np.exp(np.log(abs(theta[j])) + np.array([-z, z]) * sd_log)
        else:
            ends = np.array([u[j] - z * sd[j], u[j] + z * sd[j]])
            row = np.repeat(u[None, :], 2, axis=0)
            row[:, j] = (np.clip(ends, -LOG_LIMIT, LOG_LIMIT) if prob.kinds[j] != "linear"
                         else ends)
            v = prob.theta(row)[:, j]
        intervals[name] = (float(min(v)), float(max(v)))
    dtheta = np.where(np.array([k != "linear" for k in prob.kinds]), np.abs(theta), 1.0)
    return intervals, sd * dtheta


def _bootstrap(prob: ExpressionProblem, u: np.ndarray, found: Any, loss: str, delta: float,
               n_boot: int, seed: int, nfev: int) -> np.ndarray:
    """Natural estimates ``(n_boot, p)``: each resample from the optimum and up to two
    distinct runner-ups, all resamples through the engine in batches."""
    from rlscale.optimize._bootstrap import resample_counts

    warm = [u] + [b.theta for b in found.basins[1:3]
                  if np.all(np.isfinite(b.theta))]
    starts = np.array(warm)
    S = len(starts)
    counts = resample_counts(prob.data.n, n_boot, seed)
    weights = np.tile(counts, (1, len(prob.laws)))
    if prob.prior is not None:
        weights = np.concatenate([weights, np.ones((n_boot, int(prob.prior.mask.sum())))], 1)
    cells = max(1, weights.shape[1] * prob.q)
    batch = max(1, MAX_BATCH_WORK // (cells * S))
    out = np.empty((n_boot, prob.p))
    for lo in range(0, n_boot, batch):
        w = weights[lo:lo + batch]
        b = w.shape[0]
        U0 = np.repeat(starts[None], b, axis=0).reshape(b * S, -1)
        W = np.repeat(w, S, axis=0)
        res = _engine(prob, loss, delta, "polish", min(nfev, 400), weights=W)(U0)
        cost = np.where(np.isfinite(res.cost), res.cost, np.inf).reshape(b, S)
        pick = np.argmin(cost, axis=1)
        X = res.x.reshape(b, S, -1)[np.arange(b), pick]
        out[lo:lo + b] = prob.theta(X)
    return out


# ---------------------------------------------------------------------------- diagnostics
def _warnings(prob: ExpressionProblem, fitted: dict[str, float], u: np.ndarray, r: np.ndarray,
              samples: np.ndarray | None, intervals: dict, method: str, se: np.ndarray,
              conf: float, found: Any, stop: str, nfev: int, extrapolation: dict
              ) -> list[FitWarning]:
    names = list(prob.names)
    out: list[FitWarning] = []
    if stop == "max_evaluations":
        out.append(FitWarning(
            "iteration-limit", f"the best start's solve stopped at its evaluation limit "
            f"({nfev}) before its tolerances were met", "pass a larger max_nfev (and check "
            "the law for a parameter that runs off)"))
    if prob.ranges == "bounds":
        out += bound_warnings(names, fitted, dict(prob.declared))
    else:
        for name, (lo, hi) in prob.declared.items():
            v = fitted[name]
            if not lo <= v <= hi:
                out.append(FitWarning(
                    "outside-range", f"{name} = {v:.4g} lies outside its declared search range "
                    f"[{lo:g}, {hi:g}] (ranges='search' does not bound it)",
                    "declare the range as a bound (ranges='bounds') if it is known to hold",
                    parameters=(name,)))
    # A log coordinate at its floor e^-690 is a parameter at 0.
    for j, name in enumerate(names):
        if prob.kinds[j] in ("log", "slog") and u[j] <= -LOG_LIMIT + 1e-9:
            out.append(FitWarning(
                "at-bound", f"{name} = {fitted[name]:.3g} ran to 0, the edge of its domain "
                f"(fitted in log space): the data put it at 0 or below",
                "declare it signed, e.g. params={" f"'{name}'" ": (-inf, inf)}, or drop the "
                "term", parameters=(name,)))
    one_signed = {name: prob.kinds[j] in ("log", "slog") or (
        name in prob.declared and prob.declared[name][0] >= 0) for j, name in enumerate(names)}
    bounds = prob.declared if prob.ranges == "bounds" else {}
    out += interval_warnings(names, fitted, intervals, bounds=bounds,
                             samples=samples, se=se, confidence=conf,
                             source=method if method != "none" else "local")
    J = _natural_jacobian(prob, u)
    corr, source = None, ""
    if method == "bootstrap":
        corr = sample_correlation(samples, [one_signed[nm] for nm in names])
        source = "bootstrap"
    if corr is None and prob.prior is None:
        cov = local_covariance(J, r, prob.p)
        d = None if cov is None else np.sqrt(np.abs(np.diag(cov)))
        if d is not None and np.all(d > 0):  # exact data: no spread to correlate
            corr = cov / np.outer(d, d)
            source = "local (JᵀJ)⁻¹"
    if corr is not None:
        out += correlation_warnings(names, corr, source, limit=EXPR_CORRELATION_LIMIT)
    if prob.prior is None:
        out += condition_warning(J)
    else:
        pri = prob.prior
        led = [names[j] for j in range(prob.p) if pri.mask[j] and se[j] > 0 and
               _prior_share(prob, u, j, se[j]) > 0.5]
        if led:
            out.append(FitWarning(
                "prior-dominated", f"the prior, not the data, determines {', '.join(led)} "
                f"(posterior sd more than half the prior's): report them as assumptions",
                "add runs that vary the axes these parameters act on", parameters=tuple(led)))
    return out


def _prior_share(prob: ExpressionProblem, u: np.ndarray, j: int, se_nat: float) -> float:
    """Posterior sd over prior sd for parameter ``j`` (both in the prior's units)."""
    theta = prob.theta(u[None, :])[0]
    sd_g = se_nat / abs(theta[j]) if prob.prior.log[j] else se_nat
    return float(sd_g / prob.prior.sigma[j])

