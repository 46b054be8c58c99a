"""Per-turn success laws of an agent that spends an inference budget.

A task has T turns; at turn t the agent draws n_t candidates (each costs c_t
samples' worth of budget) and a verifier decides which one to commit.  The
episode succeeds when every turn does, so its success is Π_t p_t(n_t) and its
log-success the separable sum Σ_t log p_t(n_t).  Four per-turn laws:

``coverage`` (perfect verifier)
    A candidate is correct with probability q, independently; the verifier
    recognises a correct one, so the turn succeeds iff one of n is correct:
    p(n) = 1 − (1 − q)^n (Brown et al. 2024, "Large Language Monkeys",
    arXiv 2407.21787, coverage).  Computed as −expm1(n·log1p(−q)).

``verifier`` (noisy verifier with known error rates)
    The verifier accepts a correct candidate with probability 1 − fnr and an
    incorrect one with probability fpr.  Per draw, the acceptance rate is
    a = q(1 − fnr) + (1 − q)·fpr; an accepted candidate is correct with
    probability π = q(1 − fnr)/a (Bayes), a rejected one with
    ρ = q·fnr/(1 − a).  Two failure models:

    * ``failures="terminal"`` — the turn commits once: the first accepted
      candidate, or, when none of n is accepted, a rejected one (fallback).
      Candidates are exchangeable, so P(correct | ≥1 accepted) = π and
      P(correct | none accepted) = ρ, and with (1 − a)^n = P(none accepted)
      p(n) = π − (π − ρ)(1 − a)^n for n ≥ 1, p(0) = 0.  A wrong commit ends
      the episode.
    * ``failures="retried"`` — a wrong commit is observed and the turn is
      tried again from its start with the remaining candidates; only accepted
      candidates are committed, so the turn succeeds iff some draw is correct
      *and* accepted: p(n) = 1 − (1 − q(1 − fnr))^n.

    Both need an informative verifier, fpr + fnr < 1 (then π > q > ρ).

``selection`` (best-of-n on a noisy score: the reward-law model)
    Candidate quality X ~ N(0, 1), correct iff X > z with z = Φ⁻¹(1 − q)
    (so P(correct) = q); the verifier scores Y = X + σZ (σ: proxy noise, as
    in :mod:`rlscale.theory.reward`, where σ² = τ²n/M for M comparisons) and
    the candidate with the highest score is committed.  With W the standard
    score quantile of the winner, W = max of n iid N(0, 1) (density
    nΦ(w)^{n−1}φ(w)), and X | Y ~ N(Y/(1+σ²), σ²/(1+σ²)), so
    p(n) = ∫ nΦ(w)^{n−1}φ(w)·Φ((w − z√(1+σ²))/σ) dw, evaluated by composite
    Gauss–Legendre quadrature in w (log-space density, real n ≥ 1).

``empirical`` (fitted coverage curve)
    Brown et al. 2024 fit coverage as c(k) = exp(a·k^b), a < 0, b < 0; then
    p(n) = exp(a·n^b), log p(n) = a·n^b.

Concavity (what allocation relies on).  For every law above log p is concave
in real n ≥ 1 (``rlscale prove inference-concavity`` checks the coverage,
verifier and empirical forms; log of a positive concave function is concave).
For ``selection``, writing U for the winner's score percentile (U ~ Beta(n,1))
and h(u) the nondecreasing probability of correctness at percentile u,
integration by parts gives p(n) = h(1) − ∫_0^1 u^n h'(u) du, so
p''(n) = −∫ u^n (log u)² h'(u) du ≤ 0: concave, hence log-concave.  Concave
p in real n implies decreasing increments Δp(n) = p(n+1) − p(n) on the
integers, which is what the greedy integer allocation needs.

Context per turn: a turn whose success and cost depend on the context it is
given is a :class:`~rlscale.theory.ContextTurn` (:mod:`rlscale.theory._context`).

Coverage from samples: the unbiased pass@k estimator of Chen et al. 2021
(arXiv 2107.03374, eq. 1), 1 − C(n−c, k)/C(n, k) for a problem with c correct
out of n samples, evaluated in log space as a sum of log1p terms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import log_ndtr, ndtri

from rlscale.theory._validation import (
    check_choice,
    check_positive_int,
    check_real,
    check_scalar,
    return_like,
)

__all__ = ["KINDS", "Turn", "coverage", "episode_success", "log_coverage", "pass_at_k"]

KINDS = ("coverage", "verifier", "selection", "empirical")
FAILURES = ("terminal", "retried")

# Composite Gauss–Legendre nodes for the selection integral, in units of the
# winner's score w: panels cover the bulk of max-of-n for n up to ~1e12.
_GL_X, _GL_W = np.polynomial.legendre.leggauss(24)


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


@dataclass(frozen=True)
class Turn:
    """One turn of a multi-turn task: its per-candidate law and unit cost.

    Build turns with the class methods :meth:`with_coverage`,
    :meth:`with_verifier`, :meth:`with_selection` and :meth:`with_empirical`;
    the formulas are in the module docstring.  ``cost`` is the budget one
    candidate uses (a positive whole number of sample units).

    Examples
    --------
    >>> t = Turn.with_verifier(0.3, fpr=0.1, fnr=0.2)
    >>> round(t.accept_rate, 4), round(t.precision, 4), round(t.fallback, 4)
    (0.31, 0.7742, 0.087)
    >>> [round(float(p), 4) for p in t.success([0, 1, 10])]
    [0.0, 0.3, 0.7574]
    >>> round(float(Turn.with_coverage(0.3).success(10)), 4)
    0.9718
    """

    kind: str
    q: float = 0.0
    cost: int = 1
    fpr: float = 0.0
    fnr: float = 0.0
    failures: str = "terminal"
    noise: float = 0.0
    a: float = 0.0
    b: float = 0.0

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, KINDS)  # a non-string is a TypeError (issue 22)
        check_choice("failures", self.failures, FAILURES)
        object.__setattr__(self, "cost", check_positive_int("cost", self.cost,
                                                            maximum=MAX_TABLE))
        for name in ("q", "fpr", "fnr", "noise", "a", "b"):
            object.__setattr__(self, name, check_scalar(name, getattr(self, name)))
        if self.kind != "empirical":
            check_real("q", self.q, low=0.0, high=1.0, low_open=True)
        if self.kind == "verifier":
            check_real("fpr", self.fpr, low=0.0, high=1.0)
            check_real("fnr", self.fnr, low=0.0, high=1.0)
            if self.fpr + self.fnr >= 1.0:
                raise ValueError(f"fpr + fnr must be < 1 (an informative verifier); "
                                 f"got fpr={self.fpr:g}, fnr={self.fnr:g}")
        if self.kind == "selection":
            check_real("noise", self.noise, low=0.0, low_open=True)
        if self.kind == "empirical":
            check_real("a", self.a, high=0.0, high_open=True)
            check_real("b", self.b, high=0.0, high_open=True)

    # ------------------------------------------------------------------ builders
    @classmethod
    def with_coverage(cls, q: float, *, cost: int = 1) -> Turn:
        """Perfect verifier: p(n) = 1 − (1 − q)^n."""
        return cls("coverage", q=check_scalar("q", q), cost=cost)

    @classmethod
    def with_verifier(cls, q: float, *, fpr: float, fnr: float, cost: int = 1,
                      failures: str = "terminal") -> Turn:
        """Noisy verifier with false-positive rate ``fpr`` and false-negative rate ``fnr``."""
        return cls("verifier", q=check_scalar("q", q), fpr=check_scalar("fpr", fpr),
                   fnr=check_scalar("fnr", fnr), cost=cost, failures=failures)

    @classmethod
    def with_selection(cls, q: float, *, noise: float, cost: int = 1) -> Turn:
        """Best-of-n on a Gaussian proxy score with noise ``noise`` (the reward-law model)."""
        return cls("selection", q=check_scalar("q", q), noise=check_scalar("noise", noise),
                   cost=cost)

    @classmethod
    def with_empirical(cls, a: float, b: float, *, cost: int = 1) -> Turn:
        """Fitted coverage curve exp(a·n^b), a < 0, b < 0 (Brown et al. 2024)."""
        return cls("empirical", a=check_scalar("a", a), b=check_scalar("b", b), cost=cost)

    # ------------------------------------------------------------------ verifier parts
    @property
    def accept_rate(self) -> float:
        """Per-draw probability that the verifier accepts (a); q for a perfect verifier."""
        if self.kind == "verifier":
            return self.q * (1 - self.fnr) + (1 - self.q) * self.fpr
        return self.q

    @property
    def precision(self) -> float:
        """P(correct | accepted) = π (1 for a perfect verifier)."""
        if self.kind == "verifier":
            return self.q * (1 - self.fnr) / self.accept_rate
        return 1.0

    @property
    def fallback(self) -> float:
        """P(correct | rejected) = ρ, used when a terminal turn commits a rejected candidate."""
        if self.kind == "verifier" and self.failures == "terminal" and self.accept_rate < 1:
            return self.q * self.fnr / (1 - self.accept_rate)
        return 0.0

    @property
    def sequential(self) -> bool:
        """Whether candidates can be drawn one at a time, stopping at a verified success."""
        return self.kind != "selection"

    # ------------------------------------------------------------------ laws
    def log_success(self, n: Any) -> float | np.ndarray:
        """log p(n) for real n ≥ 0 (−inf at n = 0), computed without forming p."""
        n_ = check_real("n", n, low=0.0)
        if (self.kind == "selection" or (self.kind == "verifier" and self.failures == "terminal")) \
                and np.any((n_ > 0) & (n_ < 1)):
            raise ValueError(f"n must be 0 or >= 1 for a {self.kind} turn that commits one "
                             f"candidate; got n={n_[(n_ > 0) & (n_ < 1)].ravel()[0]:g}")
        return return_like(self._log_p(n_), n)

    def log_success_range(self, lo: int, hi: int) -> np.ndarray:
        """log p(n) for the whole numbers n = lo, ..., hi (the planners' tables).

        Examples
        --------
        >>> Turn.with_coverage(0.5).log_success_range(0, 2).round(4).tolist()
        [-inf, -0.6931, -0.2877]
        """
        lo = check_positive_int("lo", lo, minimum=0)
        hi = check_positive_int("hi", hi, minimum=lo, maximum=lo + MAX_TABLE)
        return self._log_p(np.arange(lo, hi + 1, dtype=np.float64))

    def _log_p(self, n: np.ndarray) -> np.ndarray:
        """log p(n) on a checked float64 array (no validation: the hot path of the planners)."""
        with np.errstate(divide="ignore"):
            if self.kind == "coverage" or (self.kind == "verifier" and self.failures == "retried"):
                q = self.q if self.kind == "coverage" else self.q * (1 - self.fnr)
                if q >= 1:
                    return np.where(n > 0, 0.0, -np.inf)
                return np.log(-np.expm1(n * np.log1p(-q)))
            if self.kind == "verifier":
                pi, rho, a = self.precision, self.fallback, self.accept_rate
                d = max(1.0 - rho / pi, 0.0)  # in (0, 1]; rounding can leave -1e-16 at q = 1
                r = n * np.log1p(-a) if a < 1 else np.where(n > 0, -np.inf, 0.0)
                out = np.log(pi) + np.log1p(-d * np.exp(r))
                return np.where(n == 0, -np.inf, out)
            if self.kind == "empirical":
                return np.where(n > 0, self.a * np.power(np.maximum(n, 1e-300), self.b), -np.inf)
            return np.log(self._selection(n))

    def success(self, n: Any) -> float | np.ndarray:
        """p(n), the probability that the turn succeeds with n candidates."""
        return return_like(np.exp(np.asarray(self.log_success(n))), n)

    def _selection(self, n: np.ndarray) -> np.ndarray:
        """p(n) of the Gaussian selection law by quadrature over the winner's score."""
        flat = n.ravel()
        if np.any((flat > 0) & (flat < 1)):
            raise ValueError("n must be 0 or >= 1 for a selection turn")
        s2 = 1.0 + self.noise**2
        z = float(ndtri(1.0 - self.q))
        out = np.zeros_like(flat)
        pos = flat >= 1
        if pos.any():
            m = flat[pos][:, None]
            # The max of n normals lies in [√(2 log n) − 11, √(2 log n) + 6] (and above
            # −10) up to 1e-20 of its mass.
            centre = np.sqrt(2.0 * np.log(np.maximum(m, 2.0)))
            hi, lo = centre + 6.0, np.maximum(centre - 11.0, -10.0)
            edges = lo + (hi - lo) * np.linspace(0.0, 1.0, 25)[None, :]  # 24 panels
            half = (edges[:, 1:] - edges[:, :-1]) / 2
            mid = (edges[:, 1:] + edges[:, :-1]) / 2
            w = (mid[:, :, None] + half[:, :, None] * _GL_X).reshape(m.shape[0], -1)
            wts = (half[:, :, None] * _GL_W).reshape(m.shape[0], -1)
            log_dens = np.log(m) + (m - 1) * log_ndtr(w) - w * w / 2 - 0.5 * np.log(2 * np.pi)
            good = np.exp(log_ndtr((w - z * np.sqrt(s2)) / self.noise))
            dens = wts * np.exp(log_dens)
            # Self-normalised: the quadrature's own total mass (1 up to ~1e-8 at n = 1e15)
            # divides out, so p stays monotone in n where h ≈ 1 carries the mass.
            out[pos] = np.clip(np.sum(dens * good, axis=1) / np.sum(dens, axis=1), 0.0, 1.0)
        return out.reshape(n.shape)

    def as_dict(self) -> dict[str, Any]:
        """The turn's fields as plain numbers and strings."""
        return dict(self.__dict__)


def episode_success(turns: Any, n: Any) -> float:
    """Π_t p_t(n_t): success of a task whose turns all have to succeed.

    Examples
    --------
    >>> turns = [Turn.with_coverage(0.5), Turn.with_coverage(0.2)]
    >>> round(episode_success(turns, [2, 3]), 6)   # 0.75 * 0.488
    0.366
    """
    if isinstance(turns, str | bytes) or not isinstance(turns, Sequence) or not all(
            isinstance(t, Turn) for t in turns):
        raise TypeError(f"turns must be a sequence of Turn; got {turns!r:.80}")
    turns = list(turns)
    n_ = check_real("n", n, low=0.0)
    if n_.shape != (len(turns),):
        raise ValueError(f"n must have one entry per turn ({len(turns)}); got shape {n_.shape}")
    return float(np.exp(sum(float(t.log_success(k)) for t, k in zip(turns, n_))))
