"""The reward-law fits' view of the fitting engine: ``solve_batch(model, x0, lm, k, y, w)``.

The reward-law verifications fit the same few law forms many times on one
design ``(log M, K)``: several starts × {the train split, all points, the
leave-one-regime-out subsets} and, in the trainer, bootstrap resamples that
change only the targets.  They are a front end of the one fitting engine,
:func:`rlscale.optimize._lsq.solve` (batched trust-region Levenberg--Marquardt,
step by step scipy's ``least_squares(method="trf")`` on an unbounded squared
problem; method, stopping rules and sources there): this module binds a law
form ``model(P, lm, k)`` to its design and keeps the call signature the
verifications have always used.  Until issue 30 the solver itself lived here.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rlscale.optimize._lsq import LSQResult, solve

__all__ = ["BatchResult", "solve_batch"]

#: (P (B, p), lm (n,), k (n,)) -> (f (B, n), J (B, n, p)).
Model = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]

#: The engine's result (``x``, ``cost``, ``nfev``, ``status``, ``converged``).
BatchResult = LSQResult


def solve_batch(model: Model, x0: np.ndarray, lm: np.ndarray, k: np.ndarray, y: np.ndarray,
                w: np.ndarray | None = None, *, free: np.ndarray | None = None,
                runoff: tuple[np.ndarray, np.ndarray] | None = None, max_nfev: int = 4000,
                ftol: float = 1e-8, xtol: float = 1e-8, gtol: float = 1e-8) -> LSQResult:
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
        Stopping rules of :func:`rlscale.optimize._lsq.solve`, scipy's defaults.

    Returns
    -------
    LSQResult

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
    lm = np.asarray(lm, np.float64)
    k = np.asarray(k, np.float64)
    return solve(lambda P: model(P, lm, k), x0, y, w, free=free, runoff=runoff,
                 max_nfev=max_nfev, ftol=ftol, xtol=xtol, gtol=gtol)
