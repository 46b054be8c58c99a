"""The fitting engine: batched, bounded, robust trust-region least squares.

Every fit in rlscale -- the built-in law families, laws written as
expressions, the RL sigmoid and power law, the reward-law verifications --
minimises a sum over points of a loss of residuals for many problems at once
(starts, bootstrap resamples, held-out subsets), on one shared design.
:func:`solve` does that, vectorised over the problems with numpy:

* parameters ``(B, p)``, a model ``model(X) -> (f (B, n), J (B, n, p))``,
  targets ``(n,)`` or ``(B, n)`` and non-negative point weights ``(n,)`` or
  ``(B, n)`` (a bootstrap resample is its point counts, a subset a 0/1 mask);
* the objective ``Σ_i w_i ρ(f_i − y_i)`` with ``ρ(r) = r²/2`` (``loss="squared"``)
  or Huber's ``ρ(r) = r²/2`` for ``|r| <= δ`` and ``δ(|r| − δ/2)`` beyond
  (``loss="huber"``; Huber 1964), so the cost is exactly scipy's
  ``least_squares(loss="huber", f_scale=δ)`` cost and the summed Huber loss of
  Hoffmann et al. (2022) as corrected by Besiroglu et al. (2024);
* box bounds ``lower <= x <= upper`` that hold at every iterate.

**Method.**  The Levenberg--Marquardt method in its trust-region form (Moré
1978, *Lecture Notes in Mathematics* 630; Nocedal & Wright 2006, *Numerical
Optimization*, §10.3), step by step scipy's ``least_squares(method="trf")``
without bounds (``trf_no_bounds`` with the exact subproblem solver), so that on
an unbounded squared problem with ``x_scale=None`` it follows scipy's path to
rounding:

* per problem a trust radius ``Δ`` (initially ``‖x0‖``, or 1) and a damping
  ``α``; from the thin SVD ``J = U S Vᵀ`` the Gauss--Newton step when ``J`` has
  full rank and the step lies within ``Δ``, otherwise ``p(α) = −V (S Uᵀr)/(S² +
  α)`` with ``α`` found by Moré's safeguarded Newton iteration on ``‖p(α)‖ =
  Δ`` (at most 10 iterations, 1 % tolerance);
* the ratio ``ρ`` of actual to predicted reduction updates ``Δ`` (``Δ ← ‖p‖/4``
  when ``ρ < 1/4``, ``Δ ← 2Δ`` when ``ρ > 3/4`` on the boundary); a step is
  accepted when the cost decreases; a trial with a non-finite residual or
  Jacobian is rejected with ``Δ ← ‖p‖/4``, so no returned value is NaN.

**Robust loss** (scipy's ``scale_for_robust_loss_function``; Triggs et al.
2000, "Bundle adjustment -- a modern synthesis", §4.3): at each accepted point
the residuals and Jacobian rows are rescaled so that the Gauss--Newton model
has the loss's gradient ``Jᵀψ(r)`` (``ψ = clip(r, −δ, δ)``) and curvature
``Jᵀ diag(h) J``, with ``h = 1`` inside ``δ`` and ``h = max(outside·δ/|r|,
eps)`` beyond.  ``outside = 0`` is the Huber loss's own Hessian (scipy's
choice: fast near an optimum); ``outside = 1`` is the iteratively reweighted
least-squares majoriser ``ρ(r) <= ρ(r0) + ψ(r0)(r − r0) + (δ/|r0|)(r − r0)²/2``
(Huber 1981, *Robust Statistics*, §7.8), robust far from one.  ``robust`` (a
per-point mask) exempts some residuals, e.g. a Gaussian prior's, which are
always squared.

**Bounds** (an active-set projection; Bertsekas 1982, "Projected Newton
methods for optimization problems with simple constraints", *SIAM J. Control
Optim.* 20(2)): at each accepted point, the variables at a bound whose
gradient points outward are held, the trust-region step is taken in the
others, and the trial point is projected into the box; the predicted
reduction is that of the projected step.  Convergence is measured on the
projected gradient.  An iterate never leaves the box.

**Variable scaling** (``x_scale="jac"``, scipy's: Moré 1978, §6): the trust
region is taken in variables scaled by the running maximum of the Jacobian's
column norms, which makes the method invariant to the parameters' units.

**Stopping** (each problem on its own, scipy's rules): ``gtol``, the largest
projected gradient below ``gtol`` (status 1); ``ftol``, an accepted reduction
below ``ftol·F`` with ``ρ > 1/4``, or (``ptol > 0``) a predicted reduction
below ``ptol·F`` (status 2); ``xtol``, an unprojected step below
``xtol (xtol + ‖x‖)`` (status 3; 4 with ``ftol`` too); the evaluation budget
``max_nfev``, the start's included (status 0); a point outside the ``runoff``
box (status 5, a stop and not a constraint); a start with a non-finite
residual, with ``nonfinite="drop"`` (status -1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__: list[str] = []

#: X (B, p) -> (f (B, n), J (B, n, p)).
Model = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]

_EPS = np.finfo(float).eps
#: Log coordinates live in [-690, 690]: exp of either end is finite in float64.  Kept in the
#: engine, which every fitter imports, so that a built-in law's fit need not import the
#: expression front end (and sympy with it: issue 24's cold start).
LOG_LIMIT = 690.0
#: Status codes of :func:`solve` and their words.
STATUS = {-1: "non-finite start", 0: "evaluation limit reached",
          1: "projected gradient below gtol", 2: "reduction below ftol", 3: "step below xtol",
          4: "reduction below ftol and step below xtol", 5: "left the runoff box"}


@dataclass(frozen=True)
class LSQResult:
    """Outcome of :func:`solve`, one row per problem.

    Attributes
    ----------
    x : (B, p) array
        End points (inside the bounds).
    cost : (B,) array
        ``Σ w ρ(f(x) − y)`` at ``x`` (``inf`` for a dropped non-finite start).
    nfev : (B,) int array
        Model evaluations, the start's included.
    status : (B,) int array
        :data:`STATUS`: 0 evaluation limit, 1 ``gtol``, 2 ``ftol``, 3 ``xtol``,
        4 ``ftol`` and ``xtol``, 5 left the ``runoff`` box, -1 non-finite start.
    at_bound : (B, p) bool array
        Parameters on a bound at ``x``.
    """

    x: np.ndarray
    cost: np.ndarray
    nfev: np.ndarray
    status: np.ndarray
    at_bound: np.ndarray

    @property
    def converged(self) -> np.ndarray:
        """``1 <= status <= 4``: stopped by a tolerance (not the limit, not running off)."""
        return (self.status >= 1) & (self.status <= 4)


def solve(model: Model, x0: np.ndarray, y: np.ndarray, w: np.ndarray | None = None, *,
          lower: np.ndarray | None = None, upper: np.ndarray | None = None,
          loss: str = "squared", delta: float = 1.0, outside: float = 0.0,
          robust: np.ndarray | None = None, x_scale: str | None = None,
          free: np.ndarray | None = None,
          runoff: tuple[np.ndarray, np.ndarray] | None = None, max_nfev: int = 4000,
          ftol: float = 1e-8, xtol: float = 1e-8, gtol: float = 1e-8, ptol: float = 0.0,
          factor: str = "svd", method: str = "trf", nonfinite: str = "raise") -> LSQResult:
    """Minimise ``Σ w ρ(model(x) − y)`` for ``B`` problems on one design at once.

    Parameters
    ----------
    model : callable
        ``model(X) -> (f, J)``: values ``(B', n)`` and Jacobian ``(B', n, p)``
        for parameter rows ``X`` of shape ``(B', p)`` (any subset of the
        problems; a writeable ``J`` may be scaled in place: return a fresh array).
    x0 : (B, p) array
        Starts; projected into the bounds.
    y : (n,) or (B, n) array
        Targets, finite where the weights keep them (``ValueError`` otherwise).
    w : (n,) or (B, n) array, optional
        Non-negative point weights multiplying each point's loss (a zero drops it).
    lower, upper : (p,) or (B, p) arrays, optional
        Bounds (``-inf``/``inf`` for none); ``lower <= upper``.
    loss : {"squared", "huber"}
    delta : float
        Huber threshold.
    outside : float in [0, 1]
        Curvature of the robust model beyond ``delta`` (module docstring):
        0 Huber's Hessian, 1 the IRLS majoriser.
    robust : (n,) bool array, optional
        The points the robust loss applies to (default all; others squared).
    x_scale : {None, "jac"}
        Trust region in the parameters as given, or scaled by the Jacobian.
    free : (p,) bool array, optional
        Parameters to fit, the same for every problem; others stay at their start.
    runoff : pair of (p,) arrays, optional
        A problem whose accepted point leaves this box stops there (status 5).
    max_nfev, ftol, xtol, gtol
        Stopping rules (module docstring).
    ptol : float
        Also stop (status 2) when a step's predicted reduction is at most ``ptol``
        times the cost (MINPACK's test on the predicted reduction, Moré 1978): at an
        optimum rounding rejects every step, and without it the trust region
        shrinks by 4 a step to ``xtol`` (some 25 idle evaluations).  0 (default,
        scipy's rules) turns it off.
    factor : {"svd", "gram"}
        How the trust-region subproblem is factored: the thin SVD of ``J`` (scipy's,
        default), or the eigendecomposition of ``JᵀJ`` (cheaper for many points;
        for the screens and the bootstrap, where full precision is not the point).
    method : {"trf", "lm"}
        The step: Moré's exact trust region (``"trf"``, scipy's path), or
        Marquardt's damping (``"lm"``: ``(JᵀJ + λ diag JᵀJ) s = −Jᵀr`` with ``λ``
        divided by 3 after a decrease and multiplied by 4 otherwise; Marquardt
        1963, *J. SIAM* 11(2)), one ``p x p`` solve a step and so several times
        cheaper for many small problems; the built-in families' multistart and
        bootstrap use it.  Bounds, losses, weights and statuses are the same.
    nonfinite : {"raise", "drop"}
        A start with a non-finite cost raises ``ValueError``, or is dropped
        (status -1, cost ``inf``).

    Returns
    -------
    LSQResult

    Examples
    --------
    A straight line fitted to two targets at once, the second on its first
    three points only (a 0/1 weight is a mask):

    >>> def line(X, t=np.arange(4.0)):
    ...     J = np.stack([np.ones((len(X), 4)), np.broadcast_to(t, (len(X), 4))], axis=2)
    ...     return X[:, :1] + X[:, 1:] * t, J
    >>> y = np.array([1.0 + 2.0 * np.arange(4.0), [0.0, 1.0, 2.0, 9.0]])
    >>> res = solve(line, np.zeros((2, 2)), y, np.array([[1, 1, 1, 1], [1, 1, 1, 0]]))
    >>> (np.round(res.x, 6) + 0.0).tolist(), res.converged.tolist()
    ([[1.0, 2.0], [0.0, 1.0]], [True, True])

    With the slope bounded above by 1.5 the first line's optimum is on the
    bound (the intercept is refitted: the mean of ``y − 1.5 t``):

    >>> res = solve(line, np.zeros((1, 2)), y[:1], upper=np.array([np.inf, 1.5]))
    >>> np.round(res.x, 6).tolist(), res.at_bound.tolist()
    ([[1.75, 1.5]], [[False, True]])
    """
    x = np.array(x0, dtype=np.float64, ndmin=2)
    B, p = x.shape
    if loss not in ("squared", "huber"):
        raise ValueError(f"loss must be 'squared' or 'huber'; got loss={loss!r}")
    if nonfinite not in ("raise", "drop"):
        raise ValueError(f"nonfinite must be 'raise' or 'drop'; got nonfinite={nonfinite!r}")
    if x_scale not in (None, "jac"):
        raise ValueError(f"x_scale must be None or 'jac'; got x_scale={x_scale!r}")
    if factor not in ("svd", "gram"):
        raise ValueError(f"factor must be 'svd' or 'gram'; got factor={factor!r}")
    if method not in ("trf", "lm"):
        raise ValueError(f"method must be 'trf' or 'lm'; got method={method!r}")
    y = np.asarray(y, dtype=np.float64)
    sw = None if w is None else np.sqrt(np.asarray(w, dtype=np.float64))
    if sw is not None and not np.all(np.isfinite(sw)):
        raise ValueError("w must be finite and >= 0")
    free = np.ones(p, dtype=bool) if free is None else np.asarray(free, dtype=bool)
    box = (np.full(p, -np.inf), np.full(p, np.inf)) if runoff is None else runoff
    lo = np.broadcast_to(np.full(p, -np.inf) if lower is None
                         else np.asarray(lower, np.float64), (B, p))
    hi = np.broadcast_to(np.full(p, np.inf) if upper is None
                         else np.asarray(upper, np.float64), (B, p))
    bounded = lower is not None or upper is not None
    if bounded:
        if np.any(lo > hi):
            raise ValueError("lower must be <= upper in every coordinate")
        x = np.clip(x, lo, hi)
    bad = ~np.isfinite(y)
    if bad.any():  # a target the weights drop does not count; one they keep is an error
        if sw is not None:
            keep = np.broadcast_to(sw, np.broadcast_shapes(sw.shape, y.shape)) != 0
            bad = bad & keep
            y = np.where(keep, y, 0.0)
        if bad.any():
            idx = np.argwhere(np.atleast_2d(bad))[0]
            raise ValueError(f"y must be finite where it is fitted; got "
                             f"{np.atleast_2d(y)[tuple(idx)]} at row {idx[0]}, point {idx[1]}")
    spec = _Spec(model, y, sw, free, loss, float(delta), float(outside),
                 None if robust is None else np.asarray(robust, dtype=bool), x_scale, box,
                 lo if bounded else None, hi if bounded else None, factor)
    # No BLAS thread limit is needed for the same bits in every process: einsum does
    # not call BLAS, and the SVDs of (n, p) matrices run single-threaded.
    with np.errstate(all="ignore"):
        run = _solve if method == "trf" else _solve_lm
        return run(spec, x, int(max_nfev), float(ftol), float(xtol), float(gtol),
                   float(ptol), nonfinite)


@dataclass(frozen=True)
class _Spec:
    model: Model
    y: np.ndarray
    sw: np.ndarray | None
    free: np.ndarray
    loss: str
    delta: float
    outside: float
    robust: np.ndarray | None
    x_scale: str | None
    box: tuple[np.ndarray, np.ndarray]
    lo: np.ndarray | None
    hi: np.ndarray | None
    factor: str = "svd"

    def rows(self, a: np.ndarray, arr: np.ndarray | None) -> np.ndarray | None:
        """Per-problem rows ``a`` of a ``(n,)`` or ``(B, n)`` array."""
        if arr is None or arr.ndim == 1:
            return arr
        return arr[a]


def _evaluate(spec: _Spec, x: np.ndarray, a: np.ndarray):
    """Scaled residuals, the free Jacobian columns (scaled) and the cost at rows ``x``.

    ``a`` are the problems' indices (for per-problem targets and weights).  The
    Jacobian is the Gauss--Newton model's (robust rows rescaled, module
    docstring); the cost is the true objective.
    """
    f, J = spec.model(x)
    r = f - spec.rows(a, spec.y)
    if not spec.free.all():
        J = J[:, :, spec.free]
    sw = spec.rows(a, spec.sw)
    if sw is not None:
        r = r * sw
        if J.flags.writeable:  # the model's own fresh array: scaled in place
            J *= sw[..., None]
        else:
            J = J * sw[..., None]
    if spec.loss == "squared":
        cost = 0.5 * np.einsum("bn,bn->b", r, r)
        return r, J, cost
    # Huber on the weighted residual √w·r: w·ρ(r) = ρ_{δ√w}(√w r), so the threshold
    # scales with √w (a zero weight gives a zero residual and contributes nothing).
    d = spec.delta if sw is None else spec.delta * np.broadcast_to(sw, r.shape)
    absr = np.abs(r)
    c = np.minimum(absr, d)
    rho = c * (absr - 0.5 * c)
    inside = absr <= d
    h = np.where(inside, 1.0, np.maximum(spec.outside * d / np.where(inside, 1.0, absr), _EPS))
    if spec.robust is not None:
        rho = np.where(spec.robust, rho, 0.5 * r * r)
        h = np.where(spec.robust, h, 1.0)
    linear = inside if spec.robust is None else inside | ~spec.robust
    sh = np.sqrt(h)
    if J.flags.writeable:
        J *= sh[..., None]
    else:
        J = J * sh[..., None]
    return np.where(linear, r, np.copysign(d, r) / sh), J, rho.sum(axis=1)


def _factor(r, J, method="svd"):
    """The subproblem's pieces: singular values ``s``, ``V``, ``Uᵀr`` and the gradient ``Jᵀr``.

    ``"svd"``: the thin SVD of ``J`` (scipy's).  ``"gram"``: the eigendecomposition of
    ``JᵀJ = V S² Vᵀ`` with ``Uᵀr = S⁻¹ Vᵀ Jᵀr`` -- the same pieces from a ``p x p``
    problem instead of an ``n x p`` one (much cheaper for many points), accurate
    while the Jacobian's condition number is well below ``1/√eps ≈ 7e7`` (the
    squares lose the rest; the trust region damps those directions anyway).
    """
    g = np.matmul(J.transpose(0, 2, 1), r[:, :, None])[:, :, 0]
    if method == "svd":
        U, s, Vt = np.linalg.svd(J, full_matrices=False)
        return s, Vt.transpose(0, 2, 1), np.einsum("bnp,bn->bp", U, r), g
    w, V = np.linalg.eigh(np.matmul(J.transpose(0, 2, 1), J))
    w, V = w[:, ::-1], V[:, :, ::-1]                   # descending, as the SVD's
    s = np.sqrt(np.maximum(w, 0.0))
    small = s <= _EPS * np.maximum(s[:, :1], 1e-300)
    uf = np.where(small, 0.0, np.einsum("bpq,bp->bq", V, g) / np.where(small, 1.0, s))
    return np.where(small, 0.0, s), V, uf, g


def _norm(v):
    return np.sqrt(np.einsum("bp,bp->b", v, v))


def _phi(alpha, suf, s2, delta):
    """``‖p(α)‖ − Δ`` and its derivative in ``α`` (Moré 1978).  A held variable's zero
    singular value (``s² + α = 0``, with ``S Uᵀr = 0`` there) contributes nothing."""
    denom = s2 + alpha[:, None]
    pos = denom > 0
    q = np.where(pos, suf / np.where(pos, denom, 1.0), 0.0)
    p_norm = _norm(q)
    inv = np.where(pos, 1.0 / np.where(pos, denom, 1.0), 0.0)
    return p_norm - delta, -np.einsum("bp,bp->b", q * q, inv) / p_norm


def _tr_step(s, V, uf, delta, alpha, m, nfree):
    """The trust-region subproblem's step and ``α`` for every row (scipy's
    ``solve_lsq_trust_region``, vectorised; rows that converge stop updating).

    ``nfree`` is the number of free variables of each row (the others' Jacobian
    columns are zero): full rank means ``nfree`` non-negligible singular values.
    """
    suf = s * uf
    s2 = s * s
    k = s.shape[1]
    last = s[np.arange(s.shape[0]), np.clip(nfree - 1, 0, k - 1)]
    full = (m >= nfree) & (last > _EPS * m * s[:, 0]) & (nfree > 0)
    if np.all(nfree == k):
        inv = np.where(full[:, None], s, 1.0)
        gn = -np.einsum("bpq,bq->bp", V, uf / inv)
    else:
        keep = np.arange(k)[None, :] < nfree[:, None]
        inv = np.where(full[:, None] & keep, s, 1.0)
        gn = -np.einsum("bpq,bq->bp", V, np.where(keep, uf / inv, 0.0))
    use_gn = full & (_norm(gn) <= delta)
    if use_gn.all():
        return gn, np.zeros_like(alpha)
    rows = np.flatnonzero(~use_gn)  # the damped rows only, from here on
    sf, s2, dl, fl = suf[rows], s2[rows], delta[rows], full[rows]
    upper = _norm(sf) / dl
    phi0, dphi0 = _phi(np.zeros(rows.size), sf, s2, dl)
    lower = np.where(fl, -phi0 / dphi0, 0.0)
    al = alpha[rows]
    al = np.where(~fl & (al == 0), np.maximum(1e-3 * upper, np.sqrt(lower * upper)), al)
    todo = np.ones(rows.size, dtype=bool)
    for _ in range(10):
        out = todo & ((al < lower) | (al > upper))
        if out.any():
            al = np.where(out, np.maximum(1e-3 * upper, np.sqrt(lower * upper)), al)
        phi, dphi = _phi(al, sf, s2, dl)
        upper = np.where(todo & (phi < 0), al, upper)
        ratio = phi / dphi
        lower = np.where(todo, np.maximum(lower, al - ratio), lower)
        al = np.where(todo, al - (phi + dl) * ratio / dl, al)
        todo &= np.abs(phi) >= 0.01 * dl
        if not todo.any():
            break
    denom = s2 + al[:, None]
    step = -np.einsum("bpq,bq->bp", V[rows], np.where(denom > 0, sf / np.where(
        denom > 0, denom, 1.0), 0.0))
    norm = _norm(step)
    gn[rows] = step * (dl / np.where(norm > 0, norm, 1.0))[:, None]
    out_alpha = np.zeros_like(alpha)
    out_alpha[rows] = al
    return gn, out_alpha


class _State:
    """Per-problem iterate, model pieces and scaling (rows indexed by problem)."""

    def __init__(self, spec, x, r, J, cost):
        self.spec = spec
        self.x, self.r, self.J, self.cost = x, r, J, cost
        B, q = x.shape[0], J.shape[2]
        self.scale_inv = np.ones((B, q))
        self.held = np.zeros((B, q), dtype=bool)
        self.refresh(np.arange(B), first=True)

    def refresh(self, rows, first=False):
        """Scaling, held variables and the SVD at the current points of ``rows``."""
        spec = self.spec
        J = self.J[rows]
        if spec.x_scale == "jac":
            norms = np.sqrt(np.einsum("bnp,bnp->bp", J, J))
            norms[norms == 0] = 1.0
            self.scale_inv[rows] = norms if first else np.maximum(self.scale_inv[rows], norms)
        g = np.einsum("bnp,bn->bp", J, self.r[rows])
        if spec.lo is not None:
            xf = self.x[rows][:, spec.free]
            lo, hi = spec.lo[rows][:, spec.free], spec.hi[rows][:, spec.free]
            self.held[rows] = ((xf <= lo) & (g > 0)) | ((xf >= hi) & (g < 0))
        Jh = J / self.scale_inv[rows][:, None, :] if spec.x_scale == "jac" else J
        if self.held[rows].any():
            Jh = np.where(self.held[rows][:, None, :], 0.0, Jh)
        s, V, uf, _ = _factor(self.r[rows], Jh, spec.factor)
        if first:
            self.s, self.V, self.uf = s, V, uf
            self.g = np.where(self.held, 0.0, g)
        else:
            self.s[rows], self.V[rows], self.uf[rows] = s, V, uf
            self.g[rows] = np.where(self.held[rows], 0.0, g)


def _solve(spec: _Spec, x, max_nfev, ftol, xtol, gtol, ptol, nonfinite) -> LSQResult:
    B, p = x.shape
    free = spec.free
    r, J, cost, status = _start(spec, x, nonfinite)
    st = _State(spec, x, r, J, cost)
    m = (np.full(B, r.shape[1]) if spec.sw is None
         else np.count_nonzero(np.broadcast_to(spec.sw, r.shape), axis=1))
    xh = x[:, free] * st.scale_inv
    delta = _norm(xh)
    delta[delta == 0] = 1.0
    alpha = np.zeros(B)
    nfev = np.ones(B, dtype=np.int64)
    status[(status == -2) & (np.max(np.abs(st.g), axis=1, initial=0.0) < gtol)] = 1
    status[(status == -2) & (nfev >= max_nfev)] = 0
    active = np.flatnonzero(status == -2)
    q = int(free.sum())
    while active.size:
        nfree = q - st.held[active].sum(axis=1)
        step_h, al = _tr_step(st.s[active], st.V[active], st.uf[active], delta[active],
                              alpha[active], m[active], nfree)
        held = st.held[active]
        if held.any():  # rounding in the SVD must not move a held variable
            step_h = np.where(held, 0.0, step_h)
        xa, ca, d = x[active], cost[active], delta[active]
        step = step_h / st.scale_inv[active]
        trial = xa.copy()
        trial[:, free] += step
        clipped = np.zeros(active.size, dtype=bool)
        if spec.lo is not None:
            projected = np.clip(trial, spec.lo[active], spec.hi[active])
            clipped = np.any(projected != trial, axis=1)
            trial = projected
        rt, Jt, ct = _evaluate(spec, trial, active)
        nfev[active] += 1
        # Predicted reduction of the quadratic model: from the SVD pieces for the
        # step as solved, from J itself where the projection changed it.
        sv = np.einsum("bpq,bp->bq", st.V[active], step_h) * st.s[active]
        predicted = -(0.5 * np.einsum("bp,bp->b", sv, sv)
                      + np.einsum("bp,bp->b", st.g[active], step))
        if clipped.any():
            c = np.flatnonzero(clipped)
            eff = trial[c][:, free] - xa[c][:, free]
            Jp = np.einsum("bnp,bp->bn", st.J[active[c]], eff)
            g_full = np.einsum("bnp,bn->bp", st.J[active[c]], st.r[active[c]])
            predicted[c] = -(0.5 * np.einsum("bn,bn->b", Jp, Jp)
                             + np.einsum("bp,bp->b", g_full, eff))
            step_h = step_h.copy()
            step_h[c] = eff * st.scale_inv[active[c]]
        step_norm = _norm(step_h)
        finite = np.isfinite(ct) & np.all(np.isfinite(Jt), axis=(1, 2)) & np.all(
            np.isfinite(rt), axis=1)
        reduction = np.where(finite, ca - ct, -1.0)
        ratio = np.where(predicted > 0, reduction / np.where(predicted > 0, predicted, 1.0),
                         np.where((predicted == 0) & (reduction == 0), 1.0, 0.0))
        d_new = np.where(ratio < 0.25, 0.25 * step_norm,
                         np.where((ratio > 0.75) & (step_norm > 0.95 * d), 2.0 * d, d))
        f_ok = (reduction < ftol * ca) & (ratio > 0.25)
        x_ok = (step_norm < xtol * (xtol + _norm(xa[:, free]))) & ~clipped
        if ptol > 0.0:
            f_ok |= (predicted <= ptol * ca) & ~clipped
        code = np.where(f_ok & x_ok, 4, np.where(f_ok, 2, np.where(x_ok, 3, -2)))
        code[~finite] = -2
        # Non-finite trial: shrink; stopped: keep alpha and delta; else scipy's updates.
        cont = finite & (code < -1)
        alpha[active] = np.where(cont, al * d / np.where(d_new > 0, d_new, 1.0), al)
        delta[active] = np.where(finite, np.where(cont, d_new, d), 0.25 * step_norm)
        acc = finite & (reduction > 0)
        if acc.any():
            rows = active[acc]
            x[rows], st.r[rows], st.J[rows], cost[rows] = trial[acc], rt[acc], Jt[acc], ct[acc]
            st.refresh(rows)
            code[acc] = np.where(np.max(np.abs(st.g[rows]), axis=1, initial=0.0) < gtol, 1,
                                 code[acc])
            xr = x[rows]
            gone = np.any((xr < spec.box[0]) | (xr > spec.box[1]), axis=1)
            code[acc] = np.where(gone & (code[acc] < -1), 5, code[acc])
        code[(code < -1) & (nfev[active] >= max_nfev)] = 0
        status[active] = code
        active = active[code < -1]
    at_bound = np.zeros((B, p), dtype=bool)
    if spec.lo is not None:
        at_bound = (x <= spec.lo) | (x >= spec.hi)
    return LSQResult(x, cost, nfev, status, at_bound)


def _start(spec: _Spec, x: np.ndarray, nonfinite: str):
    """Residuals, Jacobian and cost at the starts; non-finite starts raise or are dropped."""
    B = x.shape[0]
    r, J, cost = _evaluate(spec, x, np.arange(B))
    status = np.full(B, -2, dtype=np.int64)
    dead = ~np.isfinite(cost) | ~np.all(np.isfinite(J), axis=(1, 2)) | ~np.all(
        np.isfinite(r), axis=1)
    if dead.any():
        if nonfinite == "raise":
            raise ValueError(f"x0 must give finite residuals; got a non-finite cost at row "
                             f"{int(np.flatnonzero(dead)[0])}")
        status[dead] = -1
        cost = np.where(dead, np.inf, cost)
        r = np.where(dead[:, None], 0.0, r)
        J = np.where(dead[:, None, None], 0.0, J)
    return r, J, cost, status


def _solve_lm(spec: _Spec, x, max_nfev, ftol, xtol, gtol, ptol, nonfinite) -> LSQResult:
    """Marquardt's damped Gauss--Newton (``method="lm"``), vectorised over problems.

    A step solves ``(H + λ D) s = −g`` on the free variables (``H = JᵀJ`` of the
    scaled model, ``D = max(diag H, 1e-12 (1 + max diag H))``, ``g = Jᵀr``), the
    trial is projected into the bounds, and it is accepted where the cost falls
    (``λ ← max(λ/3, 1e-12)``; else ``λ ← 4λ``).  A problem stops when an accepted
    step lowers its cost by at most ``ftol`` (relative) or its predicted decrease is
    at most ``ptol`` of it (status 2), moves no parameter by more than ``xtol (1 +
    ‖x‖∞)`` (status 3), ``λ`` exceeds 1e12 without a decrease (status 2: no descent
    is left), its projected gradient is below ``gtol`` (status 1), or it reaches
    ``max_nfev`` evaluations (status 0).
    """
    B, p = x.shape
    free = spec.free
    r, J, cost, status = _start(spec, x, nonfinite)
    lam = np.full(B, 1e-3)
    nfev = np.ones(B, dtype=np.int64)
    q = int(free.sum())
    eye = np.eye(q)
    lo = None if spec.lo is None else spec.lo[:, free]
    hi = None if spec.hi is None else spec.hi[:, free]
    active = np.flatnonzero(status == -2)
    while active.size:
        ra, Ja, fa, xa = r[active], J[active], cost[active], x[active]
        Jt_ = Ja.transpose(0, 2, 1)
        g = np.matmul(Jt_, ra[:, :, None])[:, :, 0]       # matmul: batched BLAS, not einsum
        th = xa[:, free]
        hold = np.zeros_like(g, dtype=bool)
        if lo is not None:
            hold = ((th <= lo[active]) & (g > 0)) | ((th >= hi[active]) & (g < 0))
        gfree = np.where(hold, 0.0, g)
        small_g = np.max(np.abs(gfree), axis=1, initial=0.0) < gtol
        H = np.matmul(Jt_, Ja)
        diag = np.einsum("bkk->bk", H)
        damp = lam[active, None] * np.maximum(diag, 1e-12 * (1.0 + diag.max(axis=1,
                                                                            keepdims=True)))
        keep = ~hold
        A = np.where(keep[:, :, None] & keep[:, None, :], H + damp[:, :, None] * eye, eye)
        try:
            step = -np.linalg.solve(A, gfree[:, :, None])[:, :, 0]
        except np.linalg.LinAlgError:  # a singular system (non-finite curvature): pinv
            step = -np.einsum("bpq,bq->bp", np.linalg.pinv(A), gfree)
        trial = xa.copy()
        trial[:, free] = th + step
        if spec.lo is not None:
            trial = np.clip(trial, spec.lo[active], spec.hi[active])
        eff = trial[:, free] - th
        rt, Jt, ct = _evaluate(spec, trial, active)
        nfev[active] += 1
        finite = np.isfinite(ct) & np.all(np.isfinite(Jt), axis=(1, 2)) & np.all(
            np.isfinite(rt), axis=1)
        ok = finite & (ct < fa)
        acc = active[ok]
        x[acc], r[acc], J[acc], cost[acc] = trial[ok], rt[ok], Jt[ok], ct[ok]
        lam[acc] = np.maximum(lam[acc] / 3.0, 1e-12)
        lam[active[~ok]] *= 4.0
        moved = np.max(np.abs(eff), axis=1, initial=0.0)
        x_ok = moved <= xtol * (1.0 + np.max(np.abs(th), axis=1, initial=0.0))
        f_ok = ok & (fa - cost[active] <= ftol * np.abs(fa))
        f_ok |= ~ok & (lam[active] > 1e12)
        if ptol > 0.0:  # on the step as solved: a projected one need not descend
            Hs = np.einsum("bpq,bq->bp", H, step)
            predicted = -np.einsum("bp,bp->b", g, step) - 0.5 * np.einsum("bp,bp->b", step, Hs)
            f_ok |= predicted <= ptol * np.abs(fa)
        code = np.where(small_g, 1, np.where(f_ok & x_ok, 4, np.where(
            f_ok, 2, np.where(x_ok, 3, -2))))
        if spec.box is not None:
            xr = x[active]
            gone = np.any((xr < spec.box[0]) | (xr > spec.box[1]), axis=1)
            code = np.where(gone & (code < -1), 5, code)
        code[(code < -1) & (nfev[active] >= max_nfev)] = 0
        status[active] = code
        active = active[code < -1]
    at_bound = np.zeros((B, p), dtype=bool)
    if spec.lo is not None:
        at_bound = (x <= spec.lo) | (x >= spec.hi)
    return LSQResult(x, cost, nfev, status, at_bound)


def outcome(res: LSQResult, row: int, what: str) -> tuple[bool, str, str]:
    """``(success, status, message)`` of one problem of ``res`` in the result convention of
    :mod:`rlscale.optimize._outcome`: ``"converged"`` (a tolerance met),
    ``"max_evaluations"`` (status 0) or ``"failed"``."""
    code = int(res.status[row])
    words = STATUS.get(code, "unknown")
    if 1 <= code <= 4:
        return True, "converged", f"{what}: {words} after {int(res.nfev[row])} evaluations"
    status = "max_evaluations" if code == 0 else "failed"
    return False, status, f"{what} did not converge: {words} ({int(res.nfev[row])} evaluations)"
