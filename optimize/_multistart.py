"""Grid-safe multistart at single-start speed: one start per exponent region, polished.

The fitter minimises the summed Huber loss of log residuals (method and sources
in :mod:`rlscale.optimize._fit`).  Hoffmann et al.'s safety device is a grid of
initialisations (4,500 for two axes, 135,000 for three); running L-BFGS from all
of them costs a hundred single fits.  :func:`multistart` keeps the grid's
coverage of the exponents, where the objective's basins lie (the floor and the
coefficients enter almost linearly), and drops most of the cost.

**The safety rule** (what :func:`multistart` looks at before it stops):

1. *One start per exponent region.*  For each distinct exponent tuple of the
   grid (25 for two axes, 125 for three) the floor and coefficients are solved
   for by least squares (:func:`projected_starts`) -- better than the grid's
   best point for those exponents, whose coefficients are 5 apart in log.
2. *Refine them all together*: 30 iterations of :func:`huber_lm`, a
   Levenberg--Marquardt method vectorised over starts, on the IRLS majoriser of
   the Huber loss (robust far from an optimum).
3. *Polish the best distinct ones.*  In order of objective, the best ``batch``
   (2) end points whose log-predictions differ by more than ``xtol`` (1e-3) are
   polished to full precision (Gauss--Newton on the Huber loss's own Hessian,
   up to 200 iterations, stopped when the step's predicted decrease is below
   ``PTOL`` (1e-15) of the objective).  An optimum with the floor tending to 0
   is approached only at a crawl with the floor free, so each is joined by a
   *floorless copy*: its exponents with the floor fixed at ``e^-30`` of the
   smallest target and the coefficients solved for (:func:`projected_starts`),
   polished with it when the copy starts within ``COPY_RATIO`` (10) times the
   end point's objective.  (On the 200 synthetic sets every copy that won
   started within 3.5 times; a copy that starts further off, such as
   Chinchilla's at 50 times, ends in a worse basin after a hundred iterations.)
4. *Stop when they agree.*  The search stops when the best basin has been
   reached by ``agree`` (2) polished starts (the floorless copies do not count),
   or when a batch found nothing lower than the best before it (1e-9
   relative); otherwise the next ``batch`` end points are polished.

The rule is a heuristic, checked against L-BFGS from the grid: the Chinchilla
points and synthetic sets in ``tests/test_multistart.py``, and 200 synthetic two-
and three-axis sets in ``benchmarks/multistart_safety.py`` (the closing note of
issue 13 gives the count).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlscale.theory._threads import blas_threads

__all__: list[str] = []

#: The polish stops a start when its step's predicted decrease is below this
#: fraction of the objective (``huber_lm``'s ``ptol``).
PTOL = 1e-15
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


def huber_lm(fam, logx: np.ndarray, logy: np.ndarray, delta: float, theta0: np.ndarray,
             lower: np.ndarray, upper: np.ndarray | None = None,
             weights: np.ndarray | None = None, maxiter: int = 500,
             ftol: float = 1e-15, xtol: float = 1e-12, outside: float = 1.0,
             ptol: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Minimise the (weighted) summed Huber loss from many starts at once.

    Levenberg--Marquardt on the iteratively reweighted least-squares majoriser
    of the Huber loss: with ``omega_i = min(1, delta/|r_i|)``,
    ``rho(r) <= rho(r0) + rho'(r0)(r - r0) + omega_0 (r - r0)^2 / 2`` (Huber
    1981, *Robust Statistics*, §7.8), so a step solves
    ``(J^T Omega J + lambda diag) s = -J^T rho'(r)`` with the family's analytic
    Jacobian ``J``, and is accepted only where the true objective decreases
    (``lambda`` /3 on success, x4 on failure).  Box bounds: variables at a
    bound whose gradient points outward are frozen, the step is clipped.

    Parameters
    ----------
    fam : family object (:mod:`rlscale.optimize._fit_family`)
    logx, logy : numpy.ndarray
        ``(P, n)`` log axis values, ``(P,)`` log targets.
    delta : float
        Huber threshold.
    theta0 : (B, p) array
        Starting points, one problem per row.
    lower, upper : (p,) or (B, p) arrays
        Bounds, shared or per problem (``-inf``/``inf`` for none; ``upper``
        defaults to none).
    weights : (B, P) array, optional
        Per-problem point weights (bootstrap counts).
    maxiter : int
        Iterations per problem.
    ftol, xtol : float
        A problem stops when an accepted step lowers its objective by at most
        ``ftol`` (relative), moves no parameter by more than
        ``xtol (1 + |theta|)``, or when ``lambda`` exceeds 1e12 (no decrease).
    outside : float
        Curvature given to residuals beyond ``delta``, as a multiple of the
        majoriser's ``delta/|r|``: 1 (default) is the majoriser, robust far from
        an optimum; near one, a small value (0.01) approaches Gauss--Newton on
        the Huber loss's own Hessian (zero beyond ``delta``, as scipy's
        ``least_squares`` takes it), which converges in a few steps once the
        points inside ``delta`` settle.
    ptol : float
        Also stop a problem when the step's predicted decrease,
        ``-(g^T s + s^T H s / 2)`` of the quadratic model with the undamped
        ``H``, is at most ``ptol`` times its objective (MINPACK's test on the
        predicted reduction, Moré 1978): at an optimum rounding rejects every
        step, and without it ``lambda`` climbs x4 a step to 1e12 (some 40 idle
        iterations).  0 (default) turns it off.

    Returns
    -------
    theta : (B, p) array
    objective : (B,) array
    converged : (B,) bool array

    Examples
    --------
    >>> from rlscale.optimize._fit_family import family
    >>> logx = np.log(np.logspace(0, 3, 20))[:, None]
    >>> logy = 1.0 - 0.4 * logx[:, 0]
    >>> theta, f, ok = huber_lm(family("multiplicative"), logx, logy, 1e-3,
    ...                         np.array([[5.0, 2.0]]), lower=np.array([-np.inf, 0.0]))
    >>> np.round(theta, 6).tolist(), bool(ok[0])
    ([[1.0, 0.4]], True)
    """
    lower = np.asarray(lower, dtype=np.float64)
    upper = np.full_like(lower, np.inf) if upper is None else np.asarray(upper, np.float64)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"), blas_threads(1):
        return _huber_lm(fam, logx, logy, float(delta), np.array(theta0, dtype=np.float64),
                         lower, upper, weights, maxiter, ftol, xtol, outside, ptol)


def _huber_lm(fam, logx, logy, delta, theta, lower, upper, weights, maxiter, ftol, xtol,
              outside, ptol):
    B, p = theta.shape
    lower = np.broadcast_to(lower, (B, p))  # per-problem bounds allowed
    upper = np.broadcast_to(upper, (B, p))
    theta = np.clip(theta, lower, upper)
    pred, J = fam.predict(theta, logx, jac=True)
    r = pred - logy
    f = huber_sum(r, delta, weights)
    lam = np.full(B, 1e-3)
    active = np.isfinite(f)
    converged = np.zeros(B, dtype=bool)
    eye = np.eye(p)
    for _ in range(maxiter):
        a = np.flatnonzero(active)
        if a.size == 0:
            break
        ra, Ja, fa, th = r[a], J[a], f[a], theta[a]
        absr = np.abs(ra)
        c = np.clip(ra, -delta, delta)                       # rho'(r)
        om = np.where(absr <= delta, 1.0, outside * delta / np.maximum(absr, 1e-300))
        if weights is not None:
            c = c * weights[a]
            om = om * weights[a]
        g = np.matmul(c[:, None, :], Ja)[:, 0]
        H = np.matmul(Ja.transpose(0, 2, 1) * om[:, None, :], Ja)
        lo, hi = lower[a], upper[a]
        free = ~(((th <= lo) & (g > 0)) | ((th >= hi) & (g < 0)))
        diag = np.einsum("bkk->bk", H)
        damp = lam[a, None] * np.maximum(diag, 1e-12 * (1.0 + diag.max(axis=1, keepdims=True)))
        A = np.where(free[:, :, None] & free[:, None, :], H + damp[:, :, None] * eye, eye)
        step = -np.linalg.solve(A, np.where(free, g, 0.0)[:, :, None])[:, :, 0]
        trial = np.clip(th + step, lo, hi)
        pt, Jt = fam.predict(trial, logx, jac=True)
        rt = pt - logy
        ft = huber_sum(rt, delta, None if weights is None else weights[a])
        ok = np.isfinite(ft) & (ft < fa)
        acc = a[ok]
        theta[acc], r[acc], J[acc], f[acc] = trial[ok], rt[ok], Jt[ok], ft[ok]
        lam[acc] = np.maximum(lam[acc] / 3.0, 1e-12)
        lam[a[~ok]] *= 4.0
        moved = np.max(np.abs(trial - th), axis=1)
        small = moved <= xtol * (1.0 + np.max(np.abs(th), axis=1))
        flat = ok & (fa - f[a] <= ftol * np.abs(fa))
        done = small | flat | (~ok & (lam[a] > 1e12))
        if ptol > 0.0:
            Hs = np.matmul(H, step[:, :, None])[:, :, 0]
            predicted = -np.einsum("bk,bk->b", g, step) - 0.5 * np.einsum("bk,bk->b", step, Hs)
            done |= predicted <= ptol * np.abs(fa)
        converged[a[done]] = True
        active[a[done]] = False
    return theta, f, converged


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
               xtol: float = 1e-3) -> MultistartResult:
    """Refine one start per exponent region of ``grid``; stop when the basins agree.

    The safety rule is in the module docstring: every exponent tuple of the grid
    is refined from its projected start (:func:`projected_starts`) for
    ``screen_iter`` iterations; the best distinct end points are polished
    ``batch`` at a time (with floorless copies, ``polish_iter`` iterations) until
    the best basin has been reached by ``agree`` polished starts or a batch
    finds nothing lower.

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
    upper = np.full_like(lower, np.inf) if upper is None else upper
    starts = projected_starts(fam, logx, logy, exponent_tuples(fam, grid, logx.shape[1]),
                              lower, upper)
    # Stage 1: every exponent region a few iterations, all at once.
    theta, f, ok = huber_lm(fam, logx, logy, delta, starts, lower, upper,
                            maxiter=screen_iter, ftol=1e-12, xtol=1e-10)
    n_refined, n_conv = len(starts), int(ok.sum())
    order = [int(j) for j in np.argsort(f, kind="stable") if np.isfinite(f[j])]
    basins: list[list] = []  # [objective, theta, count, log-predictions], best first
    while order:
        # Stage 2: polish the best `batch` distinct end points to full precision.
        pick = pick_distinct(fam.predict(theta[order], logx)[0], order, xtol, batch)
        order = [j for j in order if j not in pick]
        cands = theta[pick]
        lo, hi = np.tile(lower, (len(pick), 1)), np.tile(upper, (len(pick), 1))
        if fam.name != "multiplicative":
            copies, c_lo, c_hi = floorless_copies(fam, logx, logy, delta, cands, f[pick],
                                                  lower, upper)
            cands = np.concatenate([cands, copies])
            lo, hi = np.concatenate([lo, c_lo]), np.concatenate([hi, c_hi])
        pt, pf, pok = huber_lm(fam, logx, logy, delta, cands, lo, hi, maxiter=polish_iter,
                               ftol=1e-15, xtol=1e-13, outside=0.01, ptol=PTOL)
        n_conv += int(pok.sum())
        best_before = basins[0][0] if basins else np.inf
        counts = np.arange(len(pf)) < len(pick)  # floorless copies do not count as agreement
        _merge(basins, fam.predict(pt, logx)[0], pt, pf, xtol, counts)
        if settled(basins, best_before, agree):
            break
    if not basins:
        raise ValueError("the Huber objective is not finite at any refined start; "
                         "check the data for extreme values")
    return MultistartResult(theta=basins[0][1], objective=float(basins[0][0]),
                            basins=[(b[0], b[1], b[2]) for b in basins],
                            n_refined=n_refined, n_converged=n_conv)


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


def pick_distinct(preds: np.ndarray, order: list[int], xtol: float, batch: int) -> list[int]:
    """The first ``batch`` of ``order`` whose log-predictions (rows of ``preds``, in the
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


def floorless_copies(fam, logx: np.ndarray, logy: np.ndarray, delta: float,
                     cands: np.ndarray, objectives: np.ndarray, lower: np.ndarray,
                     upper: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    near = huber_sum(fam.predict(copies, logx)[0] - logy, delta) <= COPY_RATIO * objectives
    return copies[near], lo[near], hi[near]


def settled(basins: list[list], best_before: float, agree: int) -> bool:
    """Rule 4: the best basin was reached by ``agree`` polished starts, or the last
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


def _merge(basins: list[list], pred: np.ndarray, theta: np.ndarray, f: np.ndarray,
           xtol: float, counts: np.ndarray) -> None:
    """Add end points to ``basins`` (same basin: log-predictions within ``xtol``); those
    with ``counts`` true add one to their basin's count of starts."""
    for j in np.argsort(f, kind="stable"):
        if not np.isfinite(f[j]):
            continue
        for b in basins:
            if np.max(np.abs(pred[j] - b[3])) <= xtol:
                b[2] += int(counts[j])
                if f[j] < b[0]:
                    b[0], b[1], b[3] = float(f[j]), theta[j], pred[j]
                break
        else:
            basins.append([float(f[j]), theta[j], int(counts[j]), pred[j]])
    basins.sort(key=lambda b: b[0])
