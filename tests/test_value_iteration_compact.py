"""The start values of policy_success and optimal_success come from the compact programme
(only the stages a task can be in, simulate/_value_iteration.py): the same bits as the
start entries of the full table ``success_values`` returns."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rlscale.simulate import GridFamily, frozen_lake, optimal_success, policy_success
from rlscale.simulate._value_iteration import success_values


def _start(world, V):
    return V[np.arange(world.n_tasks), world.start_stage, world.start]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_compact_start_values_are_the_full_tables_bit_for_bit(seed) -> None:
    world = GridFamily(size=5, subgoal_rate=0.5, slippery=0.5, hole_rate=0.15).sample(
        4, 3, rng=seed)
    free = np.flatnonzero(world.tiles[0].reshape(-1) == 0)
    world = dataclasses.replace(world, leak=np.array([free[-1], -1, -1, -1], np.int64))
    assert 0 < int(np.sum(world.start_stage == 0)) < world.n_tasks  # both kinds of task
    policy = np.random.default_rng(seed).dirichlet(np.ones(4), size=(world.n_tasks, 3, 25))
    for horizon in (None, 3):
        full = _start(world, success_values(world, policy, horizon=horizon))
        assert policy_success(world, policy, horizon=horizon).tobytes() == full.tobytes()
        for event in ("success", "leak"):
            full = _start(world, success_values(world, horizon=horizon, event=event))
            got = optimal_success(world, horizon=horizon, event=event)
            assert got.tobytes() == full.tobytes()


def test_a_single_task_world_still_gives_a_float() -> None:
    assert optimal_success(frozen_lake("4x4")) == pytest.approx(0.7442, abs=1e-4)
    assert isinstance(policy_success(frozen_lake("4x4"), np.full((1, 3, 16, 4), 0.25)), float)


def test_bad_input_is_refused_as_before() -> None:
    world = frozen_lake("4x4")
    with pytest.raises(TypeError, match="world must be a GridWorld"):
        policy_success("lake", np.full((1, 3, 16, 4), 0.25))
    with pytest.raises(ValueError, match="policy must have shape"):
        policy_success(world, np.full((1, 3, 9, 4), 0.25))
    with pytest.raises(ValueError, match="rows of policy must sum to 1"):
        policy_success(world, np.full((1, 3, 16, 4), 0.3))
    with pytest.raises(ValueError, match="event must be"):
        optimal_success(world, event="win")
