"""GRPO: group-relative policy optimisation (Shao et al. 2024, arXiv 2402.03300, §4.1).

For a task's group of ``k`` trajectories with returns ``r``, every step of
trajectory ``i`` gets the advantage

    A_i = (r_i − mean r) / (std r + eps),   std with ddof = 0, eps = 1e-6,

so a group whose returns are all equal contributes nothing.  The objective
per batch of ``B`` groups, maximised for ``update_epochs`` Adam steps on the
same batch (the old policy is the one that collected it):

    (1/B)·Σ_groups (1/k)·Σ_i (1/|o_i|)·Σ_t [ min(ρ A_i, clip(ρ, 1±ε) A_i) − β·k3 ],

``ρ = π(a_t|s_t)/π_old(a_t|s_t)``, ``k3`` the KL estimator to the reference
(uniform, the initial policy) and ``|o_i|`` the trajectory's length
(GRPO's per-response length normalisation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlscale.simulate._rollout import Batch, clipped_updates

__all__ = ["GRPO_EPS", "GRPOConfig", "grpo_advantages", "update"]

GRPO_EPS = 1e-6


@dataclass(frozen=True)
class GRPOConfig:
    clip: float = 0.2
    kl_coef: float = 0.001
    update_epochs: int = 2


def grpo_advantages(returns: np.ndarray, eps: float = GRPO_EPS) -> np.ndarray:
    """Group-normalised advantages of returns shaped ``(B, k)`` (population std).

    Examples
    --------
    >>> grpo_advantages(np.array([[1.0, 0.0], [1.0, 1.0]])).round(4).tolist()
    [[1.0, -1.0], [0.0, 0.0]]
    """
    mean = returns.mean(axis=1, keepdims=True)
    return (returns - mean) / (returns.std(axis=1, keepdims=True) + eps)


def update(policy, optimizer, phi, logp_old, batch: Batch, config: GRPOConfig,
           max_steps: int) -> dict[str, float]:
    adv = grpo_advantages(batch.group(batch.reward)).ravel()
    per_traj = 1.0 / (adv.size * np.maximum(batch.length, 1))
    return clipped_updates(
        policy, optimizer, phi, logp_old, batch, (adv * per_traj)[batch.traj],
        per_traj[batch.traj], clip=config.clip, kl_coef=config.kl_coef,
        epochs=config.update_epochs)
