"""The configuration of a training run: data axes, algorithm and its options, family, limits.

A :class:`TrainConfig` is plain numbers and strings, validated and stored in one
canonical form, so a run is identified by the hash of its fields (the sweep's
``run_id``).  The data axes are named once in :mod:`rlscale.theory._axes`
(``n_environments`` = E, ``tasks_per_environment`` = t,
``trajectories_per_task`` = k); the algorithm and the options it takes in
:mod:`rlscale.simulate._algorithms` — an option the algorithm does not take is
refused, naming both.

Random state: ``seed`` (a non-negative int) seeds every random stream of the
run through one :class:`numpy.random.SeedSequence` (see
:mod:`rlscale.simulate._random`); ``eval_seed`` the held-out world and
``base_seed`` the family's base layout.

Cost: ``cost = unit_cost_environment·E + unit_cost_task·E·t +
unit_cost_trajectory·E·t·k + unit_cost_context·E·t·k·context`` prices the
design with the user's unit costs (the posynomial that :mod:`rlscale.optimize`
allocates; the last term, zero by default, is the compute a longer context
adds to every trajectory).

Families: ``env="grid"`` (default) or ``env="memory"``; a field of the other
family set away from its default is refused, naming the family's own fields.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np

from rlscale.simulate._algorithms import OPTION_CHECKS, get_algorithm
from rlscale.simulate._backbone import BACKBONES, MAX_CONTEXT
from rlscale.simulate._gridworld import MAX_SIZE, MAX_STEPS, GridFamily, check_world_size
from rlscale.simulate._memory import MAX_LENGTH, MemoryFamily
from rlscale.simulate._value_iteration import MAX_DP_WORK
from rlscale.theory._axes import AXES
from rlscale.theory._validation import check_positive_int, check_scalar

__all__ = ["ENVS", "MAX_BATCH_STEPS", "MAX_COUNT", "MAX_ENV_STEPS", "MAX_HIDDEN", "POLICIES",
           "TrainConfig"]

#: Environment families: the fully observed gridworld and the memory (cue-corridor) family.
ENVS = ("grid", "memory")
#: Policy kinds (the first two read the gridworld's 27 state features only).
POLICIES = ("linear", "mlp", *BACKBONES)
#: Fields of each family's own (the rest — slippery, max_steps, diversity, base_seed — are
#: shared); a field of the other family set away from its default is refused, not ignored.
_FAMILY_FIELDS = {
    "grid": ("grid_size", "hole_rate", "wall_rate", "subgoal_rate"),
    "memory": ("memory_length", "min_lag", "lag_exponent", "distractors"),
}
#: Fields added after run ids were first published (issue 27), each with its default:
#: :meth:`TrainConfig.as_dict` leaves them out while at the default, so every
#: configuration that existed before keeps its ``run_id`` and results files resume.
_ADDED_FIELDS = {"forecast_weight": None, "forecast_horizon": None, "env": "grid",
                 "context": 1, "memory_length": MemoryFamily.length,
                 "min_lag": MemoryFamily.min_lag, "lag_exponent": MemoryFamily.lag_exponent,
                 "distractors": MemoryFamily.distractors, "eval_episodes": 32,
                 "unit_cost_context": 0.0}



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
        ``reinforce``, ``rloo``, ``grpo``, ``dr_grpo``, ``rlds`` or ``cope``.
    seed : int
        Seeds the training world, the policy's initialisation, the rollouts
        and the task schedule (independent streams of one ``SeedSequence``).
    steps : int, optional
        Number of updates; default ``ceil(epochs·E·t / tasks_per_step)``.
    epochs, tasks_per_step : int
        Passes over the tasks, and tasks (groups) per update.
    policy, hidden : str, int
        ``linear`` or ``mlp`` (with ``hidden`` tanh units) on the gridworld's
        state features, or a shared-backbone policy ``backbone`` (tanh) or
        ``linear_backbone`` with ``hidden`` units (:mod:`rlscale.simulate._backbone`),
        which also reads context windows and carries forecast heads.  Default
        (``None``): ``linear`` for a gridworld run with context 1 and no
        forecast heads, ``backbone`` otherwise.
    lr : float
        Adam learning rate.
    clip, kl_coef, update_epochs, forecast_weight, forecast_horizon : optional
        Override the algorithm's defaults (``ALGORITHMS[algorithm].defaults()``);
        an option the algorithm does not take is refused with a ``ValueError``.
    env : str
        ``grid`` (the gridworld family) or ``memory`` (cue corridors,
        :class:`~rlscale.simulate.MemoryFamily`).
    context : int
        The agent's context window: observations it keeps (the harness axis
        ``c``; 1 = the current observation only).
    frontier : (float, float), optional
        Pass-rate band of frontier-task selection; ``None``: uniform passes.
    grid_size, hole_rate, wall_rate, slippery, subgoal_rate, max_steps, diversity, base_seed
        The environment family (:class:`GridFamily`).
    memory_length, min_lag, lag_exponent, distractors
        The memory family's own parameters (:class:`MemoryFamily` ``length``,
        ``min_lag``, ``lag_exponent``, ``distractors``; it shares ``slippery``,
        ``max_steps``, ``diversity`` and ``base_seed``).
    defect_rate, verify
        Corrupt this share of the training environments
        (:func:`synthetic_world`) and optionally filter them
        (:func:`verify_world`).
    eval_environments, eval_tasks_per_environment, eval_seed
        The held-out world, drawn from the family with ``eval_seed`` (an
        independent stream, the same for every training seed).
    unit_cost_environment, unit_cost_task, unit_cost_trajectory, unit_cost_context : float
        Unit costs of the design (``cost`` column): the last prices one
        trajectory's context slot (compute per step grows with the context),
        ``cost = cE·E + cT·E·t + cτ·E·t·k + cc·E·t·k·context``.
    eval_episodes : int
        Monte Carlo episodes per held-out task where evaluation is not exact
        (the memory family, or context > 1).
    eval_every : int, optional
        Also evaluate the held-out success every this many updates (and after
        the last), giving ``TrainResult.curve``; ``None`` (default): only at the end.

    Examples
    --------
    >>> TrainConfig(n_environments=8).tasks
    32
    >>> TrainConfig(algorithm="ppo")
    Traceback (most recent call last):
    ...
    ValueError: algorithm must be one of reinforce, rloo, grpo, dr_grpo, rlds, cope; \
got algorithm='ppo'
    >>> TrainConfig(env="memory", algorithm="cope").policy
    'backbone'
    """

    n_environments: int = 16
    tasks_per_environment: int = 4
    trajectories_per_task: int = 8
    algorithm: str = "grpo"
    seed: int = 0
    steps: int | None = None
    epochs: int = 4
    tasks_per_step: int = 16
    policy: str | None = None
    hidden: int = 32
    lr: float = 0.05
    clip: float | None = None
    kl_coef: float | None = None
    update_epochs: int | None = None
    forecast_weight: float | None = None
    forecast_horizon: int | None = None
    env: str = "grid"
    context: int = 1
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
    # The memory family's own parameters (it shares slippery, max_steps, diversity, base_seed).
    memory_length: int = MemoryFamily.length
    min_lag: int = MemoryFamily.min_lag
    lag_exponent: float = MemoryFamily.lag_exponent
    distractors: int = MemoryFamily.distractors
    # Synthetic-environment defects and the verifier filter.
    defect_rate: float = 0.0
    verify: bool = False
    # Held-out evaluation.
    eval_environments: int = 64
    eval_tasks_per_environment: int = 4
    eval_seed: int = 2026
    eval_episodes: int = 32
    # Unit costs of the data design.
    unit_cost_environment: float = 1.0
    unit_cost_task: float = 1.0
    unit_cost_trajectory: float = 1.0
    unit_cost_context: float = 0.0
    # Held-out success against compute during training (opt-in, issue 15).
    eval_every: int | None = None

    def __post_init__(self) -> None:
        # Every field is checked and stored in its declared type (16.0 -> 16, 1 -> 1.0 for a
        # float field), so a configuration has one canonical form: results and run ids
        # never depend on how a number was written.
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        def count(name: str, minimum: int = 1, maximum: int | None = MAX_COUNT) -> None:
            put(name, check_positive_int(name, getattr(self, name), minimum=minimum,
                                         maximum=maximum))

        for axis in AXES:  # E, t, k with their minimums (k >= 2: a group needs two rollouts)
            count(axis.field, minimum=axis.minimum)
        for name in ("epochs", "tasks_per_step", "eval_environments",
                     "eval_tasks_per_environment"):
            count(name)
        count("hidden", maximum=MAX_HIDDEN)
        count("grid_size", minimum=3, maximum=MAX_SIZE)
        for name in ("seed", "base_seed", "eval_seed"):
            count(name, minimum=0, maximum=None)
        if not isinstance(self.verify, bool | np.bool_):
            raise TypeError(f"verify must be True or False; got verify={self.verify!r}")
        put("verify", bool(self.verify))
        if self.steps is not None:
            count("steps")
        if self.max_steps is not None:
            count("max_steps", maximum=MAX_STEPS)
        algorithm = get_algorithm(self.algorithm)
        if not isinstance(self.env, str) or self.env not in ENVS:
            kind = ValueError if isinstance(self.env, str) else TypeError
            raise kind(f"env must be one of {', '.join(ENVS)}; got env={self.env!r}")
        count("context", maximum=MAX_CONTEXT)
        # Under its own name: MemoryFamily's check said "length must be ..." (issue 22).
        count("memory_length", maximum=MAX_LENGTH)
        count("eval_episodes", maximum=10**6)
        for field_name in _FAMILY_FIELDS["memory" if self.env == "grid" else "grid"]:
            default = next(f.default for f in fields(self) if f.name == field_name)
            if getattr(self, field_name) != default:
                raise ValueError(f"env={self.env!r} takes no {field_name} (a field of the other "
                                 f"family; this one's are {', '.join(_FAMILY_FIELDS[self.env])}"
                                 f"); got {field_name}={getattr(self, field_name)!r}")
        put("lr", check_scalar("lr", self.lr, low=0.0, low_open=True))
        # The algorithm's options: each validated, and one it does not take refused
        # (naming the option and the algorithm), never silently dropped.
        options = algorithm.options(**self._option_values())
        for name in OPTION_CHECKS:
            if getattr(self, name) is not None:
                put(name, getattr(options, name))
        self._resolve_policy(algorithm.heads(options))
        if self.frontier is not None:
            put("frontier", _check_band(self.frontier))
        put("defect_rate", check_scalar("defect_rate", self.defect_rate, low=0.0, high=1.0))
        for name in ("unit_cost_environment", "unit_cost_task", "unit_cost_trajectory",
                     "unit_cost_context"):
            put(name, check_scalar(name, getattr(self, name), low=0.0))
        if self.eval_every is not None:
            count("eval_every")
        if self.env == "memory" and (self.defect_rate > 0 or self.verify):
            raise ValueError(f"synthetic defects and the verifier are gridworld tools; env="
                             f"'memory' takes neither (got defect_rate={self.defect_rate:g}, "
                             f"verify={self.verify})")
        family = self.family  # validates the family parameters now
        if self.env == "grid":
            for name in ("hole_rate", "wall_rate", "slippery", "subgoal_rate", "diversity"):
                put(name, getattr(family, name))
        else:
            put("lag_exponent", family.lag_exponent)
            for name in ("slippery", "diversity"):
                put(name, getattr(family, name))
        self._check_work(family)

    @property
    def windowed(self) -> bool:
        """Whether the policy acts on a window of observations (not a state table)."""
        return self.env != "grid" or self.context > 1

    def _resolve_policy(self, heads: int) -> None:
        """Fill the default policy and refuse one that cannot read the run's inputs."""
        if self.policy is None:
            simple = not self.windowed and heads == 0
            object.__setattr__(self, "policy", "linear" if simple else "backbone")
        if not isinstance(self.policy, str) or self.policy not in POLICIES:
            kind = ValueError if isinstance(self.policy, str) else TypeError
            raise kind(f"policy must be one of {', '.join(POLICIES)}; got "
                       f"policy={self.policy!r}")
        if self.policy not in BACKBONES and (self.windowed or heads):
            why = (f"algorithm {self.algorithm!r} trains {heads} forecast heads on the "
                   "policy's backbone" if heads else
                   f"env={self.env!r} with context={self.context} needs a policy that reads "
                   "a window of observations")
            raise ValueError(f"{why}: use policy 'backbone' or 'linear_backbone'; got "
                             f"policy={self.policy!r}")

    def _option_values(self) -> dict[str, Any]:
        """The algorithm options given (``None``: the algorithm's default)."""
        return {name: getattr(self, name) for name in OPTION_CHECKS}

    def _check_work(self, family: GridFamily | MemoryFamily) -> None:
        """Refuse up front a run whose worlds or training would not fit (estimated sizes)."""
        if isinstance(family, MemoryFamily):
            self._check_memory_work(family)
            return
        if self.context > 1:
            self._check_window_work(family.horizon, self.eval_environments
                                    * self.eval_tasks_per_environment)
        check_world_size(self.tasks, self.grid_size, "the training world (n_environments·"
                         "tasks_per_environment·grid_size²)")
        eval_tasks = self.eval_environments * self.eval_tasks_per_environment
        check_world_size(eval_tasks, self.grid_size, "the held-out world (eval_environments·"
                         "eval_tasks_per_environment·grid_size²)")
        dp = family.horizon * eval_tasks * self.grid_size**2
        if dp > MAX_DP_WORK:
            raise ValueError(f"exact evaluation needs max_steps·eval_environments·"
                             f"eval_tasks_per_environment·grid_size² = {dp:.3g} > "
                             f"{MAX_DP_WORK:.0e}: use fewer eval_environments or "
                             "eval_tasks_per_environment, or a smaller grid_size or max_steps")
        if self.verify:
            dp = family.horizon * self.tasks * self.grid_size**2
            if dp > MAX_DP_WORK:
                raise ValueError(f"the verifier needs max_steps·n_environments·"
                                 f"tasks_per_environment·grid_size² = {dp:.3g} > "
                                 f"{MAX_DP_WORK:.0e}: use fewer environments or tasks, or a "
                                 "smaller grid_size or max_steps")
        B = min(self.tasks_per_step, self.tasks)
        batch = B * self.trajectories_per_task * family.horizon
        if batch > MAX_BATCH_STEPS:
            raise ValueError(f"one update would hold tasks_per_step (or n_environments·"
                             f"tasks_per_environment)·trajectories_per_task·max_steps = "
                             f"{batch:.3g} > {MAX_BATCH_STEPS:.0e} steps in memory "
                             f"(about {batch * 100 / 2**30:.2g} GiB): lower tasks_per_step, "
                             "trajectories_per_task or max_steps")
        updates = self.steps or math.ceil(self.epochs * self.tasks / B)
        steps = updates * B * self.trajectories_per_task * family.horizon
        if steps > MAX_ENV_STEPS:
            raise ValueError(f"the run could take up to {steps:.3g} environment steps "
                             f"(updates = steps or epochs·n_environments·tasks_per_environment/"
                             f"tasks_per_step, x tasks_per_step·trajectories_per_task·max_steps)"
                             f" > "
                             f"{MAX_ENV_STEPS:.0e} (about 4 minutes); lower epochs or steps, "
                             "or the data axes")

    def _check_window_work(self, horizon: int, eval_tasks: int) -> None:
        """Limits of a windowed run: the ids of one update and of one evaluation."""
        B = min(self.tasks_per_step, self.tasks)
        ids = B * self.trajectories_per_task * horizon * self.context
        if ids > MAX_BATCH_STEPS:
            raise ValueError(f"one update would hold tasks_per_step·trajectories_per_task·"
                             f"max_steps·context = {ids:.3g} > {MAX_BATCH_STEPS:.0e} context "
                             "entries in memory: lower tasks_per_step, trajectories_per_task, "
                             "max_steps or context")
        work = eval_tasks * self.eval_episodes * horizon
        if work > MAX_ENV_STEPS:
            raise ValueError(f"Monte Carlo evaluation needs eval_environments·"
                             f"eval_tasks_per_environment·eval_episodes·max_steps = {work:.3g} "
                             f"> {MAX_ENV_STEPS:.0e} env steps: use fewer eval_episodes or "
                             "held-out tasks")

    def _check_memory_work(self, family: MemoryFamily) -> None:
        family.check_size(self.n_environments, self.tasks_per_environment,
                          "the training world (n_environments·tasks_per_environment)")
        family.check_size(self.eval_environments, self.eval_tasks_per_environment,
                          "the held-out world (eval_environments·eval_tasks_per_environment)")
        self._check_window_work(family.horizon, self.eval_environments
                                * self.eval_tasks_per_environment)
        B = min(self.tasks_per_step, self.tasks)
        updates = self.steps or math.ceil(self.epochs * self.tasks / B)
        steps = updates * B * self.trajectories_per_task * family.horizon
        if steps > MAX_ENV_STEPS:
            raise ValueError(f"the run could take up to {steps:.3g} environment steps "
                             f"(updates x tasks_per_step·trajectories_per_task·max_steps) > "
                             f"{MAX_ENV_STEPS:.0e}; lower epochs or steps, or the data axes")

    @property
    def family(self) -> GridFamily | MemoryFamily:
        """The environment family (:class:`GridFamily` or :class:`MemoryFamily`)."""
        if self.env == "memory":
            return MemoryFamily(length=self.memory_length, min_lag=self.min_lag,
                                lag_exponent=self.lag_exponent, slippery=self.slippery,
                                distractors=self.distractors, max_steps=self.max_steps,
                                diversity=self.diversity, base_seed=self.base_seed)
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
                + self.unit_cost_trajectory * self.trajectories
                + self.unit_cost_context * self.trajectories * self.context)

    def algorithm_config(self) -> Any:
        """The algorithm's options object (its defaults, overridden by the fields given)."""
        return get_algorithm(self.algorithm).options(**self._option_values())

    def as_dict(self) -> dict[str, Any]:
        """The fields as plain data; fields added after run ids were first published are
        left out while at their defaults (so those run ids never change)."""
        out = asdict(self)
        for name, default in _ADDED_FIELDS.items():
            if out[name] == default and type(out[name]) is type(default):
                del out[name]
        return out

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
