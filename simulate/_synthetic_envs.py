"""Synthetic environments with a tunable defect rate, and a verifier that filters them.

Synthesised agent environments are often broken.  :func:`synthetic_world`
draws a clean world from a :class:`GridFamily` and then corrupts each
environment with probability ``defect_rate``, half of them (in expectation)
each way:

``unsolvable``
    every task's goal cell becomes a hole: the task can never be completed;
``leaky``
    a free cell next to a start pays reward 1 and ends the episode without
    the task being done (reward collectable without doing the task); an
    environment with no free cell there is made unsolvable instead.

:func:`verify_world` is the filter: an environment is kept only if every
task is solvable (optimal success > 0, by breadth-first search — exact for
"> 0", see :mod:`rlscale.simulate._gridworld`) and no reward can be earned
without completing the task (the highest probability of stepping on a leak
cell, by value iteration, is 0).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rlscale.simulate._gridworld import (
    DCOL,
    DROW,
    FREE,
    HOLE,
    GridFamily,
    GridWorld,
    as_generator,
)
from rlscale.simulate._value_iteration import optimal_success
from rlscale.theory._repr import compact_repr
from rlscale.theory._result import Result
from rlscale.theory._validation import check_scalar

__all__ = ["SyntheticWorld", "VerifierReport", "synthetic_world", "verify_world"]


@dataclass(frozen=True, eq=False)
class SyntheticWorld:
    """A world and the ground truth of which environments were corrupted."""

    world: GridWorld
    unsolvable: np.ndarray
    leaky: np.ndarray

    def __repr__(self) -> str:  # one screen, not the world's arrays in full (issue 24)
        return compact_repr(self, title=f"{int(self.defective.sum())} of "
                            f"{self.defective.size} environments corrupted")

    @property
    def defective(self) -> np.ndarray:
        return self.unsolvable | self.leaky


@dataclass(frozen=True, eq=False)
class VerifierReport(Result):
    """Outcome of :func:`verify_world`: the filtered world and per-environment verdicts."""

    world: GridWorld | None
    keep: np.ndarray
    solvable: np.ndarray
    reward_clean: np.ndarray

    def __repr__(self) -> str:  # one screen, not the world's arrays in full (issue 24)
        d = self.as_dict()
        return compact_repr(self, title=f"kept {d['kept']} of {d['environments']} environments "
                            f"({d['unsolvable']} unsolvable, "
                            f"{d['reward_hackable']} reward-hackable)")

    def as_dict(self) -> dict[str, Any]:
        return {"kept": int(self.keep.sum()), "environments": int(self.keep.size),
                "unsolvable": int((~self.solvable).sum()),
                "reward_hackable": int((~self.reward_clean).sum())}


def synthetic_world(family: GridFamily, n_environments: int, tasks_per_environment: int,
                    defect_rate: float, rng: np.random.Generator | int | None = None
                    ) -> SyntheticWorld:
    """Draw a world and corrupt each environment with probability ``defect_rate``.

    Examples
    --------
    >>> fam = GridFamily(size=5, subgoal_rate=0.0)
    >>> syn = synthetic_world(fam, 40, 2, defect_rate=0.5, rng=0)
    >>> report = verify_world(syn.world)
    >>> bool((report.keep == ~syn.defective).all())
    True
    """
    if not isinstance(family, GridFamily):
        raise TypeError(f"family must be a GridFamily; got family={family!r:.80}")
    rate = check_scalar("defect_rate", defect_rate, low=0.0, high=1.0)
    rng = as_generator(rng)
    world = family.sample(n_environments, tasks_per_environment, rng)
    E, S = world.n_environments, world.size
    bad = rng.random(E) < rate
    kind = rng.random(E) < 0.5  # True: unsolvable, False: leaky
    tiles = world.tiles.copy()
    leak = world.leak.copy()
    flat = tiles.reshape(E, S * S)
    # A leak cell: a free, non-task neighbour of the environment's first start.
    first = np.searchsorted(world.task_env, np.arange(E))
    used = np.zeros((E, S * S), bool)
    for cells in (world.start, *world.targets.T):
        ok = cells >= 0
        used[world.task_env[ok], cells[ok]] = True
    r0, c0 = np.divmod(world.start[first], S)
    for e in np.nonzero(bad & ~kind)[0]:
        for a in rng.permutation(4):
            r, c = r0[e] + DROW[a], c0[e] + DCOL[a]
            if 0 <= r < S and 0 <= c < S and flat[e, r * S + c] == FREE and not used[e, r * S + c]:
                leak[e] = r * S + c
                break
    leaky = leak >= 0
    # An environment drawn to leak but with no room for a leak cell is made unsolvable.
    unsolvable = bad & ~leaky
    goals = world.targets[:, 2]
    hit = unsolvable[world.task_env]
    flat[world.task_env[hit], goals[hit]] = HOLE
    return SyntheticWorld(replace(world, tiles=tiles, leak=leak), unsolvable, leaky)


def verify_world(world: GridWorld) -> VerifierReport:
    """Keep the environments whose tasks are all solvable and reward-clean."""
    if not isinstance(world, GridWorld):
        raise TypeError(f"world must be a GridWorld; got world={world!r:.80}")
    E = world.n_environments
    task_ok = world.shortest_path() > 0
    solvable = np.ones(E, bool)
    np.logical_and.at(solvable, world.task_env, task_ok)
    leak_prob = np.atleast_1d(optimal_success(world, event="leak"))
    reward_clean = np.ones(E, bool)
    np.logical_and.at(reward_clean, world.task_env, leak_prob == 0.0)
    keep = solvable & reward_clean
    if not keep.any():
        return VerifierReport(None, keep, solvable, reward_clean)
    envs = np.nonzero(keep)[0]
    remap = np.full(E, -1)
    remap[envs] = np.arange(envs.size)
    tasks = np.nonzero(keep[world.task_env])[0]
    kept = GridWorld(tiles=world.tiles[envs], slippery=world.slippery[envs],
                     leak=world.leak[envs], task_env=remap[world.task_env[tasks]],
                     start=world.start[tasks], targets=world.targets[tasks],
                     max_steps=world.max_steps)
    return VerifierReport(kept, keep, solvable, reward_clean)
