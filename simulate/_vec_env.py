"""Stepping many agents at once: the rollout hot path and a Gymnasium-like vector env.

:class:`Walkers` holds the per-copy state (cell, stage, door, target) of many
copies of a world's tasks and moves them all with a handful of whole-array
operations; :class:`VecGridEnv` wraps it with Gymnasium's auto-reset
semantics.  The dynamics are those of :mod:`rlscale.simulate._gridworld`
(slippery moves 1/3 intended, 1/3 each perpendicular; walls and the closed
door leave the agent in place; holes and leak cells end the episode).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.simulate._gridworld import HOLE, N_STAGES, GridWorld, _check_indices
from rlscale.simulate._random import as_generator

__all__ = ["StepResult", "VecGridEnv", "Walkers"]


class Walkers:
    """The per-copy state of many agents, stepped together: the hot path of every rollout.

    Rare events (a stage reached, the door bumped into) are handled on the
    few copies concerned, so a step costs a handful of whole-array operations.
    """

    def __init__(self, world: GridWorld, task_ids: Any) -> None:
        task = np.asarray(task_ids, dtype=np.int64)
        S2 = world.size**2
        env = world.task_env[task].astype(np.int64)
        self.world = world
        self._moves = world.moves.reshape(-1)
        self._hole = (world.tiles.reshape(world.n_environments, S2) == HOLE).reshape(-1)
        self.task = task
        self.base = env * (S2 * 4)
        self.hbase = env * S2
        self.slip = world.slippery[env].astype(np.int64)
        self.any_slip = bool(self.slip.any())
        self.leak = world.leak[env].astype(np.int64)
        self.any_leak = bool((self.leak >= 0).any())
        self.targets = world.targets[task].astype(np.int64)
        self.start = world.start[task].astype(np.int64)
        self.stage0 = world.start_stage[task].astype(np.int64)
        self.reset()

    def reset(self, idx: np.ndarray | None = None) -> None:
        """Put all copies (or those in ``idx``) back at their start."""
        if idx is None:
            self.cell = self.start.copy()
            self.stage = self.stage0.copy()
            self.door = np.where(self.stage == 0, self.targets[:, 1], -1)
            self.target = self.targets[np.arange(self.cell.size), self.stage]
            return
        self.cell[idx] = self.start[idx]
        self.stage[idx] = self.stage0[idx]
        self.door[idx] = np.where(self.stage0[idx] == 0, self.targets[idx, 1], -1)
        self.target[idx] = self.targets[idx, self.stage0[idx]]

    def keep(self, mask: np.ndarray) -> None:
        """Drop the copies where ``mask`` is False."""
        for name in ("task", "base", "hbase", "slip", "leak", "targets", "start", "stage0",
                     "cell", "stage", "door", "target"):
            setattr(self, name, getattr(self, name)[mask])

    def step(self, action: np.ndarray, rng: np.random.Generator):
        """Move every copy; return ``(success, terminated, advanced_idx, leaked)``.

        ``advanced_idx`` lists the copies whose stage moved on (the stage
        before the move is ``stage − 1`` for them).
        """
        if self.any_slip:
            # Slippery copies turn by −1, 0 or +1 quarter with probability 1/3 each.
            turn = rng.integers(0, 3, size=action.shape[0], dtype=np.int8) - 1
            action = (action + turn * self.slip) & 3
        nxt = self._moves[self.base + self.cell * 4 + action]
        # Before the key the door is shut: bumping into it leaves the agent in place.
        bump = np.flatnonzero(nxt == self.door)
        if bump.size:
            nxt[bump] = self.cell[bump]
        hit = np.flatnonzero(nxt == self.target)
        success = np.zeros(nxt.shape[0], bool)
        advanced = hit
        if hit.size:
            last = self.stage[hit] == N_STAGES - 1
            success[hit[last]] = True
            advanced = hit[~last]
            if advanced.size:
                st = self.stage[advanced] + 1
                self.stage[advanced] = st
                self.target[advanced] = self.targets[advanced, st]
                self.door[advanced] = -1
        term = self._hole[self.hbase + nxt] | success
        leaked = None
        if self.any_leak:
            leaked = nxt == self.leak
            term |= leaked
        self.cell = nxt
        return success, term, advanced, leaked


class VecGridEnv:
    """Many copies of a world's tasks stepped at once (Gymnasium-like, auto-reset).

    Parameters
    ----------
    world : GridWorld
    task_ids : array_like of int
        Which task each parallel copy runs (repeats allowed).
    seed : int or Generator
        Randomness of the slippery moves.

    Examples
    --------
    >>> from rlscale.simulate import frozen_lake
    >>> env = VecGridEnv(frozen_lake("4x4"), [0] * 1000, seed=0)
    >>> cell, stage = env.reset()
    >>> total = 0
    >>> for _ in range(200):
    ...     out = env.step(env.rng.integers(0, 4, 1000))
    ...     total += int(out.reward.sum())
    >>> 0 < total < 1000
    True
    """

    def __init__(self, world: GridWorld, task_ids: Any, seed: Any = None) -> None:
        if not isinstance(world, GridWorld):
            raise TypeError(f"world must be a GridWorld; got world={world!r:.80}")
        task_ids = np.asarray(task_ids)
        if task_ids.ndim != 1 or task_ids.size == 0:
            raise ValueError(f"task_ids must be a non-empty 1-D array of task indices; got shape "
                             f"{task_ids.shape}")
        _check_indices("task_ids", task_ids, world.n_tasks)
        self.world = world
        try:
            self.rng = as_generator(seed)
        except (TypeError, ValueError) as exc:
            raise type(exc)(str(exc).replace("rng", "seed")) from None
        self._w = Walkers(world, task_ids)
        self.t = np.zeros(self._w.cell.size, np.int64)

    @property
    def cell(self) -> np.ndarray:
        return self._w.cell

    @property
    def stage(self) -> np.ndarray:
        return self._w.stage

    def reset(self) -> tuple[np.ndarray, np.ndarray]:
        """Put every copy at its start; return ``(cell, stage)``."""
        self._w.reset()
        self.t[:] = 0
        return self._w.cell, self._w.stage

    def step(self, actions: Any) -> StepResult:
        """Apply one action per copy; finished copies restart automatically.

        ``cell`` and ``stage`` of the result are the observations after the
        automatic reset; ``reward`` is 1 on success (or on a leak cell).
        """
        actions = np.asarray(actions)
        if actions.shape != self.t.shape:
            raise ValueError(f"actions must have shape {self.t.shape}; got {actions.shape}")
        _check_indices("actions", actions, 4)
        success, term, _, leaked = self._w.step(actions.astype(np.int64, copy=False), self.rng)
        reward = success | leaked if leaked is not None else success
        self.t += 1
        trunc = self.t >= self.world.max_steps
        trunc &= ~term
        done = np.flatnonzero(term | trunc)
        if done.size:
            self._w.reset(done)
            self.t[done] = 0
        return StepResult(self._w.cell.copy(), self._w.stage.copy(), reward.astype(np.float64),
                          success, term, trunc)


@dataclass(frozen=True)
class StepResult:
    """What :meth:`VecGridEnv.step` returns, one entry per copy."""

    cell: np.ndarray
    stage: np.ndarray
    reward: np.ndarray
    success: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
