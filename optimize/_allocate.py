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
a closed form when first read: :class:`._alloc_closed.ClosedPlan`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping
from functools import lru_cache, partial
from typing import Any

import numpy as np

from rlscale.optimize._alloc_checks import (
    check_exponents,
    check_mapping_arg,
    check_method,
    parse_bounds,
)
from rlscale.optimize._alloc_closed import (
    ClosedForm,
    ClosedPlan,
    closed_form,
    closed_logs,
    frontier_certificate,
)
from rlscale.optimize._alloc_kkt import ALLOCATE, MIN_COST, Sense, kkt_residual, round_allocation
from rlscale.optimize._alloc_model import solve_numeric
from rlscale.optimize._alloc_newton import NEWTON_KKT, newton_gp
from rlscale.optimize._alloc_result import Allocation, AllocationFrontier, summarise
from rlscale.optimize._alloc_space import CountSpace, LogSpace
from rlscale.theory._errors import InfeasibleError
from rlscale.theory._laws import Law
from rlscale.theory._posynomial import Posynomial, parse_posynomial
from rlscale.theory._synthetic import SynthesisMethod
from rlscale.theory._validation import check_real, check_scalar

__all__ = ["Allocation", "AllocationFrontier", "AllocationProblem", "kkt_residual"]

#: Cost and substitution strings parsed once (posynomials are immutable, so they are shared).
_parse = lru_cache(maxsize=256)(parse_posynomial)
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
        if not isinstance(law, Law):
            raise TypeError(f"law must be a rlscale.theory law (AdditiveLaw, ...); got "
                            f"{type(law).__name__}")
        check_mapping_arg("substitute", substitute)
        if synthesis is not None and (isinstance(synthesis, str | bytes)
                                      or not isinstance(synthesis, Iterable)):
            raise TypeError(f"synthesis must be a list of SynthesisMethod; got "
                            f"synthesis={synthesis!r:.60}")
        if not law.properties.gp_compatible:
            raise ValueError(f"{type(law).__name__} is not GP-compatible")
        self.law = law
        self.synthesis = tuple(synthesis) if synthesis is not None else ()
        for m in self.synthesis:
            if not isinstance(m, SynthesisMethod):
                raise TypeError(f"synthesis entries must be SynthesisMethod; got {m!r}")
            if m.axis not in law.axes:
                raise ValueError(f"synthesis method {m.name!r} targets axis {m.axis!r}, which "
                                 f"the law does not have (axes: {list(law.axes)})")
        objective = reducible = law.reducible_posynomial()
        subs = {}
        if substitute:
            if self.synthesis:
                raise ValueError("synthesis and substitute cannot be combined; express the "
                                 "law in the counts you buy")
            for axis, expr in substitute.items():
                if not isinstance(expr, str):
                    raise TypeError(f"substitute[{axis!r}] must be a monomial string such as "
                                    f"'E*t'; got {expr!r:.60}")
                if axis not in law.axes:
                    raise ValueError(f"substitute names {axis!r}, not an axis of the law "
                                     f"(axes: {list(law.axes)})")
                mono = _parse(expr)
                if not mono.is_monomial:
                    raise ValueError(f"substitute[{axis!r}] = {expr!r} must be a monomial such "
                                     "as 'E*t'")
                subs[axis] = mono
            objective = objective.substitute(subs)
        self.substitute = subs
        self.objective = objective
        check_exponents("the law (in the decision variables)", objective)
        law_vars = list(objective.axes)
        self.cost = _parse(cost) if type(cost) is str else parse_posynomial(cost)
        check_exponents("the cost", self.cost)
        unknown = [a for a in self.cost.axes if a not in law_vars]
        if unknown:
            raise ValueError(f"cost {self.cost.source or self.cost!s} mentions unknown axis "
                             f"{unknown[0]!r}; the decision variables are {law_vars}")
        for m in self.cost.terms:
            neg = [a for a, e in m.exponents if e < 0]
            if neg:
                raise ValueError(f"cost term {m} decreases as {neg[0]} grows; costs must not "
                                 "fall with more data")
        self.variables = law_vars + [m.name for m in self.synthesis]
        dup = {v for v in self.variables if self.variables.count(v) > 1}
        if dup:
            raise ValueError(f"synthesis method names clash with axes: {sorted(dup)}")
        defaults = law.default_bounds() if hasattr(law, "default_bounds") and not subs else {}
        self.bounds = parse_bounds(bounds, self.variables, defaults)
        if self.synthesis:
            lin = all(len(m.exponents) == 0 or (len(m.exponents) == 1 and m.exponents[0][1] == 1)
                      for m in self.cost.terms)
            if not lin:
                raise ValueError("synthetic data needs a cost linear in the counts (e.g. "
                                 f"'100*environments + trajectories'); got {self.cost}")
            multi = [str(m) for m in self.objective.terms if len(m.exponents) != 1]
            if multi:
                raise ValueError(f"synthetic data needs a law whose terms each involve one "
                                 f"axis (additive or pass-rate); term {multi[0]} does not")
        free = [v for v in law_vars if v not in self.cost.axes and not
                math.isfinite(self.bounds[v][1])]
        if free:
            raise InfeasibleError(
                f"axis {free[0]!r} has no cost and no upper bound, so the loss falls to the "
                f"floor {law.floor:g} for free; add {free[0]} to the cost or bound it")
        self._compiled: dict[str, Any] = {}
        self._mats: dict[Any, tuple[np.ndarray, np.ndarray]] = {}
        self._labels = [m.label() for m in self.cost.terms]
        self._spaces: dict[str, LogSpace] = {}
        self._kernels: dict[str, Any] = {}  # Newton's compiled GP per sense (_alloc_newton)
        self._cheapest: tuple[float, dict[str, float]] | None = None
        self._plans: dict[str, ClosedPlan | None] = {}
        self._reducible = reducible

    # -- helpers -----------------------------------------------------------
    @property
    def gp(self) -> bool:
        return not self.synthesis

    def _values(self, values: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """``values`` checked: a mapping with every decision variable, each >= 0 and finite."""
        check_mapping_arg("values", values, required=True)
        missing = [v for v in self.variables if v not in values]
        if missing:
            raise ValueError(f"values needs every decision variable {self.variables}; "
                             f"missing {missing}")
        return {v: check_real(f"values[{v!r}]", values[v], low=0.0) for v in self.variables}

    def effective(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The law's axis values implied by decision-variable ``values``."""
        values = self._values(values)
        out: dict[str, Any] = {}
        for axis in self.law.axes:
            if axis in self.substitute:
                out[axis] = self.substitute[axis].evaluate(values)
            else:
                x = np.asarray(values[axis], dtype=np.float64)
                for m in self.synthesis:
                    if m.axis == axis:
                        x = x + (np.asarray(m.effective(values[axis], values[m.name]))
                                 - np.asarray(values[axis], dtype=np.float64))
                out[axis] = x
        return out

    def loss_at(self, values: Mapping[str, Any]) -> Any:
        """Loss at decision-variable ``values`` (vectorised)."""
        return self.law.floor + self._reducible_at(values)

    def _reducible_at(self, values: Mapping[str, Any]) -> Any:
        """Loss above the floor at decision-variable ``values`` (the law is written in its
        own axes: decision variables go through :meth:`effective` first)."""
        return self._reducible.evaluate(self.effective(values))

    def cost_at(self, values: Mapping[str, Any]) -> Any:
        """Cost at decision-variable ``values`` (vectorised)."""
        values = self._values(values)
        c = self.cost.evaluate(values)
        for m in self.synthesis:
            c = c + m.unit_cost * np.asarray(values[m.name], dtype=np.float64)
        return c

    def lowest_loss(self) -> float:
        """Infimum of the loss over the bounds (unlimited budget)."""
        total = self.law.floor
        for m in self.objective.terms:
            val = m.coefficient
            for a, e in m.exponents:
                lo, hi = self.bounds[a]
                side = hi if e < 0 else lo
                val *= side ** e if math.isfinite(side) and side > 0 else 0.0
            total += val
        if self.synthesis:  # synthetic units can only lower the loss further
            return self.law.floor if any(
                math.isinf(self.bounds[m.name][1]) and m.kind == "linear"
                for m in self.synthesis) else min(total, self._lowest_loss_synthetic())
        return total

    def _lowest_loss_synthetic(self) -> float:
        vals = {v: (hi if math.isfinite(hi) else 1e300) for v, (_, hi) in self.bounds.items()}
        return float(self.loss_at(vals))

    def cheapest(self) -> tuple[float, dict[str, float]]:
        """Cost of the smallest allocation the bounds allow, and that allocation."""
        lows = {v: lo for v, (lo, _) in self.bounds.items()}
        total = 0.0
        for m in self.cost.terms:
            total += m.coefficient * math.prod(lows[a] ** e for a, e in m.exponents)
        total += sum(m.unit_cost * lows[m.name] for m in self.synthesis)
        return total, lows

    def _fmt_values(self, values: Mapping[str, float]) -> str:
        return ", ".join(f"{k}={v:g}" for k, v in values.items())

    # -- closed form, spaces and matrices -------------------------------------
    @property
    def closed_form(self) -> ClosedForm | None:
        """The problem's closed form (:mod:`._alloc_closed`), or None when it has none.

        A closed form whose pooled nesting levels need ``v >= 1`` counts only
        when the bounds impose it.
        """
        if not hasattr(self, "_closed"):
            cf = None if self.synthesis else closed_form(self.objective, self.cost,
                                                         self.variables)
            if cf is not None and any(self.bounds[self.variables[i]][0] < 1.0
                                      for i in cf.needs_unit_lower):
                cf = None
            self._closed = cf
            with np.errstate(divide="ignore"):  # a bound of 0 is -inf in logs
                self._log_lo = np.log([lo for lo, _ in self.bounds.values()])
                self._log_hi = np.log([hi for _, hi in self.bounds.values()])
        return self._closed

    def _matrix(self, poly: Posynomial) -> tuple[np.ndarray, np.ndarray]:
        """``(A, b)`` with ``log(terms) = A @ log(x) + b`` over :attr:`variables`."""
        key = id(poly)
        if key not in self._mats:
            A = np.array([[m.power_of(v) for v in self.variables] for m in poly.terms])
            b = np.log([m.coefficient for m in poly.terms])
            self._mats[key] = (A, b)
        return self._mats[key]

    def _space(self, sense: Sense, bound: float) -> Any:
        """``values -> space``: where the KKT conditions are checked and polished."""
        if self.gp:
            base = self._spaces.get(sense.name)
            if base is None:
                base = self._spaces[sense.name] = LogSpace(self, sense, bound)
            space = base.at(bound, self.law.floor)
            return lambda values: space
        return lambda values: CountSpace(self, sense, bound, values)

    def _plan(self, sense: Sense) -> ClosedPlan | None:
        """The closed form precomputed for ``sense`` (:class:`._alloc_closed.ClosedPlan`),
        built on first use; None without a closed form."""
        if sense.name not in self._plans:
            self._plans[sense.name] = (None if self.closed_form is None
                                       else ClosedPlan(self, sense))
        return self._plans[sense.name]

    def _kkt(self, sense: Sense, bound: float, values: Mapping[str, float]
             ) -> tuple[float, dict[str, float]]:
        return self._space(sense, bound)(values).kkt(values)

    # -- public solves --------------------------------------------------------
    def allocate(self, budget: float, round_integers: bool = True, *,
                 method: str = "auto") -> Allocation:
        """Minimise the loss subject to ``cost <= budget`` (``method``: see :func:`allocate`).

        A float budget in a closed form's fast interval needs no other check
        (:class:`._alloc_closed.ClosedPlan`)."""
        plan = self._plans.get("allocate") or self._plan(ALLOCATE)
        if (type(budget) is float and plan is not None and plan.low < budget < plan.high
                and type(method) is str and method in _CLOSED):
            return plan.solve(budget, budget, round_integers)
        if not (type(budget) is float and 0.0 < budget < math.inf):  # fast path: a float
            budget = check_scalar("budget", budget, low=0.0, low_open=True)
        self._check_budget(budget)
        return self._solve(ALLOCATE, budget, round_integers, check_method(method))

    def _check_budget(self, budget: float) -> None:
        if self._cheapest is None:
            self._cheapest = self.cheapest()
        cheapest, lows = self._cheapest
        if budget < cheapest * (1 - 1e-12):
            raise InfeasibleError(
                f"budget {budget:g} is below the cost {cheapest:g} of the smallest allocation "
                f"the bounds allow ({self._fmt_values(lows)})")

    def min_cost(self, target: float, round_integers: bool = True, *,
                 method: str = "auto") -> Allocation:
        """Minimise the cost subject to ``loss <= target`` (``method``: see :func:`allocate`);
        the fast path of :meth:`allocate` with ``target - floor`` for the budget."""
        plan = self._plans.get("min_cost") or self._plan(MIN_COST)
        if (type(target) is float and plan is not None and type(method) is str
                and method in _CLOSED and plan.low < target - plan.floor < plan.high):
            return plan.solve(target, target - plan.floor, round_integers)
        target = check_scalar("target", target)
        floor = self.law.floor
        if target <= floor:
            word = "below" if target < floor else "equal to"
            raise InfeasibleError(
                f"target loss {target:g} is {word} the law's floor {floor:g}; the floor is "
                "reached only with unlimited data")
        lowest = self.lowest_loss()
        if target <= lowest * (1 + 1e-12):
            capped = {v: hi for v, (_, hi) in self.bounds.items() if math.isfinite(hi)}
            raise InfeasibleError(
                f"target loss {target:g} is below the lowest loss the bounds allow, {lowest:g} "
                f"(with {self._fmt_values(capped)})")
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
        logs = closed_logs(self, ALLOCATE, budgets, method)
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
        plan = self._plans.get("allocate") or self._plan(ALLOCATE)
        # Smallest and largest budget by argmin/argmax, a third of a reduction's cost (NaN is
        # both, and fails both comparisons).
        if (type(budgets) is np.ndarray and plan is not None and budgets.dtype is _FLOAT64
                and budgets.ndim == 1 and 0 < budgets.size <= 10_000 and type(method) is str
                and method in _CLOSED and plan.low < budgets.item(budgets.argmin())
                and budgets.item(budgets.argmax()) < plan.high):
            return plan.frontier(budgets)  # every budget valid, every optimum inside the box
        budgets = self._budgets(budgets)
        method = check_method(method)
        if budgets.size:
            self._check_budget(float(budgets.min()))
        logs = closed_logs(self, ALLOCATE, budgets, method)
        if logs is not None and np.all(np.isfinite(logs[0])):
            budgets = budgets.copy()
            x = np.exp(logs)
            return AllocationFrontier._deferred(
                {"budgets": budgets, "values": dict(zip(self.variables, x))},
                partial(frontier_certificate, self, x))
        allocs = [self._solve(ALLOCATE, float(b), False, method,
                              None if logs is None else logs[:, i])
                  for i, b in enumerate(budgets)]
        return AllocationFrontier(
            budgets, {v: np.array([a.values[v] for a in allocs]) for v in self.variables},
            np.array([a.loss for a in allocs]), np.array([a.cost for a in allocs]),
            np.array([a.kkt_residual for a in allocs]), tuple(a.method for a in allocs))

    def _newton(self, sense: Sense, bound: float, round_integers: bool, start: float
                ) -> Allocation | None:
        """The GP by Newton on its KKT equations (:mod:`._alloc_newton`), kept only with a
        KKT residual <= 1e-12 (the certificate every allocation carries); ``None``
        otherwise, and cvxpy solves it."""
        got = newton_gp(self, sense, bound)
        if got is None:
            return None
        values, steps = got
        residual, duals = self._kkt(sense, bound, values)
        if not residual <= NEWTON_KKT:
            return None
        loss, cost, effective, shares = summarise(self, values)
        alloc = {"values": values, "effective": effective, "loss": loss, "cost": cost,
                 "budget": bound if sense.minimises_loss else None,
                 "target": None if sense.minimises_loss else bound,
                 "shares": shares, "status": "optimal", "duals": duals,
                 "kkt_residual": residual, "solver": "Newton gp", "success": True,
                 "method": "gp",
                 "message": (f"Newton on the KKT equations in log space ({steps} steps), "
                             f"certified; KKT residual {residual:.2g}")}
        if round_integers:
            alloc.update(round_allocation(self, sense, bound, values))
        alloc["seconds"] = time.perf_counter() - start
        return Allocation(**alloc)

    def _solve(self, sense: Sense, bound: float, round_integers: bool, method: str,
               logs: np.ndarray | None = None) -> Allocation:
        """One solve (``logs``: the closed form's ``log x`` when the caller has it).  In the
        fast interval the path of a float budget, so every path gives the same digits."""
        start = time.perf_counter()
        if method in _CLOSED and (plan := self._plan(sense)) is not None:
            rhs = bound - plan.floor
            if plan.low < rhs < plan.high:
                return plan.solve(bound, rhs, round_integers)
            if logs is None:
                logs = closed_logs(self, sense, np.array([bound]), method)[:, 0]
            if np.all(np.isfinite(logs)):
                return plan.build(bound, logs.tolist(), np.exp(logs).tolist(),
                                  round_integers, start)
        elif method == "closed_form":
            closed_logs(self, sense, np.array([bound]), method)  # raises: no closed form
        if method == "auto" and self.gp:
            fast = self._newton(sense, bound, round_integers, start)
            if fast is not None:
                return fast
        values, status, used, message = solve_numeric(self, sense, bound, method)
        solver = "CLARABEL " + used
        residual, duals = self._kkt(sense, bound, values)
        loss, cost, effective, shares = summarise(self, values)
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
            alloc.update(round_allocation(self, sense, bound, values))
        alloc["seconds"] = time.perf_counter() - start
        return Allocation(**alloc)
