"""A plug-in plan with the uncertainty of the law it was computed from.

:func:`plan_uncertainty` carries a fit's bootstrap laws into the plan: the
spread of the optimal allocation, the predicted loss band at the plan, η
against each baseline with an interval, and a **robust plan** that minimises
the expected loss over the bootstrap laws with no law allowed to dominate (a
trimmed mean of losses clipped into the loss's range,
:func:`~rlscale.optimize.robust_plan`).

What these intervals are intervals *of*: η here re-plans under every bootstrap law, so
it is the plug-in plan judged by the fit that chose it -- biased up by the optimizer's
curse, and not the η the plan delivers once deployed (η_deployed,
:mod:`rlscale.optimize._deployed`).  :func:`~rlscale.optimize.recommend` is the decision
that is judged honestly; this function stays for the plug-in analysis, and the decision
study (``python -m benchmarks.decision_study``) scores its intervals against both
η_deployed and the oracle η.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlscale.optimize._allocate import AllocationProblem
from rlscale.optimize._baselines import (
    ETA_FLOOR,
    BaselineComparison,
    compare_baselines,
    eta_bootstrap,
)
from rlscale.optimize._eta_interval import (
    DEFAULT_METHOD,
    INTERVAL_METHODS,
    bootstrap_interval,
    check_interval_method,
)
from rlscale.theory._laws import Law
from rlscale.theory._result import Result
from rlscale.theory._validation import check_scalar

__all__ = ["PlanUncertainty", "plan_uncertainty"]


@dataclass(frozen=True)
class PlanUncertainty(Result):
    """A plan with the uncertainty of the law it was computed from (:func:`plan_uncertainty`).

    Attributes
    ----------
    budget, confidence : float
    point : BaselineComparison
        The plan and baselines under the point-estimate law.
    allocation_intervals : dict
        Per decision variable, the central ``confidence`` interval of the
        optimal value over the bootstrap laws.
    loss_band : tuple
        Interval of the loss the bootstrap laws predict at the point plan.
    eta_intervals : dict
        Per baseline, the interval of η over the bootstrap laws (each law
        re-plans and re-prices the same baseline allocation).
    robust : RobustPlan
        The allocation minimising the bounded, trimmed expected loss over the
        bootstrap laws (:func:`~rlscale.optimize.robust_plan`).
    robust_gain : float
        That expected loss at the point plan minus at the robust plan (both inside
        the loss's range, so the gain is at most its width: what robustness buys in
        expectation).
    robust_point_cost : float
        Point-law loss of the robust plan minus that of the point plan (≥ 0:
        what robustness costs if the point law is right).
    n_laws : int
        Bootstrap laws used (those whose allocation problem solved).
    notes : tuple of str
        Why bootstrap laws were skipped, once per distinct reason.
    method : str
        How :attr:`eta_intervals` were formed from the bootstrap η (see
        :func:`plan_uncertainty`); :meth:`eta_interval` gives any other method.
    eta_samples : dict
        Per baseline, η under each bootstrap law used (``n_laws`` values, the
        same laws for every baseline).
    n_skipped : int
        Bootstrap laws skipped (exponent beyond the solver's range, no
        solvable plan, or a non-finite η); their share is
        ``n_skipped / (n_laws + n_skipped)``.
    """

    budget: float
    confidence: float
    point: BaselineComparison
    allocation_intervals: dict[str, tuple[float, float]]
    loss_band: tuple[float, float]
    eta_intervals: dict[str, tuple[float, float]]
    robust: Any
    robust_gain: float
    robust_point_cost: float
    n_laws: int
    notes: tuple[str, ...] = field(default=())
    method: str = "percentile"
    eta_samples: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    n_skipped: int = 0

    def __repr__(self) -> str:
        """One screen: the plan and its loss with intervals, η per baseline, the robust
        plan (every field stays an attribute; ``as_dict()`` holds them all)."""
        from rlscale.optimize._summary import plan_summary

        return plan_summary(self)

    @property
    def strongest(self) -> str:
        return self.point.strongest

    def covers(self, eta: float, baseline: str | None = None) -> bool:
        """Whether the η interval against ``baseline`` (default: strongest) contains ``eta``."""
        eta = check_scalar("eta", eta)
        if baseline is None:
            baseline = self.strongest
        if not isinstance(baseline, str) or baseline not in self.eta_intervals:
            raise ValueError(f"baseline must be one of {sorted(self.eta_intervals)} or None; "
                             f"got baseline={baseline!r:.60}")
        lo, hi = self.eta_intervals[baseline]
        return lo <= eta <= hi

    def eta_interval(self, baseline: str | None = None, method: str | None = None
                     ) -> tuple[float, float]:
        """The η interval against ``baseline`` (default: strongest) by ``method``.

        ``method`` is one of :data:`INTERVAL_METHODS` (default: :attr:`method`, the
        one :attr:`eta_intervals` holds); all are formed from the same bootstrap η
        (:attr:`eta_samples`) and the point η, at :attr:`confidence`, with η's
        floor 1.  "BCa" needs jackknife values and is not available here.
        """
        if baseline is None:
            baseline = self.strongest
        if not isinstance(baseline, str) or baseline not in self.eta_samples:
            raise ValueError(f"baseline must be one of {sorted(self.eta_samples)} or None; "
                             f"got baseline={baseline!r:.60}")
        method = self.method if method is None else check_interval_method(method)
        if method == "BCa":
            raise ValueError("method='BCa' needs jackknife values of η, which a "
                             "PlanUncertainty does not hold; use 'symmetric', 'bc', 'basic' or "
                             "'percentile'")
        return bootstrap_interval(self.eta_samples[baseline],
                                  float(self.point.baselines[baseline]["eta"]),
                                  self.confidence, method, floor=ETA_FLOOR)

    def as_dict(self) -> dict[str, Any]:
        return {"budget": self.budget, "confidence": self.confidence,
                "point": self.point.as_dict(),
                "allocation_intervals": self.allocation_intervals,
                "loss_band": self.loss_band, "eta_intervals": self.eta_intervals,
                "strongest": self.strongest, "robust": self.robust.as_dict(),
                "robust_gain": self.robust_gain, "robust_point_cost": self.robust_point_cost,
                "n_laws": self.n_laws, "notes": list(self.notes), "method": self.method,
                "n_skipped": self.n_skipped,
                "eta_samples": {k: v.tolist() for k, v in self.eta_samples.items()}}


def plan_uncertainty(law: Law, laws: Sequence[Law], cost: Any, budget: float,
                     centre: Mapping[str, float], bounds: Mapping[str, Any] | None = None, *,
                     substitute: Mapping[str, Any] | None = None,
                     confidence: float = 0.9, method: str = DEFAULT_METHOD,
                     trim: float = 0.1, loss_range: tuple[float, float] | None = None
                     ) -> PlanUncertainty:
    """Carry the bootstrap laws of a fit into the plan, its η and a robust plan.

    Parameters
    ----------
    law : Law
        The point-estimate law.
    laws : sequence of Law
        Bootstrap laws (e.g. :meth:`FitResult.bootstrap_laws`); at least 2.
        A law the solver cannot take (an exponent beyond ±1000), or whose plan
        fails, is skipped and counted (:attr:`PlanUncertainty.n_skipped`,
        with the reason in :attr:`PlanUncertainty.notes`); at least 2 must
        remain.
    cost, bounds, substitute :
        As for :class:`AllocationProblem`.
    budget : float
    centre : mapping
        The reference point of the baselines (decision variables).
    confidence : float
        Level of every interval (central).
    method : {"symmetric", "percentile", "basic", "basic-log", "bc"}
        How the η intervals are formed from η under the bootstrap laws
        (:mod:`rlscale.optimize._eta_interval`).  "symmetric" (the default;
        Hall 1988) is ``η̂ ± t``, ``t`` the ``confidence``-quantile of
        ``|η* − η̂|``, clipped at η's floor 1: in the calibration study
        (``python -m benchmarks.calibration_eta``, docs/solve.md) it was the
        only method that did not under-cover against any baseline (0.87 against
        trajectories only, 0.955 against proportional, nominal 0.9), where the
        plain "percentile" interval covered 0.84 and 0.68.  "bc" is the
        bias-corrected percentile interval (Efron 1987), "basic" the reflected
        one.  The allocation intervals and the loss band are always percentile
        intervals.  Every method is available afterwards from
        :meth:`PlanUncertainty.eta_interval`.
    trim, loss_range :
        The robust plan's trimmed, bounded mean (:func:`~rlscale.optimize.robust_plan`;
        ``loss_range=(0, 1)`` for a loss ``1 − success``).

    Notes
    -----
    Each bootstrap law re-solves the plan and one min-cost problem per
    baseline.  Newton on the KKT equations from the previous law's optimum
    does it, kept only when the KKT residual certifies the optimum (1e-12; a
    geometric program is convex, so that suffices), else the geometric
    program is solved with cvxpy (:mod:`rlscale.optimize._warm_newton`): the
    same optima to ~1e-15, about 4× less CPU on the report's 40 laws.

    Examples
    --------
    >>> from rlscale.theory import AdditiveLaw
    >>> laws = [AdditiveLaw(0.1, {"E": 1.0, "k": c}, {"E": 0.5, "k": 0.5})
    ...         for c in (0.5, 1.0, 2.0)]
    >>> u = plan_uncertainty(laws[1], laws, "E + k", 200.0, {"E": 10.0, "k": 10.0},
    ...                      {"E": (1, 1e6), "k": (1, 1e6)})
    >>> u.strongest, u.n_laws, u.robust_gain >= -1e-9, u.robust_point_cost >= -1e-9
    ('proportional', 3, True, True)
    >>> u.method, u.eta_interval("k only", "percentile") == tuple(
    ...     float(q) for q in np.quantile(u.eta_samples["k only"], [0.05, 0.95]))
    ('symmetric', True)
    """
    if isinstance(laws, str | bytes) or not isinstance(laws, Sequence):
        raise TypeError(f"laws must be a sequence of bootstrap laws; got {type(laws).__name__}")
    laws = list(laws)
    if not all(isinstance(b, Law) for b in laws):
        raise TypeError("laws must hold rlscale.theory laws only")
    if len(laws) < 2:
        raise ValueError(f"laws must hold at least 2 bootstrap laws; got {len(laws)}")
    confidence = check_scalar("confidence", confidence, low=0.0, high=1.0,
                              low_open=True, high_open=True)
    method = check_interval_method(method)
    if method == "BCa":
        raise ValueError("method='BCa' needs jackknife values of η (refits with each row left "
                         "out), which plan_uncertainty does not have; use one of "
                         f"{[m for m in INTERVAL_METHODS if m != 'BCa']}")
    problem = AllocationProblem(law, cost, bounds, substitute)
    point = compare_baselines(problem, budget, centre)
    boot = eta_bootstrap(point, laws, cost, bounds, substitute)
    good = boot["good"]
    if len(good) < 2:
        raise ValueError(f"only {len(good)} of {len(laws)} bootstrap laws gave a solvable "
                         "plan; no interval can be formed")
    q = ((1 - confidence) / 2, (1 + confidence) / 2)

    def interval(xs: Sequence[float]) -> tuple[float, float]:
        lo, hi = np.quantile(np.asarray(xs, dtype=float), q)
        return float(lo), float(hi)

    from rlscale.optimize._deployed import LawBank
    from rlscale.optimize._robust_plan import check_loss_range, expected_loss, robust_plan

    robust = robust_plan(good, cost, budget, bounds, substitute=substitute, trim=trim,
                         loss_range=loss_range, start=point.plan.values)
    plan_values = point.plan.values
    eff = problem.effective(plan_values)
    at_point = LawBank(good).losses({a: np.atleast_1d(np.asarray(eff[a], dtype=float))
                                     for a in law.axes})[:, 0]
    j_point = float(expected_loss(at_point, robust.trim, check_loss_range(loss_range)))
    return PlanUncertainty(
        budget=float(budget), confidence=confidence, point=point,
        allocation_intervals={v: interval([a[v] for a in boot["alloc"]])
                              for v in problem.variables},
        loss_band=interval(boot["losses"]),
        eta_intervals={k: bootstrap_interval(v, float(point.baselines[k]["eta"]), confidence,
                                             method, floor=ETA_FLOOR)
                       for k, v in boot["etas"].items()},
        robust=robust,
        robust_gain=j_point - robust.expected_loss,
        robust_point_cost=float(problem.loss_at(robust.values)) - point.plan.loss,
        n_laws=len(good), notes=tuple(dict.fromkeys(boot["notes"])), method=method,
        eta_samples=boot["etas"], n_skipped=boot["skipped"])
