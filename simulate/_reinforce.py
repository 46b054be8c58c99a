"""REINFORCE with a baseline (Williams 1992), one on-policy step per batch.

Advantage ``A_i = r̃_i − mean_batch r̃`` with the baseline the mean return of
the *whole* batch (all tasks together, not per group: that is what tells it
apart from Dr. GRPO), and ``r̃_i = r_i − β·Σ_t log π/π_ref`` (KL folded into
the return).  Loss: ``(1/N)·Σ_i A_i·Σ_t log π(a_t|s_t)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlscale.simulate._rollout import Batch, aggregate, policy_step, score_grad, sequence_kl

__all__ = ["ReinforceConfig", "reinforce_advantages", "update"]


@dataclass(frozen=True)
class ReinforceConfig:
    kl_coef: float = 0.0


def reinforce_advantages(returns: np.ndarray, axis: int | None = None) -> np.ndarray:
    """``r_i − mean(r)`` over every trajectory of the batch (any shape).

    ``axis`` names the axis that holds one batch when the array stacks several
    independent problems (the bandit's ``(problems, batch)``); ``None``, the
    trainer's case, takes the mean over the whole array.

    Examples
    --------
    >>> reinforce_advantages(np.array([[1.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.75, -0.25], [-0.25, -0.25]]
    >>> reinforce_advantages(np.array([[1.0, 0.0], [0.0, 0.0]]), axis=1).tolist()
    [[0.5, -0.5], [0.0, 0.0]]
    """
    return returns - returns.mean(axis=axis, keepdims=axis is not None)


def update(policy, optimizer, phi, logp_old, batch: Batch, config: ReinforceConfig,
           max_steps: int) -> dict[str, float]:
    kl = sequence_kl(batch, logp_old)
    shaped = batch.reward - config.kl_coef * kl
    adv = reinforce_advantages(shaped)
    W = aggregate(batch, adv[batch.traj] / adv.size)
    policy_step(policy, optimizer, phi, score_grad(W, logp_old))
    return {"kl": float(kl.mean()), "clip_fraction": 0.0}
