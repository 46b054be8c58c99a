"""rlscale.theory: pure mathematics of RL post-training scaling.

Symbolic laws (sympy) with fast numeric evaluation.  This package imports
nothing else of rlscale's and never imports cvxpy or matplotlib; names load
lazily on first use.  The public names, by topic:

Data-scaling laws
    :obj:`Law` (the base every law derives from, with :obj:`LawProperties`, what a
    family declares about itself), :obj:`AdditiveLaw`, :obj:`MultiplicativeLaw`,
    :obj:`PassRateLaw`, :obj:`MixtureLaw`, :obj:`VarianceComponentsLaw`;
    :obj:`law_from_dict` reads a law back from its ``as_dict()``.
Laws and costs from expressions
    :obj:`ExpressionLaw` and :obj:`PosynomialLaw` from a formula
    (:obj:`parse_expression`, a whitelisting parser; :obj:`ExpressionError`), costs as
    posynomials (:obj:`parse_posynomial`, :obj:`Posynomial`, :obj:`Monomial`,
    :obj:`PosynomialError`).
Closed-form allocation
    :obj:`budget_shares` (the optimal shares of the budget at a point) and
    :obj:`chinchilla_optimal` (the compute-optimal ``(N, D)`` at ``C = 6ND``); the
    nested environments x tasks x trajectories design: :obj:`nested_optimum` (a
    :obj:`NestedAllocation`), :obj:`nested_cost`, :obj:`nested_totals`.
Synthetic and filtered data
    :obj:`SynthesisMethod` and :obj:`critical_synthetic_ratio` (where synthetic data
    stops paying: a :obj:`CriticalRatio`); :obj:`optimal_filter_threshold`,
    :obj:`uniform_filter_threshold` and :obj:`filter_price` (a :obj:`FilterThreshold`).
The reward-optimisation law and Gaussian extremes
    The law ``gain = Θ(sqrt(min{log M, K}))`` with its proved band, inverses and
    elasticities: the module :mod:`rlscale.theory.reward` (``reward``).  Its
    ingredients: :obj:`expected_max_normal` (with :obj:`expected_max_normal_bounds`,
    :obj:`expected_max_normal_asymptotic`, :obj:`expected_max_normal_log`),
    :obj:`bon_kl`, :obj:`bon_n_for_kl`, :obj:`tilt_gain`, :obj:`regressional_gain`,
    :obj:`quantile_mean_normal`.
Named RL laws
    ScaleRL's :obj:`ComputeSigmoid`; Gao et al.'s peaks, :obj:`gao_peak` (a
    :obj:`GaoPeak`).
Inference budgets of multi-turn agents
    One turn of an agent: :obj:`Turn` and one class per kind, :obj:`CoverageTurn`,
    :obj:`VerifierTurn`, :obj:`SelectionTurn`, :obj:`EmpiricalTurn`; a task's
    success over its turns: :obj:`episode_success`, :obj:`coverage`,
    :obj:`log_coverage`, :obj:`pass_at_k`.
The context axis
    :obj:`ContextTurn`, :obj:`window_loss`, :obj:`lag_survival`, :obj:`context_term`,
    :obj:`context_cost`.
The data axes, named once
    The table of the axes' names, config fields, symbols and flags lives here, in
    the private module ``_axes``, so that every room reads the same one; it is
    public as ``rlscale.simulate.Axis``, ``AXES``, ``CONTEXT``, ``SWEEP_AXES`` and
    ``axis``.
Results
    :obj:`Result`, the base of every result rlscale returns (``success``,
    ``status``, ``message``, ``as_dict``, ``to_frame``, a compact ``repr``, a
    notebook table), and :obj:`is_result`.
Foundations
    Argument checks that name the argument (:obj:`check_real`,
    :obj:`check_positive_int`), a BLAS thread limit for numeric loops
    (:obj:`blas_threads`), and the errors :obj:`RlscaleError`, :obj:`SolverError`,
    :obj:`InfeasibleError`.
"""

from __future__ import annotations

from rlscale.theory._lazy import attach

# Public name -> private module defining it.  Each capability adds its own block.
_EXPORTS: dict[str, str] = {
    # -- one surface for every result (issue 25) --
    "Result": "_result",
    "is_result": "_result",
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
