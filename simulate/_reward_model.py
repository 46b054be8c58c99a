"""Proxy reward models from pairwise comparisons: Bradley–Terry maximum likelihood.

**Comparisons.**  Pairs of reference-policy trajectories ``(A, B)`` with
feature sums ``Φ_A, Φ_B`` are labelled by the gold reward with logistic noise
of scale ``s`` (Bradley & Terry 1952; the RLHF preference model of
Christiano et al. 2017):

    P(A ≻ B) = σ((R_A − R_B)/s),   σ(x) = 1/(1 + e^{−x}),

with ``R`` in units of the gold reward's standard deviation under the
reference, so ``s`` is comparable with the Gaussian model's noise level
(``τ = 2s``, :mod:`rlscale.theory.reward`).

**Proxy.**  A linear reward ``r̂ = θ·Φ_C`` on a column subset ``C`` of the
features (the model's *capacity*: all of the gold's features is
well-specified; a subset is misspecified, since no θ reproduces the gold),
fitted by maximising the Bradley–Terry log-likelihood

    ℓ(θ) = Σ_i [y_i log σ(θ·Δ_i) + (1 − y_i) log σ(−θ·Δ_i)] − (λ/2)‖θ‖²,
    Δ_i = Φ_{A,i,C} − Φ_{B,i,C},

by Newton's method (the logistic-regression likelihood is concave; gradient
``Δᵀ(y − p) − λθ``, Hessian ``−Δᵀ diag(p(1−p)) Δ − λI``).  The weak ridge
``λ`` (default ``1e-2``) only makes the maximiser exist when the labels are
separable, which happens at small ``M``; the unregularised MLE is then
infinite.  The scale of ``θ̂`` absorbs ``1/s``; the optimisers downstream are
scale-free (they act at a KL budget), so it does not matter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.simulate._gridworld import as_generator
from rlscale.theory._result import Result
from rlscale.theory._validation import check_positive_int, check_real, check_scalar

__all__ = ["BtSparseFit", "bt_labels", "fit_bradley_terry", "fit_bradley_terry_sparse",
           "onehot_differences"]


def bt_labels(gold_a: Any, gold_b: Any, s: float, rng: Any) -> np.ndarray:
    """Bradley–Terry labels ``y = 1{A ≻ B}`` with ``P = σ((R_A − R_B)/s)``.

    Examples
    --------
    >>> import numpy as np
    >>> y = bt_labels(np.ones(100_000), np.zeros(100_000), 1.0, rng=0)
    >>> bool(abs(y.mean() - 1 / (1 + np.exp(-1.0))) < 0.005)
    True
    """
    s = check_scalar("s", s, low=0.0, low_open=True)
    a, b = check_real("gold_a", gold_a), check_real("gold_b", gold_b)
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"gold_a and gold_b must broadcast together; got shapes {a.shape} "
                         f"and {b.shape}") from None
    if int(np.prod(shape)) > 10**8:
        raise ValueError(f"gold_a and gold_b must hold <= 1e8 pairs; got shape {shape}")
    gen = as_generator(rng)
    with np.errstate(over="ignore"):  # a margin beyond float64 is a sure preference
        z = (a - b) / s
    p = 0.5 * (1.0 + np.tanh(0.5 * z))  # σ(z) without overflow
    return (gen.random(z.shape) < p).astype(float)


def fit_bradley_terry(delta: Any, y: Any, *, ridge: float = 1e-2, max_iter: int = 100,
                      tol: float = 1e-10) -> np.ndarray:
    """Bradley–Terry MLE (weak ridge) of ``θ`` from feature differences and labels.

    Parameters
    ----------
    delta : array, shape (M, d)
        ``Φ_A − Φ_B`` restricted to the model's features.
    y : array, shape (M,)
        1 where ``A`` was preferred, else 0.
    ridge : float
        ``λ >= 0``; with ``λ = 0`` separable labels (no finite maximiser: Newton
        does not converge, or the fitted probabilities saturate) raise ``ValueError``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> d = rng.standard_normal((200_000, 2))
    >>> y = bt_labels(d @ [1.0, -0.5], 0.0, 1.0, rng)
    >>> theta = fit_bradley_terry(d, y)
    >>> bool(np.all(np.abs(theta - [1.0, -0.5]) < 0.02))
    True
    """
    x = check_real("delta", delta, low=-1e100, high=1e100)
    if x.ndim != 2:
        raise ValueError(f"delta must be 2-D (comparisons, features); got shape {x.shape}")
    yy = check_real("y", y, low=0.0, high=1.0)
    if yy.shape != (x.shape[0],):
        raise ValueError(f"y must have shape ({x.shape[0]},); got {yy.shape}")
    lam = check_scalar("ridge", ridge, low=0.0, high=1e100)
    max_iter = check_positive_int("max_iter", max_iter, maximum=10**4)
    tol = check_scalar("tol", tol, low=0.0, high=1.0)
    if x.size > 10**8 or x.shape[1] > 10**3:
        raise ValueError(f"delta must have <= 1e8 entries and <= 1000 features; got shape "
                         f"{x.shape}")
    d = x.shape[1]
    theta = np.zeros(d)
    z = x @ theta
    base = _loglik(z, yy) - 0.5 * lam * theta @ theta
    converged = False
    for _ in range(max_iter):
        p = 0.5 * (1.0 + np.tanh(0.5 * z))
        grad = x.T @ (yy - p) - lam * theta
        hess = (x * (p * (1.0 - p))[:, None]).T @ x + lam * np.eye(d)
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        # Damped Newton: halve until the penalised log-likelihood does not decrease.  The
        # accepted point's margins and objective are the next iteration's (issue 26: they
        # were computed again there, a third of the fit's arithmetic; the same bits).
        t = 1.0
        while t > 1e-8:
            new = theta + t * step
            z_new = x @ new
            value = _loglik(z_new, yy) - 0.5 * lam * new @ new
            if value >= base - 1e-12:
                break
            t *= 0.5
        else:  # no ascent down to t = 1e-8: the tiny step is taken unchecked, as before
            new = theta + t * step
            z_new = x @ new
            value = _loglik(z_new, yy) - 0.5 * lam * new @ new
        theta = theta + t * step
        z, base = z_new, value
        if np.max(np.abs(t * step)) < tol * (1.0 + np.max(np.abs(theta))):
            converged = True
            break
    # Without a ridge, separable labels drive the margins to infinity: Newton stalls once
    # the fitted probabilities saturate (|θ·Δ| > 30, p within 1e-13 of 0 or 1).
    saturated = lam == 0 and float(np.max(np.abs(x @ theta), initial=0.0)) > 30.0
    if not np.all(np.isfinite(theta)) or (lam == 0 and not converged) or saturated:
        raise ValueError("the Bradley-Terry MLE does not exist for these labels (separable); "
                         "use ridge > 0")
    return theta


def _loglik(z: np.ndarray, y: np.ndarray) -> float:
    # log σ(z) = −log(1 + e^{−z}), computed with logaddexp.
    return float(-np.sum(y * np.logaddexp(0.0, -z) + (1.0 - y) * np.logaddexp(0.0, z)))


@dataclass(frozen=True)
class BtSparseFit(Result):
    """Outcome of :func:`fit_bradley_terry_sparse`.

    Attributes
    ----------
    theta : ndarray, shape (d,)
    success : bool
        L-BFGS met its tolerance.
    nit : int
        Iterations.
    message : str
    """

    theta: np.ndarray
    success: bool
    nit: int
    message: str


def onehot_differences(index_a: Any, index_b: Any, n_features: int):
    """``Δ = Φ_A − Φ_B`` as a ``scipy.sparse`` CSR matrix ``(M, d)`` from one-hot indices.

    Item ``A`` of comparison ``i`` switches on the features ``index_a[i]``
    (``(M, F)`` integers; a repeat counts twice), item ``B`` those of
    ``index_b[i]``; shared features cancel.

    Examples
    --------
    >>> onehot_differences([[0, 1]], [[1, 2]], 3).toarray().tolist()
    [[1.0, 0.0, -1.0]]
    """
    import scipy.sparse as sp

    d = check_positive_int("n_features", n_features, maximum=10**8)
    ia, ib = np.asarray(index_a), np.asarray(index_b)
    for name, ix in (("index_a", ia), ("index_b", ib)):
        if ix.ndim != 2 or not np.issubdtype(ix.dtype, np.integer) or (
                ix.size and (ix.min() < 0 or ix.max() >= d)):
            raise ValueError(f"{name} must be a 2-D integer array of feature indices in "
                             f"0..{d - 1}; got shape {ix.shape}, dtype {ix.dtype}")
    if ia.shape != ib.shape:
        raise ValueError(f"index_a and index_b must have one shape; got {ia.shape} and "
                         f"{ib.shape}")
    M, F = ia.shape
    if M * F > 10**8:
        raise ValueError(f"index_a must hold <= 1e8 entries; got shape {ia.shape}")
    rows = np.repeat(np.arange(M), 2 * F)
    cols = np.concatenate([ia, ib], axis=1).reshape(-1)
    vals = np.tile(np.repeat([1.0, -1.0], F), M)
    x = sp.csr_matrix((vals, (rows, cols)), shape=(M, d))  # duplicates summed
    x.eliminate_zeros()
    return x


def fit_bradley_terry_sparse(delta: Any, y: Any, *, ridge: Any = 1.0, theta0: Any = None,
                             tol: float = 1e-10, max_iter: int = 200) -> BtSparseFit:
    """Ridge Bradley–Terry MAP on a sparse design of feature differences (truncated Newton).

    Minimises the negative of the module docstring's ``ℓ`` with a per-feature ridge,

        f(θ) = Σ_i softplus(−t_i θ·Δ_i) + ½ Σ_j λ_j θ_j²,   t_i = 2y_i − 1,

    gradient ``g = Δᵀ(σ(Δθ) − y) + λ ⊙ θ``, Hessian ``H = Δᵀ diag(p(1−p)) Δ +
    diag(λ)`` (never formed: ``Hv`` is two sparse products).  Each Newton step
    solves ``H s = −g`` by conjugate gradients preconditioned with ``diag(H)``
    (one-hot designs are nearly diagonal: a feature's count dominates its
    row), to the forcing tolerance ``‖r‖ <= min(0.5, √‖g‖)‖g‖`` (Eisenstat &
    Walker 1996; Nocedal & Wright 2006, §7.1), then backtracks to the Armijo
    condition.  ``f`` is strictly convex for ``λ > 0``; the fit stops when the
    Newton decrement ``−gᵀs/2`` (an estimate of ``f − min f``) is below
    ``tol·max(1, M)``.  With ``λ_j = s²/σ_j²`` (label noise ``s``, prior
    variance ``σ_j²`` of the gold's entry ``j``) it is the posterior mode under a
    Gaussian prior on the entries scaled by ``1/s``.

    Parameters
    ----------
    delta : scipy.sparse matrix or array, shape (M, d)
        ``Φ_A − Φ_B`` (:func:`onehot_differences` for one-hot features).
    y : array, shape (M,)
        1 where ``A`` was preferred, else 0.
    ridge : float or array of shape (d,)
        ``λ > 0``.
    theta0 : array, optional
        Start (a warm start: the fit at fewer comparisons); default zero.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> ia, ib = rng.integers(0, 3, size=(40_000, 1)), rng.integers(0, 3, size=(40_000, 1))
    >>> truth = np.array([0.5, 0.0, -0.5])
    >>> y = bt_labels(truth[ia[:, 0]], truth[ib[:, 0]], 1.0, rng)
    >>> fit = fit_bradley_terry_sparse(onehot_differences(ia, ib, 3), y, ridge=1e-6)
    >>> th = fit.theta - fit.theta.mean()           # only differences are identified
    >>> fit.success, bool(np.all(np.abs(th - truth) < 0.03))
    (True, True)
    """
    import scipy.sparse as sp

    if sp.issparse(delta):
        x = sp.csr_matrix(delta, dtype=float)
        if x.ndim != 2 or (x.nnz and not np.all(np.isfinite(x.data))):
            raise ValueError(f"delta must be a finite 2-D matrix; got shape {x.shape}")
    else:
        x = sp.csr_matrix(check_real("delta", delta, low=-1e100, high=1e100))
    M, d = x.shape
    yy = check_real("y", y, low=0.0, high=1.0)
    if yy.shape != (M,):
        raise ValueError(f"y must have shape ({M},); got {yy.shape}")
    lam = check_real("ridge", ridge, low=0.0, high=1e100, low_open=True)
    lam = np.broadcast_to(lam, (d,)).astype(float) if lam.ndim == 0 else lam
    if lam.shape != (d,):
        raise ValueError(f"ridge must be a scalar or have shape ({d},); got {lam.shape}")
    tol = check_scalar("tol", tol, low=0.0, high=1.0, low_open=True)
    max_iter = check_positive_int("max_iter", max_iter, maximum=10**5)
    theta = np.zeros(d) if theta0 is None else check_real(
        "theta0", theta0, low=-1e100, high=1e100).astype(float)
    if theta.shape != (d,):
        raise ValueError(f"theta0 must have shape ({d},); got {theta.shape}")
    xt = x.T.tocsr()  # CSR of the transpose: both products run row-wise
    xt_sq = xt.multiply(xt).tocsr()
    t = 2.0 * yy - 1.0

    def objective(z, th):
        return float(np.sum(np.logaddexp(0.0, -t * z))) + 0.5 * float(np.dot(lam * th, th))

    z = x @ theta
    f = objective(z, theta)
    stop = tol * max(1.0, M)
    for it in range(1, max_iter + 1):
        p = 0.5 * (1.0 + np.tanh(0.5 * z))
        g = xt @ (p - yy) + lam * theta
        w = p * (1.0 - p)
        diag = xt_sq @ w + lam
        step = _pcg(lambda v, w=w: xt @ (w * (x @ v)) + lam * v, -g, 1.0 / diag,
                    min(0.5, np.sqrt(np.linalg.norm(g))) * np.linalg.norm(g))
        slope = float(np.dot(g, step))
        if -0.5 * slope <= stop:
            return BtSparseFit(theta, True, it - 1, "Newton decrement below tol")
        zs = x @ step
        a = 1.0
        while True:  # Armijo backtracking; a descent direction, so it terminates
            f_new = objective(z + a * zs, theta + a * step)
            if f_new <= f + 1e-4 * a * slope or a < 1e-12:
                break
            a *= 0.5
        theta, z, f = theta + a * step, z + a * zs, f_new
        if not np.isfinite(f):
            raise ValueError("the Bradley-Terry fit diverged (non-finite objective)")
    return BtSparseFit(theta, False, max_iter, f"max_iter = {max_iter} Newton steps reached")


def _pcg(hv, b: np.ndarray, minv: np.ndarray, atol: float, max_iter: int = 200) -> np.ndarray:
    """Preconditioned conjugate gradients for ``H s = b`` from 0 (Nocedal & Wright Alg. 5.3)."""
    s = np.zeros_like(b)
    r = b.copy()
    zr = minv * r
    p = zr.copy()
    rz = float(np.dot(r, zr))
    for _ in range(max_iter):
        if np.linalg.norm(r) <= atol:
            break
        hp = hv(p)
        alpha = rz / float(np.dot(p, hp))
        s += alpha * p
        r -= alpha * hp
        zr = minv * r
        rz_new = float(np.dot(r, zr))
        p = zr + (rz_new / rz) * p
        rz = rz_new
    return s
