"""Input contracts of every public function and method of ``rlscale.simulate`` (issue 10 §6).

Every name in ``rlscale.simulate.__all__`` has a contract entry below or is a
constant/result record listed in ``RECORDS``; every public method of the public
classes has an entry or is listed in ``NO_ARGUMENTS`` (called once on a valid
object).  Each entry is fuzzed one hostile argument at a time (200 examples in
the ``ci`` profile, 5,000 in ``deep``); independent oracles where they exist.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _contract_cases import Case, make_test, public_methods
from contracts import assert_finite

import rlscale.simulate as sim
from rlscale.theory import regressional_gain

FAMILY = sim.GridFamily(size=4, subgoal_rate=0.0)
WORLD = FAMILY.sample(2, 1, rng=0)
LAKE = sim.frozen_lake("4x4")
UNIFORM = np.full((1, 3, 16, 4), 0.25)
FRONTIER = sim.soft_bon_frontier(100.0, ns=(4,), lambdas=(0.5,), trials=20, rng=0)
POLICY2 = np.full((2, 3, 16, 4), 0.25)  # uniform on WORLD's two tasks
OUTCOME = sim.run_turn_episodes(WORLD, POLICY2, [0], [2], budget=2, caps=[2], episodes=20, rng=0)
RW = sim.make_reward_world(1, rng=0, family=FAMILY)
GOLD = np.array([3.0, 1.0, -1.5, -0.05, 0.35, -0.30, 0.20, -0.40, 0.25, -0.15])
LAND = RW.landing_reward(GOLD)
SETUP = sim.make_rm_setup(1, 1, rng=0)
DELTA, MARGIN = sim.comparison_pool(SETUP, 12, rng=0)
LABELS = sim.comparison_labels(MARGIN, 1.0, rng=0)
THETA = sim.train_proxy(DELTA, LABELS, 12, "linear")
TRAINED = sim.train(n_environments=1, tasks_per_environment=1, trajectories_per_task=2,
                    epochs=1, grid_size=4, eval_environments=1, eval_tasks_per_environment=1)
MEMORY = sim.MemoryFamily(length=4, distractors=1)
MEMORY_WORLD = MEMORY.sample(2, 2, rng=0)
BT_DELTA = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.5]])
BT_Y = np.array([1.0, 0.0, 1.0, 0.0])

#: Constants and result records: no behaviour of their own to fuzz.
RECORDS = {"BANDIT_ALGORITHMS", "ALGORITHMS", "FROZEN_LAKE_MAPS", "BanditResult",
           # the algorithm protocol (its methods have entries) and the axis vocabulary
           "Algorithm", "AXES", "Axis", "CONTEXT", "SWEEP_AXES", "CoPEConfig", "MemoryWorld",
           "SelectionSample", "SoftBonFrontier", "SyntheticWorld", "VerifierReport",
           "TrainResult", "Interval", "GridWorld",
           # results of one operation each, fields only (their producers have entries)
           "EpisodeOutcome", "GeneralisingProxyGain", "PgResult", "RmSetup", "SoftOptimum",
           # built by make_reward_world (its entry below); its methods have entries
           "RewardWorld"}


def _probability(result):
    values = np.atleast_1d(result)
    assert np.all((values >= 0) & (values <= 1)), values


def _sums_to_one(p):
    assert np.allclose(np.sum(p, axis=-1), 1.0) and np.all(p >= 0)


def _nonnegative_kl(result):
    assert np.all(result.kl >= -1e-9), result.kl


def _wilson(successes, trials, confidence):
    """wilson_interval, with the interval checked to hold the observed proportion."""
    lo, hi = sim.wilson_interval(successes, trials, confidence)
    p = successes / trials
    assert 0.0 <= lo <= p + 1e-12 and p - 1e-12 <= hi <= 1.0, (lo, p, hi)
    return lo, hi


def _episodes_oracle(out):
    assert set(np.unique(out.success)) <= {False, True}
    assert np.all((out.used >= 0) & (out.used <= 4)), out.used  # budget=4 in the entry


def _evaluate_oracle(ev):
    assert np.all(ev.get("kl", 0.0) >= -1e-9)
    if "second" in ev:  # E[R²] >= E[R]² (Jensen), up to rounding
        assert np.all(ev["second"] >= ev["value"] ** 2 * (1 - 1e-9) - 1e-9)


def _trajectory_oracle(result):
    phi, _ = result
    assert np.all(phi[..., 3] <= RW.horizon) and np.all(phi[..., 3] >= 1)  # steps taken


def _labels_oracle(y):
    assert set(np.unique(y)) <= {0.0, 1.0}


def _iqm_within_range(x):
    # the IQM lies between the smallest and the largest score (1e308 scores included)
    assert -1.8e308 < x < 1.8e308


#: The fields a TrainConfig work limit names (a limit on a product names every factor).
_WORK_FIELDS = ("n_environments", "tasks_per_environment", "trajectories_per_task", "epochs",
                "tasks_per_step", "grid_size", "eval_environments", "eval_tasks_per_environment",
                "max_steps")

CASES = [
    Case("sample_selection", sim.sample_selection,
         {"n": 10.0, "noise_sd": 1.0, "K": 1.0, "trials": 64, "rng": 0, "method": "bon"},
         counts=("trials",), valid={"n": (1e300,), "trials": (2, 1000)}),
    Case("brute_force_selection", sim.brute_force_selection,
         {"n": 4, "M": 16, "noise": 1.0, "trials": 32, "rng": 0, "scheme": "margin"},
         counts=("n", "M", "trials"), names={"n": ("M",), "M": ("n",), "trials": ("n",)}),
    Case("cross_fit_gain", sim.cross_fit_gain,
         {"kl": [0.1, 0.5], "gold_halves": [[0.1, 0.2], [0.1, 0.3]], "K": 0.3}),
    Case("soft_bon_frontier", sim.soft_bon_frontier,
         {"M": 100.0, "noise": 1.0, "ns": (4,), "lambdas": (0.5,), "trials": 20, "rng": 0},
         counts=("trials",), names={"trials": ("ns",), "ns": ("trials",)}),
    Case("SoftBonFrontier.gain_at", FRONTIER.gain_at, {"K": 0.3}),
    Case("kl_bandit_optimum", sim.kl_bandit_optimum,
         {"rewards": [0.0, 1.0], "beta": 0.5, "ref_probs": [0.5, 0.5]}, oracle=_sums_to_one,
         names={"rewards": ("ref_probs",)},
         valid={"rewards": ([1e308, 1e308], [-1e308, -1e308])}),
    Case("kl_bandit_pg", sim.kl_bandit_pg,
         {"rewards": [0.0, 1.0], "beta": 0.5, "steps": 5, "batch_size": 4, "lr": 0.1,
          "algorithm": "rloo", "rng": 0},
         counts=("steps", "batch_size"), names={"steps": ("batch_size",),
                                                "batch_size": ("steps",)},
         skip_midsize=("steps", "batch_size")),
    Case("GridFamily", sim.GridFamily,
         {"size": 4, "hole_rate": 0.1, "wall_rate": 0.1, "slippery": 0.5, "subgoal_rate": 0.3,
          "max_steps": 20, "diversity": 1.0, "base_seed": 0},
         counts=("size", "max_steps", "base_seed")),
    Case("GridFamily.sample", FAMILY.sample,
         {"n_environments": 2, "tasks_per_environment": 1, "rng": 0},
         counts=("n_environments", "tasks_per_environment"),
         names={"n_environments": ("tasks_per_environment",),
                "tasks_per_environment": ("n_environments",)},
         skip_midsize=("n_environments", "tasks_per_environment")),
    Case("GridFamily.horizon", lambda: FAMILY.horizon, {}),
    Case("GridWorld.select_tasks", WORLD.select_tasks, {"ids": [0]}),
    Case("GridWorld.as_text", WORLD.as_text, {"task": 0}, counts=("task",)),
    Case("VecGridEnv", sim.VecGridEnv, {"world": WORLD, "task_ids": [0, 1], "seed": 0}),
    Case("VecGridEnv.step", lambda actions: _env().step(actions), {"actions": [0, 1]}),
    Case("frozen_lake", sim.frozen_lake, {"map_name": "4x4", "slippery": True}),
    Case("world_from_text", sim.world_from_text,
         {"rows": ["SF", "FG"], "slippery": False, "max_steps": 4}, counts=("max_steps",)),
    Case("optimal_success", sim.optimal_success,
         {"world": LAKE, "horizon": 10, "event": "success"}, counts=("horizon",),
         oracle=_probability, skip_midsize=("horizon",)),
    Case("policy_success", sim.policy_success,
         {"world": LAKE, "policy": UNIFORM, "horizon": 10}, counts=("horizon",),
         oracle=_probability, skip_midsize=("horizon",)),
    Case("synthetic_world", sim.synthetic_world,
         {"family": FAMILY, "n_environments": 2, "tasks_per_environment": 1,
          "defect_rate": 0.5, "rng": 0},
         counts=("n_environments", "tasks_per_environment"),
         names={"n_environments": ("tasks_per_environment",),
                "tasks_per_environment": ("n_environments",)},
         skip_midsize=("n_environments", "tasks_per_environment")),
    Case("verify_world", sim.verify_world, {"world": WORLD}),
    Case("TrainConfig", sim.TrainConfig,
         {"n_environments": 2, "tasks_per_environment": 2, "trajectories_per_task": 2,
          "epochs": 1, "tasks_per_step": 4, "lr": 0.05, "grid_size": 4, "hole_rate": 0.1,
          "defect_rate": 0.0, "eval_environments": 2, "unit_cost_task": 1.0, "seed": 0,
          "hidden": 8, "max_steps": 10},
         counts=("n_environments", "tasks_per_environment", "trajectories_per_task", "epochs",
                 "tasks_per_step", "grid_size", "eval_environments", "seed", "hidden",
                 "max_steps"),
         names=dict.fromkeys(_WORK_FIELDS, _WORK_FIELDS)),
    Case("Algorithm.options",
         lambda clip, kl_coef, update_epochs: sim.ALGORITHMS["grpo"].options(
             clip=clip, kl_coef=kl_coef, update_epochs=update_epochs),
         {"clip": 0.2, "kl_coef": 0.0, "update_epochs": 1}, counts=("update_epochs",)),
    Case("Algorithm.defaults", lambda: sim.ALGORITHMS["rlds"].defaults(), {}),
    Case("Algorithm.heads", sim.ALGORITHMS["cope"].heads,
         {"options": sim.ALGORITHMS["cope"].options()}),
    Case("Algorithm.update", lambda options, max_steps: _algorithm_update(options, max_steps),
         {"options": sim.ALGORITHMS["grpo"].options(), "max_steps": 8},
         counts=("max_steps",), skip_midsize=("max_steps",)),
    Case("axis", sim.axis, {"name": "E"}),
    Case("TrainConfig.from_dict", sim.TrainConfig.from_dict, {"values": {"epochs": 1}},
         names={"values": ("TrainConfig field",)}),
    Case("train", lambda **kw: _train(**kw),
         {"n_environments": 1, "tasks_per_environment": 1, "trajectories_per_task": 2,
          "epochs": 1, "grid_size": 3, "eval_environments": 1,
          "eval_tasks_per_environment": 1, "lr": 0.05},
         counts=("n_environments", "tasks_per_environment", "trajectories_per_task", "epochs",
                 "grid_size", "eval_environments", "eval_tasks_per_environment"),
         names=dict.fromkeys((*_WORK_FIELDS, "lr"), (*_WORK_FIELDS, "lr")),
         oracle=lambda r: _probability(r.success),
         skip_midsize=("n_environments", "tasks_per_environment", "trajectories_per_task",
                       "epochs", "eval_environments", "eval_tasks_per_environment"),
         deadline=30.0),
    Case("iqm", sim.iqm, {"scores": [0.1, 0.5, 0.9]}, oracle=_iqm_within_range,
         valid={"scores": ([1e308, 1e308], [-1e308, 1e308, 0.0])}),
    Case("iqm_ci", sim.iqm_ci, {"scores": [0.1, 0.5, 0.9], "n_boot": 50, "confidence": 0.9,
                                "rng": 0},
         counts=("n_boot",), names={"n_boot": ("scores",)}),
    # -- subtasks as turns of an inference budget --
    Case("wilson_interval", _wilson, {"successes": 3, "trials": 10, "confidence": 0.9},
         counts=("successes", "trials"),
         names={"successes": ("trials",), "trials": ("successes",)}),
    Case("subtask_starts", sim.subtask_starts, {"world": WORLD},
         oracle=lambda s: np.all((s >= -1) & (s < 16))),
    Case("subtask_success", sim.subtask_success,
         {"world": WORLD, "policy": POLICY2, "horizon": 5}, counts=("horizon",),
         oracle=_probability, skip_midsize=("horizon",)),
    Case("trained_policy_table", lambda **kw: sim.trained_policy_table(**kw),
         {"result": TRAINED, "world": WORLD}, oracle=_sums_to_one),
    Case("run_turn_episodes", sim.run_turn_episodes,
         {"world": WORLD, "policy": POLICY2, "turn_tasks": [0, 1], "turn_stages": [2, 2],
          "budget": 4, "caps": [2, 2], "commit": None, "fpr": 0.1, "fnr": 0.1,
          "failures": "terminal", "horizon": 5, "episodes": 20, "rng": 0},
         counts=("budget", "horizon", "episodes"),
         names={"turn_tasks": ("turn_stages",), "turn_stages": ("turn_tasks",),
                "caps": ("budget",), "commit": ("budget",), "budget": ("caps",)},
         oracle=_episodes_oracle, skip_midsize=("budget", "horizon", "episodes")),
    Case("EpisodeOutcome.interval", OUTCOME.interval, {"confidence": 0.9},
         oracle=lambda ci: 0 <= ci[0] <= OUTCOME.rate <= ci[1] <= 1),
    # -- reward-optimisation law in the trainer --
    Case("make_reward_world", sim.make_reward_world,
         {"n_environments": 1, "rng": 0, "family": FAMILY}, counts=("n_environments",),
         skip_midsize=("n_environments",)),
    Case("RewardWorld.landing_reward", RW.landing_reward, {"weights": GOLD, "columns": None}),
    Case("RewardWorld.evaluate", RW.evaluate,
         {"policy": None, "r_land": LAND, "kl": True, "second_moment": True},
         oracle=_evaluate_oracle),
    Case("sample_trajectories", sim.sample_trajectories,
         {"rw": RW, "n": 3, "rng": 0, "policy": None}, counts=("n",),
         oracle=_trajectory_oracle, skip_midsize=("n",)),
    Case("soft_optimum", sim.soft_optimum,
         {"rw": RW, "proxy_land": LAND, "gold_land": LAND, "betas": [1.0, 0.1],
          "keep_policy": False}, names={"proxy_land": ("gold_land",)},
         oracle=_nonnegative_kl),
    Case("kl_policy_gradient", sim.kl_policy_gradient,
         {"rw": RW, "proxy_land": LAND, "gold_land": LAND, "betas": [1.0], "steps": 2,
          "k": 2, "lr": 0.5, "rng": 0},
         counts=("steps", "k"), names={"steps": ("k",), "k": ("steps",)},
         oracle=_nonnegative_kl, skip_midsize=("steps", "k"), examples=60),
    Case("bt_labels", sim.bt_labels, {"gold_a": [1.0, 0.0], "gold_b": [0.0, 0.0], "s": 1.0,
                                      "rng": 0},
         names={"gold_a": ("gold_b",), "gold_b": ("gold_a",)}, oracle=_labels_oracle),
    Case("fit_bradley_terry", sim.fit_bradley_terry,
         {"delta": BT_DELTA, "y": BT_Y, "ridge": 1e-2, "max_iter": 20, "tol": 1e-10},
         counts=("max_iter",), skip_midsize=("max_iter",),
         # A delta whose rows do not match y is refused naming y ("y must have shape (1,)").
         names={"delta": ("y",), "y": ("delta",)}),
    Case("make_rm_setup", sim.make_rm_setup, {"n_opt": 1, "n_rm": 1, "rng": 0},
         counts=("n_opt", "n_rm"), skip_midsize=("n_opt", "n_rm"),
         oracle=lambda s: s.sd > 0, examples=60),
    Case("comparison_pool", sim.comparison_pool, {"setup": SETUP, "m_max": 4, "rng": 0},
         counts=("m_max",), skip_midsize=("m_max",)),
    Case("comparison_labels", sim.comparison_labels, {"margin": MARGIN, "s": 1.0, "rng": 0},
         oracle=_labels_oracle),
    Case("train_proxy", sim.train_proxy,
         {"delta": DELTA, "labels": LABELS, "M": 12, "capacity": "linear"}, counts=("M",),
         names={"labels": ("delta",), "delta": ("labels",)}),
    Case("gold_gains", sim.gold_gains,
         {"setup": SETUP, "theta": THETA, "capacity": "linear", "K": [0.1, 1.0],
          "optimisers": ("soft_vi",), "betas": [1.0, 0.1], "ref_features": None,
          "bon_ns": None, "pg_betas": None, "pg_steps": 2, "rng": 0},
         counts=("pg_steps",), names={"theta": ("capacity",), "capacity": ("theta",)},
         skip_midsize=("pg_steps",), examples=60),
    Case("generalising_proxy_gain", sim.generalising_proxy_gain,
         {"M": 100.0, "K": [1.0, 4.0], "d": 2, "noise": 1.0, "misspecification": 0.0,
          "method": "bon", "trials": 8, "rng": 0},
         counts=("d", "trials"), names={"M": ("d",), "d": ("M",)},
         oracle=lambda r: -1 <= r.rho <= 1, skip_midsize=("d", "trials")),
    # -- the memory family and the context axis (issue 27) --
    Case("MemoryFamily", sim.MemoryFamily,
         {"length": 4, "min_lag": 1, "lag_exponent": 1.0, "slippery": 0.5, "distractors": 2,
          "max_steps": 12, "diversity": 1.0, "base_seed": 0},
         counts=("length", "min_lag", "distractors", "max_steps", "base_seed"),
         names={"min_lag": ("length",), "length": ("min_lag",)}, skip_midsize=("length",)),
    Case("MemoryFamily.sample", MEMORY.sample,
         {"n_environments": 2, "tasks_per_environment": 2, "rng": 0},
         counts=("n_environments", "tasks_per_environment"),
         names={"n_environments": ("tasks_per_environment",),
                "tasks_per_environment": ("n_environments",)},
         skip_midsize=("n_environments", "tasks_per_environment")),
    Case("MemoryFamily.lag_pmf", MEMORY.lag_pmf, {}, oracle=_sums_to_one),
    Case("MemoryFamily.check_size", MEMORY.check_size,
         {"n_environments": 2, "tasks_per_environment": 2, "what": "the world"},
         names={"n_environments": ("n_environments", "world"),
                "tasks_per_environment": ("tasks_per_environment", "world")}),
    Case("MemoryFamily.horizon", lambda: MEMORY.horizon, {}),
    Case("MemoryWorld.select_tasks", MEMORY_WORLD.select_tasks, {"ids": [0]}),
    Case("reference_success", sim.reference_success, {"world": MEMORY_WORLD, "context": 3},
         counts=("context",), oracle=_probability),
    Case("uniform_success", sim.uniform_success, {"world": MEMORY_WORLD}, oracle=_probability),
    Case("iqm_ratio_ci", sim.iqm_ratio_ci,
         {"a": [0.5, 0.6], "b": [0.1, 0.2], "n_boot": 50, "confidence": 0.9, "rng": 0},
         counts=("n_boot",), names={"a": ("b", "IQM"), "b": ("a", "IQM"),
                                    "n_boot": ("scores",)}),
    Case("iqm_difference_ci", sim.iqm_difference_ci,
         {"a": [0.5, 0.6], "b": [0.1, 0.2], "n_boot": 50, "confidence": 0.9, "rng": 0},
         counts=("n_boot",), names={"a": ("b", "IQM"), "b": ("a", "IQM"),
                                    "n_boot": ("scores",)}),
]

#: Public methods without arguments (or reached through a case above), called once.
NO_ARGUMENTS = {
    "BanditResult.as_dict", "SelectionSample.as_dict", "SoftBonFrontier.as_dict",
    "VerifierReport.as_dict", "Interval.as_dict", "TrainConfig.as_dict",
    "TrainConfig.algorithm_config", "TrainConfig.family", "TrainConfig.tasks",
    "TrainConfig.trajectories", "TrainConfig.cost", "TrainResult.as_dict", "TrainResult.row",
    "TrainResult.loss", "SyntheticWorld.defective", "GridWorld.size",
    "GridWorld.n_environments", "GridWorld.n_tasks", "GridWorld.start_stage",
    "GridWorld.n_subtasks", "GridWorld.shortest_path", "VecGridEnv.reset", "VecGridEnv.cell",
    "VecGridEnv.stage", "VecGridEnv.t", "Axis.flag", "Axis.spellings", "EpisodeOutcome.rate",
    "MemoryWorld.length", "MemoryWorld.n_environments", "MemoryWorld.n_tasks",
    "MemoryWorld.n_features", "MemoryWorld.rows_per_task", "TrainConfig.windowed",
    "RewardWorld.n_tasks", "RewardWorld.n_states",
}


def _train(**kw):
    """train(), with its one documented NaN checked and set aside: ``in_band_fraction`` is NaN
    exactly when there is no frontier band (uniform task passes)."""
    import dataclasses

    res = sim.train(None, **kw)
    assert res.config.frontier is None and np.all(np.isnan(res.in_band_fraction))
    return dataclasses.replace(res, in_band_fraction=np.zeros_like(res.in_band_fraction))


def _algorithm_update(options, max_steps):
    """One GRPO step of a fresh linear policy on a 2-task batch of WORLD (hostile options and
    max_steps are refused before anything is touched)."""
    from rlscale.simulate._policies import N_FEATURES, Adam, log_probs, make_policy, state_features
    from rlscale.simulate._rollout import rollout, state_rows

    policy = make_policy("linear", np.random.default_rng(0))
    ids = np.array([0, 1])
    blocks, base = state_rows(WORLD, ids)
    phi = state_features(WORLD, ids)[blocks].reshape(-1, N_FEATURES)
    logp, _ = log_probs(policy, phi)
    batch = rollout(WORLD, ids, 2, logp, np.random.default_rng(1), base)
    return sim.ALGORITHMS["grpo"].update(policy, Adam(policy.params, 0.05), phi, logp, batch,
                                         options, max_steps)


def _env():
    return sim.VecGridEnv(WORLD, [0, 1], seed=0)


test_contract = make_test(CASES)


def test_every_public_name_and_method_has_a_contract():
    covered = {c.name for c in CASES}
    missing = [n for n in sim.__all__ if n not in covered and n not in RECORDS]
    assert not missing, f"public names without a contract entry: {missing}"
    methods = []
    for n in sim.__all__:
        obj = getattr(sim, n)
        if isinstance(obj, type):
            methods += public_methods(obj)
    missing = [m for m in methods if m not in covered and m not in NO_ARGUMENTS]
    assert not missing, f"public methods without a contract entry: {missing}"


def test_methods_without_arguments_return_finite_values():
    res = sim.train(n_environments=1, tasks_per_environment=1, trajectories_per_task=2,
                    epochs=1, grid_size=3, eval_environments=1, eval_tasks_per_environment=1)
    objs = [_train(n_environments=1, tasks_per_environment=1, trajectories_per_task=2,
                   epochs=1, grid_size=3, eval_environments=1, eval_tasks_per_environment=1),
            res.config, sim.kl_bandit_pg([0.0, 1.0], 0.5, steps=3),
            sim.sample_selection(10.0, 1.0, trials=10, rng=0), FRONTIER,
            sim.verify_world(WORLD), sim.iqm_ci([0.1, 0.2], n_boot=5),
            sim.synthetic_world(FAMILY, 2, 1, 0.5, rng=0), WORLD, _env(), OUTCOME, RW,
            sim.AXES[0], MEMORY_WORLD]
    by_class = {type(o).__name__: o for o in objs}
    for name in NO_ARGUMENTS:
        cls, attr = name.split(".")
        value = getattr(by_class[cls], attr)
        assert_finite(value() if callable(value) else value, name)


# -- the reproducers, each a regression test that failed before the fix ----------

@pytest.mark.parametrize("call", [
    lambda: sim.optimal_success(LAKE, horizon=10**308),
    lambda: sim.brute_force_selection(16, 64, trials=7 * 10**165),
    lambda: FAMILY.sample(2, 10**218),
    lambda: sim.TrainConfig(grid_size=100_000),
    lambda: sim.TrainConfig(n_environments=10**9),
    lambda: sim.sample_selection(10.0, 1.0, trials=10**12),
])
def test_counts_beyond_their_documented_limit_are_refused_at_once(call):
    with pytest.raises(ValueError, match=r"must be|limit"):
        call()


@pytest.mark.parametrize("call", [
    lambda: sim.optimal_success(LAKE, horizon=1e308),
    lambda: sim.brute_force_selection(16, 64, trials=7.7e165),
    lambda: FAMILY.sample(2, 1e218),
    lambda: sim.sample_trajectories(RW, 1e6, 0),
])
def test_floats_are_refused_as_counts(call):
    with pytest.raises(TypeError, match=r"must be an integer .*not a float"):
        call()


def test_train_config_fields_are_canonical():
    with pytest.raises(TypeError, match="n_environments"):
        sim.TrainConfig(n_environments=True)
    with pytest.raises(TypeError, match=r"tasks_per_step must be an integer .*not a float"):
        sim.TrainConfig(tasks_per_step=16.0)  # issue 22: a count is an integer
    c = sim.TrainConfig(tasks_per_step=np.int64(16), n_environments=2, unit_cost_task=2)
    assert type(c.tasks_per_step) is int and type(c.n_environments) is int
    assert type(c.unit_cost_task) is float
    assert c.as_dict() == sim.TrainConfig(tasks_per_step=16, n_environments=2,
                                          unit_cost_task=2.0).as_dict()


def test_overflow_free_statistics_against_closed_forms():
    assert sim.iqm([1e308, 1e308]) == 1e308
    np.testing.assert_array_equal(sim.kl_bandit_optimum([1e308, 1e308], 0.5), [0.5, 0.5])
    # π* ∝ exp(r/β): a reward gap of β·log 3 gives odds 3:1 at any offset
    low = 1e308 - 1e300
    beta = (1e308 - low) / math.log(3)
    p = sim.kl_bandit_optimum([1e308, low], beta)
    assert p[0] == pytest.approx(0.75, rel=1e-9)
    b = sim.kl_bandit_pg([1e308, 1e308], 1.0, steps=3, rng=0)
    assert b.expected_reward == 1e308


def test_fast_sampler_matches_the_exact_gain():
    s = sim.sample_selection(100.0, 1.0, trials=20_000, rng=3)
    assert abs(s.gold - regressional_gain(100.0, 1.0)) < 4 * s.gold_se
