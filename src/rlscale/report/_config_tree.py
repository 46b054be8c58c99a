"""The report's configuration as a frozen tree: one dataclass per TOML table.

:mod:`rlscale.report._config` merges the defaults, ``--quick`` and a TOML file
(unknown keys and wrong types refused there, table by table); building this
tree checks every value: each table's ``__post_init__`` checks its own values,
:class:`ReportConfig`'s those that span tables (the sweep must vary every axis
of the law; the budgets must buy the cheapest plans under ``[costs]``).  So a
tree that exists is a checked one, however it was made (``load``,
:func:`rlscale.report._typed.build`, :func:`dataclasses.replace`).
:meth:`ReportConfig.load` is what every step reads: ``cfg.fit.bootstrap``, not
``config["fit"]["bootstrap"]``.  :meth:`ReportConfig.as_dict` is the checked
dict again (``results.json``'s ``config``, ``config.toml``, what
:func:`rlscale.report.load_config` returns).

Examples
--------
>>> cfg = ReportConfig.load(quick=True)
>>> cfg.fit.bootstrap, cfg.costs.environment, cfg.sweep.base.environments
(200, 20.0, 8)
>>> cfg.costs.text()
'20.0*E + 2.0*E*t + 0.1*E*t*k'
>>> from rlscale.report import load_config
>>> cfg.as_dict() == load_config(quick=True)
True
>>> from dataclasses import replace
>>> replace(cfg.fit, confidence=1.5)
Traceback (most recent call last):
...
ValueError: fit.confidence must be > 0 and < 1; got fit.confidence=1.5
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rlscale.report._typed import build, plain
from rlscale.theory import check_positive_int, check_real
from rlscale.theory._axes import AXES as DATA_AXES

__all__ = ["AllocationConfig", "CostsConfig", "EfficiencyConfig", "FitConfig",
           "InferenceConfig", "NextRunsConfig", "ReportConfig", "SweepBase", "SweepConfig",
           "SynthesisConfig", "as_tree"]


def _check_mode(table: str, mode: str) -> None:
    if mode not in ("glance", "quick", "full"):
        raise ValueError(f"{table}.mode must be 'glance', 'quick' or 'full'; got {mode!r}")


@dataclass(frozen=True)
class ModeConfig:
    """``[reward_law]``: the grid of the Gaussian selection model's verification."""

    mode: str

    def __post_init__(self) -> None:
        _check_mode("reward_law", self.mode)


@dataclass(frozen=True)
class TrainerLawConfig:
    """``[reward_law_trainer]``: the reward law in the RL trainer."""

    enabled: bool
    mode: str

    def __post_init__(self) -> None:
        _check_mode("reward_law_trainer", self.mode)


@dataclass(frozen=True)
class SweepBase:
    """``[sweep.base]``: the star design's centre (E, t, k)."""

    environments: int
    tasks_per_environment: int
    trajectories_per_task: int

    def point(self) -> dict[str, int]:
        """The centre as ``{axis: value}`` in the axes' order."""
        return plain(self)


@dataclass(frozen=True)
class SweepConfig:
    """``[sweep]``: a sweep spec exactly as for ``rlscale sweep``."""

    design: str
    seeds: tuple[int, ...]
    algorithms: tuple[str, ...]
    base: SweepBase
    axes: Mapping[str, tuple[Any, ...]]
    train: Mapping[str, Any]


#: The laws the report can fit: steps 4-5 read the additive law's per-axis terms.  (A
#: choice of the report's, not a question about the family, so not the fit registry's.)
REPORT_LAWS = ("additive",)


@dataclass(frozen=True)
class FitConfig:
    """``[fit]``: the per-axis law's fit."""

    law: str
    bootstrap: int
    confidence: float
    starts: str | int

    def __post_init__(self) -> None:
        if self.law not in REPORT_LAWS:
            raise ValueError(f"fit.law must be 'additive' (the allocation and synthesis "
                             f"steps use its per-axis terms); got {self.law!r}")
        check_positive_int("fit.bootstrap", self.bootstrap, minimum=0)
        check_real("fit.confidence", self.confidence, low=0.0, high=1.0, low_open=True,
                   high_open=True)
        if isinstance(self.starts, str):
            if self.starts not in ("auto", "grid"):
                raise ValueError(f"fit.starts must be 'auto', 'grid' or a number of starts "
                                 f">= 1; got {self.starts!r}")
        else:
            check_positive_int("fit.starts", self.starts)


@dataclass(frozen=True)
class CostsConfig:
    """``[costs]``: unit costs of an environment, a task and a trajectory."""

    environment: float
    task: float
    trajectory: float

    def __post_init__(self) -> None:
        for key, value in plain(self).items():
            check_real(f"costs.{key}", value, low=0.0, low_open=True)

    def cheapest_run(self, environments: float = 1.0, tasks: float = 1.0) -> float:
        """The cost of ``environments`` × ``tasks`` with two trajectories per task (the
        fewest GRPO trains on): the least any allocation at that ``E, t`` costs."""
        return (self.environment * environments + self.task * environments * tasks
                + 2 * self.trajectory * environments * tasks)

    def text(self) -> str:
        """The cost posynomial ``cE·E + cT·E·t + cτ·E·t·k`` on the nested variables."""
        return (f"{self.environment!r}*E + {self.task!r}*E*t + "
                f"{self.trajectory!r}*E*t*k")


@dataclass(frozen=True)
class BoundsConfig:
    """``[allocation.bounds]``: upper bounds on E, t and k."""

    E: float
    t: float
    k: float

    def __post_init__(self) -> None:
        for key, value in plain(self).items():
            check_real(f"allocation.bounds.{key}", value, low=2.0)


@dataclass(frozen=True)
class AllocationConfig:
    """``[allocation]``: the plan's budget, the curve's budgets and the bounds."""

    budget: float
    budgets: tuple[float | int, ...]
    bounds: BoundsConfig

    def __post_init__(self) -> None:
        # What needs the costs and the sweep's centre (the budgets' lower bounds) is
        # checked by ReportConfig.
        check_real("allocation.budget", self.budget)
        if len(self.budgets) != 3:
            raise ValueError(f"allocation.budgets must be [low, high, count]; got "
                             f"{list(self.budgets)!r}")
        lo, hi, count = self.budgets
        check_real("allocation.budgets[0]", lo)
        check_real("allocation.budgets[1]", hi, low=lo, low_open=True)
        if isinstance(count, bool) or not isinstance(count, int) or count < 2:
            raise ValueError(f"allocation.budgets[2] must be an integer >= 2; got {count!r}")

    def nested_bounds(self) -> dict[str, tuple[float, float]]:
        """``(lower, upper)`` per nested variable (k ≥ 2: GRPO needs two trajectories)."""
        b = self.bounds
        return {"E": (1.0, b.E), "t": (1.0, b.t), "k": (2.0, b.k)}

    def budget_grid(self) -> tuple[float, float, int]:
        """``(low, high, count)`` of the allocation and efficiency curves."""
        lo, hi, count = self.budgets
        return lo, hi, count


@dataclass(frozen=True)
class SynthesisConfig:
    """``[synthesis]``: the synthetic-environment generator and the quality filter."""

    real_environments: float
    unit_cost: float
    rho: float
    saturation: float
    quality_a: float
    quality_b: float
    gen_cost: float
    train_cost: float

    def __post_init__(self) -> None:
        check_real("synthesis.real_environments", self.real_environments, low=1.0)
        for key, value in plain(self).items():
            if key != "real_environments":
                check_real(f"synthesis.{key}", value, low=0.0, low_open=True)


@dataclass(frozen=True)
class EfficiencyConfig:
    """``[efficiency]``: the realised comparison and the recommendation."""

    seeds: tuple[int, ...]
    ladder: tuple[float, ...]
    plan_laws: int
    decision_bootstrap: int
    probability: float

    def __post_init__(self) -> None:
        for seed in self.seeds:
            check_positive_int("efficiency.seeds", seed, minimum=0)
        if len(set(self.seeds)) < 2:  # one seed gives a zero-width "interval"
            raise ValueError(f"efficiency.seeds must list at least two distinct seeds (the "
                             f"comparison reports confidence intervals); got "
                             f"{list(self.seeds)!r}")
        if not self.ladder:
            raise ValueError("efficiency.ladder must list at least one budget factor; got []")
        for factor in self.ladder:
            check_real("efficiency.ladder", factor, low=0.0, low_open=True)
        check_positive_int("efficiency.plan_laws", self.plan_laws, minimum=2)
        check_positive_int("efficiency.decision_bootstrap", self.decision_bootstrap, minimum=20)
        check_real("efficiency.probability", self.probability, low=0.5, high=1.0,
                   low_open=True, high_open=True)


@dataclass(frozen=True)
class InferenceConfig:
    """``[inference]``: the inference-budget section's trained agent."""

    enabled: bool
    environments: int
    epochs: int
    job_tasks: int
    episodes: int

    def __post_init__(self) -> None:
        for key, value in plain(self).items():
            if key != "enabled":
                check_positive_int(f"inference.{key}", value)


@dataclass(frozen=True)
class Switch:
    """A table holding only ``enabled`` (``[proofs]``)."""

    enabled: bool


@dataclass(frozen=True)
class NextRunsConfig:
    """``[next_runs]``: the pilot batch of "what to run next"."""

    enabled: bool
    budget_share: float
    method: str

    def __post_init__(self) -> None:
        from rlscale.optimize._design import METHODS

        check_real("next_runs.budget_share", self.budget_share, low=0.0, low_open=True)
        if self.method not in ("auto", *METHODS):
            raise ValueError(f"next_runs.method must be one of auto, {', '.join(METHODS)}; "
                             f"got {self.method!r}")


@dataclass(frozen=True)
class ReportConfig:
    """The whole checked configuration (see :mod:`rlscale.report._config` for the schema)."""

    seed: int
    figures: bool
    reward_law: ModeConfig
    reward_law_trainer: TrainerLawConfig
    sweep: SweepConfig
    fit: FitConfig
    costs: CostsConfig
    allocation: AllocationConfig
    synthesis: SynthesisConfig
    efficiency: EfficiencyConfig
    inference: InferenceConfig
    proofs: Switch
    next_runs: NextRunsConfig

    def __post_init__(self) -> None:
        """The checks that span tables (each table has checked its own values)."""
        check_positive_int("seed", self.seed, minimum=0)
        if not isinstance(self.figures, bool):
            raise TypeError(f"figures must be true or false; got {self.figures!r}")
        self._check_sweep_varies_every_axis()
        # The cheapest trajectories-only baseline at the sweep's centre (k = 2), and the
        # cheapest allocation inside the bounds (E = t = 1, k = 2).
        base, alloc = self.sweep.base, self.allocation
        baseline = self.costs.cheapest_run(base.environments, base.tasks_per_environment)
        check_real("allocation.budget", alloc.budget, low=round(baseline, 9))
        check_real("allocation.budgets[0]", alloc.budgets[0],
                   low=round(self.costs.cheapest_run(), 9))

    def _check_sweep_varies_every_axis(self) -> None:
        from rlscale.report._config import AXES
        from rlscale.report._sweep_runs import planned_runs
        from rlscale.sweep._run import parse_spec

        runs = planned_runs(parse_spec(self.sweep_spec()))  # the sweep's own checks first
        # Each exponent of the fitted law needs its axis to vary in the sweep.
        for axis, key in ((a.name, a.field) for a in DATA_AXES):
            values = sorted({r.config[key] for r in runs})
            if len(values) < 2:
                raise ValueError(f"the report fits a law over {', '.join(AXES)}, so the "
                                 f"sweep must vary each; {axis} takes only {values} (add it "
                                 "to [sweep.axes])")

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None, quick: bool = False
             ) -> ReportConfig:
        """Defaults, then ``--quick``, then the TOML file at ``path``, every value checked."""
        from rlscale.report._config import merged_config

        return build(cls, merged_config(path, quick=quick))

    def as_dict(self) -> dict[str, Any]:
        """The plain configuration (what :func:`rlscale.report.load_config` returns)."""
        return plain(self)

    def train_fields(self) -> dict[str, Any]:
        """The sweep's trainer fields with the report's unit costs (one cost model)."""
        c = self.costs
        return {**self.sweep.train, "unit_cost_environment": c.environment,
                "unit_cost_task": c.task, "unit_cost_trajectory": c.trajectory}

    def sweep_spec(self) -> dict[str, Any]:
        """The ``[sweep]`` table as a sweep spec (:func:`rlscale.sweep._run.parse_spec`)."""
        return {**plain(self.sweep), "train": self.train_fields()}


def as_tree(config: ReportConfig | Mapping[str, Any]) -> ReportConfig:
    """``config`` as a :class:`ReportConfig`; a plain configuration (from
    :func:`rlscale.report.load_config`, perhaps edited since) is checked again as the
    tree is built."""
    if isinstance(config, ReportConfig):
        return config
    return build(ReportConfig, config)
