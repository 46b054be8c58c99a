r"""Selection rules of the reward-optimisation model, as objects that declare their properties.

Each rule (best-of-n, the quantilizer, exponential tilting) states what
:mod:`rlscale.theory.reward` needs of it — its KL on a pool of ``n = e^t``
candidates, the largest pool its KL budget allows, and its noise-free gain on a
pool (and, for the simulators, the law of its selected candidate's standardised
score, :meth:`SelectionRule.sample_top`) — and one generic optimiser turns those into the model gain
``G(M, K) = sup_n gain(n)`` (the way a cvxpy atom declares its curvature and sign
and the solver does the rest).  A test can therefore loop over :data:`RULES` and
check every rule against the same identities.

The model (derivations in the docstring of :mod:`rlscale.theory.reward`)
-----------------------------------------------------------------------
* Proxy noise of the anchor scheme ``σ_n² = κτ²n/M``; gold gain given the proxy
  ``E[X | Ŷ] = Ŷ/(1 + σ²)`` (regressional Goodhart), so a rule whose
  standardised proxy gain on the pool is ``top(n)`` has gold gain
  ``top(n)/sqrt(1 + σ_n²)`` (:func:`shrink`).
* ``bon``: KL ``log n − (n−1)/n``; ``top = e(n)`` (expected maximum).
* ``quantile``: KL ``log n``; ``top = n φ(Φ⁻¹(1 − 1/n))`` (top-``1/n`` mean).
* ``tilt``: KL ``min(K, log n)``; ``top = sqrt(2 min(K, log n))``.  Its gain is
  the exact envelope ``U(M, K)`` in closed form (Lambert ``W``), so it needs
  no search.
* The other rules' pool gain is unimodal in ``t = log n`` (a log-concave
  numerator over the log-convex ``sqrt(1 + a e^t)``), which makes the
  grid-bracket plus golden-section search of :meth:`SelectionRule.optimise` exact
  to ~1e-10 relative.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from scipy.special import lambertw, ndtri, ndtri_exp

from rlscale.theory._gaussian import (
    expected_max_normal,
    expected_max_normal_log,
    quantile_mean_normal,
)
from rlscale.theory._normal_selection import bon_log_n_for_kl, kl_of_log_n, quantile_mean_log

__all__ = ["KAPPA", "RULES", "BestOfN", "Quantilizer", "SelectionRule", "Tilt", "rule_for",
           "shrink"]

#: Proxy-noise constant of the anchor comparison scheme: ``σ_n² = KAPPA τ² n/M``.
KAPPA = 1.0

_BLOCK = 2048  # inputs optimised at once: the grid is (block, <= 530) floats


def log_noise_factor(m: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """``log(κτ²/M)`` (``-inf`` for ``τ = 0``, no noise).

    Examples
    --------
    >>> float(log_noise_factor(np.e ** 2, 1.0))
    -2.0
    """
    with np.errstate(divide="ignore"):
        return np.log(KAPPA) + 2.0 * np.log(tau) - np.log(m)


def shrink(log_n: np.ndarray, m: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """Regression factor ``1/sqrt(1 + σ_n²)``, ``σ_n² = κτ²n/M``, in log space (any n, τ).

    Examples
    --------
    >>> round(float(shrink(np.log(3.0), 1.0, 1.0)), 12)  # σ² = 3: 1/sqrt(4)
    0.5
    """
    return np.exp(-0.5 * np.logaddexp(0.0, log_noise_factor(m, tau) + log_n))


def lambertw_exp(big_l: np.ndarray) -> np.ndarray:
    """``W(e^L)``, i.e. the root of ``w + log w = L``, for any real ``L`` (no overflow).

    Examples
    --------
    >>> round(float(lambertw_exp(1.0)), 12)  # W(e) = 1
    1.0
    """
    big_l = np.asarray(big_l, dtype=np.float64)
    out = np.empty(big_l.shape)
    small = big_l <= 2.0
    out[small] = lambertw(np.exp(big_l[small])).real
    # Newton on w + log w = L from w0 = L - log L (>= root for L > 2); convex, monotone.
    lb = big_l[~small]
    v = lb - np.log(lb)
    for _ in range(50):
        step = (v + np.log(v) - lb) / (1.0 + 1.0 / v)
        v = v - step
        if np.all(np.abs(step) <= 1e-15 * v):
            break
    out[~small] = v
    return out


def envelope_pool(m: np.ndarray, k: np.ndarray, tau: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``(log n_opt, U)`` of the envelope, in log space; ``τ = 0`` means no noise: ``n = e^K``.

    ``U(M, K) = sqrt(2 min(K, K*)/(1 + a e^{min(K, K*)}))`` with
    ``K* = 1 + W(z)``, ``z = M/(e κ τ²)`` (module docstring of
    :mod:`rlscale.theory.reward`).

    Examples
    --------
    >>> t, u = envelope_pool(np.float64(1e300), np.float64(2.0), np.float64(1.0))
    >>> float(t), round(float(u), 12)  # data plentiful: n = e^K, U = sqrt(2K)
    (2.0, 2.0)
    """
    kstar = _kstar(log_noise_factor(m, tau))
    t = np.minimum(k, kstar)
    return t, np.sqrt(2.0) * np.sqrt(t) * shrink(t, m, tau)  # sqrt(2t): t may be 1.8e308


def _kstar(log_a: np.ndarray) -> np.ndarray:
    """The envelope's maximiser ``K* = 1 + W(z)``, ``z = M/(e κ τ²) = exp(-1 - log a)``;
    ``inf`` without noise (``log a = -inf``)."""
    log_a = np.asarray(log_a, dtype=np.float64)
    kstar = np.full(log_a.shape, np.inf)
    noisy = np.isfinite(log_a)
    kstar[noisy] = 1.0 + lambertw_exp(-1.0 - log_a[noisy])
    return kstar


class SelectionRule(abc.ABC):
    """A rule that selects from a pool of ``n`` proxy-scored candidates within a KL budget.

    Subclasses declare :attr:`name`, the KL of a pool (:meth:`kl_log`), the
    largest pool a budget allows (:meth:`log_pool_limit`) and the noise-free
    gain on a pool (:meth:`top` for real ``n``, :meth:`top_log` for ``t = log n``);
    :meth:`optimise` maximises the gold gain over pools from those alone.

    Examples
    --------
    >>> r = RULES["bon"]
    >>> r.name, round(float(r.kl_log(np.log(2.0))), 6)
    ('bon', 0.193147)
    """

    name: ClassVar[str] = ""
    #: One line for messages and documentation.
    summary: ClassVar[str] = ""

    @abc.abstractmethod
    def kl_log(self, t: np.ndarray) -> np.ndarray:
        """KL from the reference of the rule on a pool of ``n = e^t`` (uncapped)."""

    @abc.abstractmethod
    def log_pool_limit(self, k: np.ndarray) -> np.ndarray:
        """The largest ``t = log n`` whose KL is at most ``k``."""

    @abc.abstractmethod
    def top(self, n: np.ndarray, k: np.ndarray) -> np.ndarray:
        """Noise-free (standardised-proxy) gain on a pool of real size ``n >= 1``."""

    @abc.abstractmethod
    def top_log(self, t: np.ndarray, k: np.ndarray) -> np.ndarray:
        """:meth:`top` at ``n = e^t``, for pools beyond the float range."""

    @abc.abstractmethod
    def sample_top(self, rng: np.random.Generator, size: int, n: float,
                   k: float) -> np.ndarray:
        """``size`` draws of the selected candidate's standardised proxy score.

        The score ``s = Ŷ_sel/sqrt(1 + σ²)`` of the candidate the rule selects
        from ``n`` iid N(0, 1) scores under KL budget ``k`` (real ``n >= 1``, up to
        1e300 and beyond), drawn by inversion of its law in log space so that the
        ``n`` candidates are never materialised: the simulator's fast path
        (``rlscale.simulate.sample_selection``) turns ``s`` into the gold reward.
        Its mean is :meth:`top`.
        """

    def top_at_kl(self, k: np.ndarray) -> np.ndarray:
        """Noise-free gain at KL budget ``k``: :meth:`top` on the largest pool ``k`` allows.

        Through ``t = log n`` (:meth:`top_log` of :meth:`log_pool_limit`), so any
        budget is fine (best-of-n's pool passes the float range at ``k ≈ 708``).

        Examples
        --------
        >>> round(float(RULES["tilt"].top_at_kl(np.float64(2.0))), 12)   # sqrt(2K)
        2.0
        """
        return self.top_log(self.log_pool_limit(k), k)

    def pool_gain(self, t: np.ndarray, m: np.ndarray, tau: np.ndarray,
                  k: np.ndarray) -> np.ndarray:
        """Gold gain on a pool of size ``n = e^t``: ``top(n)/sqrt(1 + κτ²n/M)``, in log space."""
        t, m, tau, k = np.broadcast_arrays(t, m, tau, k)
        return self.top_log(t, k) * shrink(t, m, tau)

    def optimise(self, m: np.ndarray, k: np.ndarray, tau: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
        """``(log n, gain)`` of the best pool for each input, over blocks (bounded memory)."""
        m, k, tau = np.broadcast_arrays(m, k, tau)
        flat = [np.ascontiguousarray(a).ravel() for a in (m, k, tau)]
        t, best = np.empty(m.size), np.empty(m.size)
        for start in range(0, m.size, _BLOCK):
            part = slice(start, start + _BLOCK)
            t[part], best[part] = _search(self, *(a[part] for a in flat))
        return t.reshape(m.shape), best.reshape(m.shape)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class BestOfN(SelectionRule):
    """Best-of-n: KL ``log n − (n−1)/n``, noise-free gain ``e(n)``."""

    name = "bon"
    summary = "best-of-n: the highest-proxy of n candidates"

    def kl_log(self, t: np.ndarray) -> np.ndarray:
        return kl_of_log_n(t)

    def log_pool_limit(self, k: np.ndarray) -> np.ndarray:
        return bon_log_n_for_kl(k)

    def top(self, n: np.ndarray, k: np.ndarray) -> np.ndarray:
        return np.asarray(expected_max_normal(n))

    def top_log(self, t: np.ndarray, k: np.ndarray) -> np.ndarray:
        return np.asarray(expected_max_normal_log(t))

    def sample_top(self, rng: np.random.Generator, size: int, n: float,
                   k: float) -> np.ndarray:
        # The max of n normals is Φ⁻¹(U^{1/n}) = Φ⁻¹(exp(−E/n)), E ~ Exp(1): minus the
        # upper-tail quantile at p = −expm1(−E/n).
        log_n = np.log(n)
        e = rng.standard_exponential(size)
        return _isf(-np.expm1(-e / n), lambda bad: np.log(e[bad]) - log_n)


class Quantilizer(SelectionRule):
    """Quantilizer: the reference conditioned on the proxy's top ``1/n``; KL ``log n``."""

    name = "quantile"
    summary = "quantilizer: the reference restricted to the proxy's top 1/n"

    def kl_log(self, t: np.ndarray) -> np.ndarray:
        return np.asarray(t, dtype=np.float64)

    def log_pool_limit(self, k: np.ndarray) -> np.ndarray:
        return k

    def top(self, n: np.ndarray, k: np.ndarray) -> np.ndarray:
        return np.asarray(quantile_mean_normal(n))

    def top_log(self, t: np.ndarray, k: np.ndarray) -> np.ndarray:
        return quantile_mean_log(t)

    def sample_top(self, rng: np.random.Generator, size: int, n: float,
                   k: float) -> np.ndarray:
        # N(0, 1) above its 1 − 1/n quantile, by inversion of the truncated law: −Φ⁻¹(U/n).
        log_n = np.log(n)
        u = rng.random(size)
        return _isf(u / n, lambda bad: np.log(u[bad]) - log_n)


class Tilt(SelectionRule):
    """Exponential tilting (idealised): gain ``sqrt(2 min(K, log n))``, KL ``min(K, log n)``.

    Its best pool is the envelope's, in closed form (:func:`envelope_pool`).
    """

    name = "tilt"
    summary = "exponential tilting of the proxy (the envelope: best of any rule)"

    def kl_log(self, t: np.ndarray) -> np.ndarray:
        return np.asarray(t, dtype=np.float64)

    def log_pool_limit(self, k: np.ndarray) -> np.ndarray:
        return k

    def top(self, n: np.ndarray, k: np.ndarray) -> np.ndarray:
        return np.sqrt(2.0 * np.minimum(k, np.log(n)))

    def top_log(self, t: np.ndarray, k: np.ndarray) -> np.ndarray:
        return np.sqrt(2.0 * np.minimum(k, t))

    def sample_top(self, rng: np.random.Generator, size: int, n: float,
                   k: float) -> np.ndarray:
        # The tilted reference's standardised score is N(β, 1), β = sqrt(2 min(K, log n)).
        s = rng.standard_normal(size)
        s += np.sqrt(2.0 * min(k, np.log(n)))
        return s

    def optimise(self, m: np.ndarray, k: np.ndarray, tau: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
        return envelope_pool(m, k, tau)


def _isf(p: np.ndarray, log_p: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``-Φ⁻¹(p)`` (upper-tail quantile), in place; ``log_p(mask)`` where ``p`` underflows.

    ``ndtri`` is about twice as fast as ``ndtri_exp``; the log-space fallback
    only runs for ``p < 1e-300`` (pool sizes beyond 1e300).
    """
    s = ndtri(p)
    np.negative(s, out=s)
    bad = p < 1e-300
    if bad.any():
        s[bad] = -ndtri_exp(log_p(bad))
    return s


#: Every rule with an exact gain, by name.
RULES: dict[str, SelectionRule] = {r.name: r for r in (BestOfN(), Quantilizer(), Tilt())}


def rule_for(method: Any) -> SelectionRule:
    """The rule called ``method``; ``TypeError``/``ValueError`` naming it otherwise.

    Examples
    --------
    >>> rule_for("tilt")
    Tilt()
    >>> rule_for("pg")
    Traceback (most recent call last):
    ...
    ValueError: method must be one of bon, quantile, tilt; got method='pg'
    """
    names = ", ".join(RULES)
    if not isinstance(method, str):
        raise TypeError(f"method must be one of {names}; got {method!r:.60}")
    if method not in RULES:
        raise ValueError(f"method must be one of {names}; got method={method!r}")
    return RULES[method]


def _search(rule: SelectionRule, m: np.ndarray, k: np.ndarray, tau: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """Maximise the pool gain over ``t = log n ∈ [0, t_max(K)]``, vectorised.

    The objective is unimodal in ``t`` (a log-concave numerator over a
    log-convex ``sqrt(1 + a e^t)``), so the best point of *any* grid brackets
    the maximiser between its neighbours.  The grid is 17 evenly spaced
    points plus a geometric ladder (ratio 4) from ``t_max/4`` down to
    ``t = 1e-3``: the maximiser sits near ``log(M/τ²)`` however large the
    KL budget, and an even grid alone bracketed it in ``[0, t_max/16]``, which
    for ``K ≥ 1e15`` is too wide to refine (the gain came out 3.6e-237 or 0;
    issue 10 §4).  Golden-section search then refines the bracket to ~1e-10
    relative.  The grid depends only on ``max t_max``, so ``G`` is monotone in
    ``K`` up to that refinement error.
    """
    tmax = rule.log_pool_limit(k)
    # Past t_cap = K* + 40 no pool can win: every rule's pool gain is at most the
    # tilt envelope U(t) = sqrt(2t)/sqrt(1 + a e^t) (Donsker–Varadhan: KL <= t), which
    # decreases beyond its maximiser K*, and where t_max > t_cap the gain at K* is
    # top(e^K*) shrink(K*) with a e^K* = 1/W (W = K* - 1), so
    #   U(t_cap) / gain(K*) <= sqrt(2 (K* + 40)(W + 1)) e^-20 / top(e^K*) < 1e-5
    # for every float M and τ (K* < 2200; top(e) is 0.78 for bon, 1.02 for the
    # quantilizer).  (A run-time check of that inequality, issue 10, never failed over
    # M, K in [1e-3, 1e305] and τ in [1e-150, 1e150]; it was removed in issue 25.)
    log_a = log_noise_factor(m, tau)
    noisy = np.isfinite(log_a)
    t_cap = _kstar(log_a) + 40.0
    full = tmax
    # Without noise the pool gain increases with n (e(n) and the top-1/n mean do), so
    # its maximum is at t_max: no search (the grid below sees t_max = 0 there).
    tmax = np.where(noisy, np.minimum(tmax, t_cap), 0.0)
    top = float(np.max(tmax, initial=0.0))
    rungs = max(0, math.ceil((math.log2(top) - math.log2(1e-3)) / 2)) if top > 1e-3 else 0
    ladder = 4.0 ** -np.arange(rungs + 1, dtype=np.float64)  # 1, 1/4, ..., <= 1e-3/top
    grid = np.unique(np.concatenate([np.linspace(0.0, 1.0, 17), ladder]))
    last = grid.size - 1
    # the inputs are one flat block (optimise ravels them): rows are inputs, columns the grid
    ts = tmax[:, None] * grid
    vals = rule.pool_gain(ts, m[:, None], tau[:, None], k[:, None])
    j = np.argmax(vals, axis=1)
    rows = np.arange(ts.shape[0])
    vmax = vals[rows, j]
    lo = ts[rows, np.maximum(j - 1, 0)]
    hi = ts[rows, np.minimum(j + 1, last)]
    inv_phi = (math.sqrt(5.0) - 1.0) / 2.0
    c = hi - inv_phi * (hi - lo)
    d = lo + inv_phi * (hi - lo)
    fc = rule.pool_gain(c, m, tau, k)
    fd = rule.pool_gain(d, m, tau, k)
    for _ in range(48):
        left = fc >= fd  # the maximum lies in [lo, d]
        lo, hi = np.where(left, lo, c), np.where(left, d, hi)
        keep_c, keep_f = np.where(left, c, d), np.where(left, fc, fd)
        new = np.where(left, hi - inv_phi * (hi - lo), lo + inv_phi * (hi - lo))
        f_new = rule.pool_gain(new, m, tau, k)
        c, fc = np.where(left, new, keep_c), np.where(left, f_new, keep_f)
        d, fd = np.where(left, keep_c, new), np.where(left, keep_f, f_new)
    t = np.where(fc >= fd, c, d)
    best = np.maximum(np.maximum(fc, fd), vmax)
    t = np.where(vmax > np.maximum(fc, fd), ts[rows, j], t)
    if not noisy.all():
        t = np.where(noisy, t, full)
        best = np.where(noisy, best, rule.pool_gain(full, m, tau, k))
    return t, best
