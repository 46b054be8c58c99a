"""The budgeted design relaxation by spectral projected gradient (no conic solver).

The relaxation of :mod:`rlscale.optimize._design_relax` maximises a concave,
smooth utility ``Φ(w)`` (D or V, :mod:`rlscale.optimize._design_criteria`)
over ``{0 ≤ w ≤ u, cᵀw ≤ B}``.  In budget shares ``v_i = c_i w_i / B`` the
set is the capped simplex ``{0 ≤ v_i ≤ c_i u_i / B, Σ v_i ≤ 1}``; both
utilities are non-decreasing in ``w`` (their gradients are ``≥ 0``), so
unless every capped candidate fits, the budget binds and ``Σ v_i = 1``.

The method is the nonmonotone spectral projected gradient of Birgin, Martínez
& Raydan (2000, *SIAM J. Optim.* 10(4), 1196–1211, algorithm SPG2): a
Barzilai–Borwein step, the projection onto the capped simplex, and an Armijo
search against the largest of the last :data:`MEMORY` utilities.  The
projection is ``clip(y − τ, 0, ū)`` with ``τ`` the root of the monotone
``Σ clip(y − τ, 0, ū) = 1`` (the continuous quadratic knapsack; bisection,
then ``τ`` solved exactly on the free set, Kiwiel 2008, *J. Optim. Theory
Appl.* 136, 445–458).

Each iteration costs one information matrix and one gradient, ``O(S n m p²)``,
against the conic path's interior-point system that couples every weight with
every law's cone.  Convergence is not taken on trust: every
:data:`CHECK_EVERY` iterations the Frank–Wolfe gap (the exact fractional
knapsack over the whole pool) bounds the distance to the optimum, and the
iteration stops once it certifies efficiency ``>= 1 − tol``; for D the
Kiefer–Wolfowitz ratio (Kiefer & Wolfowitz 1960; with costs, Fedorov 1972
§2.8) is reported from the same gradient by the caller's certificate.
"""

from __future__ import annotations

import math

import numpy as np

from rlscale.optimize._design_criteria import Information, knapsack_max

__all__ = ["project_capped_simplex", "spg"]

#: Utilities remembered by the nonmonotone line search (BMR 2000 use 10).
MEMORY = 10
#: Iterations between Frank–Wolfe certificates.
CHECK_EVERY = 10
#: Iteration limit (the 3,000-candidate, 7-parameter problems certify in 20–160).
MAX_ITER = 5000
#: Sufficient-increase constant of the Armijo search.
ARMIJO = 1e-4


def project_capped_simplex(y: np.ndarray, ub: np.ndarray) -> np.ndarray:
    """Euclidean projection of ``y`` onto ``{0 ≤ v ≤ ub, Σ v = 1}`` (needs ``Σ ub ≥ 1``).

    Examples
    --------
    >>> v = project_capped_simplex(np.array([0.9, 0.9, 0.0]), np.array([1.0, 0.3, 1.0]))
    >>> v.round(12).tolist()
    [0.7, 0.3, 0.0]
    """
    lo, hi = float(np.min(y - ub)), float(np.max(y))  # the sum is Σub at lo, 0 at hi
    for _ in range(200):
        t = 0.5 * (lo + hi)
        if np.clip(y - t, 0.0, ub).sum() > 1.0:
            lo = t
        else:
            hi = t
        if hi - lo <= 1e-14 * max(1.0, abs(t)):
            break
    v = np.clip(y - 0.5 * (lo + hi), 0.0, ub)
    free = (v > 0) & (v < ub)
    if free.any():  # τ exactly, on the free set the bisection found
        t = (y[free].sum() + ub[v >= ub].sum() - 1.0) / free.sum()
        v = np.clip(y - t, 0.0, ub)
    return v


class _Objective:
    """``Φ`` and its gradient in budget shares (``∂Φ/∂v_i = ∂Φ/∂w_i · B/c_i``)."""

    def __init__(self, info: Information, kind: str, scale: np.ndarray):
        self.info, self.kind, self.scale = info, kind, scale

    def __call__(self, v: np.ndarray, grad: bool = True) -> tuple[float, np.ndarray | None]:
        info = self.info
        M = info.matrix(v / self.scale)
        if self.kind == "D":
            sign, logdet = np.linalg.slogdet(M)
            if np.any(sign <= 0) or not np.all(np.isfinite(logdet)):
                return -math.inf, None
            f = float(np.mean(logdet))
        try:
            P = Information.inverse(M)
        except np.linalg.LinAlgError:
            return -math.inf, None
        if self.kind != "D":
            f = -float(np.mean(np.einsum("spq,sqp->s", info.A, P)))
        if not grad:
            return f, None
        Y = P if self.kind == "D" else P @ info.A @ P
        g = info.quadratic(Y) / (info.S * self.scale)
        return f, g


def _efficiency(kind: str, f: float, gap: float, p: int) -> float:
    if kind == "D":
        return math.exp(-gap / p)
    return max(-f - gap, 0.0) / -f if f < 0 else 1.0


def spg(info: Information, kind: str, cost: np.ndarray, cap: np.ndarray, budget: float,
        tol: float = 1e-5) -> tuple[np.ndarray, int, str]:
    """Fractional optimum of the budgeted relaxation: ``(w, iterations, how it stopped)``.

    ``tol`` is the efficiency loss the Frank–Wolfe gap must certify (the
    caller recomputes the certificate on the returned weights).
    """
    n = info.n
    scale = cost / budget
    ub = scale * cap
    if ub.sum() <= 1.0:  # every candidate at its cap fits: the monotone optimum is all of it
        return cap.astype(float), 0, "every candidate fits at its cap"
    obj = _Objective(info, kind, scale)
    ones = np.ones(n)
    v = project_capped_simplex(np.minimum(ub, 1.0 / n), ub)  # the budget spread evenly
    f, g = obj(v)
    if not math.isfinite(f):
        return v / scale, 0, "the starting design has a singular information matrix"
    history = [f]
    step = 1.0 / max(float(np.max(np.abs(g))), 1e-300)
    how = f"iteration limit {MAX_ITER}"
    it = 0
    for it in range(1, MAX_ITER + 1):
        d = project_capped_simplex(v + step * g, ub) - v
        slope = float(g @ d)
        if slope <= 0.0:  # projected gradient vanishes: stationary, hence optimal
            how = "stationary"
            break
        ref = max(history[-MEMORY:])
        t = 1.0
        while True:
            trial = v + t * d
            ft, _ = obj(trial, grad=False)
            if ft >= ref + ARMIJO * t * slope:
                break
            t *= 0.5
            if t < 1e-14:
                break
        if t < 1e-14:
            how = "the line search found no increase (at the precision of float64)"
            break
        ft, gt = obj(trial)
        s, y = trial - v, gt - g
        sy = float(s @ y)  # < 0 for a concave Φ; the BB step is ‖s‖²/(−sᵀy)
        step = float(s @ s) / -sy if sy < 0 else 1e3 * step
        step = min(max(step, 1e-30), 1e30)
        v, f, g = trial, ft, gt
        history.append(f)
        if it % CHECK_EVERY == 0:
            gp = np.maximum(g, 0.0)
            gap = max(knapsack_max(gp, ones, ub, 1.0) - float(gp @ v), 0.0)
            if _efficiency(kind, f, gap, info.p) >= 1.0 - tol:
                how = "certified"
                break
    return np.minimum(v / scale, cap), it, how
