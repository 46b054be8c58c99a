"""The numpy RL trainer: estimators, gradients, determinism and learning."""

from __future__ import annotations

import numpy as np
import pytest

from rlscale.simulate import (
    GridFamily,
    TrainConfig,
    frozen_lake,
    policy_success,
    synthetic_world,
    train,
    verify_world,
)
from rlscale.simulate._dr_grpo import dr_grpo_advantages
from rlscale.simulate._grpo import grpo_advantages
from rlscale.simulate._policies import (
    N_FEATURES,
    LinearPolicy,
    MLPPolicy,
    log_probs,
    state_features,
)
from rlscale.simulate._rlds import subtask_advantages
from rlscale.simulate._rloo import rloo_advantages
from rlscale.simulate._rollout import clipped_grad, group_stats, kl_k3_grad, rollout, score_grad


@pytest.mark.parametrize("k", [2, 3, 8])
def test_rloo_advantage_is_k_over_k_minus_1_times_dr_grpo(k, rng):
    r = rng.normal(size=(5, k))
    loo = np.array([[r[b, i] - np.mean(np.delete(r[b], i)) for i in range(k)] for b in range(5)])
    np.testing.assert_allclose(rloo_advantages(r), loo, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(rloo_advantages(r), k / (k - 1) * dr_grpo_advantages(r),
                               rtol=1e-12, atol=1e-14)


def test_grpo_advantage_uses_population_std_and_zeroes_flat_groups(rng):
    r = rng.integers(0, 2, size=(50, 6)).astype(float)
    r[0] = 1.0
    want = [(x - x.mean()) / (np.sqrt(np.mean((x - x.mean()) ** 2)) + 1e-6) for x in r]
    np.testing.assert_allclose(grpo_advantages(r), want, rtol=1e-12)
    assert (grpo_advantages(r)[0] == 0).all()


def test_rlds_reduces_to_grpo_on_single_subtask_tasks(rng):
    success = rng.integers(0, 2, size=(7, 5)).astype(bool)
    completed = np.zeros((7, 5, 3), bool)
    completed[..., 2] = success
    reached = np.zeros((7, 5, 3), bool)
    reached[..., 2] = True
    np.testing.assert_allclose(subtask_advantages(completed, reached)[..., 2],
                               grpo_advantages(success.astype(float)), rtol=1e-12)


def _numeric_grad(f, params, eps=1e-6):
    out = {}
    for name, value in params.items():
        g = np.zeros_like(value)
        for idx in np.ndindex(value.shape):
            old = value[idx]
            value[idx] = old + eps
            up = f()
            value[idx] = old - eps
            down = f()
            value[idx] = old
            g[idx] = (up - down) / (2 * eps)
        out[name] = g
    return out


@pytest.mark.parametrize("kind", ["linear", "mlp"])
def test_analytic_gradients_match_finite_differences(kind, rng):
    policy = LinearPolicy() if kind == "linear" else MLPPolicy(rng, hidden=5)
    for v in policy.params.values():
        v += rng.normal(0, 0.3, v.shape)
    phi = rng.normal(size=(6, N_FEATURES))
    W = rng.normal(size=(6, 4))
    Wpos, Wneg = np.maximum(W, 0), np.minimum(W, 0)
    C = rng.random((6, 4))
    logp_old = log_probs(policy, phi)[0] + rng.normal(0, 0.1, (6, 4))

    def objective():
        logp = log_probs(policy, phi)[0]
        rho = np.exp(logp - logp_old)
        clipped = np.sum(Wpos * np.minimum(rho, 1.2) + Wneg * np.maximum(rho, 0.8))
        d = np.log(0.25) - logp
        k3 = np.sum(C * (np.exp(d) - 1 - d))
        return np.sum(W * logp) + clipped - 0.3 * k3

    logp, cache = log_probs(policy, phi)
    dz = score_grad(W, logp) + clipped_grad(Wpos, Wneg, logp, logp_old, 0.2)
    dz -= 0.3 * kl_k3_grad(C, logp)[0]
    got = policy.backward(cache, dz)
    want = _numeric_grad(objective, policy.params)
    for name in got:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-7)


def test_rollouts_match_exact_success_and_zero_advantage_rate():
    world = frozen_lake("4x4")
    policy = LinearPolicy()
    policy.params["W"][:] = np.random.default_rng(0).normal(0, 0.5, (N_FEATURES, 4))
    phi = state_features(world).reshape(-1, N_FEATURES)
    logp = log_probs(policy, phi)[0]
    p = policy_success(world, np.exp(logp).reshape(1, 3, 16, 4))
    k, groups = 4, 5000
    batch = rollout(world, np.zeros(groups, np.int64), k,
                    np.tile(logp, (groups, 1)), np.random.default_rng(1))
    n = groups * k
    assert abs(batch.success.mean() - p) < 4 * np.sqrt(p * (1 - p) / n)
    zero = p**k + (1 - p) ** k
    got = group_stats(batch)["zero_advantage_fraction"]
    assert abs(got - zero) < 4 * np.sqrt(zero * (1 - zero) / groups)
    assert batch.env_steps == batch.length.sum() and batch.length.max() <= 100


def test_same_seed_is_bit_identical_and_seeds_differ():
    cfg = TrainConfig(n_environments=4, tasks_per_environment=2, trajectories_per_task=4,
                      epochs=2, eval_environments=8, policy="mlp", hidden=8)
    a, b = train(cfg), train(cfg)
    for name in a.params:
        assert np.array_equal(a.params[name], b.params[name])
    assert a.success == b.success and a.env_steps == b.env_steps
    assert np.array_equal(a.train_success, b.train_success)
    c = train(cfg, seed=1)
    assert not np.array_equal(a.params["W1"], c.params["W1"])


@pytest.mark.parametrize("algorithm", ["grpo", "rloo", "reinforce", "dr_grpo", "rlds"])
def test_training_beats_the_untrained_policy_on_held_out_environments(algorithm):
    res = train(n_environments=16, tasks_per_environment=4, trajectories_per_task=8,
                algorithm=algorithm, eval_environments=32, seed=3)
    assert res.success > res.untrained_success + 0.08, (res.success, res.untrained_success)
    assert res.success <= res.optimal_success


@pytest.mark.parametrize("algorithm", ["dr_grpo", "reinforce", "grpo"])
def test_kl_history_is_one_estimate_for_every_algorithm(algorithm):
    # Dr. GRPO trains without a KL term; its drift from the reference must still be logged.
    res = train(n_environments=4, tasks_per_environment=2, trajectories_per_task=4, epochs=4,
                eval_environments=2, algorithm=algorithm, tasks_per_step=4)
    assert res.kl[0] == pytest.approx(0.0, abs=1e-12)  # the linear policy starts uniform
    assert np.all(np.isfinite(res.kl)) and res.kl[-1] > 1e-4
    assert res.clip_fraction.shape == (res.updates,)
    assert np.all((res.clip_fraction >= 0) & (res.clip_fraction <= 1))
    assert (res.clip_fraction == 0).all() == (algorithm == "reinforce")


def test_cost_and_step_accounting():
    res = train(n_environments=3, tasks_per_environment=2, trajectories_per_task=4, epochs=1,
                unit_cost_environment=10.0, unit_cost_task=2.0, unit_cost_trajectory=0.5,
                eval_environments=4)
    assert res.config.cost == 10 * 3 + 2 * 6 + 0.5 * 24
    row = res.row()
    assert row["tasks"] == 6 and row["trajectories"] == 24 and row["loss"] == 1 - row["success"]
    assert res.updates == 1 and res.rollouts == 24
    assert 24 <= res.env_steps <= 24 * res.config.family.horizon


def test_frontier_selection_logs_band_and_zero_advantage_every_step():
    res = train(n_environments=8, tasks_per_environment=4, trajectories_per_task=4,
                frontier=(0.1, 0.9), eval_environments=8)
    assert res.in_band_fraction.shape == (res.updates,)
    assert res.in_band_fraction[0] == 1.0  # nothing measured yet
    assert np.all((res.zero_advantage_fraction >= 0) & (res.zero_advantage_fraction <= 1))
    assert res.row()["frontier"] == "0.1-0.9"


def test_verifier_filters_exactly_the_defective_environments():
    fam = GridFamily(size=5, subgoal_rate=0.3)
    syn = synthetic_world(fam, 60, 2, defect_rate=0.4, rng=4)
    assert syn.unsolvable.sum() > 0 and syn.leaky.sum() > 0
    report = verify_world(syn.world)
    assert np.array_equal(report.keep, ~syn.defective)
    assert report.world.n_environments == (~syn.defective).sum()
    res = train(n_environments=20, tasks_per_environment=2, trajectories_per_task=4,
                defect_rate=0.5, verify=True, eval_environments=4, epochs=1)
    assert res.environments_kept < 20


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_environments": 0}, "n_environments must be an integer >= 1"),
        ({"tasks_per_environment": -2}, "tasks_per_environment must be an integer >= 1"),
        ({"trajectories_per_task": 1}, "trajectories_per_task must be an integer >= 2"),
        ({"algorithm": "ppo"}, "one of reinforce, rloo, grpo, dr_grpo, rlds"),
        ({"policy": "cnn"}, "policy must be one of linear, mlp"),
        ({"frontier": (0.9, 0.1)}, "frontier must be"),
        ({"lr": 0.0}, "lr must be > 0"),
        ({"defect_rate": 2.0}, "defect_rate must be"),
        ({"hole_rate": 0.9}, "hole_rate must be"),
        ({"seed": -1}, "seed must be an integer >= 0 and <= 9223372036854775807; got seed=-1"),
        ({"eval_seed": -3}, "eval_seed must be an integer >= 0"),
        ({"base_seed": -2}, "base_seed must be an integer >= 0"),
        ({"grid_size": 2}, "grid_size must be an integer >= 3 and <= 256; got grid_size=2"),
        ({"frontier": (0.1, 0.5, 0.9)}, "frontier must be"),
        ({"frontier": ("a", "b")}, "frontier must be"),
    ],
)
def test_bad_config(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TrainConfig(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seed": 1.5}, "seed must be an integer >= 0"),
        ({"base_seed": "a"}, "base_seed must be an integer >= 0"),
        ({"verify": "yes"}, "verify must be True or False; got verify='yes'"),
        ({"algorithm": ["grpo"]}, "algorithm must be one of"),
        ({"frontier": 0.5}, "frontier must be"),
    ],
)
def test_wrongly_typed_config(kwargs, match):
    with pytest.raises(TypeError, match=match):
        TrainConfig(**kwargs)


def test_unknown_config_key_lists_the_valid_ones():
    with pytest.raises(ValueError, match="unknown TrainConfig field"):
        TrainConfig.from_dict({"n_envs": 3})
    with pytest.raises(ValueError, match=r"unknown TrainConfig field\(s\) \['n_envs'\]; valid"):
        train(n_envs=3)


def test_divergent_learning_rate_is_an_error_not_nan():
    # Adam at lr = 1000 drives action probabilities to 0, where GRPO's k3 term overflows.
    with pytest.raises(ValueError, match=r"diverged at update \d+ of 40 .*got lr=1000"):
        train(n_environments=4, tasks_per_environment=2, trajectories_per_task=4, lr=1000.0,
              steps=40, eval_environments=2, kl_coef=0.1)


def test_verifier_rejecting_everything_is_an_error():
    with pytest.raises(ValueError, match="verifier rejected all 3 environments"):
        train(n_environments=3, tasks_per_environment=1, trajectories_per_task=2,
              defect_rate=1.0, verify=True, eval_environments=2)


def test_compressed_state_rows_give_the_same_rollouts():
    from rlscale.simulate._rollout import state_rows

    world = GridFamily(size=5, subgoal_rate=0.5).sample(4, 3, rng=2)
    ids = np.arange(world.n_tasks)
    policy = LinearPolicy()
    policy.params["W"][:] = np.random.default_rng(0).normal(0, 0.5, (N_FEATURES, 4))
    phi = state_features(world, ids)
    full = log_probs(policy, phi.reshape(-1, N_FEATURES))[0]
    blocks, base = state_rows(world, ids)
    assert blocks.sum() < blocks.size  # some tasks have no subgoals
    small = log_probs(policy, phi[blocks].reshape(-1, N_FEATURES))[0]
    a = rollout(world, ids, 6, full, np.random.default_rng(5))
    b = rollout(world, ids, 6, small, np.random.default_rng(5), base)
    assert np.array_equal(a.action, b.action) and np.array_equal(a.success, b.success)
    assert np.array_equal(a.stage, b.stage)
    np.testing.assert_allclose(small[b.row], full[a.row], rtol=1e-12)
