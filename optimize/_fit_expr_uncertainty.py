"""The uncertainty and diagnostics of an expression fit.

* the hold-out of the largest-scale runs (:func:`extrapolate`): the engine's
  polish from the optimum with their weights at 0;
* the bootstrap (:func:`uncertainty`): resamples of the runs as point counts,
  every resample from the optimum and up to two runner-ups in one engine call;
* for a fit with a prior, the Laplace approximation of the posterior
  (:func:`posterior`; Gelman et al. 2013, *Bayesian Data Analysis*, §4.1);
* the diagnostics (:func:`warnings_of`), through the shared rules of
  :mod:`rlscale.optimize._fit_identify`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rlscale.optimize._bootstrap import resample_counts
from rlscale.optimize._diagnostics import FitWarning
from rlscale.optimize._fit_expr_problem import LOG_LIMIT, ExpressionProblem
from rlscale.optimize._fit_expr_search import engine
from rlscale.optimize._fit_identify import (
    bound_warnings,
    condition_warning,
    correlation_warnings,
    interval_warnings,
    local_covariance,
    sample_correlation,
)

__all__: list[str] = []

#: Resamples x starts x residuals x columns solved in one engine call at most.
MAX_BATCH_WORK = 2 * 10**7
#: |correlation| above which two estimates of an expression law are called confounded.
#: Higher than the built-in's 0.95: a coefficient and its own exponent are correlated
#: by the axis's unit alone (0.9992 for A and alpha on the Chinchilla points, which
#: determine both to 2 %), and an expression has no term structure to centre them by.
EXPR_CORRELATION_LIMIT = 0.9999


def extrapolate(prob: ExpressionProblem, u: np.ndarray, loss: str, delta: float,
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
    res = engine(prob, loss, delta, "polish", nfev, weights=weights)(u[None, :])
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


def _natural_jacobian(prob: ExpressionProblem, u: np.ndarray) -> np.ndarray:
    """``∂ residual / ∂ θ`` at the optimum, data rows only, natural coordinates."""
    theta = prob.theta(u[None, :])
    f, J = prob.law_values(theta, jac=True)
    if prob.residuals == "log":
        with np.errstate(all="ignore"):
            J = J / f[:, :, None]
    return J[0]


def uncertainty(prob: ExpressionProblem, u: np.ndarray, found: Any, loss: str, delta: float,
                 n_boot: int, seed: int, conf: float, nfev: int):
    """Bootstrap samples and intervals, or the posterior's for a prior; local se."""
    r = prob.residual_rows(u[None, :])[0]
    J = _natural_jacobian(prob, u)
    cov = local_covariance(J, r, prob.p) if prob.prior is None else None
    se = np.sqrt(np.diag(cov)) if cov is not None else np.full(prob.p, np.nan)
    q = ((1 - conf) / 2, (1 + conf) / 2)
    if prob.prior is not None:
        intervals, se = posterior(prob, u, conf)
        samples = _bootstrap(prob, u, found, loss, delta, n_boot, seed, nfev) if n_boot else None
        return samples, intervals, "posterior", se
    if not n_boot:
        return None, {}, "none", se
    samples = _bootstrap(prob, u, found, loss, delta, n_boot, seed, nfev)
    intervals = {name: tuple(float(v) for v in np.quantile(samples[:, j], q))
                 for j, name in enumerate(prob.names)}
    return samples, intervals, "bootstrap", se


def posterior(prob: ExpressionProblem, u: np.ndarray, conf: float):
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
        res = engine(prob, loss, delta, "polish", min(nfev, 400), weights=W)(U0)
        cost = np.where(np.isfinite(res.cost), res.cost, np.inf).reshape(b, S)
        pick = np.argmin(cost, axis=1)
        X = res.x.reshape(b, S, -1)[np.arange(b), pick]
        out[lo:lo + b] = prob.theta(X)
    return out


def warnings_of(prob: ExpressionProblem, fitted: dict[str, float], u: np.ndarray, r: np.ndarray,
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
