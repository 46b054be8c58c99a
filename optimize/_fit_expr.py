"""Fitting and allocating laws written as expressions (:class:`~rlscale.theory.ExpressionLaw`).

The objective is the built-in fitter's: the **summed** Huber loss (δ = 1e-3)
of the log residuals ``log f(x; θ) − log y`` (Hoffmann et al. 2022, approach 3,
as corrected by Besiroglu et al. 2024).  It is minimised by
:func:`scipy.optimize.least_squares` with ``loss="huber"`` and
``f_scale = δ``, whose cost ``½δ²Σρ((r/δ)²)`` equals ``Σ Huber_δ(r)`` exactly,
with the analytic Jacobian ``∂ log f/∂θ = (∂f/∂θ)/f`` from sympy.  Positive
parameters are fitted through their logarithms.

**Starts** (the safety of a grid at the cost of a few local solves): the
objective is evaluated on a grid over the declared parameter ranges in one
vectorised pass; local solves start from the ``refine`` best grid points and
the best result is kept.  The bootstrap refits each resample from the point
estimate.

:func:`allocate_expression` allocates a fitted expression under a posynomial
cost: through the geometric program when the bound law is a posynomial in
the axes (exact, certified), otherwise by SLSQP in log space from several
starts — a local method, which the result's status says.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlscale.theory._expr import BoundLaw, ExpressionLaw
from rlscale.theory._validation import check_positive_int, check_real, check_scalar

__all__ = ["ExpressionAllocation", "ExpressionFit", "allocate_expression", "fit_expression"]


@dataclass(frozen=True)
class ExpressionFit:
    """The result of :func:`fit_expression`.

    Attributes
    ----------
    law : ExpressionLaw
    params : dict
        The fitted parameter values.
    objective : float
        Summed Huber loss of the log residuals at ``params``.
    r2 : float
        R² of ``log y`` (1 − RSS/TSS of the log residuals).
    rmse_log : float
    aic, bic : float
        From the Gaussian likelihood of the log residuals.
    intervals : dict
        Bootstrap percentile intervals (empty without a bootstrap).
    bootstrap_samples : ndarray or None
        One row per resample, columns in the order of ``law.params``.
    warnings : tuple of str
        Parameters at the edge of their declared range, and the like.
    n_points, n_starts : int
    success, status, message
        The result convention of :mod:`rlscale.optimize._outcome` for the best
        start's ``least_squares`` run (``status`` ``"converged"`` or
        ``"not_converged"``).
    seconds : float
    """

    law: ExpressionLaw
    params: dict[str, float]
    objective: float
    r2: float
    rmse_log: float
    aic: float
    bic: float
    intervals: dict[str, tuple[float, float]]
    bootstrap_samples: np.ndarray | None
    warnings: tuple[str, ...]
    n_points: int
    n_starts: int
    success: bool
    message: str
    confidence: float
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> str:
        return "converged" if self.success else "not_converged"

    @property
    def bound(self) -> BoundLaw:
        """The law at the fitted parameters."""
        return self.law.bind(self.params)

    def predict(self, values: Mapping[str, Any]) -> Any:
        return self.bound.loss(values)

    def as_dict(self) -> dict[str, Any]:
        return {"expression": str(self.law.expr), "axes": list(self.law.axes),
                "params": self.params, "objective": self.objective, "r2": self.r2,
                "rmse_log": self.rmse_log, "aic": self.aic, "bic": self.bic,
                "intervals": self.intervals, "warnings": list(self.warnings),
                "n_points": self.n_points, "n_starts": self.n_starts,
                "success": self.success, "status": self.status, "message": self.message,
                "confidence": self.confidence, "seconds": self.seconds,
                "extrapolation": self.extra.get("extrapolation", {})}

    # -- notebook display and pandas -------------------------------------------
    def to_frame(self) -> Any:
        """The parameters as a :class:`pandas.DataFrame` indexed by ``parameter``.

        Columns ``value``, ``low`` and ``high`` (the bootstrap interval; NaN without a
        bootstrap).  Needs pandas (``pip install 'rlscale[pandas]'``), else ImportError.
        """
        from rlscale.theory._display import parameter_frame

        return parameter_frame(self.params, self.intervals)

    def _repr_html_(self) -> str:
        from rlscale.theory._display import html_table, latex_math

        rows = [[name, value, *self.intervals.get(name, (None, None))]
                for name, value in self.params.items()]
        level = f"{self.confidence:.0%} interval" if self.intervals else "no bootstrap"
        notes = [f"{latex_math(self.law.expr)} on {self.n_points} points: R² = {self.r2:.4g}, "
                 f"RMSE(log) = {self.rmse_log:.4g}, AIC = {self.aic:.4g}, BIC = {self.bic:.4g}",
                 *self.warnings]
        return html_table("ExpressionFit", ["parameter", "value", f"low ({level})", "high"],
                          rows, notes)


def _huber(r: np.ndarray, delta: float) -> np.ndarray:
    a = np.abs(r)
    return np.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))


class _Problem:
    """Residuals and Jacobian in the fitted coordinates ``u`` (log θ for positive θ)."""

    def __init__(self, law: ExpressionLaw, x: Mapping[str, np.ndarray], logy: np.ndarray):
        self.law, self.x, self.logy = law, x, logy
        self.pos = np.array([law.positive[p] for p in law.params])

    def theta(self, u: np.ndarray) -> np.ndarray:
        return np.where(self.pos, np.exp(np.clip(u, -700, 700)), u)

    def named(self, theta: np.ndarray) -> dict[str, Any]:
        return {p: theta[..., j] for j, p in enumerate(self.law.params)}

    def residuals(self, u: np.ndarray) -> np.ndarray:
        f = self.law.evaluate(self.x, self.named(self.theta(u)))
        with np.errstate(all="ignore"):
            r = np.log(f) - self.logy
        return np.where(np.isfinite(r), r, 1e3)  # invalid region: a large, flat penalty

    def jacobian(self, u: np.ndarray) -> np.ndarray:
        theta = self.theta(u)
        named = self.named(theta)
        f = self.law.evaluate(self.x, named)
        g = self.law.gradient(self.x, named)
        with np.errstate(all="ignore"):
            jac = g / f[:, None] * np.where(self.pos, theta, 1.0)[None, :]
        return np.where(np.isfinite(jac), jac, 0.0)

    def grid_objective(self, us: np.ndarray, delta: float) -> np.ndarray:
        """Objective at many ``u`` at once (rows), vectorised through broadcasting."""
        theta = self.theta(us)
        named = {p: theta[:, j][:, None] for j, p in enumerate(self.law.params)}
        f = self.law.evaluate({a: v[None, :] for a, v in self.x.items()}, named)
        with np.errstate(all="ignore"):
            r = np.log(f) - self.logy[None, :]
        r = np.where(np.isfinite(r), r, 1e3)
        return _huber(r, delta).sum(axis=1)


def _grid(law: ExpressionLaw, per_axis: int) -> np.ndarray:
    cols = []
    for p in law.params:
        lo, hi = law.ranges[p]
        if law.positive[p]:
            cols.append(np.linspace(math.log(lo), math.log(hi), per_axis))
        else:
            cols.append(np.linspace(lo, hi, per_axis))
    return np.array(list(itertools.product(*cols)), dtype=float)


def _solve(prob: _Problem, u0: np.ndarray, delta: float, max_nfev: int = 2000):
    from scipy.optimize import least_squares

    return least_squares(prob.residuals, u0, jac=prob.jacobian, loss="huber", f_scale=delta,
                         x_scale="jac", xtol=1e-15, ftol=1e-15, gtol=1e-15,
                         max_nfev=max_nfev, method="trf")


def fit_expression(law: ExpressionLaw | str, data: Mapping[str, Any], *,
                   axes: Sequence[str] | None = None, target: str = "loss",
                   params: Mapping[str, Any] | None = None, delta: float = 1e-3,
                   grid: int = 6, refine: int = 8, bootstrap: int = 0,
                   confidence: float = 0.9, seed: int = 0,
                   holdout: float = 0.1) -> ExpressionFit:
    """Fit an expression law to data (summed Huber on log residuals).

    Parameters
    ----------
    law : ExpressionLaw or str
        A string needs ``axes`` (and optionally ``params`` ranges).
    data : mapping of column -> 1-d array
    target : str
        The column the law predicts (strictly positive).
    delta : float
        Huber threshold on log residuals.
    grid : int
        Grid points per parameter for the starts (``grid**p`` evaluations,
        at most 200,000).
    refine : int
        Local solves from the best grid points.
    bootstrap : int
        Resamples of the rows for the percentile intervals (0: none).
    confidence : float
    seed : int
    holdout : float
        Fraction of the largest-scale points (by the product of the axes) held
        out: the law refitted on the rest predicts them, and
        ``extra["extrapolation"]`` gives the mean and largest relative error
        (0 disables; as for :func:`~rlscale.optimize.fit_law`).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> N = np.geomspace(1e3, 1e7, 40)
    >>> y = (1.7 + 300.0 * N**-0.35) * np.exp(0.01 * rng.standard_normal(40))
    >>> fit = fit_expression("E + A/N**alpha", {"N": N, "loss": y}, axes=["N"],
    ...                      params={"E": (0.1, 10), "A": (1, 1e5), "alpha": (0.05, 1.5)})
    >>> round(fit.params["alpha"], 2), round(fit.params["E"], 1)
    (0.35, 1.7)
    """
    start = time.perf_counter()
    if isinstance(law, str):
        if axes is None:
            raise ValueError("axes must name the data columns when law is an expression "
                             "string")
        try:
            law = ExpressionLaw(law, axes, params)
        except (TypeError, ValueError) as exc:  # name the argument the message is about
            raise type(exc)(f"law {law!r:.60}: {exc}") from None
    elif not isinstance(law, ExpressionLaw):
        raise TypeError(f"law must be an ExpressionLaw or an expression string; got "
                        f"{type(law).__name__}")
    elif params is not None:  # new ranges for a law object: the same law, re-declared
        law = ExpressionLaw(law.expr, law.axes, params)
    delta = check_scalar("delta", delta, low=0.0, low_open=True, high=1e3)
    grid = check_positive_int("grid", grid, minimum=2, maximum=1000)
    refine = check_positive_int("refine", refine, maximum=1000)
    bootstrap = check_positive_int("bootstrap", bootstrap, minimum=0, maximum=100_000)
    conf = check_scalar("confidence", confidence, low=0.0, high=1.0, low_open=True,
                            high_open=True)
    if grid ** len(law.params) > 200_000:
        raise ValueError(f"grid={grid} gives {grid ** len(law.params):,} start evaluations "
                         f"for {len(law.params)} parameters; the limit is 200,000")
    if not isinstance(data, Mapping) and not hasattr(data, "columns"):
        raise TypeError(f"data must be a mapping (or DataFrame) of columns; got "
                        f"{type(data).__name__}")
    if not isinstance(target, str):
        raise TypeError(f"target must be a column name; got {target!r:.60}")
    cols = {}
    for name in (*law.axes, target):
        if name not in data:
            raise ValueError(f"data has no column {name!r}; columns: {sorted(data)}")
        cols[name] = check_real(name, np.asarray(data[name], dtype=float).ravel(), low=0.0,
                                low_open=True)
    n = cols[target].size
    if any(c.size != n for c in cols.values()):
        raise ValueError(f"columns {list(cols)} must have equal lengths; got "
                         f"{[c.size for c in cols.values()]}")
    if n <= len(law.params):
        raise ValueError(f"{n} data points cannot determine {len(law.params)} parameters")
    x = {a: cols[a] for a in law.axes}
    logy = np.log(cols[target])
    prob = _Problem(law, x, logy)

    starts = _grid(law, grid)
    values = prob.grid_objective(starts, delta)
    order = np.argsort(values, kind="stable")[:refine]
    best = None
    for i in order:
        res = _solve(prob, starts[i], delta)
        if best is None or res.cost < best.cost:
            best = res
    u = best.x
    theta = prob.theta(u)
    fitted = {p: float(theta[j]) for j, p in enumerate(law.params)}
    r = prob.residuals(u)
    rss = float(r @ r)
    tss = float(((logy - logy.mean()) ** 2).sum())
    k = len(law.params)
    sigma2 = max(rss / n, 1e-300)
    loglik = -0.5 * n * (math.log(2 * math.pi * sigma2) + 1)
    warnings = []
    for p in law.params:
        lo, hi = law.ranges[p]
        v = fitted[p]
        span = (math.log(hi) - math.log(lo)) if law.positive[p] else hi - lo
        pos = ((math.log(v) - math.log(lo)) if law.positive[p] else v - lo) / span
        if pos < 0.01 or pos > 0.99:
            warnings.append(f"parameter {p} = {v:.4g} is at the edge of its declared range "
                            f"[{lo:g}, {hi:g}]: widen the range or the data cannot "
                            "determine it")
    extrapolation: dict[str, Any] = {"n_holdout": 0}
    holdout = check_scalar("holdout", holdout, low=0.0, high=1.0, high_open=True)
    n_out = max(1, round(holdout * n)) if holdout > 0 else 0
    if n_out and n - n_out > len(law.params):
        scale = np.sum([np.log(v) for v in x.values()], axis=0)
        order = np.argsort(scale, kind="stable")
        train, test = order[:-n_out], order[-n_out:]
        sub = _Problem(law, {a: v[train] for a, v in x.items()}, logy[train])
        u_sub = _solve(sub, u, delta).x
        pred = law.evaluate({a: v[test] for a, v in x.items()},
                            sub.named(sub.theta(u_sub)))
        with np.errstate(all="ignore"):
            rel = np.abs(pred / cols[target][test] - 1.0)
        extrapolation = {"n_holdout": int(n_out), "mean_abs_rel_error": float(rel.mean()),
                         "max_abs_rel_error": float(rel.max())}
        if not np.all(np.isfinite(rel)):
            warnings.append("the law refitted without the largest-scale points predicts "
                            "them outside its domain (non-finite)")
    samples = None
    intervals: dict[str, tuple[float, float]] = {}
    if bootstrap:
        rng = np.random.default_rng(seed)
        rows = []
        for _ in range(bootstrap):
            idx = rng.integers(0, n, n)
            sub = _Problem(law, {a: v[idx] for a, v in x.items()}, logy[idx])
            rows.append(sub.theta(_solve(sub, u, delta, max_nfev=500).x))
        samples = np.array(rows)
        q = ((1 - conf) / 2, (1 + conf) / 2)
        intervals = {p: tuple(float(v) for v in np.quantile(samples[:, j], q))
                     for j, p in enumerate(law.params)}
    return ExpressionFit(
        law=law, params=fitted, objective=float(_huber(r, delta).sum()),
        r2=1 - rss / tss if tss > 0 else math.nan, rmse_log=math.sqrt(rss / n),
        aic=2 * k - 2 * loglik, bic=k * math.log(n) - 2 * loglik, intervals=intervals,
        bootstrap_samples=samples, warnings=tuple(warnings), n_points=n,
        n_starts=int(starts.shape[0]), success=bool(best.success), message=best.message,
        confidence=conf, seconds=time.perf_counter() - start,
        extra={"extrapolation": extrapolation})


@dataclass(frozen=True)
class ExpressionAllocation:
    """The result of :func:`allocate_expression`.

    ``method`` is ``"gp"`` (the bound law is a posynomial: the geometric
    program's global optimum) or ``"slsqp"`` (a local optimum from the best
    of several starts; ``status`` says global optimality is not certified).
    """

    values: dict[str, float]
    loss: float
    cost: float
    budget: float
    method: str
    status: str
    success: bool
    message: str

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    # -- notebook display and pandas -------------------------------------------
    def to_frame(self) -> Any:
        """The decision variables as a :class:`pandas.DataFrame` indexed by ``variable``.

        Needs pandas (``pip install 'rlscale[pandas]'``), else ImportError.
        """
        from rlscale.theory._display import data_frame

        return data_frame([{"variable": v, "value": float(x)} for v, x in self.values.items()],
                          index="variable")

    def _repr_html_(self) -> str:
        from rlscale.theory._display import html_table

        notes = [f"budget {self.budget:.6g}: loss {self.loss:.6g}, cost {self.cost:.6g}, "
                 f"method {self.method}, status {self.status}", self.message]
        return html_table("ExpressionAllocation", ["variable", "value"],
                          [[v, x] for v, x in self.values.items()], notes)


def allocate_expression(law: BoundLaw | ExpressionFit, cost: Any, budget: float,
                        bounds: Mapping[str, Any] | None = None, *,
                        starts: int = 8, seed: int = 0) -> ExpressionAllocation:
    """Minimise a fitted expression law under ``cost ≤ budget``.

    Examples
    --------
    >>> from rlscale.theory import ExpressionLaw
    >>> law = ExpressionLaw("E + A/N**a + B/D**b + C/(N*D)**0.1", axes=["N", "D"])
    >>> bound = law.bind(E=1.0, A=10.0, a=0.5, B=10.0, b=0.5, C=1.0)
    >>> plan = allocate_expression(bound, "N + D", 200.0)
    >>> plan.method, round(plan.values["N"], 3), round(plan.values["D"], 3)  # symmetric
    ('gp', 100.0, 100.0)
    >>> sig = ExpressionLaw("1 - 0.8*sigmoid(log(N) + log(D) - 8)", axes=["N", "D"]).bind()
    >>> sig_plan = allocate_expression(sig, "N + D", 200.0)
    >>> sig_plan.method, round(sig_plan.values["N"], 2)
    ('slsqp', 100.0)
    """
    from rlscale.optimize._allocate import AllocationProblem
    from rlscale.theory._posynomial import parse_posynomial

    bound = law.bound if isinstance(law, ExpressionFit) else law
    if not isinstance(bound, BoundLaw):
        raise TypeError(f"law must be a bound ExpressionLaw or an ExpressionFit; got "
                        f"{type(law).__name__}")
    budget = check_scalar("budget", budget, low=0.0, low_open=True)
    starts = check_positive_int("starts", starts, maximum=1000)
    poly_law = bound.to_law()
    if poly_law is not None:
        a = AllocationProblem(poly_law, cost, bounds).allocate(budget, round_integers=False)
        return ExpressionAllocation(a.values, a.loss, a.cost, budget, "gp", a.status,
                                    a.kkt_residual <= 1e-6, "geometric program (global)")
    from scipy.optimize import minimize

    poly = parse_posynomial(cost)
    axes = list(bound.axes)
    unknown = [v for v in poly.axes if v not in axes]
    if unknown:
        raise ValueError(f"cost mentions {unknown}, which are not axes of the law {axes}")
    box = []
    for a in axes:
        lo, hi = (bounds or {}).get(a, (None, None))
        box.append((math.log(lo) if lo else -50.0, math.log(hi) if hi else 50.0))

    def f(u: np.ndarray) -> float:
        v = float(bound.law.evaluate(dict(zip(axes, np.exp(u))), bound.params))
        return v if math.isfinite(v) else 1e300

    def g(u: np.ndarray) -> float:  # log B − log cost ≥ 0
        return math.log(budget) - math.log(float(poly.evaluate(dict(zip(axes, np.exp(u))))))

    rng = np.random.default_rng(seed)
    # Starts: the equal split of the budget, then random splits of it.
    best = None
    for i in range(starts):
        share = np.full(len(axes), 1.0 / len(axes)) if i == 0 else rng.dirichlet(
            np.ones(len(axes)))
        u0 = np.log(np.maximum(share * budget / max(len(poly.terms), 1), 1e-12))
        res = minimize(f, u0, method="SLSQP", bounds=box,
                       constraints=[{"type": "ineq", "fun": g}],
                       options={"ftol": 1e-14, "maxiter": 500})
        if res.success and g(res.x) >= -1e-9 and (best is None or res.fun < best.fun):
            best = res
    if best is None:
        return ExpressionAllocation({}, math.nan, math.nan, budget, "slsqp", "failed", False,
                                    f"SLSQP found no feasible point from {starts} starts")
    values = dict(zip(axes, (float(v) for v in np.exp(best.x))))
    return ExpressionAllocation(values, float(best.fun), float(poly.evaluate(values)), budget,
                                "slsqp", "local optimum (not certified global)", True,
                                f"best of {starts} SLSQP starts in log space; the law is not "
                                "a posynomial, so global optimality is not certified")
