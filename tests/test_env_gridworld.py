"""The procedurally generated gridworld family and its batched stepping."""

from __future__ import annotations

import numpy as np
import pytest

from rlscale.simulate import (
    GridFamily,
    VecGridEnv,
    frozen_lake,
    optimal_success,
    policy_success,
    world_from_text,
)
from rlscale.simulate._gridworld import HOLE, WALL


def test_same_seed_bit_identical_worlds_and_different_seeds_differ():
    fam = GridFamily(size=6)
    a, b = fam.sample(5, 3, rng=7), fam.sample(5, 3, rng=np.random.default_rng(7))
    for name in ("tiles", "slippery", "task_env", "start", "targets"):
        assert np.array_equal(getattr(a, name), getattr(b, name))
    assert not np.array_equal(a.tiles, fam.sample(5, 3, rng=8).tiles)


def test_generated_tasks_are_solvable_and_well_formed():
    fam = GridFamily(size=6, hole_rate=0.3, wall_rate=0.15, subgoal_rate=0.5)
    w = fam.sample(40, 4, rng=1)
    assert (w.shortest_path() > 0).all()
    assert (optimal_success(w) > 0).all()
    flat = w.tiles.reshape(w.n_environments, -1)[w.task_env]
    rows = np.arange(w.n_tasks)
    for cells in (w.start, *(w.targets[:, i] for i in range(3))):
        ok = cells < 0
        assert (ok | (flat[rows, np.maximum(cells, 0)] == 0)).all()  # on free cells
    has = w.targets[:, 0] >= 0
    assert (has == (w.targets[:, 1] >= 0)).all() and 0 < has.mean() < 1


def test_shortest_path_positive_iff_optimal_success_positive():
    # Hard family: many tasks are unsolvable; draw raw layouts and tasks without the rule.
    rng = np.random.default_rng(5)
    fam = GridFamily(size=5, hole_rate=0.35, wall_rate=0.15, subgoal_rate=0.5, max_steps=8)
    tiles, slip = fam._layouts(300, rng)
    S2 = 25
    start = rng.integers(0, S2, 300)
    targets = np.stack([rng.integers(0, S2, 300) for _ in range(3)], axis=1)
    targets[rng.random(300) < 0.5, :2] = -1
    free = tiles.reshape(300, S2) == 0
    rows = np.arange(300)
    keep = free[rows, start] & free[rows, targets[:, 2]]
    keep &= (targets[:, 0] < 0) | (free[rows, targets[:, 0]] & free[rows, targets[:, 1]])
    cells = np.concatenate([start[:, None], targets], axis=1)
    distinct = np.array([len(set(c[c >= 0])) == (c >= 0).sum() for c in cells])
    keep &= distinct
    from rlscale.simulate._gridworld import GridWorld

    w = GridWorld(tiles=tiles, slippery=slip, leak=np.full(300, -1), task_env=rows[keep],
                  start=start[keep], targets=targets[keep], max_steps=8)
    sp = w.shortest_path()
    opt = optimal_success(w)
    assert ((sp > 0) == (opt > 1e-15)).all()
    assert 0.2 < (sp > 0).mean() < 0.9  # both outcomes well represented
    # Deterministic environments: success is exactly 1 when a path exists.
    det = ~w.slippery[w.task_env] & (sp > 0)
    np.testing.assert_allclose(opt[det], 1.0)


def test_door_is_shut_until_the_key_is_held():
    # Straight corridor S D K G: the agent must pass the door's cell to reach the key.
    w = world_from_text(["SDKG", "WWWW", "WWWW", "WWWW"], slippery=False, max_steps=10)
    assert w.shortest_path().tolist() == [-1]
    assert optimal_success(w) == 0.0
    w2 = world_from_text(["SKDG", "WWWW", "WWWW", "WWWW"], slippery=False, max_steps=3)
    assert w2.shortest_path().tolist() == [3] and optimal_success(w2) == 1.0
    assert optimal_success(w2, horizon=2) == 0.0
    env = VecGridEnv(w2, [0], seed=0)
    out = [env.step([2]) for _ in range(3)]
    assert [int(o.stage[0]) for o in out[:2]] == [1, 2]
    assert out[2].success[0] and out[2].reward[0] == 1.0


def test_walls_block_and_holes_end_the_episode():
    w = world_from_text(["SWF", "HFF", "FFG"], slippery=False, max_steps=10)
    env = VecGridEnv(w, [0, 0], seed=0)
    out = env.step([2, 1])  # right into the wall; down into the hole
    assert out.cell.tolist() == [0, 0]  # copy 0 stayed, copy 1 was reset after the hole
    assert out.terminated.tolist() == [False, True] and out.reward.tolist() == [0.0, 0.0]
    assert w.tiles[0, 0, 1] == WALL and w.tiles[0, 1, 0] == HOLE


def test_slippery_moves_split_one_third_each():
    w = world_from_text(["FFF", "FSF", "FFG"], slippery=True, max_steps=100)
    n = 60_000
    env = VecGridEnv(w, np.zeros(n, int), seed=3)
    out = env.step(np.full(n, 3))  # up from the centre: up, left or right
    counts = np.bincount(out.cell, minlength=9)
    assert set(np.nonzero(counts)[0].tolist()) == {1, 3, 5}
    np.testing.assert_allclose(counts[[1, 3, 5]] / n, 1 / 3, atol=0.01)


def test_monte_carlo_success_of_a_policy_matches_its_exact_value():
    fam = GridFamily(size=5, hole_rate=0.15, wall_rate=0.1, subgoal_rate=0.5, slippery=0.5)
    w = fam.sample(3, 2, rng=2)
    rng = np.random.default_rng(0)
    policy = rng.dirichlet(np.ones(4), size=(w.n_tasks, 3, 25))
    exact = policy_success(w, policy)
    n = 4000
    tasks = np.repeat(np.arange(w.n_tasks), n)
    env = VecGridEnv(w, tasks, seed=1)
    wins = np.zeros(tasks.size)
    alive = np.ones(tasks.size, bool)
    for _ in range(w.max_steps):
        probs = policy[tasks, env.stage, env.cell]
        acts = (rng.random(tasks.size)[:, None] > np.cumsum(probs, axis=1)[:, :3]).sum(axis=1)
        out = env.step(acts)
        wins += alive * out.success
        alive &= ~(out.terminated | out.truncated)
    mc = wins.reshape(w.n_tasks, n).mean(axis=1)
    se = np.sqrt(exact * (1 - exact) / n) + 1e-3
    assert (np.abs(mc - exact) < 4.5 * se).all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"size": 2}, "size must be an integer >= 3"), ({"hole_rate": 0.7}, "hole_rate must be"),
     ({"diversity": -0.1}, "diversity must be >= 0"), ({"max_steps": 0}, "max_steps")],
)
def test_bad_family_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        GridFamily(**kwargs)


def test_bad_counts_and_impossible_families():
    with pytest.raises(ValueError, match="n_environments must be an integer >= 1"):
        GridFamily().sample(0, 1)
    with pytest.raises(ValueError, match="too hard"):
        GridFamily(size=4, hole_rate=0.5, wall_rate=0.5, max_steps=1).sample(3, 1, rng=0)
    with pytest.raises(ValueError, match="map_name must be one of 4x4, 8x8"):
        frozen_lake("5x5")


def test_diversity_zero_gives_one_layout():
    w = GridFamily(diversity=0.0).sample(6, 1, rng=0)
    assert (w.tiles == w.tiles[0]).all() and (w.slippery == w.slippery[0]).all()
    w1 = GridFamily(diversity=1.0).sample(6, 1, rng=0)
    assert not (w1.tiles == w1.tiles[0]).all()


@pytest.mark.parametrize("map_name", ["4x4", "8x8"])
def test_transition_table_matches_gymnasium(map_name):
    gym = pytest.importorskip("gymnasium")
    env = gym.make("FrozenLake-v1", map_name=map_name, is_slippery=True)
    P = env.unwrapped.P
    w = frozen_lake(map_name)
    flat = w.tiles[0].ravel()
    goal = int(w.targets[0, 2])
    for s in range(len(P)):
        if flat[s] == HOLE or s == goal:
            continue  # gymnasium keeps terminal states absorbing; we never step from them
        for a in range(4):
            want: dict[int, float] = {}
            for p, s2, _, _ in P[s][a]:
                want[s2] = want.get(s2, 0.0) + p
            got: dict[int, float] = {}
            for turn in (-1, 0, 1):
                s2 = int(w.moves[0, s, (a + turn) % 4])
                got[s2] = got.get(s2, 0.0) + 1 / 3
            assert got.keys() == want.keys(), (s, a)
            for key in got:
                assert got[key] == pytest.approx(want[key])


def test_map_text_as_one_string_and_bad_map_arguments():
    from rlscale.simulate import optimal_success, world_from_text

    one = world_from_text("SF\nFG", slippery=False, max_steps=4)
    assert optimal_success(one) == 1.0
    with pytest.raises(TypeError, match="slippery must be True or False; got slippery='yes'"):
        world_from_text(["SF", "FG"], slippery="yes")
    with pytest.raises(ValueError,
                       match="max_steps must be an integer >= 1 and <= 100000; got max_steps=0"):
        world_from_text(["SF", "FG"], max_steps=0)


def test_vec_env_refuses_bad_task_ids_and_actions():
    world = frozen_lake("4x4")
    with pytest.raises(ValueError, match=r"task_ids must hold integers in \[0, 1\); got 3"):
        VecGridEnv(world, [0, 3])
    with pytest.raises(ValueError, match=r"task_ids must hold integers in \[0, 1\); got -1"):
        VecGridEnv(world, [-1])  # would silently wrap to the last task
    with pytest.raises(ValueError, match="task_ids must be a non-empty 1-D"):
        VecGridEnv(world, [])
    env = VecGridEnv(world, [0, 0], seed=0)
    with pytest.raises(ValueError, match=r"actions must hold integers in \[0, 4\); got 7"):
        env.step([7, 0])
    with pytest.raises(ValueError, match=r"actions must have shape \(2,\); got \(1,\)"):
        env.step([1])
