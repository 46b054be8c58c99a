"""The context axis: what a window of ``c`` observations buys an agent, and what it costs.

Window-limited success.  A task is answered correctly only with an
observation made ``lag`` steps earlier; an agent that keeps its last ``c``
observations still holds it iff ``lag <= c − 1``, and otherwise guesses among
``m`` answers.  So

    success(c) = 1 − (1 − 1/m)·S(c),   loss(c) = (1 − 1/m)·S(c),   S(c) = P(lag ≥ c).

(:class:`rlscale.simulate.MemoryFamily` is this task with ``m = 4``; its
``reference_success`` adds the slips that delay the answer.)

Lag law.  With ``P(lag = ℓ) ∝ ℓ^(−1−β)`` on ``[ℓ_min, ℓ_max]`` (``β ≥ 0``),

    S(c) = (Z(c) − Z(ℓ_max + 1)) / (Z(ℓ_min) − Z(ℓ_max + 1))   for ℓ_min ≤ c ≤ ℓ_max + 1,

with ``Z(a) = Σ_{ℓ ≥ a} ℓ^(−1−β) = ζ(1 + β, a)`` the Hurwitz zeta function for
``β > 0`` (``scipy.special.zeta(s, a)``), and for ``β = 0`` the partial
harmonic sums ``Σ_{ℓ=a}^{b} 1/ℓ = ψ(b + 1) − ψ(a)`` (digamma); ``S = 1`` below
``ℓ_min`` and ``0`` beyond ``ℓ_max``.

Why a power law in context.  With no longest lag, Euler–Maclaurin gives
``ζ(s, c) = c^(1−s)/(s − 1) + c^(−s)/2 + O(c^(−s−1))``, so

    S(c) = c^(−β) / (β·ζ(1 + β, ℓ_min)) · (1 + O(1/c)),

and the loss is one term ``a_c·c^(−α_c)`` of a per-axis additive law with
``α_c = β`` and ``a_c = (1 − 1/m)/(β·ζ(1 + β, ℓ_min))`` (:func:`context_term`):
how the context axis joins the environments, tasks and trajectories axes of
:class:`~rlscale.theory.AdditiveLaw`.  (A learned policy adds a learning
term: the fitted exponent is an empirical quantity, this is its
information-limited shape.)

Cost.  Compute per step grows with the context: a transformer's attention
reads the whole window, the trainer's backbone sums one embedding row per
slot.  With per-step cost ``κ₀ + κ₁·c`` every trajectory of ``k`` per task costs
that many times its steps, so the design's cost is the posynomial

    cost = c_E·E + c_T·E·t + E·t·k·(c_τ + c_c·c)            (:func:`context_cost`),

still a geometric program in ``(E, t, k, c)`` with any additive law.

Context per turn (:class:`ContextTurn`).  A candidate drawn with a context of
``c`` (observations, retrieved documents, tokens of history: the harness's
budget) is correct with probability

    q(c) = q_full − (q_full − q_one)·c^(−γ),   c ≥ 1,

so ``q(1) = q_one`` and ``q → q_full``: the window-limited law of
:mod:`rlscale.theory._context` (``1 − (1 − 1/m)·S(c)`` with ``S(c) ∝ c^(−β)``
for long windows), written to be exact at both ends.  Its cost grows with the
context, ``cost(c) = ⌈base_cost + context_cost·c⌉`` sample units (compute
per token, attention over the window).  Each allowed context level gives an
ordinary :class:`Turn` (:meth:`ContextTurn.at`); the planner
(:func:`rlscale.optimize.context_plan`) chooses a level and a number of
candidates per turn: "more context or more samples?".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.theory._inference import MAX_TABLE
from rlscale.theory._posynomial import Posynomial
from rlscale.theory._turns import Turn
from rlscale.theory._validation import check_positive_int, check_real, check_scalar, return_like

__all__ = ["ContextTurn", "context_cost", "context_term", "lag_survival", "window_loss"]


def _tail(s: float, a: np.ndarray, stop: float) -> np.ndarray:
    """``Σ_{a <= ℓ < stop} ℓ^(−s)`` for real ``a >= 1`` (``stop`` may be inf)."""
    from scipy.special import psi, zeta

    if s == 1.0:
        upper = np.inf if math.isinf(stop) else psi(stop)
        return upper - psi(a)
    z = zeta(s, a)
    return z if math.isinf(stop) else z - zeta(s, stop)


def lag_survival(c: Any, exponent: float, min_lag: int = 1, max_lag: float = math.inf) -> Any:
    """``S(c) = P(lag ≥ c)`` under ``P(lag = ℓ) ∝ ℓ^(−1−β)`` on ``[min_lag, max_lag]``.

    ``c`` is real (``S`` is a step function of ``ceil(c)``); ``max_lag`` may be
    infinite only for ``β > 0``.  See the module docstring for the formula.

    Examples
    --------
    >>> round(float(lag_survival(2, 1.0, max_lag=3)), 6)      # (1/4 + 1/9)/(1 + 1/4 + 1/9)
    0.265306
    >>> round(float(lag_survival(3, 1.0)), 6)                 # ζ(2, 3)/ζ(2, 1)
    0.240091
    >>> float(lag_survival(0.5, 1.0)), float(lag_survival(4, 1.0, max_lag=3))
    (1.0, 0.0)
    """
    beta = check_scalar("exponent", exponent, low=0.0, high=100.0)
    lo = check_positive_int("min_lag", min_lag)
    hi = check_scalar("max_lag", max_lag, low=float(lo), allow_inf=True)
    if math.isinf(hi) and beta == 0.0:
        raise ValueError("exponent must be > 0 when max_lag is infinite (the lag law "
                         "ℓ^(−1) does not normalise); got exponent=0")
    if not math.isinf(hi) and hi != math.floor(hi):
        raise ValueError(f"max_lag must be a whole number or inf; got max_lag={hi:g}")
    c_ = check_real("c", c)
    first = np.clip(np.ceil(c_), lo, np.inf)  # the smallest lag counted
    stop = hi + 1.0
    total = _tail(1.0 + beta, np.asarray(float(lo)), stop)
    inside = first <= hi
    part = np.where(inside, _tail(1.0 + beta, np.where(inside, first, lo), stop), 0.0)
    return return_like(np.clip(part / total, 0.0, 1.0), c)


def window_loss(c: Any, exponent: float, min_lag: int = 1, max_lag: float = math.inf,
                choices: int = 4) -> Any:
    """``(1 − 1/m)·S(c)``: the loss of answering with the cue when it is in the window of
    ``c`` observations and guessing among ``m = choices`` otherwise.

    Examples
    --------
    >>> round(float(window_loss(1, 1.0)), 6)       # nothing kept: always a guess
    0.75
    >>> round(float(window_loss(8, 1.0, max_lag=7)), 6)
    0.0
    """
    m = check_positive_int("choices", choices, minimum=2)
    return return_like(np.asarray(lag_survival(c, exponent, min_lag, max_lag)) * (1 - 1 / m), c)


def context_term(exponent: float, min_lag: int = 1, choices: int = 4) -> tuple[float, float]:
    """``(a_c, α_c)`` of the asymptotic context term ``a_c·c^(−α_c)`` (no longest lag).

    ``α_c = β`` and ``a_c = (1 − 1/m)/(β·ζ(1 + β, ℓ_min))``, from
    ``ζ(s, c) = c^(1−s)/(s − 1) + O(c^(−s))`` (module docstring).

    Examples
    --------
    >>> a, alpha = context_term(1.0)
    >>> round(a, 6), alpha                    # 0.75 / ζ(2) = 0.75·6/π²
    (0.455945, 1.0)
    >>> round(float(window_loss(1e4, 1.0)) / (a * 1e4 ** -1.0), 4)   # → 1 as c grows
    1.0001
    """
    from scipy.special import zeta

    beta = check_scalar("exponent", exponent, low=0.0, high=100.0, low_open=True)
    lo = check_positive_int("min_lag", min_lag)
    m = check_positive_int("choices", choices, minimum=2)
    return float((1 - 1 / m) / (beta * zeta(1.0 + beta, lo))), beta


def context_cost(environment: float = 1.0, task: float = 1.0, trajectory: float = 1.0,
                 context: float = 0.0, names: tuple[str, str, str, str] = ("E", "t", "k", "c")
                 ) -> Posynomial:
    """The design's cost ``c_E·E + c_T·E·t + E·t·k·(c_τ + c_c·c)`` as a posynomial.

    Terms with a zero unit cost are left out (a posynomial has positive
    coefficients); ``source`` keeps the written form.

    Examples
    --------
    >>> cost = context_cost(100, 10, 1, 0.5)
    >>> cost.source
    '100*E + 10*E*t + 1*E*t*k + 0.5*E*t*k*c'
    >>> float(cost.evaluate({"E": 2, "t": 3, "k": 4, "c": 8}))
    380.0
    """
    from rlscale.theory._posynomial_parser import parse_posynomial

    units = {"environment": environment, "task": task, "trajectory": trajectory,
             "context": context}
    for name, value in units.items():
        check_scalar(name, value, low=0.0)
    if not all(isinstance(n, str) and n.isidentifier() for n in names) or len(names) != 4 \
            or len(set(names)) != 4:
        raise ValueError(f"names must be four distinct identifiers; got names={names!r}")
    E, t, k, c = names
    terms = [(environment, E), (task, f"{E}*{t}"), (trajectory, f"{E}*{t}*{k}"),
             (context, f"{E}*{t}*{k}*{c}")]
    text = " + ".join(f"{a:g}*{m}" for a, m in terms if a > 0)
    if not text:
        raise ValueError("at least one unit cost must be positive; got all zero")
    return parse_posynomial(text)


@dataclass(frozen=True)
class ContextTurn:
    """A turn whose candidates succeed more often, and cost more, with more context.

    ``q(c) = q_full − (q_full − q_one)·c^(−exponent)`` and ``cost(c) =
    ⌈base_cost + context_cost·c⌉`` (module docstring); ``levels`` are the
    contexts the harness can give.  With ``fpr``/``fnr`` the verifier is
    noisy (:meth:`Turn.with_verifier`), else perfect (:meth:`Turn.with_coverage`).

    Examples
    --------
    >>> t = ContextTurn(q_one=0.2, q_full=0.8, exponent=0.5, context_cost=0.5,
    ...                 levels=(1, 4, 16))
    >>> [round(t.q(c), 4) for c in t.levels], [t.cost(c) for c in t.levels]
    ([0.2, 0.5, 0.65], [2, 3, 9])
    >>> t.at(4)
    CoverageTurn(q=0.5, cost=3)
    """

    q_one: float
    q_full: float
    exponent: float
    base_cost: float = 1.0
    context_cost: float = 0.0
    levels: tuple[int, ...] = (1, 2, 4, 8, 16)
    fpr: float = 0.0
    fnr: float = 0.0
    failures: str = "terminal"

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        put("q_one", check_scalar("q_one", self.q_one, low=0.0, high=1.0, low_open=True))
        put("q_full", check_scalar("q_full", self.q_full, low=self.q_one, high=1.0))
        put("exponent", check_scalar("exponent", self.exponent, low=0.0, high=100.0))
        put("base_cost", check_scalar("base_cost", self.base_cost, low=0.0))
        put("context_cost", check_scalar("context_cost", self.context_cost, low=0.0))
        if isinstance(self.levels, str | bytes) or not isinstance(self.levels,
                                                                 tuple | list | np.ndarray):
            raise TypeError(f"levels must be a sequence of whole contexts >= 1; got "
                            f"levels={self.levels!r:.60}")
        levels = tuple(check_positive_int(f"levels[{i}]", v, maximum=MAX_TABLE)
                       for i, v in enumerate(self.levels))
        if not levels or len(set(levels)) != len(levels):
            raise ValueError(f"levels must be distinct and non-empty; got levels={levels!r}")
        put("levels", tuple(sorted(levels)))
        if self.base_cost + self.context_cost * levels[0] <= 0:
            raise ValueError("a candidate must cost something: base_cost + context_cost·c "
                             f"is 0 at c = {levels[0]}")
        self.at(self.levels[-1])  # validates fpr, fnr, failures and the largest cost now

    def q(self, c: float) -> float:
        """Per-candidate success with a context of ``c`` (``c >= 1``)."""
        c = check_scalar("c", c, low=1.0)
        return self.q_full - (self.q_full - self.q_one) * c ** (-self.exponent)

    def cost(self, c: float) -> int:
        """Whole sample units one candidate costs with a context of ``c``."""
        c = check_scalar("c", c, low=1.0)
        return max(1, math.ceil(self.base_cost + self.context_cost * c - 1e-12))

    def at(self, c: float) -> Turn:
        """The ordinary :class:`Turn` at context ``c``."""
        q, cost = self.q(c), self.cost(c)
        if self.fpr == 0 and self.fnr == 0:
            return Turn.with_coverage(q, cost=cost)
        return Turn.with_verifier(q, fpr=self.fpr, fnr=self.fnr, cost=cost,
                                  failures=self.failures)

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "levels": list(self.levels)}
