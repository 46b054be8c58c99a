"""Verification experiments: rlscale's claims checked against its own simulators.

Each experiment composes several packages (``simulate`` for the data, ``optimize``
and the law fits here for the analysis), which is why it lives in the top package
and not in a card folder.

The reward-optimisation law ``G(M, K) = Θ(sqrt(min{log M, K}))``
    :func:`verify_reward_law` in the Gaussian selection model
    (``rlscale verify reward-law``; module ``_gaussian_reward_law``) and
    :func:`verify_trainer_reward_law` in the RL trainer with learned reward
    models (``rlscale verify reward-law --trainer``; modules
    ``_trainer_reward_law``, ``_trainer_reward_files``, ``_trainer_reward_plan``);
    :func:`verify_testbed_reward_law` on the pre-registered reward-model testbed
    (``rlscale verify reward-law --testbed``; modules ``_rm_testbed_design`` (the
    design, fixed before the run), ``_rm_testbed_law``, ``_rm_testbed_analysis``,
    ``_rm_testbed_files``).
The law fits both use
    ``_law_forms`` (the fitted forms with analytic Jacobians), ``_law_solver``
    (a batched trust-region least-squares solver), ``_law_fits`` (multi-start fits
    and whether the min law is identified), ``_law_models`` (model comparison),
    ``_law_competitors`` (the law's competitors, batched), ``_law_holdout``
    (leave-one-M-out and leave-one-K-out scores) and ``_law_calibration`` (the
    identification rule calibrated by a wild cluster bootstrap over M).
Inference-budget plans grounded in a trained agent
    :func:`ground_inference` (``rlscale infer-plan --ground``; module
    ``_inference_grounding``).
"""

from __future__ import annotations

from rlscale.theory._lazy import attach

_EXPORTS = {
    "RewardLawReport": "_gaussian_reward_law",
    "reward_grid": "_gaussian_reward_law",
    "verify_reward_law": "_gaussian_reward_law",
    "write_reward_figures": "_gaussian_reward_law",
    "TrainerRewardLawReport": "_trainer_reward_law",
    "trainer_grid": "_trainer_reward_law",
    "verify_trainer_reward_law": "_trainer_reward_law",
    "TestbedLawReport": "_rm_testbed_law",
    "verify_testbed_reward_law": "_rm_testbed_law",
    "GroundingConfig": "_inference_grounding",
    "GroundingResult": "_inference_grounding",
    "ground_inference": "_inference_grounding",
}

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)
