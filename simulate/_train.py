"""Train a shared policy on E environments × t tasks × k trajectories; evaluate on unseen ones.

The three data axes:

* ``n_environments`` (E) layouts are drawn from the family (seeded by
  ``seed``);
* ``tasks_per_environment`` (t) tasks are posed in each, ``E·t`` in all;
* ``trajectories_per_task`` (k) rollouts of a task form one GRPO group each
  time the task is trained on.

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

import functools
import math
import time
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np

from rlscale.simulate import _dr_grpo, _grpo, _reinforce, _rlds, _rloo
from rlscale.simulate._gridworld import MAX_SIZE, MAX_STEPS, N_STAGES, GridFamily, check_world_size
from rlscale.simulate._policies import N_FEATURES, Adam, log_probs, make_policy, state_features
from rlscale.simulate._rollout import LOG_REF, group_stats, rollout, state_rows
from rlscale.simulate._synthetic_envs import synthetic_world, verify_world
from rlscale.simulate._value_iteration import MAX_DP_WORK, optimal_success, policy_success
from rlscale.theory._validation import check_positive_int, check_real

__all__ = ["ALGORITHMS", "TrainConfig", "TrainResult", "train"]

#: Algorithm name -> (module with ``update``, its config dataclass).
ALGORITHMS: dict[str, tuple[Any, type]] = {
    "reinforce": (_reinforce, _reinforce.ReinforceConfig),
    "rloo": (_rloo, _rloo.RLOOConfig),
    "grpo": (_grpo, _grpo.GRPOConfig),
    "dr_grpo": (_dr_grpo, _dr_grpo.DrGRPOConfig),
    "rlds": (_rlds, _rlds.RLDSConfig),
}


#: Documented limits of a training run: counts, hidden units, the env steps of one
#: update held in memory, and the env steps of the whole run (an upper bound:
#: every rollout running to the time limit; 1e9 is about four minutes at the
#: measured 4e6 env steps/s).  Worlds are limited by ``MAX_TASK_CELLS``.
MAX_COUNT = 10**9
MAX_HIDDEN = 4096
MAX_BATCH_STEPS = 10**7
MAX_ENV_STEPS = 10**9


def _check_band(frontier: Any) -> tuple[float, float]:
    """``frontier`` as a ``(low, high)`` pair of floats with ``0 <= low <= high <= 1``."""
    text = f"frontier must be (low, high) with 0 <= low <= high <= 1; got frontier={frontier!r}"
    if isinstance(frontier, str) or not isinstance(frontier, tuple | list | np.ndarray):
        raise TypeError(text)
    if any(isinstance(x, bool | np.bool_ | str | bytes) for x in frontier):
        raise ValueError(text)
    try:
        band = tuple(float(x) for x in frontier)
    except (TypeError, ValueError):
        raise ValueError(text) from None
    if len(band) != 2 or not 0.0 <= band[0] <= band[1] <= 1.0:
        raise ValueError(text)
    return band  # type: ignore[return-value]


@dataclass(frozen=True)
class TrainConfig:
    """Everything that defines a training run (all fields are plain numbers or strings).

    Attributes
    ----------
    n_environments, tasks_per_environment, trajectories_per_task : int
        The data axes E, t and k (``k >= 2``: a group needs two rollouts).
    algorithm : str
        ``reinforce``, ``rloo``, ``grpo``, ``dr_grpo`` or ``rlds``.
    seed : int
        Seeds the training world, the policy's initialisation, the rollouts
        and the task schedule (independent streams of one ``SeedSequence``).
    steps : int, optional
        Number of updates; default ``ceil(epochs·E·t / tasks_per_step)``.
    epochs, tasks_per_step : int
        Passes over the tasks, and tasks (groups) per update.
    policy, hidden : str, int
        ``linear`` or ``mlp`` (with ``hidden`` tanh units).
    lr : float
        Adam learning rate.
    clip, kl_coef, update_epochs : optional
        Override the algorithm's defaults (see its module).
    frontier : (float, float), optional
        Pass-rate band of frontier-task selection; ``None``: uniform passes.
    grid_size, hole_rate, wall_rate, slippery, subgoal_rate, max_steps, diversity, base_seed
        The environment family (:class:`GridFamily`).
    defect_rate, verify
        Corrupt this share of the training environments
        (:func:`synthetic_world`) and optionally filter them
        (:func:`verify_world`).
    eval_environments, eval_tasks_per_environment, eval_seed
        The held-out world, drawn from the family with ``eval_seed`` (an
        independent stream, the same for every training seed).
    unit_cost_environment, unit_cost_task, unit_cost_trajectory : float
        Unit costs of the data design (``cost`` column).

    Examples
    --------
    >>> TrainConfig(n_environments=8).tasks
    32
    >>> TrainConfig(algorithm="ppo")
    Traceback (most recent call last):
    ...
    ValueError: algorithm must be one of reinforce, rloo, grpo, dr_grpo, rlds; got algorithm='ppo'
    """

    n_environments: int = 16
    tasks_per_environment: int = 4
    trajectories_per_task: int = 8
    algorithm: str = "grpo"
    seed: int = 0
    steps: int | None = None
    epochs: int = 4
    tasks_per_step: int = 16
    policy: str = "linear"
    hidden: int = 32
    lr: float = 0.05
    clip: float | None = None
    kl_coef: float | None = None
    update_epochs: int | None = None
    frontier: tuple[float, float] | None = None
    # The environment family, flattened so a config is plain numbers; the
    # defaults are GridFamily's own, so the two cannot drift apart.
    grid_size: int = GridFamily.size
    hole_rate: float = GridFamily.hole_rate
    wall_rate: float = GridFamily.wall_rate
    slippery: float = GridFamily.slippery
    subgoal_rate: float = GridFamily.subgoal_rate
    max_steps: int | None = GridFamily.max_steps
    diversity: float = GridFamily.diversity
    base_seed: int = GridFamily.base_seed
    # Synthetic-environment defects and the verifier filter.
    defect_rate: float = 0.0
    verify: bool = False
    # Held-out evaluation.
    eval_environments: int = 64
    eval_tasks_per_environment: int = 4
    eval_seed: int = 2026
    # Unit costs of the data design.
    unit_cost_environment: float = 1.0
    unit_cost_task: float = 1.0
    unit_cost_trajectory: float = 1.0

    def __post_init__(self) -> None:
        # Every field is checked and stored in its declared type (16.0 -> 16, 1 -> 1.0 for a
        # float field), so a configuration has one canonical form: results and run ids
        # never depend on how a number was written.
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        def count(name: str, minimum: int = 1, maximum: int | None = MAX_COUNT) -> None:
            put(name, check_positive_int(name, getattr(self, name), minimum=minimum,
                                         maximum=maximum))

        for name in ("n_environments", "tasks_per_environment", "epochs", "tasks_per_step",
                     "eval_environments", "eval_tasks_per_environment"):
            count(name)
        count("hidden", maximum=MAX_HIDDEN)
        count("trajectories_per_task", minimum=2)
        count("grid_size", minimum=3, maximum=MAX_SIZE)
        for name in ("seed", "base_seed", "eval_seed"):
            count(name, minimum=0, maximum=None)
        if not isinstance(self.verify, bool | np.bool_):
            raise TypeError(f"verify must be True or False; got verify={self.verify!r}")
        put("verify", bool(self.verify))
        if self.steps is not None:
            count("steps")
        if self.update_epochs is not None:
            count("update_epochs", maximum=1000)
        if self.max_steps is not None:
            count("max_steps", maximum=MAX_STEPS)
        for name, choices in (("algorithm", tuple(ALGORITHMS)), ("policy", ("linear", "mlp"))):
            value = getattr(self, name)
            if not isinstance(value, str) or value not in choices:
                kind = ValueError if isinstance(value, str) else TypeError
                raise kind(f"{name} must be one of {', '.join(choices)}; got {name}={value!r}")
        put("lr", float(check_real("lr", self.lr, low=0.0, low_open=True)))
        if self.clip is not None:
            put("clip", float(check_real("clip", self.clip, low=0.0, low_open=True)))
        if self.kl_coef is not None:
            put("kl_coef", float(check_real("kl_coef", self.kl_coef, low=0.0)))
        if self.frontier is not None:
            put("frontier", _check_band(self.frontier))
        put("defect_rate", float(check_real("defect_rate", self.defect_rate, low=0.0, high=1.0)))
        for name in ("unit_cost_environment", "unit_cost_task", "unit_cost_trajectory"):
            put(name, float(check_real(name, getattr(self, name), low=0.0)))
        family = self.family  # validates the family parameters now
        for name in ("hole_rate", "wall_rate", "slippery", "subgoal_rate", "diversity"):
            put(name, getattr(family, name))
        # An option the chosen algorithm does not take is an error, not silently dropped.
        takes = {f.name for f in fields(ALGORITHMS[self.algorithm][1])}
        dropped = [k for k in ("clip", "kl_coef", "update_epochs")
                   if getattr(self, k) is not None and k not in takes]
        if dropped:
            raise ValueError(f"algorithm {self.algorithm!r} takes no option {dropped[0]} "
                             f"(its options: {', '.join(sorted(takes)) or 'none'}); got "
                             f"{dropped[0]}={getattr(self, dropped[0])!r}")
        self._check_work(family)

    def _check_work(self, family: GridFamily) -> None:
        """Refuse up front a run whose worlds or training would not fit (estimated sizes)."""
        check_world_size(self.tasks, self.grid_size, "the training world")
        eval_tasks = self.eval_environments * self.eval_tasks_per_environment
        check_world_size(eval_tasks, self.grid_size, "the held-out world")
        dp = family.horizon * eval_tasks * self.grid_size**2
        if dp > MAX_DP_WORK:
            raise ValueError(f"exact evaluation needs horizon·tasks·cells = {dp:.3g} > "
                             f"{MAX_DP_WORK:.0e}: use fewer eval_environments or "
                             "eval_tasks_per_environment, or a smaller grid_size or max_steps")
        if self.verify:
            dp = family.horizon * self.tasks * self.grid_size**2
            if dp > MAX_DP_WORK:
                raise ValueError(f"the verifier needs horizon·tasks·cells = {dp:.3g} > "
                                 f"{MAX_DP_WORK:.0e}: use fewer environments or tasks, or a "
                                 "smaller grid_size or max_steps")
        B = min(self.tasks_per_step, self.tasks)
        batch = B * self.trajectories_per_task * family.horizon
        if batch > MAX_BATCH_STEPS:
            raise ValueError(f"one update would hold tasks_per_step·trajectories_per_task·"
                             f"max_steps = {batch:.3g} > {MAX_BATCH_STEPS:.0e} steps in memory "
                             f"(about {batch * 100 / 2**30:.2g} GiB): lower tasks_per_step, "
                             "trajectories_per_task or max_steps")
        updates = self.steps or math.ceil(self.epochs * self.tasks / B)
        steps = updates * B * self.trajectories_per_task * family.horizon
        if steps > MAX_ENV_STEPS:
            raise ValueError(f"the run could take up to {steps:.3g} environment steps "
                             f"(updates·tasks_per_step·trajectories_per_task·max_steps) > "
                             f"{MAX_ENV_STEPS:.0e} (about 4 minutes); lower epochs or steps, "
                             "or the data axes")

    @property
    def family(self) -> GridFamily:
        return GridFamily(size=self.grid_size, hole_rate=self.hole_rate,
                          wall_rate=self.wall_rate, slippery=self.slippery,
                          subgoal_rate=self.subgoal_rate, max_steps=self.max_steps,
                          diversity=self.diversity, base_seed=self.base_seed)

    @property
    def tasks(self) -> int:
        return self.n_environments * self.tasks_per_environment

    @property
    def trajectories(self) -> int:
        return self.tasks * self.trajectories_per_task

    @property
    def cost(self) -> float:
        return (self.unit_cost_environment * self.n_environments
                + self.unit_cost_task * self.tasks
                + self.unit_cost_trajectory * self.trajectories)

    def algorithm_config(self) -> Any:
        _, cls = ALGORITHMS[self.algorithm]
        names = {f.name for f in fields(cls)}
        given = {k: getattr(self, k) for k in ("clip", "kl_coef", "update_epochs")
                 if k in names and getattr(self, k) is not None}
        return cls(**given)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TrainConfig:
        """Build from a mapping, rejecting unknown keys with the valid ones listed."""
        if not isinstance(values, dict):
            raise TypeError(f"values must be a mapping of TrainConfig fields; got "
                            f"values={values!r:.80}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(map(str, set(values) - known))
        if unknown:
            raise ValueError(f"unknown TrainConfig field(s) {unknown}; valid: {sorted(known)}")
        values = dict(values)
        if isinstance(values.get("frontier"), list):  # TOML and JSON arrays
            values["frontier"] = tuple(values["frontier"])
        return cls(**values)


@dataclass(frozen=True)
class TrainResult:
    """Outcome of :func:`train`; histories have one entry per update.

    ``train_success`` is the batch's success rate, ``zero_advantage_fraction``
    the share of groups with equal returns, ``in_band_fraction`` the share of
    tasks in the frontier band (NaN without frontier selection: not measured),
    ``kl`` the per-step ``KL(π‖π_ref)`` to the uniform reference of the policy
    that collected the batch, estimated as the mean of
    ``log π(a|s) − log ¼`` over the batch's steps (the k1 estimator, whatever
    KL term the algorithm's loss uses), ``clip_fraction`` the share of the
    trained (state, action) pairs whose ratio left ``1 ± clip`` in the last
    epoch (0 for the unclipped ``reinforce`` and ``rloo``).
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

    @property
    def loss(self) -> float:
        return 1.0 - self.success

    def row(self) -> dict[str, Any]:
        """The run as one row of the results table (see the module docstring)."""
        c = self.config
        return {
            "environments": c.n_environments, "tasks_per_environment": c.tasks_per_environment,
            "trajectories_per_task": c.trajectories_per_task, "tasks": c.tasks,
            "trajectories": c.trajectories, "seed": c.seed, "algorithm": c.algorithm,
            "success": self.success, "loss": self.loss, "env_steps": self.env_steps,
            "cost": c.cost, "untrained_success": self.untrained_success,
            "optimal_success": self.optimal_success, "rollouts": self.rollouts,
            "updates": self.updates, "environments_kept": self.environments_kept,
            "zero_advantage_fraction": float(np.mean(self.zero_advantage_fraction)),
            "policy": c.policy,
            "frontier": "" if c.frontier is None else f"{c.frontier[0]:g}-{c.frontier[1]:g}",
            "defect_rate": c.defect_rate, "verify": int(c.verify), "seconds": self.seconds,
        }

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["config"] = self.config.as_dict()
        out["loss"] = self.loss
        return out


def _held_out(config: TrainConfig):
    """The held-out world and its optimal and untrained success (cached per process)."""
    return _held_out_cached(config.family, config.eval_environments,
                            config.eval_tasks_per_environment, config.eval_seed)


@functools.lru_cache(maxsize=8)
def _held_out_cached(family: GridFamily, n_env: int, n_tasks: int, eval_seed: int):
    rng = np.random.default_rng(np.random.SeedSequence([eval_seed, 0xE7A1]))
    world = family.sample(n_env, n_tasks, rng)
    uniform = np.full((world.n_tasks, N_STAGES, world.size**2, 4), 0.25)
    return (world, float(np.mean(optimal_success(world))),
            float(np.mean(policy_success(world, uniform))))


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
    if config is None:
        config = TrainConfig.from_dict(overrides)
    elif overrides:
        config = TrainConfig.from_dict({**config.as_dict(), **overrides})
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

    module, _ = ALGORITHMS[config.algorithm]
    algo_config = config.algorithm_config()
    policy = make_policy(config.policy, policy_rng, config.hidden)
    optimizer = Adam(policy.params, config.lr)

    T = world.n_tasks
    B = min(config.tasks_per_step, T)
    k = config.trajectories_per_task
    updates = config.steps or math.ceil(config.epochs * T / B)
    pass_rate = np.full(T, np.nan)
    order = np.empty(0, np.int64)
    hist = {key: np.empty(updates) for key in ("success", "zero", "band", "kl", "clip")}
    env_steps = 0
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
        blocks, row_base = state_rows(world, ids)
        phi = state_features(world, ids)[blocks].reshape(-1, N_FEATURES)
        logp_old, _ = log_probs(policy, phi)
        batch = rollout(world, ids, k, logp_old, rollout_rng, row_base)
        # A too-large step can drive probabilities to 0, where k3 = e^d − 1 − d overflows:
        # the overflow is detected below and reported, not left as a NaN policy.
        with np.errstate(over="ignore", invalid="ignore"):
            stats = module.update(policy, optimizer, phi, logp_old, batch, algo_config,
                                  world.max_steps)
        if not all(np.isfinite(v).all() for v in policy.params.values()):
            raise ValueError(f"training diverged at update {step + 1} of {updates} (the "
                             f"policy's parameters overflowed); lower lr (got lr={config.lr:g})")
        hist["clip"][step] = stats["clip_fraction"]
        g = group_stats(batch)
        pass_rate[ids] = batch.group(batch.success).mean(axis=1)
        hist["success"][step] = g["success"]
        hist["zero"][step] = g["zero_advantage_fraction"]
        # One KL measure for every algorithm (their own loss terms differ or are absent):
        # E_{a~π}[log π(a|s)/π_ref(a|s)] = KL(π‖π_ref), estimated at the sampled steps (k1).
        hist["kl"][step] = float(np.mean(logp_old[batch.row, batch.action])) - LOG_REF
        env_steps += batch.env_steps
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()

    held_out, optimal, untrained = _held_out(config)
    per_task = np.atleast_1d(policy_success(held_out, _policy_table(policy, held_out)))
    return TrainResult(
        config=config, success=float(np.mean(per_task)), success_per_task=per_task,
        untrained_success=untrained, optimal_success=optimal,
        train_success=hist["success"], zero_advantage_fraction=hist["zero"],
        in_band_fraction=hist["band"], kl=hist["kl"], clip_fraction=hist["clip"],
        env_steps=env_steps,
        rollouts=updates * B * k, updates=updates, environments_kept=kept,
        seconds=time.perf_counter() - start_time,
        params={name: value.copy() for name, value in policy.params.items()},
    )
