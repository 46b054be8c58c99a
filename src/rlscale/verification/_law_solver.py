"""Batched trust-region Levenberg–Marquardt least squares for the reward-law fits.

The reward-law verifications fit the same few law forms many times on one
design ``(log M, K)``: several starts × {the train split, all points, the
leave-one-regime-out subsets} and, in the trainer, bootstrap resamples that
change only the targets.  :func:`solve_batch` fits ``B`` such problems at once,
vectorised over the problems with numpy: parameters ``(B, p)``, targets
``(B, n)`` and 0/1 weights ``(B, n)`` (a subset is a mask of the shared design).

**Method.**  The Levenberg–Marquardt method in its trust-region form (Moré
1978, "The Levenberg–Marquardt algorithm: implementation and theory", *Lecture
Notes in Mathematics* 630; Nocedal & Wright 2006, *Numerical Optimization*,
§10.3), step by step the algorithm of scipy's ``least_squares(method="trf")``
without bounds (its ``trf_no_bounds`` with the exact subproblem solver), so
that from the same start it follows scipy's path to rounding:

* per problem a trust radius ``Δ`` (initially ``‖x0‖``, or 1) and a damping
  ``α``; from the thin SVD ``J = U S Vᵀ`` of the Jacobian, the Gauss–Newton
  step when ``J`` has full rank and the step lies within ``Δ``, otherwise
  ``p(α) = −V (S Uᵀr)/(S² + α)`` with ``α`` found by Moré's safeguarded
  Newton iteration on ``‖p(α)‖ = Δ`` (at most 10 iterations, 1 % tolerance),
  i.e. ``(JᵀJ + αI) p = −Jᵀr``;
* the ratio ``ρ`` of actual to predicted reduction updates ``Δ``
  (``Δ ← ‖p‖/4`` when ``ρ < 1/4``, ``Δ ← 2Δ`` when ``ρ > 3/4`` on the
  boundary); a step is accepted when the cost decreases; a trial with a
  non-finite residual is rejected with ``Δ ← ‖p‖/4``, so no returned
  parameter or cost is NaN;
* each problem stops on its own, with scipy's rules and defaults: ``gtol``,
  ``‖Jᵀr‖∞ < gtol`` (status 1); ``ftol``, a reduction below ``ftol·F`` with
  ``ρ > 1/4`` (status 2); ``xtol``, ``‖p‖ < xtol (xtol + ‖x‖)`` (status 3; 4
  with ``ftol`` too); ``max_nfev`` evaluations, the start's included (status 0).

Each pass of the loop makes one trial per unfinished problem; a problem's SVD
is recomputed only when its step is accepted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["BatchResult", "solve_batch"]

#: (P (B, p), lm (n,), k (n,)) -> (f (B, n), J (B, n, p)).
Model = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class BatchResult:
    """Outcome of :func:`solve_batch`, one row per problem.

    Attributes
    ----------
    x : (B, p) array
        End points.
    cost : (B,) array
        ``½ Σ w (f(x) − y)²`` at ``x``.
    nfev : (B,) int array
        Function evaluations, the start's included.
    status : (B,) int array
        scipy's codes: 0 evaluation cap, 1 ``gtol``, 2 ``ftol``, 3 ``xtol``,
        4 ``ftol`` and ``xtol``; and 5, left the ``runoff`` box.
    """

    x: np.ndarray
    cost: np.ndarray
    nfev: np.ndarray
    status: np.ndarray

    @property
    def converged(self) -> np.ndarray:
        """``1 <= status <= 4``: stopped by a tolerance (not the cap, not running off)."""
        return (self.status >= 1) & (self.status <= 4)


def solve_batch(model: Model, x0: np.ndarray, lm: np.ndarray, k: np.ndarray, y: np.ndarray,
                w: np.ndarray | None = None, *, free: np.ndarray | None = None,
                runoff: tuple[np.ndarray, np.ndarray] | None = None, max_nfev: int = 4000,
                ftol: float = 1e-8, xtol: float = 1e-8, gtol: float = 1e-8) -> BatchResult:
    """Minimise ``½ Σ w (model(x) − y)²`` for ``B`` problems on one design at once.

    Parameters
    ----------
    model : callable
        ``model(P, lm, k) -> (f, J)``: values ``(B, n)`` and Jacobian
        ``(B, n, p)`` for parameters ``P`` of shape ``(B, p)`` (a writeable
        ``J`` is weighted in place: return a fresh array).
    x0 : (B, p) array
        Starts (finite residuals required).
    lm, k : (n,) arrays
        The shared design (``log M``, ``K``).
    y : (B, n) array
        Targets, finite where the weights keep them (``ValueError`` otherwise).
    w : (B, n) array of 0/1, optional
        Weights (masks: a zero drops the point from that problem).
    free : (p,) bool array, optional
        Parameters to fit, the same for every problem; the others stay at their
        start (default: all free).
    runoff : pair of (p,) arrays, optional
        Lower and upper bounds; a problem whose accepted point leaves them stops
        there (status 5).  Not a constraint: the step is not projected.
    max_nfev, ftol, xtol, gtol
        Stopping rules (module docstring), scipy's defaults.

    Returns
    -------
    BatchResult

    Examples
    --------
    A straight line ``y = p0 + p1·lm`` fitted to two targets at once, the
    second on its first three points only:

    >>> def line(P, lm, k):
    ...     J = np.stack([np.ones((len(P), lm.size)), np.broadcast_to(lm, (len(P), lm.size))],
    ...                  axis=2)
    ...     return P[:, :1] + P[:, 1:] * lm, J
    >>> lm = np.arange(4.0)
    >>> y = np.array([1.0 + 2.0 * lm, [0.0, 1.0, 2.0, 9.0]])
    >>> w = np.array([[1, 1, 1, 1], [1, 1, 1, 0]])
    >>> res = solve_batch(line, np.zeros((2, 2)), lm, lm, y, w)
    >>> (np.round(res.x, 6) + 0.0).tolist(), res.converged.tolist()
    ([[1.0, 2.0], [0.0, 1.0]], [True, True])
    """
    x = np.array(x0, dtype=np.float64)
    p = x.shape[1]
    y = np.asarray(y, dtype=np.float64)
    sw = None if w is None else np.asarray(w, dtype=np.float64)
    free = np.ones(p, dtype=bool) if free is None else np.asarray(free, dtype=bool)
    box = (np.full(p, -np.inf), np.full(p, np.inf)) if runoff is None else runoff
    bad = ~np.isfinite(y)
    if bad.any():  # a target the weights drop does not count; one they keep is an error
        if sw is not None:
            y = np.where(sw == 0, 0.0, y)
            bad &= sw != 0
        if bad.any():
            b, j = (int(i[0]) for i in np.nonzero(bad))
            raise ValueError(f"y must be finite where it is fitted; got {y[b, j]} at row {b}, "
                             f"point {j}")
    # No BLAS thread limit is needed for the same bits in every process: einsum
    # does not call BLAS, and the SVDs of (n, p <= 4) matrices run single-threaded.
    with np.errstate(all="ignore"):
        return _solve(model, x, np.asarray(lm, np.float64), np.asarray(k, np.float64), y, sw,
                      free, box, int(max_nfev), float(ftol), float(xtol), float(gtol))


_EPS = np.finfo(float).eps


def _evaluate(model, x, lm, k, y, sw, free):
    """Weighted residuals, the Jacobian's free columns and the cost at rows ``x``."""
    f, J = model(x, lm, k)
    r = f - y
    if not free.all():
        J = J[:, :, free]
    if sw is not None:
        r *= sw
        if J.flags.writeable:  # the model's own fresh array: scaled in place
            J *= sw[:, :, None]
        else:
            J = J * sw[:, :, None]
    return r, J, 0.5 * np.einsum("bn,bn->b", r, r)


def _factor(r, J):
    """Thin SVD pieces of the subproblem: singular values, V, Uᵀr, and the gradient Jᵀr."""
    U, s, Vt = np.linalg.svd(J, full_matrices=False)
    return s, Vt.transpose(0, 2, 1), np.einsum("bnp,bn->bp", U, r), np.einsum("bnp,bn->bp", J, r)


def _norm(v):
    return np.sqrt(np.einsum("bp,bp->b", v, v))


def _phi(alpha, suf, s2, delta):
    """``‖p(α)‖ − Δ`` and its derivative in ``α`` (Moré 1978)."""
    q = suf / (s2 + alpha[:, None])
    p_norm = _norm(q)
    return p_norm - delta, -np.einsum("bp,bp->b", q * q, 1.0 / (s2 + alpha[:, None])) / p_norm


def _tr_step(s, V, uf, delta, alpha, m):
    """The trust-region subproblem's step and ``α`` for every row (scipy's
    ``solve_lsq_trust_region``, vectorised; rows that converge stop updating)."""
    suf = s * uf
    s2 = s * s
    full = (m >= s.shape[1]) & (s[:, -1] > _EPS * m * s[:, 0])
    gn = -np.einsum("bpq,bq->bp", V, uf / np.where(full[:, None], s, 1.0))
    use_gn = full & (_norm(gn) <= delta)
    if use_gn.all():
        return gn, np.zeros_like(alpha)
    rows = np.flatnonzero(~use_gn)  # the damped rows only, from here on
    sf, s2, dl, fl = suf[rows], s2[rows], delta[rows], full[rows]
    upper = _norm(sf) / dl
    phi0, dphi0 = _phi(np.zeros(rows.size), sf, s2, dl)
    lower = np.where(fl, -phi0 / dphi0, 0.0)
    al = alpha[rows]
    al = np.where(~fl & (al == 0), np.maximum(1e-3 * upper, np.sqrt(lower * upper)), al)
    todo = np.ones(rows.size, dtype=bool)
    for _ in range(10):
        out = todo & ((al < lower) | (al > upper))
        if out.any():
            al = np.where(out, np.maximum(1e-3 * upper, np.sqrt(lower * upper)), al)
        phi, dphi = _phi(al, sf, s2, dl)
        upper = np.where(todo & (phi < 0), al, upper)
        ratio = phi / dphi
        lower = np.where(todo, np.maximum(lower, al - ratio), lower)
        al = np.where(todo, al - (phi + dl) * ratio / dl, al)
        todo &= np.abs(phi) >= 0.01 * dl
        if not todo.any():
            break
    step = -np.einsum("bpq,bq->bp", V[rows], sf / (s2 + al[:, None]))
    norm = _norm(step)
    gn[rows] = step * (dl / np.where(norm > 0, norm, 1.0))[:, None]
    out_alpha = np.zeros_like(alpha)
    out_alpha[rows] = al
    return gn, out_alpha


def _solve(model, x, lm, k, y, sw, free, box, max_nfev, ftol, xtol, gtol) -> BatchResult:
    B = len(x)
    r, J, cost = _evaluate(model, x, lm, k, y, sw, free)
    if not np.all(np.isfinite(cost)):  # a start outside the model's domain
        raise ValueError(f"x0 must give finite residuals; got a non-finite cost at row "
                         f"{int(np.flatnonzero(~np.isfinite(cost))[0])}")
    s, V, uf, g = _factor(r, J)
    m = np.full(B, r.shape[1]) if sw is None else np.count_nonzero(sw, axis=1)
    delta = _norm(x[:, free])
    delta[delta == 0] = 1.0
    alpha = np.zeros(B)
    nfev = np.ones(B, dtype=np.int64)
    status = np.full(B, -1, dtype=np.int64)
    status[np.max(np.abs(g), axis=1) < gtol] = 1
    status[(status < 0) & (nfev >= max_nfev)] = 0
    active = np.flatnonzero(status < 0)
    while active.size:
        step, al = _tr_step(s[active], V[active], uf[active], delta[active], alpha[active],
                            m[active])
        xa, ca, d = x[active], cost[active], delta[active]
        trial = xa.copy()
        trial[:, free] += step
        rt, Jt, ct = _evaluate(model, trial, lm, k, y[active],
                               None if sw is None else sw[active], free)
        nfev[active] += 1
        sv = np.einsum("bpq,bp->bq", V[active], step) * s[active]  # J p in U's basis
        predicted = -(0.5 * np.einsum("bp,bp->b", sv, sv) + np.einsum("bp,bp->b", g[active],
                                                                          step))
        step_norm = _norm(step)
        finite = np.isfinite(ct)
        reduction = np.where(finite, ca - ct, -1.0)
        ratio = np.where(predicted > 0, reduction / np.where(predicted > 0, predicted, 1.0),
                         np.where((predicted == 0) & (reduction == 0), 1.0, 0.0))
        d_new = np.where(ratio < 0.25, 0.25 * step_norm,
                         np.where((ratio > 0.75) & (step_norm > 0.95 * d), 2.0 * d, d))
        f_ok = (reduction < ftol * ca) & (ratio > 0.25)
        x_ok = step_norm < xtol * (xtol + _norm(xa[:, free]))
        code = np.where(f_ok & x_ok, 4, np.where(f_ok, 2, np.where(x_ok, 3, -1)))
        code[~finite] = -1
        # Non-finite trial: shrink; stopped: keep alpha and delta; else scipy's updates.
        cont = finite & (code < 0)
        alpha[active] = np.where(cont, al * d / np.where(d_new > 0, d_new, 1.0), al)
        delta[active] = np.where(finite, np.where(cont, d_new, d), 0.25 * step_norm)
        acc = finite & (reduction > 0)
        if acc.any():
            rows = active[acc]
            x[rows], r[rows], J[rows], cost[rows] = trial[acc], rt[acc], Jt[acc], ct[acc]
            s[rows], V[rows], uf[rows], g[rows] = _factor(rt[acc], Jt[acc])
            code[acc] = np.where(np.max(np.abs(g[rows]), axis=1) < gtol, 1, code[acc])
            xr = x[rows]
            gone = np.any((xr < box[0]) | (xr > box[1]), axis=1)
            code[acc] = np.where(gone & (code[acc] < 0), 5, code[acc])
        code[(code < 0) & (nfev[active] >= max_nfev)] = 0
        status[active] = code
        active = active[code < 0]
    return BatchResult(x, cost, nfev, status)
