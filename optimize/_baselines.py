"""Fair baselines for a compute-optimal plan, and the plan's uncertainty.

A plan's efficiency ``η = B_baseline / B_optimal`` is only as meaningful as
its baseline.  :func:`compare_baselines` measures the plan against every
simple way of spending the same budget — each decision variable scaled
alone with the others at a reference point, and all of them scaled in
proportion — inside the user's bounds, and names the **strongest** (the one
with the smallest η).  A baseline that reaches a bound stops there and spends
less than the budget; its η uses what it spent, and a note says so.

The η of the plug-in plan under each bootstrap law (:func:`eta_bootstrap`) feeds
:func:`~rlscale.optimize.plan_uncertainty` (:mod:`rlscale.optimize._plan_uncertainty`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.optimize._alloc_kkt import ALLOCATE, MIN_COST
from rlscale.optimize._allocate import Allocation, AllocationProblem
from rlscale.optimize._warm_newton import warm_solve
from rlscale.theory._errors import InfeasibleError
from rlscale.theory._laws import Law
from rlscale.theory._result import Result
from rlscale.theory._validation import check_mapping, check_scalar

__all__ = ["BaselineComparison", "baseline_allocations", "compare_baselines", "eta_bootstrap"]

PROPORTIONAL = "proportional"
#: η never goes below 1: the optimum reaches any baseline's loss at no more than its cost.
ETA_FLOOR = 1.0


def _spend(problem: AllocationProblem, budget: float, direction: Mapping[str, float],
           centre: Mapping[str, float]) -> tuple[dict[str, float], float, str]:
    """Scale the variables in ``direction`` by one factor until the budget is spent.

    ``x_v = centre_v · s^{d_v}`` (``d_v`` 1 for scaled variables, 0 for
    fixed ones); ``s`` is found by bisection in ``log s`` on the cost, then
    capped where the first scaled variable meets its bound.  Returns the
    values, the cost spent and a note ('' unless a bound or the budget bit).
    """
    from scipy.optimize import brentq

    def values(log_s: float) -> dict[str, float]:
        return {v: centre[v] * math.exp(direction.get(v, 0.0) * log_s)
                for v in problem.variables}

    def excess(log_s: float) -> float:
        return math.log(float(problem.cost_at(values(log_s)))) - math.log(budget)

    outside = [v for v in problem.variables if v not in direction
               and not problem.bounds[v][0] <= centre[v] <= problem.bounds[v][1]]
    if outside:  # a held variable the bounds exclude: this baseline is not allowed at all
        v = outside[0]
        raise InfeasibleError(f"the baseline holds {v} at the centre's {centre[v]:g}, outside "
                              f"its bounds [{problem.bounds[v][0]:g}, "
                              f"{problem.bounds[v][1]:g}]")

    # Where each scaled variable meets its lower and upper bound.
    # An open bound stops the search where a variable would reach 1e-300 or 1e300 (issue 22:
    # log(0) was "math domain error", and e^700 times a large centre overflowed to inf).
    lo_cap = max(math.log(max(problem.bounds[v][0], 1e-300) / centre[v]) for v in direction)
    hi_cap = min(math.log(min(problem.bounds[v][1], 1e300) / centre[v]) for v in direction)
    if excess(lo_cap) > 0:
        raise InfeasibleError(f"budget {budget:g} cannot buy the baseline even at its "
                              f"lower bounds (cost {float(problem.cost_at(values(lo_cap))):.6g})")
    if excess(hi_cap) <= 0:
        vals = values(hi_cap)
        capped = [v for v in direction
                  if math.isclose(vals[v], problem.bounds[v][1], rel_tol=1e-9)]
        spent = float(problem.cost_at(vals))
        return vals, spent, (f"{', '.join(capped)} reached its upper bound; spends "
                             f"{spent:.6g} of {budget:.6g}")
    log_s = brentq(excess, lo_cap, hi_cap, xtol=1e-14, rtol=1e-15)
    vals = values(log_s)
    return vals, float(problem.cost_at(vals)), ""


def baseline_allocations(problem: AllocationProblem, budget: float,
                         centre: Mapping[str, float]) -> dict[str, tuple[dict[str, float],
                                                                          float, str]]:
    """Every simple baseline at ``budget``: ``{name: (values, cost spent, note)}``.

    ``"<variable> only"`` scales that variable with the others at ``centre``;
    ``"proportional"`` scales all of them by one factor from ``centre``.
    Baselines that cannot be bought at all (the fixed variables alone cost
    more than the budget) are left out.
    """
    if not isinstance(problem, AllocationProblem):
        raise TypeError(f"problem must be an AllocationProblem; got {type(problem).__name__}")
    budget = check_scalar("budget", budget, low=0.0, low_open=True)
    centre = check_mapping("centre", centre)
    missing = [v for v in problem.variables if v not in centre]
    if missing:
        raise ValueError(f"centre must give every decision variable a value; missing "
                         f"{missing}")
    centre = {v: check_scalar(f"centre[{v!r}]", centre[v], low=0.0, low_open=True)
              for v in problem.variables}
    out = {}
    for name, direction in [*((f"{v} only", {v: 1.0}) for v in problem.variables),
                            (PROPORTIONAL, dict.fromkeys(problem.variables, 1.0))]:
        try:
            out[name] = _spend(problem, budget, direction, centre)
        except InfeasibleError:
            continue
    return out


@dataclass(frozen=True)
class BaselineComparison(Result):
    """The plan at one budget against every simple baseline (:func:`compare_baselines`).

    Attributes
    ----------
    budget : float
    plan : Allocation
        The compute-optimal allocation at ``budget`` (continuous).
    baselines : dict
        ``{name: {"values", "cost", "loss", "optimal_cost", "eta", "note"}}``:
        each baseline's allocation, what it spent, its loss, the cost at which
        the optimum reaches that loss, and ``eta = cost / optimal_cost``.
    strongest : str
        The baseline with the smallest η: the fair comparison.
    """

    budget: float
    plan: Allocation
    baselines: dict[str, dict[str, Any]]
    strongest: str

    @property
    def eta(self) -> float:
        """η against the strongest baseline."""
        return float(self.baselines[self.strongest]["eta"])

    def as_dict(self) -> dict[str, Any]:
        return {"budget": self.budget, "plan": self.plan.as_dict(), "baselines": self.baselines,
                "strongest": self.strongest, "eta": self.eta}


def _iso_loss(problem: AllocationProblem, loss: float) -> float:
    return float(problem.min_cost(loss, round_integers=False).cost)


def compare_baselines(problem: AllocationProblem, budget: float,
                      centre: Mapping[str, float]) -> BaselineComparison:
    """The plan at ``budget`` against each single-variable and the proportional baseline.

    Examples
    --------
    >>> from rlscale.theory import AdditiveLaw
    >>> law = AdditiveLaw(0.1, {"E": 1.0, "k": 1.0}, {"E": 0.5, "k": 0.5})
    >>> prob = AllocationProblem(law, "E + k", {"E": (1, 1e6), "k": (1, 1e6)})
    >>> cmp = compare_baselines(prob, 200.0, {"E": 10.0, "k": 10.0})
    >>> cmp.strongest, round(cmp.eta, 6)  # equal terms: proportional is optimal
    ('proportional', 1.0)
    >>> # k only: k = 190, loss 0.1 + 10**-0.5 + 190**-0.5; the optimum (E = k = C/2)
    >>> # reaches it at C = 2·(2/(loss − 0.1))² = 52.93, so η = 200/52.93
    >>> round(cmp.baselines["k only"]["eta"], 3)
    3.779
    """
    baselines = {}
    for name, (values, spent, note) in baseline_allocations(problem, budget, centre).items():
        loss = float(problem.loss_at(values))
        try:
            opt = _iso_loss(problem, loss)
        except InfeasibleError as exc:  # the baseline's loss already sits at the floor
            raise ValueError(f"budget={budget:g} buys the {name} baseline a loss the optimum "
                             f"cannot price (it is at the law's floor within float64): {exc}; "
                             "compare at a smaller budget") from None
        baselines[name] = {"values": values, "cost": spent, "loss": loss,
                           "optimal_cost": opt, "eta": spent / opt, "note": note}
    if not baselines:
        raise InfeasibleError(f"no baseline can be bought with budget {budget:g} from "
                              f"centre {dict(centre)}")
    strongest = min(baselines, key=lambda k: baselines[k]["eta"])
    plan = problem.allocate(budget, round_integers=False)
    return BaselineComparison(float(budget), plan, baselines, strongest)


def _bootstrap_law_problem(b: Law, cost: Any, bounds: Any, substitute: Any
                           ) -> tuple[AllocationProblem | None, str]:
    """The allocation problem of a bootstrap law, or ``None`` and why it cannot be built.

    A bootstrap law of a poorly identified fit can carry an exponent beyond
    what the solver takes (|α| > 1000: the term is a step at the lower bound)
    or a coefficient that underflowed; such a law is skipped and counted, not
    allowed to fail the whole plan.
    """
    try:
        return AllocationProblem(b, cost, bounds, substitute), ""
    except ValueError as exc:
        return None, f"a bootstrap law the solver cannot take was skipped: {exc}"


def _warm_or_gp(pb: AllocationProblem, key: str, bound: float, starts: dict[str, Any],
                warm: bool) -> tuple[dict[str, float], float]:
    """``(values, cost)`` of ``pb.allocate(bound)`` (``key == "plan"``) or ``pb.min_cost``.

    With ``warm``, Newton from the last law's optimum for the same ``key``
    (:func:`~._warm_newton.warm_solve`, accepted only with a KKT certificate);
    otherwise, or when it is not certified, the geometric program (cvxpy, the
    solver of record) with all of its checks.  The optimum becomes the next
    law's start.
    """
    sense = ALLOCATE if key == "plan" else MIN_COST
    if warm and key in starts and (
            sense is ALLOCATE or bound > pb.lowest_loss() * (1 + 1e-12)):  # min_cost's check
        values = warm_solve(pb, sense, bound, starts[key])
        if values is not None:
            starts[key] = values
            A, b = pb._matrix(pb.cost)  # the cost as the GP path's summary computes it
            return values, float(np.exp(A @ np.log([values[v] for v in pb.variables]) + b).sum())
    a = (pb.allocate if sense is ALLOCATE else pb.min_cost)(bound, round_integers=False)
    starts[key] = a.values
    return a.values, a.cost


def eta_bootstrap(point: BaselineComparison, laws: Sequence[Law], cost: Any,
                  bounds: Mapping[str, Any] | None, substitute: Mapping[str, Any] | None,
                  allocations: bool = True, *, warm: bool = True) -> dict[str, Any]:
    """η against each baseline of ``point`` under each bootstrap law (private helper).

    Each law re-plans and re-prices the same baseline allocations.  A law is
    used for every baseline or for none: it is skipped (with a note) when its
    problem cannot be built, a solve fails or an η is not finite.  Returns
    ``{"etas": {name: array}, "alloc": [...], "losses": [...], "good": [...],
    "notes": [...], "skipped": int}`` (``alloc``/``losses`` empty unless
    ``allocations``).

    With ``warm`` (the default) each solve starts Newton from the previous
    law's optimum and keeps it only with a KKT certificate (see
    :mod:`._warm_newton`), else solves the geometric program; ``warm=False``
    solves the GP for every law (the path before warm starts; the same optima
    to ~1e-15 relative).  Every Newton starts from the previous law's optimum
    for the same solve, the first from the point plan.  Measured on the
    40 laws of a ``--quick``-sized fit of the report's sweep data (5 solves
    each, ``python -m benchmarks efficiency``, load 4): 0.18 CPU s against 0.70.
    """
    budget = point.budget
    plan_values = point.plan.values
    etas: dict[str, list[float]] = {k: [] for k in point.baselines}
    alloc: list[dict[str, float]] = []
    losses: list[float] = []
    good: list[Law] = []
    notes: list[str] = []
    starts: dict[str, Any] = dict.fromkeys(["plan", *point.baselines], plan_values)
    for b in laws:
        pb, why = _bootstrap_law_problem(b, cost, bounds, substitute)
        if pb is None:
            notes.append(why)
            continue
        try:
            values = _warm_or_gp(pb, "plan", budget, starts, warm)[0] if allocations else None
            row_etas = {name: row["cost"] / _warm_or_gp(
                pb, name, float(pb.loss_at(row["values"])), starts, warm)[1]
                        for name, row in point.baselines.items()}
        except (InfeasibleError, ArithmeticError, RuntimeError) as exc:
            notes.append(f"a bootstrap law was skipped: {exc}")
            continue
        bad = [name for name, e in row_etas.items() if not math.isfinite(e)]
        if bad:
            notes.append(f"a bootstrap law was skipped: its η against {bad[0]} is not finite")
            continue
        for name, e in row_etas.items():
            etas[name].append(e)
        if allocations:
            alloc.append(values)
            losses.append(float(pb.loss_at(plan_values)))
        good.append(b)
    return {"etas": {k: np.asarray(v, dtype=float) for k, v in etas.items()}, "alloc": alloc,
            "losses": losses, "good": good, "notes": notes,
            "skipped": len(laws) - len(good)}
