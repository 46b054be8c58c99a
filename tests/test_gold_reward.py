"""Gold reward DP, soft VI, policy gradient and Bradley–Terry against independent computations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rlscale.simulate import (
    fit_bradley_terry,
    kl_policy_gradient,
    make_reward_world,
    sample_trajectories,
    soft_optimum,
)
from rlscale.simulate._gold_reward import GOLD_WEIGHTS
from rlscale.simulate._gridworld import GridFamily
from rlscale.simulate._rm_experiment import _bon_points, _frontier_gold

TINY = GridFamily(size=3, hole_rate=0.15, wall_rate=0.0, slippery=0.5, subgoal_rate=0.0,
                  max_steps=4)


def _brute(rw, task, r_land, policy=None):
    """Enumerate every action and slip sequence of one task (Python loops, no DP).

    Returns one row (probability under π, probability under the reference,
    return) per path.
    """
    t = rw._tables
    paths = []

    def rec(state, h, p_pi, p_ref, ret):
        if h == 0:
            paths.append((p_pi, p_ref, ret))
            return
        for a in range(4):
            pa = 0.25 if policy is None else policy[h - 1].reshape(-1, 4)[state, a]
            for k in range(3):
                pk = t["prob"][state * 4 + a, k]
                if pk == 0.0:
                    continue
                land = t["land"][state * 4 + a, k]
                r = ret + r_land[land]
                if t["cont"][land]:
                    rec(t["cont_idx"][land], h - 1, p_pi * pa * pk, p_ref * 0.25 * pk, r)
                else:
                    paths.append((p_pi * pa * pk, p_ref * 0.25 * pk, r))

    rec(t["start"][task], rw.horizon, 1.0, 1.0, 0.0)
    return np.array(paths)


def test_dp_matches_brute_force_enumeration() -> None:
    rw = make_reward_world(3, rng=1, family=TINY)
    g = rw.landing_reward(GOLD_WEIGHTS)
    beta = 0.7
    so = soft_optimum(rw, g, g, [beta], keep_policy=True)
    ref = rw.evaluate(None, g, second_moment=True)
    for task in range(rw.n_tasks):
        paths = _brute(rw, task, g, so.policy[0])
        p_pi, p_ref, ret = paths.T
        assert abs(p_pi.sum() - 1.0) < 1e-12 and abs(p_ref.sum() - 1.0) < 1e-12
        # Reference mean and second moment.
        assert ref["value"][0, task] == pytest.approx(np.sum(p_ref * ret), abs=1e-12)
        assert ref["second"][0, task] == pytest.approx(np.sum(p_ref * ret**2), abs=1e-12)
        # Soft optimum: gold value and KL of the returned policy over whole paths.
        assert so.gold[0, task] == pytest.approx(np.sum(p_pi * ret), abs=1e-12)
        ok = p_pi > 0
        kl = np.sum(p_pi[ok] * np.log(p_pi[ok] / p_ref[ok]))
        assert so.kl[0, task] == pytest.approx(kl, abs=1e-12)
        assert so.soft_value[0, task] == pytest.approx(so.gold[0, task] - beta * kl, abs=1e-12)
    # Gibbs, for deterministic dynamics: the optimum is beta * log E_ref[exp(R/beta)].
    det = make_reward_world(2, rng=1, family=GridFamily(
        size=3, hole_rate=0.15, wall_rate=0.0, slippery=0.0, subgoal_rate=0.0, max_steps=4))
    gd = det.landing_reward(GOLD_WEIGHTS)
    sd = soft_optimum(det, gd, gd, [beta])
    for task in range(det.n_tasks):
        _, p_ref, ret = _brute(det, task, gd).T
        assert sd.soft_value[0, task] == pytest.approx(
            beta * math.log(np.sum(p_ref * np.exp(ret / beta))), abs=1e-12)


def test_soft_optimum_beats_perturbed_policies() -> None:
    """No other policy has a higher proxy − β·KL (a perturbation can only lose)."""
    rw = make_reward_world(2, rng=3, family=TINY)
    g = rw.landing_reward(GOLD_WEIGHTS)
    so = soft_optimum(rw, g, g, [0.5], keep_policy=True)
    rng = np.random.default_rng(0)
    for _ in range(5):
        pol = so.policy * np.exp(0.3 * rng.standard_normal(so.policy.shape))
        pol /= pol.sum(axis=-1, keepdims=True)
        ev = rw.evaluate(pol, g, kl=True)
        assert np.all(ev["value"] - 0.5 * ev["kl"] < so.soft_value - 1e-9)


def test_exact_kl_and_value_match_monte_carlo() -> None:
    rw = make_reward_world(4, rng=0)
    g = rw.landing_reward(GOLD_WEIGHTS)
    so = soft_optimum(rw, g, g, [0.2], keep_policy=True)
    phi, logr = sample_trajectories(rw, 20_000, np.random.default_rng(1), so.policy[0])
    n = logr.shape[1]
    for est, exact in ((logr, so.kl[0]), (phi @ GOLD_WEIGHTS, so.gold[0])):
        z = (est.mean(axis=1) - exact) / (est.std(axis=1, ddof=1) / math.sqrt(n))
        assert np.all(np.abs(z) < 4.5), z
    assert np.all(so.kl[0] > 0.5)  # a real test: far from the reference


def test_policy_gradient_moves_towards_the_soft_optimum() -> None:
    rw = make_reward_world(2, rng=1, family=TINY)
    g = rw.landing_reward(GOLD_WEIGHTS)
    so = soft_optimum(rw, g, g, [0.5])
    ref = rw.evaluate(None, g)["value"][0]
    pg = kl_policy_gradient(rw, g, g, [0.5], steps=600, k=16, lr=0.1, rng=0)
    obj = pg.proxy - 0.5 * pg.kl
    # Above the reference objective, at most the optimum, and most of the way there.
    assert np.all(obj <= so.soft_value + 1e-9)
    assert np.all(obj - ref > 0.7 * (so.soft_value - ref))


def test_policy_gradient_kl_trace_estimates_the_exact_kl_of_each_iterate() -> None:
    # The same seed runs the same first n updates: the (n+1)-step run's trace at n is a
    # Monte Carlo estimate of the KL of the n-step run's final policy, evaluated exactly.
    rw = make_reward_world(3, rng=2, family=TINY)
    g = rw.landing_reward(GOLD_WEIGHTS)
    n, k = 30, 64
    short = kl_policy_gradient(rw, g, g, [0.05, 1.0], steps=n, k=k, lr=0.5, rng=4)
    long = kl_policy_gradient(rw, g, g, [0.05, 1.0], steps=n + 1, k=k, lr=0.5, rng=4)
    assert long.kl_trace.shape == (n + 1, 2) and np.all(long.kl_trace[0] == 0.0)
    assert np.array_equal(long.kl_trace[:n], short.kl_trace)
    for b in range(2):  # an independent sample of the same policy gives the standard error
        lr_ = sample_trajectories(rw, k, 9, short.policy[b])[1]
        se = lr_.std(ddof=1) / math.sqrt(lr_.size)
        assert abs(long.kl_trace[n, b] - short.kl[b].mean()) < 4.5 * se
    assert short.kl[0].mean() > 0.3 and short.kl[0].mean() > short.kl[1].mean()


def test_bradley_terry_matches_a_generic_optimiser() -> None:
    from scipy.optimize import minimize

    rng = np.random.default_rng(2)
    x = rng.standard_normal((300, 3))
    y = (rng.random(300) < 1 / (1 + np.exp(-(x @ [1.0, -2.0, 0.5])))).astype(float)

    def nll(t):
        z = x @ t
        return np.sum(y * np.logaddexp(0, -z) + (1 - y) * np.logaddexp(0, z)) + 0.05 * t @ t

    ref = minimize(nll, np.zeros(3), method="BFGS", options={"gtol": 1e-10}).x
    assert np.allclose(fit_bradley_terry(x, y, ridge=0.1), ref, atol=1e-6)
    with pytest.raises(ValueError, match="separable"):
        fit_bradley_terry(np.array([[1.0], [-1.0]]), np.array([1.0, 0.0]), ridge=0.0)
    with pytest.raises(ValueError, match="delta must be 2-D"):
        fit_bradley_terry(np.ones(3), np.ones(3))


def test_best_of_n_on_a_pool_with_ties_matches_enumeration() -> None:
    scores = np.array([[0.0, 1.0, 1.0, 2.0, 0.0]])
    gold = np.array([[0.3, -1.0, 2.0, 0.5, 0.1]])
    N = scores.shape[1]
    for n in (1, 2, 3):
        probs = {}
        gsum = 0.0
        for draw in itertools.product(range(N), repeat=n):
            top = max(scores[0, list(draw)])
            winners = [i for i in draw if scores[0, i] == top]
            for i in winners:  # ties broken uniformly among the tied draws
                w = N ** -n / len(winners)
                gsum += w * gold[0, i]
                probs[i] = probs.get(i, 0.0) + w
        # Group probabilities by proxy value (the empirical law's atoms).
        atoms: dict[float, float] = {}
        for i, p in probs.items():
            atoms[scores[0, i]] = atoms.get(scores[0, i], 0.0) + p
        q = {v: np.mean(scores[0] == v) for v in atoms}
        kl = sum(p * math.log(p / q[v]) for v, p in atoms.items() if p > 0)
        k_, _, g_ = _bon_points(scores, gold, np.array([float(n)]))
        assert g_[0, 0] == pytest.approx(gsum, abs=1e-12)
        assert k_[0, 0] == pytest.approx(kl, abs=1e-12)


def test_frontier_chooses_by_proxy_not_by_gold() -> None:
    kl = np.array([[0.0, 1.0, 2.0, 3.0]])
    proxy = np.array([[0.0, 1.0, 0.5, 2.0]])   # the KL-2 point is dominated by KL 1
    gold = np.array([[0.0, 1.0, 9.0, 1.0]])    # ... even though its gold is best
    out = _frontier_gold(kl, proxy, gold, np.array([0.5, 2.0, 5.0]))
    assert out.tolist() == [[0.5, 1.0, 1.0]]


def test_no_proxy_beats_the_gold_frontier() -> None:
    """At every KL budget the gold's own KL-regularised optimum is the best any policy does."""
    from rlscale.simulate import (
        comparison_labels,
        comparison_pool,
        gold_gains,
        make_rm_setup,
        train_proxy,
    )

    setup = make_rm_setup(4, 4, rng=0)
    K = np.geomspace(0.05, 30.0, 9)
    best = gold_gains(setup, setup.gold_weights, "linear", K, optimisers=("soft_vi",))["soft_vi"]
    delta, margin = comparison_pool(setup, 300, np.random.default_rng(1))
    labels = comparison_labels(margin, 1.0, np.random.default_rng(2))
    ref = sample_trajectories(setup.opt, 500, np.random.default_rng(3))[0]
    for cap in ("linear", "partial"):
        theta = train_proxy(delta, labels, 300, cap)
        got = gold_gains(setup, theta, cap, K, optimisers=("soft_vi", "bon"), ref_features=ref)
        assert np.all(got["soft_vi"] <= best + 1e-9)
        assert np.all(got["soft_vi"][:, -1] > 0.3)  # a 300-comparison proxy does help
    assert np.all(np.diff(best, axis=1) >= -1e-12) and np.all(np.diff(best[:, :6], axis=1) > 0)
