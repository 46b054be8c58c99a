"""Robust aggregates over training runs: IQM and stratified bootstrap CIs.

Following Agarwal et al. 2021 ("Deep RL at the edge of the statistical
precipice", NeurIPS; the ``rliable`` recipe): the interquartile mean (IQM,
the mean of the middle 50 % of scores, ``scipy.stats.trim_mean(x, 0.25)``)
and a percentile bootstrap 95 % CI in which runs (seeds) are resampled with
replacement *independently within each stratum* (each held-out task, a
column of the score matrix).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import trim_mean

from rlscale.simulate._gridworld import as_generator
from rlscale.theory._result import Result
from rlscale.theory._validation import check_positive_int, check_real, check_scalar

__all__ = ["Interval", "iqm", "iqm_ci", "iqm_difference_ci", "iqm_ratio_ci"]


@dataclass(frozen=True)
class Interval(Result):
    """A point estimate with a bootstrap confidence interval."""

    estimate: float
    low: float
    high: float
    confidence: float

    def __str__(self) -> str:
        return f"{self.estimate:.4f} [{self.low:.4f}, {self.high:.4f}]"


def iqm(scores: Any) -> float:
    """Interquartile mean of all entries of ``scores``.

    Examples
    --------
    >>> iqm([0.0, 1.0, 2.0, 3.0, 100.0, -100.0, 1.5, 2.5])
    1.75
    """
    x = check_real("scores", scores).ravel()
    if x.size == 0:
        raise ValueError("scores must not be empty")
    return float(_trim_mean(x))


def _trim_mean(x: np.ndarray, axis: int | None = None) -> Any:
    """``trim_mean(x, 0.25)`` computed on ``x / max|x|``: a sum of scores near 1e308
    would overflow, the mean of the scaled scores cannot (and scaling back is exact
    up to rounding, since the mean lies within the scores' range)."""
    scale = float(np.max(np.abs(x))) if x.size else 0.0
    if scale == 0.0 or scale < 1e300:
        return trim_mean(x, 0.25, axis=axis)
    return trim_mean(x / scale, 0.25, axis=axis) * scale


def _matrix(name: str, scores: Any) -> np.ndarray:
    x = check_real(name, scores)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1:
        raise ValueError(f"{name} must have shape (runs,) or (runs, tasks); got {x.shape}")
    return x


#: Upper limit on the bootstrap's work ``n_boot · runs · tasks`` (values drawn and
#: held in memory at once: 160 MB at most, about two seconds).
MAX_BOOT_DRAWS = 2 * 10**7


def _resample(x: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """IQM of ``n_boot`` stratified resamples: rows redrawn independently per column."""
    runs, tasks = x.shape
    if n_boot * runs * tasks > MAX_BOOT_DRAWS:
        raise ValueError(f"n_boot·runs·tasks must be <= {MAX_BOOT_DRAWS:.0e}; got n_boot={n_boot} "
                         f"x {runs} runs x {tasks} tasks = {n_boot * runs * tasks:.3g}")
    idx = rng.integers(0, runs, size=(n_boot, runs, tasks))
    samples = x[idx, np.arange(tasks)[None, None, :]].reshape(n_boot, -1)
    return _trim_mean(samples, axis=1)


def iqm_ci(scores: Any, *, n_boot: int = 2000, confidence: float = 0.95,
           rng: np.random.Generator | int | None = 0) -> Interval:
    """IQM of ``scores`` (runs × tasks) with a stratified bootstrap CI.

    Examples
    --------
    >>> ci = iqm_ci([[0.2, 0.4], [0.3, 0.5], [0.25, 0.45]], rng=0)
    >>> round(ci.estimate, 4), ci.low <= ci.estimate <= ci.high
    (0.35, True)
    """
    x = _matrix("scores", scores)
    n_boot = check_positive_int("n_boot", n_boot, maximum=MAX_BOOT_DRAWS)
    conf = check_scalar("confidence", confidence, low=0.0, high=1.0, low_open=True,
                            high_open=True)
    rng = as_generator(rng)
    boots = _resample(x, n_boot, rng)
    a = (1.0 - conf) / 2.0
    low, high = np.quantile(boots, [a, 1.0 - a])
    return Interval(iqm(x), float(low), float(high), conf)


def iqm_difference_ci(a: Any, b: Any, *, n_boot: int = 2000, confidence: float = 0.95,
                      rng: np.random.Generator | int | None = 0) -> Interval:
    """IQM(a) − IQM(b) with a CI, both resampled independently (stratified).

    Examples
    --------
    >>> d = iqm_difference_ci([0.6, 0.7, 0.65, 0.62], [0.4, 0.5, 0.45, 0.41], rng=1)
    >>> round(d.estimate, 3), d.low > 0
    (0.205, True)
    """
    return _two_sample(a, b, np.subtract, n_boot, confidence, rng,
                       "IQM(a) − IQM(b) overflows float64: the scores of a and b must differ "
                       "by less than 1.8e308")


def iqm_ratio_ci(a: Any, b: Any, *, n_boot: int = 2000, confidence: float = 0.95,
                 rng: np.random.Generator | int | None = 0) -> Interval:
    """IQM(a) / IQM(b) with a CI, both resampled independently (stratified), for positive
    scores such as environment steps to a success level.

    Examples
    --------
    >>> r = iqm_ratio_ci([50.0, 60.0, 55.0, 52.0], [100.0, 110.0, 105.0, 98.0], rng=1)
    >>> round(r.estimate, 3), r.high < 1
    (0.522, True)
    """
    for name, x in (("a", _matrix("a", a)), ("b", _matrix("b", b))):
        if not np.all(x > 0):
            raise ValueError(f"{name} must hold positive scores for a ratio of IQMs; got "
                             f"{name} with minimum {float(x.min()):g}")
    return _two_sample(a, b, np.divide, n_boot, confidence, rng,
                       "IQM(a) / IQM(b) overflows float64: the scores of a and b must be "
                       "within 1e308 of each other")


def _two_sample(a: Any, b: Any, combine: Any, n_boot: int, confidence: float, rng: Any,
                overflow: str) -> Interval:
    """``combine(IQM(a), IQM(b))`` with a percentile CI: ``a`` and ``b`` resampled
    independently (each stratified by its columns), ``a`` first."""
    xa, xb = _matrix("a", a), _matrix("b", b)
    n_boot = check_positive_int("n_boot", n_boot, maximum=MAX_BOOT_DRAWS)
    conf = check_scalar("confidence", confidence, low=0.0, high=1.0, low_open=True,
                        high_open=True)
    rng = as_generator(rng)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        boots = combine(_resample(xa, n_boot, rng), _resample(xb, n_boot, rng))
        estimate = combine(iqm(xa), iqm(xb))
    if not (np.all(np.isfinite(boots)) and np.isfinite(estimate)):
        raise ValueError(overflow)
    q = (1.0 - conf) / 2.0
    low, high = np.quantile(boots, [q, 1.0 - q])
    return Interval(float(estimate), float(low), float(high), conf)
