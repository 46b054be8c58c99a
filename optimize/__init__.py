"""rlscale.optimize: fitting scaling laws and compute-optimal allocation.

Builds on ``rlscale.theory`` only.  cvxpy is imported when a solver runs, not
when this package is imported; names load lazily on first use.  Every result
derives from :obj:`rlscale.theory.Result` (``success``, ``status``, ``message``,
``as_dict``, ``to_frame``).  The public names, by topic:

Fitting a scaling law
    :obj:`fit_law` (a :obj:`FitResult`; :obj:`load_fit` reads one back, :obj:`huber`
    is its loss), :obj:`fit_expression` for a law written as a formula (an
    :obj:`ExpressionFit`), :obj:`star_design` (the points that identify each
    exponent).
Compute-optimal allocation
    :obj:`AllocationProblem` (a law, a cost and bounds, compiled once), :obj:`allocate`
    and :obj:`min_cost` (an :obj:`Allocation`; many budgets at once: an
    :obj:`AllocationFrontier`), :obj:`kkt_residual` (the certificate of any point),
    :obj:`allocate_expression` (an :obj:`ExpressionAllocation`), allocation specs from
    TOML (:obj:`load_spec`, an :obj:`AllocationSpec`), :obj:`held_comparison` (a
    :obj:`HeldComparison`: the price of holding variables fixed).
Efficiency against baselines
    :obj:`efficiency` and :obj:`efficiency_curve` (:obj:`Efficiency`,
    :obj:`EfficiencyCurve`) against a :obj:`Baseline`; :obj:`compare_baselines` and
    :obj:`baseline_allocations` (a :obj:`BaselineComparison`); measured curves:
    :obj:`cost_to_reach` (a :obj:`MeasuredCost`) and :obj:`realised_efficiency` (a
    :obj:`RealisedEfficiency`).
Decisions that pay off once deployed
    :obj:`recommend` (a :obj:`Recommendation`, judged by :obj:`Comparison`),
    :obj:`plan_uncertainty` (a :obj:`PlanUncertainty`), :obj:`robust_plan` (a
    :obj:`RobustPlan`), :obj:`deployed_efficiency` (a :obj:`DeployedEfficiency` along a
    :obj:`PlanPath`), :obj:`calibrate_eta` (an :obj:`EtaCalibration`: do the η
    intervals cover?).
Pilot design under a budget
    :obj:`design` (a :obj:`Design`) and the sequential :obj:`Designer`; the models a
    design reads (:obj:`DesignModel`, :obj:`MultiOutputModel`, :obj:`NumericModel`) and
    what it aims at (:obj:`PlanTarget`, :obj:`FrontierTarget`).
Inference budgets of multi-turn agents
    :obj:`integer_plan`, :obj:`continuous_plan` and :obj:`baseline_plan` (an
    :obj:`InferencePlan`; the baselines: :obj:`BASELINES`), :obj:`adaptive_plan` (an
    :obj:`AdaptivePlan`), :obj:`compare_inference_plans` (an
    :obj:`InferenceComparison`), :obj:`budget_to_reach`; with a context level:
    :obj:`context_plan` (a :obj:`ContextPlan`; methods :obj:`CONTEXT_METHODS`) and
    :obj:`compare_context_plans` (a :obj:`ContextComparison`); coverage curves:
    :obj:`fit_coverage` (a :obj:`CoverageFit`).
Labels against optimisation (the reward law)
    :obj:`plan_labels` and :obj:`plan_labels_numeric` (a :obj:`LabelPlan`).
Named RL laws
    :obj:`fit_sigmoid` (a :obj:`SigmoidFit`), :obj:`fit_power_law` (a
    :obj:`PowerLawFit`), :obj:`sigmoid_audit` (a :obj:`SigmoidAudit`: which predicts the
    tail), :obj:`fit_gao` (a :obj:`GaoFit`).
"""

from __future__ import annotations

from rlscale.theory._lazy import attach

# Public name -> private module defining it.  Each capability adds its own block.
_EXPORTS: dict[str, str] = {
    # -- law fitter, allocation, efficiency (issue 4) --
    "Allocation": "_allocate",
    "AllocationFrontier": "_allocate",
    "AllocationProblem": "_allocate",
    "allocate": "_alloc_verbs",
    "kkt_residual": "_alloc_kkt",
    "min_cost": "_alloc_verbs",
    "FitResult": "_fit_result",
    "fit_law": "_fit",
    "load_fit": "_fit_io",
    "huber": "_fit",
    "Baseline": "_efficiency",
    "Efficiency": "_efficiency",
    "EfficiencyCurve": "_efficiency",
    "efficiency": "_efficiency",
    "efficiency_curve": "_efficiency",
    "MeasuredCost": "_efficiency",
    "cost_to_reach": "_efficiency",
    "BaselineComparison": "_baselines",
    "PlanUncertainty": "_plan_uncertainty",
    "baseline_allocations": "_baselines",
    "compare_baselines": "_baselines",
    "plan_uncertainty": "_plan_uncertainty",
    "EtaCalibration": "_calibration",
    "calibrate_eta": "_calibration",
    "star_design": "_calibration",
    # -- decisions that pay off once deployed (issue 29) --
    "Comparison": "_decision_result",
    "DeployedEfficiency": "_deployed",
    "PlanPath": "_deployed",
    "Recommendation": "_decision_result",
    "RobustPlan": "_robust_plan",
    "deployed_efficiency": "_deployed",
    "recommend": "_decision",
    "robust_plan": "_robust_plan",
    "ExpressionAllocation": "_fit_expr",
    "ExpressionFit": "_fit_expr",
    "allocate_expression": "_fit_expr",
    "fit_expression": "_fit_expr",
    "RealisedEfficiency": "_realised",
    "realised_efficiency": "_realised",
    "AllocationSpec": "_spec",
    "load_spec": "_spec",
    # -- inference-budget allocation for multi-turn agents (issue 14) --
    "AdaptivePlan": "_inference",
    "BASELINES": "_inference",
    "InferenceComparison": "_inference",
    "InferencePlan": "_inference",
    "adaptive_plan": "_inference",
    "baseline_plan": "_inference",
    "budget_to_reach": "_inference",
    "compare_inference_plans": "_inference",
    "continuous_plan": "_inference",
    "integer_plan": "_inference",
    "HeldComparison": "_held",
    "held_comparison": "_held",
    "CONTEXT_METHODS": "_context_plan",
    "ContextComparison": "_context_plan",
    "ContextPlan": "_context_plan",
    "compare_context_plans": "_context_plan",
    "context_plan": "_context_plan",
    "CoverageFit": "_coverage_fit",
    "fit_coverage": "_coverage_fit",
    # -- planning labels against optimisation on the reward law (issue 12) --
    "LabelPlan": "_label_plan",
    "plan_labels": "_label_plan",
    "plan_labels_numeric": "_label_plan",
    # -- named RL laws: compute sigmoid and its audit, Gao et al. (issue 15, section 2) --
    "GaoFit": "_gao_fit",
    "PowerLawFit": "_rl_fit",
    "SigmoidAudit": "_rl_fit",
    "SigmoidFit": "_rl_fit",
    "fit_gao": "_gao_fit",
    "fit_power_law": "_rl_fit",
    "fit_sigmoid": "_rl_fit",
    "sigmoid_audit": "_rl_fit",
    # -- budget-aware pilot design (issue 23) --
    "Design": "_design_result",
    "DesignModel": "_design_model",
    "Designer": "_design_sequential",
    "FrontierTarget": "_design_target",
    "MultiOutputModel": "_design_model",
    "NumericModel": "_design_model",
    "PlanTarget": "_design_target",
    "design": "_design",
}

# Public sub-modules reachable as attributes.
_SUBMODULES: tuple[str, ...] = ()

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS, _SUBMODULES)
