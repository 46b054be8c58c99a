"""Batched rollouts and the policy-gradient pieces every algorithm shares.

A *batch* is ``B`` tasks × ``k`` trajectories (a group of ``k`` per task).
Every visited state is recorded as a row of the batch's state table
(``row = (b·3 + stage)·S² + cell``) together with the action taken, so an
algorithm's loss reduces to sums over (row, action) pairs: the gradient costs
the same however many trajectories were collected.

Shared estimator pieces (all derivations in logit space, ``π = softmax(z)``):

* ``∂ log π_a / ∂z = e_a − π``;
* clipped surrogate (Schulman et al. 2017, arXiv 1707.06347, eq. 7) with
  per-step weights ``w`` aggregated into ``W⁺`` (positive) and ``W⁻``
  (negative) per (row, action): ``J = Σ W⁺·min(ρ, 1+ε) + W⁻·max(ρ, 1−ε)``
  where ``ρ = π/π_old``, so ``∂J/∂ρ = W⁺·[ρ < 1+ε] + W⁻·[ρ > 1−ε]`` and
  ``∂ρ_a/∂z = ρ_a (e_a − π)``;
* k3 KL estimator to the reference (Schulman 2020, "Approximating KL
  divergence"; GRPO, Shao et al. 2024, arXiv 2402.03300, eq. 4)
  ``k3 = π_ref/π − 1 − log(π_ref/π)``, with ``∂k3/∂z = (1 − π_ref/π_a)(e_a − π)``.
  The reference is the initial (uniform) policy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlscale.simulate._gridworld import N_STAGES, GridWorld
from rlscale.simulate._policies import log_probs, sum4
from rlscale.simulate._vec_env import Walkers

__all__ = ["Batch", "aggregate", "clipped_grad", "group_stats", "kl_k3_grad", "rollout",
           "score_grad"]

LOG_REF = np.log(0.25)  # the reference policy is uniform over the 4 actions


@dataclass
class Batch:
    """Transitions of ``B`` tasks × ``k`` trajectories.

    Per recorded step (``M`` of them): ``row``, ``action``, ``traj``, ``stage``.
    Per trajectory (``N = B·k``, trajectory ``i`` belongs to task ``i // k``):
    ``reward`` (1 on success or on a leak cell), ``success`` (task done),
    ``length`` (actions taken), ``reached[i, j]`` (had a step in stage ``j``),
    ``completed[i, j]`` (completed subtask ``j``).
    """

    row: np.ndarray
    action: np.ndarray
    traj: np.ndarray
    stage: np.ndarray
    reward: np.ndarray
    success: np.ndarray
    length: np.ndarray
    reached: np.ndarray
    completed: np.ndarray
    n_tasks: int
    k: int
    n_rows: int
    S2: int

    @property
    def env_steps(self) -> int:
        return int(self.row.size)

    def group(self, x: np.ndarray) -> np.ndarray:
        """View a per-trajectory array as ``(B, k)``."""
        return x.reshape(self.n_tasks, self.k)


def state_rows(world: GridWorld, task_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which (task, stage) blocks of ``S²`` rows a batch needs, and where they start.

    A task without subgoals only ever is in stage 2, so only its last block
    is tabulated.  Returns the boolean mask ``(B, 3)`` of blocks kept (in
    row order: task-major, stage ascending) and ``row_base`` ``(B,)`` such
    that ``row = row_base[b] + stage·S² + cell``.
    """
    S2 = world.size**2
    first = world.start_stage[task_ids]
    keep = np.arange(N_STAGES)[None, :] >= first[:, None]
    offset = np.concatenate([[0], np.cumsum(N_STAGES - first)[:-1]]) * S2
    return keep, offset - first * S2


def rollout(world: GridWorld, task_ids: np.ndarray, k: int, logp: np.ndarray,
            rng: np.random.Generator, row_base: np.ndarray | None = None) -> Batch:
    """Run ``k`` trajectories of each task with the tabulated policy ``logp``.

    ``logp`` has one row per state: by default ``len(task_ids)·3·S²`` rows
    ordered as the module describes; with ``row_base`` (from
    :func:`state_rows`) row ``row_base[b] + stage·S² + cell``.  Finished
    trajectories are dropped from the working set, so the cost is
    proportional to the environment steps taken.
    """
    B = task_ids.size
    S2 = world.size**2
    N = B * k
    # Inverse-CDF sampling of actions: a = #{j < 3 : u > P(a <= j)}.
    cum = np.cumsum(np.exp(logp[:, :3]), axis=1)
    c0, c1, c2 = (np.ascontiguousarray(cum[:, j]) for j in range(3))
    walkers = Walkers(world, np.repeat(task_ids, k))
    tid = np.arange(N)
    if row_base is None:
        row_base = np.arange(B, dtype=np.int64) * (N_STAGES * S2)
    rbase = np.repeat(np.asarray(row_base, dtype=np.int64), k)

    rows_l, acts_l, tids_l, stages_l = [], [], [], []
    success = np.zeros(N, bool)
    leak_hit = np.zeros(N, bool)  # ended on a leak cell (rewarded as a success)
    completed = np.zeros((N, N_STAGES), bool)  # its last column is success, set at the end
    for _ in range(world.max_steps):
        row = walkers.stage * S2
        row += rbase
        row += walkers.cell
        u = rng.random(tid.size)
        # take: the same gathers as c0[row], without fancy indexing's overhead per call
        action = (u > c0.take(row)).astype(np.int64)
        action += u > c1.take(row)
        action += u > c2.take(row)
        rows_l.append(row)
        acts_l.append(action)
        tids_l.append(tid)
        # The stage changes in place only where tasks have subgoals (a kept copy is new).
        stages_l.append(walkers.stage if walkers.static_stage else walkers.stage.copy())
        succ, term, advanced, leaked = walkers.step(action, rng)
        if advanced.size:
            completed[tid[advanced], walkers.stage[advanced] - 1] = True
        if term.any():
            success[tid[succ]] = True
            if leaked is not None:
                leak_hit[tid[leaked]] = True
            keep = ~term
            walkers.keep(keep)
            tid, rbase = tid[keep], rbase[keep]
            if tid.size == 0:
                break
    row = np.concatenate(rows_l)
    traj = np.concatenate(tids_l)
    reached = np.zeros((N, N_STAGES), bool)
    stage = np.concatenate(stages_l)
    reached[traj, stage] = True
    completed[:, N_STAGES - 1] = success
    reward = (success | leak_hit).astype(float)  # 1 on success or on a leak cell, else 0
    return Batch(row=row, action=np.concatenate(acts_l), traj=traj, stage=stage, reward=reward,
                 success=success, length=np.bincount(traj, minlength=N), reached=reached,
                 completed=completed, n_tasks=B, k=k, n_rows=logp.shape[0], S2=S2)


def aggregate(batch: Batch, weights: np.ndarray) -> np.ndarray:
    """``Σ`` of per-step ``weights`` per (row, action): shape ``(n_rows, 4)``."""
    idx = batch.row * 4 + batch.action
    return np.bincount(idx, weights=weights, minlength=batch.n_rows * 4).reshape(-1, 4)


def score_grad(W: np.ndarray, logp: np.ndarray) -> np.ndarray:
    """``∂/∂z`` of ``Σ W[row, a]·log π(a|row)``: ``W − (Σ_a W)·π``."""
    return W - sum4(W) * np.exp(logp)


def clipped_grad(Wpos: np.ndarray, Wneg: np.ndarray, logp: np.ndarray, logp_old: np.ndarray,
                 clip: float) -> np.ndarray:
    """``∂/∂z`` of the clipped surrogate ``Σ W⁺ min(ρ, 1+ε) + W⁻ max(ρ, 1−ε)``."""
    rho = np.exp(logp - logp_old)
    dj = Wpos * (rho < 1.0 + clip) + Wneg * (rho > 1.0 - clip)
    g = dj * rho
    return g - sum4(g) * np.exp(logp)


def kl_k3_grad(C: np.ndarray, logp: np.ndarray) -> tuple[np.ndarray, float]:
    """Gradient and value of ``Σ C[row, a]·k3(row, a)`` (k3 to the uniform reference)."""
    d = LOG_REF - logp
    value = float(np.sum(C * (np.exp(d) - 1.0 - d)))
    g = C * (1.0 - np.exp(d))
    return g - sum4(g) * np.exp(logp), value


def group_stats(batch: Batch) -> dict[str, float]:
    """Mean success and the fraction of groups whose rewards are all equal."""
    r = batch.group(batch.reward)
    return {
        "success": float(batch.success.mean()),
        "zero_advantage_fraction": float(np.mean(r.max(axis=1) == r.min(axis=1))),
    }


def policy_step(policy, optimizer, phi: np.ndarray, dlogits: np.ndarray) -> None:
    """Back-propagate ``∂J/∂logits`` of the state table and take one Adam ascent step."""
    _, cache = policy.logits(phi)
    optimizer.ascend(policy.params, policy.backward(cache, dlogits))


def clipped_updates(policy, optimizer, phi: np.ndarray, logp_old: np.ndarray, batch: Batch,
                    step_weights: np.ndarray, kl_weights: np.ndarray, *, clip: float,
                    kl_coef: float, epochs: int) -> dict[str, float]:
    """Several epochs of the clipped surrogate minus ``kl_coef``·k3 on one batch.

    ``step_weights`` carry each step's advantage and normalisation,
    ``kl_weights`` each step's share of the KL term (GRPO: ``1/(B·k·|o_i|)``).
    """
    Wpos = aggregate(batch, np.maximum(step_weights, 0.0))
    Wneg = aggregate(batch, np.minimum(step_weights, 0.0))
    C = aggregate(batch, kl_weights) if kl_coef > 0 else None
    kl = 0.0
    clipped = 0.0
    visited = (Wpos != 0) | (Wneg != 0)
    for _ in range(epochs):
        logp, cache = log_probs(policy, phi)
        g = clipped_grad(Wpos, Wneg, logp, logp_old, clip)
        if C is not None:
            gk, kl = kl_k3_grad(C, logp)
            g = g - kl_coef * gk
        rho = np.exp(logp - logp_old)
        clipped = float(np.mean(np.abs(rho[visited] - 1.0) > clip)) if visited.any() else 0.0
        optimizer.ascend(policy.params, policy.backward(cache, g))
    return {"kl": kl, "clip_fraction": clipped}


def sequence_kl(batch: Batch, logp: np.ndarray) -> np.ndarray:
    """Per-trajectory ``Σ_t log π(a_t|s_t)/π_ref(a_t|s_t)`` (the k1 estimate, on-policy)."""
    per_step = logp[batch.row, batch.action] - LOG_REF
    return np.bincount(batch.traj, weights=per_step, minlength=batch.reward.size)
