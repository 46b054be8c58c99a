"""rlscale.optimize: fitting scaling laws and compute-optimal allocation.

Builds on ``rlscale.theory`` only.  cvxpy is imported when a solver runs, not
when this package is imported; names load lazily on first use.
"""

from __future__ import annotations

from rlscale.theory._lazy import attach

# Public name -> private module defining it.  Each capability adds its own block.
_EXPORTS: dict[str, str] = {
    # -- law fitter, allocation, efficiency (issue 4) --
    "Allocation": "_allocate",
    "AllocationProblem": "_allocate",
    "allocate": "_allocate",
    "kkt_residual": "_allocate",
    "min_cost": "_allocate",
    "FitResult": "_fit",
    "fit_law": "_fit",
    "huber": "_fit",
    "Baseline": "_efficiency",
    "Efficiency": "_efficiency",
    "EfficiencyCurve": "_efficiency",
    "efficiency": "_efficiency",
    "efficiency_curve": "_efficiency",
    "MeasuredCost": "_efficiency",
    "cost_to_reach": "_efficiency",
    "AllocationSpec": "_spec",
    "load_spec": "_spec",
    # -- planning labels against optimisation on the reward law (issue 12) --
    "LabelPlan": "_label_plan",
    "plan_labels": "_label_plan",
    "plan_labels_numeric": "_label_plan",
}

# Public sub-modules reachable as attributes.
_SUBMODULES: tuple[str, ...] = ()

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS, _SUBMODULES)
