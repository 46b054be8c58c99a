"""The simulators' vectorised hot loops against independent computations.

- Reward-world programs on the reachable states only (``RewardWorld._compact``):
  brute-force path enumeration on a family with subgoals and slippery and
  non-slippery tasks mixed; the state set is closed under "land, continue".
- Subtask rollouts (``_rollout_reaches`` on per-(task, stage) tables): reach
  frequencies against the exact backward induction of ``subtask_success``;
  the random stream of the per-walker loop they replaced is kept (pinned
  counts computed with that loop).
- The turn-episode loop drops a held candidate once its turn is won: a
  hand-computed all-fail case and an exact recursion over the default
  adaptive rule's states (budget left, held candidate and its correctness).
- The bandit's policy gradient: ``history=False`` ends where the full run
  ends, bit for bit; the centred log-softmax and the sorted-key inverse-CDF
  search against direct computations.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlscale.simulate import GridFamily, kl_bandit_pg, subtask_success, world_from_text
from rlscale.simulate._bandit import _log_softmax, _sample
from rlscale.simulate._gold_reward import GOLD_WEIGHTS, make_reward_world
from rlscale.simulate._soft_vi import soft_optimum
from rlscale.simulate._subtasks import (
    _parts,
    _rollout_reaches,
    _rollout_tables,
    run_turn_episodes,
    subtask_starts,
)

MIXED = GridFamily(size=3, hole_rate=0.1, wall_rate=0.0, slippery=0.5, subgoal_rate=1.0,
                   max_steps=4)


def _paths(rw, task, r_land, policy):
    """Every action and slip sequence of one task from its start (Python recursion)."""
    t = rw._tables
    out = []

    def rec(state, h, p, ret):
        if h == 0:
            out.append((p, ret))
            return
        for a in range(4):
            pa = policy[h - 1].reshape(-1, 4)[state, a]
            for k in range(3):
                pk = t["prob"][state * 4 + a, k]
                if pk == 0.0 or pa == 0.0:
                    continue
                land = t["land"][state * 4 + a, k]
                if t["cont"][land]:
                    rec(t["cont_idx"][land], h - 1, p * pa * pk, ret + r_land[land])
                else:
                    out.append((p * pa * pk, ret + r_land[land]))

    rec(t["start"][task], rw.horizon, 1.0, 0.0)
    return np.array(out)


def test_programs_on_reachable_states_match_enumeration() -> None:
    rw = make_reward_world(4, rng=3, family=MIXED)
    slip = rw._tables["slip"]
    assert slip.any() and not slip.all(), "the family must mix slippery and plain tasks"
    assert (rw.world.start_stage == 0).any(), "and have tasks with a key and a door"
    c = rw._compact()
    assert c["states"].size < rw.n_states  # a real restriction
    g = rw.landing_reward(GOLD_WEIGHTS)
    p = rw.landing_reward(np.random.default_rng(0).normal(size=GOLD_WEIGHTS.size))
    betas = [0.3, 2.0]
    full = soft_optimum(rw, p, g, betas, keep_policy=True)  # every state
    fast = soft_optimum(rw, p, g, betas)                     # reachable states only
    for name in ("kl", "proxy", "gold", "soft_value"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(full, name))
    ev = rw.evaluate(full.policy, np.stack([p, g]), kl=True, second_moment=True)
    for b in range(2):
        for task in range(rw.n_tasks):
            pr, ret_p = _paths(rw, task, p, full.policy[b]).T
            _, ret_g = _paths(rw, task, g, full.policy[b]).T
            uni = _paths(rw, task, p, np.full_like(full.policy[b], 0.25))[:, 0]
            assert pr.sum() == pytest.approx(1.0, abs=1e-12)
            assert fast.proxy[b, task] == pytest.approx(np.sum(pr * ret_p), abs=1e-12)
            assert fast.gold[b, task] == pytest.approx(np.sum(pr * ret_g), abs=1e-12)
            kl = np.sum(pr * np.log(pr / uni))
            assert fast.kl[b, task] == pytest.approx(kl, abs=1e-12)
            # evaluate: row 0 is the proxy under policy 0, row 1 the gold under policy 1
            if b == 0:
                assert ev["value"][0, task] == pytest.approx(np.sum(pr * ret_p), abs=1e-12)
                assert ev["second"][0, task] == pytest.approx(np.sum(pr * ret_p**2), abs=1e-12)
                assert ev["kl"][0, task] == pytest.approx(kl, abs=1e-12)
            else:
                assert ev["value"][1, task] == pytest.approx(np.sum(pr * ret_g), abs=1e-12)


def test_reachable_states_are_closed_and_hold_the_starts() -> None:
    rw = make_reward_world(6, rng=1)
    t, c = rw._tables, rw._compact()
    states = set(c["states"].tolist())
    assert set(t["start"].tolist()) <= states
    land = t["move_idx"].reshape(rw.n_states, 4)[c["states"]].ravel()
    assert set(t["cont_idx"][land[t["cont"][land]]].tolist()) <= states
    # The plain tasks' states come first, then the slippery ones'.
    slips = t["slip"][c["states"] // (3 * rw.features.shape[2])]
    assert not slips[: c["n_plain"]].any() and slips[c["n_plain"]:].all()


MAP = ["SKFF", "FHFD", "FFWF", "HFFG"]


@pytest.mark.parametrize("slippery", [False, True])
def test_rollout_reach_frequencies_match_the_exact_success(slippery: bool) -> None:
    world = world_from_text(MAP, slippery=slippery, max_steps=9)
    policy = np.random.default_rng(8).dirichlet(np.ones(4) * 2, size=(1, 3, 16))
    exact = subtask_success(world, policy)[0]
    nxt, dead, reach = _parts(world)
    starts = subtask_starts(world)[0]
    gen = np.random.default_rng(5)
    m = 40_000
    for stage in range(3):
        tables = _rollout_tables(world, policy, nxt, dead, reach, 0, stage)
        hits = _rollout_reaches(*tables, starts[stage], m, 9, gen)
        se = math.sqrt(exact[stage] * (1 - exact[stage]) / m)
        assert abs(hits.mean() - exact[stage]) < 4.5 * se + 1e-12
    assert exact.min() > 0.05 and exact.max() < 0.95  # not a trivial check


def test_turn_episodes_keep_the_random_stream_of_the_walker_loop() -> None:
    # Counts produced by the per-walker loop this vectorised one replaced, same seeds.
    world = world_from_text(MAP, slippery=True, max_steps=9)
    policy = np.random.default_rng(8).dirichlet(np.ones(4) * 2, size=(1, 3, 16))
    out = run_turn_episodes(world, policy, [0, 0, 0], [0, 1, 2], budget=12, caps=[4, 4, 4],
                            fpr=0.1, fnr=0.2, episodes=3000, rng=1)
    assert (int(out.success.sum()), int(out.used.sum())) == PINNED_SLIPPERY
    plain = world_from_text(MAP, slippery=False, max_steps=9)
    out = run_turn_episodes(plain, policy, [0, 0, 0], [0, 1, 2], budget=12,
                            commit=np.zeros((3, 13), bool), episodes=2000, rng=4)
    assert (int(out.success.sum()), int(out.used.sum())) == PINNED_PLAIN


PINNED_SLIPPERY = (952, 15725)
PINNED_PLAIN = (879, 20241)


def _exact_episode_success(q, B, fpr, fnr):
    """Success probability of the default adaptive rule, by recursion over its states.

    State (turn, budget left, holding a rejected candidate, is it correct): with budget
    left draw (correct w.p. q[turn]; accepted w.p. 1 - fnr if correct, fpr if not; an
    accepted wrong candidate ends the episode, a rejected one is held); with none left
    commit the held candidate if there is one.  Winning a turn starts the next with
    nothing held.
    """
    def v(t, left, hold, ok):
        if t == len(q):
            return 1.0
        if left == 0:
            return v(t + 1, 0, False, False) if hold and ok else 0.0
        p = q[t]
        return (p * (1 - fnr) * v(t + 1, left - 1, False, False)
                + p * fnr * v(t, left - 1, True, True)
                + (1 - p) * (1 - fpr) * v(t, left - 1, True, False))

    return v(0, B, False, False)


def test_a_held_candidate_is_dropped_once_its_turn_is_won() -> None:
    # Hand-computed: every rollout reaches the target (q = 1) and the verifier rejects
    # every correct candidate (fnr = 1), so turn 0 spends the whole budget and is won by
    # committing its held candidate; turn 1 then has no budget and nothing held, so
    # every episode fails.  Carrying turn 0's candidate into turn 1 would win them all.
    w = world_from_text(["SKF", "FFD", "FFG"], slippery=False, max_steps=4)
    right = np.zeros((1, 3, 9, 4))
    right[..., 2] = 1.0
    out = run_turn_episodes(w, right, [0, 0], [0, 0], budget=3, fnr=1.0, episodes=50, rng=0)
    assert out.rate == 0.0 and out.used.tolist() == [3] * 50
    # A stochastic case against the exact recursion: the held-over candidate would add
    # free wins at every turn reached with the budget spent.
    world = world_from_text(MAP, slippery=True, max_steps=9)
    policy = np.random.default_rng(8).dirichlet(np.ones(4) * 2, size=(1, 3, 16))
    q = subtask_success(world, policy)[0]
    B, fpr, fnr = 8, 0.05, 0.5
    exact = _exact_episode_success([float(x) for x in q], B, fpr, fnr)
    out = run_turn_episodes(world, policy, [0, 0, 0], [0, 1, 2], budget=B, fpr=fpr, fnr=fnr,
                            episodes=4000, rng=3)
    se = math.sqrt(exact * (1 - exact) / out.success.size)
    assert abs(out.rate - exact) < 4.5 * se


def test_bandit_without_history_ends_where_the_full_run_ends() -> None:
    r = np.random.default_rng(2).normal(size=(6, 40))
    betas = np.geomspace(0.05, 2.0, 6)
    for algorithm in ("rloo", "grpo", "exact"):
        full = kl_bandit_pg(r, betas, steps=60, batch_size=8, algorithm=algorithm, rng=1)
        short = kl_bandit_pg(r, betas, steps=60, batch_size=8, algorithm=algorithm, rng=1,
                             history=False)
        assert short.probs.tobytes() == full.probs.tobytes()
        assert short.kl.tobytes() == full.kl.tobytes()
        np.testing.assert_array_equal(short.kl_history, full.kl_history[[0, -1]])
        np.testing.assert_array_equal(short.objective_history,
                                      full.objective_history[[0, -1]])
        # The reported KL is that of the returned policy (independent sum).
        direct = np.sum(full.probs * np.log(full.probs * 40), axis=1)
        np.testing.assert_allclose(full.kl, direct, rtol=1e-12, atol=1e-15)


def test_centred_log_softmax_and_sorted_search_against_direct_sums() -> None:
    gen = np.random.default_rng(3)
    theta = gen.normal(size=(300, 200)) * 5
    theta[0, :3] = theta[0].max() + 1.0  # a tie at the top
    theta = theta - theta.max(axis=1, keepdims=True)
    got = _log_softmax(theta, centred=True)
    assert got.tobytes() == _log_softmax(theta).tobytes()
    direct = theta - np.log(np.exp(theta).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(got, direct, rtol=0, atol=1e-12)
    # Inverse CDF on a table large enough for the sorted-key search (300 x 200 > 2**15).
    probs = np.exp(got)
    acts = _sample(probs, 7, np.random.default_rng(9))
    u = np.random.default_rng(9).random((300, 7))
    cdf = np.cumsum(probs, axis=1)
    cdf[:, -1] = 1.0
    for b in range(0, 300, 37):
        for j in range(7):  # first index whose partial sum exceeds u (row b offset by b)
            assert acts[b, j] == min(int(np.sum(cdf[b] + b <= u[b, j] + b)), 199)


@pytest.mark.parametrize("shape", [(40, 5), (30, 100)])  # counted; binary search, unsorted
def test_inverse_cdf_search_on_small_tables(shape) -> None:
    B, n = shape
    probs = np.random.default_rng(4).dirichlet(np.ones(n) * 0.3, size=B)
    acts = _sample(probs, 9, np.random.default_rng(2))
    u = np.random.default_rng(2).random((B, 9))
    cdf = np.cumsum(probs, axis=1)
    cdf[:, -1] = 1.0
    want = [[min(int(np.sum(cdf[b] + b <= u[b, j] + b)), n - 1) for j in range(9)]
            for b in range(B)]
    assert acts.tolist() == want
    counts = np.bincount(acts.ravel(), minlength=n)
    assert counts.sum() == B * 9 and (acts >= 0).all()
