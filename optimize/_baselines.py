"""Fair baselines for a compute-optimal plan, and the plan's uncertainty.

A plan's efficiency ``η = B_baseline / B_optimal`` is only as meaningful as
its baseline.  :func:`compare_baselines` measures the plan against every
simple way of spending the same budget — each decision variable scaled
alone with the others at a reference point, and all of them scaled in
proportion — inside the user's bounds, and names the **strongest** (the one
with the smallest η).  A baseline that reaches a bound stops there and spends
less than the budget; its η uses what it spent, and a note says so.

:func:`plan_uncertainty` carries a fit's bootstrap laws into the plan: the
spread of the optimal allocation, the predicted loss band at the plan, η
against each baseline with an interval, and a **robust plan** that minimises
the mean loss over the bootstrap laws (a :class:`~rlscale.theory.MixtureLaw`,
still a geometric program).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlscale.optimize._allocate import Allocation, AllocationProblem
from rlscale.theory._errors import InfeasibleError
from rlscale.theory._laws import Law
from rlscale.theory._validation import check_mapping, check_scalar

__all__ = ["BaselineComparison", "PlanUncertainty", "baseline_allocations",
           "compare_baselines", "plan_uncertainty"]

PROPORTIONAL = "proportional"


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

    # Where each scaled variable meets its lower and upper bound.
    lo_cap = max(math.log(problem.bounds[v][0] / centre[v]) for v in direction)
    hi_cap = min((math.log(problem.bounds[v][1] / centre[v]) for v in direction
                  if math.isfinite(problem.bounds[v][1])), default=700.0)
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
class BaselineComparison:
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


@dataclass(frozen=True)
class PlanUncertainty:
    """A plan with the uncertainty of the law it was computed from (:func:`plan_uncertainty`).

    Attributes
    ----------
    budget, confidence : float
    point : BaselineComparison
        The plan and baselines under the point-estimate law.
    allocation_intervals : dict
        Per decision variable, the central ``confidence`` interval of the
        optimal value over the bootstrap laws.
    loss_band : tuple
        Interval of the loss the bootstrap laws predict at the point plan.
    eta_intervals : dict
        Per baseline, the interval of η over the bootstrap laws (each law
        re-plans and re-prices the same baseline allocation).
    robust : Allocation
        The allocation minimising the mean loss over the bootstrap laws.
    robust_gain : float
        Mean loss over the bootstrap laws at the point plan minus at the
        robust plan (≥ 0 up to solver tolerance: what robustness buys in
        expectation).
    robust_point_cost : float
        Point-law loss of the robust plan minus that of the point plan (≥ 0:
        what robustness costs if the point law is right).
    n_laws : int
        Bootstrap laws used (those whose allocation problem solved).
    """

    budget: float
    confidence: float
    point: BaselineComparison
    allocation_intervals: dict[str, tuple[float, float]]
    loss_band: tuple[float, float]
    eta_intervals: dict[str, tuple[float, float]]
    robust: Allocation
    robust_gain: float
    robust_point_cost: float
    n_laws: int
    notes: tuple[str, ...] = field(default=())

    @property
    def strongest(self) -> str:
        return self.point.strongest

    def covers(self, eta: float, baseline: str | None = None) -> bool:
        """Whether the η interval against ``baseline`` (default: strongest) contains ``eta``."""
        eta = check_scalar("eta", eta)
        if baseline is None:
            baseline = self.strongest
        if not isinstance(baseline, str) or baseline not in self.eta_intervals:
            raise ValueError(f"baseline must be one of {sorted(self.eta_intervals)} or None; "
                             f"got baseline={baseline!r:.60}")
        lo, hi = self.eta_intervals[baseline]
        return lo <= eta <= hi

    def as_dict(self) -> dict[str, Any]:
        return {"budget": self.budget, "confidence": self.confidence,
                "point": self.point.as_dict(),
                "allocation_intervals": self.allocation_intervals,
                "loss_band": self.loss_band, "eta_intervals": self.eta_intervals,
                "strongest": self.strongest, "robust": self.robust.as_dict(),
                "robust_gain": self.robust_gain, "robust_point_cost": self.robust_point_cost,
                "n_laws": self.n_laws, "notes": list(self.notes)}


def plan_uncertainty(law: Law, laws: Sequence[Law], cost: Any, budget: float,
                     centre: Mapping[str, float], bounds: Mapping[str, Any] | None = None, *,
                     substitute: Mapping[str, Any] | None = None,
                     confidence: float = 0.9) -> PlanUncertainty:
    """Carry the bootstrap laws of a fit into the plan, its η and a robust plan.

    Parameters
    ----------
    law : Law
        The point-estimate law.
    laws : sequence of Law
        Bootstrap laws (e.g. :meth:`FitResult.bootstrap_laws`); at least 2.
    cost, bounds, substitute :
        As for :class:`AllocationProblem`.
    budget : float
    centre : mapping
        The reference point of the baselines (decision variables).
    confidence : float
        Level of every interval (central, percentile).

    Examples
    --------
    >>> from rlscale.theory import AdditiveLaw
    >>> laws = [AdditiveLaw(0.1, {"E": 1.0, "k": c}, {"E": 0.5, "k": 0.5})
    ...         for c in (0.5, 1.0, 2.0)]
    >>> u = plan_uncertainty(laws[1], laws, "E + k", 200.0, {"E": 10.0, "k": 10.0},
    ...                      {"E": (1, 1e6), "k": (1, 1e6)})
    >>> u.strongest, u.n_laws, u.robust_gain >= -1e-9, u.robust_point_cost >= -1e-9
    ('proportional', 3, True, True)
    """
    if isinstance(laws, str | bytes) or not isinstance(laws, Sequence):
        raise TypeError(f"laws must be a sequence of bootstrap laws; got {type(laws).__name__}")
    laws = list(laws)
    if not all(isinstance(b, Law) for b in laws):
        raise TypeError("laws must hold rlscale.theory laws only")
    if len(laws) < 2:
        raise ValueError(f"laws must hold at least 2 bootstrap laws; got {len(laws)}")
    confidence = check_scalar("confidence", confidence, low=0.0, high=1.0,
                                  low_open=True, high_open=True)
    problem = AllocationProblem(law, cost, bounds, substitute)
    point = compare_baselines(problem, budget, centre)
    plan_values = point.plan.values
    alloc: list[dict[str, float]] = []
    losses: list[float] = []
    etas: dict[str, list[float]] = {k: [] for k in point.baselines}
    good: list[Law] = []
    notes = []
    for b in laws:
        try:
            pb = AllocationProblem(b, cost, bounds, substitute)
            alloc.append(pb.allocate(budget, round_integers=False).values)
            for name, row in point.baselines.items():
                etas[name].append(row["cost"] / _iso_loss(pb, float(pb.loss_at(row["values"]))))
        except (InfeasibleError, ArithmeticError, RuntimeError) as exc:
            notes.append(f"a bootstrap law was skipped: {exc}")
            continue
        losses.append(float(pb.loss_at(plan_values)))
        good.append(b)
    if len(good) < 2:
        raise ValueError(f"only {len(good)} of {len(laws)} bootstrap laws gave a solvable "
                         "plan; no interval can be formed")
    q = ((1 - confidence) / 2, (1 + confidence) / 2)

    def interval(xs: Sequence[float]) -> tuple[float, float]:
        lo, hi = np.quantile(np.asarray(xs, dtype=float), q)
        return float(lo), float(hi)

    from rlscale.theory._mixture import MixtureLaw

    mixture = AllocationProblem(MixtureLaw(good), cost, bounds, substitute)
    robust = mixture.allocate(budget, round_integers=False)
    return PlanUncertainty(
        budget=float(budget), confidence=confidence, point=point,
        allocation_intervals={v: interval([a[v] for a in alloc]) for v in problem.variables},
        loss_band=interval(losses),
        eta_intervals={k: interval([e for e in v if math.isfinite(e)]) for k, v in etas.items()},
        robust=robust,
        robust_gain=float(mixture.loss_at(plan_values)) - robust.loss,
        robust_point_cost=float(problem.loss_at(robust.values)) - point.plan.loss,
        n_laws=len(good), notes=tuple(dict.fromkeys(notes)))
