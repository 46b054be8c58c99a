"""The one start strategy of every fit: screen many starts briefly, polish the best
distinct ones until two of them agree.

A front end supplies its *candidates* -- starts with their objective, built
from the data (for the built-in families one per exponent tuple of Hoffmann et
al.'s grid with the floor and coefficients solved for; for expression laws the
linear parameters solved for over profiles and grids of the others, see
:mod:`rlscale.optimize._fit_expr_starts`) -- and two callables: ``solve(U,
stage, lower, upper)``, the fitting engine (:func:`rlscale.optimize._lsq.solve`)
with the front end's model, and ``predict(U)``, the prediction at the data that
says whether two end points are the same optimum.  :func:`refine` then applies
the rule that ``fit_law`` has used since issue 13 (its safety was checked
against L-BFGS from the full grid on 200 synthetic sets,
``python -m benchmarks.multistart_safety``):

1. *screen* the candidates (all, or the best ``screen`` whose predictions
   differ by more than ``xtol``) together for a few iterations of the robust
   majoriser (``stage="screen"``), which is forgiving far from an optimum;
2. *polish* the best ``batch`` distinct screened end points to full precision
   (``stage="polish"``), with the front end's *companions* of them (the
   built-in's floorless copies: the same exponents with the floor at 0);
3. merge the end points into *basins* (predictions within ``xtol``) and stop
   when the best basin has been reached by ``agree`` polished starts
   (companions do not count), or a batch found nothing lower than the best
   before it (1e-9 relative); otherwise polish the next ``batch``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rlscale.optimize._lsq import LSQResult

__all__: list[str] = []

Solve = Callable[..., LSQResult]
Predict = Callable[[np.ndarray], np.ndarray]
#: (end points (k, q), their objectives (k,)) -> (extra starts, their lower, upper bounds).
Companions = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Basin:
    """One distinct optimum: its objective, end point and how many polished starts
    reached it."""

    objective: float
    theta: np.ndarray
    count: int


@dataclass(frozen=True)
class Found:
    """Outcome of :func:`refine`.

    Attributes
    ----------
    theta : numpy.ndarray
        The best end point (engine row).
    objective : float
    basins : list of Basin
        Distinct end points, best first.
    n_screened : int
        Starts refined in the screen.
    n_converged : int
        Screened starts whose last run (the polish, where one ran) met a stopping
        rule; at most ``n_screened``.
    status : int
        The engine's status of the run that found the best basin (0: it stopped at
        the evaluation limit).
    nfev : int
        Model evaluations of that run.
    """

    theta: np.ndarray
    objective: float
    basins: list[Basin]
    n_screened: int
    n_converged: int
    status: int
    nfev: int

    @property
    def converged(self) -> bool:
        return 1 <= self.status <= 4


def pick_distinct(preds: np.ndarray, order: list[int], xtol: float, batch: int) -> list[int]:
    """The first ``batch`` of ``order`` whose predictions (rows of ``preds``, in the
    order of ``order``) differ from every one picked before by more than ``xtol``.

    Examples
    --------
    >>> preds = np.array([[0.0, 0.0], [0.0, 5e-4], [0.0, 2e-3], [1.0, 1.0]])
    >>> pick_distinct(preds, [7, 3, 9, 4], 1e-3, 2)  # 3 is within 1e-3 of 7
    [7, 9]
    """
    pick: list[int] = []
    kept: list[int] = []
    for k, j in enumerate(order):
        if all(np.max(np.abs(preds[k] - preds[m])) > xtol for m in kept):
            pick.append(j)
            kept.append(k)
            if len(pick) == batch:
                break
    return pick


def settled(basins: list[list], best_before: float, agree: int) -> bool:
    """Rule 3: the best basin was reached by ``agree`` polished starts, or the last
    batch found nothing lower than ``best_before`` (1e-9 relative).

    Examples
    --------
    >>> settled([[1.0, None, 2, None]], float("inf"), 2)   # reached twice
    True
    >>> settled([[1.0, None, 1, None]], float("inf"), 2)   # once, and new
    False
    >>> settled([[1.0, None, 1, None]], 1.0 + 1e-10, 2)    # nothing lower by 1e-9
    True
    """
    return bool(basins) and (basins[0][2] >= agree or basins[0][0] >= best_before * (1 - 1e-9))


def merge(basins: list[list], pred: np.ndarray, theta: np.ndarray, f: np.ndarray,
          xtol: float, counts: np.ndarray, status: np.ndarray | None = None,
          nfev: np.ndarray | None = None) -> None:
    """Add end points to ``basins`` (same basin: predictions within ``xtol``); those
    with ``counts`` true add one to their basin's count of starts.  A basin is
    ``[objective, theta, count, prediction, status, nfev]``, best first (the solve's
    status and evaluations of its representative; 0 when not given)."""
    status = np.zeros(len(f), dtype=np.int64) if status is None else status
    nfev = np.zeros(len(f), dtype=np.int64) if nfev is None else nfev
    for j in np.argsort(f, kind="stable"):
        if not np.isfinite(f[j]):
            continue
        for b in basins:
            if np.max(np.abs(pred[j] - b[3])) <= xtol:
                b[2] += int(counts[j])
                if f[j] < b[0]:
                    b[0], b[1], b[3] = float(f[j]), theta[j], pred[j]
                    b[4:] = [int(status[j]), int(nfev[j])]
                break
        else:
            basins.append([float(f[j]), theta[j], int(counts[j]), pred[j], int(status[j]),
                           int(nfev[j])])
    basins.sort(key=lambda b: b[0])


def refine(solve: Solve, predict: Predict, starts: np.ndarray, lower: np.ndarray,
           upper: np.ndarray, *, screen: int | None = None, batch: int = 2, agree: int = 2,
           xtol: float = 1e-3, companions: Companions | None = None,
           max_polish: int | None = None) -> Found:
    """Screen ``starts``, polish the best distinct end points until the basins agree.

    ``starts`` are ranked best first already (by the front end's objective);
    ``screen`` keeps the first that many distinct ones (all by default);
    ``max_polish`` bounds the number of polished starts (default: all screened).
    ``lower``/``upper`` are the engine's ``(q,)`` bounds.  Raises ``ValueError``
    when no end point has a finite objective.
    """
    starts = np.atleast_2d(starts)
    if screen is not None and len(starts) > screen:
        keep = pick_distinct(predict(starts), list(range(len(starts))), xtol, screen)
        starts = starts[keep]
    res = solve(starts, "screen", None, None)
    theta, f = res.x, np.where(np.isfinite(res.cost), res.cost, np.inf)
    n_screened = len(starts)
    # One flag per screened start: a polished start's flag is its polish's, so a start counts
    # once however many stages it went through (companions are extra points, not starts).
    converged = np.asarray(res.converged, dtype=bool).copy()
    order = [int(j) for j in np.argsort(f, kind="stable") if np.isfinite(f[j])]
    basins: list[list] = []
    polished = 0
    limit = len(order) if max_polish is None else max_polish
    while order and polished < limit:
        pick = pick_distinct(predict(theta[order]), order, xtol, batch)
        order = [j for j in order if j not in pick]
        cands = theta[pick]
        lo = np.tile(lower, (len(pick), 1))
        hi = np.tile(upper, (len(pick), 1))
        n_pick = len(pick)
        if companions is not None:
            extra, e_lo, e_hi = companions(cands, f[pick])
            if len(extra):
                cands = np.concatenate([cands, extra])
                lo, hi = np.concatenate([lo, e_lo]), np.concatenate([hi, e_hi])
        out = solve(cands, "polish", lo, hi)
        polished += n_pick
        converged[pick] = np.asarray(out.converged, dtype=bool)[:n_pick]
        best_before = basins[0][0] if basins else np.inf
        counts = np.arange(len(cands)) < n_pick  # companions do not count as agreement
        merge(basins, predict(out.x), out.x, out.cost, xtol, counts, out.status, out.nfev)
        if settled(basins, best_before, agree):
            break
    if not basins:
        raise ValueError("the objective is not finite at any refined start; check the data "
                         "for extreme values and that the law is defined at every point")
    best = basins[0]
    return Found(theta=best[1], objective=float(best[0]),
                 basins=[Basin(b[0], b[1], b[2]) for b in basins], n_screened=n_screened,
                 n_converged=int(converged.sum()), status=best[4], nfev=best[5])
