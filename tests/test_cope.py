"""CoPE (issue 27): the forecast loss and its gradient, one update by hand, GRPO at λ = 0."""

from __future__ import annotations

import numpy as np
import pytest

from rlscale.simulate import _cope, _grpo
from rlscale.simulate._backbone import BackbonePolicy, Window
from rlscale.simulate._policies import Adam
from rlscale.simulate._rollout import LOG_REF, Batch


def _batch(n_rows: int = 4) -> Batch:
    # 2 tasks × k = 2 trajectories, recorded one time step at a time (as the rollouts do):
    # t = 0: trajectories 0, 1, 2, 3; t = 1: 0, 2; t = 2: 2.  Lengths 2, 1, 3, 1.
    traj = np.array([0, 1, 2, 3, 0, 2, 2])
    row = np.array([0, 0, 2, 3, 1, 2, 3]) % n_rows
    action = np.array([1, 1, 0, 2, 2, 3, 0])
    reward = np.array([1.0, 0.0, 1.0, 1.0])  # group 0 = (1, 0), group 1 = (1, 1)
    return Batch(row=row, action=action, traj=traj, stage=np.full(7, 2), reward=reward,
                 success=reward.astype(bool), length=np.bincount(traj, minlength=4),
                 reached=np.zeros((4, 3), bool), completed=np.zeros((4, 3), bool),
                 n_tasks=2, k=2, n_rows=n_rows, S2=1)


def _policy(rng, F=3, H=5, heads=2, context=1, linear=False) -> BackbonePolicy:
    pol = BackbonePolicy(rng, F, H, context=context, heads=heads, linear=linear)
    for name, value in pol.params.items():  # away from the all-zero start: every path live
        pol.params[name] = rng.normal(0.0, 0.5, value.shape)
    return pol


def test_forecast_targets_pair_each_step_with_the_actions_after_it() -> None:
    batch = _batch()
    t = _cope.forecast_targets(batch, 2)
    # By hand, per trajectory (time order): 0: rows (0, 1) actions (1, 2); 1: row 0 action 1;
    # 2: rows (2, 2, 3) actions (0, 3, 0); 3: row 3 action 2.
    # j = 1: (row 0 → 2), (row 2 → 3), (row 2 → 0);  j = 2: (row 2 → 0).
    expected = np.zeros((4, 2, 4))
    expected[0, 0, 2] = 1
    expected[2, 0, 3] += 1
    expected[2, 0, 0] += 1
    expected[2, 1, 0] += 1
    assert t.n_targets == 4
    np.testing.assert_array_equal(t.counts, expected)
    assert _cope.forecast_targets(batch, 5).n_targets == 4  # no longer trajectory


@pytest.mark.parametrize("linear", [False, True])
@pytest.mark.parametrize("window", [False, True])
def test_gradient_matches_central_finite_differences(linear, window) -> None:
    rng = np.random.default_rng(3)
    if window:  # 7 steps, each with a context of 2 observations from a 4-row table
        ids = np.array([[0, -1], [1, -1], [2, 0], [3, 1], [1, 2], [2, 3], [0, 0]])
        inputs, n_rows, context = Window(ids, rng.normal(size=(4, 3))), 7, 2
    else:
        inputs, n_rows, context = rng.normal(size=(4, 3)), 4, 1
    batch = _batch(n_rows)
    if window:
        batch.row[:] = np.arange(7)
    pol = _policy(rng, context=context, linear=linear)
    config = _cope.CoPEConfig(clip=0.2, kl_coef=0.05, forecast_weight=0.7, forecast_horizon=2)
    # The old policy a little away from the current one: ratios inside the clip, not 1.
    logp_old = np.log(np.exp(pol.head(pol.represent(inputs)[0])) + 0.02)
    logp_old -= np.log(np.exp(logp_old).sum(axis=1, keepdims=True))
    grads, _ = _cope.gradient(pol, inputs, logp_old, batch, config)
    eps = 1e-6
    worst = 0.0
    for name, value in pol.params.items():
        for idx in np.ndindex(value.shape):
            keep = value[idx]
            value[idx] = keep + eps
            up = _cope.surrogate(pol, inputs, logp_old, batch, config)
            value[idx] = keep - eps
            down = _cope.surrogate(pol, inputs, logp_old, batch, config)
            value[idx] = keep
            worst = max(worst, abs((up - down) / (2 * eps) - grads[name][idx]))
    assert worst < 1e-6


def _log_softmax(z):
    z = np.asarray(z, dtype=float)
    return z - (z.max() + np.log(np.exp(z - z.max()).sum()))


def test_one_update_pinned_by_hand() -> None:
    """One CoPE step (one epoch, no KL) computed from the docstring's formulas with Python
    loops over the seven recorded steps, then Adam's first step θ + lr·g/(|g| + ε)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(4, 3))
    pol = _policy(rng, F=3, H=2, heads=2)
    p0 = {k: v.copy() for k, v in pol.params.items()}
    batch = _batch()
    config = _cope.CoPEConfig(clip=0.2, kl_coef=0.0, update_epochs=1, forecast_weight=0.5,
                              forecast_horizon=2)
    hidden = np.tanh(X @ p0["W1"] + p0["b1"])
    logits = hidden @ p0["W2"] + p0["b2"]
    logp_old = np.array([_log_softmax(z) for z in logits])
    # GRPO advantages: group (1, 0) → ±0.5/(0.5 + 1e-6); group (1, 1) → 0.
    a = 0.5 / (0.5 + 1e-6)
    adv = [a, -a, 0.0, 0.0]
    length = [2, 1, 3, 1]
    dz = np.zeros((4, 4))
    for s in range(7):  # at θ_old every ratio is 1: d min(ρA, clip(ρ)A)/dz = A·(e_a − π)
        i, r, act = batch.traj[s], batch.row[s], batch.action[s]
        dz[r] += adv[i] / (4 * length[i]) * (np.eye(4)[act] - np.exp(logp_old[r]))
    # Forecast targets (see the targets test): (row, head, action) and N_fc = 4.
    targets = [(0, 0, 2), (2, 0, 3), (2, 0, 0), (2, 1, 0)]
    du = np.zeros((4, 2, 4))
    for r, j, act in targets:
        q = np.exp(_log_softmax(hidden[r] @ p0["V"][j] + p0["c"][j]))
        du[r, j] += 0.5 / 4 * (np.eye(4)[act] - q)
    g = {"W2": hidden.T @ dz, "b2": dz.sum(axis=0), "V": np.zeros((2, 2, 4)),
         "c": du.sum(axis=0)}
    for j in range(2):
        g["V"][j] = hidden.T @ du[:, j]
    dh = dz @ p0["W2"].T + sum(du[:, j] @ p0["V"][j].T for j in range(2))
    dpre = dh * (1 - hidden**2)
    g["W1"], g["b1"] = X.T @ dpre, dpre.sum(axis=0)
    lr = 0.01
    _cope.update(pol, Adam(pol.params, lr), X, logp_old, batch, config, max_steps=10)
    for name in p0:
        expected = p0[name] + lr * g[name] / (np.abs(g[name]) + 1e-8)
        np.testing.assert_allclose(pol.params[name], expected, rtol=0, atol=1e-12,
                                   err_msg=name)
    # The numbers themselves, so that a change to the hand computation cannot pass silently:
    # the forecast biases' gradient Σ_targets (λ/N_fc)(e_a − q) and the biases after the step.
    np.testing.assert_allclose(g["c"], [[0.034224725414, -0.103622419643, 0.06832429189,
                                         0.001073402339],
                                        [0.08244265344, -0.026965845252, -0.04420012192,
                                         -0.011276686268]], atol=1e-11)
    np.testing.assert_allclose(pol.params["c"][0], [-0.084391065597, 0.331455134563,
                                                    -0.023258661538, 0.343623687256],
                               atol=1e-11)
    assert abs(g["c"].sum()) < 1e-15  # each target's (e_a − q) sums to zero


def test_zero_forecast_weight_is_grpo_bit_for_bit() -> None:
    rng = np.random.default_rng(11)
    X = rng.normal(size=(4, 3))
    batch = _batch()
    a, b = _policy(rng, heads=3), None
    b = BackbonePolicy(np.random.default_rng(0), 3, 5, heads=0)
    b.params.update({k: v.copy() for k, v in a.params.items() if k in b.params})
    logp_old = np.array([_log_softmax(z) for z in a.head(a.represent(X)[0])])
    opt_a, opt_b = Adam(a.params, 0.05), Adam(b.params, 0.05)
    cope = _cope.CoPEConfig(forecast_weight=0.0, forecast_horizon=3)
    grpo = _grpo.GRPOConfig()
    for _ in range(3):
        _cope.update(a, opt_a, X, logp_old, batch, cope, 10)
        _grpo.update(b, opt_b, X, logp_old, batch, grpo, 10)
    for name in b.params:
        np.testing.assert_array_equal(a.params[name], b.params[name])
    np.testing.assert_array_equal(a.params["V"], 0.0 * a.params["V"] + a.params["V"])


def test_a_policy_without_forecast_heads_is_refused_naming_the_fix() -> None:
    pol = BackbonePolicy(np.random.default_rng(0), 3, 4, heads=1)
    with pytest.raises(ValueError, match=r"cope needs a backbone policy with forecast_horizon=4"):
        _cope.update(pol, Adam(pol.params, 0.1), np.ones((4, 3)), np.full((4, 4), LOG_REF),
                     _batch(), _cope.CoPEConfig(), 10)


def test_cope_options_are_validated_and_unknown_ones_refused() -> None:
    from rlscale.simulate import ALGORITHMS, TrainConfig

    cope = ALGORITHMS["cope"]
    assert cope.options(forecast_horizon=3).forecast_horizon == 3
    with pytest.raises(ValueError, match="forecast_weight must be >= 0"):
        cope.options(forecast_weight=-0.1)
    with pytest.raises(ValueError, match="forecast_horizon"):
        cope.options(forecast_horizon=0)
    with pytest.raises(ValueError, match=r"algorithm 'grpo' takes no option forecast_weight"):
        TrainConfig(algorithm="grpo", forecast_weight=0.5)
    with pytest.raises(ValueError, match=r"algorithm 'cope' trains 4 forecast heads .* "
                                         r"use policy 'backbone'"):
        TrainConfig(algorithm="cope", policy="linear")


def test_forecasting_costs_nothing_at_acting_time() -> None:
    """The trained policy acts from the action head alone: zeroing the heads changes no
    action probability (the evaluation never reads them)."""
    from rlscale.simulate import train

    res = train(algorithm="cope", n_environments=4, tasks_per_environment=2, epochs=2,
                eval_environments=4, seed=1)
    assert res.config.policy == "backbone" and res.forecast_loss.shape == (res.updates,)
    assert np.all(res.forecast_loss > 0)
    pol = BackbonePolicy(np.random.default_rng(0), 27, 32, heads=4)
    pol.params = {k: v.copy() for k, v in res.params.items()}
    X = np.random.default_rng(2).normal(size=(6, 27))
    before = pol.logits(X)[0]
    pol.params["V"][:] = 0.0
    pol.params["c"][:] = 0.0
    np.testing.assert_array_equal(pol.logits(X)[0], before)


def test_the_studys_steps_to_level_and_area_by_hand() -> None:
    from benchmarks.cope_study import area, steps_to_level

    curve = np.array([[1, 100.0, 0, 0.3], [2, 200.0, 0, 0.5], [3, 300.0, 0, 0.4]])
    # From (0, 0.1): the level 0.4 is crossed between (100, 0.3) and (200, 0.5), at 150.
    assert steps_to_level(curve, 0.4, 0.1) == (150.0, True)
    assert steps_to_level(curve, 0.9, 0.1) == (300.0, False)   # censored at its last count
    assert steps_to_level(curve, 0.05, 0.1) == (1.0, True)     # reached before training
    # Mean of the piecewise-linear curve on [0, 200]: trapezoids (0.1+0.3)/2, (0.3+0.5)/2.
    assert area(curve, 0.1, 200.0, points=200001) == pytest.approx(0.3, abs=1e-5)
