"""Train a shared policy on E environments × t tasks × k trajectories; evaluate on unseen ones.

The three data axes:

* ``n_environments`` (E) layouts are drawn from the family (seeded by
  ``seed``);
* ``tasks_per_environment`` (t) tasks are posed in each, ``E·t`` in all;
* ``trajectories_per_task`` (k) rollouts of a task form one GRPO group each
  time the task is trained on.

(their names in every spelling: :mod:`rlscale.theory._axes`; the
configuration: :mod:`rlscale.simulate._train_config`; the algorithms, each an
:class:`~rlscale.simulate.Algorithm`: :mod:`rlscale.simulate._algorithms`).
Random state: ``seed`` is spawned into four independent streams — world,
policy initialisation, rollouts, task schedule — by
``SeedSequence(seed).spawn(4)`` (the convention: :mod:`rlscale.simulate._random`).

A run makes ``epochs`` passes over the ``E·t`` tasks, ``tasks_per_step`` tasks
per update (``steps`` overrides the number of updates), so compute grows with
the data as in a fixed-epoch fine-tuning recipe.  Columns of the results
table: ``tasks = E·t``, ``trajectories = E·t·k`` (the data design; each
epoch collects that many rollouts), ``success`` = mean exact success
probability of the final stochastic policy on held-out tasks in held-out
environments, ``loss = 1 − success``.

Held-out evaluation is exact: the policy's success on each held-out task is
computed by dynamic programming (:func:`policy_success`), not sampled.  The
held-out world is drawn from the same family from an independent seed stream
(``eval_seed``), identical for every training seed so that runs differ only
by what they trained on.

Frontier-task selection (``frontier=(low, high)``): each task remembers the
pass rate measured at its last visit; each update draws its tasks from those
whose rate lies in ``[low, high]`` (or has not been measured), topping up
uniformly at random when too few qualify.  The fraction of groups whose
returns are all equal (zero advantage, no gradient signal) is logged every
update; at pass rate ``p`` it is ``p^k + (1−p)^k`` in expectation.

Cost: ``env_steps`` counts every environment step of training;
``cost = unit_cost_environment·E + unit_cost_task·E·t +
unit_cost_trajectory·E·t·k`` prices the data design with the user's unit
costs (the posynomial that :mod:`rlscale.optimize` allocates).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlscale.simulate._algorithms import ALGORITHMS
from rlscale.simulate._collectors import held_out, make_collector
from rlscale.simulate._policies import Adam, log_probs, make_policy, state_features
from rlscale.simulate._rollout import LOG_REF, group_stats
from rlscale.simulate._synthetic_envs import synthetic_world, verify_world
from rlscale.simulate._train_config import TrainConfig
from rlscale.theory import blas_threads
from rlscale.theory._axes import SWEEP_AXES
from rlscale.theory._result import Result

__all__ = ["ALGORITHMS", "TrainConfig", "TrainResult", "train"]

@dataclass(frozen=True)
class TrainResult(Result):
    """Outcome of :func:`train`; histories have one entry per update.

    ``train_success`` is the batch's success rate, ``zero_advantage_fraction``
    the share of groups with equal returns, ``in_band_fraction`` the share of
    tasks in the frontier band (NaN without frontier selection: not measured),
    ``kl`` the per-step ``KL(π‖π_ref)`` to the uniform reference of the policy
    that collected the batch, estimated as the mean of
    ``log π(a|s) − log ¼`` over the batch's steps (the k1 estimator, whatever
    KL term the algorithm's loss uses), ``clip_fraction`` the share of the
    trained (state, action) pairs whose ratio left ``1 ± clip`` in the last
    epoch (0 for the unclipped ``reinforce`` and ``rloo``), ``forecast_loss``
    the forecast heads' mean cross-entropy in the last epoch (``cope``; empty
    for algorithms without forecast heads).  ``optimal_success`` is the exact optimum for
    the gridworld and the memory family's reference policy
    (:func:`~rlscale.simulate._memory.reference_success`, not a bound);
    ``success`` is exact for a gridworld run with context 1 and a Monte
    Carlo mean over ``eval_episodes`` per held-out task otherwise.
    """

    config: TrainConfig
    success: float
    success_per_task: np.ndarray
    untrained_success: float
    optimal_success: float
    train_success: np.ndarray
    zero_advantage_fraction: np.ndarray
    in_band_fraction: np.ndarray
    kl: np.ndarray
    clip_fraction: np.ndarray
    env_steps: int
    rollouts: int
    updates: int
    environments_kept: int
    seconds: float
    params: dict[str, np.ndarray] = field(repr=False)
    #: With ``eval_every``: rows (update, env_steps, rollouts, held-out success)
    #: after every ``eval_every`` updates and the last; shape (0, 4) otherwise.
    curve: np.ndarray = field(default_factory=lambda: np.empty((0, 4)), repr=False)
    forecast_loss: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)

    @property
    def loss(self) -> float:
        return 1.0 - self.success

    def row(self) -> dict[str, Any]:
        """The run as one row of the results table (see the module docstring)."""
        c = self.config
        return {
            **{axis.name: getattr(c, axis.field) for axis in SWEEP_AXES}, "tasks": c.tasks,
            "trajectories": c.trajectories, "seed": c.seed, "algorithm": c.algorithm,
            "success": self.success, "loss": self.loss, "env_steps": self.env_steps,
            "cost": c.cost, "untrained_success": self.untrained_success,
            "optimal_success": self.optimal_success, "rollouts": self.rollouts,
            "updates": self.updates, "environments_kept": self.environments_kept,
            "zero_advantage_fraction": float(np.mean(self.zero_advantage_fraction)),
            "policy": c.policy, "env": c.env,
            "frontier": "" if c.frontier is None else f"{c.frontier[0]:g}-{c.frontier[1]:g}",
            "defect_rate": c.defect_rate, "verify": int(c.verify), "seconds": self.seconds,
        }

    def as_dict(self) -> dict[str, Any]:
        out = super().as_dict()
        out["config"] = self.config.as_dict()
        out["loss"] = self.loss
        return out


def _policy_table(policy, world, task_ids=None) -> np.ndarray:
    phi = state_features(world, task_ids)
    logp, _ = log_probs(policy, phi.reshape(-1, phi.shape[-1]))
    return np.exp(logp).reshape(*phi.shape[:3], 4)


def train(config: TrainConfig | None = None, *, progress: bool = False,
          **overrides: Any) -> TrainResult:
    """Train a policy and evaluate it exactly on held-out environments.

    Parameters
    ----------
    config : TrainConfig, optional
        Defaults to ``TrainConfig()``; keyword ``overrides`` replace fields.
    progress : bool
        Show a tqdm progress bar over the updates on stderr.

    Returns
    -------
    TrainResult
        Same config (seed included) → bit-identical result, except ``seconds``.

    Examples
    --------
    >>> res = train(n_environments=4, tasks_per_environment=2, trajectories_per_task=4,
    ...             epochs=2, eval_environments=8)
    >>> res.updates, res.rollouts
    (2, 64)
    >>> 0.0 <= res.success <= res.optimal_success <= 1.0
    True
    """
    if config is not None and not isinstance(config, TrainConfig):  # issue 22
        raise TypeError(f"config must be a TrainConfig or None; got {type(config).__name__} "
                        f"{config!r:.60} (pass fields as keywords: train(epochs=2))")
    if config is None:
        config = TrainConfig.from_dict(overrides)
    elif overrides:
        config = TrainConfig.from_dict({**config.as_dict(), **overrides})
    # One BLAS thread: the hot loop multiplies small matrices, where threads only add
    # synchronisation, and under load a multi-threaded OpenBLAS ran 9-15x slower
    # (issue 13, goal 8; measured on the fitter's L-BFGS-B, the same kind of work).
    with blas_threads(1):
        return _train(config, progress)


def _train(config: TrainConfig, progress: bool) -> TrainResult:
    """:func:`train` for a resolved config."""
    start_time = time.perf_counter()
    seeds = np.random.SeedSequence(config.seed).spawn(4)
    world_rng, policy_rng, rollout_rng, schedule_rng = (np.random.default_rng(s) for s in seeds)

    family = config.family
    kept = config.n_environments
    if config.defect_rate > 0 or config.verify:
        world = synthetic_world(family, config.n_environments, config.tasks_per_environment,
                                config.defect_rate, world_rng).world
        if config.verify:
            report = verify_world(world)
            if report.world is None:
                raise ValueError(f"the verifier rejected all {config.n_environments} "
                                 f"environments (defect_rate={config.defect_rate})")
            world = report.world
            kept = world.n_environments
    else:
        world = family.sample(config.n_environments, config.tasks_per_environment, world_rng)
    collector = make_collector(config, world)

    algorithm = ALGORITHMS[config.algorithm]
    options = config.algorithm_config()
    policy_heads = algorithm.heads(options)
    policy = make_policy(config.policy, policy_rng, config.hidden,
                         n_features=collector.n_features, context=config.context,
                         heads=policy_heads)
    optimizer = Adam(policy.params, config.lr)

    T = world.n_tasks
    B = min(config.tasks_per_step, T)
    k = config.trajectories_per_task
    updates = config.steps or math.ceil(config.epochs * T / B)
    pass_rate = np.full(T, np.nan)
    order = np.empty(0, np.int64)
    hist = {key: np.empty(updates) for key in ("success", "zero", "band", "kl", "clip",
                                               "forecast")}
    env_steps = 0
    curve: list[tuple[float, float, float, float]] = []
    bar = None
    if progress:
        import sys

        from tqdm import tqdm

        bar = tqdm(total=updates, desc="train", unit="update", file=sys.stderr)
    for step in range(updates):
        if config.frontier is None:
            if order.size < B:
                order = np.concatenate([order, schedule_rng.permutation(T)])
            ids, order = order[:B], order[B:]
            hist["band"][step] = np.nan
        else:
            low, high = config.frontier
            in_band = np.isnan(pass_rate) | ((pass_rate >= low) & (pass_rate <= high))
            hist["band"][step] = float(in_band.mean())
            # Random priority, eligible tasks first: without replacement within a step.
            priority = schedule_rng.random(T) + np.where(in_band, 0.0, 1.0)
            ids = np.argsort(priority, kind="stable")[:B]
        inputs, logp_old, batch = collector.collect(policy, ids, k, rollout_rng)
        # A too-large step can drive probabilities to 0, where k3 = e^d − 1 − d overflows:
        # the overflow is detected below and reported, not left as a NaN policy.
        with np.errstate(over="ignore", invalid="ignore"):
            stats = algorithm.update(policy, optimizer, inputs, logp_old, batch, options,
                                     world.max_steps)
        if not all(np.isfinite(v).all() for v in policy.params.values()):
            raise ValueError(f"training diverged at update {step + 1} of {updates} (the "
                             f"policy's parameters overflowed); lower lr (got lr={config.lr:g})")
        hist["clip"][step] = stats["clip_fraction"]
        hist["forecast"][step] = stats.get("forecast_loss", 0.0)
        g = group_stats(batch)
        pass_rate[ids] = batch.group(batch.success).mean(axis=1)
        hist["success"][step] = g["success"]
        hist["zero"][step] = g["zero_advantage_fraction"]
        # One KL measure for every algorithm (their own loss terms differ or are absent):
        # E_{a~π}[log π(a|s)/π_ref(a|s)] = KL(π‖π_ref), estimated at the sampled steps (k1).
        hist["kl"][step] = float(np.mean(logp_old[batch.row, batch.action])) - LOG_REF
        env_steps += batch.env_steps
        if config.eval_every is not None and ((step + 1) % config.eval_every == 0
                                              or step + 1 == updates):
            now = float(np.mean(collector.evaluate(policy, held_out(config))))
            curve.append((step + 1, env_steps, (step + 1) * B * k, now))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()

    held = held_out(config)
    per_task = collector.evaluate(policy, held)
    return TrainResult(
        config=config, success=float(np.mean(per_task)), success_per_task=per_task,
        untrained_success=held.untrained, optimal_success=held.optimal,
        train_success=hist["success"], zero_advantage_fraction=hist["zero"],
        in_band_fraction=hist["band"], kl=hist["kl"], clip_fraction=hist["clip"],
        env_steps=env_steps,
        rollouts=updates * B * k, updates=updates, environments_kept=kept,
        seconds=time.perf_counter() - start_time,
        params={name: value.copy() for name, value in policy.params.items()},
        curve=np.array(curve, dtype=float).reshape(-1, 4),
        forecast_loss=hist["forecast"] if policy_heads else np.empty(0),
    )
