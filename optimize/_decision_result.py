"""The records of a decision: :class:`Recommendation` and its per-baseline :class:`Comparison`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rlscale.optimize._deployed import PlanPath
from rlscale.theory._result import Result

__all__ = ["Comparison", "Recommendation"]


@dataclass(frozen=True)
class Comparison(Result):
    """The recommendation against one baseline, judged on the judgement copy.

    Attributes
    ----------
    baseline : str
    eta : float
        η of the recommendation's path against the baseline under the judgement fit's law
        (the estimate of η_deployed; 1 against itself).
    eta_bound : str
        ``"exact"``, ``"at least"`` or ``"at most"`` (the path's budget grid, B/8 to 2B,
        did not bracket the crossing).
    eta_interval : tuple
        Central ``confidence`` interval of η over the judgement bootstrap laws.
    gain : float
        Expected loss reduction at the budget, ``E[L(baseline) − L(recommendation)]`` over
        the judgement bootstrap laws (clipped into the loss's range).
    gain_interval : tuple
        Its central ``confidence`` interval.
    p_beats : float
        Share of the judgement bootstrap laws under which the recommendation's loss is
        below the baseline's.
    eta_bounded : float
        Share of the judgement laws under which η is only a bound (the crossing lies
        outside the path's budgets, B/8 to 2B): an interval end at 0.5 or 8 is then a
        bound, not an estimate.
    """

    baseline: str
    eta: float
    eta_bound: str
    eta_interval: tuple[float, float]
    gain: float
    gain_interval: tuple[float, float]
    p_beats: float
    eta_bounded: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Recommendation(Result):
    """What to run with a budget, and how sure rlscale is (:func:`recommend`).

    Attributes
    ----------
    choice : str
        ``"plan"`` or the name of the baseline recommended.
    values : dict
        The recommended allocation at the budget (decision variables, continuous).
    path : PlanPath
        The recommendation along budgets B/8 to 2B: what :func:`deployed_efficiency`
        judges.
    strongest : str
        The strongest baseline (least expected loss over the whole data's bootstrap laws).
    default : str
        The default baseline the sequence starts from.
    departs : bool
        Whether the recommendation is anything other than the default baseline.
    comparisons : dict
        Baseline name -> :class:`Comparison` of the recommendation.
    candidate : dict
        The best plan found (``values``, ``path``, and its comparisons against the
        default and the strongest baseline), whether or not it was recommended.
    steps : list of dict
        The fixed sequence: each step's ``frm``, ``to``, ``p_beats``, ``taken``, ``on``
        (the laws that judged it: ``"whole data"`` for the strongest baseline,
        ``"judgement copy"`` for the plan); with ``guard="departure"`` also ``gated``
        (whether the step needed ``probability``).
    reason : str
        One sentence: why this recommendation.
    baselines : dict
        Every baseline's ``values``, ``cost`` and ``note`` at the budget.
    method, probability, confidence, split, sigma : str, float
        The chooser; the probability a step needs; the intervals' level; fission's ``τ``
        and the log-noise scale it used.
    n_laws : dict
        Bootstrap laws used on the whole data and on each copy (``{"whole": …,
        "selection": …, "judgement": …}``).
    notes : tuple of str
        Diagnostics: fit warnings of either copy, bounds narrowed to the pilot's range,
        skipped bootstrap laws.
    status : str
        ``"plan"`` (departs to the plan), ``"baseline"`` (a baseline, possibly not the
        default, won) or ``"fallback"`` (the law could not be fitted; the default
        baseline is returned with the fitter's reason).
    guard : str
        What ``probability`` guarded: ``"every step"`` or ``"departure"`` (only a step from
        the default; each step's ``gated`` says whether it needed it).
    """

    choice: str
    values: dict[str, float]
    path: PlanPath = field(repr=False)
    strongest: str
    default: str
    departs: bool
    comparisons: dict[str, Comparison]
    candidate: dict[str, Any] = field(repr=False)
    steps: list[dict[str, Any]]
    reason: str
    baselines: dict[str, dict[str, Any]] = field(repr=False)
    method: str
    probability: float
    confidence: float
    split: float
    sigma: float
    n_laws: dict[str, int]
    notes: tuple[str, ...] = ()
    status: str = "plan"
    guard: str = "every step"

    def __repr__(self) -> str:
        """One screen: the choice, the reason, η and P(beats) per baseline."""
        from rlscale.optimize._summary import recommendation_summary

        return recommendation_summary(self)

    @property
    def success(self) -> bool:
        """False only for a fallback (the law could not be fitted)."""
        return self.status != "fallback"

    @property
    def message(self) -> str:
        return self.reason

    @property
    def versus_strongest(self) -> Comparison | None:
        """The comparison against the strongest baseline (``None`` for a fallback, which
        judged nothing)."""
        return self.comparisons.get(self.strongest)

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items()
               if k not in ("path", "comparisons", "candidate")}
        out["path"] = self.path.as_dict()
        out["comparisons"] = {k: c.as_dict() for k, c in self.comparisons.items()}
        out["candidate"] = {k: (v.as_dict() if hasattr(v, "as_dict") else
                                {n: c.as_dict() for n, c in v.items()} if k == "comparisons"
                                else v) for k, v in self.candidate.items()}
        out.update(success=self.success, message=self.message)
        return out
