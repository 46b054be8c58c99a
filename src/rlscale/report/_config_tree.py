"""The report's configuration as a frozen tree: one dataclass per TOML table.

:func:`rlscale.report.load_config` merges the defaults, ``--quick`` and a TOML
file and checks every value (:mod:`rlscale.report._config`); :meth:`ReportConfig.load`
is that, as this tree, and what every step reads: ``cfg.fit.bootstrap``, not
``config["fit"]["bootstrap"]``.  :meth:`ReportConfig.as_dict` is the checked
dict again (``results.json``'s ``config``, ``config.toml``).

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
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rlscale.report._typed import build, plain

__all__ = ["AllocationConfig", "CostsConfig", "EfficiencyConfig", "FitConfig",
           "InferenceConfig", "NextRunsConfig", "ReportConfig", "SweepBase", "SweepConfig",
           "SynthesisConfig", "as_tree"]


@dataclass(frozen=True)
class ModeConfig:
    """``[reward_law]``: the grid of the Gaussian selection model's verification."""

    mode: str


@dataclass(frozen=True)
class TrainerLawConfig:
    """``[reward_law_trainer]``: the reward law in the RL trainer."""

    enabled: bool
    mode: str


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


@dataclass(frozen=True)
class FitConfig:
    """``[fit]``: the per-axis law's fit."""

    law: str
    bootstrap: int
    confidence: float
    starts: str | int


@dataclass(frozen=True)
class CostsConfig:
    """``[costs]``: unit costs of an environment, a task and a trajectory."""

    environment: float
    task: float
    trajectory: float

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


@dataclass(frozen=True)
class AllocationConfig:
    """``[allocation]``: the plan's budget, the curve's budgets and the bounds."""

    budget: float
    budgets: tuple[float | int, ...]
    bounds: BoundsConfig

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


@dataclass(frozen=True)
class EfficiencyConfig:
    """``[efficiency]``: the realised comparison and the recommendation."""

    seeds: tuple[int, ...]
    ladder: tuple[float, ...]
    plan_laws: int
    decision_bootstrap: int
    probability: float


@dataclass(frozen=True)
class InferenceConfig:
    """``[inference]``: the inference-budget section's trained agent."""

    enabled: bool
    environments: int
    epochs: int
    job_tasks: int
    episodes: int


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

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None, quick: bool = False
             ) -> ReportConfig:
        """Defaults, then ``--quick``, then the TOML file at ``path``, every value checked."""
        from rlscale.report._config import load_config

        return as_tree(load_config(path, quick=quick))

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
    """``config`` as a :class:`ReportConfig` (a checked dict from ``load_config`` is
    validated again and converted)."""
    if isinstance(config, ReportConfig):
        return config
    from rlscale.report._config import validate

    validate(config)
    return build(ReportConfig, config)
