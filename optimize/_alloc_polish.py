"""Polishing a conic solver's point to KKT accuracy, and the SLSQP rescue.

A conic solver stops at ~1e-8; the allocation is then *polished*: the active
set is guessed by snapping coordinates near a bound onto it (at a few
tolerances, since a conic solver leaves a nearly-degenerate bound up to ~1e-4
away), and the KKT equations of that active set,

    grad f(p)_free + lam * grad g(p)_free = 0,   g(p) = 0,

are solved by Newton's method.  In log space the Hessians are exact
(:class:`~._alloc_space.LogSpace`), so each step solves the bordered system
``[[H_f + lam H_g, grad g], [grad g^T, 0]] [dp, dlam] = -[r, g]`` (Nocedal &
Wright 2006, §18.1, Newton's method on the Lagrangian); it converges
quadratically from the conic point.  Without Hessians (the count space of
synthetic data) scipy's ``hybr`` solves the same equations.  A candidate is
kept only when it lowers the KKT residual, so polishing never makes a point
worse.

When polishing leaves the residual above 1e-9 (a conic solver can stop short
on flat directions, e.g. two synthetic sources of nearly equal price), an
active-set SQP (scipy SLSQP) from the point, then the polish again, finishes
the job if it improves the KKT check.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["polish", "rescue"]

SpaceFactory = Callable[[dict[str, float]], Any]


def polish(space_at: SpaceFactory, values: dict[str, float]) -> tuple[dict[str, float], bool]:
    """Newton on the active-set KKT equations; kept only if it lowers the residual.

    ``space_at(values)`` builds the coordinates at a point (see
    :mod:`._alloc_space`).  Returns the best point and whether it moved.
    """
    before, _ = space_at(values).kkt(values)
    best, best_res = values, before
    tried: set[frozenset[int]] = set()
    for j, tol in enumerate((1e-4, 1e-2, 0.0)):
        # The first guess always runs: a point 1e-8 off its bound can have a
        # tiny residual yet a loss off in the eighth digit.
        if j > 0 and best_res < 1e-13:
            break
        cand = _newton(space_at(values), values, tol, tried)
        if cand is None:
            continue
        res, _ = space_at(cand).kkt(cand)
        if res <= max(best_res, 1e-14):
            best, best_res = cand, res
    return best, best is not values


def _active_set(space: Any, p0: np.ndarray, tol: float) -> dict[int, float]:
    fixed = {}
    for i in range(len(p0)):
        for edge in (space.lo[i], space.hi[i]):
            if math.isfinite(edge) and abs(p0[i] - edge) <= tol * max(1.0, abs(edge)):
                fixed[i] = float(edge)
    return fixed


def _newton(space: Any, values: dict[str, float], tol: float,
            tried: set[frozenset[int]]) -> dict[str, float] | None:
    p0 = space.point(values)
    fixed = _active_set(space, p0, tol)
    key = frozenset(fixed)
    if key in tried:
        return None
    tried.add(key)
    free = np.array([i for i in range(len(p0)) if i not in fixed], dtype=int)
    start = p0.copy()
    for i, val in fixed.items():
        start[i] = val
    if not free.size:
        # Every coordinate on an edge: the candidate is that vertex if it meets the main
        # constraint (every axis capped with budget to spare is such an optimum).
        return space.to_values(start) if space.main(start)[0] <= 0 else None
    g0, d0 = space.main(p0)
    if g0 < -1e-4:  # main constraint slack: nothing to polish
        return None
    grad0 = space.obj_grad(start)[free]
    lam0 = max(-float(np.dot(grad0, d0[free])) / max(float(np.dot(d0[free], d0[free])),
                                                     1e-300), 0.0)
    z0 = np.concatenate([start[free], [lam0]])
    z = _exact_newton(space, start, free, z0) if space.hessians else None
    if z is None:
        z = _hybr(space, start, free, z0)
    if z is None or not np.all(np.isfinite(z)) or z[-1] < 0:
        return None
    p = start.copy()
    p[free] = z[:-1]
    # Newton ignores the bounds of the free coordinates: a point past one (by more than
    # 1e-12 of the edge, or 1e-12 below 1) is not a candidate.
    if any(p[i] < space.lo[i] - 1e-12 * max(1, abs(space.lo[i]))
           or p[i] > space.hi[i] + 1e-12 * max(1, abs(space.hi[i])) for i in free):
        return None
    return space.to_values(p)


def newton_step(K: np.ndarray, r: np.ndarray) -> np.ndarray | None:
    """The Newton step ``K·step = −r``; ``None`` when ``K`` is singular or the step
    is not finite."""
    try:
        step = np.linalg.solve(K, -r)
    except np.linalg.LinAlgError:
        return None
    return step if np.all(np.isfinite(step)) else None


def negligible(step: np.ndarray, z: np.ndarray) -> bool:
    """A step of 1e-11 of the iterate ``z``: the next step of a quadratically
    converging Newton would be below float64's resolution (the stopping rule)."""
    return float(np.max(np.abs(step))) <= 1e-11 * max(1.0, float(np.max(np.abs(z))))


def _exact_newton(space: Any, start: np.ndarray, free: np.ndarray,
                  z0: np.ndarray) -> np.ndarray | None:
    """Newton on the bordered KKT system with exact log-sum-exp Hessians."""
    p, z, m = start.copy(), z0.copy(), len(free)
    for _ in range(30):
        p[free] = z[:-1]
        g, d = space.main(p)
        r = np.concatenate([space.obj_grad(p)[free] + z[-1] * d[free], [g]])
        K = np.zeros((m + 1, m + 1))
        K[:m, :m] = (space.obj_hess(p) + z[-1] * space.main_hess(p))[np.ix_(free, free)]
        K[:m, m] = K[m, :m] = d[free]
        step = newton_step(K, r)
        if step is None:
            return None
        z = z + step
        if negligible(step, z):
            return z
    return None  # no convergence in 30 steps: scipy's hybr gets its turn


def _hybr(space: Any, start: np.ndarray, free: np.ndarray, z0: np.ndarray
          ) -> np.ndarray | None:
    from scipy.optimize import root

    def eqs(z: np.ndarray) -> np.ndarray:
        p = start.copy()
        p[free] = z[:-1]
        g, d = space.main(p)
        return np.concatenate([space.obj_grad(p)[free] + z[-1] * d[free], [g]])

    # hybr may stop with 'no progress' once at machine precision; the caller's
    # residual comparison decides whether the Newton point is kept.  A trial point past
    # the edge of the count space (a law axis driven to 0, whose power law is then
    # infinite) has no equations: that active set gives no candidate.
    try:
        return root(eqs, z0, method="hybr", options={"xtol": 1e-14}).x
    except ArithmeticError:
        return None


def rescue(space_at: SpaceFactory, values: dict[str, float]
           ) -> tuple[dict[str, float], bool]:
    """SLSQP from ``values`` then :func:`polish`; kept only if the KKT residual falls."""
    from scipy.optimize import minimize

    space = space_at(values)
    before, _ = space.kkt(values)

    def fun(p: np.ndarray) -> tuple[float, np.ndarray]:
        return space.obj_value(p), space.obj_grad(p)

    bounds = [(None if not math.isfinite(a) else a, None if not math.isfinite(b) else b)
              for a, b in zip(space.lo, space.hi)]
    cons = [{"type": "ineq", "fun": lambda p: -space.main(p)[0],
             "jac": lambda p: -space.main(p)[1]}]
    with np.errstate(all="ignore"):
        res = minimize(fun, space.point(values), jac=True, method="SLSQP", bounds=bounds,
                       constraints=cons, options={"maxiter": 500, "ftol": 1e-15})
    if not np.all(np.isfinite(res.x)):
        return values, False
    cand, _ = polish(space_at, space.to_values(res.x))
    after, _ = space_at(cand).kkt(cand)
    return (cand, True) if after < before else (values, False)
