"""Identification diagnostics shared by every fit: which parameters the data determine.

The built-in families (:mod:`rlscale.optimize._diagnostics`, which adds the
rules that need a family's structure), laws written as expressions and the RL
sigmoid all report through these functions, as
:class:`~rlscale.optimize._diagnostics.FitWarning` with the same codes:

``at-bound``
    a parameter on (within :data:`BOUND_TOL` of) a declared bound: the data
    push it past the range the user allowed, so its value is the bound's.
``not-identified``
    its interval (bootstrap percentiles, or the posterior's for a fit with a
    prior) spans more than a decade (an interval of one sign), is wider than
    :data:`SIGNED_WIDTH` times the value's magnitude (an interval that holds 0),
    or touches a bound; or the local curvature gives it no finite standard error.
``collapsed-interval``
    false precision: the bootstrap interval is narrower than
    :data:`COLLAPSE_RATIO` of the interval the local curvature implies
    (``± z·se`` with ``se`` from ``σ² (JᵀJ)⁻¹``, the residual variance ``σ²`` on
    ``n − p`` degrees of freedom), or most resamples (:data:`COLLAPSE_SHARE`)
    return the point estimate itself.  Resamples pile up like that at a boundary
    or a kink of the objective (a ``min``/``max``, a clamp): the percentile
    interval then describes the degenerate optimum, not the uncertainty
    (Andrews 2000, "Inconsistency of the bootstrap when a parameter is on the
    boundary of the parameter space", *Econometrica* 68(2)).
``correlated-estimates``
    two estimates correlated beyond :data:`CORRELATION_LIMIT` (bootstrap, else
    local): the data determine a combination of them.
``ill-conditioned``
    the column-scaled Jacobian's condition number exceeds :data:`CONDITION_LIMIT`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from rlscale.optimize._diagnostics import (
    CONDITION_LIMIT,
    DECADE,
    FitWarning,
)

__all__: list[str] = []

#: A parameter within this relative distance of a finite bound is on it.
BOUND_TOL = 1e-6
#: A signed parameter is not identified when its interval is wider than this many
#: times its magnitude (a 90 % interval of ±1.645 se wider than 10|θ|: se > 3|θ|).
SIGNED_WIDTH = 10.0
#: A bootstrap interval narrower than this share of the local-curvature one collapsed.
#: On 40 clean synthetic fits of a smooth law (tests/test_fit_identify.py) the ratio
#: of the bootstrap to the local width lies in [0.6, 1.6]; at a clamp it is < 0.05.
COLLAPSE_RATIO = 0.1
#: ... or when at least this share of resamples return the estimate itself (1e-9 relative).
COLLAPSE_SHARE = 0.5
#: |correlation| between two estimates above which they are called confounded.
CORRELATION_LIMIT = 0.99


def _column_norms(J: np.ndarray) -> np.ndarray:
    """Column norms of ``J``, ``inf`` where a column's squares pass the float range.

    Such a column (entries ~1e200, as a degenerate limit gives) is a parameter whose
    sensitivity is off any scale the data set: it is read as not identified (no local
    covariance, condition ``inf``), as before, but without numpy's overflow warning
    printed from inside a fit."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.linalg.norm(J, axis=0)


def local_covariance(J: np.ndarray, resid: np.ndarray, n_params: int) -> np.ndarray | None:
    """``σ² (JᵀJ)⁻¹`` with ``σ² = RSS/(n − p)`` (``None`` when ``JᵀJ`` is singular or
    there are no degrees of freedom left).  ``J`` is the residuals' Jacobian in the
    coordinates the covariance is wanted in."""
    n = resid.size
    if n <= n_params or not np.all(np.isfinite(J)):
        return None
    norms = _column_norms(J)
    if np.any(norms == 0) or not np.all(np.isfinite(norms)):
        return None
    Js = J / norms
    _, sv, Vt = np.linalg.svd(Js, full_matrices=False)  # (JᵀJ)⁻¹ = V S⁻² Vᵀ, no squaring
    if sv[-1] <= 1e-12 * sv[0]:
        return None
    sigma2 = float(resid @ resid) / (n - n_params)
    inv = (Vt.T / sv ** 2) @ Vt
    return sigma2 * inv / np.outer(norms, norms)


def condition(J: np.ndarray) -> float:
    """Condition number of ``J`` with unit-norm columns (``inf`` for a zero column)."""
    norms = _column_norms(J)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0):
        return math.inf
    sv = np.linalg.svd(J / norms, compute_uv=False)
    return math.inf if sv[-1] <= 0 else float(sv[0] / sv[-1])


def bound_warnings(names: Sequence[str], values: Mapping[str, float],
                   bounds: Mapping[str, tuple[float, float]]) -> list[FitWarning]:
    """``at-bound`` for each parameter on a finite declared bound."""
    out = []
    for name in names:
        if name not in bounds:
            continue
        v = values[name]
        for b, side in zip(bounds[name], ("lower", "upper")):
            if math.isfinite(b) and abs(v - b) <= BOUND_TOL * max(abs(b), 1e-300) + (
                    1e-300 if b == 0 else 0.0):
                out.append(FitWarning(
                    "at-bound",
                    f"{name} = {v:.6g} sits on its declared {side} bound {b:g}: the data push "
                    f"it past the range allowed, so this value is the bound's, not the data's",
                    "check the bound (is it known to hold?) and the law; widen the range, or "
                    "declare it search-only (ranges='search') to see where the data put it",
                    parameters=(name,)))
    return out


def interval_warnings(names: Sequence[str], values: Mapping[str, float],
                      intervals: Mapping[str, tuple[float, float]], *,
                      bounds: Mapping[str, tuple[float, float]] | None = None,
                      samples: np.ndarray | None = None, se: np.ndarray | None = None,
                      confidence: float = 0.9, source: str = "bootstrap",
                      touches: Mapping[str, bool] | None = None) -> list[FitWarning]:
    """``not-identified`` and ``collapsed-interval`` (module docstring).

    An interval of one sign is judged by the decade rule, one that holds 0 by its
    width against the value.  ``samples``: the resamples' natural parameters
    (columns in ``names`` order);
    ``se``: local standard errors in natural units (NaN where unknown);
    ``touches``: a front end's own "touches a bound" verdict per parameter.
    """
    out = []
    bounds = bounds or {}
    for j, name in enumerate(names):
        v = values[name]
        if name not in intervals:
            if se is not None and not np.isfinite(se[j]) and source == "local":
                out.append(_not_identified(name, None, "has no finite standard error (the "
                                           "Jacobian is singular in it)", source))
            continue
        lo, hi = intervals[name]
        why = None
        hit = bool(touches.get(name, False)) if touches else False
        if name in bounds:
            hit = hit or any(math.isfinite(b) and abs(e - b) <= BOUND_TOL * max(abs(b), 1e-300)
                             for b in bounds[name] for e in (lo, hi))
        if hit:
            why = "touches a bound"
        elif lo * hi > 0 and abs(hi / lo) > DECADE:
            why = f"spans {abs(hi / lo):.3g}x (more than a decade)"
        elif lo * hi <= 0 and hi - lo > SIGNED_WIDTH * abs(v) + 1e-300:
            why = (f"is {hi - lo:.3g} wide, more than {SIGNED_WIDTH:g}x the value's magnitude "
                   f"{abs(v):.3g}")
        elif not (np.isfinite(lo) and np.isfinite(hi)):
            why = "is unbounded"
        if why:
            out.append(_not_identified(name, (lo, hi), why, source))
            continue
        if source == "bootstrap":
            out += collapsed_warnings([name], {name: v}, {name: (lo, hi)},
                                      None if samples is None else samples[:, j:j + 1],
                                      None if se is None else se[j:j + 1], confidence)
    return out


def collapsed_warnings(names: Sequence[str], values: Mapping[str, float],
                       intervals: Mapping[str, tuple[float, float]],
                       samples: np.ndarray | None, se: np.ndarray | None,
                       confidence: float = 0.9) -> list[FitWarning]:
    """``collapsed-interval`` for each bootstrap interval narrower than
    :data:`COLLAPSE_RATIO` of the local-curvature one, or whose resamples mostly
    (:data:`COLLAPSE_SHARE`) return the estimate itself (module docstring)."""
    from scipy.special import ndtri  # the normal quantile, without importing scipy.stats

    if samples is None:
        return []
    z = float(ndtri(0.5 + confidence / 2))
    out = []
    for j, name in enumerate(names):
        if name not in intervals:
            continue
        lo, hi = intervals[name]
        v = values[name]
        s = float(se[j]) if se is not None else math.nan
        local = 2 * z * s if np.isfinite(s) else math.nan
        same = float(np.mean(np.abs(samples[:, j] - v) <= 1e-9 * max(abs(v), 1e-300)))
        narrow = np.isfinite(local) and local > 0 and (hi - lo) < COLLAPSE_RATIO * local
        if not (narrow or same >= COLLAPSE_SHARE):
            continue
        detail = (f"{same:.0%} of the resamples return the estimate itself" if
                  same >= COLLAPSE_SHARE else
                  f"it is {(hi - lo) / local:.2g} of the width ±{z * s:.3g} the local "
                  f"curvature implies")
        out.append(FitWarning(
            "collapsed-interval",
            f"the bootstrap interval of {name}, [{lo:.4g}, {hi:.4g}], has collapsed: "
            f"{detail}; resamples pile up at a boundary or kink of the objective, so the "
            f"interval understates the uncertainty (false precision)",
            "do not report this interval; use a profile or posterior interval, move the "
            "bound, or add runs where the law's kink or the bound binds",
            parameters=(name,)))
    return out


def _not_identified(name: str, interval: tuple[float, float] | None, why: str,
                    source: str) -> FitWarning:
    shown = "" if interval is None else f", [{interval[0]:.3g}, {interval[1]:.3g}],"
    what = {"bootstrap": "bootstrap interval", "posterior": "posterior interval (prior and "
            "data)", "local": "local standard error"}.get(source, "interval")
    return FitWarning(
        "not-identified",
        f"the {what} of {name}{shown} {why}: the data do not determine it",
        "add runs that vary the axis involved over a wider range (or fix the design: see the "
        "other warnings); do not report this parameter as a finding", parameters=(name,))


def correlation_warnings(names: Sequence[str], corr: np.ndarray, source: str,
                         limit: float = CORRELATION_LIMIT) -> list[FitWarning]:
    """``correlated-estimates`` for each pair with ``|corr| > limit``."""
    out = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            r = corr[i, j]
            if np.isfinite(r) and abs(r) > limit:
                out.append(FitWarning(
                    "correlated-estimates",
                    f"the estimates of {names[i]} and {names[j]} are correlated {r:+.4f} "
                    f"({source}): the data pin down a combination of them, not each",
                    "add runs that separate their effects; report the combination, not each",
                    parameters=(names[i], names[j])))
    return out


def condition_warning(J: np.ndarray) -> list[FitWarning]:
    """``ill-conditioned`` when the column-scaled ``J`` has condition > CONDITION_LIMIT."""
    cond = condition(J)
    if cond <= CONDITION_LIMIT:
        return []
    return [FitWarning(
        "ill-conditioned",
        f"the Jacobian of the residuals is ill-conditioned (condition number {cond:.3g} > "
        f"{CONDITION_LIMIT:g} after scaling its columns): some parameter combination barely "
        f"changes the fit", "see the other warnings for the parameters at fault; declare "
        "ranges or a prior for them, or add runs that inform them")]


def sample_correlation(samples: np.ndarray, one_signed: Sequence[bool]) -> np.ndarray | None:
    """Correlation of bootstrap estimates (logs of one-signed parameters), or None."""
    if samples is None or len(samples) < 20:
        return None
    cols = np.array([np.log(np.abs(samples[:, j])) if s else samples[:, j]
                     for j, s in enumerate(one_signed)]).T
    cols = cols[np.all(np.isfinite(cols), axis=1)]
    if len(cols) < 20:
        return None
    scale = np.maximum(np.abs(cols).max(axis=0), 1.0)
    keep = cols.std(axis=0) > 1e-12 * scale
    corr = np.full((cols.shape[1],) * 2, np.nan)
    if keep.sum() >= 2:
        idx = np.flatnonzero(keep)
        corr[np.ix_(idx, idx)] = np.corrcoef(cols[:, keep].T)
    return corr
