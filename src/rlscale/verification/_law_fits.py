"""Batched multi-start fits of the law forms, and whether the min law is identified.

:func:`fit_form` fits one form (:mod:`rlscale.verification._law_forms`) to ``D`` data sets
on one design from several starts each, in one call of the batched
Levenberg–Marquardt solver (:func:`rlscale.verification._law_solver.solve_batch`), and keeps
each data set's best end point (the first of equal costs, as a loop over
starts keeping strictly lower costs would).

**Clamp corners.**  The forms with a shift ``b`` are clamped at
``lm + b <= 0``, where ``√(lm + b)`` has an infinite slope: when the data want
the smallest ``M``'s gains at zero (a reward model from 10 comparisons that
does not help), the optimum sits on the corner ``b = −log M_min`` and a
Gauss–Newton step, which always moves ``b`` a little, crosses it and is
rejected, so the other parameters stall (scipy's ``least_squares`` stalls
there too, at different points from different starts).  Every end point
within ``1e-4 (1 + |b|)`` of such a corner ``b = −lm_j`` is therefore polished
with ``b`` fixed on the corner, and the lower of the two end points is kept.

**Identification** (:func:`boundary_verdicts`).  The min law
``a √min(log M + b, cK)`` has two families at infinity, which its fits
approach when its optimum is not attained:

* ``c → ∞``: ``a √(log M + b)`` (:func:`rlscale.verification._law_forms.sqrt_logm_form`):
  the kink lies beyond the largest ``K``, every point is on the ``log M``
  branch and ``c`` has only a lower bound;
* ``b → ∞`` with ``a√b = A`` and ``c/b = C``: ``A √min(1, CK)``
  (:func:`rlscale.verification._law_forms.plateau_form`), with its own limits ``A′√K``
  (``C → 0``: every point on the ``K`` branch) and a constant (``C → ∞``):
  ``G`` does not grow with ``M`` on the data and none of ``a, b, c`` is
  identified (``a → 0``, ``b, c → ∞``; only the plateau ``a√b`` and the kink
  ``K = b/c`` are).

Each family is fitted to the same data (a profile grid — the scale solved in
closed form for each value of the other parameter — then the solver), and the
min-law fit is *interior*, its parameters identified, only when its cost is
below both families' by more than :data:`REL_TOL` (relative; and 1e-12 of
``½ Σ G²``, for data fitted exactly) and it did not
leave the solver's runoff box (``b`` past ``−min log M + 1000 (1 + range of
log M)``, :func:`runoff_box`); otherwise the lowest family says which
parameters are not identified.  Before, such fits
ran until the evaluation cap and their end points were reported as estimates.

**Identified on noisy data** (``lr_test=True``, the point estimates'
verdicts in :func:`rlscale.verification._law_models.fit_groups`).  On noisy data an attained
optimum is not enough: with ``G`` flat in ``M`` plus noise, about half the
noise draws trend up in ``M`` and the min law fits that trend with a finite
``b`` of hundreds or thousands, a hair below the plateau's cost.  The rule then
also asks that the limit be *rejected*: ``n log(F_limit/F_min) > χ²₁(0.95) =
3.841`` (:data:`CHI2_95`), the Gaussian likelihood-ratio statistic with the
noise variance profiled out (Wilks 1938; Venzon & Moolgavkar 1988 for
profile-likelihood intervals), i.e. the 95 % profile-likelihood interval of
the runaway parameter is bounded.  Otherwise the lower limit family says which
parameters are not identified, as above (the predictions stay the law's fit
where it is the lower: :meth:`MinLawFit.predict`).  The bootstrap refits keep
the attainment rule: each resample enters with its own best fit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlscale.verification._law_forms import FORMS
from rlscale.verification._law_solver import solve_batch

__all__: list[str] = []

#: A min-law fit is interior when its cost is below every boundary family's
#: by more than this fraction.
REL_TOL = 1e-6
#: χ²₁ 95 % quantile (``scipy.stats.chi2.ppf(0.95, 1)``): the likelihood-ratio test's cut.
CHI2_95 = 3.841458820694124
#: End points this close to a clamp corner (relative to ``1 + |b|``) are polished on it.
CORNER_TOL = 1e-4

#: Verdict codes of :func:`boundary_verdicts` and what each leaves unidentified.
VERDICTS = ("interior", "c_inf", "b_inf", "k_only", "flat")
_UNIDENTIFIED = {"interior": (), "c_inf": ("c",), "b_inf": ("a", "b", "c"),
                 "k_only": ("a", "b", "c"), "flat": ("a", "b", "c")}
REASONS = {
    "interior": "identified: the fit's cost is below every boundary family's",
    "c_inf": "c not identified: the best fit has c -> inf, or does not beat that limit at "
             "95 % (the kink lies beyond the largest K; every point is on the log M branch, "
             "so c has only a lower bound)",
    "b_inf": "a, b, c not identified: the best fit has b -> inf, or does not beat that limit "
             "at 95 % (G does not grow with M on these points; only the plateau a*sqrt(b) and "
             "the kink K = b/c are identified)",
    "k_only": "a, b, c not identified: the best fit has b -> inf with every point on the K "
              "branch (only a*sqrt(c) is identified)",
    "flat": "a, b, c not identified: the best fit is a constant (G grows with neither M "
            "nor K on these points)",
}


@dataclass(frozen=True)
class FormFit:
    """Best end point per data set: ``x (D, p)``, ``cost (D,)``, solver ``status (D,)``."""

    x: np.ndarray
    cost: np.ndarray
    status: np.ndarray


def fit_form(name: str, starts: np.ndarray, lm: np.ndarray, k: np.ndarray, Y: np.ndarray,
             W: np.ndarray | None = None, *, max_nfev: int = 4000) -> FormFit:
    """Fit form ``name`` to the rows of ``Y`` (``(D, n)``, weights ``W``) from ``starts``.

    ``starts`` is ``(S, p)`` (the same for every data set) or ``(D, S, p)``.

    Examples
    --------
    >>> from rlscale.verification._law_forms import STARTS, _law_min
    >>> lm, k = np.repeat(np.log([10.0, 1e3, 1e5]), 4), np.tile([0.1, 1.0, 5.0, 30.0], 3)
    >>> truth = np.array([0.2, -1.0, np.log(0.5)])
    >>> fit = fit_form("min", STARTS["min"], lm, k, _law_min(truth, lm, k)[None, :])
    >>> np.round(fit.x[0], 6).tolist(), bool(fit.cost[0] < 1e-20)
    ([0.2, -1.0, -0.693147], True)
    """
    Y = np.atleast_2d(np.asarray(Y, np.float64))
    D = len(Y)
    bad = ~np.isfinite(Y) & (True if W is None else np.asarray(W) != 0)
    if bad.any():
        d, j = (int(i[0]) for i in np.nonzero(bad))
        raise ValueError(f"Y must be finite where it is fitted; got {Y[d, j]} in data set {d}, "
                         f"point {j}")
    starts = np.asarray(starts, np.float64)
    if starts.ndim == 2:
        starts = np.broadcast_to(starts, (D, *starts.shape))
    S, p = starts.shape[1:]
    x0 = starts.reshape(D * S, p)
    y = np.repeat(Y, S, axis=0)
    w = None if W is None else np.repeat(np.asarray(W, np.float64), S, axis=0)
    box = runoff_box(name, lm, k)
    res = solve_batch(FORMS[name], x0, lm, k, y, w, runoff=box, max_nfev=max_nfev)
    x, cost, status = res.x, res.cost, res.status
    if name != "plateau":
        x, cost, status = _corner_polish(name, x, cost, status, lm, k, y, w, box, max_nfev)
    best = np.argmin(cost.reshape(D, S), axis=1) + S * np.arange(D)
    return FormFit(x[best], cost[best], status[best])


def _corner_polish(name, x, cost, status, lm, k, y, w, box, max_nfev):
    """Refit, with ``b`` fixed on it, every end point next to a clamp corner ``b = −lm_j``."""
    corners = -np.unique(lm)
    gap = np.abs(x[:, 1:2] - corners[None, :])
    j = np.argmin(gap, axis=1)
    near = np.flatnonzero(gap[np.arange(len(x)), j] < CORNER_TOL * (1.0 + np.abs(x[:, 1])))
    if near.size == 0:
        return x, cost, status
    x0 = x[near].copy()
    x0[:, 1] = corners[j[near]]
    free = np.ones(x0.shape[1], dtype=bool)
    free[1] = False
    pol = solve_batch(FORMS[name], x0, lm, k, y[near], None if w is None else w[near],
                      free=free, runoff=box, max_nfev=max_nfev)
    better = pol.cost < cost[near]
    x, cost, status = x.copy(), cost.copy(), status.copy()
    x[near[better]], cost[near[better]] = pol.x[better], pol.cost[better]
    status[near[better]] = pol.status[better]
    return x, cost, status


def _scale_profile(h: np.ndarray, Y: np.ndarray, W: np.ndarray):
    """Best scale ``s >= 0`` of ``s·h`` per grid row and data set: ``(D, G)`` scale, cost."""
    # einsum, not BLAS: a multi-threaded BLAS product is 10-30x slower on a loaded machine.
    num = np.einsum("dn,gn->dg", W * Y, h)
    den = np.einsum("dn,gn->dg", W, h * h)
    s = np.where(den > 0, np.maximum(num, 0.0) / np.where(den > 0, den, 1.0), 0.0)
    yy = np.einsum("dn,dn->d", W * Y, Y)
    return s, 0.5 * (yy[:, None] - 2.0 * s * num + s * s * den)


def profile_start(name: str, lm: np.ndarray, k: np.ndarray, Y: np.ndarray,
                  W: np.ndarray) -> np.ndarray:
    """A start per data set from a profile grid: ``(D, p)``.

    ``sqrt_logm`` over a grid of ``b``, ``plateau`` over ``log C`` (the kinks
    ``C = 1/K`` and the midpoints between them) and ``min``
    over ``b`` × ``log c`` (``c`` placing the kink ``K = (log M + b)/c`` at the
    largest ``log M`` across and beyond the observed ``K``); for each grid point
    the scale (``a`` or ``A``) is solved in closed form, and each data set's
    best grid point is its start.
    """
    lo, hi = float(lm.min()), float(lm.max())
    b_grid = np.concatenate([-lo - (hi - lo) * np.array([0.9, 0.7, 0.5, 0.3, 0.1]),
                             -lo + np.geomspace(1e-3, 1e4, 40)])
    logk = np.log(k)
    if name == "sqrt_logm":
        grid = b_grid[:, None]
        h = np.sqrt(np.maximum(lm[None, :] + b_grid[:, None], 0.0))
    elif name == "plateau":
        # The kinks C = 1/K_j (at most 64 of them) and the midpoints between them, where
        # the cost is smooth in log C: a start on a flat stretch would not move.
        u = np.unique(logk)
        u = np.quantile(u, np.linspace(0.0, 1.0, 64)) if u.size > 64 else u
        grid = -np.concatenate([u, 0.5 * (u[:-1] + u[1:]), u[0] - np.array([0.5, 1.5, 3.0]),
                                u[-1] + np.array([0.5, 1.5, 3.0])])[:, None]
        h = np.exp(0.5 * np.minimum(grid + logk[None, :], 0.0))
    else:
        bs = np.concatenate([b_grid[:5:2], b_grid[5::5]])
        kink = np.linspace(logk.min() - 1.0, logk.max() + 1.0, 12)
        bb, kk = np.repeat(bs, kink.size), np.tile(kink, bs.size)
        grid = np.column_stack([bb, np.log(np.maximum(hi + bb, 1e-3)) - kk])
        u = np.minimum(lm[None, :] + grid[:, :1], np.exp(grid[:, 1:] + logk[None, :]))
        h = np.sqrt(np.maximum(u, 0.0))
    sc, cost = _scale_profile(h, Y, W)
    best = np.argmin(cost, axis=1)
    scale = sc[np.arange(len(Y)), best]
    tiny = 1e-8 * (np.max(np.abs(Y), axis=1) + 1e-300)
    return np.column_stack([np.log(np.maximum(scale, tiny)), grid[best]])


def runoff_box(name: str, lm: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where a fit of ``name`` is running off to the form's limit: a stop box for the solver.

    ``b`` of the min law and of ``a√(log M + b)`` beyond ``−min log M + 1000 (1
    + range of log M)``: ``√(log M + b)`` then varies by less than 0.05 % over
    the data, the form is its ``b → ∞`` limit to that precision (interior
    optima of the trainer's groups sit at ``b <= 100``, 2–10 % below the
    limit's cost), and the limit (the plateau, a constant) stands for the fit
    where it is lower; ``log C`` below ``−log max K − 30`` for the plateau (its
    ``√K`` limit).  The smooth min has no box: it runs to ``max_nfev``.
    """
    p = {"min": 3, "smooth": 4, "sqrt_logm": 2, "plateau": 2}[name]
    lo, hi = np.full(p, -np.inf), np.full(p, np.inf)
    if name == "plateau":
        lo[1] = -float(np.log(k).max()) - 30.0
    elif name in ("min", "sqrt_logm"):
        hi[1] = -float(lm.min()) + 1e3 * (1.0 + float(np.ptp(lm)))
    return lo, hi


def closed_limits(k: np.ndarray, Y: np.ndarray, W: np.ndarray) -> tuple[np.ndarray, ...]:
    """The plateau's limits ``a√K`` and a constant, fitted in closed form: ``(D,)`` arrays
    of their coefficients and costs, ``(a, cost_a, mean, cost_mean)``."""
    rk = np.sqrt(k)
    den = np.einsum("dn,n->d", W, k)
    a = np.einsum("dn,n->d", W * Y, rk) / np.where(den > 0, den, 1.0)
    r_k = a[:, None] * rk[None, :] - Y
    mean = np.einsum("dn,dn->d", W, Y) / np.maximum(W.sum(axis=1), 1e-300)
    r_c = Y - mean[:, None]
    return (a, 0.5 * np.einsum("dn,dn->d", W * r_k, r_k), mean,
            0.5 * np.einsum("dn,dn->d", W * r_c, r_c))


def boundary_verdicts(f_min: np.ndarray, f_logm: np.ndarray, f_plateau: np.ndarray,
                      f_sqrt_k: np.ndarray, f_const: np.ndarray,
                      ran_off: np.ndarray | None = None,
                      floor: np.ndarray | None = None,
                      n_points: np.ndarray | None = None) -> list[str]:
    """Per data set, a code of :data:`VERDICTS` from the costs of the min law and its limits.

    ``ran_off``: the min-law fits that left the solver's runoff box (``b`` past
    its bound, status 5) are never interior, whatever the costs.  ``floor``:
    cost differences below it are ties (rounding on data fitted exactly).
    ``n_points``: the points of each data set; given, an interior fit must also
    reject the lower limit, ``n log(F_limit/F_min) > CHI2_95`` (module docstring).

    Examples
    --------
    >>> boundary_verdicts(np.array([1.0, 2.0]), np.array([3.0, 2.0]), np.array([3.0, 4.0]),
    ...                   np.array([5.0, 5.0]), np.array([6.0, 6.0]))
    ['interior', 'c_inf']
    """
    out = []
    ran_off = np.zeros(len(f_min), bool) if ran_off is None else ran_off
    floor = np.zeros(len(f_min)) if floor is None else floor
    lr = np.full(len(f_min), np.inf) if n_points is None else np.asarray(n_points, float)
    for fm, f1, fp, fk, fc, off, fl, n in zip(f_min, f_logm, f_plateau, f_sqrt_k, f_const,
                                              ran_off, floor, lr):
        f2 = min(fp, fk, fc)
        if off:
            out.append("flat" if fc <= fp and fc <= fk else "k_only" if fk <= fp else "b_inf")
        elif fm < (1.0 - REL_TOL) * min(f1, f2) - fl and (
                n == np.inf or fm <= 0.0 or n * np.log(min(f1, f2) / fm) > CHI2_95):
            out.append("interior")
        elif f2 <= f1 * (1.0 + REL_TOL):  # b -> inf: which of the plateau's limits
            tol = f2 * (1.0 + REL_TOL)
            out.append("flat" if fc <= tol else "k_only" if fk <= tol else "b_inf")
        else:
            out.append("c_inf")
    return out


def identified(verdict: str) -> dict[str, bool]:
    """``{"a": .., "b": .., "c": ..}``: which parameters a verdict leaves identified."""
    return {name: name not in _UNIDENTIFIED[verdict] for name in "abc"}


@dataclass(frozen=True)
class MinLawFit:
    """The min law's best fit per data set, its verdict and its limits' fits.

    ``x, cost, status``: the min law's end points; ``verdicts``: codes of
    :data:`VERDICTS`; ``logm`` ``(D, 2)``, ``plateau`` ``(D, 2)``, ``sqrt_k``
    and ``const`` ``(D,)``: the fitted limits.  :meth:`predict` predicts with
    the law's best fit: its limit where the verdict names one and the limit's
    cost is the lower.
    """

    x: np.ndarray
    cost: np.ndarray
    status: np.ndarray
    verdicts: list[str]
    logm: FormFit
    plateau: FormFit
    sqrt_k: np.ndarray
    const: np.ndarray
    const_cost: np.ndarray
    limit_cost: np.ndarray

    def predict(self, d: int, lm: np.ndarray, k: np.ndarray) -> np.ndarray:
        """Predictions of data set ``d``'s best fit at ``(lm, k)`` (1-d arrays)."""
        verdict = self.verdicts[d]
        if verdict == "interior" or self.cost[d] <= self.limit_cost[d]:
            form, p = "min", self.x[d]
        elif verdict == "c_inf":
            form, p = "sqrt_logm", self.logm.x[d]
        elif verdict == "b_inf":
            form, p = "plateau", self.plateau.x[d]
        elif verdict == "k_only":
            return self.sqrt_k[d] * np.sqrt(k)
        else:
            return np.full(np.shape(k), self.const[d])
        return FORMS[form](np.asarray(p, float)[None, :], np.asarray(lm, float),
                           np.asarray(k, float), False)[0][0]


def min_law_closure(lm: np.ndarray, k: np.ndarray, Y: np.ndarray, W: np.ndarray,
                    fit: FormFit, *, logm: FormFit | None = None,
                    plateau_x: np.ndarray | None = None, max_nfev: int = 4000,
                    lr_test: bool = False) -> MinLawFit:
    """The verdicts of min-law fits ``fit`` to the rows of ``Y``, with the limits fitted.

    ``logm`` (the ``a√(log M + b)`` fits, if already made) and ``plateau_x``
    (``(D, 2)`` extra starts for the plateau) are optional.  ``lr_test``: an
    interior verdict must also reject the lower limit by the likelihood-ratio
    test (module docstring), on the points of ``W``.
    """
    if logm is None:
        logm = fit_form("sqrt_logm", profile_start("sqrt_logm", lm, k, Y, W)[:, None, :], lm, k,
                        Y, W, max_nfev=max_nfev)
    starts = profile_start("plateau", lm, k, Y, W)[:, None, :]
    if plateau_x is not None:
        starts = np.concatenate([starts, np.asarray(plateau_x)[:, None, :]], axis=1)
    plateau = fit_form("plateau", starts, lm, k, Y, W, max_nfev=max_nfev)
    a_k, f_k, mean, f_c = closed_limits(k, Y, W)
    floor = 1e-12 * 0.5 * np.einsum("dn,dn->d", W * Y, Y)  # of the data's own scale
    verdicts = boundary_verdicts(fit.cost, logm.cost, plateau.cost, f_k, f_c, fit.status == 5,
                                 floor, np.count_nonzero(W, axis=1) if lr_test else None)
    by = {"interior": fit.cost, "c_inf": logm.cost, "b_inf": plateau.cost, "k_only": f_k,
          "flat": f_c}
    limit_cost = np.array([by[v][d] for d, v in enumerate(verdicts)])
    return MinLawFit(fit.x, fit.cost, fit.status, verdicts, logm, plateau, a_k, mean, f_c,
                     limit_cost)


def limits(verdict: str, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b, c)`` of a fit for the lower and the upper end of an interval.

    Interior fits give their values; a parameter that runs off gives its limit
    (``c → ∞``; ``a → 0``, ``b, c → ∞``); one left free on a ridge
    (``k_only``: ``a``, ``c``) gives ``−∞`` to the lower end and ``+∞`` to the
    upper, so an interval over resamples is never narrower than the data allow.
    """
    lo, hi = np.array(value, float), np.array(value, float)
    inf = np.inf
    if verdict == "c_inf":
        lo[2] = hi[2] = inf
    elif verdict in ("b_inf", "flat"):
        lo[0] = hi[0] = 0.0
        lo[1:] = hi[1:] = inf
    elif verdict == "k_only":
        lo[1] = hi[1] = inf
        lo[[0, 2]], hi[[0, 2]] = -inf, inf
    return lo, hi


def percentile_interval(lo_values: np.ndarray, hi_values: np.ndarray, q_lo: float = 2.5,
                        q_hi: float = 97.5) -> list[float | None]:
    """numpy's linear-interpolation percentiles, ``None`` where an end is infinite.

    Examples
    --------
    >>> percentile_interval(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0]), 0, 100)
    [1.0, 3.0]
    >>> percentile_interval(np.array([1.0, 2.0, np.inf]), np.array([1.0, 2.0, np.inf]), 0, 50)
    [1.0, 2.0]
    >>> percentile_interval(np.array([1.0, 2.0, np.inf]), np.array([1.0, 2.0, np.inf]))
    [1.05, None]
    """
    out: list[float | None] = []
    for values, q in ((lo_values, q_lo), (hi_values, q_hi)):
        v = np.sort(np.asarray(values, float))
        h = q / 100.0 * (v.size - 1)  # the order statistics the interpolation uses
        i = int(np.floor(h))
        ends = v[i:i + 2] if h > i else v[i:i + 1]
        if not np.all(np.isfinite(ends)):
            out.append(None)
            continue
        fin = v[np.isfinite(v)]  # unused infinite ends -> finite extremes: same order
        out.append(float(np.percentile(np.clip(v, fin[0], fin[-1]), q)))
    return out


def bootstrap_min_law(lm: np.ndarray, k: np.ndarray, Yb: np.ndarray, p0: np.ndarray,
                      logm0: np.ndarray, plateau0: np.ndarray, *, max_nfev: int = 4000,
                      ) -> tuple[np.ndarray, list[str]]:
    """Refit the min law to bootstrap targets ``Yb`` (``(R, n)``) from the point estimates.

    ``p0`` ``(3,)`` or ``(R, 3)``, ``logm0`` and ``plateau0`` ``(2,)`` or ``(R, 2)``: the
    point estimates of each resample's data set (several data sets can share a call).

    All resamples in one batched solve from ``p0`` and a profile-grid start
    each; the boundary families from their point estimates (``logm0``,
    ``plateau0``) and a profile-grid start each.  Returns the ``(R, 3)`` end
    points and each resample's verdict.
    """
    Yb = np.asarray(Yb, np.float64)
    R = len(Yb)
    W = np.ones_like(Yb)
    starts = np.stack([np.broadcast_to(p0, (R, 3)), profile_start("min", lm, k, Yb, W)], axis=1)
    fit = fit_form("min", starts, lm, k, Yb, W, max_nfev=max_nfev)
    starts = np.stack([profile_start("sqrt_logm", lm, k, Yb, W),
                       np.broadcast_to(logm0, (R, 2))], axis=1)
    logm = fit_form("sqrt_logm", starts, lm, k, Yb, W, max_nfev=max_nfev)
    law = min_law_closure(lm, k, Yb, W, fit, logm=logm,
                          plateau_x=np.broadcast_to(plateau0, (R, 2)), max_nfev=max_nfev)
    return fit.x, law.verdicts
