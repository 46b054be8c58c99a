"""Quality filters for synthetic data: the threshold that maximises value per cost.

Quality filter: synthetic environments have quality ``q`` (value in real
units) drawn from a distribution; keeping those with ``q >= tau`` costs
``c_gen`` per generated environment plus ``c_train`` per kept one.  Value per
cost ``M(tau)/(c_gen + c_train a(tau))`` with ``a(tau) = P(q >= tau)`` and
``M(tau) = E[q 1{q >= tau}]`` is maximised where ``tau = c_train * price(tau)``:
keep an environment when its value exceeds what its training cost would buy
elsewhere at the filtered price.  ``h(tau) = tau (c_gen + c_train a) - c_train M``
has ``h' = c_gen + c_train a > 0``, so the threshold is unique.  For
``q ~ U(0, 1)`` it is ``tau* = ((c_gen + c_train) - sqrt((c_gen + c_train)**2 -
c_train**2)) / c_train``.

A filtered source is a linear synthesis method (:class:`FilterThreshold.method`)
with ``rho`` the mean kept quality and unit cost ``c_gen/a + c_train``
(:mod:`rlscale.theory._synthetic`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.theory._result import Result
from rlscale.theory._synthetic import SynthesisMethod
from rlscale.theory._validation import (
    check_finite_result,
    check_real,
    check_scalar,
    return_like,
)

__all__ = ["FilterThreshold", "filter_price", "optimal_filter_threshold",
           "uniform_filter_threshold"]

#: Work limit of filter_price with a distribution: one quadrature per threshold.
_MAX_QUADRATURES = 1000


@dataclass(frozen=True)
class FilterThreshold(Result):
    """Best quality threshold for filtering synthetic units.

    Attributes
    ----------
    threshold : float
        Keep units with quality ``>= threshold``.
    acceptance : float
        Fraction kept, ``a(tau)``.
    mean_quality : float
        Mean quality of kept units, the filtered method's ``rho``.
    price : float
        Effective real units per unit of cost at that threshold.
    unit_cost : float
        Cost per *kept* unit, ``c_gen/a + c_train``.
    """

    threshold: float
    acceptance: float
    mean_quality: float
    price: float
    unit_cost: float

    def method(self, axis: str, name: str = "") -> SynthesisMethod:
        """The filtered source as a linear :class:`SynthesisMethod`."""
        return SynthesisMethod(axis, unit_cost=self.unit_cost, rho=self.mean_quality,
                               name=name)


def _tail(quality: Any, tau: float) -> tuple[float, float]:
    """``a(tau) = P(q >= tau)`` and ``M(tau) = E[q 1{q >= tau}]``."""
    if isinstance(quality, np.ndarray):
        keep = quality >= tau
        return float(keep.mean()), float(np.where(keep, quality, 0.0).mean())
    a = float(quality.sf(tau))
    if a <= 0:
        return 0.0, 0.0
    m = float(quality.expect(lambda q: q, lb=tau, conditional=True)) * a
    return a, m


def _quality(quality: Any) -> Any:
    if hasattr(quality, "sf") and hasattr(quality, "expect"):
        return quality
    q = check_real("quality", quality)
    if q.ndim != 1 or q.size == 0:
        raise ValueError(f"quality samples must be a non-empty 1-d array; got shape {q.shape}")
    return q


def filter_price(threshold: Any, quality: Any, gen_cost: float, train_cost: float) -> Any:
    """Effective units per cost when keeping synthetic units with quality >= threshold.

    Derivation: each generated unit costs ``c_gen``; a fraction
    ``a(tau) = P(q >= tau)`` is kept and trained on at ``c_train`` each, and a
    kept unit of quality ``q`` counts as ``q`` real units.  Per generated unit
    the value is ``M(tau) = E[q 1{q >= tau}]`` and the cost
    ``c_gen + c_train a(tau)``, so

        price(tau) = M(tau) / (c_gen + c_train a(tau)).

    Parameters
    ----------
    threshold : float or array
        Quality thresholds ``tau`` (vectorised; at most 1,000 with a
        distribution, one quadrature each; any number with samples).
    quality : frozen scipy.stats distribution or 1-d array of samples
        The quality ``q`` of a generated unit.
    gen_cost, train_cost : float
        ``c_gen > 0`` per generated unit, ``c_train >= 0`` per kept unit.

    Examples
    --------
    Uniform quality on [0, 1], ``tau = 0.5``: ``a = 1/2``, ``M = 3/8``, so the
    price is ``(3/8) / (1 + 1/2) = 0.25``; four equally likely samples give
    ``(0.5 + 0.75) / 4 / (1 + 1/2)``.

    >>> from scipy import stats
    >>> round(float(filter_price(0.5, stats.uniform(0, 1), 1.0, 1.0)), 9)
    0.25
    >>> filter_price([0.5, 0.8], np.array([0.0, 0.25, 0.5, 0.75]), 1.0, 1.0).round(6).tolist()
    [0.208333, 0.0]
    """
    c_g = check_scalar("gen_cost", gen_cost, low=0.0, low_open=True)
    c_t = check_scalar("train_cost", train_cost, low=0.0)
    q = _quality(quality)
    taus = check_real("threshold", threshold)
    with np.errstate(over="ignore", invalid="ignore"):
        if isinstance(q, np.ndarray):
            # Tail means of the sorted samples answer every threshold at once
            # (each sample divided by n first, so the sums stay in float range).
            srt = np.sort(q)
            tail = np.concatenate([np.cumsum((srt / srt.size)[::-1])[::-1], [0.0]])
            first = np.searchsorted(srt, taus, side="left")
            a = (srt.size - first) / srt.size
            out = tail[first] / (c_g + c_t * a)
        else:
            if taus.size > _MAX_QUADRATURES:
                raise ValueError(
                    f"threshold has {taus.size} values; with a distribution each needs a "
                    f"quadrature, and at most {_MAX_QUADRATURES} are done per call (pass "
                    "samples as an array for any number of thresholds)")
            out = np.empty(taus.shape)
            for idx, tau in np.ndenumerate(taus):  # one quadrature per threshold
                a_i, m_i = _tail(q, float(tau))
                out[idx] = m_i / (c_g + c_t * a_i)
    check_finite_result(out, "the filtered price", gen_cost=c_g, train_cost=c_t,
                        threshold=threshold)
    return return_like(out, threshold)


def optimal_filter_threshold(quality: Any, gen_cost: float,
                             train_cost: float) -> FilterThreshold:
    """The threshold maximising value per cost: the root of ``tau = c_train * price(tau)``.

    For samples the exact optimum over keep-the-best-``j`` sets is found by
    sorting (``O(n log n)``); for a distribution the monotone fixed-point
    equation is solved with Brent's method.

    Examples
    --------
    >>> from scipy import stats
    >>> f = optimal_filter_threshold(stats.uniform(0, 1), gen_cost=1.0, train_cost=1.0)
    >>> round(f.threshold, 6), round(uniform_filter_threshold(1.0, 1.0), 6)
    (0.267949, 0.267949)
    """
    c_g = check_scalar("gen_cost", gen_cost, low=0.0, low_open=True)
    c_t = check_scalar("train_cost", train_cost, low=0.0)
    q = _quality(quality)
    if isinstance(q, np.ndarray):
        order = np.sort(q)[::-1]
        n = order.size
        j = np.arange(1, n + 1)
        with np.errstate(over="ignore", invalid="ignore"):
            # M_j / (c_gen + c_train a_j) with M_j, a_j per generated unit (sums stay finite)
            prices = np.cumsum(order / n) / (c_g + c_t * (j / n))
        check_finite_result(prices, "the filtered price", gen_cost=c_g, train_cost=c_t)
        best = int(np.argmax(prices))
        if prices[best] <= 0:
            raise ValueError("no synthetic unit has positive quality; nothing is worth keeping")
        tau = float(order[best])
        a, m = (best + 1) / n, float(np.sum(order[: best + 1] / n))
    else:
        from scipy.optimize import brentq

        lo, hi = (float(v) for v in q.support())
        lo = lo if math.isfinite(lo) else float(q.ppf(1e-12))
        hi = hi if math.isfinite(hi) else float(q.ppf(1 - 1e-12))

        def h(tau: float) -> float:
            a, m = _tail(q, tau)
            return tau * (c_g + c_t * a) - c_t * m

        if c_t == 0:
            tau = max(lo, 0.0)
        elif h(lo) >= 0:
            tau = lo
        else:
            tau = brentq(h, lo, hi, xtol=1e-12, rtol=1e-12)
        a, m = _tail(q, tau)
        if m <= 0:
            raise ValueError("the quality distribution has no positive mass worth keeping")
    with np.errstate(over="ignore"):
        fields = (tau, a, m / a, m / (c_g + c_t * a), c_g / a + c_t)
    check_finite_result(np.array(fields), "the filter threshold", gen_cost=c_g,
                        train_cost=c_t)
    return FilterThreshold(*(float(f) for f in fields))


def uniform_filter_threshold(gen_cost: float, train_cost: float) -> float:
    """Closed-form optimal threshold for quality ``q ~ U(0, 1)`` (module docstring).

    With ``r = c_train/(c_gen + c_train)`` in ``(0, 1)`` the root is
    ``(1 - sqrt(1 - r²))/r = r/(1 + sqrt(1 - r²))``; the second form neither
    overflows (``s²`` did at ``c = 1e218``, giving NaN) nor cancels.

    Examples
    --------
    >>> round(uniform_filter_threshold(gen_cost=0.5, train_cost=2.0), 6)
    0.5
    >>> round(uniform_filter_threshold(1.0, 1e218), 6)  # training dominates: keep the best
    1.0
    """
    c_g = check_scalar("gen_cost", gen_cost, low=0.0, low_open=True)
    c_t = check_scalar("train_cost", train_cost, low=0.0, low_open=True)
    r = 1.0 / (1.0 + c_g / c_t)        # c_t/(c_g + c_t) without forming the sum
    one_minus_r = 1.0 / (1.0 + c_t / c_g)  # c_g/(c_g + c_t), accurate where r ~ 1
    return r / (1.0 + math.sqrt(one_minus_r * (1.0 + r)))
