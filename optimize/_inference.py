"""Allocating an inference budget across the turns of a multi-turn agent.

The per-turn laws p_t(n) are :class:`rlscale.theory.Turn` objects (see
``rlscale.theory._inference`` for their formulas).  Budget B, unit costs c_t
(whole numbers), at least one candidate per turn.

Static plan.  Maximise Σ_t log p_t(n_t) subject to Σ_t c_t n_t ≤ B, n_t ≥ 1.

* Continuous relaxation (:func:`continuous_plan`): a convex program in cvxpy.
  DCP form: coverage log(1 − exp(n·log(1−q))) is log (concave, increasing)
  of 1 − exp(affine) (concave); the terminal-verifier form
  log(π − (π−ρ)·exp(n·log(1−a))) likewise; the empirical form a·n^b with
  a, b < 0 is a negative multiple of the convex power n^b.  cvxpy checks it
  (``is_dcp``) before solving; the Gaussian selection form has no DCP
  representation and is refused (use the integer plan).
* Integer plan (:func:`integer_plan`).  With one unit cost for every turn
  this is the *simple resource allocation problem* with a separable concave
  objective, for which the greedy rule (give each next unit to the turn of
  largest marginal gain log p_t(n+1) − log p_t(n)) is optimal: Gross 1956,
  Fox 1966 (Management Science 13(3)); Ibaraki & Katoh 1988, "Resource
  Allocation Problems", §4.1 (Theorem 4.1.1).  The proof is an exchange
  argument: with decreasing marginals, the objective of any allocation is
  the sum of the first n_t marginals of each turn, so the best allocation of
  N units takes the N largest marginals overall, which form a prefix in each
  turn.  We take those N largest at once (``argpartition``, O(T·N)).  The
  marginals decrease because log p_t is concave (``rlscale prove
  inference-concavity``).  With unequal costs greedy-by-ratio is only a
  heuristic (a knapsack), so the exact plan is a dynamic programme over the
  budget, f_t(b) = max_n log p_t(n) + f_{t−1}(b − c_t n), O(T·B²/c).

Adaptive plan (:func:`adaptive_plan`).  The agent draws candidates one at a
time, sees the verifier's verdict and whether a committed turn succeeded,
and carries unused budget forward.  V_t(b) is the best success probability
from turn t with b units left; V_{T+1} ≡ 1.  For turns without a fallback
(perfect verifier, retried failures, fitted coverage) stopping early is
never useful (a turn must succeed for the episode to), so the agent draws
until its first success and V_t(b) = Σ_k P_t(k)·V_{t+1}(b − c_t k) with
P_t(k) = p_t(k) − p_t(k−1) the first-success distribution (a convolution).
For a terminal noisy-verifier turn with fallback ρ > 0, holding a rejected
candidate the agent may commit it or draw again:
W_t(b) = max(ρ·V_{t+1}(b), V_t(b)),  V_t(b) = a·π·V_{t+1}(b−c) + (1−a)·W_t(b−c)
(V_t(b) = 0 for b < c; a wrong accepted commit ends the episode) — Bellman's
principle on the finite state (turn, budget, holding a candidate).

Baselines (:func:`baseline_plan`): every turn gets one candidate and the rest
R = B − Σc_t is split by spend shares: ``uniform`` (equal spend), ``front-
loaded`` (spend ∝ T − t, first turns most), ``difficulty`` (spend ∝ c_t/p_t(1),
the expected cost of a success with one sample); ``fixed-n`` is the largest
common n with n·Σc_t ≤ B.  Efficiency η = B / B*(s) with s the baseline's
success at budget B and B*(s) the least budget at which the optimal plan
reaches s (the budget ratio at equal success, as for data allocation);
context per turn is planned in :mod:`rlscale.optimize._context_plan`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlscale.theory._errors import InfeasibleError, SolverError
from rlscale.theory._result import Result
from rlscale.theory._turns import Turn
from rlscale.theory._validation import (
    check_choice,
    check_positive_int,
    check_real,
    check_scalar,
)

__all__ = ["BASELINES", "AdaptivePlan", "InferenceComparison", "InferencePlan",
           "adaptive_plan", "baseline_plan", "budget_to_reach", "compare_inference_plans",
           "continuous_plan", "integer_plan"]



def _fixed_n(turns: list[Turn], B: int, costs: np.ndarray) -> tuple[int, ...]:
    """The same n for every turn, the largest the budget allows."""
    return (int(B // costs.sum()),) * len(turns)


def _by_share(share_of: Callable[[list[Turn], np.ndarray], np.ndarray]
              ) -> Callable[[list[Turn], int, np.ndarray], tuple[int, ...]]:
    """A plan that gives each turn one candidate, then the rest of the budget by share."""
    def plan(turns: list[Turn], B: int, costs: np.ndarray) -> tuple[int, ...]:
        share = share_of(turns, costs)
        share = share / share.sum()
        rest = B - costs.sum()
        return tuple(int(k) for k in 1 + np.floor(share * rest / costs + 1e-9).astype(np.int64))
    return plan


#: Each baseline's rule (module docstring), by name.
_BASELINE_PLANS: dict[str, Callable[[list[Turn], int, np.ndarray], tuple[int, ...]]] = {
    "uniform": _by_share(lambda turns, costs: np.full(len(turns), 1.0 / len(turns))),
    "front-loaded": _by_share(
        lambda turns, costs: np.arange(len(turns), 0, -1, dtype=np.float64)),
    "difficulty": _by_share(
        lambda turns, costs: costs / np.array([float(t.success(1)) for t in turns])),
    "fixed-n": _fixed_n,
}
BASELINES = tuple(_BASELINE_PLANS)


@dataclass(frozen=True)
class InferencePlan(Result):
    """A static plan: candidates per turn and the success it predicts.

    ``success`` is the plan's predicted task success (a probability), the one
    exception to the result convention of :mod:`rlscale.optimize._outcome`;
    ``status`` is the producing method's word (cvxpy's for ``"continuous"``,
    ``"optimal"`` for the exact integer plan and the baselines' evaluation)
    and ``message`` says it in words.
    """

    method: str
    n: tuple[float, ...]
    success: float
    log_success: float
    cost: float
    budget: float
    turn_success: tuple[float, ...]
    status: str = "optimal"

    @property
    def message(self) -> str:
        return f"{self.method} plan: {self.status}, predicted success {self.success:.6g}"

    def as_dict(self) -> dict[str, Any]:
        return {**super().as_dict(), "message": self.message}


@dataclass(frozen=True)
class AdaptivePlan(Result):
    """The adaptive (sequential, budget-carrying) policy from dynamic programming.

    ``values[t, b]`` is V_{t+1}(b) (row T is the all-ones terminal value);
    ``commit[t, b]`` says whether, at turn t holding only a rejected candidate
    with b units left, committing it beats drawing again (fallback turns).
    """

    budget: int
    success: float
    values: np.ndarray = field(repr=False)
    commit: np.ndarray = field(repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {"budget": self.budget, "success": self.success}


@dataclass(frozen=True)
class InferenceComparison(Result):
    """Optimal static and adaptive plans against the baselines at one budget."""

    budget: int
    optimal: InferencePlan
    continuous: InferencePlan | None
    adaptive: AdaptivePlan | None
    baselines: dict[str, InferencePlan]
    eta: dict[str, float]

    @property
    def best_baseline(self) -> str:
        return max(self.baselines, key=lambda k: self.baselines[k].success)

    @property
    def success_ratio(self) -> float:
        """Optimal static success over the best baseline's, at equal budget (inf when the
        baseline's success underflows to 0)."""
        base = self.baselines[self.best_baseline].success
        return self.optimal.success / base if base > 0 else math.inf

    @property
    def adaptivity_gain(self) -> float | None:
        """Adaptive minus optimal static success (the value of adaptivity)."""
        return None if self.adaptive is None else self.adaptive.success - self.optimal.success

    def as_dict(self) -> dict[str, Any]:
        return {"budget": self.budget, "optimal": self.optimal.as_dict(),
                "continuous": None if self.continuous is None else self.continuous.as_dict(),
                "adaptive": None if self.adaptive is None else self.adaptive.as_dict(),
                "baselines": {k: v.as_dict() for k, v in self.baselines.items()},
                "best_baseline": self.best_baseline, "success_ratio": self.success_ratio,
                "eta": dict(self.eta), "adaptivity_gain": self.adaptivity_gain}


# ---------------------------------------------------------------------------- helpers
def _check_turns(turns: Any) -> list[Turn]:
    if isinstance(turns, Turn):
        turns = [turns]
    try:
        turns = list(turns)
    except TypeError as exc:
        raise TypeError(f"turns must be a sequence of Turn; got {type(turns).__name__}") from exc
    if not turns:
        raise ValueError("turns must hold at least one Turn; got an empty sequence")
    for i, t in enumerate(turns):
        if not isinstance(t, Turn):
            raise TypeError(f"turns[{i}] must be a Turn; got {type(t).__name__}")
    return turns


#: Largest turns × budget table the exact and adaptive plans build (8 bytes each: 0.4 GB).
MAX_PLAN_TABLE = 5 * 10**7


#: Seconds of one core a comparison may be predicted to take (:func:`_plan_seconds`).
MAX_PLAN_SECONDS = 10.0


def _plan_seconds(turns: list[Turn], B: int) -> float:
    """About how long one exact integer plan at budget ``B`` takes on one core (issue 22).

    Each turn declares what one table entry of log p(n) costs (``entry_seconds``, measured:
    ~5e-5 s for a selection turn's quadrature per n, ~2e-8 s for a closed form); unequal
    costs add the DP's ~1.5e-9 s per (entry, budget) cell.
    """
    entries = [B // t.cost for t in turns]
    table = sum(n * t.entry_seconds for t, n in zip(turns, entries))
    dp = 1.5e-9 * B * sum(entries) if len({t.cost for t in turns}) > 1 else 0.0
    return table + dp


def _check_budget(turns: list[Turn], budget: Any, plans: int = 1) -> int:
    """``budget`` as a whole number of sample units (an integer: 1e6 is refused, issue 22)
    whose ``plans`` exact plans are predicted to take at most MAX_PLAN_SECONDS."""
    b = check_positive_int("budget", budget, minimum=0, maximum=MAX_PLAN_TABLE)
    predicted = plans * _plan_seconds(turns, b)
    if predicted > MAX_PLAN_SECONDS:
        raise ValueError(f"budget={b} with {len(turns)} turns needs {plans} exact plan(s), "
                         f"predicted to take about {predicted:.3g} s on one core (> "
                         f"{MAX_PLAN_SECONDS:g} s); lower budget, or use a coarser sample "
                         "unit (larger turn costs)")
    if (len(turns) + 1) * (b + 1) > MAX_PLAN_TABLE:
        raise ValueError(f"budget={b:g} with {len(turns)} turns needs a table of "
                         f"{(len(turns) + 1) * (b + 1):.3g} entries > {MAX_PLAN_TABLE:.0e}; "
                         "use a coarser sample unit (costs) or the continuous plan")
    floor = sum(t.cost for t in turns)
    if b < floor:
        raise InfeasibleError(f"budget {b:g} is below {floor}, the cost of one candidate "
                              f"for each of the {len(turns)} turns")
    return int(b)


def _evaluate(turns: list[Turn], n: Sequence[float], budget: float, method: str,
              status: str = "optimal") -> InferencePlan:
    logs = [float(t.log_success(k)) for t, k in zip(turns, n)]
    total = float(sum(logs))
    return InferencePlan(method=method, n=tuple(n), success=math.exp(total), log_success=total,
                         cost=float(sum(t.cost * k for t, k in zip(turns, n))),
                         budget=float(budget), turn_success=tuple(math.exp(v) for v in logs),
                         status=status)


# ---------------------------------------------------------------------------- static
def integer_plan(turns: Sequence[Turn], budget: int) -> InferencePlan:
    """Exact integer static plan: greedy marginals (equal costs) or DP (unequal costs).

    Examples
    --------
    >>> from rlscale.theory import Turn
    >>> turns = [Turn.with_coverage(q) for q in (0.9, 0.5, 0.1)]
    >>> plan = integer_plan(turns, 20)
    >>> plan.n, round(plan.success, 4)
    ((2, 4, 14), 0.7158)
    >>> integer_plan(turns, 2)
    Traceback (most recent call last):
    ...
    rlscale.InfeasibleError: budget 2 is below 3, the cost of one candidate for each of the 3 turns
    """
    turns = _check_turns(turns)
    B = _check_budget(turns, budget)
    costs = {t.cost for t in turns}
    if len(costs) == 1:
        n, method = _greedy(turns, B, costs.pop()), "greedy"
    else:
        n, method = _dp_exact(turns, B), "dp"
    return _evaluate(turns, n, B, method)


def _greedy(turns: list[Turn], B: int, c: int) -> tuple[int, ...]:
    T = len(turns)
    extra = B // c - T
    if extra <= 0:
        return (1,) * T
    table = np.empty((T, extra + 1))
    for i, t in enumerate(turns):
        table[i] = t.log_success_range(1, extra + 1)
    marg = table[:, :-1] - table[:, 1:]  # (T, extra): minus the gain of the (n+1)-th candidate
    # Concavity makes each row's gains decreasing, so the `extra` largest gains overall form a
    # prefix of every row and their count per row is the allocation.  (Where rounding breaks
    # monotonicity at the 1e-16 level, counting still gives an allocation whose objective
    # differs from the optimum by that rounding only.)
    top = np.argpartition(marg.ravel(), extra - 1)[:extra]
    counts = np.bincount(top // extra, minlength=T)
    return tuple(int(1 + k) for k in counts)


def _dp_exact(turns: list[Turn], B: int) -> tuple[int, ...]:
    total_min = sum(t.cost for t in turns)
    f = np.zeros(B + 1)  # best Σ log p of the turns so far with cost <= b
    choices = []
    for t in turns:
        c = t.cost
        N = (B - total_min + c) // c
        logs = t.log_success_range(1, N)
        best = np.full(B + 1, -np.inf)
        arg = np.zeros(B + 1, dtype=np.int64)
        for n in range(1, N + 1):
            cand = logs[n - 1] + f[: B + 1 - c * n]
            view = best[c * n:]
            better = cand > view
            view[better] = cand[better]
            arg[c * n:][better] = n
        f = best
        choices.append(arg)
    n_out, b = [], B
    for t, arg in zip(reversed(turns), reversed(choices)):
        k = int(arg[b])
        n_out.append(k)
        b -= t.cost * k
    return tuple(reversed(n_out))


def continuous_plan(turns: Sequence[Turn], budget: float) -> InferencePlan:
    """Continuous relaxation of the static plan, solved by cvxpy (checked DCP).

    Examples
    --------
    >>> from rlscale.theory import Turn
    >>> turns = [Turn.with_coverage(q) for q in (0.9, 0.5, 0.1)]
    >>> plan = continuous_plan(turns, 20)
    >>> [round(x, 2) for x in plan.n], plan.success >= integer_plan(turns, 20).success
    ([1.85, 4.47, 13.67], True)
    """
    import cvxpy as cp

    turns = _check_turns(turns)
    # The same documented range as the exact plan: beyond it the conic solver's
    # numbers leave its working range (CLARABEL failed at 5.6e10).
    B = check_scalar("budget", budget, low=0.0, high=float(MAX_PLAN_TABLE))
    floor = sum(t.cost for t in turns)
    if floor > B:
        raise InfeasibleError(f"budget {B:g} is below {floor}, the cost of one candidate for "
                              f"each of the {len(turns)} turns")
    n = cp.Variable(len(turns))
    terms = [t.dcp_log_success(cp, n[i]) for i, t in enumerate(turns)]
    costs = np.array([t.cost for t in turns], dtype=np.float64)
    problem = cp.Problem(cp.Maximize(cp.sum(cp.hstack([cp.Constant(0.0) + x for x in terms]))),
                         [n >= 1, costs @ n <= B])
    if not problem.is_dcp():  # pragma: no cover - guarded by construction, kept as a check
        raise SolverError("the static inference plan is not DCP; refusing to solve")
    try:
        problem.solve()
    except cp.error.SolverError as exc:
        raise SolverError(f"cvxpy failed on the inference plan: {exc}") from exc
    if problem.status not in ("optimal", "optimal_inaccurate") or n.value is None:
        raise SolverError(f"cvxpy returned status {problem.status} for the inference plan")
    values = np.maximum(np.asarray(n.value, dtype=np.float64), 1.0)
    return _evaluate(turns, [float(v) for v in values], B, "continuous", str(problem.status))


def baseline_plan(turns: Sequence[Turn], budget: int, kind: str) -> InferencePlan:
    """A heuristic static plan (see the module docstring for each ``kind``).

    Examples
    --------
    >>> from rlscale.theory import Turn
    >>> turns = [Turn.with_coverage(q) for q in (0.9, 0.5, 0.1)]
    >>> [baseline_plan(turns, 20, k).n for k in BASELINES]
    [(6, 6, 6), (9, 6, 3), (2, 3, 13), (6, 6, 6)]
    """
    turns = _check_turns(turns)
    B = _check_budget(turns, budget)
    if not isinstance(kind, str) or kind not in BASELINES:
        raise ValueError(f"kind must be one of {', '.join(BASELINES)}; got kind={kind!r}")
    costs = np.array([t.cost for t in turns], dtype=np.float64)
    return _evaluate(turns, _BASELINE_PLANS[kind](turns, B, costs), B, kind)


def _success_at(turns: list[Turn], B: int, how: str) -> float:
    if how in BASELINES:
        return baseline_plan(turns, B, how).success
    return _OPTIMAL_PLANS[how](turns, B).success


def budget_to_reach(turns: Sequence[Turn], target: float, how: str = "optimal",
                    *, max_budget: int = 2**40) -> int:
    """Least whole budget at which plan ``how`` (``optimal``, ``adaptive`` or a baseline)
    reaches success ``target`` (success is nondecreasing in the budget for each of them).

    Examples
    --------
    >>> from rlscale.theory import Turn
    >>> turns = [Turn.with_coverage(q) for q in (0.9, 0.5, 0.1)]
    >>> [budget_to_reach(turns, 0.7, how) for how in ("optimal", "uniform", "adaptive")]
    [20, 36, 15]
    """
    turns = _check_turns(turns)
    s = float(check_real("target", target, low=0.0, high=1.0, high_open=True))
    check_choice("how", how, (*_OPTIMAL_PLANS, *BASELINES))
    # Read only when the doubling search reaches it: checked first (any type was accepted).
    max_budget = check_positive_int("max_budget", max_budget)
    lo = sum(t.cost for t in turns)
    if _success_at(turns, lo, how) >= s:
        return lo
    hi = 2 * lo
    while _success_at(turns, hi, how) < s:
        if hi >= max_budget:
            raise InfeasibleError(f"target success {s:g} is not reached by the {how} plan "
                                  f"within a budget of {max_budget}")
        lo, hi = hi, min(2 * hi, max_budget)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _success_at(turns, mid, how) >= s:
            hi = mid
        else:
            lo = mid
    return hi


# ---------------------------------------------------------------------------- adaptive
def adaptive_plan(turns: Sequence[Turn], budget: int) -> AdaptivePlan:
    """Dynamic programme over the remaining budget with sequential sampling.

    Examples
    --------
    >>> from rlscale.theory import Turn
    >>> turns = [Turn.with_coverage(q) for q in (0.9, 0.5, 0.1)]
    >>> round(adaptive_plan(turns, 20).success, 4)   # > 0.7158, the best static plan
    0.829
    """
    turns = _check_turns(turns)
    B = _check_budget(turns, budget)
    for i, t in enumerate(turns):
        if not t.sequential:
            raise ValueError(f"turns[{i}] is a selection turn (best-of-n needs all n scores "
                             "before it chooses); the adaptive plan needs sequential verifiers")
    T = len(turns)
    values = np.zeros((T + 1, B + 1))
    values[T] = 1.0
    commit = np.zeros((T, B + 1), dtype=bool)
    for i in range(T - 1, -1, -1):
        t, nxt, c = turns[i], values[i + 1], turns[i].cost
        if t.fallback > 0:
            a, pi, rho = t.accept_rate, t.precision, t.fallback
            V = np.zeros(B + 1)
            W = np.zeros(B + 1)
            hold = rho * nxt
            for b in range(B + 1):
                if b >= c:
                    V[b] = a * pi * nxt[b - c] + (1 - a) * W[b - c]
                commit[i, b] = hold[b] >= V[b]
                W[b] = hold[b] if commit[i, b] else V[b]
            values[i] = V
        else:
            K = B // c
            p = np.exp(t.log_success_range(0, K))
            pmf = np.clip(np.diff(p), 0.0, None)  # P(first success at draw k), k = 1..K
            kernel = np.zeros(B + 1)
            kernel[c * np.arange(1, K + 1)] = pmf
            values[i] = np.clip(_convolve_head(kernel, nxt, B + 1), 0.0, 1.0)
    return AdaptivePlan(budget=B, success=float(values[0, B]), values=values, commit=commit)


#: The optimal plans :func:`budget_to_reach` can ask for, besides the baselines.
_OPTIMAL_PLANS: dict[str, Callable[[list[Turn], int], InferencePlan | AdaptivePlan]] = {
    "optimal": integer_plan,
    "adaptive": adaptive_plan,
}


def _convolve_head(a: np.ndarray, b: np.ndarray, size: int) -> np.ndarray:
    """First ``size`` terms of the convolution a * b: direct below 4096 terms (exact sums),
    by FFT above (O(B log B); absolute error ~1e-15 on these probabilities)."""
    if size <= 4096:
        return np.convolve(a, b)[:size]
    from scipy.signal import fftconvolve

    return fftconvolve(a, b)[:size]


def compare_inference_plans(turns: Sequence[Turn], budget: int) -> InferenceComparison:
    """Optimal static (integer and continuous), adaptive and baseline plans at ``budget``.

    Examples
    --------
    >>> from rlscale.theory import Turn
    >>> turns = [Turn.with_coverage(q) for q in (0.9, 0.5, 0.1)]
    >>> cmp = compare_inference_plans(turns, 20)
    >>> cmp.best_baseline, round(cmp.success_ratio, 3), round(cmp.eta["uniform"], 2)
    ('difficulty', 1.108, 1.54)
    """
    turns = _check_turns(turns)
    # Each baseline's η bisects the optimal plan's budget: ~2·log2(B) plans per baseline.
    B = _check_budget(turns, budget, plans=1 + 2 * len(BASELINES) * max(
        1, int(budget).bit_length() if isinstance(budget, int | np.integer) else 1))
    optimal = integer_plan(turns, B)
    try:
        continuous = continuous_plan(turns, B)
    except ValueError:
        continuous = None
    adaptive = adaptive_plan(turns, B) if all(t.sequential for t in turns) else None
    baselines = {k: baseline_plan(turns, B, k) for k in BASELINES}
    eta = {}
    for k, plan in baselines.items():
        # A baseline at success 1.0 (rounded): the budget where the optimum reaches the
        # largest float below 1 (budget_to_reach refuses a target of 1).
        target = min(plan.success, math.nextafter(1.0, 0.0))
        need = budget_to_reach(turns, target, "optimal") if plan.success > 0 else 0
        eta[k] = B / need if need > 0 else math.inf
    return InferenceComparison(budget=B, optimal=optimal, continuous=continuous,
                               adaptive=adaptive, baselines=baselines, eta=eta)
