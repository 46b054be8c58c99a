"""Bootstrap of the Huber fit: every resample through one vectorised solver.

A bootstrap resample draws ``n`` of the ``n`` points with replacement; its
summed Huber loss is ``sum_i c_i huber(r_i)`` with ``c_i`` the number of times
point ``i`` was drawn, so all resamples share the residual function and differ
only in their point weights.  :func:`batched_bootstrap` solves them together with
the fitting engine, :func:`rlscale.optimize._lsq.solve` (one problem per resample
and warm start, the weights its point weights, the bounds held), warm-started
from the point estimate and the runner-up basins of the full fit, and keeps each
resample's lowest end point.

The resamples are drawn exactly as :func:`per_resample_bootstrap` (the
implementation before issue 13, one scipy L-BFGS-B fit per resample and warm
start, run in joblib workers) draws them: resample ``j`` is
``default_rng(SeedSequence(seed).spawn(B)[j]).integers(0, n, n)``.  Both give the
same resamples for the same seed, so the intervals differ only by solver
tolerance, and neither depends on the number of workers or the batch size.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np

from rlscale.optimize._fit_objective import Objective, minimise
from rlscale.optimize._lsq import solve
from rlscale.theory._threads import blas_threads

__all__: list[str] = []


def resample_indices(n_points: int, n_boot: int, seed: int) -> list[np.ndarray]:
    """The points drawn by each resample (``n_points`` each, with replacement).

    Examples
    --------
    >>> [r.tolist() for r in resample_indices(3, 2, seed=0)] == [
    ...     np.random.default_rng(s).integers(0, 3, 3).tolist()
    ...     for s in np.random.SeedSequence(0).spawn(2)]
    True
    """
    return [np.random.default_rng(ss).integers(0, n_points, n_points)
            for ss in np.random.SeedSequence(seed).spawn(n_boot)]


def resample_counts(n_points: int, n_boot: int, seed: int) -> np.ndarray:
    """How often each point is drawn in each resample, shape ``(n_boot, n_points)``.

    Examples
    --------
    >>> c = resample_counts(5, 3, seed=0)
    >>> c.shape, c.sum(axis=1).tolist()
    ((3, 5), [5.0, 5.0, 5.0])
    """
    return np.array([np.bincount(idx, minlength=n_points)
                     for idx in resample_indices(n_points, n_boot, seed)], dtype=np.float64)


def batched_bootstrap(fam, logx: np.ndarray, logy: np.ndarray, delta: float, n_boot: int,
                      seed: int, starts: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                      batch: int = 500, maxiter: int = 200, loss: str = "huber") -> np.ndarray:
    """Bootstrap estimates ``(n_boot, p)`` of the Huber fit, resamples solved in batches.

    Each resample is solved from every warm start in ``starts`` (the point
    estimate first) by 20 steps of the engine's Marquardt method on the IRLS
    majoriser and then up to ``maxiter`` nearly on the Huber loss's own curvature
    (``outside=0.01``), and keeps its lowest end point.  ``batch`` resamples are
    solved at once (memory about ``batch x starts x points x params`` floats).

    Examples
    --------
    >>> from rlscale.optimize._fit_family import family
    >>> x = np.logspace(0, 3, 40)
    >>> logx = np.log(x)[:, None]
    >>> logy = 1.0 - 0.4 * logx[:, 0] + np.random.default_rng(0).normal(0, 0.01, 40)
    >>> est = batched_bootstrap(family("multiplicative"), logx, logy, 1e-3, 200, 0,
    ...                         np.array([[1.0, 0.4]]), np.array([-np.inf, 0.0]),
    ...                         np.full(2, np.inf))
    >>> est.shape, bool(0.39 < np.median(est[:, 1]) < 0.41)
    ((200, 2), True)
    """
    counts = resample_counts(logy.size, n_boot, seed)
    starts = np.atleast_2d(np.asarray(starts, dtype=np.float64))
    S, p = starts.shape
    out = np.empty((n_boot, p))

    def model(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return fam.predict(X, logx, jac=True)

    for lo in range(0, n_boot, batch):
        w = counts[lo:lo + batch]
        b = w.shape[0]
        theta = np.repeat(starts[None, :, :], b, axis=0).reshape(b * S, p)
        weights = np.repeat(w, S, axis=0)
        with blas_threads(1):
            first = solve(model, theta, logy, weights, lower=lower, upper=upper, loss=loss,
                          delta=delta, outside=1.0, method="lm", max_nfev=21, ftol=1e-12,
                          xtol=1e-10, gtol=0.0, nonfinite="drop")
            res = solve(model, first.x, logy, weights, lower=lower, upper=upper, loss=loss,
                        delta=delta, outside=0.01, method="lm", max_nfev=maxiter + 1,
                        ftol=1e-13, xtol=1e-11, gtol=0.0, nonfinite="drop")
        f = np.where(np.isfinite(res.cost), res.cost, np.inf).reshape(b, S)
        pick = np.argmin(f, axis=1)
        out[lo:lo + b] = res.x.reshape(b, S, p)[np.arange(b), pick]
    return out


def per_resample_bootstrap(obj_args: tuple, n_boot: int, seed: int, starts: np.ndarray,
                           bounds: list, n_jobs: int, progress: bool) -> np.ndarray:
    """One scipy L-BFGS-B fit per resample and warm start, in joblib workers.

    The implementation before issue 13; ``fit_law`` keeps it for
    ``reduction="mean"`` (whose early stopping is the point of that option), and
    tests compare :func:`batched_bootstrap` against it.
    """
    from joblib import Parallel, delayed

    seeds = np.random.SeedSequence(seed).spawn(n_boot)
    n_chunks = min(n_boot, 64)
    chunks = [seeds[i::n_chunks] for i in range(n_chunks)]
    jobs = (delayed(_bootstrap_chunk)(obj_args, c, starts, bounds) for c in chunks)
    parts = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
    if progress:
        from tqdm import tqdm

        parts = tqdm(parts, total=n_chunks, desc="bootstrap", unit="chunk", file=sys.stderr)
    results = list(parts)
    out = np.empty((n_boot, starts.shape[1]))
    for i, part in enumerate(results):
        out[i::n_chunks] = part
    return out


def _bootstrap_chunk(obj_args: tuple, seeds: Sequence[np.random.SeedSequence],
                     starts: np.ndarray, bounds: list) -> np.ndarray:
    family, logx, logy, delta, reduction = obj_args
    out = np.empty((len(seeds), starts.shape[1]))
    n = logy.size
    for j, ss in enumerate(seeds):
        idx = np.random.default_rng(ss).integers(0, n, n)
        obj = Objective(family, logx[idx], logy[idx], delta, reduction)
        out[j] = min(minimise(obj, starts, bounds), key=lambda t: t[0])[1]
    return out
