r"""Inverses of the reward law: of the model gain ``G(M, K)`` and of its Θ form.

:func:`comparisons_needed` and :func:`kl_needed` invert the **exact** gain of
rlscale's selection model for the chosen ``method`` and noise level ``τ``, not
its ``Θ`` form (those inverses, closed forms ``exp(G²/c²)`` and ``G²/c²``, are
:func:`comparisons_needed_theta` and :func:`kl_needed_theta` at the end of this
module).  The ``Θ`` form with ``c = √2`` is only the
asymptotic shape: at ``K = 4``, ``τ = 1`` best-of-n needs about 171
comparisons for a gain of 2, where ``exp(2²/2) = 7.39`` is what the ``Θ``
inverse says.

Derivation (monotonicity, which makes bisection exact)
------------------------------------------------------
``G(M, K) = sup_{n ∈ P(K)} g_n · (1 + κτ²n/M)^{-1/2}`` where ``P(K)`` is the
set of pool sizes the method's KL allows and ``g_n`` the noise-free gain of
pool ``n`` (module docstring of :mod:`rlscale.theory.reward`).

* In ``M`` (``K`` fixed): every term rises strictly with ``M`` when ``τ > 0``,
  so ``G`` is continuous and strictly increasing in ``M``, with supremum the
  noise-free gain ``G(∞, K) = sup_{n ∈ P(K)} g_n`` (``reward.gain(·, K,
  noise=0)``), **not attained** at any finite ``M``.  A target ``g`` is
  reachable at ``K`` iff ``g < G(∞, K)`` (or ``τ = 0`` and ``g <= G(∞, K)``).
* In ``K`` (``M`` fixed): ``P(K)`` grows with ``K``, so ``G`` is
  non-decreasing; the pool gain is unimodal in ``log n`` (log-concave
  numerator over the log-convex ``sqrt(1 + a n)``), so ``G`` rises strictly
  until ``P(K)`` contains the best pool ``n*`` and is constant beyond.  Its
  supremum ``max_n`` of the pool gain **is attained** (at ``K(n*)``) when
  ``τ > 0``; with ``τ = 0`` it is unbounded.  ``n*`` satisfies
  ``log n* <= max(log(M/(κτ²)), 3)``: at the optimum
  ``d log g_n/d log n = a n/(2(1 + a n))`` with ``a = κτ²/M``, and
  ``d log g_n/d log n <= 1/(2 log n)`` for all three methods (``g_n <=
  sqrt(2 log n)`` up to lower-order terms), so ``a n* <= 1/(log n* − 1)``.

Both inverses therefore bisect a monotone function **in log space** (``log M``
on ``[0, log(1.8e308)]``, ``log K`` on ``[log 1e-300, log K_hi]``) down to the
last floating-point bit and return the smallest argument whose gain reaches
the target (the upper end of the final bracket), so ``gain(comparisons_needed
(g, K), K) == g`` to about 1e-13 relative wherever ``g`` is reachable.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from rlscale.theory._selection_rules import rule_for
from rlscale.theory._validation import check_real, check_scalar, return_like

__all__ = ["comparisons_needed", "comparisons_needed_theta", "kl_needed", "kl_needed_theta"]

#: ``log`` of the largest float: ``M`` is a float, so at most ``e^709.78``.
LOG_M_MAX = math.log(sys.float_info.max)
#: Smallest KL budget searched (``log`` of 1e-300); a target reached there returns it.
LOG_K_MIN = math.log(1e-300)


def _bisect(f: Any, lo: np.ndarray, hi: np.ndarray, iterations: int = 200) -> np.ndarray:
    """Smallest ``x`` in ``[lo, hi]`` with ``f(x) >= 0`` for non-decreasing ``f`` (vectorised).

    Assumes ``f(hi) >= 0``; returns the upper end of the final bracket, which
    stops shrinking once ``lo`` and ``hi`` are adjacent floats.
    """
    lo, hi = np.array(lo, dtype=np.float64), np.array(hi, dtype=np.float64)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        moving = (mid > lo) & (mid < hi)
        if not np.any(moving):
            break
        up = f(mid) >= 0
        hi = np.where(moving & up, mid, hi)
        lo = np.where(moving & ~up, mid, lo)
    return hi


def comparisons_needed(target: Any, k: Any, noise: Any = 1.0, method: str = "bon"
                       ) -> float | np.ndarray:
    """Smallest ``M >= 1`` with ``reward.gain(M, k, noise, method) >= target`` (exact model).

    Bisection in ``log M`` of the exact gain (see the module docstring for
    why it is monotone); ``M = 1`` when even one comparison reaches the target.

    Parameters
    ----------
    target : array_like
        Gain to reach, ``>= 0``.
    k : array_like
        KL budget ``K >= 0``.
    noise : array_like
        Comparison noise ``τ >= 0``.
    method : {"bon", "quantile", "tilt"}

    Returns
    -------
    float or numpy.ndarray
        ``M`` with ``gain(M, K) == target`` to about 1e-13 relative.

    Raises
    ------
    ValueError
        When a target is unreachable at its ``K``: at or above the supremum
        ``G(∞, K)`` (the noise-free gain, never attained with noise), or
        needing more than 1.8e308 comparisons.  The message gives the
        supremum.

    Examples
    --------
    >>> from rlscale.theory import reward
    >>> m = reward.comparisons_needed(2.0, 4.0, noise=1.0, method="bon")
    >>> round(float(m), 1), round(float(reward.gain(m, 4.0)), 12)
    (169.1, 2.0)
    >>> reward.comparisons_needed(3.0, 4.0)
    Traceback (most recent call last):
    ...
    ValueError: target gain 3 is unreachable by bon at K=4: ... supremum 2.6433 ...
    """
    from rlscale.theory import reward

    rule_for(method)
    g = check_real("target", target, low=0.0)
    kk = check_real("K", k, low=0.0)
    tt = check_real("noise", noise, low=0.0)
    g_b, k_b, t_b = (np.array(a, dtype=np.float64) for a in np.broadcast_arrays(g, kk, tt))
    sup = np.asarray(reward.gain(1.0, k_b, 0.0, method), dtype=np.float64)
    noisy = t_b > 0
    unreachable = np.where(noisy, g_b >= sup, g_b > sup) & (g_b > 0)
    if np.any(unreachable):
        i = np.unravel_index(np.argmax(unreachable), unreachable.shape)
        raise ValueError(
            f"target gain {g_b[i]:g} is unreachable by {method} at K={k_b[i]:g}: the gain "
            f"rises with M towards its supremum {sup[i]:.5g} (noise-free, M -> infinity), "
            f"never reached; raise K (kl_needed gives the budget at a given M) or lower the "
            f"target")
    top = np.asarray(reward.gain(math.exp(LOG_M_MAX), k_b, t_b, method), dtype=np.float64)
    beyond = (top < g_b) & noisy
    if np.any(beyond):
        i = np.unravel_index(np.argmax(beyond), beyond.shape)
        raise ValueError(
            f"target gain {g_b[i]:g} by {method} at K={k_b[i]:g} and noise={t_b[i]:g} needs "
            f"more than 1.8e308 comparisons (gain there {top[i]:.6g}, supremum "
            f"{sup[i]:.6g}); M is a float")
    base = np.asarray(reward.gain(1.0, k_b, t_b, method), dtype=np.float64)
    done = base >= g_b

    def f(log_m: np.ndarray) -> np.ndarray:
        return reward.gain(np.exp(log_m), k_b, t_b, method) - g_b

    log_m = _bisect(f, np.zeros_like(g_b), np.where(done, 0.0, LOG_M_MAX))
    return return_like(np.exp(np.where(done, 0.0, log_m)), target, k, noise)


def kl_needed(target: Any, m: Any, noise: Any = 1.0, method: str = "bon"
              ) -> float | np.ndarray:
    """Smallest ``K`` with ``reward.gain(m, K, noise, method) >= target`` (exact model).

    Bisection in ``log K`` of the exact gain; ``0`` for a zero target.  With
    noise the gain saturates once the KL budget admits the best pool, so a
    target above that maximum is unreachable at this ``M``.

    Parameters
    ----------
    target : array_like
        Gain to reach, ``>= 0``.
    m : array_like
        Number of comparisons ``M >= 1``.
    noise : array_like
        Comparison noise ``τ >= 0``.
    method : {"bon", "quantile", "tilt"}

    Returns
    -------
    float or numpy.ndarray
        ``K`` with ``gain(M, K) == target`` to about 1e-13 relative.

    Raises
    ------
    ValueError
        When a target exceeds the best gain any KL budget reaches at ``M``
        (the message gives it), or needs ``K`` above 1e12.

    Examples
    --------
    >>> from rlscale.theory import reward
    >>> kk = reward.kl_needed(2.0, 1e6, noise=1.0, method="tilt")
    >>> round(float(kk), 6), round(float(reward.gain(1e6, kk, method="tilt")), 12)
    (2.000015, 2.0)
    >>> reward.kl_needed(5.0, 1e6)
    Traceback (most recent call last):
    ...
    ValueError: target gain 5 is unreachable by bon at M=1e+06: the best gain ... is 4.1811 ...
    """
    from rlscale.theory import reward

    rule_for(method)
    g = check_real("target", target, low=0.0)
    mm = check_real("M", m, low=1.0)
    tt = check_real("noise", noise, low=0.0)
    g_b, m_b, t_b = (np.array(a, dtype=np.float64) for a in np.broadcast_arrays(g, mm, tt))
    noisy = t_b > 0
    # A budget admitting the best pool (log n* <= max(log(M/τ²), 3); KL <= log n), else,
    # without noise, a budget past the target (gain <= sqrt(2K) fails only below g²/2).
    with np.errstate(divide="ignore"):
        log_ratio = np.log(m_b) - 2.0 * np.log(np.where(noisy, t_b, 1.0))
    k_hi = np.where(noisy, np.maximum(log_ratio, 3.0) + 20.0, 0.5 * g_b * g_b + 10.0)
    for _ in range(40):  # noise-free: double until the gain reaches the target
        short = ~noisy & (np.asarray(reward.gain(m_b, k_hi, t_b, method)) < g_b)
        if not np.any(short) or np.all(k_hi[short] > 1e12):
            break
        k_hi = np.where(short, 2.0 * k_hi, k_hi)
    best = np.asarray(reward.gain(m_b, k_hi, t_b, method), dtype=np.float64)
    # The saturated gain is a maximum over pools found by golden-section search: two
    # budgets past saturation may differ in the last bits, so allow 1e-12 relative.
    unreachable = best < g_b * (1.0 - 1e-12)
    if np.any(unreachable):
        i = np.unravel_index(np.argmax(unreachable), unreachable.shape)
        if not noisy[i]:
            raise ValueError(f"target gain {g_b[i]:g} by {method} needs a KL budget above "
                             f"{k_hi[i]:.3g}")
        k_star = _bisect(lambda lk: reward.gain(m_b[i], np.exp(lk), t_b[i], method)
                         - best[i] * (1 - 1e-12), LOG_K_MIN, math.log(k_hi[i]))
        raise ValueError(
            f"target gain {g_b[i]:g} is unreachable by {method} at M={m_b[i]:g}: the best "
            f"gain over every KL budget is {best[i]:.5g} (reached at K ≈ "
            f"{math.exp(float(k_star)):.3g}); raise M (comparisons_needed gives them at a "
            f"given K) or lower the target")
    low = np.asarray(reward.gain(m_b, 1e-300, t_b, method), dtype=np.float64)
    done = low >= g_b

    def f(log_k: np.ndarray) -> np.ndarray:
        return reward.gain(m_b, np.exp(log_k), t_b, method) - g_b

    log_k = _bisect(f, np.full_like(g_b, LOG_K_MIN), np.where(done, LOG_K_MIN, np.log(k_hi)))
    out = np.where(g_b == 0, 0.0, np.where(done, 1e-300, np.exp(log_k)))
    return return_like(out, target, m, noise)


# -- inverses of the Θ form c·sqrt(min(log M, K)) (its shape, not the model's gain) --


def _check_broadcast(**arrays: np.ndarray) -> None:
    """Check that the arrays broadcast, naming them if they do not."""
    try:
        np.broadcast_shapes(*(np.shape(v) for v in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(v)}" for k, v in arrays.items())
        raise ValueError(f"the shapes of {shapes} do not broadcast together") from None


def comparisons_needed_theta(target: Any, k: Any, c: float = math.sqrt(2.0)
                             ) -> float | np.ndarray:
    """Θ-form inverse: smallest ``M`` with ``c sqrt(min(log M, K)) >= target``, ``exp(target²/c²)``.

    This inverts the *shape* ``c sqrt(min(log M, K))``, not the model's gain;
    :func:`comparisons_needed` inverts the exact gain.  ``inf`` when the KL
    budget alone caps the Θ form below ``target`` (``c sqrt(K) < target``),
    and where ``exp(target²/c²)`` exceeds the float range (the one documented
    non-finite result: "more than 1.8e308").  The default ``c = sqrt 2`` is
    the asymptotic constant of the exact gain.

    Examples
    --------
    >>> round(comparisons_needed_theta(2.0, 10.0), 4)  # e^2
    7.3891
    >>> comparisons_needed_theta(2.0, 1.0)
    inf
    """
    g = check_real("target", target, low=0.0)
    kk = check_real("K", k, low=0.0)
    cc = check_scalar("c", c, low=0.0, low_open=True)
    _check_broadcast(target=g, K=kk)
    with np.errstate(over="ignore"):
        need = (g / cc) ** 2
        out = np.where(need <= kk, np.exp(need), np.inf)
    return return_like(out, target, k)


def kl_needed_theta(target: Any, m: Any, c: float = math.sqrt(2.0)) -> float | np.ndarray:
    """Θ-form inverse: smallest ``K`` with ``c sqrt(min(log M, K)) >= target``, ``target²/c²``.

    ``inf`` if the comparisons cap the Θ form below ``target``.  This inverts
    the shape, not the model's gain; :func:`kl_needed` inverts the exact gain.

    Examples
    --------
    >>> round(kl_needed_theta(2.0, 1e6), 12)
    2.0
    >>> kl_needed_theta(10.0, 1e6)
    inf
    """
    g = check_real("target", target, low=0.0)
    mm = check_real("M", m, low=1.0)
    cc = check_scalar("c", c, low=0.0, low_open=True)
    _check_broadcast(target=g, M=mm)
    with np.errstate(over="ignore"):
        need = (g / cc) ** 2
    return return_like(np.where(need <= np.log(mm), need, np.inf), target, m)
