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
"""

from __future__ import annotations

import abc
import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy.special import log_ndtr, ndtri

from rlscale.theory._inference import MAX_TABLE
from rlscale.theory._validation import (
    check_choice,
    check_positive_int,
    check_real,
    check_scalar,
    return_like,
)

__all__ = ["KINDS", "CoverageTurn", "EmpiricalTurn", "SelectionTurn", "Turn", "VerifierTurn",
           "episode_success"]

FAILURES = ("terminal", "retried")

# Composite Gauss–Legendre nodes for the selection integral, in units of the
# winner's score w: panels cover the bulk of max-of-n for n up to ~1e12.
_GL_X, _GL_W = np.polynomial.legendre.leggauss(24)


class _TurnType(abc.ABCMeta):
    """Calling :class:`Turn` itself builds the turn of a kind: ``Turn("coverage", q=0.5)``.

    The concrete classes are constructed as usual; only the base's own call is
    the backward-compatible factory (the one dataclass of every kind's fields
    that ``Turn`` used to be).
    """

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is Turn:
            return _turn_of_kind(*args, **kwargs)
        return super().__call__(*args, **kwargs)


class Turn(metaclass=_TurnType):
    """One turn of a multi-turn task: its per-candidate law and unit cost.

    One class per law (the formulas are in the module docstring), behind this
    base: :class:`CoverageTurn` (perfect verifier), :class:`VerifierTurn`
    (noisy verifier, terminal or retried failures), :class:`SelectionTurn`
    (best-of-n on a noisy score) and :class:`EmpiricalTurn` (fitted coverage
    curve).  Build them with :meth:`with_coverage`, :meth:`with_verifier`,
    :meth:`with_selection` and :meth:`with_empirical`, with the classes
    themselves, or with ``Turn(kind, ...)`` (a factory taking the kind's name
    and its fields).  ``cost`` is the budget one candidate uses (a positive
    whole number of sample units).  Each class declares what the planners ask:
    ``kind``, ``sequential`` (can draw one at a time and stop),
    :attr:`commits_once` (real ``n`` in (0, 1) is meaningless), ``entry_seconds``
    (the cost of one table entry of log p) and a DCP form of log p
    (:meth:`dcp_log_success`) where one exists.

    Examples
    --------
    >>> t = Turn.with_verifier(0.3, fpr=0.1, fnr=0.2)
    >>> t
    VerifierTurn(q=0.3, fpr=0.1, fnr=0.2, cost=1, failures='terminal')
    >>> round(t.accept_rate, 4), round(t.precision, 4), round(t.fallback, 4)
    (0.31, 0.7742, 0.087)
    >>> [round(float(p), 4) for p in t.success([0, 1, 10])]
    [0.0, 0.3, 0.7574]
    >>> round(float(Turn.with_coverage(0.3).success(10)), 4)
    0.9718
    >>> Turn("coverage", q=0.3) == CoverageTurn(0.3)
    True
    """

    #: The law's name (``KINDS``).
    kind: ClassVar[str]
    #: Whether candidates can be drawn one at a time, stopping at a verified success.
    sequential: ClassVar[bool] = True
    #: Seconds of one core per entry of a log p(n) table, the planners' time estimate
    #: (issue 22; measured: a closed form ~2e-8 s, a quadrature ~5e-5 s).
    entry_seconds: ClassVar[float] = 2e-8
    cost: int

    # ------------------------------------------------------------------ builders
    @classmethod
    def with_coverage(cls, q: float, *, cost: int = 1) -> CoverageTurn:
        """Perfect verifier: p(n) = 1 − (1 − q)^n."""
        return CoverageTurn(q, cost=cost)

    @classmethod
    def with_verifier(cls, q: float, *, fpr: float, fnr: float, cost: int = 1,
                      failures: str = "terminal") -> VerifierTurn:
        """Noisy verifier with false-positive rate ``fpr`` and false-negative rate ``fnr``."""
        return VerifierTurn(q, fpr, fnr, cost=cost, failures=failures)

    @classmethod
    def with_selection(cls, q: float, *, noise: float, cost: int = 1) -> SelectionTurn:
        """Best-of-n on a Gaussian proxy score with noise ``noise`` (the reward-law model)."""
        return SelectionTurn(q, noise, cost=cost)

    @classmethod
    def with_empirical(cls, a: float, b: float, *, cost: int = 1) -> EmpiricalTurn:
        """Fitted coverage curve exp(a·n^b), a < 0, b < 0 (Brown et al. 2024)."""
        return EmpiricalTurn(a, b, cost=cost)

    # ------------------------------------------------------------------ verifier parts
    @property
    @abc.abstractmethod
    def accept_rate(self) -> float:
        """Per-draw probability that the verifier accepts (a); q for a perfect verifier."""

    @property
    def precision(self) -> float:
        """P(correct | accepted) = π (1 for a perfect verifier)."""
        return 1.0

    @property
    def fallback(self) -> float:
        """P(correct | rejected) = ρ, used when a terminal turn commits a rejected candidate."""
        return 0.0

    @property
    def commits_once(self) -> bool:
        """Whether the turn commits exactly one candidate, so that p(n) needs n = 0 or n >= 1."""
        return False

    # ------------------------------------------------------------------ laws
    def log_success(self, n: Any) -> float | np.ndarray:
        """log p(n) for real n ≥ 0 (−inf at n = 0), computed without forming p."""
        n_ = check_real("n", n, low=0.0)
        if self.commits_once and np.any((n_ > 0) & (n_ < 1)):
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
            return self._law(n)

    @abc.abstractmethod
    def _law(self, n: np.ndarray) -> np.ndarray:
        """The kind's log p(n) on a checked float64 array (log 0 = −inf allowed)."""

    def success(self, n: Any) -> float | np.ndarray:
        """p(n), the probability that the turn succeeds with n candidates."""
        return return_like(np.exp(np.asarray(self.log_success(n))), n)

    @abc.abstractmethod
    def dcp_log_success(self, cp: Any, n: Any) -> Any:
        """log p(n) as a concave cvxpy expression of the variable ``n`` (``cp``: the cvxpy module).

        What :func:`rlscale.optimize.continuous_plan` maximises; the module is passed
        in, so this package never imports cvxpy.  ``ValueError`` for a law without
        a DCP form (the selection turn).
        """

    def as_dict(self) -> dict[str, Any]:
        """The turn's kind and fields as plain numbers and strings (``Turn(**d)`` rebuilds it)."""
        return {"kind": self.kind, **{f.name: getattr(self, f.name)
                                      for f in dataclasses.fields(self)}}


def _turn_of_kind(kind: Any, q: Any = 0.0, cost: Any = 1, fpr: Any = 0.0, fnr: Any = 0.0,
                  failures: Any = "terminal", noise: Any = 0.0, a: Any = 0.0,
                  b: Any = 0.0) -> Turn:
    """``Turn(kind, ...)``: the turn of ``kind`` from the union of every kind's fields.

    The signature (and the order of validation) of the one dataclass ``Turn``
    was before issue 25.  A field the kind does not take must keep its default
    (a coverage turn with ``fpr=0.2`` would silently be a perfect verifier).
    """
    kind = check_choice("kind", kind, KINDS)  # a non-string is a TypeError (issue 22)
    given = {"q": q, "fpr": fpr, "fnr": fnr, "noise": noise, "a": a, "b": b}
    check_choice("failures", failures, FAILURES)
    check_positive_int("cost", cost, maximum=MAX_TABLE)
    for name, value in given.items():
        given[name] = check_scalar(name, value)
    given["failures"] = failures
    cls = _KIND_CLASSES[kind]
    takes = {f.name for f in dataclasses.fields(cls)}
    defaults = {"q": 0.0, "fpr": 0.0, "fnr": 0.0, "noise": 0.0, "a": 0.0, "b": 0.0,
                "failures": "terminal"}
    for name, value in given.items():
        if name not in takes and value != defaults[name]:
            raise ValueError(f"a {kind} turn takes no {name} (its fields: "
                             f"{', '.join(sorted(takes))}); got {name}={value!r}")
    return cls(cost=cost, **{k: v for k, v in given.items() if k in takes})


def _coverage_law(q: float, n: np.ndarray) -> np.ndarray:
    """log(1 − (1 − q)^n): the perfect verifier's, and a retried noisy one's with q(1 − fnr)."""
    if q >= 1:
        return np.where(n > 0, 0.0, -np.inf)
    return np.log(-np.expm1(n * np.log1p(-q)))


def _coverage_dcp(cp: Any, q: float, n: Any) -> Any:
    return 0.0 if q >= 1 else cp.log(1 - cp.exp(math.log1p(-q) * n))


def _check_cost(cost: Any) -> int:
    return check_positive_int("cost", cost, maximum=MAX_TABLE)


@dataclass(frozen=True)
class CoverageTurn(Turn):
    """Perfect verifier: a candidate is correct with probability ``q``; p(n) = 1 − (1 − q)^n.

    Examples
    --------
    >>> CoverageTurn(0.5, cost=2).success(3)
    0.875
    """

    kind: ClassVar[str] = "coverage"
    q: float
    cost: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "q", check_scalar("q", self.q))
        object.__setattr__(self, "cost", _check_cost(self.cost))
        check_real("q", self.q, low=0.0, high=1.0, low_open=True)

    @property
    def accept_rate(self) -> float:
        return self.q

    def _law(self, n: np.ndarray) -> np.ndarray:
        return _coverage_law(self.q, n)

    def dcp_log_success(self, cp: Any, n: Any) -> Any:
        return _coverage_dcp(cp, self.q, n)


@dataclass(frozen=True)
class VerifierTurn(Turn):
    """Noisy verifier with false-positive rate ``fpr`` and false-negative rate ``fnr``.

    ``failures="terminal"``: the turn commits once (the first accepted
    candidate, else a rejected one); ``"retried"``: a wrong commit is observed
    and the turn tries again (module docstring).  Needs ``fpr + fnr < 1``.

    Examples
    --------
    >>> round(float(VerifierTurn(0.3, 0.1, 0.2, failures="retried").success(1)), 12)  # q(1 − fnr)
    0.24
    """

    kind: ClassVar[str] = "verifier"
    q: float
    fpr: float
    fnr: float
    cost: int = 1
    failures: str = "terminal"

    def __post_init__(self) -> None:
        for name in ("q", "fpr", "fnr"):
            object.__setattr__(self, name, check_scalar(name, getattr(self, name)))
        check_choice("failures", self.failures, FAILURES)
        object.__setattr__(self, "cost", _check_cost(self.cost))
        check_real("q", self.q, low=0.0, high=1.0, low_open=True)
        check_real("fpr", self.fpr, low=0.0, high=1.0)
        check_real("fnr", self.fnr, low=0.0, high=1.0)
        if self.fpr + self.fnr >= 1.0:
            raise ValueError(f"fpr + fnr must be < 1 (an informative verifier); "
                             f"got fpr={self.fpr:g}, fnr={self.fnr:g}")

    @property
    def retried(self) -> bool:
        """Whether a wrong commit is observed and retried (``failures="retried"``)."""
        return self.failures == "retried"

    @property
    def commits_once(self) -> bool:
        return not self.retried

    @property
    def accept_rate(self) -> float:
        return self.q * (1 - self.fnr) + (1 - self.q) * self.fpr

    @property
    def precision(self) -> float:
        return self.q * (1 - self.fnr) / self.accept_rate

    @property
    def fallback(self) -> float:
        if not self.retried and self.accept_rate < 1:
            return self.q * self.fnr / (1 - self.accept_rate)
        return 0.0

    def _law(self, n: np.ndarray) -> np.ndarray:
        if self.retried:  # succeeds iff some draw is correct and accepted
            return _coverage_law(self.q * (1 - self.fnr), n)
        pi, rho, a = self.precision, self.fallback, self.accept_rate
        d = max(1.0 - rho / pi, 0.0)  # in (0, 1]; rounding can leave -1e-16 at q = 1
        r = n * np.log1p(-a) if a < 1 else np.where(n > 0, -np.inf, 0.0)
        out = np.log(pi) + np.log1p(-d * np.exp(r))
        return np.where(n == 0, -np.inf, out)

    def dcp_log_success(self, cp: Any, n: Any) -> Any:
        if self.retried:
            return _coverage_dcp(cp, self.q * (1 - self.fnr), n)
        pi, rho, a = self.precision, self.fallback, self.accept_rate
        gap = pi - rho  # > 0 for an informative verifier; rounds to 0 when q = 1
        if a >= 1 or gap <= 0:
            return math.log(pi)
        return cp.log(pi - gap * cp.exp(math.log1p(-a) * n))


@dataclass(frozen=True)
class SelectionTurn(Turn):
    """Best-of-n on a Gaussian proxy score with noise ``noise`` (the reward-law model).

    All n scores are needed before the choice, so it is not sequential, and
    its law (a quadrature) has no DCP form.

    Examples
    --------
    >>> round(float(SelectionTurn(0.2, 0.7).success(1)), 12)   # one candidate: q
    0.2
    """

    kind: ClassVar[str] = "selection"
    sequential: ClassVar[bool] = False
    entry_seconds: ClassVar[float] = 5e-5
    q: float
    noise: float
    cost: int = 1

    def __post_init__(self) -> None:
        for name in ("q", "noise"):
            object.__setattr__(self, name, check_scalar(name, getattr(self, name)))
        object.__setattr__(self, "cost", _check_cost(self.cost))
        check_real("q", self.q, low=0.0, high=1.0, low_open=True)
        check_real("noise", self.noise, low=0.0, low_open=True)

    @property
    def commits_once(self) -> bool:
        return True

    @property
    def accept_rate(self) -> float:
        return self.q

    def _law(self, n: np.ndarray) -> np.ndarray:
        return np.log(self._selection(n))

    def dcp_log_success(self, cp: Any, n: Any) -> Any:
        raise ValueError("the continuous plan needs a DCP form of log p_t; the selection turn "
                         "has none: use integer_plan")

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


@dataclass(frozen=True)
class EmpiricalTurn(Turn):
    """Fitted coverage curve p(n) = exp(a·n^b), a < 0, b < 0 (Brown et al. 2024).

    Examples
    --------
    >>> round(float(EmpiricalTurn(-1.0, -0.5).log_success(4)), 12)   # -1 * 4^-0.5
    -0.5
    """

    kind: ClassVar[str] = "empirical"
    a: float
    b: float
    cost: int = 1

    def __post_init__(self) -> None:
        for name in ("a", "b"):
            object.__setattr__(self, name, check_scalar(name, getattr(self, name)))
        object.__setattr__(self, "cost", _check_cost(self.cost))
        check_real("a", self.a, high=0.0, high_open=True)
        check_real("b", self.b, high=0.0, high_open=True)

    @property
    def accept_rate(self) -> float:
        # A perfect verifier accepts exactly the correct draws: P = p(1) = exp(a).
        return math.exp(self.a)

    def _law(self, n: np.ndarray) -> np.ndarray:
        return np.where(n > 0, self.a * np.power(np.maximum(n, 1e-300), self.b), -np.inf)

    def dcp_log_success(self, cp: Any, n: Any) -> Any:
        return self.a * cp.power(n, self.b, approx=False)  # power cone, not an SOC approximation


#: Each kind's class (``Turn(kind, ...)`` builds from it).
_KIND_CLASSES: dict[str, type[Turn]] = {
    c.kind: c for c in (CoverageTurn, VerifierTurn, SelectionTurn, EmpiricalTurn)}
#: The kinds' names, in the order of the module docstring.
KINDS = tuple(_KIND_CLASSES)


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
