"""rlscale.simulate: simulators that ground the theory in data.

The Gaussian selection simulator (exact, fast Monte Carlo, brute force) and a
numpy RL trainer on procedurally generated agent environments.  Builds on
``rlscale.theory`` only; names load lazily on first use.  Every result derives
from :obj:`rlscale.theory.Result`.  The public names, by topic:

Gaussian selection
    :obj:`sample_selection` (fast order statistics: a :obj:`SelectionSample`),
    :obj:`brute_force_selection` (materialised candidates), soft best-of-n:
    :obj:`soft_bon_frontier` (a :obj:`SoftBonFrontier`) and :obj:`cross_fit_gain`.
The KL-regularised bandit
    :obj:`kl_bandit_pg` (a :obj:`BanditResult`; algorithms :obj:`BANDIT_ALGORITHMS`)
    against its exact optimum :obj:`kl_bandit_optimum`.
Environments
    Grid worlds: :obj:`GridFamily`, :obj:`GridWorld`, :obj:`VecGridEnv`, Gymnasium's
    maps (:obj:`frozen_lake`, :obj:`FROZEN_LAKE_MAPS`, :obj:`world_from_text`), exact
    success (:obj:`optimal_success`, :obj:`policy_success`); corrupted worlds and their
    verifier: :obj:`synthetic_world` (a :obj:`SyntheticWorld`), :obj:`verify_world`
    (a :obj:`VerifierReport`); cue corridors for the context axis:
    :obj:`MemoryFamily`, :obj:`MemoryWorld`, :obj:`reference_success`,
    :obj:`uniform_success`.
The trainer
    :obj:`train` (a :obj:`TrainConfig` in, a :obj:`TrainResult` out), the algorithm
    protocol :obj:`Algorithm` and its registry :obj:`ALGORITHMS`, CoPE's
    :obj:`CoPEConfig`; the data axes (from :mod:`rlscale.theory`): :obj:`Axis`,
    :obj:`AXES`, :obj:`CONTEXT`, :obj:`SWEEP_AXES`, :obj:`axis`.
Statistics of runs
    :obj:`iqm`, :obj:`iqm_ci`, :obj:`iqm_difference_ci`, :obj:`iqm_ratio_ci` (an
    :obj:`Interval`), :obj:`wilson_interval`.
Subtasks as turns of an inference budget
    :obj:`subtask_starts`, :obj:`subtask_success`, :obj:`trained_policy_table`,
    :obj:`run_turn_episodes` (an :obj:`EpisodeOutcome`).
The reward-optimisation law in the trainer
    Worlds with a gold reward: :obj:`make_reward_world` (a :obj:`RewardWorld`),
    :obj:`sample_trajectories`; the KL-regularised optimum :obj:`soft_optimum` (a
    :obj:`SoftOptimum`) and :obj:`kl_policy_gradient` (a :obj:`PgResult`); learned
    reward models: :obj:`make_rm_setup` (an :obj:`RmSetup`), :obj:`comparison_pool`,
    :obj:`comparison_labels`, :obj:`bt_labels`, :obj:`fit_bradley_terry`,
    :obj:`train_proxy`, :obj:`gold_gains`; sparse Bradley-Terry:
    :obj:`fit_bradley_terry_sparse` (a :obj:`BtSparseFit`), :obj:`onehot_differences`;
    a proxy that generalises: :obj:`generalising_proxy_gain` (a
    :obj:`GeneralisingProxyGain`).
"""

from __future__ import annotations

from rlscale.theory._lazy import attach

# Public name -> private module defining it.  Each capability adds its own block.
_EXPORTS: dict[str, str] = {
    # -- Gaussian selection simulator (issue 3) --
    "SelectionSample": "_selection",
    "SoftBonFrontier": "_selection",
    "brute_force_selection": "_selection",
    "cross_fit_gain": "_selection",
    "sample_selection": "_selection",
    "soft_bon_frontier": "_selection",
    # -- environments, policies, algorithms, trainer (issue 5) --
    "BANDIT_ALGORITHMS": "_bandit",
    "BanditResult": "_bandit",
    "kl_bandit_optimum": "_bandit",
    "kl_bandit_pg": "_bandit",
    "GridFamily": "_gridworld",
    "GridWorld": "_gridworld",
    "VecGridEnv": "_vec_env",
    "FROZEN_LAKE_MAPS": "_frozen_lake",
    "frozen_lake": "_frozen_lake",
    "world_from_text": "_frozen_lake",
    "optimal_success": "_value_iteration",
    "policy_success": "_value_iteration",
    "SyntheticWorld": "_synthetic_envs",
    "VerifierReport": "_synthetic_envs",
    "synthetic_world": "_synthetic_envs",
    "verify_world": "_synthetic_envs",
    "ALGORITHMS": "_algorithms",
    # -- the trainer's shape (issue 16, room 4): algorithm protocol, axis vocabulary --
    "Algorithm": "_algorithms",
    "AXES": "_axes",
    "CONTEXT": "_axes",
    "SWEEP_AXES": "_axes",
    "Axis": "_axes",
    "axis": "_axes",
    "TrainConfig": "_train_config",
    "TrainResult": "_train",
    "train": "_train",
    "Interval": "_stats",
    "iqm": "_stats",
    "iqm_ci": "_stats",
    "iqm_difference_ci": "_stats",
    "iqm_ratio_ci": "_stats",
    # -- subtasks as turns of an inference budget (issue 14) --
    "EpisodeOutcome": "_subtasks",
    "run_turn_episodes": "_subtasks",
    "subtask_starts": "_subtasks",
    "subtask_success": "_subtasks",
    "trained_policy_table": "_subtasks",
    "wilson_interval": "_subtasks",
    # -- reward-optimisation law in the trainer (issue 12) --
    "RewardWorld": "_gold_reward",
    "make_reward_world": "_gold_reward",
    "sample_trajectories": "_gold_reward",
    "SoftOptimum": "_soft_vi",
    "soft_optimum": "_soft_vi",
    "PgResult": "_mdp_policy_gradient",
    "kl_policy_gradient": "_mdp_policy_gradient",
    "bt_labels": "_reward_model",
    "fit_bradley_terry": "_reward_model",
    "RmSetup": "_rm_experiment",
    "make_rm_setup": "_rm_experiment",
    "comparison_pool": "_rm_experiment",
    "comparison_labels": "_rm_experiment",
    "train_proxy": "_rm_experiment",
    "gold_gains": "_rm_experiment",
    "GeneralisingProxyGain": "_generalising_proxy",
    "generalising_proxy_gain": "_generalising_proxy",
    # -- sparse Bradley-Terry reward models (issue 28; the testbed's worlds stay in
    #    _chain_world, _chain_optimisers and _rm_testbed) --
    "BtSparseFit": "_reward_model",
    "fit_bradley_terry_sparse": "_reward_model",
    "onehot_differences": "_reward_model",
    # -- CoPE forecasting, the backbone policy, the memory family and context (issue 27) --
    "CoPEConfig": "_cope",
    "MemoryFamily": "_memory",
    "MemoryWorld": "_memory",
    "reference_success": "_memory",
    "uniform_success": "_memory",
}

# Public sub-modules reachable as attributes.
_SUBMODULES: tuple[str, ...] = ()

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS, _SUBMODULES)
