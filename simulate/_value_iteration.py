"""Exact finite-horizon success probabilities by dynamic programming.

The state of a task is (stage, cell) plus the number of actions left.  With
``h`` actions left, the value of a policy (or the optimal value) is

    V_h(s) = Σ_a π(a|s) · Q_h(s, a),   Q_h(s, a) = Σ_{s'} P(s'|s, a) · L_{h−1}(s'),

where landing in ``s'`` is worth 1 if it completes the task (goal in the last
stage), 0 if it ends the episode otherwise (hole, leak cell), and
``V_{h−1}(s')`` else; ``V_0 = 0`` (truncation).  Optimal control replaces the
average over ``π`` by ``max_a`` (Bellman 1957; Puterman 1994, §4.5, backward
induction is exact for finite horizons).  All tasks, stages and cells are
processed at once; a sweep costs ``O(T·3·S²·4·3)`` and ``max_steps`` sweeps
give the exact answer.  The work ``horizon·T·S²`` is limited to
:data:`MAX_DP_WORK` (5e7, about ten seconds).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlscale.simulate._gridworld import HOLE, MAX_STEPS, N_STAGES, GridWorld
from rlscale.theory._validation import check_positive_int, check_real

__all__ = ["MAX_DP_WORK", "optimal_success", "policy_success", "success_values"]

#: Upper limit on ``horizon · tasks · cells`` of one dynamic programme (5e7: about
#: ten seconds on one core; 3.3e7 took 7.6 s measured).
MAX_DP_WORK = 5 * 10**7


def _landing_parts(world: GridWorld, event: str):
    """Per task: next-cell table per stage and the fixed landing values."""
    T, S2 = world.n_tasks, world.size**2
    moves = world.moves[world.task_env]  # (T, S², 4)
    cells = np.arange(S2)
    door = world.targets[:, 1]
    # (T, stage, S², 4): before the key the door bounces the agent back.
    nxt = np.repeat(moves[:, None], N_STAGES, axis=1)
    shut = (nxt[:, 0] == door[:, None, None]) & (door[:, None, None] >= 0)
    nxt[:, 0] = np.where(shut, cells[None, :, None], nxt[:, 0])
    hole = world.tiles.reshape(world.n_environments, S2)[world.task_env] == HOLE
    leak = world.leak[world.task_env]
    is_leak = (cells[None, :] == leak[:, None]) & (leak[:, None] >= 0)
    tgt = world.targets  # (T, 3)
    reach = cells[None, None, :] == tgt[:, :, None]  # (T, stage, S²)
    goal_now = reach[:, N_STAGES - 1]
    # Landing value that does not depend on V: terminal outcomes.
    fixed = np.zeros((T, N_STAGES, S2))
    terminal = np.zeros((T, N_STAGES, S2), bool)
    terminal |= hole[:, None, :]
    terminal |= is_leak[:, None, :]
    if event == "leak":
        fixed[:, :, :] = np.where(is_leak[:, None, :], 1.0, 0.0)
    if event == "success":
        fixed[:, N_STAGES - 1] = np.where(goal_now, 1.0, fixed[:, N_STAGES - 1])
    # Completing the task is terminal for either event.
    terminal[:, N_STAGES - 1] |= goal_now
    return nxt, fixed, terminal, reach


def success_values(world: GridWorld, policy: Any = None, *, horizon: int | None = None,
                   event: str = "success") -> np.ndarray:
    """Value tables ``V[t, stage, cell]`` with ``horizon`` actions left.

    Parameters
    ----------
    world : GridWorld
    policy : array_like, shape (T, 3, S², 4), optional
        Action probabilities per task, stage and cell; ``None`` for the
        optimal (maximising) policy.
    horizon : int, optional
        Actions available; default ``world.max_steps``.
    event : {"success", "leak"}
        What pays 1: completing the task, or stepping on a leak cell (the
        verifier's check that reward can be had without doing the task).
    """
    if not isinstance(world, GridWorld):
        raise TypeError(f"world must be a GridWorld; got world={world!r:.80}")
    if not isinstance(event, str) or event not in ("success", "leak"):
        raise ValueError(f"event must be 'success' or 'leak'; got event={event!r}")
    H = world.max_steps if horizon is None else check_positive_int(
        "horizon", horizon, minimum=0, maximum=MAX_STEPS)
    work = H * world.n_tasks * world.size**2
    if work > MAX_DP_WORK:
        raise ValueError(f"horizon·tasks·cells must be <= {MAX_DP_WORK:.0e} (about 10 s); got "
                         f"horizon={H} x {world.n_tasks} tasks x {world.size**2} cells = "
                         f"{work:.3g}")
    nxt, fixed, terminal, reach = _landing_parts(world, event)
    T, _, S2, _ = nxt.shape
    cont = ~terminal
    slip = world.slippery[world.task_env]
    if policy is not None:
        policy = check_real("policy", policy, low=0.0)
        if policy.shape != (T, N_STAGES, S2, 4):
            raise ValueError(f"policy must have shape {(T, N_STAGES, S2, 4)}; got {policy.shape}")
        total = policy.sum(axis=-1)
        if np.any(np.abs(total - 1.0) > 1e-9):
            raise ValueError(f"rows of policy must sum to 1 (within 1e-9); got sums from "
                             f"{total.min()} to {total.max()}")
    # Flat gather indices, built once: where each (task, stage, cell, action) lands, and
    # which value a landing (task, stage, cell) continues with (the next stage at its target).
    block = (np.arange(T)[:, None] * N_STAGES + np.arange(N_STAGES)[None, :]) * S2  # (T, 3)
    move_idx = (block[:, :, None, None] + nxt).reshape(-1)
    adv_stage = np.minimum(np.arange(N_STAGES) + 1, N_STAGES - 1)[None, :, None]
    stage_after = np.where(reach, adv_stage, np.arange(N_STAGES)[None, :, None])
    cont_idx = ((np.arange(T)[:, None, None] * N_STAGES + stage_after) * S2
                + np.arange(S2)[None, None, :]).reshape(-1)
    fixed_flat = fixed.reshape(-1)
    cont_flat = cont.reshape(-1)
    slip4 = slip[:, None, None, None]
    opposite = np.array([2, 3, 0, 1])
    V = np.zeros(T * N_STAGES * S2)
    for _ in range(H):
        land = fixed_flat + np.where(cont_flat, V[cont_idx], 0.0)
        d = land[move_idx].reshape(T, N_STAGES, S2, 4)
        # Slipping averages the intended and both perpendicular moves: all but the opposite.
        # (Reductions over a length-4 axis are slow in numpy: the four slices are added.)
        total = d[..., 0] + d[..., 1] + d[..., 2] + d[..., 3]
        Q = np.where(slip4, (total[..., None] - d[..., opposite]) / 3.0, d)
        if policy is None:
            V = np.maximum(np.maximum(Q[..., 0], Q[..., 1]), np.maximum(Q[..., 2], Q[..., 3]))
        else:
            Qp = Q * policy
            V = Qp[..., 0] + Qp[..., 1] + Qp[..., 2] + Qp[..., 3]
        V = V.reshape(-1)
    V = V.reshape(T, N_STAGES, S2)
    return V


def _start_values(world: GridWorld, V: np.ndarray) -> Any:
    out = V[np.arange(world.n_tasks), world.start_stage, world.start]
    return float(out[0]) if world.n_tasks == 1 else out


def optimal_success(world: GridWorld, *, horizon: int | None = None, event: str = "success"):
    """Highest probability of completing each task within its time limit.

    Returns a float for a single-task world, else an array of shape (T,).

    Examples
    --------
    >>> from rlscale.simulate import frozen_lake
    >>> round(optimal_success(frozen_lake("4x4")), 4)
    0.7442
    >>> round(optimal_success(frozen_lake("8x8")), 4)
    0.9132
    """
    return _start_values(world, success_values(world, horizon=horizon, event=event))


def policy_success(world: GridWorld, policy: Any, *, horizon: int | None = None):
    """Exact success probability of a stochastic ``policy`` (shape (T, 3, S², 4)).

    Examples
    --------
    >>> import numpy as np
    >>> from rlscale.simulate import frozen_lake
    >>> uniform = np.full((1, 3, 16, 4), 0.25)
    >>> round(policy_success(frozen_lake("4x4"), uniform), 4)
    0.0139
    """
    return _start_values(world, success_values(world, policy, horizon=horizon))
