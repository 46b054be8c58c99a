"""Extremes of iid standard normals and the selection quantities built on them.

Everything here is a closed form or a fixed-node quadrature, vectorised over
arrays and valid for real pool sizes ``1 <= n <= 1e300`` (and beyond: ``n`` only
enters through ``log n``).

Formulas and sources
--------------------
* Expected maximum of ``n`` iid N(0,1) (real ``n >= 1``: the law with CDF
  ``Φ(z)^n``).  By inversion the maximum is ``Φ⁻¹(U^{1/n})``; writing
  ``U = exp(-e^w)`` (so ``w`` is standard Gumbel-distributed)::

      e(n) = ∫ Φ⁻¹(exp(-e^w / n)) · exp(w - e^w) dw .

  The Gumbel weight decays doubly exponentially on the right and like ``e^w``
  on the left, and the integrand grows only like ``sqrt(2 (log n - w))``, so a
  fixed composite Gauss–Legendre rule on ``w ∈ [-36, 3.6]`` (7 graded panels
  of 12 nodes) gives relative error below 1e-13 for every ``n >= 2``; ``n``
  enters only through ``exp(w - log n)``, so ``n = 1e300`` cannot overflow.
  For ``1 <= n < 2`` that form cancels (``e(1) = 0``), so there we integrate
  ``e(n) = ∫ z φ(z) expm1(log n + (n-1) log Φ(z)) dz``, whose integrand is
  ``O(n-1)`` pointwise: relative accuracy holds down to ``n = 1 + 1e-15``.
  (Checked against mpmath at 50 digits in ``tests/test_gaussian_extremes.py``.)
* Bounds (Kamath, "Bounds on the expectation of the maximum of samples from a
  Gaussian"): ``sqrt(log n / (π log 2)) <= e(n) <= sqrt(2 log n)``; the lower
  bound is proved for integers ``n >= 1`` (tight at ``n = 2``) and holds for all
  real ``n >= 2`` (checked numerically); it fails for real ``1 < n < 2``, where
  ``e(n) ~ c (n-1)``.
* Concavity: ``e''(n) = -∫ Φ(z)^n (log Φ(z))² dz < 0`` (differentiate
  ``e(n) = ∫_0^∞ (1-Φ^n) - ∫_{-∞}^0 Φ^n`` twice), so ``e(n) >= (n-1)/sqrt(π)``
  on ``[1, 2]`` (chord to ``e(2) = 1/sqrt(π)``).
* Asymptotics (Gumbel limit; Cramér): ``e(n) = b_n + γ/a_n + o(1/a_n)`` with
  ``a_n = sqrt(2 log n)``, ``b_n = a_n - (log log n + log 4π)/(2 a_n)``.
* Best-of-n KL from the reference, continuous rewards (density ratio
  ``n F^{n-1}``; Stiennon et al. 2020, Beirami et al. 2024):
  ``KL = log n - (n-1)/n``.
* Exponential tilting of N(0,1) by ``exp(βr)`` gives N(β, 1): gain β at KL
  β²/2, so gain ``sqrt(2K)`` (the Donsker–Varadhan bound, attained).
* Regressional Goodhart: gold ``X ~ N(0,1)``, proxy ``Y = X + σZ``;
  ``E[X | Y] = Y/(1+σ²)`` so best-of-n on ``Y`` gains ``e(n)/sqrt(1+σ²)``.
* Top-``1/n`` quantile mean (a quantilizer: sample the reference conditioned
  on the proxy being in its top ``1/n`` fraction; KL = ``log n`` exactly):
  ``E[Z | Z >= Φ⁻¹(1-1/n)] = n φ(Φ⁻¹(1-1/n))`` (inverse Mills ratio), for
  ``n >= 2`` evaluated as ``sqrt(2/π)/erfcx(x/sqrt 2)``, ``x = Φ⁻¹(1-1/n)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import log_ndtr, ndtri, ndtri_exp

from rlscale.theory._normal_selection import bon_log_n_for_kl, kl_of_log_n, quantile_mean_log
from rlscale.theory._validation import check_real, return_like

__all__ = [
    "EULER_GAMMA",
    "bon_kl",
    "bon_n_for_kl",
    "expected_max_normal",
    "expected_max_normal_asymptotic",
    "expected_max_normal_bounds",
    "expected_max_normal_log",
    "quantile_mean_normal",
    "regressional_gain",
    "tilt_gain",
]

EULER_GAMMA = 0.5772156649015329
_SQRT_2PI = np.sqrt(2.0 * np.pi)
_CHUNK = 8192  # rows per block of the n < 2 path
_ROWS = 1024  # rows per block of the n >= 2 path
_HUGE_LOG_N = 650.0  # past n = e^650 the n >= 2 path works with log p


def _gauss_legendre(edges: list[float], k: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.legendre.leggauss(k)
    e = np.asarray(edges, dtype=np.float64)
    half, mid = (e[1:, None] - e[:-1, None]) / 2, (e[1:, None] + e[:-1, None]) / 2
    return (half * x + mid).ravel(), (half * w).ravel()


# n >= 2: nodes in w = log(-log U); weights carry the Gumbel density exp(w - e^w).
_W, _WW = _gauss_legendre([-36.0, -16.0, -6.0, -2.0, 0.0, 1.2, 2.2, 3.6], 12)
_EXP_W = np.exp(_W)
_WW = _WW * np.exp(_W - _EXP_W)
# 1 <= n < 2: nodes in z with weights z φ(z); log Φ(z) precomputed once.
_Z, _ZW = _gauss_legendre([-12.0, -8.0, -5.0, -3.0, -1.5, 0.0, 1.5, 3.0, 5.0, 9.0], 16)
_ZW = _ZW * _Z * np.exp(-_Z * _Z / 2) / _SQRT_2PI
_LOGPHI_Z = log_ndtr(_Z)


def _emax_large(log_n: np.ndarray) -> np.ndarray:
    """``e(n)`` for ``n >= 2`` from ``log n``, by the Gumbel-variable quadrature."""
    log_n = np.asarray(log_n, dtype=np.float64)
    out = np.empty_like(log_n)
    huge = log_n > _HUGE_LOG_N
    if huge.any():
        # Past n = e^650, p = e^{w - log n} (1 - O(e^-646)) underflows: take its
        # log directly, max = -Φ⁻¹(exp(w - log n)), valid for any log n.
        out[huge] = -(ndtri_exp(_W - log_n[huge, None]) @ _WW)
    # max = Φ⁻¹(exp(y)) = -Φ⁻¹(p) with y = -e^w/n and upper-tail mass
    # p = -expm1(y); the second form keeps full precision where exp(y) rounds
    # to 1.  Blocks of _ROWS rows keep the work arrays in cache.
    rows = np.flatnonzero(~huge)
    for start in range(0, rows.size, _ROWS):
        block = rows[start:start + _ROWS]
        p = _EXP_W * np.exp(-log_n[block])[:, None]
        np.negative(p, out=p)
        np.expm1(p, out=p)
        np.negative(p, out=p)
        out[block] = -(ndtri(p) @ _WW)
    return out


def expected_max_normal_log(log_n: Any) -> float | np.ndarray:
    """``e(n)`` as a function of ``log n >= 0``, for pool sizes beyond float range.

    Examples
    --------
    >>> round(expected_max_normal_log(1e5), 3)  # n = e^100000; ~ sqrt(2 log n)
    447.199
    """
    t = check_real("log_n", log_n, low=0.0)
    flat = t.ravel()
    out = np.empty_like(flat)
    small = flat < np.log(2.0)
    if small.any():
        out[small] = _emax_small(flat[small])
    if (~small).any():
        out[~small] = _emax_large(flat[~small])
    return return_like(out.reshape(t.shape), log_n)


def _emax_small(log_n: np.ndarray) -> np.ndarray:
    """``e(n)`` for ``1 <= n < 2`` from ``t = log n`` (``n - 1 = expm1(t)``, exact at tiny t)."""
    out = np.empty_like(log_n)
    for start in range(0, log_n.size, _CHUNK):
        t = log_n[start:start + _CHUNK, None]
        # n Φ^{n-1} - 1 without cancellation: expm1(log n + (n-1) log Φ).
        out[start:start + _CHUNK] = np.expm1(t + np.expm1(t) * _LOGPHI_Z) @ _ZW
    return out


def expected_max_normal(n: Any) -> float | np.ndarray:
    """Expected maximum ``e(n)`` of ``n`` iid standard normal variables.

    Real ``n >= 1`` is allowed (the law with CDF ``Φ^n``); arrays broadcast.
    Relative error below 1e-12 against mpmath at 50 digits for
    ``n ∈ [1, 1e300]`` (see the module docstring for the quadrature).

    Parameters
    ----------
    n : array_like
        Pool size(s), ``n >= 1``; ``n = inf`` is rejected.

    Returns
    -------
    float or numpy.ndarray
        ``E[max(Z_1, ..., Z_n)]``; a float for scalar input.

    Examples
    --------
    >>> round(expected_max_normal(2), 12)  # 1/sqrt(pi)
    0.564189583548
    >>> [round(float(v), 6) for v in expected_max_normal([1, 10, 1e300])]
    [0.0, 1.538753, 37.062646]
    """
    arr = check_real("n", n, low=1.0)
    flat = arr.ravel()
    out = np.zeros_like(flat)
    small = flat < 2.0
    if small.any():
        out[small] = _emax_small(np.log1p(flat[small] - 1.0))
    if (~small).any():
        out[~small] = _emax_large(np.log(flat[~small]))
    return return_like(out.reshape(arr.shape), n)


def expected_max_normal_bounds(n: Any) -> tuple[float | np.ndarray, float | np.ndarray]:
    """Kamath's bounds ``sqrt(log n/(π log 2)) <= e(n) <= sqrt(2 log n)``.

    The upper bound holds for all real ``n >= 1``.  The lower bound is proved
    for integer ``n``; for real ``n`` it holds on ``n >= 2`` (checked against
    :func:`expected_max_normal`) but not on ``1 < n < 2``, where this function
    returns the valid chord bound ``(n - 1)/sqrt(π)`` instead (``e`` is
    concave, see the module docstring).

    Examples
    --------
    >>> lo, hi = expected_max_normal_bounds(1e6)
    >>> round(lo, 4), round(expected_max_normal(1e6), 4), round(hi, 4)
    (2.5188, 4.8629, 5.2565)
    """
    arr = check_real("n", n, low=1.0)
    ln = np.log(arr)
    lo = np.where(arr >= 2.0, np.sqrt(ln / (np.pi * np.log(2.0))), (arr - 1.0) / np.sqrt(np.pi))
    hi = np.sqrt(2.0 * ln)
    return return_like(lo, n), return_like(hi, n)


def expected_max_normal_asymptotic(n: Any) -> float | np.ndarray:
    """Classical expansion ``e(n) ≈ b_n + γ/a_n`` (Gumbel limit), for ``n > 1``.

    ``a_n = sqrt(2 log n)``, ``b_n = a_n - (log log n + log 4π)/(2 a_n)``,
    ``γ`` Euler's constant.  The error is ``O(log log n / log n)`` relative to
    the leading term; about 0.3 % at ``n = 1e6`` and 0.02 % at ``n = 1e300``.

    Examples
    --------
    >>> round(expected_max_normal_asymptotic(1e300), 3)
    37.063
    """
    arr = check_real("n", n, low=1.0, low_open=True)
    ln = np.log(arr)
    a = np.sqrt(2.0 * ln)
    b = a - (np.log(ln) + np.log(4.0 * np.pi)) / (2.0 * a)
    return return_like(b + EULER_GAMMA / a, n)


def bon_kl(n: Any) -> float | np.ndarray:
    """KL of best-of-n from the reference: ``log n - (n-1)/n`` (real ``n >= 1``).

    Examples
    --------
    >>> round(bon_kl(2), 6)  # log 2 - 1/2
    0.193147
    >>> f"{bon_kl(1 + 1e-9):.6e}"  # ~ (n-1)^2/2, no cancellation
    '5.000001e-19'
    >>> round(bon_kl(1e300), 3)
    689.776
    """
    arr = check_real("n", n, low=1.0)
    return return_like(kl_of_log_n(np.log1p(arr - 1.0)), n)


#: Largest KL whose best-of-n pool size e^t is a finite float (t - 1 + e^-t <= 708).
_BON_KL_MAX = 708.0


def bon_n_for_kl(kl: Any) -> float | np.ndarray:
    """The real pool size ``n >= 1`` whose best-of-n KL equals ``kl`` (inverse of :func:`bon_kl`).

    Solved by Newton's method in ``t = log n`` (``d KL/dt = 1 - 1/n``), started
    above the root where the map is convex, so it converges monotonically.
    ``kl`` is limited to 708 (``n`` stays below the float maximum, 1.8e308);
    larger budgets are refused rather than returned as ``inf``.

    Examples
    --------
    >>> round(bon_n_for_kl(bon_kl(7.5)), 9)
    7.5
    """
    k = check_real("kl", kl, low=0.0, high=_BON_KL_MAX)
    return return_like(np.exp(bon_log_n_for_kl(k)), kl)


def tilt_gain(K: Any) -> float | np.ndarray:
    """Gain ``sqrt(2K)`` of exponential tilting of a N(0,1) reward at KL ``K``.

    Examples
    --------
    >>> tilt_gain(2.0)
    2.0
    >>> f"{tilt_gain(1e308):.6e}"  # sqrt(2) * 1e154, no overflow in 2K
    '1.414214e+154'
    """
    k = check_real("K", K, low=0.0)
    # sqrt(2K), with 2K formed only where it cannot overflow (K up to 1.8e308)
    out = np.array(np.sqrt(2.0) * np.sqrt(k))
    small = k < 1e300
    out[small] = np.sqrt(2.0 * k[small])
    return return_like(out, K)


def regressional_gain(n: Any, noise_sd: Any) -> float | np.ndarray:
    """Gold gain ``e(n)/sqrt(1+σ²)`` of best-of-n on the proxy ``X + σZ``.

    Examples
    --------
    >>> round(regressional_gain(2, 1.0), 6)  # 1/sqrt(2 pi)
    0.398942
    """
    e = np.asarray(expected_max_normal(n))
    s = check_real("noise_sd", noise_sd, low=0.0)
    try:
        np.broadcast_shapes(e.shape, s.shape)
    except ValueError:
        raise ValueError(f"the shapes of n {e.shape} and noise_sd {s.shape} do not "
                         "broadcast together") from None
    return return_like(e / np.hypot(1.0, s), n, noise_sd)  # hypot: no overflow at σ = 1e300


def quantile_mean_normal(n: Any) -> float | np.ndarray:
    """Mean of N(0,1) over its top ``1/n`` fraction: ``n φ(Φ⁻¹(1 - 1/n))``.

    This is the gain of a quantilizer with KL ``log n``.  Computed in log space
    (``Φ⁻¹(1 - 1/n) = -Φ⁻¹(exp(-log n))``) so ``n = 1e300`` is exact to
    rounding.

    Examples
    --------
    >>> round(quantile_mean_normal(2), 6)  # 2 φ(0) = sqrt(2/pi)
    0.797885
    >>> quantile_mean_normal(1)
    0.0
    """
    arr = check_real("n", n, low=1.0)
    return return_like(quantile_mean_log(np.log(arr)), n)
