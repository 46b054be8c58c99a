"""Value iteration against Gymnasium's FrozenLake and against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rlscale.simulate import GridFamily, frozen_lake, optimal_success, policy_success
from rlscale.simulate._gridworld import HOLE


def _gym_optimal(map_name: str, slippery: bool) -> tuple[float, int]:
    """Backward induction on gymnasium's own transition table ``env.unwrapped.P``."""
    gym = pytest.importorskip("gymnasium")
    env_id = "FrozenLake-v1" if map_name == "4x4" else "FrozenLake8x8-v1"
    env = gym.make(env_id, is_slippery=slippery)
    P, H = env.unwrapped.P, env.spec.max_episode_steps
    V = np.zeros(len(P))
    for _ in range(H):
        V = np.array([max(sum(p * (r + (0.0 if done else V[s2])) for p, s2, r, done in P[s][a])
                          for a in range(4)) for s in range(len(P))])
    return float(V[0]), H


@pytest.mark.parametrize(("map_name", "slippery"),
                         list(itertools.product(["4x4", "8x8"], [True, False])))
def test_frozen_lake_matches_gymnasium_transition_table(map_name, slippery):
    expected, H = _gym_optimal(map_name, slippery)
    world = frozen_lake(map_name, slippery)
    assert world.max_steps == H
    assert optimal_success(world) == pytest.approx(expected, abs=1e-12)


def test_frozen_lake_4x4_slippery_optimum_is_about_0_74():
    # Independent of gymnasium: the well-known value of the 100-step slippery 4x4 lake.
    assert optimal_success(frozen_lake("4x4")) == pytest.approx(0.7442, abs=5e-5)


def test_frozen_lake_rollouts_in_gymnasium_match_our_exact_policy_value():
    gym = pytest.importorskip("gymnasium")
    world = frozen_lake("4x4")
    # A fixed stochastic policy: mostly right/down.
    pol = np.tile(np.array([0.1, 0.4, 0.4, 0.1]), (1, 3, 16, 1))
    exact = policy_success(world, pol)
    env = gym.make("FrozenLake-v1", is_slippery=True)
    rng = np.random.default_rng(0)
    wins, n = 0, 1500
    for episode in range(n):
        env.reset(seed=episode)
        done = False
        while not done:
            _, r, term, trunc, _ = env.step(int(rng.choice(4, p=pol[0, 2, 0])))
            wins += r
            done = term or trunc
    assert abs(wins / n - exact) < 4 * np.sqrt(exact * (1 - exact) / n)


def _brute_force_optimum(world, task):
    """Explicit Python backward induction over (stage, cell) for one task."""
    S = world.size
    e = int(world.task_env[task])
    tiles = world.tiles[e].ravel()
    key, door, goal = (int(x) for x in world.targets[task])
    moves = {0: (0, -1), 1: (1, 0), 2: (0, 1), 3: (-1, 0)}

    def move(c, a, stage):
        r, col = divmod(c, S)
        dr, dc = moves[a]
        nr, nc = r + dr, col + dc
        if not (0 <= nr < S and 0 <= nc < S) or tiles[nr * S + nc] == 2:
            return c
        n = nr * S + nc
        return c if (stage == 0 and n == door) else n

    targets = [key, door, goal]
    V = {(s, c): 0.0 for s in range(3) for c in range(S * S)}
    for _ in range(world.max_steps):
        newV = {}
        for (s, c) in V:
            best = 0.0
            for a in range(4):
                outs = [(a + d) % 4 for d in (-1, 0, 1)] if world.slippery[e] else [a]
                q = 0.0
                for b in outs:
                    n = move(c, b, s)
                    if tiles[n] == HOLE:
                        val = 0.0
                    elif n == targets[s]:
                        val = 1.0 if s == 2 else V[(s + 1, n)]
                    else:
                        val = V[(s, n)]
                    q += val / len(outs)
                best = max(best, q)
            newV[(s, c)] = best
        V = newV
    s0 = 0 if key >= 0 else 2
    return V[(s0, int(world.start[task]))]


def test_random_worlds_match_brute_force():
    fam = GridFamily(size=4, hole_rate=0.2, wall_rate=0.1, subgoal_rate=0.5, max_steps=12)
    w = fam.sample(4, 2, rng=11)
    got = optimal_success(w)
    want = [_brute_force_optimum(w, i) for i in range(w.n_tasks)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert (w.targets[:, 0] >= 0).any()


def test_optimal_dominates_every_policy_and_horizon_is_monotone():
    w = GridFamily(size=5, subgoal_rate=0.5).sample(4, 2, rng=3)
    rng = np.random.default_rng(1)
    opt = optimal_success(w)
    for _ in range(3):
        pol = rng.dirichlet(np.ones(4), size=(w.n_tasks, 3, 25))
        assert (policy_success(w, pol) <= opt + 1e-12).all()
    short = optimal_success(w, horizon=w.max_steps // 2)
    assert (short <= opt + 1e-12).all()


def test_bad_policy_shape_and_event():
    w = frozen_lake("4x4")
    with pytest.raises(ValueError, match="policy must have shape"):
        policy_success(w, np.ones((1, 16, 4)) / 4)
    with pytest.raises(ValueError, match="event must be"):
        optimal_success(w, event="reward")


@pytest.mark.parametrize(
    ("policy", "match"),
    [
        (np.full((1, 3, 16, 4), 0.3), "rows of policy must sum to 1"),
        (np.full((1, 3, 16, 4), np.nan), "policy must be >= 0; got policy=nan"),
        (np.tile([1.5, -0.5, 0.0, 0.0], (1, 3, 16, 1)), "policy must be >= 0"),
    ],
)
def test_a_policy_that_is_not_a_distribution_is_refused(policy, match):
    # An unnormalised table would give a "success probability" above 1, NaN would propagate.
    with pytest.raises(ValueError, match=match):
        policy_success(frozen_lake("4x4"), policy)


def test_negative_or_fractional_horizon_is_refused():
    w = frozen_lake("4x4")
    with pytest.raises(ValueError,
                       match="horizon must be an integer >= 0 and <= 100000; got horizon=-1"):
        optimal_success(w, horizon=-1)
    with pytest.raises(TypeError, match="horizon must be an integer"):
        optimal_success(w, horizon=2.5)
    assert optimal_success(w, horizon=0) == 0.0
