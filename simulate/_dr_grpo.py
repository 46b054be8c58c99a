"""Dr. GRPO: GRPO "done right" (Liu et al. 2025, arXiv 2503.20783, §3.2).

Two biases of GRPO removed: the advantage is not divided by the group's std,

    A_i = r_i − mean r,

and the loss is not divided by each trajectory's length but by a constant
(here ``B·k·max_steps``, the batch's step budget), so long failures are not
favoured over short ones.  Same clipped surrogate and epochs as GRPO; the
paper trains without a KL term, hence ``kl_coef = 0`` by default.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlscale.simulate._rollout import Batch, clipped_updates

__all__ = ["DrGRPOConfig", "dr_grpo_advantages", "update"]


@dataclass(frozen=True)
class DrGRPOConfig:
    clip: float = 0.2
    kl_coef: float = 0.0
    update_epochs: int = 2


def dr_grpo_advantages(returns: np.ndarray) -> np.ndarray:
    """``r_i − mean r`` within each group of returns shaped ``(B, k)``.

    Examples
    --------
    >>> dr_grpo_advantages(np.array([[1.0, 0.0, 0.0]])).round(4).tolist()
    [[0.6667, -0.3333, -0.3333]]
    """
    return returns - returns.mean(axis=1, keepdims=True)


def update(policy, optimizer, phi, logp_old, batch: Batch, config: DrGRPOConfig,
           max_steps: int) -> dict[str, float]:
    adv = dr_grpo_advantages(batch.group(batch.reward)).ravel()
    norm = 1.0 / (adv.size * max_steps)
    return clipped_updates(
        policy, optimizer, phi, logp_old, batch, adv[batch.traj] * norm,
        np.full(batch.env_steps, norm), clip=config.clip, kl_coef=config.kl_coef,
        epochs=config.update_epochs)
