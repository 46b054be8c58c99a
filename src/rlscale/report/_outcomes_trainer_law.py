"""What step 1b hands the document: the reward law in the RL trainer, typed.

A frozen mirror of :meth:`rlscale.verification._trainer_reward_law.TrainerRewardLawReport.as_dict`
(built with :func:`rlscale.report._typed.build`, which refuses unknown and missing
keys, so a key the library renames fails in step 1b, not in the document).  Its
shapes are the library's:

* ``r2``: one :class:`TrainerLawRow` per optimiser × reward model × noise, whose
  ``a, b, c`` are ``None`` where the fit on all points does not identify them;
* ``plan``: :class:`TrainerPlan`, either *refused* (``refused`` says why, ``plans``
  empty: the law it would plan with is not identified) or the trained plans, with
  ``kl_per_step`` (:class:`KlPerStep`) holding either a fitted rate ``K = κ·S^γ``
  and the step-priced plan, or a ``note`` saying why there is none.

:class:`TrainerLawOutcome` is the section: ``{"enabled": false}`` when the
configuration turns it off, else ``enabled`` and the report's fields, flat, as
``results.json`` has always held them.

Examples
--------
>>> from rlscale.report._typed import build
>>> law = build(PlanLaw, {"a": 1.4, "b": -0.9, "c": 0.5, "from": "soft_vi, linear, s=1"})
>>> law.source
'soft_vi, linear, s=1'
>>> TrainerLawOutcome(enabled=False).as_dict()
{'enabled': False}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rlscale.report._outcomes import ModelRow, Outcome
from rlscale.report._typed import plain

__all__ = ["BreakRow", "CompetitorScores", "GrowthRow", "KlPerStep", "LabelPlanData",
           "PgGrid", "PlanLaw", "TheoryRow", "TrainedPlan", "TrainerLawData",
           "TrainerLawOutcome", "TrainerLawRow", "TrainerPlan", "TrainerSetup"]

_OPTIONAL = {"optional": True}


@dataclass(frozen=True)
class CompetitorScores:
    """One group's held-out RMSE per model (:data:`rlscale.verification._law_competitors.MODELS`;
    ``None`` where a model cannot be scored, e.g. fewer than three M levels)."""

    law: float | None
    plateau_m_free: float | None
    plateau_per_m: float | None
    gao_bon_per_m: float | None
    gao_rl_per_m: float | None
    saturating: float | None
    saturating_md: float | None


@dataclass(frozen=True)
class TrainerLawRow:
    """One optimiser × reward model × noise group: the law's held-out R² on a random split,
    ``a, b, c`` on all points with bootstrap intervals (``None``: not identified; an
    interval end ``None``: unbounded), the calibrated identification and the
    leave-one-M-out / leave-one-K-out scores against the competitors."""

    optimiser: str
    capacity: str
    noise: float
    r2_min: float | None
    r2_smooth: float | None
    a: float | None
    b: float | None
    c: float | None
    n_train: int
    n_test: int
    identified: Mapping[str, bool]
    identification: str
    a_all: float | None
    b_all: float | None
    c_all: float | None
    a_ci: tuple[float | None, ...] | None
    b_ci: tuple[float | None, ...] | None
    c_ci: tuple[float | None, ...] | None
    bootstrap: int
    bootstrap_at_boundary: int
    fit_status: int
    #: Per parameter on a clamp corner, what the corner is (no interval then).
    boundary: Mapping[str, str]
    #: Per parameter, the ends of its interval (``"lower"``, ``"upper"``) on a clamp corner.
    ci_boundary: Mapping[str, tuple[str, ...]]
    verdict: str
    verdict_uncalibrated: str
    lr: float
    lr_p_value: float
    lomo_rmse: CompetitorScores
    loko_rmse: CompetitorScores
    lomo_winner: str | None
    law_beats_lomo: Mapping[str, bool]
    law_beats_loko: Mapping[str, bool]
    law_beats_named_lomo: bool
    exploratory: Mapping[str, Any]

    @property
    def label(self) -> str:
        """``optimiser/capacity/s = noise``, as the document names a group."""
        return f"{self.optimiser}/{self.capacity}/s = {self.noise:g}"

    @property
    def fully_identified(self) -> bool:
        return all(self.identified.values())

    def param_text(self, name: str) -> str:
        """``a``, ``b`` or ``c`` with its interval, for text
        (:func:`rlscale.verification._trainer_reward_files.law_param_text`)."""
        from rlscale.verification._trainer_reward_files import law_param_text

        if name not in ("a", "b", "c"):
            raise ValueError(f"name must be 'a', 'b' or 'c'; got {name!r}")
        return law_param_text(getattr(self, f"{name}_all"), getattr(self, f"{name}_ci"),
                              identified=self.identified.get(name, True),
                              boundary=name in self.boundary,
                              corner=self.ci_boundary.get(name, ()))


@dataclass(frozen=True)
class TheoryRow:
    """The Gaussian pool model (or its generalising-proxy variant) on the trainer's grid."""

    model: str
    method: str
    noise_s: float
    tau: float
    a: float
    b: float
    c: float
    r2_in_sample: float | None
    identified: Mapping[str, bool]
    identification: str
    G_at_K_max: tuple[float, ...]


@dataclass(frozen=True)
class BreakRow:
    """A curve G(K) at fixed M whose gold falls past its peak (by > 2 standard errors)."""

    optimiser: str
    capacity: str
    noise: float
    M: float
    K_peak: float
    G_peak: float
    G_at_K_max: float
    drop: float
    drop_se: float


@dataclass(frozen=True)
class GrowthRow:
    """G at the largest K for each M of one group: does more data keep helping?"""

    optimiser: str
    capacity: str
    noise: float
    M: tuple[float, ...]
    G_at_K_max: tuple[float, ...]


@dataclass(frozen=True)
class PgGrid:
    """Where the policy-gradient optimiser runs (it is the grid's slow one)."""

    noises: tuple[float, ...]
    M: tuple[float, ...]
    steps: int


@dataclass(frozen=True)
class TrainerSetup:
    """The grid as run: environments, seeds, the M and K axes, noises, capacities."""

    optimisation_environments: int
    comparison_environments: int
    seeds: int
    identification_bootstrap: int
    gold_sd_raw: float
    M: tuple[float, ...]
    K: tuple[float, ...]
    noises: tuple[float, ...]
    capacities: Mapping[str, tuple[int, ...]]
    bon_pool: int
    pg_grid: PgGrid


@dataclass(frozen=True)
class PlanLaw:
    """The law the plans are made with, and the group it was fitted on."""

    a: float | None
    b: float | None
    c: float | None
    source: str = field(metadata={"key": "from"})


@dataclass(frozen=True)
class TrainedPlan:
    """One plan (M, K) of the budget, its predicted gain and its trained gain (95 %
    bootstrap over environments); a naive plan also has the planned one's advantage."""

    M: float
    K: float
    cost: float
    predicted_gain: float
    trained_gain: float
    trained_ci: tuple[float, float]
    planned_minus_this: float | None = field(default=None, metadata=_OPTIONAL)
    planned_minus_this_ci: tuple[float, float] | None = field(default=None, metadata=_OPTIONAL)


@dataclass(frozen=True)
class LabelPlanData:
    """:meth:`rlscale.optimize.LabelPlan.as_dict` (the step-priced plan)."""

    M: float
    K: float
    cost: float
    gain: float
    label_cost_share: float
    success: bool
    status: str
    message: str
    steps: float | None = field(default=None, metadata=_OPTIONAL)


@dataclass(frozen=True, kw_only=True)
class KlPerStep:
    """KL per RL step on the planned reward model: the fitted ``K = κ·S^γ`` and the plan
    priced per step, or a ``note`` saying why there is no usable rate (and no plan).

    Keyword-only, so that the fields keep the library's key order (the price after
    the fit).  Where no rate could be fitted at all the library wrote ``note`` before
    ``price_step``; this writes it after (the same keys and values).
    """

    kappa: float | None = field(default=None, metadata=_OPTIONAL)
    gamma: float | None = field(default=None, metadata=_OPTIONAL)
    r2_log: float | None = field(default=None, metadata=_OPTIONAL)
    steps: int | None = field(default=None, metadata=_OPTIONAL)
    kl_at_last_step: float | None = field(default=None, metadata=_OPTIONAL)
    price_step: float
    note: str | None = field(default=None, metadata=_OPTIONAL)
    plan: LabelPlanData | None = field(default=None, metadata=_OPTIONAL)


@dataclass(frozen=True)
class TrainerPlan:
    """Planning labels against optimisation (:mod:`rlscale.verification._trainer_reward_plan`):
    the plans trained, or ``refused`` with no plans."""

    law: PlanLaw
    price_m: float
    price_k: float
    price_step: float
    budget: float
    plans: Mapping[str, TrainedPlan]
    refused: str | None = field(default=None, metadata=_OPTIONAL)
    kl_per_step: KlPerStep | None = field(default=None, metadata=_OPTIONAL)

    def compared(self) -> dict[str, TrainedPlan]:
        """The naive plans the planned one is compared with (those with a difference)."""
        return {n: p for n, p in self.plans.items() if p.planned_minus_this is not None}


@dataclass(frozen=True)
class TrainerLawData:
    """:meth:`TrainerRewardLawReport.as_dict
    <rlscale.verification._trainer_reward_law.TrainerRewardLawReport.as_dict>`, typed
    (``files`` relative to the report)."""

    mode: str
    seed: int
    seconds: float
    setup: TrainerSetup
    r2: tuple[TrainerLawRow, ...]
    comparison: Mapping[str, tuple[ModelRow, ...]]
    breaks: tuple[BreakRow, ...]
    m_growth: tuple[GrowthRow, ...]
    theory: tuple[TheoryRow, ...]
    plan: TrainerPlan
    files: Mapping[str, str]
    n_points: int


@dataclass(frozen=True)
class TrainerLawOutcome(Outcome):
    """Step 1b, the reward law in the RL trainer: ``report`` is ``None`` when disabled.

    ``results.json`` holds ``enabled`` and the report's fields beside it (one flat
    table, as before the report was typed).
    """

    key: ClassVar[str] = "reward_law_trainer"
    enabled: bool
    report: TrainerLawData | None = None

    def __post_init__(self) -> None:
        if self.enabled != (self.report is not None):
            raise ValueError("TrainerLawOutcome: a report exactly when enabled; got "
                             f"enabled={self.enabled!r} with report "
                             f"{'absent' if self.report is None else 'present'}")

    def as_dict(self) -> dict[str, Any]:
        return {"enabled": self.enabled, **({} if self.report is None else plain(self.report))}
