"""What the report's steps hand on: one frozen outcome per step, and the inputs of a step.

A step is ``step(cfg, inputs) -> outcome``: it reads the frozen configuration
(:class:`~rlscale.report._config_tree.ReportConfig`) and the outcomes of the
steps before it (typed fields of :class:`Inputs`), writes its files into
``inputs.staging`` and returns its outcome.  An outcome's :meth:`as_dict` is its
``results.json`` section (:func:`rlscale.report._typed.plain`), and its ``key``
names that section; the document's renderers read the outcomes' attributes.

:class:`Section` is the plain-data outcome of a step not yet given its own
dataclass (its renderer still reads string keys); it is being retired step by
step (``tests/test_report_typed.py`` pins how many string-key subscripts remain).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from rlscale.report._typed import plain

if TYPE_CHECKING:  # the modules build on this one's Outcome
    from rlscale.report._outcomes_efficiency import EfficiencyFallback, EfficiencyOutcome
    from rlscale.report._outcomes_trainer_law import TrainerLawOutcome

__all__ = ["AllocationOutcome", "Band", "DesignData", "DesignTarget", "FitOutcome",
           "InferenceOutcome", "InferenceRow", "InferenceSetup", "Inputs", "LawFitRow", "ModelRow",
           "NextRunsOutcome", "Outcome", "PlanSuccess", "ProofRow", "ProofsOutcome", "ReportState",
           "Resources", "RewardLawOutcome", "RuleBatch", "Section", "StepTimings",
           "SweepOutcome", "SyntheticOutcome"]


@dataclass
class Resources:
    """What the runner lends every step (not results, never in ``results.json``).

    Attributes
    ----------
    run_ids : dict
        Per results file, the run ids this report asked for, in spec order:
        runs of an interrupted report with another configuration are pruned
        from the file before publishing.
    jobs : int
        Worker processes for the training sweeps and the law fit's bootstrap.
        The report sets it to the cores its side process leaves free: on two
        cores that is 1, and the sweeps run in the main process, because two
        worker processes beside the side process only add their start-up,
        imports and pickling (``trainer sweep`` 3.9 → 2.2 CPU s measured in
        ``rlscale report --quick``) while the two cores are busy anyway.
    """

    run_ids: dict[Path, dict[str, None]] = field(default_factory=dict)
    jobs: int = field(default_factory=lambda: min(2, os.cpu_count() or 1))


class Outcome:
    """Base of the steps' outcomes (frozen dataclasses): ``key`` names the section."""

    key: ClassVar[str]

    def as_dict(self) -> dict[str, Any]:
        """The ``results.json`` section: the outcome's plain data, keys in field order."""
        return plain(self)


@dataclass(frozen=True)
class Section:
    """The plain-data outcome of a step that has no dataclass of its own yet."""

    key: str  # type: ignore[misc]
    data: Mapping[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return dict(self.data)


@dataclass(frozen=True)
class LawFitRow:
    """One (noise, method) group of the Gaussian model's law fit."""

    noise: float
    method: str
    r2_min: float | None
    r2_smooth: float | None
    a: float
    b: float
    c: float
    n_train: int
    n_test: int
    identified: Mapping[str, bool] | None = field(default=None, metadata={"optional": True})
    identification: str | None = field(default=None, metadata={"optional": True})


@dataclass(frozen=True)
class ModelRow:
    """One model of the comparison (AIC, BIC, leave-one-regime-out RMSE)."""

    model: str
    formula: str
    params: int
    aic: float
    bic: float
    loro_rmse: float
    rss: float
    points: int


@dataclass(frozen=True)
class Band:
    """The measured band of G/√min(log M, K) against the proved one."""

    c_lo: float
    c_hi: float
    proved_c_lo: float
    proved_c_hi: float
    inside_proved: bool
    per_method: Mapping[str, Any]
    domain: Mapping[str, Any]


@dataclass(frozen=True)
class RewardLawOutcome(Outcome):
    """Step 1, the reward-optimisation law in the Gaussian selection model
    (:class:`rlscale.verification._gaussian_reward_law.RewardLawReport`)."""

    key: ClassVar[str] = "reward_law"
    mode: str
    seed: int | None
    seconds: float
    methods: tuple[str, ...]
    r2: tuple[LawFitRow, ...]
    band: Band
    comparison: tuple[ModelRow, ...]
    mc_check: Any
    files: Mapping[str, str]
    n_points: int


@dataclass(frozen=True)
class SweepOutcome(Outcome):
    """Step 2, the trainer sweep.

    ``rows`` are the runs as ``sweep.csv`` holds them and ``summary`` the IQM per
    configuration (:func:`rlscale.sweep._run.summarise`): tables whose columns are the
    trainer's (a new trainer field is a new column), read by column name.
    """

    key: ClassVar[str] = "sweep"
    runs: int
    summary: tuple[Mapping[str, Any], ...]
    rows: tuple[Mapping[str, Any], ...]
    seeds: int
    untrained_success: float
    optimal_success: float

    def column(self, name: str) -> np.ndarray:
        """One column of the runs, as floats."""
        return np.array([r[name] for r in self.rows], dtype=float)

    def fit_data(self, axes: tuple[str, ...]) -> dict[str, np.ndarray]:
        """The runs as :func:`rlscale.optimize.fit_law` data: each axis, and the loss."""
        return {**{a: self.column(a) for a in axes}, "loss": self.column("loss")}


@dataclass(frozen=True)
class FitOutcome(Outcome):
    """Step 3, the per-axis law: the fit, the elasticities at the sweep's centre and how
    sure their ordering is (the share of bootstrap laws that order each pair so)."""

    key: ClassVar[str] = "fit"
    result: Any  # rlscale.optimize.FitResult; results.json holds its as_dict()
    centre: Mapping[str, int]
    floor_min: float
    elasticities: Mapping[str, float]
    impact_ordering: tuple[str, ...]
    ordering_probability: Mapping[str, float | None]
    #: ``result.bootstrap_laws()``, rebuilt once (step 3's band, step 5's uncertainty).
    laws: tuple[Any, ...] = field(default=(), metadata={"plain": False}, compare=False)


@dataclass(frozen=True)
class SyntheticOutcome:
    """Step 4's synthetic environments: with real ones capped, with and without a priced
    generator, the critical synthetic-to-real ratio and the quality filter."""

    method: Any  # rlscale.theory.SynthesisMethod
    real_unit_cost: float
    t: float
    k: float
    real_environments: float
    real_only: Any  # rlscale.optimize.Allocation
    with_synthetic: Any  # rlscale.optimize.Allocation
    critical_ratio: Any  # the closed form's result (``ratio``, ``reason``)
    solver_ratio: float
    quality_filter: Any  # the filter's result (``threshold``, ``acceptance``)


@dataclass(frozen=True)
class AllocationOutcome(Outcome):
    """Step 4, the compute-optimal allocation: the plan at the budget, the curve over
    budgets and synthetic environments; ``problem`` is re-solved by step 5."""

    key: ClassVar[str] = "allocation"
    cost: str
    budget: float
    plan: Any  # rlscale.optimize.Allocation
    curve: tuple[Any, ...]
    synthetic: SyntheticOutcome
    problem: Any = field(default=None, metadata={"plain": False}, compare=False)


@dataclass(frozen=True)
class ProofRow:
    """One machine-checked derivation (:meth:`rlscale.proofs.ProofResult.as_dict`)."""

    name: str
    title: str
    statement: str
    passed: bool
    seconds: float
    counts: Mapping[str, int]
    checked: Any
    cited: Any
    concerns: Any
    steps: Any


@dataclass(frozen=True)
class ProofsOutcome(Outcome):
    """Step 7, the machine-checked proofs (``all_hold`` absent when disabled)."""

    key: ClassVar[str] = "proofs"
    enabled: bool
    results: tuple[ProofRow, ...]
    all_hold: bool | None = field(default=None, metadata={"optional": True})


@dataclass(frozen=True)
class InferenceSetup:
    """The trained agent and the job of the inference-budget section
    (:class:`rlscale.verification._inference_grounding.GroundingConfig`, as run)."""

    environments: int
    tasks_per_environment: int
    trajectories_per_task: int
    algorithm: str
    epochs: int
    seed: int
    job_tasks: int
    q_min: float
    job_seed: int
    budget_factors: tuple[float, ...]
    fpr: float
    fnr: float
    episodes: int
    mc_seed: int


@dataclass(frozen=True)
class PlanSuccess:
    """One plan's success: predicted (exact) and realised (Monte Carlo, Wilson interval)."""

    predicted: float
    realised: float
    low: float
    high: float
    mean_used: float


@dataclass(frozen=True)
class InferenceRow:
    """One (verifier, budget) of the inference-budget table."""

    verifier: str
    budget: int
    best_baseline: str
    plans: Mapping[str, PlanSuccess]
    static_n: Any
    baseline_success: Mapping[str, Any]
    success_ratio: float
    eta: Mapping[str, float]
    realised_eta: float
    adaptivity_gain: float
    realised_adaptivity_gain: float


@dataclass(frozen=True)
class InferenceOutcome(Outcome):
    """Section 6, an inference budget spent across the turns of a multi-turn task
    (every field but ``enabled`` absent when the section is disabled)."""

    key: ClassVar[str] = "inference"
    enabled: bool
    config: InferenceSetup | None = field(default=None, metadata={"optional": True})
    train_success: float | None = field(default=None, metadata={"optional": True})
    q: tuple[float, ...] | None = field(default=None, metadata={"optional": True})
    turn_labels: tuple[str, ...] | None = field(default=None, metadata={"optional": True})
    budgets: tuple[int, ...] | None = field(default=None, metadata={"optional": True})
    rows: tuple[InferenceRow, ...] | None = field(default=None, metadata={"optional": True})
    curves: Any = field(default=None, metadata={"optional": True})
    seconds: float | None = field(default=None, metadata={"optional": True})
    files: tuple[str, ...] | None = field(default=None, metadata={"optional": True})


@dataclass(frozen=True)
class DesignTarget:
    """Where the pilot batch should pin the law down (the design's target region)."""

    source: str
    objective: str
    points: Any = field(default=None, metadata={"optional": True})
    plans: Any = field(default=None, metadata={"optional": True})
    inside_pool_range: Any = field(default=None, metadata={"optional": True})
    notes: Any = field(default=None, metadata={"optional": True})


@dataclass(frozen=True)
class DesignData:
    """The chosen batch (:meth:`rlscale.optimize.Design.as_dict`); ``runs`` is a table
    whose columns are the pool's axes, ``runs`` and ``run_cost``."""

    method: str
    success: bool
    status: str
    message: str
    budget: float
    cost: float
    n_runs: int
    runs: tuple[Mapping[str, Any], ...]
    target: DesignTarget | None
    noise: float | None
    sd_before: Any
    sd_after: Any
    target_sd_before: float | None
    target_sd_after: float | None
    regret_before: float | None
    regret_after: float | None
    criterion: str | None
    value: float | None
    certificate: Any
    efficiency: float | None
    n_laws: int
    n_candidates: int
    n_observed: int
    notes: tuple[str, ...]
    seconds: float


@dataclass(frozen=True)
class RuleBatch:
    """What a simple rule (random, cheapest first) buys with the same budget."""

    n_runs: int
    cost: float
    target_sd_after: float | None
    regret_after: float | None


@dataclass(frozen=True)
class NextRunsOutcome(Outcome):
    """Section 5b, what to run next (:mod:`rlscale.report._next_runs`): disabled
    (``enabled`` only), refused (``error``) or a batch (``design``, ``compare``, ``file``)."""

    key: ClassVar[str] = "next_runs"
    enabled: bool
    budget: float | None = field(default=None, metadata={"optional": True})
    sweep_cost: float | None = field(default=None, metadata={"optional": True})
    budget_share: float | None = field(default=None, metadata={"optional": True})
    cost: str | None = field(default=None, metadata={"optional": True})
    error: str | None = field(default=None, metadata={"optional": True})
    design: DesignData | None = field(default=None, metadata={"optional": True})
    compare: Mapping[str, RuleBatch] | None = field(default=None, metadata={"optional": True})
    file: str | None = field(default=None, metadata={"optional": True})


@dataclass(frozen=True)
class Inputs:
    """A step's inputs besides the configuration: where it writes, the runner's
    resources, and the outcomes of the steps before it that it may read.

    ``earlier`` holds the plain sections of steps without a dataclass yet.
    """

    staging: Path
    progress: bool = False
    resources: Resources = field(default_factory=Resources)
    sweep: SweepOutcome | None = None
    fit: FitOutcome | None = None
    allocation: AllocationOutcome | None = None
    earlier: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def add(self, outcome: Any) -> Inputs:
        """These inputs with ``outcome`` available to the steps after it."""
        if isinstance(outcome, Section):
            return replace(self, earlier={**self.earlier, outcome.key: outcome.data})
        if outcome.key not in _READ_BY_LATER_STEPS:  # the independent steps: read by none
            return self
        return replace(self, **{outcome.key: outcome})


#: The outcomes a later step reads (the fields of :class:`Inputs` that hold one).
_READ_BY_LATER_STEPS = frozenset({"sweep", "fit", "allocation"})


@dataclass(frozen=True)
class StepTimings:
    """How long each step took, in the steps' order whichever process ran it: wall
    seconds, CPU seconds with the step's worker processes, and the CPU seconds of every
    process of the report (``results.json``'s ``timings``, ``cpu_timings``, ``cpu_total``)."""

    wall: Mapping[str, float] = field(metadata={"key": "timings"})
    cpu: Mapping[str, float] = field(metadata={"key": "cpu_timings"})
    cpu_total: float

    def as_dict(self) -> dict[str, Any]:
        return plain(self)


@dataclass(frozen=True)
class ReportState:
    """Every step's outcome, by section: what the document is rendered from and what
    ``results.json`` holds (each field's ``as_dict()`` under its name).

    Fields typed ``Any`` still hold a plain :class:`Section`.
    """

    reward_law: RewardLawOutcome
    reward_law_trainer: TrainerLawOutcome
    sweep: SweepOutcome
    fit: FitOutcome
    allocation: AllocationOutcome
    efficiency: EfficiencyOutcome | EfficiencyFallback
    next_runs: NextRunsOutcome
    inference: InferenceOutcome
    proofs: ProofsOutcome

    @classmethod
    def of(cls, outcomes: list[Any]) -> ReportState:
        return cls(**{o.key: o for o in outcomes})
