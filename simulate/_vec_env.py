"""Stepping many agents at once: the rollout hot path and a Gymnasium-like vector env.

:class:`Walkers` holds the per-copy state (cell, stage, door, target) of many
copies of a world's tasks and moves them all with a handful of whole-array
operations; :class:`VecGridEnv` wraps it with Gymnasium's auto-reset
semantics.  The dynamics are those of :mod:`rlscale.simulate._gridworld`
(slippery moves 1/3 intended, 1/3 each perpendicular; walls and the closed
door leave the agent in place; holes and leak cells end the episode).
"""

from __future__ import annotations

import weakref
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
    The slip is folded into the move table: ``moves3[env, cell, action, turn]``
    is where the agent lands when the slip turns its action by ``turn − 1``
    quarters (every turn gives the intended move in a non-slippery
    environment), so a step is one gather ``moves3[cell·12 + action·3 + turn]``
    after drawing the turns -- the same draws, in the same order, as applying
    the turn to the action first.
    """

    def __init__(self, world: GridWorld, task_ids: Any) -> None:
        task = np.asarray(task_ids, dtype=np.int64)
        S2 = world.size**2
        env = world.task_env[task].astype(np.int64)
        self.world = world
        self._moves3 = _slip_moves(world)
        self._hole = (world.tiles.reshape(world.n_environments, S2) == HOLE).reshape(-1)
        # One environment (every copy in it): no per-copy offsets to add.
        self.one_env = bool(world.n_environments == 1)
        self.base = env * (S2 * 12)
        self.hbase = env * S2
        self.any_slip = bool(world.slippery[env].any())
        self.leak = world.leak[env].astype(np.int64)
        self.any_leak = bool((self.leak >= 0).any())
        self.task = task
        self._tables = _task_tables(world)
        self._reset_arrays()
        # No copy starts before its key: no door ever shuts (the bump test is skipped).
        self.any_door = bool((self.door0 >= 0).any())
        self._facts()
        self.cell, self.start0_size = None, task.size
        self.reset()

    def _reset_arrays(self) -> None:
        """What a reset puts back, per copy, from the per-task tables (the door is shut
        until the key is held)."""
        _, start, stage0, door0, target0 = self._tables
        self.start, self.stage0 = start.take(self.task), stage0.take(self.task)
        self.door0, self.target0 = door0.take(self.task), target0.take(self.task)
        self._stale = False

    def _facts(self) -> None:
        """What holds for every copy and saves a step work: every task without subgoals
        (the stage and target never change) and one start for all (a reset writes a
        scalar)."""
        self.static_stage = bool(np.all(self.stage0 == N_STAGES - 1))
        self.one_start = int(self.start[0]) if self.start.size and bool(
            np.all(self.start == self.start[0])) else None
        # keep() carries only what a step reads; the task, where a step or a reset needs it
        # (a subgoal's target, a start that differs): the arrays only a reset reads are
        # built again from it when a reset follows a keep (a rollout never resets).
        self._needs_task = not (self.static_stage and self.one_start is not None)
        names = ["cell", "stage", "target"]
        names += ["task"] if self._needs_task else []
        names += ["door"] if self.any_door else []
        names += [] if self.one_env else ["base", "hbase"]
        names += ["leak"] if self.any_leak else []
        self._per_copy = tuple(names)

    def reset(self, idx: np.ndarray | None = None) -> None:
        """Put all copies (or those in ``idx``) back at their start."""
        if self._stale and self._needs_task:
            self._reset_arrays()
        if idx is None and self.cell is not None and self.cell.size != self.start0_size:
            idx = np.arange(self.cell.size)  # after keep(): the copies kept restart
        if idx is None:
            self.cell = self.start.copy()
            self.stage = self.stage0.copy()
            self.door = self.door0.copy()
            self.target = self.target0.copy()
            return
        self.cell[idx] = self.start[idx] if self.one_start is None else self.one_start
        if self.static_stage:
            return  # stage, door and target are what they were at the start
        self.stage[idx] = self.stage0[idx]
        if self.any_door:
            self.door[idx] = self.door0[idx]
        self.target[idx] = self.target0[idx]

    def keep(self, mask: np.ndarray) -> None:
        """Drop the copies where ``mask`` is False (only the arrays a step reads, and the
        task where a reset needs it: a rollout drops finished copies after most steps).
        What held for every copy still holds for the ones kept, so the facts of
        :meth:`_facts` stand.

        The mask becomes indices once and every array is gathered by ``take``: a boolean
        mask is counted again for each array (on the 2-D per-copy targets this class used
        to carry, a masked copy was about 10x a ``take``); the same rows, in the same order."""
        idx = np.flatnonzero(mask)
        for name in self._per_copy:
            setattr(self, name, getattr(self, name).take(idx))
        self._stale = True

    def step(self, action: np.ndarray, rng: np.random.Generator):
        """Move every copy; return ``(success, terminated, advanced_idx, leaked)``.

        ``advanced_idx`` lists the copies whose stage moved on (the stage
        before the move is ``stage − 1`` for them).  ``action`` holds int64
        actions in ``[0, 4)``.
        """
        idx = action * 3
        if self.any_slip:
            # Slippery copies turn by −1, 0 or +1 quarter with probability 1/3 each.
            idx += rng.integers(0, 3, size=action.shape[0], dtype=np.int8)
        else:
            idx += 1
        idx += self.cell * 12
        if not self.one_env:
            idx += self.base
        nxt = self._moves3.take(idx)  # take: fancy indexing by int32 is 3-4x slower
        # Before the key the door is shut: bumping into it leaves the agent in place.
        if self.any_door:
            bump = (nxt == self.door).nonzero()[0]  # 1-D: nonzero, not the ravel of flatnonzero
            if bump.size:
                nxt[bump] = self.cell[bump]
        hit = nxt == self.target
        if self.static_stage:  # every target is the last one: a hit is a success
            success, advanced = hit, _NO_COPIES
        else:
            # Whole-array tests instead of gathers on the copies hit: fewer numpy calls,
            # which is what a step of a few hundred copies costs.
            success = hit & (self.stage == N_STAGES - 1)
            advanced = (hit ^ success).nonzero()[0]  # hit, not the last stage
            if advanced.size:
                st = self.stage[advanced] + 1
                self.stage[advanced] = st
                self.target[advanced] = self._tables[0][self.task[advanced], st]
                self.door[advanced] = -1
        term = self._hole.take(nxt if self.one_env else self.hbase + nxt)
        term |= success
        leaked = None
        if self.any_leak:
            leaked = nxt == self.leak
            term |= leaked
        self.cell = nxt
        return success, term, advanced, leaked


_NO_COPIES = np.empty(0, np.int64)
_NO_COPIES.flags.writeable = False

#: ``_task_tables`` of each live world (worlds are immutable; the tables are built once).
_TASK_TABLES: weakref.WeakKeyDictionary[GridWorld, tuple[np.ndarray, ...]] = (
    weakref.WeakKeyDictionary())


def _task_tables(world: GridWorld) -> tuple[np.ndarray, ...]:
    """Per task: ``targets`` ``(T, 3)``, and what a reset puts back: ``start``, ``stage0``,
    ``door0`` (the key's door while the task starts before its key, else −1) and
    ``target0`` (the target of the starting stage), all int64."""
    tables = _TASK_TABLES.get(world)
    if tables is None:
        targets = world.targets.astype(np.int64)
        stage0 = world.start_stage.astype(np.int64)
        door0 = np.where(stage0 == 0, targets[:, 1], -1)
        target0 = targets[np.arange(targets.shape[0]), stage0]
        tables = _TASK_TABLES[world] = (targets, world.start.astype(np.int64), stage0, door0,
                                        target0)
    return tables


#: ``_slip_moves`` of each live world (worlds are immutable; the table is built once).
_SLIP_MOVES: weakref.WeakKeyDictionary[GridWorld, np.ndarray] = weakref.WeakKeyDictionary()


def _slip_moves(world: GridWorld) -> np.ndarray:
    """``moves3[env, cell, action, turn]`` flattened: the landing cell when the slip turns
    ``action`` by ``turn − 1`` quarters (the intended move for every ``turn`` where the
    environment is not slippery)."""
    table = _SLIP_MOVES.get(world)
    if table is None:
        moves = world.moves  # (E, S², 4)
        E, S2, _ = moves.shape
        slip = world.slippery.astype(np.int64)[:, None, None]
        turned = (np.arange(4)[None, :, None] + (np.arange(3) - 1)[None, None, :] * slip) & 3
        table = moves[np.arange(E)[:, None, None, None], np.arange(S2)[None, :, None, None],
                      turned[:, None, :, :]]  # (E, S², 4, 3)
        table = _SLIP_MOVES[world] = np.ascontiguousarray(table.reshape(-1))
    return table


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
        # Elapsed steps per copy as one clock and each copy's episode start: truncation
        # is one comparison with a scalar, and a reset writes the start time only.
        self._now = 0
        self._t0 = np.zeros(self._w.cell.size, np.int64)

    @property
    def t(self) -> np.ndarray:
        """Steps taken in each copy's current episode."""
        return self._now - self._t0

    @property
    def cell(self) -> np.ndarray:
        return self._w.cell

    @property
    def stage(self) -> np.ndarray:
        return self._w.stage

    def reset(self) -> tuple[np.ndarray, np.ndarray]:
        """Put every copy at its start; return ``(cell, stage)``."""
        self._w.reset()
        self._now = 0
        self._t0[:] = 0
        return self._w.cell, self._w.stage

    def step(self, actions: Any) -> StepResult:
        """Apply one action per copy; finished copies restart automatically.

        ``cell`` and ``stage`` of the result are the observations after the
        automatic reset; ``reward`` is 1 on success (or on a leak cell).

        What the wrapper adds to the hot path (:class:`Walkers`), measured
        against a plain numpy loop of the same dynamics in ``python -m
        benchmarks env_steps``: the check of the actions (integers in
        ``[0, 4)``: one pass), the time limit, the automatic reset, the reward
        as floats and results a caller may keep.  ``cell`` and ``stage`` are
        read-only arrays the environment never writes again (copy them to
        modify); ``stage`` is copied only where tasks have subgoals.
        """
        actions = np.asarray(actions)
        w = self._w
        if actions.shape != self._t0.shape:
            raise ValueError(f"actions must have shape {self._t0.shape}; got {actions.shape}")
        if actions.dtype != np.int64 or actions.view(np.uint64).max() > 3:
            # One pass for the common case (int64 in [0, 4): negatives are huge unsigned).
            _check_indices("actions", actions, 4)
            actions = actions.astype(np.int64)
        success, term, _, leaked = w.step(actions, self.rng)
        reward = success | leaked if leaked is not None else success
        self._now += 1
        trunc = self._t0 <= self._now - self.world.max_steps
        np.greater(trunc, term, out=trunc)  # truncated only where not terminated
        done = np.flatnonzero(term | trunc)
        if done.size:
            w.reset(done)
            self._t0[done] = self._now
        # The walkers never write into an array they have returned (a step makes a new
        # ``cell``; a static ``stage`` is never written): handed over read-only, not copied.
        cell = w.cell.view()
        cell.flags.writeable = False
        stage = w.stage.view() if w.static_stage else w.stage.copy()
        stage.flags.writeable = False
        return StepResult(cell, stage, reward.astype(np.float64), success, term, trunc)


@dataclass(frozen=True)
class StepResult:
    """What :meth:`VecGridEnv.step` returns, one entry per copy."""

    cell: np.ndarray
    stage: np.ndarray
    reward: np.ndarray
    success: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
