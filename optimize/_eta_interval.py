"""Bootstrap confidence intervals for one statistic, by several methods.

Used for the predicted efficiency η of a plan (:func:`~rlscale.optimize.plan_uncertainty`,
:func:`~rlscale.optimize.calibrate_eta`), where ``samples`` are η under each
bootstrap law and ``estimate`` is η under the point law.  With
``α = 1 − confidence``, ``q(p)`` the ``p``-quantile of the samples (numpy's
default linear interpolation), ``Φ`` the standard normal CDF and
``z_p = Φ⁻¹(p)``:

``"percentile"``
    ``[q(α/2), q(1 − α/2)]`` (Efron 1979; Efron & Tibshirani 1993, §13.3).
``"basic"``
    ``[2θ̂ − q(1 − α/2), 2θ̂ − q(α/2)]``, the "basic" or reflected interval
    (Davison & Hinkley 1997, §5.2): it assumes ``θ* − θ̂`` is distributed
    like ``θ̂ − θ``, so a bootstrap distribution shifted above ``θ̂`` moves the
    interval *below* it.  With a ``floor`` (η ≥ 1) both ends are clipped at
    the floor.
``"basic-log"``
    The basic interval of ``log(θ − floor)``, mapped back:
    ``[floor + (θ̂ − f)²/(q(1 − α/2) − f), floor + (θ̂ − f)²/(q(α/2) − f)]``
    (``f`` the floor).  It never crosses the floor; the log scale is the
    usual variance-stabilising choice for a positive excess (Davison &
    Hinkley 1997, §5.2).  Needs a ``floor``.
``"symmetric"``
    ``[θ̂ − t, θ̂ + t]`` with ``t`` the ``confidence``-quantile of
    ``|θ* − θ̂|`` (Hall 1988, "On symmetric bootstrap confidence intervals",
    JRSS B 50: 35–45, here without studentising), the low end clipped at the
    floor.  It ignores the skew of the bootstrap distribution: on the short
    side it reaches as far as on the long side, which is what guards against
    a point estimate biased away from a floor.
``"bc"``
    Bias-corrected percentile (Efron 1981, 1987; Efron & Tibshirani 1993,
    §14.3 with ``a = 0``): ``z₀ = Φ⁻¹(p₀)``, ``p₀`` the share of samples
    below ``θ̂`` (ties count one half, as :func:`scipy.stats.bootstrap`), and
    the interval ``[q(Φ(2z₀ + z_{α/2})), q(Φ(2z₀ + z_{1−α/2}))]``.
``"BCa"``
    Bias-corrected and accelerated (Efron 1987; Efron & Tibshirani 1993,
    §14.3, eqs. 14.9–14.15; DiCiccio & Efron 1996):
    ``α_i = Φ(z₀ + (z₀ + z_i)/(1 − a(z₀ + z_i)))`` with the acceleration
    ``a = Σ(θ̄ − θ_(i))³ / (6 [Σ(θ̄ − θ_(i))²]^{3/2})`` from jackknife values
    ``θ_(i)`` (eq. 14.15).  Needs ``jackknife``.

``p₀`` is kept within ``[1/(2B), 1 − 1/(2B)]`` for ``B`` samples: when every
sample lies on one side of ``θ̂`` the bias is only known to be at least that
large, and an infinite ``z₀`` would give a NaN or empty interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["DEFAULT_METHOD", "INTERVAL_METHODS", "acceleration", "bias_z0",
           "bootstrap_interval", "check_interval_method"]

#: The interval methods :func:`bootstrap_interval` knows (scipy.stats.bootstrap's
#: names where they exist).
INTERVAL_METHODS: tuple[str, ...] = ("percentile", "basic", "basic-log", "symmetric", "bc",
                                      "BCa")

#: The method the report and :func:`~rlscale.optimize.plan_uncertainty` use by default:
#: the one the calibration study measured closest to nominal coverage.
DEFAULT_METHOD = "symmetric"


def check_interval_method(method: Any) -> str:
    """``method`` if it names an interval method, else a ``ValueError``/``TypeError``."""
    if not isinstance(method, str):
        raise TypeError(f"method must be one of {list(INTERVAL_METHODS)}; got {method!r:.60}")
    if method not in INTERVAL_METHODS:
        raise ValueError(f"method must be one of {list(INTERVAL_METHODS)}; got "
                         f"method={method!r:.60}")
    return method


def _finite_samples(samples: Any) -> np.ndarray:
    x = np.asarray(samples, dtype=float)
    if x.ndim != 1 or x.size < 2:
        raise ValueError(f"samples must be a flat sequence of at least 2 bootstrap values; got "
                         f"shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"samples must be finite; {int((~np.isfinite(x)).sum())} of {x.size} "
                         "are inf or NaN")
    return x


def bias_z0(samples: Any, estimate: float) -> float:
    """``z₀ = Φ⁻¹(p₀)``, ``p₀`` the share of ``samples`` below ``estimate`` (ties ½).

    ``p₀`` is clipped into ``[1/(2B), 1 − 1/(2B)]`` so that ``z₀`` is finite.

    Examples
    --------
    >>> round(bias_z0([1.0, 2.0, 3.0, 4.0], 2.0), 6)   # p0 = (1 + 0.5)/4 = 0.375
    -0.318639
    """
    from scipy.special import ndtri

    x = _finite_samples(samples)
    p0 = (np.count_nonzero(x < estimate) + 0.5 * np.count_nonzero(x == estimate)) / x.size
    p0 = min(max(p0, 0.5 / x.size), 1.0 - 0.5 / x.size)
    return float(ndtri(p0))


def acceleration(jackknife: Sequence[float]) -> float:
    """The BCa acceleration from jackknife values (Efron & Tibshirani 1993, eq. 14.15).

    ``a = Σ(θ̄ − θ_(i))³ / (6 [Σ(θ̄ − θ_(i))²]^{3/2})``; 0 when every value is equal.

    Examples
    --------
    >>> round(acceleration([1.0, 1.0, 4.0]), 6)   # d = (1, 1, -2): -6 / (6 · 6^1.5)
    -0.068041
    """
    x = _finite_samples(jackknife)
    d = x.mean() - x
    ss = float(np.sum(d * d))
    if ss == 0.0:
        return 0.0
    return float(np.sum(d**3) / (6.0 * ss**1.5))


def bootstrap_interval(samples: Any, estimate: float, confidence: float = 0.9,
                       method: str = "percentile", *, floor: float | None = None,
                       jackknife: Sequence[float] | None = None) -> tuple[float, float]:
    """Two-sided bootstrap interval of a statistic by ``method`` (see the module).

    Parameters
    ----------
    samples : array_like
        The statistic on each bootstrap resample (finite, at least 2).
    estimate : float
        The statistic on the data (the point estimate ``θ̂``).
    confidence : float
        Nominal two-sided level, in (0, 1).
    method : {"percentile", "basic", "basic-log", "symmetric", "bc", "BCa"}
    floor : float, optional
        A bound the statistic cannot go below (η ≥ 1); "basic" and "symmetric"
        clip at it and "basic-log" works on ``log(θ − floor)``.
    jackknife : sequence of float, optional
        Leave-one-out values of the statistic, for "BCa".

    Examples
    --------
    >>> s = [1.0, 2.0, 3.0, 4.0, 5.0]
    >>> bootstrap_interval(s, 3.0, 0.5)                       # quantiles 0.25 and 0.75
    (2.0, 4.0)
    >>> bootstrap_interval([3.0, 4.0, 5.0, 6.0, 7.0], 3.0, 0.5, "basic")   # 6 − 6, 6 − 4
    (0.0, 2.0)
    """
    from rlscale.theory._validation import check_scalar

    x = _finite_samples(samples)
    estimate = check_scalar("estimate", estimate)
    confidence = check_scalar("confidence", confidence, low=0.0, high=1.0, low_open=True,
                              high_open=True)
    method = check_interval_method(method)
    if floor is not None:
        floor = check_scalar("floor", floor)
    alpha = 1.0 - confidence
    if method == "percentile":
        lo, hi = np.quantile(x, [alpha / 2, 1 - alpha / 2])
    elif method == "basic":
        q_lo, q_hi = np.quantile(x, [alpha / 2, 1 - alpha / 2])
        lo, hi = 2 * estimate - q_hi, 2 * estimate - q_lo
        if floor is not None:
            lo, hi = max(lo, floor), max(hi, floor)
    elif method == "symmetric":
        t = float(np.quantile(np.abs(x - estimate), confidence))
        lo, hi = estimate - t, estimate + t
        if floor is not None:
            lo = max(lo, floor)
    elif method == "basic-log":
        if floor is None:
            raise ValueError("method='basic-log' needs a floor (the log is of θ − floor)")
        q_lo, q_hi = np.quantile(x, [alpha / 2, 1 - alpha / 2])
        excess = estimate - floor
        if excess <= 0 or q_lo <= floor:
            raise ValueError(f"method='basic-log' needs the estimate and the samples' "
                             f"{alpha / 2:g}-quantile above floor={floor:g}; got estimate="
                             f"{estimate:g}, quantile {q_lo:g}")
        lo, hi = floor + excess**2 / (q_hi - floor), floor + excess**2 / (q_lo - floor)
    else:
        from scipy.special import ndtr, ndtri

        z0 = bias_z0(x, estimate)
        z = ndtri(np.array([alpha / 2, 1 - alpha / 2]))
        if method == "bc":
            a = 0.0
        else:
            if jackknife is None:
                raise ValueError("method='BCa' needs jackknife values (the statistic with each "
                                 "observation left out) for its acceleration")
            a = acceleration(jackknife)
        w = z0 + z
        denom = 1.0 - a * w
        if np.any(denom <= 0):
            raise ValueError(f"method='BCa': acceleration a={a:.3g} is too large for "
                             f"confidence={confidence:g} (1 − a(z0 + z) <= 0)")
        lo, hi = np.quantile(x, ndtr(z0 + w / denom))
    return float(lo), float(hi)
