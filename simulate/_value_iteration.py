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

import weakref
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
    _, V = _programme(world, policy, horizon, event, compact=False)
    return V.reshape(world.n_tasks, N_STAGES, world.size**2)


def _programme(world: GridWorld, policy: Any, horizon: int | None, event: str,
               compact: bool) -> tuple[_Plan, np.ndarray]:
    """Checked input, then the backward induction: the plan and its flat values."""
    if not isinstance(world, GridWorld):
        raise TypeError(f"world must be a GridWorld; got world={world!r:.80}")
    if not isinstance(event, str) or event not in ("success", "leak"):
        raise ValueError(f"event must be 'success' or 'leak'; got event={event!r}")
    H = _horizon(world, horizon)
    if policy is not None:
        policy = _check_policy(policy, (world.n_tasks, N_STAGES, world.size**2, 4))
    plan = _plan(world, event, compact)
    return plan, _backward(plan, policy, H)


def _horizon(world: GridWorld, horizon: int | None) -> int:
    H = world.max_steps if horizon is None else check_positive_int(
        "horizon", horizon, minimum=0, maximum=MAX_STEPS)
    work = H * world.n_tasks * world.size**2
    if work > MAX_DP_WORK:
        raise ValueError(f"horizon·tasks·cells must be <= {MAX_DP_WORK:.0e} (about 10 s); got "
                         f"horizon={H} x {world.n_tasks} tasks x {world.size**2} cells = "
                         f"{work:.3g}")
    return H


def _check_policy(policy: Any, shape: tuple[int, ...]) -> np.ndarray:
    policy = check_real("policy", policy, low=0.0)
    if policy.shape != shape:
        raise ValueError(f"policy must have shape {shape}; got {policy.shape}")
    total = policy.sum(axis=-1)
    if np.any(np.abs(total - 1.0) > 1e-9):
        raise ValueError(f"rows of policy must sum to 1 (within 1e-9); got sums from "
                         f"{total.min()} to {total.max()}")
    return policy


class _Plan:
    """The gather tables of one world's programme, over ``blocks`` of (task, stage).

    ``compact``: only the stages a task can be in (from its start stage on: stages
    only move forward), which is all a start value needs; a task without subgoals
    is one block instead of three.  Every entry's arithmetic is that of the full
    programme, so the start values are the same bits.
    """

    def __init__(self, world: GridWorld, event: str, compact: bool) -> None:
        nxt, fixed, terminal, reach = _landing_parts(world, event)
        T, _, S2, _ = nxt.shape
        first = world.start_stage if compact else np.zeros(T, np.int64)
        keep = np.arange(N_STAGES)[None, :] >= first[:, None]  # (T, 3)
        block_of = np.full((T, N_STAGES), -1, np.int64)
        block_of[keep] = np.arange(int(keep.sum()))
        self.task, self.stage = np.nonzero(keep)  # the blocks' (task, stage), in order
        self.block_of, self.S2, self.n_blocks = block_of, S2, int(keep.sum())
        rows = block_of[self.task, self.stage]
        # Where each (block, cell, action) lands, and which value a landing (block, cell)
        # continues with (the next stage's block at its target).
        self.move_idx = (rows[:, None, None] * S2 + nxt[self.task, self.stage]).reshape(-1)
        after = np.where(reach[self.task, self.stage],
                         np.minimum(self.stage + 1, N_STAGES - 1)[:, None],
                         self.stage[:, None])  # (blocks, S²)
        self.cont_idx = (block_of[self.task[:, None], after] * S2
                         + np.arange(S2)[None, :]).reshape(-1)
        self.fixed = fixed[self.task, self.stage].reshape(-1)
        self.cont = (~terminal[self.task, self.stage]).reshape(-1)
        self.slip4 = world.slippery[world.task_env][self.task][:, None, None]


#: Plans of live worlds (worlds are immutable): the trainer evaluates every run on one.
_PLANS: weakref.WeakKeyDictionary[GridWorld, dict[tuple[str, bool], _Plan]] = \
    weakref.WeakKeyDictionary()


def _plan(world: GridWorld, event: str, compact: bool) -> _Plan:
    plans = _PLANS.setdefault(world, {})
    plan = plans.get((event, compact))
    if plan is None:
        plan = plans[(event, compact)] = _Plan(world, event, compact)
    return plan


def _backward(plan: _Plan, policy: np.ndarray | None, H: int) -> np.ndarray:
    """``H`` sweeps of backward induction over the plan's blocks (flat values)."""
    B, S2 = plan.n_blocks, plan.S2
    if policy is not None:
        policy = policy[plan.task, plan.stage]  # (blocks, S², 4)
    opposite = np.array([2, 3, 0, 1])
    V = np.zeros(B * S2)
    for _ in range(H):
        land = plan.fixed + np.where(plan.cont, V[plan.cont_idx], 0.0)
        d = land[plan.move_idx].reshape(B, S2, 4)
        # Slipping averages the intended and both perpendicular moves: all but the opposite.
        # (Reductions over a length-4 axis are slow in numpy: the four slices are added.)
        total = d[..., 0] + d[..., 1] + d[..., 2] + d[..., 3]
        Q = np.where(plan.slip4, (total[..., None] - d[..., opposite]) / 3.0, d)
        if policy is None:
            V = np.maximum(np.maximum(Q[..., 0], Q[..., 1]), np.maximum(Q[..., 2], Q[..., 3]))
        else:
            Qp = Q * policy
            V = Qp[..., 0] + Qp[..., 1] + Qp[..., 2] + Qp[..., 3]
        V = V.reshape(-1)
    return V


def _start_only(world: GridWorld, policy: Any, horizon: int | None, event: str) -> Any:
    """The start values of :func:`success_values` from the compact programme."""
    plan, V = _programme(world, policy, horizon, event, compact=True)
    rows = plan.block_of[np.arange(world.n_tasks), world.start_stage]
    out = V[rows * plan.S2 + world.start]
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
    return _start_only(world, None, horizon, event)


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
    return _start_only(world, policy, horizon, "success")
