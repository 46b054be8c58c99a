"""The paths and trust region of a decision (:func:`~rlscale.optimize.recommend`).

A recommendation is judged by its *path*, the allocation the same rule picks along budgets
(:class:`~rlscale.optimize.PlanPath`): an optimum path of a law, or a baseline's path (its
direction from the pilot's centre, each budget spent).  Paths run over the budget grid
:data:`PATH_STEPS` around the budget, so η is located, or bounded, between B/8 and 2B.  The
trust region keeps a plan within a factor of the pilot's range on every decision variable
that is a law axis: the law was measured there and nowhere else.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rlscale.optimize._allocate import AllocationProblem
from rlscale.optimize._baselines import PROPORTIONAL, _spend
from rlscale.optimize._deployed import LawBank, PlanPath
from rlscale.optimize._robust_plan import solve_warm
from rlscale.theory._errors import InfeasibleError
from rlscale.theory._laws import Law

__all__ = ["PATH_STEPS", "baseline_path", "law_losses", "make_path", "neutral_law",
           "optimum_path", "path_budgets", "trust_bounds"]

#: The budget grid of a plan's path: ``budget · 2^(j/4)`` for ``j`` in this range (B/8..2B).
PATH_STEPS = range(-12, 5)


def trust_bounds(problem: AllocationProblem, data_range: Mapping[str, tuple[float, float]],
                  extrapolation: float) -> tuple[dict[str, tuple[float, float]], list[str]]:
    """The problem's bounds narrowed to ``extrapolation`` times the pilot's range.

    Only a decision variable that *is* a law axis (directly, or through a substitution
    ``axis = "v"``) has a data range; others keep their bounds (and a note says so).
    """
    bounds = dict(problem.bounds)
    notes = []
    if not math.isfinite(extrapolation):
        return bounds, notes
    for axis, (lo, hi) in data_range.items():
        mono = problem.substitute.get(axis)
        if mono is None:
            var = axis if axis in bounds else None
        elif mono.is_monomial and len(mono.terms[0].exponents) == 1 \
                and mono.terms[0].exponents[0][1] == 1.0 and mono.terms[0].coefficient == 1.0:
            var = mono.terms[0].exponents[0][0]
        else:
            var = None
            notes.append(f"the law's axis {axis} is {mono} in the decision variables: the "
                         "plan is not confined to the pilot's range along it")
        if var is None:
            continue
        b_lo, b_hi = bounds[var]
        new = (max(b_lo, lo / extrapolation), min(b_hi, hi * extrapolation))
        if new[0] > new[1]:
            raise ValueError(f"bounds on {var} [{b_lo:g}, {b_hi:g}] do not meet "
                             f"extrapolation={extrapolation:g} times the pilot's range "
                             f"[{lo:g}, {hi:g}]")
        if new != (b_lo, b_hi):
            notes.append(f"{var} confined to [{new[0]:.4g}, {new[1]:.4g}] "
                         f"({extrapolation:g}x the pilot's range [{lo:g}, {hi:g}])")
        bounds[var] = new
    return bounds, notes


def path_budgets(problem: AllocationProblem, budget: float) -> np.ndarray:
    cheapest = problem.cheapest()[0]
    grid = np.array([budget * 2.0 ** (j / 4) for j in PATH_STEPS])
    return grid[grid >= cheapest * (1 + 1e-9)]


def optimum_path(law: Law, cost: Any, bounds: Mapping[str, Any], substitute: Any,
                  budgets: np.ndarray, budget: float, start: Mapping[str, float], name: str
                  ) -> PlanPath:
    """The optimum of ``law`` along ``budgets``, each solve warm-started from its neighbour,
    outwards from ``budget`` (started at ``start``)."""
    problem = AllocationProblem(law, cost, bounds, substitute)
    rows: list[dict[str, float]] = [{} for _ in budgets]
    mid = int(np.argmin(np.abs(np.log(budgets / budget))))
    rows[mid] = solve_warm(problem, float(budgets[mid]), start)
    for i in range(mid + 1, budgets.size):
        rows[i] = solve_warm(problem, float(budgets[i]), rows[i - 1])
    for i in range(mid - 1, -1, -1):
        rows[i] = solve_warm(problem, float(budgets[i]), rows[i + 1])
    return make_path(problem, name, budgets, rows)


def make_path(problem: AllocationProblem, name: str, budgets: np.ndarray,
          rows: Sequence[Mapping[str, float]]) -> PlanPath:
    values = {v: np.array([r[v] for r in rows]) for v in problem.variables}
    eff = problem.effective(values)
    return PlanPath(name, np.asarray(budgets, dtype=float), values,
                    {a: np.asarray(x, dtype=float) for a, x in eff.items()},
                    np.asarray(problem.cost_at(values), dtype=float))


def baseline_path(problem: AllocationProblem, name: str, budgets: np.ndarray,
                   centre: Mapping[str, float]) -> PlanPath:
    """A baseline along ``budgets``: the same direction from ``centre``, each budget spent."""
    direction = (dict.fromkeys(problem.variables, 1.0) if name == PROPORTIONAL
                 else {name.removesuffix(" only"): 1.0})
    keep, rows = [], []
    for b in budgets:
        try:
            rows.append(_spend(problem, float(b), direction, centre)[0])
            keep.append(float(b))
        except InfeasibleError:
            continue
    return make_path(problem, name, np.array(keep), rows)


def law_losses(bank: LawBank, eff: Mapping[str, Any]) -> np.ndarray:
    """Each law's loss at one allocation (law-axis values)."""
    return bank.losses({a: np.array([eff[a]], dtype=float) for a in bank.axes})[:, 0]


def neutral_law(axes: Sequence[str]) -> Law:
    """A law on ``axes`` for the problem's structure only (its numbers are never used)."""
    from rlscale.theory._laws import AdditiveLaw

    return AdditiveLaw(0.0, dict.fromkeys(axes, 1.0), dict.fromkeys(axes, 0.5))
