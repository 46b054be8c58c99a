"""The fitter's objective and the full-grid search (Hoffmann et al.'s procedure).

:class:`Objective` is the summed (or mean) Huber loss of log residuals,
``sum_j huber(log L_hat(x_j) - log y_j, delta)``, and its analytic gradient, for
one parameter vector (``__call__``, what scipy's L-BFGS-B takes) or many at once
(``batch``, what :func:`rlscale.optimize._lbfgs._batched_lbfgs` takes).  The
log-sum-exp prediction and its softmax derivatives are derived in
:mod:`rlscale.optimize._fit_family`; the Huber loss is written ``c (|r| - c/2)``
with ``c = clip(r, -delta, delta)``, whose derivative is ``c``.

:func:`full_grid_search` is the search ``fit_law(starts="grid")`` runs and the
reference the fast multistart is checked against: batched L-BFGS from every grid
point, then scipy's L-BFGS-B (with the bounds) from the five best distinct end
points (Hoffmann et al. 2022, appendix D.2; Besiroglu et al. 2024, §2).
"""

from __future__ import annotations

import numpy as np

from rlscale.optimize._fit_family import family as _family
from rlscale.optimize._lbfgs import _batched_lbfgs

__all__: list[str] = []

#: Largest (starts x points) block one vectorised evaluation holds: about ten work
#: arrays of this many float64 (2e6 elements: 16 MB each).
MAX_BATCH_CELLS = 2 * 10**6
#: Upper limit on starts x points of the multistart stage (about a minute of
#: L-BFGS at most); ``starts="auto"`` lowers the number of starts to fit it.
MAX_FIT_WORK = 10**7


class Objective:
    """Huber loss of log residuals and its gradient for one parameterisation."""

    def __init__(self, family: str, logx: np.ndarray, logy: np.ndarray, delta: float,
                 reduction: str) -> None:
        self.family = family
        self.logx = logx          # (n_points, n_axes)
        self.logy = logy
        self.delta = delta
        self.scale = 1.0 if reduction == "sum" else 1.0 / logy.size
        self.n_axes = logx.shape[1]

    @property
    def n_params(self) -> int:
        return _family(self.family).n_params(self.n_axes)

    def predict(self, theta: np.ndarray, logx: np.ndarray | None = None) -> np.ndarray:
        """``log L_hat`` at ``logx`` (default: the data) for one parameter vector."""
        logx = self.logx if logx is None else logx
        return _family(self.family).predict(np.asarray(theta)[None, :], logx)[0][0]

    def __call__(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Objective and gradient at one parameter vector (what scipy's L-BFGS-B takes)."""
        loss, g = self._batch_block(np.asarray(theta, dtype=np.float64)[None, :])
        return float(loss[0]), g[0]

    def batch(self, thetas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Objective and gradient for many parameter vectors at once, shape (B, p).

        Evaluated in blocks of starts so that no work array exceeds
        :data:`MAX_BATCH_CELLS` (starts x points) elements: memory stays bounded
        however many points and starts there are.
        """
        rows = max(1, MAX_BATCH_CELLS // max(self.logy.size, 1))
        if thetas.shape[0] <= rows:
            return self._batch_block(thetas)
        parts = [self._batch_block(thetas[i:i + rows]) for i in range(0, thetas.shape[0], rows)]
        return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))

    def _batch_block(self, thetas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        loss, g = _family(self.family).huber_gradient(thetas, self.logx, self.logy, self.delta)
        return loss * self.scale, g * self.scale

    def grid(self) -> np.ndarray:
        """Hoffmann et al.'s initialisation grid for this family and number of axes."""
        return _family(self.family).grid(self.n_axes)

    def grid_values(self, grid: np.ndarray, chunk: int = 4096) -> np.ndarray:
        """Objective at every grid point, vectorised over starts."""
        return grid_values(self, grid, chunk)

    def bounds(self, floor_at_least_one: bool) -> list[tuple[float | None, float | None]]:
        """L-BFGS-B bounds: exponents >= 0, and ``log floor >= 0`` for pass rates."""
        fam = _family(self.family)
        bounds = fam.bounds(self.n_axes)
        if floor_at_least_one and fam.limit is not None:  # a loss 1/p has floor 1/p_max >= 1
            bounds[0] = (0.0, None)
        return bounds


def minimise(obj: Objective, starts: np.ndarray, bounds: list
             ) -> list[tuple[float, np.ndarray, bool]]:
    """scipy's L-BFGS-B from each start: ``(objective, theta, success)`` per start."""
    from scipy.optimize import minimize

    out = []
    for x0 in starts:
        res = minimize(obj, x0, jac=True, method="L-BFGS-B", bounds=bounds)
        out.append((float(res.fun), res.x, bool(res.success)))
    return out


def grid_stage(obj: Objective, grid: np.ndarray, n_jobs: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Batched L-BFGS from every row of ``grid``: end points, objectives, converged flags."""
    from joblib import Parallel, delayed, effective_n_jobs

    # The chunking depends on the grid only, so results do not depend on n_jobs.
    chunks = np.array_split(grid, max(1, len(grid) // 2000))
    workers = min(effective_n_jobs(n_jobs), len(chunks))
    if workers <= 1:
        parts = [_batched_lbfgs(obj, chunk) for chunk in chunks]
    else:
        parts = Parallel(n_jobs=workers)(delayed(_batched_lbfgs)(obj, c) for c in chunks)
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))  # type: ignore


def grid_values(obj: Objective, grid: np.ndarray, chunk: int = 4096) -> np.ndarray:
    """Objective at every grid point, vectorised over starts (135,000 for three axes)."""
    out = np.empty(len(grid))
    for i in range(0, len(grid), chunk):
        out[i:i + chunk] = obj.batch(grid[i:i + chunk])[0]
    return out




def full_grid_search(obj: Objective, grid: np.ndarray, bounds: list, n_jobs: int = -1
                     ) -> tuple[float, np.ndarray, list[tuple[float, np.ndarray, bool]], int]:
    """L-BFGS from every grid point, then L-BFGS-B from the five best distinct end points.

    Returns the best objective and parameters, every polished result sorted
    best first, and the number of grid runs that converged.
    """
    X, fvals, conv = grid_stage(obj, grid, n_jobs)
    results = sorted(minimise(obj, best_distinct(X, fvals), bounds), key=lambda t: t[0])
    return results[0][0], results[0][1], results, int(conv.sum())


def best_distinct(X: np.ndarray, fvals: np.ndarray, count: int = 5,
                  tol: float = 1e-3) -> np.ndarray:
    """The ``count`` best rows of ``X`` (by finite ``fvals``) that differ from every
    better one by more than ``tol`` in some coordinate (Hoffmann et al.'s "distinct
    end points" of the grid stage).

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [0.0, 5e-4], [1.0, 1.0], [2.0, 2.0]])
    >>> best_distinct(X, np.array([1.0, 0.5, 3.0, np.inf]), count=2).tolist()
    [[0.0, 0.0005], [1.0, 1.0]]
    """
    finite = np.flatnonzero(np.isfinite(fvals))
    cands: list[np.ndarray] = []
    for i in finite[np.argsort(fvals[finite], kind="stable")]:
        if all(np.max(np.abs(X[i] - c)) > tol for c in cands):
            cands.append(X[i])
        if len(cands) == count:
            break
    return np.array(cands)
