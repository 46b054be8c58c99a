"""Context per turn: "more context or more samples?" at an inference budget.

Each turn is a :class:`~rlscale.theory.ContextTurn`: at context level c its
candidates succeed with q_t(c) and cost w_t(c) units.  The exact static plan
chooses a level and a count per turn, maximising Σ_t log p_t(n_t; c_t)
subject to Σ_t n_t·w_t(c_t) ≤ B — a grouped knapsack, solved exactly by the
same dynamic programme over the budget as the unequal-cost plan, each turn's
options being every (level, count) pair:
f_t(b) = max_{c, n} log p_t(n; c) + f_{t−1}(b − n·w_t(c)).  Restricting the
options gives the answers a harness designer compares: ``samples`` (every
turn at its smallest context: more samples only), ``context`` (one candidate
per turn: more context only) and ``fixed`` (the best single level for all
turns, as a harness with one window size); ``joint`` is the unrestricted
optimum and η against each is the budget ratio at equal success.

The per-turn laws are :class:`rlscale.theory.ContextTurn` objects (their
formula: :mod:`rlscale.theory._context`); the plain per-turn plan without a
context choice is :mod:`rlscale.optimize._inference`'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.optimize._inference import MAX_PLAN_SECONDS, MAX_PLAN_TABLE
from rlscale.theory._context import ContextTurn
from rlscale.theory._errors import InfeasibleError
from rlscale.theory._result import Result
from rlscale.theory._validation import check_choice, check_scalar

__all__ = ["CONTEXT_METHODS", "ContextComparison", "ContextPlan", "compare_context_plans",
           "context_plan"]

#: The plans :func:`context_plan` solves (module docstring).


@dataclass(frozen=True)
class _Restriction:
    """What a ``method`` of :func:`context_plan` allows (module docstring)."""

    every_level: bool  # any context level (else each turn's smallest)
    one_candidate: bool  # one candidate per turn
    common_level: bool  # one level shared by every turn (the best of them)


_RESTRICTIONS: dict[str, _Restriction] = {
    "joint": _Restriction(every_level=True, one_candidate=False, common_level=False),
    "samples": _Restriction(every_level=False, one_candidate=False, common_level=False),
    "context": _Restriction(every_level=True, one_candidate=True, common_level=False),
    "fixed": _Restriction(every_level=True, one_candidate=False, common_level=True),
}
CONTEXT_METHODS = tuple(_RESTRICTIONS)


@dataclass(frozen=True)
class ContextPlan(Result):
    """A static plan with a context level and a number of candidates per turn.

    ``context_spend`` is the budget spent on context beyond each turn's
    smallest level (``Σ n_t·(w_t(c_t) − w_t(c_min))``), ``sample_spend`` the
    budget of the candidates beyond the first (``Σ (n_t − 1)·w_t(c_t)``).
    """

    method: str
    context: tuple[int, ...]
    n: tuple[int, ...]
    success: float
    log_success: float
    cost: float
    budget: float
    turn_success: tuple[float, ...]
    context_spend: float
    sample_spend: float
    status: str = "optimal"

    @property
    def message(self) -> str:
        return (f"{self.method} context plan: {self.status}, predicted success "
                f"{self.success:.6g} at cost {self.cost:g} of {self.budget:g}")

    def as_dict(self) -> dict[str, Any]:
        return {**super().as_dict(), "message": self.message}


@dataclass(frozen=True)
class ContextComparison(Result):
    """The joint context-and-samples optimum against the restricted plans at one budget.

    ``eta[m]`` is ``B / B*`` with ``B*`` the least budget at which the joint
    plan reaches plan ``m``'s success (``inf`` when ``m`` has success 0);
    ``answer`` says in words where the joint plan puts its budget.
    """

    budget: int
    plans: dict[str, ContextPlan]
    eta: dict[str, float]

    @property
    def answer(self) -> str:
        j = self.plans["joint"]
        ctx, smp = j.context_spend / j.cost, j.sample_spend / j.cost
        lead = ("more context" if ctx > smp else "more samples" if smp > ctx else "neither")
        return (f"{lead}: the best plan spends {ctx:.0%} of its budget on context beyond the "
                f"smallest window and {smp:.0%} on extra samples; it needs 1/"
                f"{self.eta['samples']:.3g} of the samples-only budget and 1/"
                f"{self.eta['context']:.3g} of the context-only budget for their success")

    def as_dict(self) -> dict[str, Any]:
        return {"budget": self.budget, "plans": {k: v.as_dict() for k, v in self.plans.items()},
                "eta": dict(self.eta), "answer": self.answer}


def _check_context_turns(turns: Any) -> list[ContextTurn]:
    if isinstance(turns, ContextTurn):
        turns = [turns]
    if isinstance(turns, str | bytes):
        raise TypeError("turns must be a sequence of ContextTurn; got a string")
    try:
        turns = list(turns)
    except TypeError as exc:
        raise TypeError(f"turns must be a sequence of ContextTurn; got "
                        f"{type(turns).__name__}") from exc
    if not turns:
        raise ValueError("turns must hold at least one ContextTurn; got an empty sequence")
    for i, t in enumerate(turns):
        if not isinstance(t, ContextTurn):
            raise TypeError(f"turns[{i}] must be a ContextTurn; got {type(t).__name__}")
    return turns


def _context_counts(turn: ContextTurn, rule: _Restriction, room: int
                    ) -> list[tuple[int, int, int]]:
    """(level, unit cost, largest count) of each level ``rule`` allows within ``room``."""
    levels = turn.levels if rule.every_level else turn.levels[:1]
    out = []
    for c in levels:
        w = turn.cost(c)
        N = min(1, room // w) if rule.one_candidate else room // w
        if N >= 1:
            out.append((c, w, N))
    return out


def _rooms(turns: list[ContextTurn], B: int) -> list[int]:
    """Per turn, the budget left when every other turn takes one candidate at its cheapest."""
    smallest = [min(t.cost(c) for c in t.levels) for t in turns]
    return [B - (sum(smallest) - s) for s in smallest]


def _context_seconds(turns: list[ContextTurn], B: int, method: str) -> float:
    """About how long the DP of ``method`` at budget ``B`` takes on one core (issue 22).

    Measured (process time, this 2-core host at load ~9): ~3e-6 s per (level, count)
    option -- the overhead of one vectorised update -- plus ~1e-9 s per budget cell it
    updates (0.7 ns measured), ``N·(B+1) − w·N(N+1)/2`` cells for a level of unit cost
    ``w`` and at most ``N`` candidates.  ``fixed`` solves one DP per common level, each
    over fewer options than ``joint`` (a turn held at a level leaves less room), so it is
    predicted as ``joint``.
    """
    rule = _RESTRICTIONS[method]
    if rule.common_level:
        rule = _RESTRICTIONS["joint"]
    loops = cells = 0
    for turn, room in zip(turns, _rooms(turns, B)):
        for _, w, N in _context_counts(turn, rule, room):
            loops += N
            cells += N * (B + 1) - w * N * (N + 1) // 2
    return 3e-6 * loops + 1e-9 * cells


def _check_request(turns: Any, budget: Any, methods: Sequence[str]
                   ) -> tuple[list[ContextTurn], int]:
    """Valid turns and a whole budget whose plans fit the table and time bounds."""
    turns = _check_context_turns(turns)
    b = check_scalar("budget", budget, low=0.0)
    if b != math.floor(b):
        raise ValueError(f"budget must be a whole number of sample units; got budget={b:g}")
    levels = max(len(t.levels) for t in turns)
    if (len(turns) + 1) * (b + 1) * levels > MAX_PLAN_TABLE:
        raise ValueError(f"budget={b:g} with {len(turns)} turns and {levels} context levels "
                         f"needs tables of {(len(turns) + 1) * (b + 1) * levels:.3g} entries > "
                         f"{MAX_PLAN_TABLE:.0e}; use a coarser sample unit")
    B = int(b)
    # Time is quadratic in the budget when a level costs one unit (every count 1..B is an
    # option updating a table of B cells): 1e5 with 11 levels ran for minutes (issue 22).
    predicted = sum(_context_seconds(turns, B, m) for m in methods)
    if predicted > MAX_PLAN_SECONDS:
        raise ValueError(f"budget={B} with {len(turns)} turns and {levels} context levels "
                         f"needs {len(methods)} exact plan(s) predicted to take about "
                         f"{predicted:.3g} s on one core (> {MAX_PLAN_SECONDS:g} s); lower "
                         "budget, use a coarser sample unit (larger costs) or fewer levels")
    return turns, B


def _context_dp(turns: list[ContextTurn], B: int, rule: _Restriction
                ) -> tuple[tuple[tuple[int, ...], tuple[int, ...]] | None, np.ndarray]:
    """The exact grouped-knapsack DP of the module docstring: the plan at ``B`` (``None``:
    infeasible) and the table ``f`` whose entry ``b`` is the optimal log success at budget
    ``b`` (non-decreasing: what is affordable at ``b`` is affordable at ``b + 1``)."""
    smallest = [min(t.cost(c) for c in t.levels) for t in turns]
    if sum(smallest) > B:
        return None, np.full(B + 1, -np.inf)
    f = np.zeros(B + 1)
    choices = []
    for turn, room in zip(turns, _rooms(turns, B)):
        best = np.full(B + 1, -np.inf)
        arg_c = np.zeros(B + 1, dtype=np.int64)
        arg_n = np.zeros(B + 1, dtype=np.int64)
        for c, w, N in _context_counts(turn, rule, room):
            logs = turn.at(c).log_success_range(1, N)
            for n in range(1, N + 1):
                cand = logs[n - 1] + f[: B + 1 - w * n]
                view = best[w * n:]
                better = cand > view
                view[better] = cand[better]
                arg_c[w * n:][better] = c
                arg_n[w * n:][better] = n
        f = best
        choices.append((arg_c, arg_n))
    if not np.isfinite(f[B]):
        return None, f
    ctx, cnt, b = [], [], B
    for turn, (arg_c, arg_n) in zip(reversed(turns), reversed(choices)):
        c, n = int(arg_c[b]), int(arg_n[b])
        ctx.append(c)
        cnt.append(n)
        b -= turn.cost(c) * n
    return (tuple(reversed(ctx)), tuple(reversed(cnt))), f


def context_plan(turns: Sequence[ContextTurn], budget: int,
                 method: str = "joint") -> ContextPlan:
    """Exact static plan choosing a context level and a candidate count per turn.

    ``method`` restricts the choice (module docstring): ``joint`` (any level,
    any count), ``samples`` (smallest level), ``context`` (one candidate per
    turn) or ``fixed`` (one level for every turn: the best of them).

    Examples
    --------
    >>> from rlscale.theory import ContextTurn
    >>> turns = [ContextTurn(0.1, 0.9, 0.7, context_cost=0.5, levels=(1, 4, 16)),
    ...          ContextTurn(0.5, 0.6, 0.7, context_cost=0.5, levels=(1, 4, 16))]
    >>> plan = context_plan(turns, 12)     # the context-hungry turn gets a window of 4
    >>> plan.context, plan.n, round(plan.success, 4)
    ((4, 1), (2, 3), 0.7328)
    >>> [round(context_plan(turns, 12, m).success, 4) for m in ("samples", "context", "fixed")]
    [0.2579, 0.4413, 0.6769]
    """
    check_choice("method", method, CONTEXT_METHODS)
    turns, B = _check_request(turns, budget, (method,))
    return _solve(turns, B, method)[0]


def _solve(turns: list[ContextTurn], B: int, method: str) -> tuple[ContextPlan, np.ndarray]:
    """The plan of ``method`` at ``B`` and its DP's table of optimal log success by budget
    (for ``fixed``, the table of its best level)."""
    rule = _RESTRICTIONS[method]
    if rule.common_level:
        common = sorted(set.intersection(*(set(t.levels) for t in turns)))
        if not common:
            raise ValueError("method='fixed' needs a context level every turn allows; the "
                             "turns' levels have none in common")
        best = None
        for c in common:
            fixed = [ContextTurn(t.q_one, t.q_full, t.exponent, t.base_cost, t.context_cost,
                                 (c,), t.fpr, t.fnr, t.failures) for t in turns]
            found, f = _context_dp(fixed, B, _RESTRICTIONS["joint"])
            if found is not None:
                plan = _context_evaluate(turns, *found, B, method)
                if best is None or plan.log_success > best[0].log_success:
                    best = plan, f
        if best is None:
            raise InfeasibleError(f"budget {B} buys no common context level for every turn")
        return best
    found, f = _context_dp(turns, B, rule)
    if found is None:
        floor = sum(min(t.cost(c) for c in t.levels) for t in turns)
        raise InfeasibleError(f"budget {B} is below {floor}, the cost of one candidate at the "
                              f"smallest context for each of the {len(turns)} turns")
    return _context_evaluate(turns, *found, B, method), f


def _context_evaluate(turns: list[ContextTurn], ctx: tuple[int, ...], n: tuple[int, ...],
                      B: int, method: str) -> ContextPlan:
    logs = [float(t.at(c).log_success(k)) for t, c, k in zip(turns, ctx, n)]
    total = float(sum(logs))
    costs = [t.cost(c) for t, c in zip(turns, ctx)]
    floor = [t.cost(t.levels[0]) for t in turns]
    return ContextPlan(
        method=method, context=tuple(ctx), n=tuple(n), success=math.exp(total),
        log_success=total, cost=float(sum(w * k for w, k in zip(costs, n))), budget=float(B),
        turn_success=tuple(math.exp(v) for v in logs),
        context_spend=float(sum(k * (w - w0) for k, w, w0 in zip(n, costs, floor))),
        sample_spend=float(sum((k - 1) * w for k, w in zip(n, costs))))


def compare_context_plans(turns: Sequence[ContextTurn], budget: int) -> ContextComparison:
    """The joint plan against samples-only, context-only and one-level plans at ``budget``.

    Examples
    --------
    >>> from rlscale.theory import ContextTurn
    >>> turns = [ContextTurn(0.1, 0.9, 0.7, context_cost=0.5, levels=(1, 4, 16)),
    ...          ContextTurn(0.5, 0.6, 0.7, context_cost=0.5, levels=(1, 4, 16))]
    >>> cmp = compare_context_plans(turns, 20)
    >>> {m: round(e, 3) for m, e in cmp.eta.items()}
    {'samples': 2.222, 'context': 2.222, 'fixed': 1.176}
    >>> cmp.answer.split(";")[0]
    'more samples: the best plan spends 20% of its budget on context beyond the smallest \
window and 75% on extra samples'
    """
    turns, B = _check_request(turns, budget, CONTEXT_METHODS)
    solved = {m: _solve(turns, B, m) for m in CONTEXT_METHODS}
    plans = {m: plan for m, (plan, _) in solved.items()}
    # The joint DP at B holds the optimum at every smaller budget too: the least budget
    # reaching a restricted plan's success is a search of its table, not a bisection of
    # fresh DPs (which made a comparison ~2·log2(B) plans).
    joint = np.exp(solved["joint"][1])
    lo = int(sum(min(t.cost(c) for c in t.levels) for t in turns))
    eta = {}
    for m in CONTEXT_METHODS[1:]:
        target = plans[m].success
        if target <= 0:
            eta[m] = math.inf
            continue
        # The joint plan at B is at least as good as any restriction: the search ends by B.
        reach = np.flatnonzero(joint[lo:] >= target * (1 - 1e-12))
        eta[m] = B / (lo + int(reach[0]) if reach.size else B)
    return ContextComparison(budget=B, plans=plans, eta=eta)
