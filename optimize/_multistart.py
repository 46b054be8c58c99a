"""Grid-safe multistart at single-start speed: the built-in families' front end of the
one start strategy.

The fitter minimises the summed Huber loss of log residuals (method and sources
in :mod:`rlscale.optimize._fit`).  Hoffmann et al.'s safety device is a grid of
initialisations (4,500 for two axes, 135,000 for three); running L-BFGS from all
of them costs a hundred single fits.  :func:`multistart` keeps the grid's
coverage of the exponents, where the objective's basins lie (the floor and the
coefficients enter almost linearly), and drops most of the cost.  Its starts
are this module's; the rule that refines them is the one start strategy of
every fit (:func:`rlscale.optimize._fit_starts.refine`), and every solve is the
fitting engine's (:func:`rlscale.optimize._lsq.solve`, bounds held):

1. *One start per exponent region.*  For each distinct exponent tuple of the
   grid (25 for two axes, 125 for three) the floor and coefficients are solved
   for by least squares (:func:`projected_starts`) -- better than the grid's
   best point for those exponents, whose coefficients are 5 apart in log.
2. *Screen them all together*: 30 iterations of the engine on the IRLS
   majoriser of the Huber loss (robust far from an optimum).
3. *Polish the best distinct ones.*  In order of objective, the best ``batch``
   (2) end points whose log-predictions differ by more than ``xtol`` (1e-3) are
   polished to full precision (the Huber loss's own Gauss--Newton model, up to
   200 evaluations).  An optimum with the floor tending to 0 is approached only
   at a crawl with the floor free, so each is joined by a *floorless copy*:
   its exponents with the floor fixed at ``e^-30`` of the smallest target and
   the coefficients solved for (:func:`projected_starts`), polished with it
   when the copy starts within ``COPY_RATIO`` (10) times the end point's
   objective.  (On the 200 synthetic sets every copy that won started within
   3.5 times; a copy that starts further off, such as Chinchilla's at 50
   times, ends in a worse basin after a hundred iterations.)
4. *Stop when they agree.*  The search stops when the best basin has been
   reached by ``agree`` (2) polished starts (the floorless copies do not count),
   or when a batch found nothing lower than the best before it (1e-9
   relative); otherwise the next ``batch`` end points are polished.

The rule is a heuristic, checked against L-BFGS from the grid (an independent
optimiser, kept for that: :mod:`rlscale.optimize._lbfgs`): the Chinchilla
points and synthetic sets in ``tests/test_multistart.py``, and 200 synthetic
two- and three-axis sets in ``benchmarks/multistart_safety.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlscale.optimize._fit_starts import merge as _merge  # noqa: F401  (tests use these)
from rlscale.optimize._fit_starts import pick_distinct, settled  # noqa: F401
from rlscale.optimize._lsq import solve
from rlscale.theory._threads import blas_threads

__all__: list[str] = []

#: A floorless copy is polished when its start is within this factor of its end
#: point's objective (rule 3 of the module docstring).
COPY_RATIO = 10.0


def huber_sum(r: np.ndarray, delta: float, weights: np.ndarray | None = None) -> np.ndarray:
    """Row sums of the Huber loss of ``r`` (``(B, P)``), optionally weighted per point.

    Written as ``c (|r| - c/2)`` with ``c = min(|r|, delta)``: ``r^2/2`` inside,
    ``delta (|r| - delta/2)`` outside.

    Examples
    --------
    >>> huber_sum(np.array([[0.5, -3.0]]), 1.0).tolist()  # 0.125 + (3 - 0.5)
    [2.625]
    """
    a = np.abs(r)
    c = np.minimum(a, delta)
    h = c * (a - 0.5 * c)
    if weights is not None:
        h = h * weights
    return h.sum(axis=1)


@dataclass(frozen=True)
class MultistartResult:
    """Outcome of :func:`multistart`.

    Attributes
    ----------
    theta : numpy.ndarray
        Best parameters found.
    objective : float
        Summed Huber loss there.
    basins : list of (objective, theta, count)
        Distinct end points, best first, with the number of starts that reached each.
    n_refined, n_converged : int
        Starts refined, and refined or polished runs that met a stopping rule.
    """

    theta: np.ndarray
    objective: float
    basins: list
    n_refined: int
    n_converged: int


def projected_starts(fam, logx: np.ndarray, logy: np.ndarray, exponents: np.ndarray,
                     lower: np.ndarray, upper: np.ndarray, log_floor: float | None = None
                     ) -> np.ndarray:
    """One start per exponent tuple: the floor and coefficients solved for, given them.

    For fixed exponents the additive law ``E + sum_i A_i x_i^-alpha_i`` is linear
    in ``(E, A_i)``; they are fitted by least squares on *relative* residuals
    ``(y - L_hat)/y`` (a first-order stand-in for the log residuals; variable
    projection, Golub & Pereyra 1973), all exponent tuples in one batched solve of
    the normal equations (ridge ``1e-12`` of the trace, for ``alpha = 0`` columns
    equal to the floor's).  Non-positive values are replaced by ``1e-6`` of the
    smallest target before taking logs.  The multiplicative law is linear in its
    log parameters: its start is the ordinary least-squares fit of ``log y``.
    With ``log_floor`` the floor is fixed at ``e^log_floor`` and only the
    coefficients are solved for, on the relative residuals ``(y - E - L_hat)/y``
    (the floorless copies of :func:`multistart`).

    Examples
    --------
    >>> import math
    >>> from rlscale.optimize._fit_family import family
    >>> x = np.logspace(0, 3, 12)[:, None]
    >>> y = 0.5 + 3.0 * x[:, 0] ** -0.4
    >>> t = projected_starts(family("additive"), np.log(x), np.log(y), np.array([[0.4]]),
    ...                      np.array([-np.inf, -np.inf, 0.0]), np.full(3, np.inf))
    >>> np.round(np.exp(t[0, :2]), 9).tolist(), float(t[0, 2])
    ([0.5, 3.0], 0.4)
    >>> t = projected_starts(family("additive"), np.log(x), np.log(y), np.array([[0.4]]),
    ...                      np.array([-np.inf, -np.inf, 0.0]), np.full(3, np.inf),
    ...                      log_floor=math.log(0.5))  # the floor given: A alone
    >>> round(float(np.exp(t[0, 1])), 9)
    3.0
    """
    T, n = exponents.shape
    if fam.name == "multiplicative":
        X = np.column_stack([np.ones(logy.size), -logx])
        theta = np.linalg.lstsq(X, logy, rcond=None)[0]
        return np.clip(theta, lower, upper)[None, :]
    # The projection is linear in the coefficients: it is solved for y / e^shift and the
    # coefficients scaled back.  Relative residuals divide the basis by y and the normal
    # equations square it: at y's own units, losses near 1e-160 overflowed float64 and
    # near 1e200 underflowed to a singular matrix (issue 22).
    shift = float(np.median(logy))
    y = np.exp(logy - shift)
    fixed = log_floor is not None
    k = n + (not fixed)                                       # unknowns per tuple
    basis = np.empty((T, logy.size, k))
    if not fixed:
        basis[:, :, 0] = 1.0
    basis[:, :, k - n:] = np.exp(-exponents[:, None, :] * logx[None, :, :])
    # A point ~1e150 times below the others still overflows the squares: such a start is
    # not finite and is replaced below, without a warning on the user's terminal.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        basis /= y[None, :, None]                                # relative residuals
        M = np.matmul(basis.transpose(0, 2, 1), basis)
        M += 1e-12 * np.einsum("tkk->t", M)[:, None, None] * np.eye(k)
        # B^T (y - E)/y: with the floor free, E is a column and the target y/y = 1
        rhs = (np.einsum("tpk,p->tk", basis, -np.expm1(log_floor - logy)) if fixed
               else basis.sum(axis=1))
        try:
            coef = np.linalg.solve(M, rhs[:, :, None])[:, :, 0]
        except np.linalg.LinAlgError:  # one singular tuple fails the batch: all replaced
            coef = np.full((T, k), np.nan)
    coef = np.where(np.isfinite(coef) & (coef > 0), coef, max(1e-6 * y.min(), 1e-300))
    log_coef = np.log(coef) + shift
    if fixed:  # in logs: e^(log_floor - shift) can underflow to 0
        log_coef = np.column_stack([np.full(T, float(log_floor)), log_coef])
    theta = np.column_stack([log_coef, exponents])
    return np.clip(theta, lower, upper)


def multistart(fam, logx: np.ndarray, logy: np.ndarray, delta: float, grid: np.ndarray,
               lower: np.ndarray, upper: np.ndarray | None = None, *, batch: int = 2,
               agree: int = 2, screen_iter: int = 30, polish_iter: int = 200,
               xtol: float = 1e-3, loss: str = "huber") -> MultistartResult:
    """Refine one start per exponent region of ``grid``; stop when the basins agree.

    The safety rule is in the module docstring: every exponent tuple of the grid
    is refined from its projected start (:func:`projected_starts`) for
    ``screen_iter`` iterations; the best distinct end points are polished
    ``batch`` at a time (with floorless copies, ``polish_iter`` evaluations) until
    the best basin has been reached by ``agree`` polished starts or a batch
    finds nothing lower.  ``loss="squared"`` minimises half the sum of squares
    of the log residuals instead of the Huber loss.

    Examples
    --------
    >>> from rlscale.optimize._fit_family import family
    >>> x = np.logspace(0, 3, 30)
    >>> logx, logy = np.log(x)[:, None], np.log(0.5 + 3.0 * x ** -0.4)
    >>> fam = family("additive")
    >>> res = multistart(fam, logx, logy, 1e-3, fam.grid(1), np.array([-np.inf, -np.inf, 0.0]))
    >>> np.round(np.exp(res.theta[:2]), 6).tolist(), round(float(res.theta[2]), 6)
    ([0.5, 3.0], 0.4)
    """
    from rlscale.optimize._fit_starts import refine

    upper = np.full_like(lower, np.inf) if upper is None else upper
    lower, upper = np.asarray(lower, np.float64), np.asarray(upper, np.float64)
    starts = projected_starts(fam, logx, logy, exponent_tuples(fam, grid, logx.shape[1]),
                              lower, upper)

    def model(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return fam.predict(X, logx, jac=True)

    def solve_stage(U, stage, lo, hi):
        # Marquardt's damping (one p x p solve a step: the cheapest for 25-125 small
        # problems); the screen on the IRLS majoriser, the polish nearly on the Huber
        # loss's own curvature (outside=0.01) with MINPACK's predicted-reduction stop.
        screen = stage == "screen"
        with blas_threads(1):
            return solve(model, U, logy, lower=lower if lo is None else lo,
                         upper=upper if hi is None else hi, loss=loss, delta=delta,
                         outside=1.0 if screen else 0.01, method="lm",
                         max_nfev=screen_iter + 1 if screen else polish_iter + 1,
                         ftol=1e-12 if screen else 1e-15, xtol=1e-10 if screen else 1e-13,
                         gtol=0.0, ptol=0.0 if screen else 1e-15, nonfinite="drop")

    def predict(U: np.ndarray) -> np.ndarray:
        return fam.predict(U, logx)[0]

    def companions(cands, objectives):
        return floorless_copies(fam, logx, logy, delta, cands, objectives, lower, upper,
                                loss=loss)

    try:
        found = refine(solve_stage, predict, starts, lower, upper, batch=batch, agree=agree,
                       xtol=xtol,
                       companions=None if fam.name == "multiplicative" else companions)
    except ValueError:
        raise ValueError("the Huber objective is not finite at any refined start; "
                         "check the data for extreme values") from None
    return MultistartResult(theta=found.theta, objective=found.objective,
                            basins=[(b.objective, b.theta, b.count) for b in found.basins],
                            n_refined=found.n_screened, n_converged=found.n_converged)


def exponent_tuples(fam, grid: np.ndarray, n_axes: int) -> np.ndarray:
    """The distinct exponent tuples of ``grid``, one row each, in ``itertools.product`` order.

    The grid is a product, so they are the product of each exponent column's
    distinct values (a 1-d ``unique`` per column; a row-wise ``unique`` of
    135,000 rows takes a second).

    Examples
    --------
    >>> from rlscale.optimize._fit_family import family
    >>> exponent_tuples(family("additive"), family("additive").grid(2), 2)[[0, 1, 5, 24]].tolist()
    [[0.0, 0.0], [0.0, 0.5], [0.5, 0.0], [2.0, 2.0]]
    """
    cols = range(grid.shape[1])[fam.exponent_slice(n_axes)]
    mesh = np.meshgrid(*[np.unique(grid[:, j]) for j in cols], indexing="ij")
    return np.column_stack([m.ravel() for m in mesh])


def floorless_copies(fam, logx: np.ndarray, logy: np.ndarray, delta: float,
                     cands: np.ndarray, objectives: np.ndarray, lower: np.ndarray,
                     upper: np.ndarray, loss: str = "huber"
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The floorless copies of ``cands`` worth polishing, and their per-row bounds.

    Each copy keeps its candidate's exponents, fixes the log floor at
    ``e0 = min(log y) - 30`` (clipped into the floor's bounds) and solves for the
    coefficients (:func:`projected_starts` with ``log_floor=e0``); a copy is kept
    when its objective is at most :data:`COPY_RATIO` times its candidate's
    (``objectives``).  Rule 3 of the module docstring.

    Examples
    --------
    >>> from rlscale.optimize._fit_family import family
    >>> fam = family("additive")
    >>> x = np.logspace(0, 3, 20)
    >>> logx, logy = np.log(x)[:, None], np.log(2.0 * x ** -0.3)  # no floor at all
    >>> lower = np.array([-np.inf, -np.inf, 0.0])
    >>> th, lo, hi = floorless_copies(fam, logx, logy, 1e-3, np.array([[0.0, 0.0, 0.3]]),
    ...                               np.array([1e-3]), lower, np.full(3, np.inf))
    >>> float(th[0, 0]) == float(lo[0, 0]) == float(hi[0, 0]) == float(logy.min()) - 30
    True
    >>> np.round(np.exp(th[0, 1]), 9).tolist(), th[0, 2].tolist()
    (2.0, 0.3)
    """
    e0 = float(np.clip(float(logy.min()) - 30.0, lower[0], upper[0]))
    lo, hi = np.tile(lower, (len(cands), 1)), np.tile(upper, (len(cands), 1))
    lo[:, 0] = hi[:, 0] = e0
    ex = fam.exponent_slice(logx.shape[1])
    copies = projected_starts(fam, logx, logy, cands[:, ex], lo[0], hi[0], log_floor=e0)
    r = fam.predict(copies, logx)[0] - logy
    value = huber_sum(r, delta) if loss == "huber" else 0.5 * (r * r).sum(axis=1)
    near = value <= COPY_RATIO * objectives
    return copies[near], lo[near], hi[near]
