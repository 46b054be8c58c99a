"""The chain world and its exact optimisers against brute-force enumeration of all A^H
trajectories (independent of the dynamic programmes under test)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rlscale.simulate._chain_optimisers import bon_pool, evaluate_policy, pg_chain, soft_chain
from rlscale.simulate._chain_world import (
    ChainReward,
    chain_max,
    feature_index,
    make_chain_world,
    reference_moments,
    reward_from_weights,
    reward_values,
    sample_reference,
    step_tables,
)


def _all(H: int, A: int) -> np.ndarray:
    return np.array(list(itertools.product(range(A), repeat=H)))


def _direct(reward: ChainReward, traj: np.ndarray) -> np.ndarray:
    """R(τ) by reading the tables one trajectory at a time (no vectorised codes)."""
    out = []
    for t in traj:
        v = 0.0
        if reward.additive is not None:
            v += sum(reward.additive[h, a] for h, a in enumerate(t))
        if reward.windows is not None:
            k, A = reward.order, reward.actions
            for w in range(reward.n_windows):
                code = 0
                for a in t[w:w + k]:
                    code = code * A + int(a)
                v += reward.windows[w, code]
        out.append(v)
    return np.array(out)


def _random_reward(H, A, k, rng, additive=True, windows=True) -> ChainReward:
    return ChainReward(H, A, k, rng.standard_normal((H, A)) if additive else None,
                       rng.standard_normal((H - k + 1, A**k)) if windows else None)


@pytest.mark.parametrize(("H", "A", "k", "nu"), [(4, 3, 2, 0.5), (4, 3, 3, 1.0), (4, 3, 4, 0.3),
                                                 (5, 2, 3, 0.7), (4, 3, 1, 0.0)])
def test_gold_has_unit_variance_and_orthogonal_parts(H, A, k, nu):
    w = make_chain_world(H, A, k, nu, rng=1)
    traj = _all(H, A)
    R = reward_values(w.gold, traj)
    assert np.allclose(R, _direct(w.gold, traj))
    assert abs(R.mean()) < 1e-12 and abs(R.var() - 1.0) < 1e-12
    parts = [ChainReward(H, A, w.order, w.gold.additive, None),
             ChainReward(H, A, w.order, None, w.gold.windows)]
    var = [reward_values(p, traj).var() if (p.additive is not None or p.windows is not None)
           else 0.0 for p in parts]
    assert np.allclose(var, [1.0 - nu, nu], atol=1e-12)


@pytest.mark.parametrize(("H", "A", "k"), [(4, 3, 2), (5, 2, 3), (3, 4, 3), (4, 2, 1)])
def test_reference_moments_and_max_match_enumeration(H, A, k):
    rng = np.random.default_rng(H * 10 + k)
    r = _random_reward(H, A, k, rng, windows=k > 1)
    traj = _all(H, A)
    R = _direct(r, traj)
    mean, var = reference_moments(r)
    assert mean == pytest.approx(R.mean(), abs=1e-12)
    assert var == pytest.approx(R.var(), abs=1e-12)
    best, path = chain_max(r)
    assert best == pytest.approx(R.max(), abs=1e-12)
    assert _direct(r, path[None])[0] == pytest.approx(R.max(), abs=1e-12)


def test_features_and_weights_reproduce_the_reward():
    w = make_chain_world(5, 3, 3, 0.5, rng=2)
    traj = sample_reference(w, 200, 3)
    theta = np.concatenate([w.gold.additive.ravel(), w.gold.windows.ravel()])
    idx = feature_index(w, traj, ("additive", "windows"))
    assert idx.shape == (200, 5 + 3)
    assert np.allclose(theta[idx].sum(axis=1), reward_values(w.gold, traj))
    back = reward_from_weights(w, theta, ("windows", "additive"))
    assert np.array_equal(back.additive, w.gold.additive)
    assert np.array_equal(back.windows, w.gold.windows)
    with pytest.raises(ValueError, match="theta must have shape"):
        reward_from_weights(w, theta[:-1], ("additive", "windows"))


def _gibbs(P: np.ndarray, beta: float) -> np.ndarray:
    z = P / beta
    p = np.exp(z - z.max())
    return p / p.sum()


@pytest.mark.parametrize(("proxy_windows", "gold_k"), [(True, 3), (False, 3), (True, 2)])
def test_soft_optimum_matches_the_enumerated_gibbs_law(proxy_windows, gold_k):
    H, A = 4, 3
    rng = np.random.default_rng(7)
    gold = make_chain_world(H, A, gold_k, 0.6, rng=rng).gold
    proxy = _random_reward(H, A, gold_k, rng, windows=proxy_windows)
    traj = _all(H, A)
    P, G = _direct(proxy, traj), _direct(gold, traj)
    betas = np.array([5.0, 0.7, 0.05])
    path = soft_chain(proxy, gold, betas)
    for b, beta in enumerate(betas):
        q = _gibbs(P, beta)
        assert path.kl[b] == pytest.approx(float(np.sum(q * np.log(q * A**H))), abs=1e-10)
        assert path.proxy[b] == pytest.approx(float(q @ P), abs=1e-10)
        assert path.gold[b] == pytest.approx(float(q @ G), abs=1e-10)
    j = int(np.argmax(P))  # the appended argmax point
    assert path.kl[-1] == pytest.approx(H * math.log(A))
    assert (path.proxy[-1], path.gold[-1]) == pytest.approx((P[j], G[j]), abs=1e-12)


def test_soft_optimum_is_finite_at_tiny_beta():
    w = make_chain_world(6, 4, 3, 0.5, rng=0)
    path = soft_chain(w.gold, w.gold, [1e-4, 1e-8], argmax=False)
    best = chain_max(w.gold)[0]
    assert np.all(np.isfinite(path.kl)) and np.all(path.gold <= best + 1e-9)
    assert path.gold[-1] == pytest.approx(best, abs=1e-6)


def test_evaluate_policy_matches_enumeration():
    H, A, k = 4, 3, 3
    rng = np.random.default_rng(3)
    gold = make_chain_world(H, A, k, 0.5, rng=rng).gold
    proxy = _random_reward(H, A, k, rng)
    S = A ** (k - 1)
    pol = rng.dirichlet(np.ones(A), size=(2, H, S))
    traj = _all(H, A)
    logp = np.zeros((2, traj.shape[0]))
    for i, t in enumerate(traj):
        s = 0
        for h, a in enumerate(t):
            logp[:, i] += np.log(pol[:, h, s, a])
            s = (s * A + int(a)) % S
    p = np.exp(logp)
    path = evaluate_policy(pol, proxy, gold)
    assert np.allclose(path.kl, np.sum(p * (logp + H * math.log(A)), axis=1), atol=1e-12)
    assert np.allclose(path.proxy, p @ _direct(proxy, traj), atol=1e-12)
    assert np.allclose(path.gold, p @ _direct(gold, traj), atol=1e-12)


def test_best_of_n_matches_enumeration_of_draws():
    pv = np.array([0.3, -1.0, 0.3, 2.0, 0.5])
    gv = np.array([1.0, 0.0, 3.0, -1.0, 2.0])
    for n in (1, 2, 3):
        gold, proxy = 0.0, 0.0
        law = {}
        for draw in itertools.product(range(5), repeat=n):
            top = max(pv[list(draw)])
            tied = [i for i in draw if pv[i] == top]  # ties: the group's mean gold
            gold += np.mean(gv[tied]) / 5**n
            proxy += top / 5**n
            law[top] = law.get(top, 0.0) + 1 / 5**n
        q = {v: np.mean(pv == v) for v in law}
        kl = sum(p * math.log(p / q[v]) for v, p in law.items())
        path = bon_pool(pv, gv, [float(n)])
        assert (path.gold[0], path.proxy[0], path.kl[0]) == pytest.approx((gold, proxy, kl))


def test_best_of_n_kl_without_ties_is_log_n_minus_correction():
    path = bon_pool(np.arange(20_000.0), np.zeros(20_000), [2.0, 16.0])
    n = np.array([2.0, 16.0])
    assert np.allclose(path.kl, np.log(n) - (n - 1) / n, atol=2e-3)


def test_policy_gradient_learns_and_is_reproducible():
    w = make_chain_world(5, 3, 2, 0.5, rng=0)
    a = pg_chain(w.gold, w.gold, [10.0, 0.05], steps=80, n=16, rng=4)
    b = pg_chain(w.gold, w.gold, [10.0, 0.05], steps=80, n=16, rng=4)
    assert np.array_equal(a.gold, b.gold) and np.array_equal(a.kl, b.kl)
    assert a.kl[0] < a.kl[1] and 0.0 < a.gold[0] < a.gold[1]
    # Nothing to learn from a constant proxy: the policy stays at the reference.
    flat = ChainReward(5, 3, 1, np.zeros((5, 3)), None)
    c = pg_chain(flat, w.gold, [1.0], steps=20, n=8, rng=0)
    assert c.kl[0] == pytest.approx(0.0, abs=1e-12) and c.gold[0] == pytest.approx(0.0,
                                                                                     abs=1e-12)


def test_step_tables_broadcast_an_additive_reward_over_states():
    r = ChainReward(3, 2, 1, np.arange(6.0).reshape(3, 2), None)
    t = step_tables(r, order=3)
    assert t.shape == (3, 4, 2) and np.all(t[:, 1] == r.additive)
    with pytest.raises(ValueError, match="needs order 2"):
        step_tables(ChainReward(3, 2, 2, None, np.zeros((2, 4))), order=3)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"horizon": 0}, "horizon"), ({"actions": 1}, "actions"),
    ({"interaction_share": 1.5}, "interaction_share"), ({"order": 9}, "order"),
    ({"horizon": 12, "actions": 64, "order": 5}, "actions\\^"),
])
def test_make_chain_world_rejects_bad_input(kwargs, match):
    base = {"horizon": 6, "actions": 4, "order": 3, "interaction_share": 0.5}
    with pytest.raises(ValueError, match=match):
        make_chain_world(**{**base, **kwargs}, rng=0)


def test_bad_actions_and_rewards_are_refused():
    w = make_chain_world(4, 3, 2, 0.5, rng=0)
    with pytest.raises(ValueError, match="actions must be an integer array"):
        reward_values(w.gold, np.full((2, 4), 3))
    with pytest.raises(ValueError, match="shape \\(n, 4\\)"):
        feature_index(w, np.zeros((2, 5), int), ("additive",))
    with pytest.raises(ValueError, match="blocks"):
        feature_index(w, np.zeros((2, 4), int), ("terrain",))
    with pytest.raises(TypeError, match="ChainReward"):
        soft_chain("gold", w.gold, [1.0])
    with pytest.raises(ValueError, match="share horizon"):
        soft_chain(make_chain_world(5, 3, 2, 0.5, rng=0).gold, w.gold, [1.0])
    with pytest.raises(ValueError, match="policy must have shape"):
        evaluate_policy(np.full((1, 4, 3, 2), 0.5), w.gold, w.gold)
