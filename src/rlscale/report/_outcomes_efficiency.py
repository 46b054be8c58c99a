"""What the report's step 5 hands on: the recommendation, judged, and the plan trained.

:class:`EfficiencyOutcome` is the step's outcome (:mod:`rlscale.report._efficiency_step`);
its ``as_dict()`` is ``results.json``'s ``efficiency`` section, key for key what the step
wrote as a dict before the report was typed (issue 25).  Library results are held live
where their ``as_dict()`` is what the section holds (a
:class:`~rlscale.optimize.Comparison`, :class:`~rlscale.optimize.RealisedEfficiency`,
:class:`~rlscale.simulate.Interval` or :class:`~rlscale.optimize.RobustPlan`); the
library's own dicts (a recommendation's steps, law counts, candidate and baselines; a
plug-in comparison's baselines; an efficiency curve's rows) are read once, into strict
mirrors (:func:`rlscale.report._typed.build`: a key the library adds or renames fails
here, in the step, not in a renderer).

When the recommendation falls back to the default baseline (the law cannot be fitted to a
fission copy, too few usable bootstrap laws, no plan solves) there is no plan to judge or
train: the step returns :class:`EfficiencyFallback` instead, whose section carries
``"schema": "efficiency-fallback/1"`` (:data:`FALLBACK_SCHEMA`), what the fallback
deploys trained, and under ``omitted`` each key of the full section it lacks with why.
A reader tells the two shapes apart by that key (the full section, whose shape predates
it, has none) or by ``recommendation.status == "fallback"``.

Those live fields are typed ``Any`` (with the type in a comment): naming the classes
would import :mod:`rlscale.optimize` and scipy with the report's document (3.5 s).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rlscale.report._outcomes import Outcome
from rlscale.report._typed import FrozenDict, build

__all__ = ["FALLBACK_SCHEMA", "SEED_BASELINE", "VARIABLES", "BaselineAtBudget", "BaselineRow",
           "Candidate", "CurveRow", "Decision", "DecisionStep", "EfficiencyFallback",
           "EfficiencyOutcome", "EqualCost", "EqualUpdates", "FallbackDeployed", "LawCounts",
           "PathPoint", "PlanRecord", "PlugInBaseline", "PlugInEta", "PredictedEta",
           "RealisedSummary", "SeedPaperPrediction", "TrainedArm", "TrainedBaseline",
           "TrainedComparison"]

#: The report's decision variables (environments, tasks per environment, trajectories per
#: task), the keys of every allocation in this section.
VARIABLES = ("E", "t", "k")

#: The seed paper's comparison: trajectories scaled alone from the sweep's centre.
SEED_BASELINE = "k only"

#: ``results.json``'s ``efficiency.schema`` when the recommendation fell back
#: (:class:`EfficiencyFallback`); a later change of that shape gets a new number.
FALLBACK_SCHEMA = "efficiency-fallback/1"


# -- the decision (rlscale.optimize.recommend) ---------------------------------------------

@dataclass(frozen=True)
class DecisionStep:
    """One step of the fixed sequence proportional → strongest → plan: the choice it
    would replace (``frm``, the plain key ``"frm"``), the challenger, the share of the
    laws (``on``) under which the challenger's loss is lower, and whether it was taken."""

    frm: str
    to: str
    p_beats: float
    taken: bool
    on: str
    # Only under recommend(guard="departure"): whether the step needed the probability.
    gated: bool | None = field(default=None, metadata={"optional": True})


@dataclass(frozen=True)
class LawCounts:
    """Bootstrap laws used on the whole sweep and on each fission copy."""

    whole: int
    selection: int
    judgement: int


@dataclass(frozen=True)
class Decision:
    """The :class:`~rlscale.optimize.Recommendation`, less its paths, baselines and
    candidate (held apart: :class:`Candidate`, :class:`BaselineRow`) and its confidence
    (the section's own): ``results.json``'s ``recommendation``."""

    choice: str
    status: str
    departs: bool
    default: str
    strongest: str
    reason: str
    values: Mapping[str, float]
    steps: tuple[DecisionStep, ...]
    probability: float
    split: float
    sigma: float
    n_laws: LawCounts
    notes: tuple[str, ...]
    method: str
    guard: str  # what the probability guarded: "every step" or "departure"
    comparisons: Mapping[str, Any]  # baseline -> rlscale.optimize.Comparison
    success: bool
    message: str

    @classmethod
    def of(cls, rec: Any) -> Decision:
        """From a :class:`~rlscale.optimize.Recommendation`."""
        return cls(choice=rec.choice, status=rec.status, departs=rec.departs,
                   default=rec.default, strongest=rec.strongest, reason=rec.reason,
                   values=FrozenDict(rec.values),
                   steps=tuple(build(DecisionStep, s) for s in rec.steps),
                   probability=rec.probability, split=rec.split, sigma=rec.sigma,
                   n_laws=build(LawCounts, rec.n_laws), notes=tuple(rec.notes),
                   method=rec.method, guard=rec.guard,
                   comparisons=FrozenDict(rec.comparisons),
                   success=rec.success, message=rec.message)


@dataclass(frozen=True)
class Candidate:
    """The best plan found, recommended or not: its allocation at the budget and its
    :class:`~rlscale.optimize.Comparison` against each baseline on the judgement copy
    (``None`` and none for a fallback, which found no plan); ``path`` is its budget path
    (a :class:`~rlscale.optimize.PlanPath`), which the step trains."""

    values: Mapping[str, float] | None
    comparisons: Mapping[str, Any]  # baseline -> rlscale.optimize.Comparison
    path: Any = field(default=None, metadata={"plain": False}, compare=False)

    @classmethod
    def of(cls, candidate: Mapping[str, Any]) -> Candidate:
        """From :attr:`Recommendation.candidate <rlscale.optimize.Recommendation>`
        (``values``, ``path``, ``comparisons``; empty for a fallback)."""
        rest = dict(candidate)
        path = rest.pop("path", None)  # the live path: not in results.json
        return build(cls, {"values": None, "comparisons": {}, **rest}, path=path)


@dataclass(frozen=True)
class PlugInBaseline:
    """A baseline against the plug-in optimum under the fit that chose it
    (:attr:`BaselineComparison.baselines <rlscale.optimize.BaselineComparison>`)."""

    values: Mapping[str, float]
    cost: float
    loss: float
    optimal_cost: float
    eta: float
    note: str


@dataclass(frozen=True)
class BaselineRow:
    """A simple baseline at the budget (the recommendation's ``values``, ``cost`` and
    ``note``), the candidate's η and P(beats) against it on the judgement copy (``None``
    when it was not judged), and the plug-in optimum's η and the baseline's loss as the
    fit that chose the optimum predicts them."""

    values: Mapping[str, float]
    cost: float
    note: str
    eta: float | None
    p_beats: float | None
    plug_in_eta: float
    loss: float


# -- trained: the plan along its path against the baselines ---------------------------------

@dataclass(frozen=True)
class TrainedArm:
    """A baseline trained at its integer allocation over the section's seeds (in
    ``results.json``: the allocation and its cost)."""

    E: int
    t: int
    k: int
    cost: float
    successes: tuple[float, ...] = field(default=(), metadata={"plain": False},
                                         compare=False)
    env_steps: float = field(default=0.0, metadata={"plain": False})  # mean over seeds
    updates: int = field(default=0, metadata={"plain": False})

    def allocation(self) -> dict[str, int]:
        return {"E": self.E, "t": self.t, "k": self.k}


@dataclass(frozen=True)
class PathPoint:
    """The plan trained at one integer allocation of its budget path: the fitted law's
    loss there and the held-out success's IQM with its interval over seeds."""

    budget: float
    E: int
    t: int
    k: int
    cost: float
    env_steps: float
    updates: int
    predicted_loss: float
    success_iqm: float
    ci_low: float
    ci_high: float
    successes: tuple[float, ...] = field(default=(), metadata={"plain": False},
                                         compare=False)


@dataclass(frozen=True)
class PredictedEta:
    """The candidate's η against a baseline on the judgement copy (the estimate of
    η_deployed: the plan was not chosen on those data), with the baseline's note."""

    eta: float
    interval: tuple[float, float]
    bound: str
    p_beats: float
    gain: float
    gain_interval: tuple[float, float]
    interval_method: str
    note: str


@dataclass(frozen=True)
class PlugInEta:
    """The plug-in optimum's η judged by the fit that chose it (biased up: the
    optimizer's curse), with its interval over the bootstrap laws."""

    eta: float
    interval: tuple[float, float]
    interval_method: str


@dataclass(frozen=True)
class EqualCost:
    """The plan's path point nearest the baseline's cost, trained."""

    E: int
    t: int
    k: int
    cost: float
    success_iqm: float
    ci_low: float
    ci_high: float
    updates: int
    baseline_updates: int


@dataclass(frozen=True)
class EqualUpdates:
    """The baseline trained again with the plan's number of updates, and the plan's
    success minus it."""

    updates: int
    difference: Any  # rlscale.simulate.Interval


@dataclass(frozen=True)
class TrainedComparison:
    """The plan against one baseline: predicted (judgement copy, plug-in) and trained
    (the realised η, by data cost and by environment steps; the success difference at
    equal cost and at equal updates)."""

    baseline: TrainedArm
    baseline_success: Any  # rlscale.simulate.Interval
    predicted: PredictedEta
    plug_in: PlugInEta
    realised: Any  # rlscale.optimize.RealisedEfficiency
    intervals_overlap: bool
    predicted_covers_realised: bool
    equal_cost: EqualCost
    difference: Any  # rlscale.simulate.Interval
    by_env_steps: Any  # rlscale.optimize.RealisedEfficiency
    equal_updates: EqualUpdates


# -- the plug-in plan, the curve, and the seed paper's comparison ---------------------------

@dataclass(frozen=True)
class PlanRecord:
    """The plug-in plan's uncertainty (:class:`~rlscale.optimize.PlanUncertainty`, less
    its point comparison and bootstrap samples)."""

    allocation_intervals: Mapping[str, tuple[float, float]]
    loss_band: tuple[float, float]
    n_laws: int
    robust: Any = field(compare=False)  # rlscale.optimize.RobustPlan (holds an array)
    robust_gain: float
    robust_point_cost: float
    notes: tuple[str, ...]
    interval_method: str
    n_skipped: int

    @classmethod
    def of(cls, unc: Any) -> PlanRecord:
        """From a :class:`~rlscale.optimize.PlanUncertainty`."""
        return cls(allocation_intervals=FrozenDict(unc.allocation_intervals),
                   loss_band=tuple(unc.loss_band), n_laws=unc.n_laws, robust=unc.robust,
                   robust_gain=unc.robust_gain, robust_point_cost=unc.robust_point_cost,
                   notes=tuple(unc.notes), interval_method=unc.method,
                   n_skipped=unc.n_skipped)


@dataclass(frozen=True)
class SeedPaperPrediction:
    """The plug-in optimum against the trajectories-only baseline at the budget, as its own
    fit predicts it (kept for readers of earlier ``results.json``)."""

    eta: float
    budget: float
    baseline_cost: float
    optimal_budget: float
    baseline_loss: float


@dataclass(frozen=True)
class CurveRow:
    """One budget of the predicted efficiency curve
    (:meth:`rlscale.optimize.EfficiencyCurve.rows`)."""

    budget: float
    baseline_loss: float
    optimal_loss: float
    optimal_budget_at_baseline_loss: float
    eta: float
    loss_ratio: float


@dataclass(frozen=True)
class RealisedSummary:
    """The trajectories-only comparison, trained (kept for readers of earlier
    ``results.json``; the same numbers as ``comparisons["k only"]``), and the plan's
    measured path."""

    budget: float
    seeds: tuple[int, ...]
    baseline: TrainedArm
    baseline_success: Any  # rlscale.simulate.Interval
    optimal_path: tuple[PathPoint, ...]
    equal_cost: EqualCost
    difference: Any  # rlscale.simulate.Interval
    iso_loss_cost: float | None
    eta: float | None
    eta_bound: str
    eta_interval: tuple[float, float] | None
    note: str


@dataclass(frozen=True)
class EfficiencyOutcome(Outcome):
    """Step 5: the recommendation judged on a fission copy, the plug-in plan's
    uncertainty, and what the plan delivers trained (:func:`efficiency_step
    <rlscale.report._efficiency_step.efficiency_step>`)."""

    key: ClassVar[str] = "efficiency"
    confidence: float
    strongest: str
    recommendation: Decision
    candidate: Candidate
    baselines: Mapping[str, BaselineRow]
    comparisons: Mapping[str, TrainedComparison]
    plan: PlanRecord
    predicted: SeedPaperPrediction
    curve: tuple[CurveRow, ...]
    curve_notes: tuple[str, ...]
    realised: RealisedSummary

    @property
    def seeds(self) -> tuple[int, ...]:
        """The seeds every trained arm of the section ran over."""
        return self.realised.seeds


# -- a fallback: no plan to judge or train ---------------------------------------------------

@dataclass(frozen=True)
class BaselineAtBudget:
    """A simple baseline at the budget, as the recommendation states it
    (:attr:`Recommendation.baselines <rlscale.optimize.Recommendation>`)."""

    values: Mapping[str, float]
    cost: float
    note: str


@dataclass(frozen=True)
class TrainedBaseline:
    """A baseline trained at its integer allocation over the section's seeds: the
    allocation, its cost, and the held-out success's IQM with its interval over seeds."""

    arm: TrainedArm
    success: Any  # rlscale.simulate.Interval


@dataclass(frozen=True)
class FallbackDeployed:
    """What the fallback deploys, trained at the budget: the recommended baseline and,
    when it is another one, the seed paper's (``versus``), with the recommended one's
    success minus the other's (``difference``; ``None`` with ``versus`` when the
    recommended baseline is the seed paper's own).  Both are what the budget buys them,
    at the costs in ``baselines``: equal unless one stops at a bound first (then it
    spends less, and the difference is not at equal cost)."""

    budget: float
    seeds: tuple[int, ...]
    recommended: str
    baselines: Mapping[str, TrainedBaseline]
    versus: str | None
    difference: Any  # rlscale.simulate.Interval, or None


@dataclass(frozen=True)
class EfficiencyFallback(Outcome):
    """Step 5 when the recommendation falls back to the default baseline: the decision
    (with its reason; ``strongest`` is ``None``, as no baseline was judged the strongest,
    while the recommendation's own names its default), the baselines at the budget, the
    fallback trained against the seed paper's baseline, and ``omitted``: each key of the
    full section (:class:`EfficiencyOutcome`) this one lacks, with why."""

    key: ClassVar[str] = "efficiency"
    schema: str
    confidence: float
    strongest: None  # not named: that needs the bootstrap laws a fallback lacks
    recommendation: Decision
    candidate: Candidate
    baselines: Mapping[str, BaselineAtBudget]
    deployed: FallbackDeployed
    omitted: Mapping[str, str]

    def __post_init__(self) -> None:
        if self.schema != FALLBACK_SCHEMA:
            raise ValueError(f"schema must be {FALLBACK_SCHEMA!r}; got {self.schema!r}")
        if self.recommendation.status != "fallback":
            raise ValueError("an EfficiencyFallback holds a fallback recommendation; got "
                             f"status {self.recommendation.status!r}")

    @property
    def seeds(self) -> tuple[int, ...]:
        """The seeds every trained arm of the section ran over."""
        return self.deployed.seeds
