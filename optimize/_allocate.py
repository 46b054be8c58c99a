"""Compute-optimal data allocation: closed forms first, a geometric program (cvxpy) otherwise.

Minimising a law's loss ``L_inf + P(x)`` (``P`` a posynomial with negative
powers, see :mod:`rlscale.theory._laws`) subject to a posynomial cost
``C(x) <= B`` and box bounds is a geometric program: in ``u = log x`` both
``log P`` and ``log C`` are convex (log-sum-exp of affine functions), so the
local optimum is global (Boyd, Kim, Vandenberghe & Hassibi 2007, "A tutorial
on geometric programming", §2.5).  ``min_cost`` swaps objective and
constraint (the two *senses*, :mod:`._alloc_kkt`).

How a problem is solved (``method=``):

``"closed_form"``
    Power laws under a single-monomial cost (Chinchilla's ``6*N*D``),
    Cobb–Douglas budget shares, nested variance components: exact formulas,
    vectorised over budgets (:mod:`._alloc_closed`, with derivations).  Used
    when the closed form's point lies within the bounds.
``"gp"``
    The GP in log space (log-sum-exp objective and constraint) in cvxpy with
    CLARABEL, compiled once per structure with every number -- exponents
    included -- a parameter (:mod:`._alloc_model`), then polished by
    Newton's method on the KKT equations of the active set so results are
    accurate to ~1e-12 rather than the conic solver's ~1e-8, with an SLSQP
    rescue when polishing is not enough (:mod:`._alloc_polish`).
``"dcp"``
    Synthetic data (``synthesis=``) turns an axis into ``x_eff = x_real +
    gain(x_syn)``, which is not a posynomial; with a cost linear in the counts
    the problem is still convex in the counts themselves, solved in cvxpy's
    DCP mode and polished in scaled counts (:mod:`._alloc_space`).
``"auto"`` (default)
    The closed form where there is one and it is feasible; else, for a GP,
    Newton's method on its KKT equations in log space from a cold start
    (:mod:`._alloc_newton`: a few steps, a tenth of a conic solve's cost), kept
    only when its KKT residual is at most 1e-12; else ``"gp"`` or ``"dcp"``.
    The conic GP is the general path, the solver of record where Newton does
    not certify and the closed forms' certificate: the tests check that all
    agree to 1e-12 on random instances.

Every :class:`Allocation` carries its KKT residual (:func:`kkt_residual`),
computed from the point alone in the same coordinates whatever solved it (for
a closed form when first read: :class:`._alloc_closed_plan.ClosedPlan`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping
from functools import partial
from typing import Any

import numpy as np

from rlscale.optimize._alloc_build import build_state
from rlscale.optimize._alloc_checks import check_method
from rlscale.optimize._alloc_closed import ClosedForm, closed_logs
from rlscale.optimize._alloc_closed_plan import ClosedPlan, frontier_certificate
from rlscale.optimize._alloc_kkt import ALLOCATE, MIN_COST, Sense, kkt_residual, round_allocation
from rlscale.optimize._alloc_model import solve_numeric
from rlscale.optimize._alloc_newton import NEWTON_KKT, newton_gp
from rlscale.optimize._alloc_result import Allocation, AllocationFrontier
from rlscale.optimize._alloc_state import DCPState, GPState
from rlscale.theory._errors import InfeasibleError
from rlscale.theory._laws import Law
from rlscale.theory._posynomial import Posynomial
from rlscale.theory._synthetic import SynthesisMethod
from rlscale.theory._validation import check_real, check_scalar

__all__ = ["Allocation", "AllocationFrontier", "AllocationProblem", "kkt_residual"]

#: The methods that take a closed form where there is one.
_CLOSED = ("auto", "closed_form")
#: The dtype of a native float64 array (``dtype is`` is the cheap test).
_FLOAT64 = np.dtype(np.float64)


class AllocationProblem:
    """A law, a cost and bounds, compiled once and solved for many budgets/targets.

    Parameters
    ----------
    law : Law
        Any GP-compatible law of :mod:`rlscale.theory`.
    cost : str, sympy expression or Posynomial
        Cost in the decision variables, e.g. ``"100*E + 10*E*t + E*t*k"``.
    bounds : mapping, optional
        ``{variable: (min, max)}`` or ``{variable: {"min":, "max":}}``; ``None``
        for an open side.  Laws may supply defaults (nesting ``t, k >= 1``).
    substitute : mapping, optional
        Law axis -> monomial in decision variables, e.g.
        ``{"tasks": "E*t", "trajectories": "E*t*k"}`` to allocate a law fitted
        on totals over nested variables.
    synthesis : sequence of SynthesisMethod, optional
        Priced synthetic sources; each adds a decision variable (its
        ``name``) whose effective units add to its axis.  Needs a cost that
        is linear in the law's axes and no ``substitute``.

    Attributes
    ----------
    state : GPState or DCPState
        The validated, frozen problem (:mod:`._alloc_state`, built by
        :func:`~._alloc_build.build_state`): what every solver reads.  A geometric
        program without synthetic data is a ``GPState``, one with synthetic data a
        ``DCPState``.
    law, cost, objective, variables, bounds, substitute, synthesis
        The law; the cost and the reducible loss as posynomials in the decision
        variables; the decision variables (a list); ``{variable: (lo, hi)}``; the
        substitution (axis -> monomial) and the synthetic sources.

    Examples
    --------
    >>> from rlscale.theory import VarianceComponentsLaw
    >>> law = VarianceComponentsLaw(0.0, 4.0, 1.0, 1.0)
    >>> prob = AllocationProblem(law, "100*E + 10*E*t + E*t*k")
    >>> [round(a.loss, 6) for a in prob.sweep([1e4, 1e5])]
    [0.058382, 0.005838]
    >>> prob.closed_form.kind, prob.allocate(1e4).method
    ('nested', 'closed_form')
    >>> prob.allocate(1e4, method="gp").status, prob.allocate(1e4, method="gp").method
    ('optimal', 'gp')
    """

    def __init__(self, law: Law, cost: Any, bounds: Mapping[str, Any] | None = None,
                 substitute: Mapping[str, Any] | None = None,
                 synthesis: Iterable[SynthesisMethod] | None = None) -> None:
        state = build_state(law, cost, bounds, substitute, synthesis)
        self.state: GPState | DCPState = state
        # The public face, as plain containers (the state keeps its own, frozen).
        self.law = state.law
        self.synthesis = state.synthesis
        self.substitute: dict[str, Posynomial] = dict(state.substitute)
        self.objective = state.objective
        self.cost = state.cost
        self.variables = list(state.variables)
        self.bounds: dict[str, tuple[float, float]] = dict(state.bounds)
        #: Sense name -> the state's closed plan (or None), read by the fast path first.
        self._plans: dict[str, ClosedPlan | None] = {}

    # -- evaluations ------------------------------------------------------------
    @property
    def gp(self) -> bool:
        """Whether the problem is a geometric program (no synthetic data)."""
        return self.state.gp

    def effective(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The law's axis values implied by decision-variable ``values``."""
        return self.state.effective(values)

    def loss_at(self, values: Mapping[str, Any]) -> Any:
        """Loss at decision-variable ``values`` (vectorised)."""
        return self.state.loss_at(values)

    def cost_at(self, values: Mapping[str, Any]) -> Any:
        """Cost at decision-variable ``values`` (vectorised)."""
        return self.state.cost_at(values)

    def lowest_loss(self) -> float:
        """Infimum of the loss over the bounds (unlimited budget)."""
        return self.state.lowest_loss

    def cheapest(self) -> tuple[float, dict[str, float]]:
        """Cost of the smallest allocation the bounds allow, and that allocation."""
        total, lows = self.state.cheapest
        return total, dict(lows)

    @property
    def closed_form(self) -> ClosedForm | None:
        """The problem's closed form (:mod:`._alloc_closed`), or None when it has none.

        A closed form whose pooled nesting levels need ``v >= 1`` counts only
        when the bounds impose it.
        """
        return self.state.closed_form

    def kkt(self, values: Mapping[str, float], *, budget: float | None = None,
            target: float | None = None) -> tuple[float, dict[str, float]]:
        """KKT residual and multipliers of the point ``values`` under ``cost <= budget``
        or ``loss <= target`` (exactly one of them): the certificate every
        :class:`Allocation` carries, for a point from anywhere (another solver, a plan).

        Examples
        --------
        >>> from rlscale.theory import AdditiveLaw
        >>> law = AdditiveLaw(0.2, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.5})
        >>> prob = AllocationProblem(law, "E + K")
        >>> residual, duals = prob.kkt({"E": 50.0, "K": 50.0}, budget=100.0)
        >>> residual < 1e-12, round(duals["budget"], 6)
        (True, 0.5)
        """
        if (budget is None) == (target is None):
            raise TypeError(f"give exactly one of budget= and target=; got budget={budget!r:.30}"
                            f", target={target!r:.30}")
        if target is None:
            sense, bound = ALLOCATE, check_scalar("budget", budget, low=0.0, low_open=True)
        else:
            sense, bound = MIN_COST, check_scalar("target", target, low=self.law.floor,
                                                  low_open=True)
        checked = self.state.check_values(values)
        point = {v: check_scalar(f"values[{v!r}]", x) for v, x in checked.items()}
        return self.state.kkt(sense, bound, point)

    # -- the fast path ------------------------------------------------------------
    def _fast(self, sense: Sense, method: Any, low: Any, high: Any) -> ClosedPlan | None:
        """The one test of the closed form's fast path: ``sense``'s closed plan when
        ``method`` takes closed forms and every bound in ``[low, high]`` lies in its
        fast interval (:class:`._alloc_closed_plan.ClosedPlan`), else None.  NaN fails both
        comparisons; the caller has checked the bounds are floats."""
        try:
            plan = self._plans[sense.name]
        except KeyError:  # the first solve in this sense
            plan = self._plans[sense.name] = self.state.closed_plan(sense)
        if plan is None or type(method) is not str or method not in _CLOSED:
            return None
        floor = plan.floor
        return plan if plan.low < low - floor and high - floor < plan.high else None

    # -- public solves --------------------------------------------------------
    def allocate(self, budget: float, round_integers: bool = True, *,
                 method: str = "auto") -> Allocation:
        """Minimise the loss subject to ``cost <= budget`` (``method``: see :func:`allocate`).

        A float budget (numpy's float64 is one) in a closed form's fast interval needs no
        other check (:class:`._alloc_closed_plan.ClosedPlan`)."""
        if isinstance(budget, float):
            plan = self._fast(ALLOCATE, method, budget, budget)
            if plan is not None:
                return plan.solve(float(budget), round_integers)
            if 0.0 < budget < math.inf:  # a float needs no other check
                budget = float(budget)
            else:
                budget = check_scalar("budget", budget, low=0.0, low_open=True)
        else:
            budget = check_scalar("budget", budget, low=0.0, low_open=True)
        self._check_budget(budget)
        return self._solve(ALLOCATE, budget, round_integers, check_method(method))

    def _check_budget(self, budget: float) -> None:
        cheapest, lows = self.state.cheapest
        if budget < cheapest * (1 - 1e-12):
            raise InfeasibleError(
                f"budget {budget:g} is below the cost {cheapest:g} of the smallest allocation "
                f"the bounds allow ({_fmt_values(lows)})")

    def min_cost(self, target: float, round_integers: bool = True, *,
                 method: str = "auto") -> Allocation:
        """Minimise the cost subject to ``loss <= target`` (``method``: see :func:`allocate`);
        the fast path of :meth:`allocate` with ``target - floor`` for the budget."""
        if isinstance(target, float):
            plan = self._fast(MIN_COST, method, target, target)
            if plan is not None:
                return plan.solve(float(target), round_integers)
        target = check_scalar("target", target)
        floor = self.law.floor
        if target <= floor:
            word = "below" if target < floor else "equal to"
            raise InfeasibleError(
                f"target loss {target:g} is {word} the law's floor {floor:g}; the floor is "
                "reached only with unlimited data")
        lowest = self.state.lowest_loss
        if target <= lowest * (1 + 1e-12):
            capped = {v: hi for v, (_, hi) in self.bounds.items() if math.isfinite(hi)}
            raise InfeasibleError(
                f"target loss {target:g} is below the lowest loss the bounds allow, {lowest:g} "
                f"(with {_fmt_values(capped)})")
        return self._solve(MIN_COST, target, round_integers, check_method(method))

    def _budgets(self, budgets: Iterable[float]) -> np.ndarray:
        if (type(budgets) is np.ndarray and budgets.dtype == np.float64 and budgets.ndim == 1
                and 0 < budgets.size <= 10_000 and bool(np.all(budgets > 0))
                and bool(np.all(budgets < math.inf))):
            return budgets  # fast path: a flat float array of positive finite budgets
        if isinstance(budgets, str | bytes) or not isinstance(budgets, Iterable):
            raise TypeError(f"budgets must be a sequence of numbers; got budgets={budgets!r:.60}")
        budgets = check_real("budgets", list(budgets), low=0.0, low_open=True)
        if budgets.ndim != 1 or budgets.size > 10_000:
            raise ValueError(f"budgets must be a flat list of at most 10000 budgets; got shape "
                             f"{budgets.shape}")
        return budgets

    def sweep(self, budgets: Iterable[float], round_integers: bool = True,
              progress: bool = False, *, method: str = "auto") -> list[Allocation]:
        """:meth:`allocate` for many budgets, reusing one compiled problem (a closed form is
        evaluated for all budgets at once)."""
        budgets = self._budgets(budgets)
        method = check_method(method)
        it: Iterable[float] = budgets
        if progress:
            from tqdm import tqdm

            it = tqdm(budgets, desc="budgets", unit="budget", file=__import__("sys").stderr)
        logs = closed_logs(self.state, ALLOCATE, budgets, method)
        out = []
        for i, b in enumerate(it):
            self._check_budget(float(b))
            out.append(self._solve(ALLOCATE, float(b), round_integers, method,
                                   None if logs is None else logs[:, i]))
        return out

    def frontier(self, budgets: Iterable[float], *, method: str = "auto") -> AllocationFrontier:
        """Optimal loss, cost and allocation at many budgets, as arrays.

        A closed form computes the allocations in one vectorised pass, and the
        loss, cost, KKT residual and method when one of them is first read.
        Budgets where it leaves the bounds, or problems without one, are solved
        one by one.

        Examples
        --------
        >>> from rlscale.theory import AdditiveLaw
        >>> law = AdditiveLaw(1.82, {"N": 482.01, "D": 2085.43}, {"N": 0.3478, "D": 0.3658})
        >>> f = AllocationProblem(law, "6*N*D").frontier([1e21, 1e23])
        >>> [f"{n:.4g}" for n in f.values["N"]], f.method
        (['2.778e+09', '2.945e+10'], ('closed_form', 'closed_form'))
        >>> bool(np.all(f.kkt_residual < 1e-12))
        True
        """
        # Smallest and largest budget by argmin/argmax, a third of a reduction's cost (NaN is
        # both, and fails both comparisons).
        if (type(budgets) is np.ndarray and budgets.dtype is _FLOAT64 and budgets.ndim == 1
                and 0 < budgets.size <= 10_000):
            plan = self._fast(ALLOCATE, method, budgets.item(budgets.argmin()),
                              budgets.item(budgets.argmax()))
            if plan is not None:  # every budget valid, every optimum inside the box
                return plan.frontier(budgets)
        budgets = self._budgets(budgets)
        method = check_method(method)
        if budgets.size:
            self._check_budget(float(budgets.min()))
        logs = closed_logs(self.state, ALLOCATE, budgets, method)
        if logs is not None and np.all(np.isfinite(logs[0])):
            budgets = budgets.copy()
            x = np.exp(logs)
            return AllocationFrontier._deferred(
                {"budgets": budgets, "values": dict(zip(self.variables, x))},
                partial(frontier_certificate, self.state, x))
        allocs = [self._solve(ALLOCATE, float(b), False, method,
                              None if logs is None else logs[:, i])
                  for i, b in enumerate(budgets)]
        return AllocationFrontier(
            budgets, {v: np.array([a.values[v] for a in allocs]) for v in self.variables},
            np.array([a.loss for a in allocs]), np.array([a.cost for a in allocs]),
            np.array([a.kkt_residual for a in allocs]), tuple(a.method for a in allocs))

    # -- the general path -------------------------------------------------------------
    def _newton(self, sense: Sense, bound: float, round_integers: bool, start: float
                ) -> Allocation | None:
        """The GP by Newton on its KKT equations (:mod:`._alloc_newton`), kept only with a
        KKT residual <= 1e-12 (the certificate every allocation carries); ``None``
        otherwise, and cvxpy solves it."""
        got = newton_gp(self.state, sense, bound)
        if got is None:
            return None
        values, steps = got
        residual, duals = self.state.kkt(sense, bound, values)
        if not residual <= NEWTON_KKT:
            return None
        loss, cost, effective, shares = self.state.summary(values)
        alloc = {"values": values, "effective": effective, "loss": loss, "cost": cost,
                 "budget": bound if sense.minimises_loss else None,
                 "target": None if sense.minimises_loss else bound,
                 "shares": shares, "status": "optimal", "duals": duals,
                 "kkt_residual": residual, "solver": "Newton gp", "success": True,
                 "method": "gp",
                 "message": (f"Newton on the KKT equations in log space ({steps} steps), "
                             f"certified; KKT residual {residual:.2g}")}
        if round_integers:
            alloc.update(round_allocation(self.state, sense, bound, values))
        alloc["seconds"] = time.perf_counter() - start
        return Allocation(**alloc)

    def _solve(self, sense: Sense, bound: float, round_integers: bool, method: str,
               logs: np.ndarray | None = None) -> Allocation:
        """One solve (``logs``: the closed form's ``log x`` when the caller has it).  In the
        fast interval the path of a float budget, so every path gives the same digits."""
        start = time.perf_counter()
        plan = self._fast(sense, method, bound, bound)
        if plan is not None:
            return plan.solve(bound, round_integers)
        if method in _CLOSED and (plan := self.state.closed_plan(sense)) is not None:
            if logs is None:
                logs = closed_logs(self.state, sense, np.array([bound]), method)[:, 0]
            if np.all(np.isfinite(logs)):
                return plan.build(bound, logs.tolist(), np.exp(logs).tolist(),
                                  round_integers, start)
        elif method == "closed_form":
            closed_logs(self.state, sense, np.array([bound]), method)  # raises: no closed form
        if method == "auto" and self.state.gp:
            fast = self._newton(sense, bound, round_integers, start)
            if fast is not None:
                return fast
        values, status, used, message = solve_numeric(self.state, sense, bound, method)
        solver = "CLARABEL " + used
        residual, duals = self.state.kkt(sense, bound, values)
        loss, cost, effective, shares = self.state.summary(values)
        if used == "gp" and sense.minimises_loss and cost < bound * (1 - 1e-6) and any(
                values[v] < hi * (1 - 1e-9) for v, (_, hi) in self.bounds.items()):
            # The loss falls strictly with every costed variable, so an optimum leaves
            # budget unspent only where float64 can no longer resolve the loss: refuse.
            raise InfeasibleError(
                f"budget {bound:g} is beyond what float64 can resolve for this law: the loss "
                f"stops changing at {loss:.10g} once about {cost:.3g} is spent (the rest of "
                f"the budget moves it by less than its rounding); use budgets up to about "
                f"{cost:.2g}")
        alloc = {"values": values,
                 "effective": effective, "loss": loss, "cost": cost,
                 "budget": bound if sense.minimises_loss else None,
                 "target": None if sense.minimises_loss else bound,
                 "shares": shares, "status": status, "duals": duals,
                 "kkt_residual": residual, "solver": solver,
                 "success": residual <= 1e-6, "method": used,
                 "message": message + f"; KKT residual {residual:.2g}"}
        if round_integers:
            alloc.update(round_allocation(self.state, sense, bound, values))
        alloc["seconds"] = time.perf_counter() - start
        return Allocation(**alloc)

    # -- kept for the planning modules of issue 29 (read ``state`` instead) -------------
    def _space(self, sense: Sense, bound: float) -> Any:
        """``values -> space`` of :mod:`._alloc_space` (``state.space_at``)."""
        return self.state.space_at(sense, bound)

    def _matrix(self, poly: Posynomial) -> tuple[np.ndarray, np.ndarray]:
        """The term matrix of the cost or the objective (``state.cost_terms``/``law_terms``)."""
        state = self.state
        return state.cost_terms if poly is state.cost else state.law_terms


def _fmt_values(values: Mapping[str, float]) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in values.items())
