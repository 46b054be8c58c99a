"""The memory family, context windows and the backbone policy (issue 27)."""

from __future__ import annotations

import numpy as np
import pytest

import rlscale.simulate as sim
from rlscale.simulate._backbone import BackbonePolicy, Window
from rlscale.simulate._collectors import TableCollector, WindowCollector, held_out
from rlscale.simulate._memory import MemoryStepper, observation_table
from rlscale.simulate._windowed import windowed_rollout


def _stacked(window: Window) -> np.ndarray:
    """The window written out as the concatenated features [φ(o_t), φ(o_{t−1}), …]."""
    n, c = window.ids.shape
    F = window.table.shape[1]
    out = np.zeros((n, c * F))
    for i in range(n):
        for j in range(c):
            if window.ids[i, j] >= 0:
                out[i, j * F:(j + 1) * F] = window.table[window.ids[i, j]]
    return out


@pytest.mark.parametrize("linear", [False, True])
def test_a_window_is_the_stacked_observations_times_w1(linear) -> None:
    rng = np.random.default_rng(0)
    table = rng.normal(size=(5, 3))
    ids = rng.integers(-1, 5, size=(9, 4))
    window = Window(ids, table)
    pol = BackbonePolicy(rng, 3, 6, context=4, heads=2, linear=linear)
    for v in pol.params.values():
        v[...] = rng.normal(size=v.shape)
    dense = BackbonePolicy(rng, 12, 6, context=1, heads=2, linear=linear)
    dense.params = {k: v.copy() for k, v in pol.params.items()}
    x = _stacked(window)
    np.testing.assert_allclose(pol.logits(window)[0], dense.logits(x)[0], atol=1e-12)
    dz, du = rng.normal(size=(9, 4)), rng.normal(size=(9, 2, 4))
    ga = pol.backward(pol.represent(window)[1], dz, du)
    gb = dense.backward(dense.represent(x)[1], dz, du)
    for name in ga:
        np.testing.assert_allclose(ga[name], gb[name], atol=1e-12, err_msg=name)


def test_lag_law_and_world_draws() -> None:
    fam = sim.MemoryFamily(length=3, lag_exponent=1.0)
    w = np.array([1.0, 2.0**-2, 3.0**-2])
    np.testing.assert_allclose(fam.lag_pmf(), w / w.sum(), rtol=1e-14)
    np.testing.assert_array_equal(sim.MemoryFamily(length=5, min_lag=5).lag_pmf(),
                                  [0, 0, 0, 0, 1])
    a, b = fam.sample(3, 2, rng=4), fam.sample(3, 2, rng=4)
    for name in ("signs", "texture", "slippery", "cue", "lag"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    same = sim.MemoryFamily(length=6, diversity=0.0).sample(5, 1, rng=0)
    assert (same.signs == same.signs[0]).all() and (same.texture == same.texture[0]).all()
    with pytest.raises(ValueError, match="min_lag must be"):
        sim.MemoryFamily(length=3, min_lag=4)


def test_the_corridor_moves_on_the_sign_and_pays_the_cue_at_the_junction() -> None:
    fam = sim.MemoryFamily(length=3, min_lag=3, slippery=0.0, distractors=0)
    world = fam.sample(1, 2, rng=1)
    table = observation_table(world)
    step = MemoryStepper(world, [0, 1], [0, 1])
    L = 3
    assert step.obs().tolist() == [L + 1, 2 * (L + 2) + L + 1 - (L + 2)]  # starts, cue shown
    np.testing.assert_array_equal(table[step.obs()[0], 5:9], np.eye(4)[world.cue[0]])
    wrong = (world.signs[0, 0] + 1) % 4
    _, success, term = step.step(np.array([wrong, world.signs[0, 0]]), None)
    assert step.pos.tolist() == [0, 1] and not term.any()
    assert step.obs().tolist() == [0, (L + 2) + 1]        # the cue is gone
    for t in (1, 2):
        step.step(np.array([world.signs[0, t - 1] if t == 1 else world.signs[0, 1],
                            world.signs[0, t]]), None)
    assert step.pos.tolist() == [2, 3]
    _, success, term = step.step(np.array([world.signs[0, 2], world.cue[1]]), None)
    assert term.tolist() == [False, True] and success.tolist() == [False, True]


def _reference_by_simulation(world, context, episodes, rng) -> np.ndarray:
    """The reference policy played step by step in Python: move on the sign, answer the cue
    if it was seen within the window, else guess."""
    out = np.zeros(world.n_tasks)
    for task in range(world.n_tasks):
        e, wins = world.task_env[task], 0
        for _ in range(episodes):
            pos, t = world.length - world.lag[task], 0
            while t < world.max_steps:
                if pos == world.length:
                    seen = t <= context - 1
                    answer = world.cue[task] if seen else rng.integers(4)
                    wins += answer == world.cue[task]
                    break
                if not (world.slippery[e] and rng.random() < 1 / 3):
                    pos += 1
                t += 1
        out[task] = wins / episodes
    return out


def test_reference_and_uniform_success_against_monte_carlo() -> None:
    fam = sim.MemoryFamily(length=5, lag_exponent=0.5, slippery=0.5, max_steps=9)
    world = fam.sample(4, 3, rng=2)
    rng = np.random.default_rng(0)
    mc = _reference_by_simulation(world, 4, 4000, rng)
    exact = sim.reference_success(world, 4)
    assert np.all(np.abs(mc - exact) < 4.5 * np.sqrt(exact * (1 - exact) / 4000) + 1e-3)
    # The uniform policy: a backbone policy starts uniform; play it with the windowed rollout.
    pol = BackbonePolicy(rng, world.n_features, 4)
    ids = np.arange(world.n_tasks)
    k = 6000
    step = MemoryStepper(world, np.repeat(ids, k), np.repeat(ids, k))
    _, _, batch = windowed_rollout(step, world.n_tasks, k, pol, observation_table(world),
                                   world.max_steps, rng, record=False)
    mc_u = batch.group(batch.reward).mean(axis=1)
    u = sim.uniform_success(world)
    assert np.all(np.abs(mc_u - u) < 4.5 * np.sqrt(u * (1 - u) / k) + 1e-3)


def test_windowed_rollout_records_time_order_and_distinct_windows() -> None:
    world = sim.MemoryFamily(length=4, min_lag=4, slippery=0.0).sample(2, 2, rng=0)
    rng = np.random.default_rng(5)
    pol = BackbonePolicy(rng, world.n_features, 8, context=3)
    ids = np.array([0, 3])
    table = observation_table(world, ids)
    step = MemoryStepper(world, np.repeat(ids, 5), np.repeat(np.arange(2), 5))
    window, logp, batch = windowed_rollout(step, 2, 5, pol, table, world.max_steps, rng)
    assert len(window) == batch.n_rows < batch.env_steps      # steps share windows
    assert len(np.unique(window.ids, axis=0)) == len(window)
    np.testing.assert_allclose(logp, sim._policies.log_probs(pol, window)[0])
    # Each trajectory's first recorded step sees only its start observation (with the cue),
    # and every later step's window begins with the previous step's window shifted by one.
    order = np.argsort(batch.traj, kind="stable")
    seq = window.ids[batch.row[order]]
    first = np.r_[True, batch.traj[order][1:] != batch.traj[order][:-1]]
    assert np.all(seq[first, 1:] == -1)
    np.testing.assert_array_equal(seq[~first, 1:], seq[np.flatnonzero(~first) - 1, :-1])
    assert batch.length.sum() == batch.env_steps


def test_window_evaluation_of_a_markov_policy_matches_the_exact_dp() -> None:
    """A context-2 policy that ignores its older slot is the context-1 policy: its Monte
    Carlo held-out success (GridStepper path) agrees with the exact DP (table path)."""
    res = sim.train(policy="backbone", n_environments=8, tasks_per_environment=2, epochs=3,
                    eval_environments=6, eval_tasks_per_environment=2, seed=3, hidden=8)
    cfg1 = res.config
    pol1 = BackbonePolicy(np.random.default_rng(0), 27, 8)
    pol1.params = {k: v.copy() for k, v in res.params.items()}
    exact = TableCollector(None).evaluate(pol1, held_out(cfg1))
    pol2 = BackbonePolicy(np.random.default_rng(0), 27, 8, context=2)
    pol2.params = {k: v.copy() for k, v in res.params.items()}
    pol2.params["W1"] = np.vstack([res.params["W1"], np.zeros_like(res.params["W1"])])
    cfg2 = sim.TrainConfig.from_dict({**cfg1.as_dict(), "context": 2, "eval_episodes": 4000})
    mc = WindowCollector(None, 4000, cfg2.eval_seed).evaluate(pol2, held_out(cfg2))
    assert np.all(np.abs(mc - exact) < 4.5 * np.sqrt(exact * (1 - exact) / 4000) + 2e-3)


def test_memory_runs_learn_and_longer_context_pays_on_long_lags() -> None:
    base = {"env": "memory", "memory_length": 4, "min_lag": 3, "lag_exponent": 0.0,
            "slippery": 0.0, "n_environments": 16, "tasks_per_environment": 4, "epochs": 16,
            "lr": 0.02, "eval_environments": 16, "eval_episodes": 64, "seed": 0}
    short = sim.train(**base, context=2)
    long = sim.train(**base, context=8)
    assert short.config.policy == long.config.policy == "backbone"
    assert long.success > long.untrained_success + 0.2
    assert long.success > short.success + 0.15
    assert short.success < short.optimal_success + 0.05  # the window-limited reference
    assert long.optimal_success > short.optimal_success


def test_config_refuses_fields_of_the_other_family_and_keeps_old_run_ids() -> None:
    from rlscale.sweep._run import run_id

    with pytest.raises(ValueError, match=r"env='memory' takes no grid_size .*memory_length"):
        sim.TrainConfig(env="memory", grid_size=8)
    with pytest.raises(ValueError, match=r"env='grid' takes no memory_length"):
        sim.TrainConfig(memory_length=4)
    with pytest.raises(ValueError, match=r"needs a policy that reads a window"):
        sim.TrainConfig(context=3, policy="mlp")
    with pytest.raises(ValueError, match="env must be one of grid, memory"):
        sim.TrainConfig(env="maze")
    with pytest.raises(ValueError, match="synthetic defects and the verifier"):
        sim.TrainConfig(env="memory", defect_rate=0.2)
    plain = sim.TrainConfig()
    assert "context" not in plain.as_dict() and "env" not in plain.as_dict()
    assert sim.TrainConfig.from_dict(plain.as_dict()) == plain
    moved = sim.TrainConfig(context=2)
    assert moved.as_dict()["context"] == 2 and moved.policy == "backbone"
    assert run_id(moved.as_dict()) != run_id(plain.as_dict())
    assert sim.TrainConfig(env="memory", context=3, unit_cost_context=0.5).cost == \
        16 + 64 + 512 + 0.5 * 512 * 3
