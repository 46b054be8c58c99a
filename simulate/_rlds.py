"""RLDS-style subtask-decomposed advantage, on GRPO's clipped objective.

RLDS (arXiv 2609.27035) replaces GRPO's scalar trajectory advantage by
per-subtask shares ("Subtask-Decomposed Advantage Estimation") and credits
the steps that bear on each subtask.  Only its abstract is public; **this is
an approximation of that method, not its exact formula**:

* subtasks are a task's stages (key, door, goal; one subtask for a plain
  task), and subtask ``j`` of trajectory ``i`` is *completed* when the stage
  advances (the goal: when the task succeeds);
* the advantage of subtask ``j`` is group-relative among the trajectories of
  the group that *reached* stage ``j``:
  ``A_ij = (c_ij − mean c_·j)/(std c_·j + eps)`` (ddof 0, eps 1e-6; zero if
  fewer than two reached it);
* credit goes to the steps that work on subtask ``j`` — the steps taken in
  stage ``j``, the one that completes it included — each getting ``A_ij``;
* the rest is GRPO: per-trajectory length normalisation, clipped ratio,
  k3 KL, several epochs per batch.

On a task without subgoals it is exactly GRPO.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlscale.simulate._grpo import GRPO_EPS
from rlscale.simulate._rollout import Batch, clipped_updates

__all__ = ["RLDSConfig", "subtask_advantages", "update"]


@dataclass(frozen=True)
class RLDSConfig:
    clip: float = 0.2
    kl_coef: float = 0.001
    update_epochs: int = 2


def subtask_advantages(completed: np.ndarray, reached: np.ndarray,
                       eps: float = GRPO_EPS) -> np.ndarray:
    """Per-subtask group-relative advantages, arrays shaped ``(B, k, 3)``.

    Examples
    --------
    >>> c = np.array([[[1, 0, 0], [1, 1, 1], [0, 0, 0]]], bool)
    >>> r = np.array([[[1, 1, 0], [1, 1, 1], [1, 0, 0]]], bool)
    >>> subtask_advantages(c, r)[0].round(3).tolist()
    [[0.707, -1.0, 0.0], [0.707, 1.0, 0.0], [-1.414, 0.0, 0.0]]
    """
    n = reached.sum(axis=1, keepdims=True)
    c = np.where(reached, completed, 0.0)
    mean = c.sum(axis=1, keepdims=True) / np.maximum(n, 1)
    var = np.where(reached, (c - mean) ** 2, 0.0).sum(axis=1, keepdims=True) / np.maximum(n, 1)
    adv = (c - mean) / (np.sqrt(var) + eps)
    return np.where(reached & (n >= 2), adv, 0.0)


def update(policy, optimizer, phi, logp_old, batch: Batch, config: RLDSConfig,
           max_steps: int) -> dict[str, float]:
    B, k = batch.n_tasks, batch.k
    adv = subtask_advantages(batch.completed.reshape(B, k, 3),
                             batch.reached.reshape(B, k, 3)).reshape(B * k, 3)
    per_traj = 1.0 / (B * k * np.maximum(batch.length, 1))
    step_adv = adv[batch.traj, batch.stage]
    return clipped_updates(
        policy, optimizer, phi, logp_old, batch, step_adv * per_traj[batch.traj],
        per_traj[batch.traj], clip=config.clip, kl_coef=config.kl_coef,
        epochs=config.update_epochs)
