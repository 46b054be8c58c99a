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

from typing import Any

import numpy as np

from rlscale.simulate._gridworld import as_generator
from rlscale.theory._validation import check_positive_int, check_real, check_scalar

__all__ = ["bt_labels", "fit_bradley_terry"]


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
    converged = False
    for _ in range(max_iter):
        z = x @ theta
        p = 0.5 * (1.0 + np.tanh(0.5 * z))
        grad = x.T @ (yy - p) - lam * theta
        hess = (x * (p * (1.0 - p))[:, None]).T @ x + lam * np.eye(d)
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        # Damped Newton: halve until the penalised log-likelihood does not decrease.
        base = _loglik(z, yy) - 0.5 * lam * theta @ theta
        t = 1.0
        while t > 1e-8:
            new = theta + t * step
            if _loglik(x @ new, yy) - 0.5 * lam * new @ new >= base - 1e-12:
                break
            t *= 0.5
        theta = theta + t * step
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
