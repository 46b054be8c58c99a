"""Fitting the empirical coverage law c(k) = exp(a·k^b) from per-problem samples.

Data: for each problem i, n_i samples of which c_i are correct.  Coverage at
k samples is estimated by the mean over problems of the unbiased pass@k
(Chen et al. 2021, eq. 1; :func:`rlscale.theory.pass_at_k`) for k ≤ min n_i.

Fit (Brown et al. 2024, arXiv 2407.21787, fit log c(k) = a·k^b): taking logs
twice, log(−log c(k)) = log(−a) + b·log k, a straight line in log k, fitted
by ordinary least squares on the k with 0 < ĉ(k) < 1 (the fitting engine's
problem with a linear model, solved in closed form).  Intervals: percentile
bootstrap over problems (problems resampled with replacement, pass@k and the
line recomputed), with the shared identification diagnostics
(:mod:`rlscale.optimize._fit_identify`) in ``warnings``.  Extrapolation check:
the law is fitted on k ≤ k_max/4 and its prediction at k_max compared with the
observed coverage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.optimize._diagnostics import FitWarning
from rlscale.theory._inference import MAX_TABLE, pass_at_k
from rlscale.theory._result import Result
from rlscale.theory._validation import check_positive_int, check_real, check_scalar

__all__ = ["CoverageFit", "fit_coverage"]

#: Limits: problems, bootstrap resamples, and resamples x problems (each resample
#: averages one pass@k row per problem).
MAX_PROBLEMS, MAX_BOOTSTRAP, MAX_BOOTSTRAP_WORK = 10**6, 10**5, 10**8


def _law(a: float, b: float, k: Any) -> np.ndarray:
    """c(k) = exp(a·k^b) with a < 0, in logs: exp(−exp(log(−a) + b·log k)), no overflow."""
    log_neg = np.minimum(np.log(-a) + b * np.log(np.asarray(k, dtype=float)), 709.0)
    return np.exp(-np.exp(log_neg))


@dataclass(frozen=True)
class CoverageFit(Result):
    """Fitted c(k) = exp(a·k^b) with bootstrap intervals and an extrapolation check."""

    a: float
    b: float
    a_interval: tuple[float, float] | None
    b_interval: tuple[float, float] | None
    k: np.ndarray
    observed: np.ndarray
    predicted: np.ndarray
    extrapolation_k: int
    extrapolation_observed: float
    extrapolation_predicted: float
    n_problems: int
    success: bool = True
    status: str = "exact"
    message: str = ""
    warnings: tuple[FitWarning, ...] = ()

    def predict(self, k: Any) -> np.ndarray:
        """c(k) = exp(a·k^b)."""
        return _law(self.a, self.b, check_real("k", k, low=1.0))

    @property
    def extrapolation_error(self) -> float:
        """Predicted minus observed coverage at k_max, from a fit on k ≤ k_max/4."""
        return self.extrapolation_predicted - self.extrapolation_observed

    def as_dict(self) -> dict[str, Any]:
        out = super().as_dict()
        out["extrapolation_error"] = self.extrapolation_error
        out["warnings"] = [w.as_dict() for w in self.warnings]
        return out


def _grid(k_max: int) -> np.ndarray:
    return np.unique(np.round(np.geomspace(1, k_max, 24)).astype(np.int64))


def _curve_rows(n: np.ndarray, c: np.ndarray, k: np.ndarray) -> np.ndarray:
    return np.asarray(pass_at_k(n[:, None], c[:, None], k[None, :]))


def _line(k: np.ndarray, cov: np.ndarray) -> tuple[float, float]:
    keep = (cov > 0) & (cov < 1)
    if keep.sum() < 2:
        raise ValueError("coverage must lie strictly between 0 and 1 at two or more k "
                         "to fit c(k) = exp(a·k^b); got fewer")
    x, y = np.log(k[keep]), np.log(-np.log(cov[keep]))
    slope, intercept = np.polyfit(x, y, 1)
    return -float(np.exp(intercept)), float(slope)


def fit_coverage(samples: Any, correct: Any, *, bootstrap: int = 200,
                 confidence: float = 0.95, rng: Any = 0) -> CoverageFit:
    """Fit c(k) = exp(a·k^b) to per-problem (samples, correct) counts.

    Parameters
    ----------
    samples, correct : array_like of int
        n_i ≥ 4 samples (at most 1e7, pass@k's limit; distinct (n_i, c_i)
        pairs x min n_i at most 1e8) and 0 ≤ c_i ≤ n_i
        correct ones per problem; 2 to 1e6 problems.
    bootstrap : int
        Bootstrap resamples of the problems for the intervals (0: none, the
        intervals are ``None``); at most 1e5, and at most 1e8 resamples x
        problems.
    confidence : float
        Level of the percentile intervals.
    rng : int or numpy.random.Generator
        Seed of the bootstrap, an integer >= 0 (same seed, identical intervals).

    Examples
    --------
    >>> import numpy as np
    >>> gen = np.random.default_rng(0)
    >>> q = gen.beta(0.3, 3.0, size=400)          # per-problem success rates
    >>> fit = fit_coverage(np.full(400, 256), gen.binomial(256, q), bootstrap=50)
    >>> fit.a < 0 and fit.b < 0, fit.a_interval[0] <= fit.a <= fit.a_interval[1]
    (True, True)
    >>> abs(fit.extrapolation_error) < 0.1
    True
    """
    n = check_real("samples", samples, low=1.0, high=MAX_TABLE).ravel()
    c = check_real("correct", correct, low=0.0, high=MAX_TABLE).ravel()
    for name, arr in (("samples", n), ("correct", c)):
        if np.any(arr != np.floor(arr)):
            raise ValueError(f"{name} must hold whole numbers; got {name}="
                             f"{arr[arr != np.floor(arr)][0]:g}")
    if n.shape != c.shape or not 2 <= n.size <= MAX_PROBLEMS:
        raise ValueError(f"samples and correct must be equal-length sequences of 2 to "
                         f"{MAX_PROBLEMS:.0e} problems; got {n.size} and {c.size}")
    if np.any(c > n):
        raise ValueError("correct must be <= samples for every problem")
    B = check_positive_int("bootstrap", bootstrap, minimum=0, maximum=MAX_BOOTSTRAP)
    if B * n.size > MAX_BOOTSTRAP_WORK:
        raise ValueError(f"bootstrap={B} resamples of {n.size} problems exceed "
                         f"{MAX_BOOTSTRAP_WORK:.0e} problem draws; lower bootstrap")
    level = check_scalar("confidence", confidence, low=0.0, high=1.0, low_open=True,
                         high_open=True)
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(
        None if rng is None else check_positive_int("rng", rng, minimum=0, maximum=2**128))
    k_max = int(n.min())
    if k_max < 4:
        raise ValueError(f"every problem needs at least 4 samples; got min samples={k_max}")
    k = _grid(k_max)
    # pass@k depends on the problem only through (n_i, c_i): tabulate it once per distinct
    # pair, so a bootstrap resample is a mean of table rows.
    pairs, which = np.unique(np.stack([n, c]), axis=1, return_inverse=True)
    which = which.ravel()
    if pairs.shape[1] * k_max > MAX_BOOTSTRAP_WORK:  # pass@k sums up to k_max terms per pair
        raise ValueError(f"samples: {pairs.shape[1]} distinct (samples, correct) pairs x "
                         f"min samples {k_max} exceed {MAX_BOOTSTRAP_WORK:.0e} pass@k terms")
    table = _curve_rows(pairs[0], pairs[1], k)
    cov = table[which].mean(axis=0)
    a, b = _line(k, cov)
    early = k <= max(2, k_max // 4)
    a_early, b_early = _line(k[early], cov[early])
    draws = []
    for _ in range(B):
        idx = gen.integers(0, n.size, n.size)
        try:
            draws.append(_line(k, table[which[idx]].mean(axis=0)))
        except ValueError:
            continue
    tail = (1 - level) / 2
    warnings: list[FitWarning] = []
    if draws:
        from rlscale.optimize._fit_identify import interval_warnings

        arr = np.array(draws)
        a_int = tuple(float(v) for v in np.quantile(arr[:, 0], [tail, 1 - tail]))
        b_int = tuple(float(v) for v in np.quantile(arr[:, 1], [tail, 1 - tail]))
        warnings = interval_warnings(["a", "b"], {"a": a, "b": b}, {"a": a_int, "b": b_int},
                                     samples=arr, confidence=level)
    elif B:
        raise ValueError("no bootstrap resample had coverage strictly between 0 and 1 at two "
                         "k; the data cannot support intervals")
    else:
        a_int = b_int = None  # no bootstrap requested
    return CoverageFit(a=a, b=b, a_interval=a_int, b_interval=b_int, k=k, observed=cov,
                       predicted=_law(a, b, k), extrapolation_k=k_max,
                       extrapolation_observed=float(cov[-1]),
                       extrapolation_predicted=float(_law(a_early, b_early, k_max)),
                       n_problems=int(n.size), success=True, status="exact",
                       warnings=tuple(warnings),
                       message=f"log(-log c) = log(-a) + b log k by linear least squares on "
                               f"the k where 0 < c < 1 (of {k.size} grid values; distinct k, "
                               f"so full rank)")
