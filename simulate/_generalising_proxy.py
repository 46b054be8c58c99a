r"""The Gaussian selection model with a *generalising* proxy: linear on ``d`` features.

In :mod:`rlscale.theory.reward` the proxy of each pool candidate is the mean of
its own ``M/n`` comparisons, so its error variance ``σ_n² = τ² n/M`` grows with
the pool and the gain saturates near ``sqrt(2 log M)``.  A parametric reward
model is trained once and applied to any candidate; this module is that
variant, on the same footing (same noisy-margin feedback, same optimisers):

* candidates have features ``φ ~ N(0, I_d)`` under the reference; the gold is
  ``X = (w·φ + sqrt(ν) η)/sqrt(1 + ν)`` with ``|w| = 1`` and ``η ~ N(0, 1)``
  (``ν = 0``: the proxy class is well specified; ``ν > 0``: a part of the
  gold no linear proxy on ``φ`` can see), so ``X ~ N(0, 1)``;
* ``M`` comparisons of fresh reference pairs report ``X_A − X_B + τ ε``; the
  least-squares proxy is ``Ŷ = ŵ·φ`` (regression of the margins on ``Δφ``).

Given ``ŵ``, ``(X, Ŷ)`` are jointly Gaussian with correlation
``ρ = w·ŵ/(|ŵ| sqrt(1 + ν))``, and ``E[X | Ŷ] = ρ·Ŷ/|ŵ|``, so any rule that
selects by the proxy gains exactly ``ρ`` times its standardised proxy gain:
``ρ·e(n)`` for best-of-n at KL ``log n − (n−1)/n``, ``ρ`` times the top-``1/n``
mean for the quantilizer at KL ``log n``, and ``ρ·sqrt(2K)`` for
exponential tilting (:mod:`rlscale.theory.reward`'s arguments with ``σ_n``
replaced by the pool-independent error).  The only randomness is ``ŵ``: with
``G = ΔΦᵀΔΦ ~ Wishart(M, 2 I_d)`` the least-squares error is exactly
``N(0, σ_e² G⁻¹)``, ``σ_e² = τ² + 2ν/(1+ν)``, so one trial costs ``O(d³)``
whatever ``M`` is.  For large ``M``,

.. math::  ρ ≈ \frac{1}{\sqrt{1+ν}} \Big(1 + \frac{(d − 1)(1 + ν) σ_e^2}{2M}\Big)^{-1/2} ,

so ``G(M, K) ≈ ρ(M)·sqrt(2K)``: **no** ``log M`` cap.  More data only moves
``ρ`` towards its ceiling ``1/sqrt(1+ν)``.  The pool model is the special case
of one free parameter per candidate (``d = n``, one-hot features): there the
error dimension grows with the pool, ``(d − 1)/M → n/M``, and that is where
the cap comes from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.simulate._gridworld import as_generator
from rlscale.theory._result import Result
from rlscale.theory._selection_rules import rule_for
from rlscale.theory._validation import check_positive_int, check_real, check_scalar

__all__ = ["GeneralisingProxyGain", "generalising_proxy_gain"]


@dataclass(frozen=True)
class GeneralisingProxyGain(Result):
    """Gold gain of selection on a linear proxy fitted from ``M`` comparisons.

    Attributes
    ----------
    rho, rho_se : float
        Mean correlation of proxy and gold over the fitted ``ŵ`` and its standard error.
    rho_approx : float
        The large-``M`` approximation in the module docstring.
    K : ndarray
    gain : ndarray
        ``E[ρ]·g(K)`` with ``g`` the standardised gain of ``method`` at KL ``K``.
    """

    rho: float
    rho_se: float
    rho_approx: float
    K: np.ndarray
    gain: np.ndarray


def generalising_proxy_gain(M: float, K: Any, *, d: int = 8, noise: float = 1.0,
                            misspecification: float = 0.0, method: str = "bon",
                            trials: int = 2000, rng: Any = None) -> GeneralisingProxyGain:
    """Gold gain of a selection rule on a fitted linear proxy (exact given ``ŵ``).

    Parameters
    ----------
    M : float
        Comparisons, ``>= d``.
    K : array_like
        KL budgets, > 0.
    d : int
        Feature dimension.
    noise : float
        Margin noise ``τ``.
    misspecification : float
        ``ν >= 0``, the gold's variance outside the proxy's features.
    method : {"bon", "quantile", "tilt"}
        Any rule of :data:`rlscale.theory.reward.RULES`: its standardised gain at
        KL ``K`` (``RULES[method].top_at_kl``) times ``ρ``.

    Examples
    --------
    >>> r = generalising_proxy_gain(1e4, [1.0, 10.0, 30.0], d=8, rng=0)
    >>> bool(abs(r.rho - r.rho_approx) < 1e-3)
    True
    >>> bool(r.gain[2] > 1.8 * r.gain[0])      # keeps growing with K: no log M cap
    True
    """
    d = check_positive_int("d", d, maximum=1000)
    M = check_scalar("M", M, low=float(d), high=1e15)
    tau = check_scalar("noise", noise, low=0.0, high=1e100, low_open=True)
    nu = check_scalar("misspecification", misspecification, low=0.0, high=1e100)
    rule = rule_for(method)
    k = np.atleast_1d(check_real("K", K, low=0.0, high=1e100, low_open=True)).astype(float)
    if k.ndim != 1 or k.size > 10**6:
        raise ValueError(f"K must be a 1-D grid of <= 1e6 budgets; got shape {k.shape}")
    trials = check_positive_int("trials", trials, minimum=2, maximum=10**6)
    if trials * d**3 > 10**9:
        raise ValueError(f"trials·d³ must be <= 1e9; got trials={trials} x d={d}")
    gen = as_generator(rng)
    from scipy.stats import wishart

    s2 = tau * tau + 2.0 * nu / (1.0 + nu)
    G = np.atleast_3d(wishart.rvs(df=M, scale=2.0 * np.eye(d), size=trials, random_state=gen))
    G = G.reshape(trials, d, d)
    chol = np.linalg.cholesky(G)  # G = L Lᵀ; e = sqrt(s2)·L⁻ᵀ z has covariance s2·G⁻¹
    z = gen.standard_normal((trials, d, 1))
    err = np.sqrt(s2) * np.linalg.solve(np.swapaxes(chol, 1, 2), z)[..., 0]
    w_hat = err.copy()
    w_hat[:, 0] += 1.0 / np.sqrt(1.0 + nu)  # w = e_1 without loss of generality
    rho = w_hat[:, 0] / np.linalg.norm(w_hat, axis=1) / np.sqrt(1.0 + nu)
    approx = 1.0 / np.sqrt(1.0 + nu) / np.sqrt(1.0 + (d - 1) * (1.0 + nu) * s2 / (2.0 * M))
    std_gain = rule.top_at_kl(k)  # the rule's standardised gain at KL K, through log n
    r = float(rho.mean())
    return GeneralisingProxyGain(r, float(rho.std(ddof=1) / np.sqrt(trials)), float(approx),
                                 k, r * np.asarray(std_gain, float))
