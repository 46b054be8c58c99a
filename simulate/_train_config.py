"""The configuration of a training run: data axes, algorithm and its options, family, limits.

A :class:`TrainConfig` is plain numbers and strings, validated and stored in one
canonical form, so a run is identified by the hash of its fields (the sweep's
``run_id``).  The data axes are named once in :mod:`rlscale.simulate._axes`
(``n_environments`` = E, ``tasks_per_environment`` = t,
``trajectories_per_task`` = k); the algorithm and the options it takes in
:mod:`rlscale.simulate._algorithms` — an option the algorithm does not take is
refused, naming both.

Random state: ``seed`` (a non-negative int) seeds every random stream of the
run through one :class:`numpy.random.SeedSequence` (see
:mod:`rlscale.simulate._random`); ``eval_seed`` the held-out world and
``base_seed`` the family's base layout.

Cost: ``cost = unit_cost_environment·E + unit_cost_task·E·t +
unit_cost_trajectory·E·t·k`` prices the data design with the user's unit
costs (the posynomial that :mod:`rlscale.optimize` allocates).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np

from rlscale.simulate._algorithms import OPTION_CHECKS, get_algorithm
from rlscale.simulate._axes import AXES
from rlscale.simulate._gridworld import MAX_SIZE, MAX_STEPS, GridFamily, check_world_size
from rlscale.simulate._value_iteration import MAX_DP_WORK
from rlscale.theory._validation import check_positive_int, check_scalar

__all__ = ["MAX_BATCH_STEPS", "MAX_COUNT", "MAX_ENV_STEPS", "MAX_HIDDEN", "TrainConfig"]



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
        Override the algorithm's defaults (``ALGORITHMS[algorithm].defaults()``);
        an option the algorithm does not take is refused with a ``ValueError``.
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
        if not isinstance(self.policy, str) or self.policy not in ("linear", "mlp"):
            kind = ValueError if isinstance(self.policy, str) else TypeError
            raise kind(f"policy must be one of linear, mlp; got policy={self.policy!r}")
        put("lr", check_scalar("lr", self.lr, low=0.0, low_open=True))
        # The algorithm's options: each validated, and one it does not take refused
        # (naming the option and the algorithm), never silently dropped.
        options = algorithm.options(**self._option_values())
        for name in OPTION_CHECKS:
            if getattr(self, name) is not None:
                put(name, getattr(options, name))
        if self.frontier is not None:
            put("frontier", _check_band(self.frontier))
        put("defect_rate", check_scalar("defect_rate", self.defect_rate, low=0.0, high=1.0))
        for name in ("unit_cost_environment", "unit_cost_task", "unit_cost_trajectory"):
            put(name, check_scalar(name, getattr(self, name), low=0.0))
        if self.eval_every is not None:
            count("eval_every")
        family = self.family  # validates the family parameters now
        for name in ("hole_rate", "wall_rate", "slippery", "subgoal_rate", "diversity"):
            put(name, getattr(family, name))
        self._check_work(family)

    def _option_values(self) -> dict[str, Any]:
        """The algorithm options given (``None``: the algorithm's default)."""
        return {name: getattr(self, name) for name in OPTION_CHECKS}

    def _check_work(self, family: GridFamily) -> None:
        """Refuse up front a run whose worlds or training would not fit (estimated sizes)."""
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
        """The algorithm's options object (its defaults, overridden by the fields given)."""
        return get_algorithm(self.algorithm).options(**self._option_values())

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
