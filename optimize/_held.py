"""What a decision variable is worth: the best plan with it free against the best plan with it held.

"Does a longer context pay for its compute?" is the comparison of two
compute-optimal plans under one law and one cost: the plan over every
variable (``E, t, k, c``), and the best plan with one variable held at a value
(``c = 1``, the harness without the axis).  Both are optimal for their own
problem, so this is the strongest baseline that does not use the variable,
not a one-axis heuristic.

``η = B / B*``: ``B*`` is the least budget at which the free problem reaches
the held plan's loss at budget ``B`` (:meth:`AllocationProblem.min_cost`).
The free problem contains the held plan, so ``η >= 1`` *under the law that
chose both*; whether the gain survives deployment is a question for the
generating law (or training), not for the fitted law — see
``benchmarks/context_axis.py``, which judges plans chosen from a fitted law
under the law that generated the data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rlscale.optimize._allocate import Allocation, AllocationProblem
from rlscale.theory._laws import Law
from rlscale.theory._result import Result
from rlscale.theory._validation import check_mapping, check_scalar

__all__ = ["HeldComparison", "held_comparison"]


@dataclass(frozen=True)
class HeldComparison(Result):
    """The free plan, the held plan, and the budget ratio between them at equal loss."""

    budget: float
    hold: dict[str, float]
    free: Allocation
    held: Allocation
    free_cost_at_held_loss: float
    eta: float
    status: str = "optimal"

    @property
    def success(self) -> bool:
        return self.status == "optimal"

    @property
    def message(self) -> str:
        held = ", ".join(f"{k} = {v:g}" for k, v in self.hold.items())
        return (f"with {held} the best plan reaches loss {self.held.loss:.6g} at budget "
                f"{self.budget:g}; with it free the loss is {self.free.loss:.6g}, and that "
                f"held loss costs {self.free_cost_at_held_loss:.6g}: eta = {self.eta:.4g}")

    def as_dict(self) -> dict[str, Any]:
        return {"budget": self.budget, "hold": dict(self.hold), "free": self.free,
                "held": self.held, "free_cost_at_held_loss": self.free_cost_at_held_loss,
                "eta": self.eta, "status": self.status, "message": self.message}


def held_comparison(law: Law, cost: Any, budget: float, hold: Mapping[str, float],
                    bounds: Mapping[str, Any] | None = None, *,
                    substitute: Mapping[str, Any] | None = None,
                    synthesis: Any = None) -> HeldComparison:
    """Compare the compute-optimal plan with the best plan that holds ``hold`` fixed.

    Parameters
    ----------
    law, cost, bounds, substitute, synthesis
        As for :class:`~rlscale.optimize.AllocationProblem`.
    budget : float
    hold : mapping variable -> value
        Decision variables held (their bounds become ``[value, value]``).

    Examples
    --------
    >>> from rlscale.theory import AdditiveLaw
    >>> law = AdditiveLaw(0.1, {"k": 1.0, "c": 0.5}, {"k": 0.3, "c": 0.6})
    >>> cmp = held_comparison(law, "k + 0.05*k*c", 1000.0, {"c": 1.0},
    ...                       bounds={"c": {"min": 1, "max": 64}})
    >>> round(cmp.free.values["c"], 2), round(cmp.eta, 3)
    (37.77, 68.745)
    """
    B = check_scalar("budget", budget, low=0.0, low_open=True)
    hold = dict(check_mapping("hold", hold))
    if not hold:
        raise ValueError("hold must name at least one decision variable, e.g. {'c': 1}")
    free = AllocationProblem(law, cost, bounds, substitute, synthesis)
    unknown = [v for v in hold if v not in free.variables]
    if unknown:
        raise ValueError(f"hold names {unknown[0]!r}, not a decision variable (variables: "
                         f"{free.variables})")
    # Every variable keeps its bounds (an infinite upper bound is written as none).
    held_bounds = {v: {"min": lo, **({"max": hi} if hi < float("inf") else {})}
                   for v, (lo, hi) in free.bounds.items()}
    for v, value in hold.items():
        x = check_scalar(f"hold[{v!r}]", value, low=0.0, low_open=True)
        lo, hi = free.bounds[v]
        if not lo <= x <= hi:
            raise ValueError(f"hold[{v!r}] = {x:g} is outside the bounds of {v} "
                             f"[{lo:g}, {hi:g}]")
        held_bounds[v] = {"min": x, "max": x}
        hold[v] = x
    held_problem = AllocationProblem(law, cost, held_bounds, substitute, synthesis)
    free_plan = free.allocate(B)
    held_plan = held_problem.allocate(B)
    # Where holding the variable costs nothing, the free plan needs the whole budget too.
    need = B if held_plan.loss <= free_plan.loss else free.min_cost(held_plan.loss).cost
    return HeldComparison(budget=B, hold=hold, free=free_plan, held=held_plan,
                          free_cost_at_held_loss=float(need), eta=float(B / need))
