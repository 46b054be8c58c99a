"""The search step of ``fit_law``: the optimum and warm starts for refits.

``starts="auto"`` with the summed loss runs the grid-safe multistart
(:mod:`rlscale.optimize._multistart`, safety rule stated there); ``"grid"``, an
integer, or ``reduction="mean"`` run Hoffmann et al.'s search, L-BFGS from grid
points then L-BFGS-B from the five best distinct end points
(:func:`rlscale.optimize._fit_objective.full_grid_search`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlscale.optimize._fit_data import Prepared
from rlscale.optimize._fit_objective import (
    MAX_FIT_WORK,
    Objective,
    best_distinct,
    full_grid_search,
    grid_stage,
    minimise,
)
from rlscale.theory._validation import check_positive_int

__all__: list[str] = []


def search(prep: Prepared, starts: Any, n_jobs: int) -> dict[str, Any]:
    """The optimum, warm starts for refits (it and distinct runner-ups), start counts."""
    obj, grid = prep.obj, prep.grid
    if starts == "auto" and obj.scale == 1.0:
        from rlscale.optimize._multistart import multistart

        ms = multistart(prep.fam, obj.logx, obj.logy, obj.delta, grid, prep.lower, prep.upper,
                        loss=prep.loss)
        ranked = [(ms.objective, ms.theta)] + [(b[0], b[1]) for b in ms.basins]
        return {"objective": ms.objective, "theta": ms.theta, "n_starts": ms.n_refined,
                "n_converged": ms.n_converged, "warm": _warm(ranked)}
    n_points = obj.logy.size
    if starts == "auto":
        auto = len(grid) if len(grid) <= 5000 else 1000
        auto = max(1, min(auto, MAX_FIT_WORK // n_points))
        starts = "grid" if auto >= len(grid) else auto
    n_starts = len(grid) if starts == "grid" else check_positive_int("starts", starts)
    if n_starts * n_points > MAX_FIT_WORK:
        raise ValueError(
            f"starts x points = {min(n_starts, len(grid))} x {n_points} = "
            f"{min(n_starts, len(grid)) * n_points:.3g} exceeds the multistart limit "
            f"{MAX_FIT_WORK:.0e}: pass fewer starts (starts='auto' picks "
            f"{max(1, MAX_FIT_WORK // n_points)}) or average replicates (replicates='mean')")
    if starts != "grid":
        # Rank the grid on at most MAX_FIT_WORK/len(grid) evenly spaced points: the
        # ranking only picks starting points; the fit itself uses every point.
        step = max(1, -(-len(grid) * n_points // MAX_FIT_WORK))
        ranker = obj if step == 1 else Objective(obj.family, obj.logx[::step],
                                                 obj.logy[::step], obj.delta,
                                                 "sum" if obj.scale == 1.0 else "mean")
        grid = grid[np.argsort(ranker.grid_values(grid), kind="stable")[:n_starts]]
    best, theta, results, n_conv = _bounded_grid_search(prep, grid, n_jobs)
    return {"objective": best, "theta": theta, "n_starts": len(grid), "n_converged": n_conv,
            "warm": _warm([(r[0], r[1]) for r in results])}


def _bounded_grid_search(prep: Prepared, grid: np.ndarray, n_jobs: int) -> tuple:
    """:func:`full_grid_search`; with floor bounds, its unbounded stage's end points are
    projected into them and also restarted at the middle of the floor's range."""
    if prep.floor_bounds is None:
        return full_grid_search(prep.obj, grid, prep.bounds, n_jobs)
    X, fvals, conv = grid_stage(prep.obj, grid, n_jobs)
    cands = best_distinct(X, fvals)
    lo_b, hi_b = prep.bounds[0]
    lo_e = -np.inf if lo_b is None else lo_b
    hi_e = np.inf if hi_b is None else hi_b
    mid = 0.5 * (lo_e + hi_e) if np.isfinite(lo_e + hi_e) else (
        lo_e if np.isfinite(lo_e) else hi_e)
    projected = []
    for c in cands:
        projected.append(np.concatenate([[np.clip(c[0], lo_e, hi_e)], c[1:]]))
        projected.append(np.concatenate([[mid], c[1:]]))
    results = sorted(minimise(prep.obj, np.array(projected), prep.bounds), key=lambda t: t[0])
    return results[0][0], results[0][1], results, int(conv.sum())


def _warm(ranked: list[tuple[float, np.ndarray]]) -> np.ndarray:
    """The best point and up to two distinct runner-ups (by 1e-3 in every parameter)."""
    ranked = sorted(ranked, key=lambda t: t[0])
    warm = [ranked[0][1]]
    for _, cand in ranked[1:]:
        if all(np.max(np.abs(cand - w)) > 1e-3 for w in warm):
            warm.append(cand)
        if len(warm) == 3:
            break
    return np.array(warm)
