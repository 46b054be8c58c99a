"""RLOO: REINFORCE with a leave-one-out baseline per group (Ahmadian et al. 2024,
arXiv 2402.14740, eq. 6), one on-policy step per batch.

With ``k`` trajectories of a task and KL-shaped returns
``r̃_i = r_i − β·Σ_t log π/π_ref`` (KL folded into the reward, as the paper
does), ``A_i = r̃_i − (1/(k−1))·Σ_{j≠i} r̃_j = k/(k−1)·(r̃_i − mean r̃)``.
Loss: ``(1/N)·Σ_i A_i·Σ_t log π(a_t|s_t)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlscale.simulate._rollout import Batch, aggregate, policy_step, score_grad, sequence_kl

__all__ = ["RLOOConfig", "rloo_advantages", "update"]


@dataclass(frozen=True)
class RLOOConfig:
    kl_coef: float = 0.0


def rloo_advantages(returns: np.ndarray) -> np.ndarray:
    """Leave-one-out advantages of returns shaped ``(B, k)``, ``k >= 2``.

    Examples
    --------
    >>> rloo_advantages(np.array([[1.0, 0.0, 0.0]])).tolist()
    [[1.0, -0.5, -0.5]]
    """
    k = returns.shape[1]
    if k < 2:
        raise ValueError(f"RLOO needs trajectories_per_task >= 2; got k={k}")
    others = (returns.sum(axis=1, keepdims=True) - returns) / (k - 1)
    return returns - others


def update(policy, optimizer, phi, logp_old, batch: Batch, config: RLOOConfig,
           max_steps: int) -> dict[str, float]:
    kl = sequence_kl(batch, logp_old)
    shaped = batch.group(batch.reward - config.kl_coef * kl)
    adv = rloo_advantages(shaped).ravel()
    W = aggregate(batch, adv[batch.traj] / adv.size)
    policy_step(policy, optimizer, phi, score_grad(W, logp_old))
    return {"kl": float(kl.mean()), "clip_fraction": 0.0}
