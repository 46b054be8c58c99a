"""How much a compute-optimal allocation saves over scaling one axis alone.

The common practice the seed paper compares against scales a single axis
(trajectories) with the others fixed.  Two ratios measure the gap:

- **iso-loss efficiency** ``eta = B_baseline / B_optimal`` at a target loss:
  the budget the baseline needs to reach the target, divided by the budget
  of :func:`~rlscale.optimize.min_cost`.  ``eta >= 1``; it is ``inf`` (with
  the reason) when the baseline can never reach the target because the
  fixed axes' terms alone keep the loss above it.
- **iso-budget loss ratio** ``(L_baseline(B) - L_inf) / (L_optimal(B) - L_inf)``
  at a budget ``B``.

:func:`efficiency_curve` evaluates both along a range of budgets: at each
budget the baseline's loss is the target, so ``eta(B)`` is how many times
cheaper the optimum reaches what the baseline reaches with ``B``.  This is
the curve a user plots.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.optimize._allocate import AllocationProblem
from rlscale.theory._laws import Law
from rlscale.theory._result import Result
from rlscale.theory._synthetic import SynthesisMethod
from rlscale.theory._validation import check_mapping, check_real, check_scalar

__all__ = ["Baseline", "Efficiency", "EfficiencyCurve", "MeasuredCost", "cost_to_reach",
           "efficiency", "efficiency_curve"]


@dataclass(frozen=True)
class Efficiency(Result):
    """Iso-loss efficiency of the optimum over a one-axis baseline.

    Attributes
    ----------
    eta : float
        ``B_baseline / B_optimal`` (``inf`` when the baseline cannot reach the target).
    target : float
    baseline_budget, optimal_budget : float
    baseline_values, optimal_values : dict
        The two allocations (``baseline_values`` is ``None`` when unreachable).
    scaled : str
        The baseline's scaled axis; ``fixed`` the others' values.
    reason : str
        Why ``eta`` is infinite, else empty.
    """

    eta: float
    target: float
    baseline_budget: float
    optimal_budget: float
    baseline_values: dict[str, float] | None
    optimal_values: dict[str, float]
    scaled: str
    fixed: dict[str, float]
    reason: str = ""

    # -- notebook display and pandas -------------------------------------------
    def to_frame(self) -> Any:
        """One row: ``eta``, ``target``, the two budgets, ``scaled`` and ``reason``.

        Needs pandas (``pip install 'rlscale[pandas]'``), else ImportError.
        """
        from rlscale.theory._display import data_frame

        return data_frame([{"eta": self.eta, "target": self.target,
                            "baseline_budget": self.baseline_budget,
                            "optimal_budget": self.optimal_budget, "scaled": self.scaled,
                            "reason": self.reason}])

    def _repr_html_(self) -> str:
        from rlscale.theory._display import html_table

        rows = [["eta", self.eta], ["target loss", self.target],
                ["baseline budget", self.baseline_budget],
                ["optimal budget", self.optimal_budget],
                ["baseline values", self.baseline_values],
                ["optimal values", self.optimal_values],
                [f"baseline scales {self.scaled}, fixed", self.fixed]]
        return html_table("Efficiency", ["quantity", "value"], rows, [self.reason])


@dataclass(frozen=True)
class EfficiencyCurve(Result):
    """Efficiency along budgets (arrays aligned with ``budgets``).

    ``baseline_loss[i]`` is the loss of the baseline with ``budgets[i]``;
    ``optimal_loss[i]`` the optimum's at the same budget; ``eta[i]`` is
    what the baseline spent — ``budgets[i]``, or less once the scaled
    variable is at its upper bound (a note says from where) — over
    ``min_cost(baseline_loss[i])``; ``loss_ratio[i]`` the ratio
    of reducible losses at equal budget.  Budgets the baseline cannot use
    (its fixed axes alone cost more) give ``nan`` with a note.
    """

    budgets: np.ndarray
    baseline_loss: np.ndarray
    optimal_loss: np.ndarray
    optimal_budget: np.ndarray
    eta: np.ndarray
    loss_ratio: np.ndarray
    scaled: str
    fixed: dict[str, float]
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {k: (v.tolist() if isinstance(v, np.ndarray) else v)
                for k, v in super().as_dict().items()}

    def rows(self) -> list[dict[str, float]]:
        """One dict per budget (for tables and CSV)."""
        return [{"budget": float(b), "baseline_loss": float(lb), "optimal_loss": float(lo),
                 "optimal_budget_at_baseline_loss": float(bo), "eta": float(e),
                 "loss_ratio": float(r)}
                for b, lb, lo, bo, e, r in zip(self.budgets, self.baseline_loss,
                                               self.optimal_loss, self.optimal_budget,
                                               self.eta, self.loss_ratio)]

    # -- notebook display and pandas -------------------------------------------
    def to_frame(self) -> Any:
        """:meth:`rows` as a :class:`pandas.DataFrame` indexed by ``budget``.

        Needs pandas (``pip install 'rlscale[pandas]'``), else ImportError.
        """
        from rlscale.theory._display import data_frame

        return data_frame(self.rows(), index="budget")

    def _repr_html_(self) -> str:
        from rlscale.theory._display import html_table

        rows = self.rows()
        columns = list(rows[0]) if rows else ["budget"]
        notes = [f"baseline scales {self.scaled} with {self.fixed} fixed", *self.notes]
        return html_table("EfficiencyCurve", columns, [list(r.values()) for r in rows], notes)


class Baseline:
    """The baseline that scales one decision variable with the others fixed."""

    def __init__(self, problem: AllocationProblem, scaled: str,
                 fixed: Mapping[str, float]) -> None:
        if not isinstance(problem, AllocationProblem):
            raise TypeError(f"problem must be an AllocationProblem; got problem={problem!r:.60}")
        if not isinstance(scaled, str) or scaled not in problem.variables:
            raise ValueError(f"scaled={scaled!r} is not a decision variable; choose from "
                             f"{problem.variables}")
        if fixed is not None and not isinstance(fixed, Mapping):
            raise TypeError(f"fixed must be a mapping of decision variable -> value; got "
                            f"fixed={fixed!r:.60}")
        fixed = {} if fixed is None else dict(check_mapping("fixed", fixed))
        need = [v for v in problem.variables if v != scaled]
        missing = [v for v in need if v not in fixed]
        extra = [v for v in fixed if v not in need]
        if missing or extra:
            raise ValueError(f"fixed must give a value for every decision variable except "
                             f"{scaled!r}: missing {missing}, unknown {extra}")
        self.fixed = {v: check_scalar(f"fixed[{v!r}]", fixed[v], low=0.0,
                                          low_open=v in problem.objective.axes)
                      for v in need}
        self.problem = problem
        self.scaled = scaled

    def _vals(self, x: Any) -> dict[str, Any]:
        return {**self.fixed, self.scaled: x}

    def loss(self, x: Any) -> Any:
        """Loss with the scaled variable at ``x`` (> 0) and the others fixed."""
        return self.problem.loss_at(self._vals(check_real("x", x, low=0.0, low_open=True)))

    def cost(self, x: Any) -> Any:
        """Cost with the scaled variable at ``x`` (> 0) and the others fixed."""
        return self.problem.cost_at(self._vals(check_real("x", x, low=0.0, low_open=True)))

    def limit_loss(self) -> float:
        """Loss as the scaled axis grows without bound (its terms vanish)."""
        hi = self.problem.bounds[self.scaled][1]
        return float(self.loss(hi if math.isfinite(hi) else 1e300))

    def _solve(self, fn: Any, level: float, increasing: bool, what: str) -> float:
        """The ``x`` with ``fn(x) = level`` by bisection in ``log x``.

        ``x`` is searched in ``[e^-700, e^690]`` (float64's range); a level the
        baseline does not reach there is refused naming the range it covers.
        """
        from scipy.optimize import brentq

        def h(t: float) -> float:
            with np.errstate(over="ignore"):
                v = float(fn(math.exp(t))) - level
            return v if increasing else -v

        lo, hi = -50.0, 50.0
        while h(lo) > 0 and lo > -700:
            lo -= 50.0
        while h(hi) < 0 and hi < 690:
            hi += 50.0
        if h(lo) > 0 or h(hi) < 0 or not (math.isfinite(h(lo)) and math.isfinite(h(hi))):
            with np.errstate(over="ignore"):
                ends = sorted(float(fn(math.exp(t))) for t in (lo, hi))
            raise ValueError(
                f"{what} {level:g} is beyond what the baseline (scaling {self.scaled} alone, "
                f"{self._fmt_fixed()}) can represent in float64: as {self.scaled} runs over "
                f"[{math.exp(lo):.3g}, {math.exp(hi):.3g}] its {what} covers only "
                f"[{ends[0]:.6g}, {ends[1]:.6g}]")
        return math.exp(brentq(h, lo, hi, xtol=1e-13, rtol=1e-15))

    def _fmt_fixed(self) -> str:
        return ", ".join(f"{k}={v:g}" for k, v in self.fixed.items())

    def x_for_loss(self, target: float) -> float:
        """The scaled variable's value at which the baseline's loss is ``target``."""
        target = check_scalar("target", target)
        return self._solve(self.loss, target, increasing=False, what="loss")

    def x_for_budget(self, budget: float) -> float:
        """The scaled variable's value that spends ``budget``, capped at its upper bound.

        A baseline honours the user's bounds: past its bound it cannot buy
        more of the scaled variable and spends less than ``budget``.
        """
        budget = check_scalar("budget", budget, low=0.0, low_open=True)
        hi = self.problem.bounds[self.scaled][1]
        if math.isfinite(hi) and float(self.cost(hi)) <= budget:
            return float(hi)
        return self._solve(self.cost, budget, increasing=True, what="budget")


def efficiency(law: Law, cost: Any, target: float, scaled: str = "trajectories",
               fixed: Mapping[str, float] | None = None, bounds: Mapping[str, Any] | None = None,
               *, substitute: Mapping[str, Any] | None = None,
               synthesis: Iterable[SynthesisMethod] | None = None) -> Efficiency:
    """Iso-loss efficiency ``eta = B_baseline / B_optimal`` at a target loss.

    Parameters
    ----------
    law, cost, bounds, substitute, synthesis :
        As for :func:`~rlscale.optimize.allocate`.
    target : float
        The loss both allocations must reach.
    scaled : str
        The one decision variable the baseline scales.
    fixed : mapping
        Values of all other decision variables in the baseline.

    Examples
    --------
    >>> from rlscale.theory import AdditiveLaw
    >>> law = AdditiveLaw(0.5, {"environments": 4.0, "trajectories": 4.0},
    ...                   {"environments": 0.5, "trajectories": 0.5})
    >>> eff = efficiency(law, "environments + trajectories", target=0.9,
    ...                  fixed={"environments": 200})
    >>> round(eff.eta, 4)       # 0.5 + 4/sqrt(200) + 4/sqrt(K) = 0.9 costs 1365.7; optimum 800
    1.7071
    >>> efficiency(law, "environments + trajectories", target=0.6,
    ...            fixed={"environments": 400}).reason
    'with environments=400 fixed the loss never falls below 0.7 however large trajectories is'
    """
    problem = AllocationProblem(law, cost, bounds, substitute, synthesis)
    base = Baseline(problem, scaled, {} if fixed is None else fixed)
    target = check_scalar("target", target)
    opt = problem.min_cost(target, round_integers=False)
    return _efficiency(problem, base, target, opt.cost, opt.values)


def _efficiency(problem: AllocationProblem, base: Baseline, target: float, opt_cost: float,
                opt_values: dict[str, float]) -> Efficiency:
    limit = base.limit_loss()
    fixed_txt = ", ".join(f"{k}={v:g}" for k, v in base.fixed.items())
    if limit >= target:
        hi = problem.bounds[base.scaled][1]
        how = f"up to its bound {hi:g}" if math.isfinite(hi) else "however large"
        reason = (f"with {fixed_txt} fixed the loss never falls below {limit:.6g} {how} "
                  f"{base.scaled} is")
        return Efficiency(math.inf, target, math.inf, opt_cost, None, opt_values, base.scaled,
                          base.fixed, reason)
    x = base.x_for_loss(target)
    lo = problem.bounds[base.scaled][0]
    x = max(x, lo)
    b_base = float(base.cost(x))
    return Efficiency(b_base / opt_cost, target, b_base, opt_cost, base._vals(x), opt_values,
                      base.scaled, base.fixed)


def _log_reducible(law: Law, values: Mapping[str, Any]) -> float:
    """``log(L - floor)`` by log-sum-exp of the reducible terms' logs."""
    from scipy.special import logsumexp

    return float(logsumexp(law.reducible_posynomial().log_terms(values)))


def efficiency_curve(law: Law, cost: Any, budgets: Iterable[float],
                     scaled: str = "trajectories", fixed: Mapping[str, float] | None = None,
                     bounds: Mapping[str, Any] | None = None, *,
                     substitute: Mapping[str, Any] | None = None,
                     synthesis: Iterable[SynthesisMethod] | None = None,
                     progress: bool = False) -> EfficiencyCurve:
    """``eta`` and the iso-budget loss ratio along ``budgets`` (one compiled problem).

    Examples
    --------
    >>> from rlscale.theory import AdditiveLaw
    >>> law = AdditiveLaw(0.5, {"environments": 4.0, "trajectories": 4.0},
    ...                   {"environments": 0.5, "trajectories": 0.5})
    >>> c = efficiency_curve(law, "environments + trajectories", [1e3, 1e4],
    ...                      fixed={"environments": 400})
    >>> [round(float(e), 3) for e in c.eta]
    [1.031, 4.531]
    """
    problem = AllocationProblem(law, cost, bounds, substitute, synthesis)
    base = Baseline(problem, scaled, {} if fixed is None else fixed)
    if isinstance(budgets, str | bytes) or not isinstance(budgets, Iterable):
        raise TypeError(f"budgets must be a sequence of numbers; got budgets={budgets!r:.60}")
    budgets = np.atleast_1d(check_real("budgets", list(budgets), low=0.0, low_open=True))
    if budgets.ndim != 1:
        raise ValueError(f"budgets must be a flat list of numbers; got shape {budgets.shape}")
    n = budgets.size
    out = {k: np.full(n, np.nan) for k in ("base", "opt", "optb", "eta", "ratio")}
    notes = []
    it: Iterable[tuple[int, float]] = enumerate(budgets)
    if progress:
        from tqdm import tqdm

        it = tqdm(list(it), desc="budgets", unit="budget", file=sys.stderr)
    fixed_cost = float(base.cost(0.0)) if base.scaled not in problem.objective.axes else \
        float(base.cost(1e-300))
    capped = False
    for i, b in it:
        b = float(b)
        if b <= fixed_cost:
            notes.append(f"budget {b:g}: the fixed axes alone cost {fixed_cost:g}")
            continue
        x = base.x_for_budget(b)
        spent = float(base.cost(x))
        if spent < b * (1 - 1e-12) and not capped:
            capped = True
            notes.append(f"from budget {b:g} on, {base.scaled} is at its upper bound "
                         f"{x:g}: the baseline spends {spent:g} and η uses what it spent")
        lb = float(base.loss(x))
        opt = problem.allocate(b, round_integers=False)
        out["base"][i] = lb
        out["opt"][i] = opt.loss
        out["optb"][i] = problem.min_cost(lb, round_integers=False).cost
        out["eta"][i] = spent / out["optb"][i]
        # Ratio of reducible losses from their logs: at huge budgets L - floor
        # cancels to 0 in double precision while the reducible part does not.
        out["ratio"][i] = math.exp(_log_reducible(law, problem.effective(base._vals(x)))
                                   - _log_reducible(law, opt.effective))
    return EfficiencyCurve(budgets, out["base"], out["opt"], out["optb"], out["eta"],
                           out["ratio"], scaled, base.fixed, tuple(notes))


@dataclass(frozen=True)
class MeasuredCost(Result):
    """Where a measured score-versus-cost curve reaches a target (:func:`cost_to_reach`).

    Attributes
    ----------
    cost : float
        The interpolated cost (``inf`` when no measured point reaches the target).
    bound : str
        ``"exact"`` (bracketed by two points), ``"upper"`` (the cheapest point
        already reaches it: the true cost is at most ``cost``) or ``"lower"``
        (no point does: the true cost exceeds the largest measured, ``cost`` is
        that largest cost).
    note : str
        One sentence for the last two cases, else empty.
    """

    cost: float
    bound: str
    note: str = ""


def cost_to_reach(costs: Any, scores: Any, target: float) -> MeasuredCost:
    """Cost at which a measured score (held-out success, say) first reaches ``target``.

    The realised counterpart of the law's iso-loss budget: points are sorted
    by cost and the score is interpolated linearly in ``log cost`` between the
    first pair that brackets the target (scaling curves are close to linear
    in log compute over a bracket).  Outside the measured range only a bound
    is known, and the result says which.

    Examples
    --------
    >>> r = cost_to_reach([100.0, 400.0, 1600.0], [0.1, 0.3, 0.5], 0.4)
    >>> round(r.cost, 6), r.bound          # halfway in log between 400 and 1600
    (800.0, 'exact')
    >>> cost_to_reach([100.0, 400.0], [0.1, 0.3], 0.9).bound
    'lower'
    """
    c = check_real("costs", costs, low=0.0, low_open=True).ravel()
    s = check_real("scores", scores).ravel()
    if c.size == 0 or c.size != s.size:
        raise ValueError(f"costs and scores must be non-empty and of equal length; got "
                         f"{c.size} and {s.size}")
    target = check_scalar("target", target)
    order = np.argsort(c, kind="stable")
    c, s = c[order], s[order]
    if s[0] >= target:
        return MeasuredCost(float(c[0]), "upper", f"even the cheapest point (cost {c[0]:.4g}) "
                            f"reaches {target:.4g}; the true cost is at most this")
    for i in range(1, c.size):
        if s[i] >= target:
            w = (target - s[i - 1]) / (s[i] - s[i - 1])
            return MeasuredCost(float(math.exp((1 - w) * math.log(c[i - 1])
                                               + w * math.log(c[i]))), "exact")
    return MeasuredCost(float(c[-1]), "lower", f"no point up to cost {c[-1]:.4g} reaches "
                        f"{target:.4g}; the true cost is larger")
