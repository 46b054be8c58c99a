"""``VecGridEnv.step`` against independent implementations of the same dynamics, bit for bit.

- A per-copy pure-Python stepper written from the documented rules (module docstring of
  ``simulate/_gridworld.py``): edges and walls leave the agent in place, the door is
  shut before the key, stages key → door → goal, holes and leak cells end the episode,
  the time limit truncates, finished copies restart; the slip draws
  ``rng.integers(0, 3, size=copies, dtype=int8)`` once per step (turn = draw − 1) when
  any copy is slippery.  Generated families with subgoals, slippery and non-slippery
  environments and leak cells.
- The plain numpy loop of the benchmark (FrozenLake 8x8) gives the same trajectories.
- The arrays a step returns are read-only and never change afterwards.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rlscale.simulate import GridFamily, VecGridEnv, frozen_lake
from rlscale.simulate._frozen_lake import FROZEN_LAKE_MAPS
from rlscale.simulate._gridworld import HOLE, WALL

DROW, DCOL = (0, 1, 0, -1), (-1, 0, 1, 0)


class Reference:
    """One copy at a time, in Python, from the rules (not from the move tables)."""

    def __init__(self, world, tasks, seed):
        self.w, self.tasks = world, list(tasks)
        self.rng = np.random.default_rng(seed)
        env = world.task_env[self.tasks]
        self.slip = [bool(world.slippery[e]) for e in env]
        self.any_slip = any(self.slip)
        self.cell = [int(world.start[t]) for t in self.tasks]
        self.stage = [int(world.start_stage[t]) for t in self.tasks]
        self.t = [0] * len(self.tasks)

    def step(self, actions):
        w, S = self.w, self.w.size
        turns = (self.rng.integers(0, 3, size=len(self.tasks), dtype=np.int8).astype(int) - 1
                 if self.any_slip else [0] * len(self.tasks))
        out = []
        for i, task in enumerate(self.tasks):
            e = int(w.task_env[task])
            a = (int(actions[i]) + (turns[i] if self.slip[i] else 0)) & 3
            r, c = divmod(self.cell[i], S)
            nr, nc = min(max(r + DROW[a], 0), S - 1), min(max(c + DCOL[a], 0), S - 1)
            nxt = nr * S + nc
            if w.tiles[e, nr, nc] == WALL:
                nxt = self.cell[i]
            key, door, goal = (int(x) for x in w.targets[task])
            if self.stage[i] == 0 and nxt == door:
                nxt = self.cell[i]  # the door is shut until the key is held
            success = False
            if nxt == (key, door, goal)[self.stage[i]]:
                if self.stage[i] == 2:
                    success = True
                else:
                    self.stage[i] += 1
            leaked = nxt == int(w.leak[e])
            term = w.tiles[e].reshape(-1)[nxt] == HOLE or success or leaked
            self.t[i] += 1
            trunc = self.t[i] >= w.max_steps and not term
            self.cell[i] = nxt
            if term or trunc:
                self.cell[i], self.stage[i] = int(w.start[task]), int(w.start_stage[task])
                self.t[i] = 0
            out.append((self.cell[i], self.stage[i], float(success or leaked), success,
                        bool(term), bool(trunc)))
        return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generated_worlds_step_exactly_as_the_rules_say(seed) -> None:
    fam = GridFamily(size=5, hole_rate=0.15, wall_rate=0.1, subgoal_rate=0.6, slippery=0.5,
                     max_steps=12)
    world = fam.sample(3, 3, rng=seed)
    # A leak cell in the first environment: a free cell that is no task's target.
    free = [c for c in np.flatnonzero(world.tiles[0].reshape(-1) == 0)
            if c not in world.targets.reshape(-1) and c not in world.start]
    world = dataclasses.replace(world, leak=np.array([free[0], -1, -1], dtype=np.int64))
    tasks = np.arange(60) % world.n_tasks
    env, ref = VecGridEnv(world, tasks, seed=seed), Reference(world, tasks, seed)
    acts = np.random.default_rng(seed + 10)
    seen = {"advanced": 0, "success": 0, "truncated": 0, "leaked": 0}
    for _ in range(80):
        a = acts.integers(0, 4, tasks.size)
        got, want = env.step(a), ref.step(a)
        assert got.cell.tolist() == [o[0] for o in want]
        assert got.stage.tolist() == [o[1] for o in want]
        assert got.reward.tolist() == [o[2] for o in want]
        assert got.success.tolist() == [o[3] for o in want]
        assert got.terminated.tolist() == [o[4] for o in want]
        assert got.truncated.tolist() == [o[5] for o in want]
        seen["advanced"] += int(np.sum(got.stage > world.start_stage[tasks]))
        seen["success"] += int(got.success.sum())
        seen["truncated"] += int(got.truncated.sum())
        seen["leaked"] += int(np.sum(got.reward > got.success))
    assert all(v > 0 for v in seen.values()), seen  # every rule was exercised


def test_frozen_lake_steps_as_the_plain_numpy_loop() -> None:
    from benchmarks.bench_env_steps import PlainFrozenLake

    n = 3000
    env = VecGridEnv(frozen_lake("8x8"), np.zeros(n, int), seed=5)
    plain = PlainFrozenLake(FROZEN_LAKE_MAPS["8x8"], n, 200, seed=5)
    acts = np.random.default_rng(6)
    for _ in range(250):
        a = acts.integers(0, 4, n)
        got, (cell, reward, term, trunc) = env.step(a), plain.step(a)
        assert np.array_equal(got.cell, cell) and np.array_equal(got.reward, reward)
        assert np.array_equal(got.terminated, term) and np.array_equal(got.truncated, trunc)


def test_returned_observations_are_read_only_and_never_change() -> None:
    world = GridFamily(size=4, subgoal_rate=1.0, slippery=0.5).sample(2, 2, rng=0)
    env = VecGridEnv(world, [0, 1, 2, 3] * 5, seed=0)
    first = env.step(np.zeros(20, int))
    kept = (first.cell.copy(), first.stage.copy())
    with pytest.raises(ValueError, match="read-only"):
        first.cell[0] = 3
    with pytest.raises(ValueError, match="read-only"):
        first.stage[0] = 1
    for _ in range(30):
        env.step(np.random.default_rng(1).integers(0, 4, 20))
    assert np.array_equal(first.cell, kept[0]) and np.array_equal(first.stage, kept[1])


def test_bad_actions_are_refused_by_name() -> None:
    env = VecGridEnv(frozen_lake("4x4"), [0, 0], seed=0)
    with pytest.raises(ValueError, match=r"actions must hold integers in \[0, 4\); got -1"):
        env.step(np.array([0, -1]))
    with pytest.raises(ValueError, match=r"got 4"):
        env.step(np.array([4, 0], dtype=np.int32))
    with pytest.raises(TypeError, match="actions must hold integers"):
        env.step(np.array([0.0, 1.0]))
    out = env.step(np.array([1, 2], dtype=np.uint8))  # any integer dtype in range
    assert out.cell.shape == (2,) and env.t.tolist() == [1, 1]
