"""Log-space selection quantities of the standard normal, shared by the Gaussian-extremes
module and the selection rules of the reward-optimisation law.

Both :mod:`rlscale.theory._gaussian` (the public functions ``bon_kl``,
``bon_n_for_kl``, ``quantile_mean_normal``) and
:mod:`rlscale.theory._selection_rules` (the rules' pool limits and gains, for pool
sizes ``n = e^t`` beyond the float range) import these three from here, so neither
reaches into the other's private names.

Formulas and sources
--------------------
* Best-of-n KL from the reference for continuous rewards (density ratio
  ``n F^{n-1}``; Stiennon et al. 2020, Beirami et al. 2024):
  ``KL = log n − (n−1)/n``, i.e. ``t − 1 + e^{−t}`` at ``t = log n``.
* Its inverse, by Newton's method on the convex increasing map ``t ↦ t − 1 + e^{−t}``
  (``d KL/dt = 1 − e^{−t}``) from a start above the root.
* Top-``1/n`` mean of N(0, 1) (inverse Mills ratio):
  ``E[Z | Z >= x] = φ(x)/Q(x)``, ``x = Φ⁻¹(1 − 1/n)``, ``Q`` the upper tail.
"""

from __future__ import annotations

import numpy as np
from scipy.special import erfcx, ndtri_exp

__all__ = ["bon_log_n_for_kl", "kl_of_log_n", "quantile_mean_log"]

_SQRT_2PI = np.sqrt(2.0 * np.pi)


def kl_of_log_n(t: np.ndarray) -> np.ndarray:
    """``t - 1 + e^{-t}`` (best-of-n KL at ``t = log n``) without cancellation.

    Examples
    --------
    >>> float(kl_of_log_n(np.log(2.0)))  # log 2 - 1/2
    0.1931471805599453
    """
    t = np.asarray(t, dtype=np.float64)
    out = np.array(t + np.expm1(-t))
    # For small t the two terms cancel to O(t²): use the Taylor series
    # sum_{k>=2} (-1)^k t^k / k!, truncated where the next term is < 1e-17 t².
    small = t < 0.1
    ts = t[small]
    series = np.zeros_like(ts)
    term = ts * ts / 2.0
    for k in range(3, 12):
        series += term
        term = -term * ts / k
    out[small] = series
    return out


def bon_log_n_for_kl(k: np.ndarray) -> np.ndarray:
    """``t = log n >= 0`` with ``kl_of_log_n(t) == k`` (Newton, monotone from above).

    Examples
    --------
    >>> round(float(np.exp(bon_log_n_for_kl(np.log(2.0) - 0.5))), 12)
    2.0
    """
    k = np.asarray(k, dtype=np.float64)
    # KL(t) = t - 1 + e^{-t} is convex increasing on t >= 0; the start
    # t0 = k + 1 >= root, and t0 = sqrt(2k) for small k (at most one step below
    # the root: Newton on a convex increasing map lands above it and then descends).
    t = np.array(k + 1.0)
    small = k < 1.0
    t[small] = np.sqrt(2.0 * k[small])
    for _ in range(60):
        f = kl_of_log_n(t) - k
        fp = -np.expm1(-t)
        step = np.divide(f, fp, out=np.zeros_like(t), where=fp > 0)
        t = np.maximum(t - step, 0.0)
        if np.all(np.abs(step) <= 1e-15 * t):  # at t = 0, fp = 0 and the step is 0
            break
    return t


def quantile_mean_log(t: np.ndarray) -> np.ndarray:
    """Top-``e^{-t}`` mean ``φ(x)/Q(x)``, ``x = Φ⁻¹(1 − e^{-t})``, ``Q`` the upper tail.

    For ``x >= 0`` (``n >= 2``) it is ``sqrt(2/π)/erfcx(x/sqrt 2)`` (as
    ``Q(x) = erfcx(x/√2) e^{-x²/2}/2``): no cancellation at any ``t``, where
    ``exp(t − x²/2)`` loses ``t·1e-16`` absolutely (1e-6 relative at ``t = 1e8``).
    For ``x < 0`` ``x²`` is small and ``n φ(x) = exp(t − x²/2)/sqrt(2π)`` is exact.

    Examples
    --------
    >>> round(float(quantile_mean_log(np.log(2.0))), 12)  # 2 φ(0) = sqrt(2/π)
    0.797884560803
    """
    t = np.asarray(t, dtype=np.float64)
    out = np.zeros(t.shape)  # n = 1 (t = 0): no selection, mean 0
    live = t > 0
    tl = t[live]
    x = -ndtri_exp(-tl)
    pos = x >= 0.0
    vals = np.empty_like(x)
    vals[pos] = np.sqrt(2.0 / np.pi) / erfcx(x[pos] / np.sqrt(2.0))
    xn = x[~pos]  # t < log 2 on this branch
    vals[~pos] = np.exp(tl[~pos] - xn * xn / 2) / _SQRT_2PI
    out[live] = vals
    return out
