"""KL-penalised bandit policy gradient: convergence to the exact tilted optimum."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from rlscale.simulate import BANDIT_ALGORITHMS, kl_bandit_optimum, kl_bandit_pg


def _tilted_mpmath(r, beta, ref):
    """π* ∝ π_ref·exp(r/β) at 50 digits: an independent oracle."""
    mpmath.mp.dps = 50
    w = [mpmath.mpf(p) * mpmath.exp(mpmath.mpf(x) / beta) for x, p in zip(r, ref)]
    z = mpmath.fsum(w)
    return np.array([float(x / z) for x in w])


def test_optimum_matches_high_precision_oracle_even_for_huge_r_over_beta():
    r = np.array([0.0, 300.0, 299.0, -5.0])
    ref = np.array([0.1, 0.2, 0.3, 0.4])
    for beta in (1e-3, 0.7, 50.0):
        got = kl_bandit_optimum(r, beta, ref)
        np.testing.assert_allclose(got, _tilted_mpmath(r, beta, ref), rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("algorithm", BANDIT_ALGORITHMS)
def test_every_algorithm_converges_to_the_exact_optimum(algorithm):
    rng = np.random.default_rng(3)
    r = rng.normal(size=(3, 8))
    beta = np.array([0.4, 1.0, 2.5])
    ref = rng.dirichlet(np.ones(8) * 3)
    res = kl_bandit_pg(r, beta, ref_probs=ref, algorithm=algorithm, steps=3000, rng=1)
    oracle = np.stack([_tilted_mpmath(r[i], beta[i], ref) for i in range(3)])
    tol = 0.03 if algorithm == "grpo" else 2e-3
    assert np.abs(res.probs - oracle).max() < tol
    # Gibbs: J(π*) − J(π) = β·KL(π ‖ π*) exactly, for any π.
    gap = beta * np.sum(res.probs * np.log(res.probs / oracle), axis=1)
    np.testing.assert_allclose(res.optimum_objective - res.objective, gap, atol=1e-10)
    assert np.all(gap < tol)
    assert np.all(res.optimum_objective >= res.objective - 1e-12)  # π* is the maximiser


def test_reported_kl_and_reward_are_exact_functions_of_probs():
    r = np.array([1.0, -2.0, 0.5])
    ref = np.array([0.5, 0.25, 0.25])
    res = kl_bandit_pg(r, 0.8, ref_probs=ref, steps=50, rng=0)
    p = res.probs
    assert res.kl == pytest.approx(float(np.sum(p * np.log(p / ref))), rel=1e-12)
    assert res.expected_reward == pytest.approx(float(p @ r), rel=1e-12)
    assert res.kl_history.shape == (51,) and res.kl_history[0] == 0.0
    assert res.reward_history[0] == pytest.approx(float(ref @ r))


def test_batch_rows_equal_separate_runs_for_deterministic_methods():
    rng = np.random.default_rng(0)
    r = rng.normal(size=(2, 5))
    both = kl_bandit_pg(r, [0.5, 1.5], algorithm="exact", steps=200)
    for i, beta in enumerate((0.5, 1.5)):
        one = kl_bandit_pg(r[i], beta, algorithm="exact", steps=200)
        np.testing.assert_allclose(both.probs[i], one.probs, rtol=1e-12)


def test_seeded_runs_are_bit_identical():
    r = np.linspace(0, 1, 6)
    a = kl_bandit_pg(r, 0.3, rng=42, steps=100)
    b = kl_bandit_pg(r, 0.3, rng=np.random.default_rng(42), steps=100)
    assert np.array_equal(a.probs, b.probs)
    assert not np.array_equal(a.probs, kl_bandit_pg(r, 0.3, rng=43, steps=100).probs)


def test_npg_with_unit_step_lands_on_the_optimum_in_one_step():
    r = np.array([0.0, 2.0, -1.0])
    res = kl_bandit_pg(r, 0.5, algorithm="npg", steps=1, lr=2.0)
    np.testing.assert_allclose(res.probs, _tilted_mpmath(r, 0.5, [1 / 3] * 3), rtol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"beta": 0.0}, "beta must be > 0"),
        ({"beta": [1.0, 2.0]}, "beta must be a scalar"),
        ({"algorithm": "ppo"}, "algorithm must be one of exact, npg"),
        ({"steps": 0}, "steps must be an integer >= 1"),
        ({"batch_size": 1}, "batch_size must be an integer >= 2"),
        ({"ref_probs": [0.5, 0.6, -0.1]}, "ref_probs must be > 0"),
        ({"ref_probs": [0.5, 0.4, 0.2]}, "ref_probs must sum to 1"),
        ({"ref_probs": [0.5, 0.5]}, "ref_probs must have shape"),
        ({"lr": -1.0}, "lr must be > 0"),
    ],
)
def test_bad_input_names_the_argument(kwargs, match):
    args = {"beta": 1.0, **kwargs}
    beta = args.pop("beta")
    with pytest.raises(ValueError, match=match):
        kl_bandit_pg([0.0, 1.0, 2.0], beta, **args)


def test_reported_step_size_is_per_problem_never_nan():
    res = kl_bandit_pg([[0.0, 1.0], [1.0, 0.0]], [0.5, 2.0], algorithm="npg", steps=3)
    np.testing.assert_array_equal(res.lr, [2.0, 0.5])  # the default 1/beta of each problem
    assert kl_bandit_pg([0.0, 1.0], 0.5, algorithm="npg", steps=3).lr == 2.0
    assert kl_bandit_pg([[0.0, 1.0]], [0.5], algorithm="npg", steps=3, lr=0.1).lr == 0.1


@pytest.mark.parametrize("fn", [kl_bandit_pg, kl_bandit_optimum])
def test_reward_spread_over_beta_beyond_float64_is_refused_not_nan(fn):
    with pytest.raises(ValueError, match="reward range / beta must be <= 1e\\+300"):
        fn([1e308, -1e308], 1e-300)
    # Within range it stays finite, even for a huge spread.
    p = kl_bandit_optimum([1e150, -1e150], 1e-100)
    assert np.all(np.isfinite(p)) and p[0] == 1.0


def test_nan_rewards_are_rejected():
    with pytest.raises(ValueError, match="rewards"):
        kl_bandit_pg([0.0, float("nan")], 1.0)
