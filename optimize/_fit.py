"""Fitting scaling laws: Hoffmann et al. approach 3 as corrected by Besiroglu et al.

Method (Hoffmann et al. 2022, arXiv 2203.15556, §3.3 and appendix D.2;
Besiroglu, Erdil, Barnett & You 2024, arXiv 2404.10102, §2):

- parameterise in log space, ``e = log L_inf``, ``a_i = log A_i``, so the
  additive law's log-prediction is a log-sum-exp,
  ``log L_hat = LSE(e, a_1 - alpha_1 log x_1, ..., a_n - alpha_n log x_n)``;
- minimise the Huber loss (``delta = 1e-3``) of the residuals
  ``log L_hat - log L``, **summed** over points -- Besiroglu et al. show that
  averaging it (as Hoffmann et al.'s code did) makes L-BFGS stop early, which
  is why the original estimates were off;
- search the grid of initialisations (``alpha_i in {0, 0.5, ..., 2}``,
  ``e in {-1, -0.5, ..., 1}``, ``a_i in {0, 5, ..., 25}``): by default with the
  grid-safe multistart of :mod:`rlscale.optimize._multistart` (one start per
  exponent region, refined together; its safety rule is stated there), or, with
  ``starts="grid"``, L-BFGS from every grid point (:mod:`rlscale.optimize._fit_objective`);
- bootstrap: resample the points with replacement and refit (warm-started
  from the point estimate and the runner-up optima), giving percentile
  intervals; all resamples go through one call of the fitting engine
  (:mod:`rlscale.optimize._lsq`, via :mod:`rlscale.optimize._bootstrap`), as do
  the multistart's solves and the hold-out refit.  Each resample draws its own
  ``SeedSequence`` child, so results do not depend on batching or workers.

``fit_law`` is the pipeline prepare (:mod:`rlscale.optimize._fit_data`) ->
search -> summarise -> extrapolate -> bootstrap; the law families (names,
predictions, grid, bounds, laws) are objects in :mod:`rlscale.optimize._fit_family`.

Model selection: AIC and BIC use a Gaussian likelihood of the log residuals,
``n log(RSS/n) + 2k`` and ``n log(RSS/n) + k log n``; the extrapolation error
refits on all but the largest-scale points (scale = product of the axes) and
scores the held-out ones.  ``R^2`` is computed on ``log L``.

The multiplicative law ``log L = c - sum alpha_i log x_i`` and the pass-rate
law (fitted on ``1/p``, its additive loss; see :mod:`rlscale.theory._laws`)
use the same machinery.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from rlscale.optimize._diagnostics import (
    design_warnings,
    fit_warnings,
)
from rlscale.optimize._fit_data import LAWS, Prepared, prepare  # noqa: F401  (LAWS: re-exported)
from rlscale.optimize._fit_family import GRID, family  # noqa: F401  (GRID: re-exported)
from rlscale.optimize._fit_objective import (  # noqa: F401  (re-exported names)
    MAX_BATCH_CELLS,
    MAX_FIT_WORK,
    Objective,
    grid_stage,
    minimise,
)
from rlscale.optimize._fit_registry import EXPRESSION, FrontEnd, front_end, is_expression
from rlscale.optimize._fit_result import FitResult
from rlscale.optimize._fit_search import search
from rlscale.theory._threads import blas_threads
from rlscale.theory._validation import (
    check_jobs,
    check_positive_int,
    check_real,
    check_scalar,
    seed_from,
)

__all__ = ["FitResult", "fit_law", "huber"]

# Names kept importable from this module (tests and the contract suite use them).
_Objective = Objective
_grid_stage = grid_stage


def huber(r: Any, delta: float = 1e-3) -> np.ndarray:
    """Huber loss ``r**2/2`` for ``|r| <= delta``, ``delta (|r| - delta/2)`` beyond.

    Examples
    --------
    >>> huber(np.array([0.0005, 0.01]), delta=1e-3).tolist()
    [1.25e-07, 9.5e-06]
    """
    d = check_scalar("delta", delta, low=0.0, low_open=True)
    r = check_real("r", r)
    a = np.abs(r)
    # Written as c·(|r| − c/2) with c = min(|r|, δ): no r² overflow for |r| near 1e308.
    c = np.minimum(a, d)
    return c * (a - 0.5 * c)


# ---------------------------------------------------------------------------
# the verb
# ---------------------------------------------------------------------------

def _is_expression(law: Any) -> bool:
    """Kept for callers of the old name: :func:`rlscale.optimize._fit_registry.is_expression`."""
    return is_expression(law)


def fit_law(data: Any, law: Any = "additive", axes: Sequence[str] | None = None,
            target: Any = "loss", *, delta: float | None = None, reduction: str = "sum",
            starts: str | int = "auto", bootstrap: int = 0, confidence: float = 0.9,
            holdout: float = 0.1, replicates: str = "keep", seed: int = 0,
            n_jobs: int = -1, progress: bool = False,
            floor: tuple[float, float] | None = None,
            p_max: tuple[float, float] | None = None, rng: Any = None,
            **options: Any) -> Any:
    """Fit a scaling law to data with the Huber/L-BFGS-B method (approach 3).

    Parameters
    ----------
    data : mapping of column name -> 1-d array
        E.g. a dict of numpy arrays or a pandas DataFrame.  Extra columns are
        ignored.
    law : {"additive", "multiplicative", "pass_rate", "sigmoid", "gao_bon", "gao_rl"}, \
expression string or ExpressionLaw
        The family (every name is a front end of
        :mod:`rlscale.optimize._fit_registry`).  ``"pass_rate"`` fits a success rate in
        ``(0, 1]`` through its loss ``1/p`` and returns a
        :class:`~rlscale.theory.PassRateLaw`.  ``"sigmoid"`` (one axis: compute)
        returns :func:`~rlscale.optimize.fit_sigmoid`'s fit and ``"gao_bon"`` /
        ``"gao_rl"`` (one axis: KL) :func:`~rlscale.optimize.fit_gao`'s, with
        ``bootstrap``, ``confidence`` and ``seed`` passed on (``holdout``,
        ``n_jobs`` and ``progress`` are not used; the other options are refused).
        A law written as an expression (``"E + A/N**alpha"``, a
        :class:`~rlscale.theory.ExpressionLaw`, or a list of them, one per
        target) is fitted by :func:`~rlscale.optimize.fit_expression` with the
        same objective and returns its :class:`~rlscale.optimize.ExpressionFit`;
        ``delta``, ``starts``, ``bootstrap``, ``confidence``, ``holdout``, ``seed``
        and every option of ``fit_expression`` (``**options``) are passed on.
    axes : sequence of str
        Columns that are the law's axes (strictly positive).
    target : str
        Column holding the loss (or the pass rate for ``law="pass_rate"``).
    delta : float, optional
        Huber threshold on log residuals (default ``1e-3``, as published).
    reduction : {"sum", "mean"}
        ``"sum"`` as corrected by Besiroglu et al.; ``"mean"`` reproduces the
        original code's early stopping (for comparison only).
    starts : "auto", "grid" or int
        ``"auto"`` (default): the grid-safe multistart
        (:func:`rlscale.optimize._multistart.multistart`): one start per
        exponent tuple of Hoffmann et al.'s grid, its floor and coefficients
        solved for (25 starts for two axes, 125 for three), refined together;
        the best distinct end points, and copies of them without a floor, are
        polished, and more are polished until the best optimum is reached twice
        or a batch finds nothing lower.  Checked against the full grid on 200
        synthetic sets (``python -m benchmarks.multistart_safety``).  With
        ``reduction="mean"``, ``"auto"`` is the full grid up to 5,000 points,
        else its best 1,000 (the original procedure).  ``"grid"``: L-BFGS from
        every grid point (4,500 starts for two axes, 135,000 for three), then
        L-BFGS-B from the five best distinct end points.  An integer ``m``: the
        same from the ``m`` grid points with the lowest objective.  Grid
        searches are limited to ``MAX_FIT_WORK`` (1e7) starts x points and
        evaluated in blocks of ``MAX_BATCH_CELLS`` (2e6) starts x points.
    bootstrap : int
        Number of bootstrap resamples for the intervals (0: none; use at
        least 1,000 for published intervals).
    confidence : float
        Level of the percentile intervals.
    holdout : float
        Fraction of the largest-scale points held out for the extrapolation
        error (at least one point; 0 disables).
    replicates : {"keep", "mean"}
        Rows sharing the same axis values (seeds) are kept as separate
        observations (default; the bootstrap then resamples rows), or
        replaced by their arithmetic mean target.
    seed : int
        Seed of the bootstrap's ``SeedSequence``; same seed, same intervals.
    rng : int or numpy.random.Generator, optional
        rlscale's one spelling of the randomness (every verb takes it): an
        integer is the seed; a Generator is drawn from once for it.  ``seed=``
        is kept and means the same as an integer ``rng=``; pass one of them.
    n_jobs : int
        joblib workers for grid searches of 2,000 starts or more and for the
        ``reduction="mean"`` bootstrap (-1: all cores; results do not depend
        on it).  The default search and bootstrap run vectorised in one process.
    progress : bool
        Show a tqdm bar for the ``reduction="mean"`` bootstrap on stderr (the
        batched bootstrap takes seconds).
    floor : (low, high), optional
        Bounds on the additive law's floor ``L_inf`` (``0 <= low <= high``;
        ``low = 0``/``high = inf`` leave a side open; ``low == high`` fixes
        it).  Pass what is known to be achievable -- e.g. ``1 −`` the optimal
        policy's success for a loss ``1 − success`` -- so the fitted floor
        cannot promise more than the optimum allows.
    p_max : (low, high), optional
        Bounds on a pass-rate law's ceiling ``p_max`` (``0 < low <= high <=
        1``), e.g. the optimal policy's success.
    **options
        For an expression law, the options of
        :func:`~rlscale.optimize.fit_expression`: ``params`` (ranges), ``grid``,
        ``refine``, ``loss``, ``residuals``, ``ranges``, ``max_nfev``, ``prior``,
        ``noise``.  A built-in family takes ``loss`` (``"huber"``, the default,
        or ``"squared"``).

    Returns
    -------
    FitResult
        With :attr:`FitResult.warnings` (see :mod:`rlscale.optimize._diagnostics`).

    Raises
    ------
    ValueError
        Bad arguments, too few points, or a target whose direction
        contradicts the law (a rising success fitted with a falling law).

    Notes
    -----
    Search ranges.  Exponents are bounded below by 0 (a law falls, or is
    flat, in every axis) and not above; the starts cover ``α ∈ [0, 2]``
    (Hoffmann et al.'s grid), and an exponent the design cannot resolve --
    most of its term's decline between the axis's two smallest values, or
    fewer than three values -- is flagged ``exponent-unresolved`` rather than
    capped.  The log floor starts on ``[−1, 1]`` (clipped into ``floor``
    bounds), the log coefficients on ``[0, 25]``; a pass-rate law's floor of
    ``1/p`` is ``>= 1`` (``p_max <= 1``).

    Examples
    --------
    Noise-free points of a known law are recovered:

    >>> from rlscale.theory import AdditiveLaw
    >>> truth = AdditiveLaw(1.5, {"N": 400.0, "D": 1000.0}, {"N": 0.35, "D": 0.3})
    >>> N, D = np.meshgrid(np.logspace(7, 10, 6), np.logspace(9, 12, 6))
    >>> data = {"N": N.ravel(), "D": D.ravel(), "loss": truth(N=N.ravel(), D=D.ravel())}
    >>> fit = fit_law(data, axes=["N", "D"], starts=100)
    >>> {k: round(v, 3) for k, v in fit.params.items() if "exponent" in k or k == "floor"}
    {'floor': 1.5, 'exponent[N]': 0.35, 'exponent[D]': 0.3}
    >>> fit_law({"N": [1, 2], "loss": [3.0, 2.0]}, axes=["N"])
    Traceback (most recent call last):
    ...
    ValueError: fitting a 1-axis additive law needs at least 4 points (it has 3 parameters); got 2
    """
    start_time = time.perf_counter()
    check_jobs("n_jobs", n_jobs)  # a bounded worker count (issue 22)
    # Checked here, not where the bootstrap uses it: with bootstrap=0 a seed of any type
    # was accepted silently (the wrong-type contract pass, issue 22).
    seed = seed_from(seed, rng)
    check_positive_int("seed", seed, minimum=0, maximum=None)
    front = front_end(law)  # the one dispatch on law= (a ValueError for an unknown name)
    if front is EXPRESSION:  # a law written as an expression: the expression front end
        return _fit_expression_law(data, law, axes, target, delta=delta, reduction=reduction,
                                   starts=starts, bootstrap=bootstrap, confidence=confidence,
                                   holdout=holdout, replicates=replicates, seed=seed,
                                   floor=floor, p_max=p_max, options=options)
    if front.family is None:  # a curve of one axis: the sigmoid and Gao fits
        return _fit_curve_law(front, data, axes, target, delta=delta, reduction=reduction,
                              starts=starts, bootstrap=bootstrap, confidence=confidence,
                              replicates=replicates, seed=seed, floor=floor, p_max=p_max,
                              options=options)
    loss = options.pop("loss", "huber")
    if options:
        raise TypeError(f"fit_law got options {sorted(options)} that only expression laws "
                        f"take (law={law!r:.40}); a built-in family takes loss=")
    prep = prepare(data, law, axes, target, 1e-3 if delta is None else delta, reduction,
                   replicates, confidence, holdout, bootstrap, n_jobs, floor, p_max,
                   loss=loss, starts=starts)
    _check_target_scale(prep.obj.logy, target, law)
    with blas_threads(1):  # small products in hot loops: one BLAS thread (issue 13)
        found = search(prep, starts, n_jobs)
        summary = _summarise(prep, found)
        summary["extrapolation"] = _extrapolate(prep, found["warm"], prep.holdout)
        samples, intervals = _bootstrap(prep, found["warm"], prep.bootstrap, prep.confidence,
                                        seed, n_jobs, progress, list(summary["params"]))
    warnings = design_warnings(prep.x, prep.axes)
    warnings += fit_warnings(
        law=prep.law, theta=found["theta"], x=prep.x,
        y_min=prep.y_min, target=target, params=summary["params"], axes=prep.axes,
        samples=samples, intervals=intervals, floor_bounds=prep.floor_bounds,
        collinear=[a for w in warnings for a in w.axes], residuals=summary["residuals"],
        confidence=prep.confidence)
    x = prep.x
    return FitResult(
        **summary, intervals=intervals, confidence=prep.confidence,
        n_bootstrap=prep.bootstrap,
        n_starts=found["n_starts"], n_converged=found["n_converged"], axes=prep.axes,
        target=target, reduction=reduction, delta=prep.obj.delta, replicates=replicates,
        loss=prep.loss,
        seconds=time.perf_counter() - start_time, bootstrap_samples=samples,
        warnings=tuple(warnings),
        data_range={a: (float(x[:, i].min()), float(x[:, i].max()))
                    for i, a in enumerate(prep.axes)},
        floor_bounds=prep.floor_bounds)


def _check_target_scale(logy: np.ndarray, target: Any, law: Any) -> None:
    """Refuse a target the built-in families cannot represent.

    The engine boxes every log floor and log coefficient in ``[-LOG_LIMIT, LOG_LIMIT]``
    (``optimize/_lsq.py``: ``exp`` of either end is finite in float64). A law whose values lie
    near or beyond ``e^±690`` (about ``1e±300``) needs a floor or coefficient outside that box:
    the fit then "converges" onto the box's edge, a wrong law with a success status. The
    families are homogeneous in their coefficients (the additive floor and coefficients, the
    multiplicative coefficient scale with the target), so dividing the target by a constant
    and multiplying the fitted floor and coefficients back is exact; that is the fix we name.
    """
    from rlscale.optimize._lsq import LOG_LIMIT

    # The median, not the extremes: one outlying point (a loss of 5e-324 among losses ~1) is
    # the robust loss's to set aside, but a law whose typical value lies outside the box
    # cannot be represented.  10 nats of room: a floor somewhat below the values and a
    # coefficient above them must still fit inside the box.
    margin = LOG_LIMIT - 10.0
    centre = float(np.median(logy))
    if abs(centre) > margin:
        # ``logy`` is the engine's target: the loss, or 1/pass rate for a ceiling family.
        raise ValueError(
            f"the median of data[{target!r}] (its inverse for a pass rate) is "
            f"e^{centre:.0f} (about 1e{centre / np.log(10):+.0f}), "
            f"outside [e^-{margin:.0f}, e^{margin:.0f}] (about [{np.exp(-margin):.1e}, "
            f"{np.exp(margin):.1e}]), where the {law} family's floor and coefficients are "
            "representable; divide the target by a constant (e.g. its median) before "
            "fitting and multiply the fitted floor and coefficients back (the law is "
            "homogeneous in them)")


def _fit_expression_law(data: Any, law: Any, axes: Any, target: Any, *, delta: Any,
                        reduction: str, starts: Any, bootstrap: int, confidence: float,
                        holdout: float, replicates: str, seed: int, floor: Any, p_max: Any,
                        options: dict[str, Any]) -> Any:
    """``fit_law`` on an expression law: every option forwarded to ``fit_expression``;
    the built-in families' own options refused with what to write instead."""
    import inspect

    from rlscale.optimize._fit_expr import fit_expression

    if floor is not None or p_max is not None:
        raise ValueError("floor=/p_max= bound a built-in family's floor or ceiling; for an "
                         "expression law declare the parameter's range, e.g. "
                         "params={'E': (low, high)}")
    if reduction != "sum":
        raise ValueError(f"reduction={reduction!r} reproduces the original L-BFGS code for "
                         "the built-in families only; an expression law minimises the sum")
    if replicates != "keep":
        raise ValueError(f"replicates={replicates!r} is for the built-in families; average "
                         "replicate rows before fitting an expression law")
    known = set(inspect.signature(fit_expression).parameters) - {"law", "data"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(f"fit_law got unknown options {unknown}; an expression law takes "
                        f"{sorted(known)}")
    return fit_expression(law, data, axes=axes, target=target, delta=delta, starts=starts,
                          bootstrap=bootstrap, confidence=confidence, seed=seed,
                          holdout=holdout, **options)


def _fit_curve_law(front: FrontEnd, data: Any, axes: Any, target: Any, *, delta: Any,
                   reduction: str, starts: Any, bootstrap: int, confidence: float,
                   replicates: str, seed: int, floor: Any, p_max: Any,
                   options: dict[str, Any]) -> Any:
    """``fit_law`` on a curve front end (sigmoid, Gao): one axis against the target, the
    options of the approach-3 fitter refused by name rather than ignored."""
    given = {"delta": (delta, None), "reduction": (reduction, "sum"),
             "starts": (starts, "auto"), "replicates": (replicates, "keep"),
             "floor": (floor, None), "p_max": (p_max, None)}
    refused = sorted([k for k, (v, default) in given.items()
                      if (v is not None if default is None else
                          not isinstance(v, str) or v != default)] + list(options))
    if refused:
        raise ValueError(f"law={front.name!r} is a curve fit ({front.summary}); it takes "
                         f"bootstrap, confidence and seed, not {refused}")
    if (axes is None or isinstance(axes, str) or not isinstance(axes, Sequence)
            or len(axes) != 1 or not isinstance(axes[0], str)):
        raise ValueError(f"law={front.name!r} fits one axis column against the target; "
                         f"got axes={axes!r:.80}")
    if not isinstance(target, str):
        raise TypeError(f"target must be a column name (str); got target={target!r:.60}")
    cols = []
    for role, name in (("axes", axes[0]), ("target", target)):
        try:
            cols.append(np.asarray(data[name], dtype=float))
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            keys = list(data.keys()) if hasattr(data, "keys") else "?"
            raise ValueError(f"data has no numeric column {name!r} (named by {role}="
                             f"{name!r}); columns: {keys}") from exc
    return front.function()(*cols, **front.fixed, bootstrap=bootstrap, confidence=confidence,
                            rng=seed)


def _summarise(prep: Prepared, found: dict[str, Any]) -> dict[str, Any]:
    """Fit statistics of the optimum (``FitResult`` fields).

    ``r2 = 1 - RSS/TSS`` on ``log L``; AIC and BIC from the Gaussian likelihood of
    the log residuals, ``n log(RSS/n) + 2k`` and ``n log(RSS/n) + k log n``
    (Burnham & Anderson 2002, §2.2 and §6.4).
    """
    obj, theta = prep.obj, found["theta"]
    resid = obj.predict(theta) - obj.logy
    rss = float(resid @ resid)
    n, k = obj.logy.size, obj.n_params
    tss = float(((obj.logy - obj.logy.mean()) ** 2).sum())
    ll_term = n * math.log(max(rss / n, 1e-300))
    return {"law": prep.fam.to_law(theta, prep.axes),
            "params": prep.fam.natural(theta, prep.axes),
            "objective": found["objective"], "n_points": n, "n_params": k,
            "r2": 1.0 - rss / tss if tss > 0 else math.nan if rss > 0 else 1.0,
            "rmse_log": math.sqrt(rss / n), "aic": ll_term + 2 * k,
            "bic": ll_term + k * math.log(n), "residuals": resid}


def _extrapolate(prep: Prepared, starts: np.ndarray, holdout: float) -> dict[str, Any]:
    """Refit without the largest-scale points (scale = product of the axes); score them.

    The refit is the engine's polish from the full fit's warm starts with the held-out
    points' weights at 0 (scipy's L-BFGS-B for ``reduction="mean"``, the published
    procedure that option reproduces)."""
    obj = prep.obj
    logx, logy = obj.logx, obj.logy
    n = logy.size
    n_out = max(1, round(holdout * n)) if holdout > 0 else 0
    if n_out == 0 or n - n_out <= obj.n_params:
        return {"n_holdout": 0, "note": "no hold-out (disabled or too few points)"}
    order = np.argsort(logx.sum(axis=1), kind="stable")
    train, test = order[:-n_out], order[-n_out:]
    sub = Objective(obj.family, logx[train], logy[train], obj.delta,
                    "sum" if obj.scale == 1.0 else "mean")
    if obj.scale == 1.0:
        from rlscale.optimize._lsq import solve

        w = np.ones(n)
        w[test] = 0.0
        res = solve(lambda X: prep.fam.predict(X, logx, jac=True), starts, logy, w,
                    lower=prep.lower, upper=prep.upper, loss=prep.loss, delta=obj.delta,
                    x_scale="jac", max_nfev=400, ftol=1e-15, xtol=1e-15, gtol=1e-15,
                    nonfinite="drop")
        best = res.x[int(np.argmin(np.where(np.isfinite(res.cost), res.cost, np.inf)))]
    else:
        best = min(minimise(sub, starts, prep.bounds), key=lambda t: t[0])[1]
    pred = sub.predict(best, logx[test])
    rel = np.abs(np.expm1(pred - logy[test]))
    return {"n_holdout": int(n_out), "mean_abs_rel_error": float(rel.mean()),
            "max_abs_rel_error": float(rel.max()),
            "rmse_log": float(np.sqrt(np.mean((pred - logy[test]) ** 2))),
            "min_heldout_scale": float(np.exp(logx[test].sum(axis=1).min()))}


def _bootstrap(prep: Prepared, warm: np.ndarray, n_boot: int, confidence: float, seed: int,
               n_jobs: int, progress: bool, names: list[str]
               ) -> tuple[np.ndarray | None, dict[str, tuple[float, float]]]:
    """Bootstrap estimates in natural parameters and their percentile intervals."""
    if not n_boot:
        return None, {}
    obj = prep.obj
    if obj.scale == 1.0:
        from rlscale.optimize._bootstrap import batched_bootstrap

        samples = batched_bootstrap(prep.fam, obj.logx, obj.logy, obj.delta, n_boot, seed,
                                    warm, prep.lower, prep.upper, loss=prep.loss)
    else:
        from rlscale.optimize._bootstrap import per_resample_bootstrap

        samples = per_resample_bootstrap((obj.family, obj.logx, obj.logy, obj.delta, "mean"),
                                         n_boot, seed, warm, prep.bounds, n_jobs, progress)
    nat = np.array([list(prep.fam.natural(s, prep.axes).values()) for s in samples])
    lo_q, hi_q = (1 - confidence) / 2, 1 - (1 - confidence) / 2
    intervals = {name: (float(np.quantile(nat[:, j], lo_q)), float(np.quantile(nat[:, j], hi_q)))
                 for j, name in enumerate(names)}
    return nat, intervals
