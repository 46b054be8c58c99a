"""Coverage of independent candidates, and its unbiased estimate from samples.

A candidate is correct with probability q, independently of the others; the
coverage of n candidates is the probability that one of them is:
c(n) = 1 − (1 − q)^n (Brown et al. 2024, "Large Language Monkeys", arXiv
2407.21787), computed in log space as log(−expm1(n·log1p(−q))) so that large n
and small q neither underflow nor cancel.

Coverage from samples: the unbiased pass@k estimator of Chen et al. 2021
(arXiv 2107.03374, eq. 1), 1 − C(n−c, k)/C(n, k) for a problem with c correct
out of n samples, evaluated in log space as a sum of log1p terms.

The per-turn success laws that build on coverage (perfect and noisy verifiers,
best-of-n selection, fitted coverage curves) are the :class:`Turn` classes of
:mod:`rlscale.theory._turns`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlscale.theory._validation import check_real, return_like

__all__ = ["coverage", "log_coverage", "pass_at_k"]

#: Largest table these functions build in memory (pass@k's k, a range of n): 8e7 bytes.
MAX_TABLE = 10**7


def pass_at_k(n: Any, c: Any, k: Any) -> float | np.ndarray:
    """Unbiased pass@k from ``c`` correct among ``n`` samples (Chen et al. 2021, eq. 1).

    pass@k = 1 − C(n − c, k)/C(n, k), the probability that k of the n samples
    drawn without replacement contain a correct one; computed as
    −expm1(log C(n−c, k) − log C(n, k)), the log-ratio summed as
    Σ_{i<k} log1p(−c/(n − i)) so that n in the millions neither overflows nor
    cancels (log-gamma differences lose six digits at n = 2e6).  Arrays
    broadcast; one cumulative sum per distinct (n, c) serves every k.

    Examples
    --------
    >>> round(pass_at_k(10, 3, 1), 12)          # c/n
    0.3
    >>> round(pass_at_k(10, 3, 2), 6)           # 1 - C(7,2)/C(10,2) = 1 - 21/45
    0.533333
    >>> pass_at_k(10, 8, 3)                     # fewer than k incorrect: always solved
    1.0
    >>> pass_at_k(10, 3, 11)
    Traceback (most recent call last):
    ...
    ValueError: k must be <= n (10); got k=11
    """
    n_ = check_real("n", n, low=1.0)
    c_ = check_real("c", c, low=0.0)
    k_ = check_real("k", k, low=1.0)
    for name, arr in (("n", n_), ("c", c_), ("k", k_)):
        if np.any(arr != np.floor(arr)):
            raise ValueError(f"{name} must be a whole number; got {name}={arr.ravel()[0]:g}")
    n_, c_, k_ = np.broadcast_arrays(n_, c_, k_)
    if np.any(c_ > n_):
        raise ValueError(f"c must be <= n ({n_[c_ > n_].ravel()[0]:g}); got c={c_[c_ > n_][0]:g}")
    if np.any(k_ > n_):
        raise ValueError(f"k must be <= n ({n_[k_ > n_].ravel()[0]:g}); got k={k_[k_ > n_][0]:g}")
    if np.any(k_ > MAX_TABLE):  # the sum below holds k terms in memory
        raise ValueError(f"k must be <= {MAX_TABLE:.0e} (the log-ratio sums k terms); got "
                         f"k={k_[k_ > MAX_TABLE].ravel()[0]:g}")
    always = n_ - c_ < k_
    out = np.where(always, 1.0, 0.0)
    todo = ~always & (c_ > 0)
    if todo.any():
        # log C(n−c, k)/C(n, k) = Σ_{i<k} log1p(−c/(n − i)): one cumulative sum per distinct
        # (n, c) serves every k (relative error ~k·1e-16; differences of log-gammas of size
        # n·log n would lose six digits at n = 1e6).
        nn, cc, kk = n_[todo], c_[todo], k_[todo].astype(np.int64)
        pairs, inverse = np.unique(np.stack([nn, cc]), axis=1, return_inverse=True)
        inverse = inverse.ravel()
        res = np.empty(kk.size)
        order = np.argsort(inverse, kind="stable")
        bounds = np.searchsorted(inverse[order], np.arange(pairs.shape[1] + 1))
        for j in range(pairs.shape[1]):
            sel = order[bounds[j]:bounds[j + 1]]
            top = int(kk[sel].max())
            steps = np.cumsum(np.log1p(-pairs[1, j] / (pairs[0, j] - np.arange(top))))
            res[sel] = -np.expm1(steps[kk[sel] - 1])
        out[todo] = res
    return return_like(out, n, c, k)


def log_coverage(q: Any, n: Any) -> float | np.ndarray:
    """log(1 − (1 − q)^n), stable for large n and small q; −inf at n = 0.

    Examples
    --------
    >>> round(log_coverage(0.5, 1), 12) == round(float(np.log(0.5)), 12)
    True
    >>> abs(float(log_coverage(1e-3, 1e6))) < 1e-300     # 1 - (1-1e-3)^1e6 rounds to 1
    True
    """
    q_ = check_real("q", q, low=0.0, high=1.0)
    n_ = check_real("n", n, low=0.0)
    with np.errstate(divide="ignore"):
        log_miss = np.log1p(-q_)  # -inf at q = 1
        r = np.where(n_ > 0, n_ * np.where(np.isinf(log_miss), -1.0, log_miss), 0.0)
        r = np.where(np.isinf(log_miss) & (n_ > 0), -np.inf, r)  # (1 - q)^n = 0 for n > 0
        out = np.log(-np.expm1(r))
    return return_like(out, q, n)


def coverage(q: Any, n: Any) -> float | np.ndarray:
    """P(at least one of n independent candidates is correct) = 1 − (1 − q)^n.

    Examples
    --------
    >>> coverage(0.5, 3)
    0.875
    >>> float(coverage(0.1, 0))
    0.0
    """
    return return_like(np.exp(np.asarray(log_coverage(q, n))), q, n)
