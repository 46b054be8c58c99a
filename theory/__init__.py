"""rlscale.theory: pure mathematics of RL post-training scaling.

Symbolic laws (sympy) with fast numeric evaluation.  This package imports
nothing else of rlscale's and never imports cvxpy or matplotlib; names load
lazily on first use.
"""

from __future__ import annotations

from rlscale.theory._lazy import attach

# Public name -> private module defining it.  Each capability adds its own block.
_EXPORTS: dict[str, str] = {
    # -- argument checking (foundation) --
    "check_real": "_validation",
    "check_positive_int": "_validation",
    # -- a BLAS thread limit for numeric hot loops (issue 13, goal 8) --
    "blas_threads": "_threads",
    "RlscaleError": "_errors",
    "SolverError": "_errors",
    "InfeasibleError": "_errors",
    # -- Gaussian extremes and the reward-optimisation law (issue 3) --
    "expected_max_normal": "_gaussian",
    "expected_max_normal_bounds": "_gaussian",
    "expected_max_normal_asymptotic": "_gaussian",
    "expected_max_normal_log": "_gaussian",
    "bon_kl": "_gaussian",
    "bon_n_for_kl": "_gaussian",
    "tilt_gain": "_gaussian",
    "regressional_gain": "_gaussian",
    "quantile_mean_normal": "_gaussian",
    # -- data-scaling law families, synthetic data, cost parser (issue 4) --
    "Monomial": "_posynomial",
    "Posynomial": "_posynomial",
    "PosynomialError": "_posynomial",
    "parse_posynomial": "_posynomial_parser",
    "AdditiveLaw": "_laws",
    "Law": "_law_base",
    "LawProperties": "_law_base",
    "MultiplicativeLaw": "_laws",
    "PassRateLaw": "_laws",
    "law_from_dict": "_laws",
    "MixtureLaw": "_mixture",
    "ExpressionError": "_expr",
    "ExpressionLaw": "_expr",
    "PosynomialLaw": "_expr",
    "parse_expression": "_expr",
    "NestedAllocation": "_nested",
    "VarianceComponentsLaw": "_nested",
    "nested_cost": "_nested",
    "nested_optimum": "_nested",
    "nested_totals": "_nested",
    "CriticalRatio": "_synthetic",
    "FilterThreshold": "_quality_filter",
    "SynthesisMethod": "_synthetic",
    "critical_synthetic_ratio": "_synthetic",
    "filter_price": "_quality_filter",
    "optimal_filter_threshold": "_quality_filter",
    "uniform_filter_threshold": "_quality_filter",
    "budget_shares": "_closed_forms",
    "chinchilla_optimal": "_closed_forms",
    # -- inference-budget laws for multi-turn agents (issue 14) --
    "Turn": "_turns",
    "CoverageTurn": "_turns",
    "VerifierTurn": "_turns",
    "SelectionTurn": "_turns",
    "EmpiricalTurn": "_turns",
    "coverage": "_inference",
    "episode_success": "_turns",
    "log_coverage": "_inference",
    "pass_at_k": "_inference",
    # -- the context axis: window-limited loss, its power law, its cost (issue 27) --
    "ContextTurn": "_context",
    "context_cost": "_context",
    "context_term": "_context",
    "lag_survival": "_context",
    "window_loss": "_context",
    # -- named RL laws: ScaleRL compute sigmoid, Gao et al. peaks (issue 15, section 2) --
    "ComputeSigmoid": "_rl_forms",
    "GaoPeak": "_rl_forms",
    "gao_peak": "_rl_forms",
}

# Public sub-modules reachable as attributes.
_SUBMODULES: tuple[str, ...] = ("reward",)

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS, _SUBMODULES)
