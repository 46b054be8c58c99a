"""Multi-start L-BFGS vectorised across starts (the grid stage of ``fit_law(starts="grid")``).

Two-loop L-BFGS recursion per start (Nocedal & Wright 2006, *Numerical
Optimization*, algorithm 7.4) with Armijo backtracking and scipy's L-BFGS-B
stopping rules, evaluated for all starts at once through the objective's
``batch`` method (see :class:`rlscale.optimize._fit_objective.Objective`).
Tested against scipy's L-BFGS-B in ``tests/test_multistart.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__: list[str] = []


def _batched_lbfgs(obj: Any, x0: np.ndarray, memory: int = 10, maxiter: int = 1000,
                   ftol: float = 2.220446049250313e-09, gtol: float = 1e-5,
                   chunk: int = 1500, merge_tol: float = 1e-3
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """L-BFGS from many starts at once (numpy-vectorised across starts).

    Two-loop recursion per start, Armijo backtracking, and scipy's
    L-BFGS-B stopping rules (relative reduction ``ftol``, projected gradient
    ``gtol``).  Every five iterations, runs whose parameters agree to
    ``merge_tol`` are merged (the lowest is continued): from the same point
    they would reach the same minimum.  Returns final points, objective
    values and a converged-or-merged flag.
    """
    # Far-off starts overflow; such trial points get a non-finite objective and are
    # rejected by the line search, so the floating-point warnings carry no news.
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        return _batched_lbfgs_impl(obj, x0, memory, maxiter, ftol, gtol, chunk, merge_tol)


def _batched_lbfgs_impl(obj: Any, x0: np.ndarray, memory: int, maxiter: int,
                        ftol: float, gtol: float, chunk: int, merge_tol: float
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X = np.array(x0, dtype=np.float64)
    S, p = X.shape
    f = np.empty(S)
    G = np.empty_like(X)
    for i in range(0, S, chunk):
        f[i:i + chunk], G[i:i + chunk] = obj.batch(X[i:i + chunk])
    sh = np.zeros((S, memory, p))
    yh = np.zeros((S, memory, p))
    rh = np.zeros((S, memory))
    count = np.zeros(S, dtype=np.int64)
    active = np.ones(S, dtype=bool)
    converged = np.zeros(S, dtype=bool)
    merged = np.zeros(S, dtype=bool)
    for it in range(maxiter):
        if it % 5 == 4:
            # Runs that have met (parameters equal to 1e-3) follow the same path
            # to the same minimum; keep the lowest one and merge the rest.
            idx = np.flatnonzero(active)
            keys = np.round(X[idx] / merge_tol).astype(np.int64)
            order = np.lexsort((f[idx], *keys.T[::-1]))
            sk = keys[order]
            dup = np.zeros(idx.size, dtype=bool)
            dup[1:] = np.all(sk[1:] == sk[:-1], axis=1)
            gone = idx[order[dup]]
            active[gone] = False
            merged[gone] = True
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        g = G[idx]
        # Two-loop recursion; history slot 0 is the newest pair.
        q = g.copy()
        alphas = np.zeros((idx.size, memory))
        valid = np.arange(memory)[None, :] < count[idx][:, None]
        for j in range(memory):
            a_j = np.where(valid[:, j], rh[idx, j] * np.einsum("bp,bp->b", sh[idx, j], q), 0.0)
            alphas[:, j] = a_j
            q -= a_j[:, None] * yh[idx, j]
        yy = np.einsum("bp,bp->b", yh[idx, 0], yh[idx, 0])
        gamma = np.where(count[idx] > 0, 1.0 / np.where(rh[idx, 0] > 0, rh[idx, 0] * yy, 1.0),
                         1.0)
        r = q * gamma[:, None]
        for j in range(memory - 1, -1, -1):
            b_j = np.where(valid[:, j], rh[idx, j] * np.einsum("bp,bp->b", yh[idx, j], r), 0.0)
            r += (alphas[:, j] - b_j)[:, None] * sh[idx, j]
        d = -r
        slope = np.einsum("bp,bp->b", g, d)
        bad = ~(slope < 0)
        d[bad] = -g[bad]
        slope[bad] = -np.einsum("bp,bp->b", g[bad], g[bad])
        gnorm = np.max(np.abs(g), axis=1)
        step = np.where(count[idx] == 0, np.minimum(1.0, 1.0 / np.maximum(gnorm, 1e-300)), 1.0)
        f0 = f[idx]
        new_x = X[idx].copy()
        new_f = f0.copy()
        new_g = g.copy()
        searching = np.ones(idx.size, dtype=bool)
        for _ls in range(40):
            k = np.flatnonzero(searching)
            if k.size == 0:
                break
            trial = X[idx[k]] + step[k, None] * d[k]
            ft, gt = obj.batch(trial)
            ok = np.isfinite(ft) & (ft <= f0[k] + 1e-4 * step[k] * slope[k])
            acc = k[ok]
            new_x[acc], new_f[acc], new_g[acc] = trial[ok], ft[ok], gt[ok]
            searching[acc] = False
            step[k[~ok]] *= 0.5
        stuck = searching  # no decrease found: at a (numerical) minimum
        s_vec = new_x - X[idx]
        y_vec = new_g - g
        sy = np.einsum("bp,bp->b", s_vec, y_vec)
        upd = (~stuck) & (sy > 1e-12 * np.maximum(
            np.einsum("bp,bp->b", y_vec, y_vec), 1e-300))
        u = idx[upd]
        sh[u] = np.roll(sh[u], 1, axis=1)
        yh[u] = np.roll(yh[u], 1, axis=1)
        rh[u] = np.roll(rh[u], 1, axis=1)
        sh[u, 0], yh[u, 0], rh[u, 0] = s_vec[upd], y_vec[upd], 1.0 / sy[upd]
        count[u] = np.minimum(count[u] + 1, memory)
        rel = (f0 - new_f) <= ftol * np.maximum(np.maximum(np.abs(f0), np.abs(new_f)), 1.0)
        small_g = np.max(np.abs(new_g), axis=1) <= gtol
        X[idx], f[idx], G[idx] = new_x, new_f, new_g
        broken = ~np.all(np.isfinite(new_g), axis=1) | ~np.isfinite(new_f)
        done = stuck | broken | ((rel | small_g) & (count[idx] > 0))
        stuck = stuck & ~broken
        converged[idx[done & ~stuck]] = True
        converged[idx[stuck & (gnorm <= 1e3 * gtol)]] = True
        active[idx[done]] = False
    return X, f, converged | merged
