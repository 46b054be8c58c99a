"""The shared state of an allocation problem: built once, frozen, read by every solver.

:func:`~._alloc_build.build_state` validates a law, a cost, bounds, a substitution and
synthetic sources and compiles them into one state object;
:class:`~rlscale.optimize.AllocationProblem` holds it and hands it -- not itself -- to
the solver modules (``_alloc_closed``, ``_alloc_closed_plan``, ``_alloc_kkt``, ``_alloc_model``,
``_alloc_newton``, ``_alloc_space``), which read only its public fields and methods.
Two classes stand behind one protocol (:class:`AllocationState`), so no solver asks
which kind of problem it has:

:class:`GPState`
    A geometric program (no synthetic data): every posynomial is also a term matrix
    ``log(terms) = A @ log(x) + b``, the KKT conditions are checked in ``u = log x``
    (:class:`~._alloc_space.LogSpace`), a closed form may exist
    (:mod:`._alloc_closed`), Newton on the KKT equations is the fast numeric path
    (:mod:`._alloc_newton`) and the conic program is the log-space GP shared by every
    problem of the same structure (:func:`~._alloc_model.gp_model`).
:class:`DCPState`
    Synthetic data: ``x_eff = x_real + gain(x_syn)`` is not a posynomial, so the
    problem is a DCP program in the counts (:class:`~._alloc_model.DCPModel`), checked
    in scaled counts (:class:`~._alloc_space.CountSpace`), with no closed form and no
    Newton path.

Frozen: the builder sets the fields and nothing changes them.  What is derived from
them -- term matrices, the closed form, the cheapest allocation, the lowest loss, and
per sense the log space, the closed plan, the Newton kernel and the DCP program -- is
computed on first use and kept; each is a deterministic function of the fields, so
keeping it changes no number (and a problem that is never solved in a sense pays
nothing for it).
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from rlscale.optimize._alloc_checks import check_mapping_arg
from rlscale.optimize._alloc_kkt import Sense
from rlscale.theory._laws import Law
from rlscale.theory._posynomial import Posynomial
from rlscale.theory._synthetic import SynthesisMethod
from rlscale.theory._validation import check_real

if TYPE_CHECKING:
    from rlscale.optimize._alloc_closed import ClosedForm
    from rlscale.optimize._alloc_closed_plan import ClosedPlan
    from rlscale.optimize._alloc_model import DCPModel, GPModel
    from rlscale.optimize._alloc_newton import NewtonGP
    from rlscale.optimize._alloc_space import CountSpace, LogSpace

__all__ = ["AllocationState", "DCPState", "GPState", "Summary", "TermMatrix"]

#: ``(A, b)`` with ``log(terms) = A @ log(x) + b`` over the decision variables.
TermMatrix = tuple[np.ndarray, np.ndarray]
#: Loss, cost, effective axes and cost shares at a point (what a solver's record reports).
Summary = tuple[float, float, dict[str, float], dict[str, float]]
#: ``values -> space``: the coordinates in which a point's KKT conditions are checked.
SpaceAt = Callable[[Any], "LogSpace | CountSpace"]


@runtime_checkable
class AllocationState(Protocol):
    """What every solver module may read of a problem (see the module docstring).

    Attributes
    ----------
    law : Law
        The law, in its own axes.
    floor : float
        Its irreducible loss ``L_inf``.
    variables : tuple of str
        The decision variables: the law's axes in the decision variables (after
        substitution), then one per synthetic source.
    bounds : mapping
        ``variable -> (lo, hi)`` (``0`` and ``inf`` where open), in variable order.
    objective, reducible, cost : Posynomial
        The reducible loss in the decision variables, the same in the law's own axes,
        and the cost (without the synthetic sources' unit costs).
    substitute : mapping
        Law axis -> monomial in the decision variables.
    synthesis : tuple of SynthesisMethod
    labels : tuple of str
        The cost terms without their coefficients (``"E*t"``), the keys of ``shares``.
    gp : bool
        True for a geometric program (:class:`GPState`).
    method : str
        ``"gp"`` or ``"dcp"``: the ``method=`` of its numeric solve.
    """

    law: Law
    floor: float
    variables: tuple[str, ...]
    bounds: Mapping[str, tuple[float, float]]
    objective: Posynomial
    reducible: Posynomial
    cost: Posynomial
    substitute: Mapping[str, Posynomial]
    synthesis: tuple[SynthesisMethod, ...]
    labels: tuple[str, ...]
    gp: ClassVar[bool]
    method: ClassVar[str]

    def check_values(self, values: Any) -> dict[str, np.ndarray]: ...

    def effective(self, values: Mapping[str, Any]) -> dict[str, Any]: ...

    def loss_at(self, values: Mapping[str, Any]) -> Any: ...

    def reducible_at(self, values: Mapping[str, Any]) -> Any: ...

    def cost_at(self, values: Mapping[str, Any]) -> Any: ...

    @property
    def cheapest(self) -> tuple[float, dict[str, float]]: ...

    @property
    def lowest_loss(self) -> float: ...

    @property
    def closed_form(self) -> ClosedForm | None: ...

    def closed_plan(self, sense: Sense) -> ClosedPlan | None: ...

    def space_at(self, sense: Sense, bound: float) -> SpaceAt: ...

    def kkt(self, sense: Sense, bound: float, values: Mapping[str, float]
            ) -> tuple[float, dict[str, float]]: ...

    def summary(self, values: dict[str, float]) -> Summary: ...

    def candidate_loss_cost(self, cand: dict[str, np.ndarray]
                            ) -> tuple[np.ndarray, np.ndarray]: ...

    def conic_model(self, sense: Sense) -> Any: ...

    def conic_solve(self, sense: Sense, rhs: float) -> tuple[str, np.ndarray | None]: ...


@dataclass(frozen=True, eq=False)
class _State(abc.ABC):
    """The fields and evaluations both kinds share (validated by the builder)."""

    law: Law
    variables: tuple[str, ...]
    bounds: Mapping[str, tuple[float, float]]
    objective: Posynomial
    reducible: Posynomial
    cost: Posynomial
    substitute: Mapping[str, Posynomial]
    synthesis: tuple[SynthesisMethod, ...]
    labels: tuple[str, ...]
    #: Derived pieces kept per sense (module docstring); read through the methods only.
    _memo: dict[tuple[str, str], Any] = field(default_factory=dict, init=False, repr=False)

    gp: ClassVar[bool]
    method: ClassVar[str]
    #: The numeric program in words, for messages (``solver_failure``, ``solve_numeric``).
    program: ClassVar[str]
    #: Why ``method=`` of the other kind does not fit, for the ValueError.
    why: ClassVar[str]
    #: How cvxpy is called, for the record's message.
    via: ClassVar[str]

    @property
    def floor(self) -> float:
        return self.law.floor

    def _kept(self, what: str, sense: Sense, build: Callable[[], Any]) -> Any:
        key = (what, sense.name)
        try:
            return self._memo[key]
        except KeyError:
            got = self._memo[key] = build()
            return got

    # -- evaluations (vectorised; the values are checked) -------------------------------
    def check_values(self, values: Any) -> dict[str, np.ndarray]:
        """``values`` checked: a mapping with every decision variable, each >= 0 and finite."""
        check_mapping_arg("values", values, required=True)
        missing = [v for v in self.variables if v not in values]
        if missing:
            raise ValueError(f"values needs every decision variable {list(self.variables)}; "
                             f"missing {missing}")
        return {v: check_real(f"values[{v!r}]", values[v], low=0.0) for v in self.variables}

    def effective(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The law's axis values implied by decision-variable ``values``."""
        values = self.check_values(values)
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

    def reducible_at(self, values: Mapping[str, Any]) -> Any:
        """Loss above the floor at decision-variable ``values`` (the law is written in its
        own axes: decision variables go through :meth:`effective` first)."""
        return self.reducible.evaluate(self.effective(values))

    def loss_at(self, values: Mapping[str, Any]) -> Any:
        """Loss at decision-variable ``values``."""
        return self.law.floor + self.reducible_at(values)

    def cost_at(self, values: Mapping[str, Any]) -> Any:
        """Cost at decision-variable ``values``, the synthetic sources' unit costs included."""
        values = self.check_values(values)
        c = self.cost.evaluate(values)
        for m in self.synthesis:
            c = c + m.unit_cost * np.asarray(values[m.name], dtype=np.float64)
        return c

    def shares_at(self, values: Mapping[str, float]) -> dict[str, float]:
        """Share of the cost per cost term (and per synthetic source) at ``values``."""
        terms = self.cost.term_values(values) if self.cost.axes else np.array(
            [m.coefficient for m in self.cost.terms])
        amounts = dict(zip(self.labels, (float(t) for t in terms)))
        for m in self.synthesis:
            amounts[m.name] = m.unit_cost * values[m.name]
        total = sum(amounts.values())
        return {k: v / total for k, v in amounts.items()}

    def evaluated_summary(self, values: dict[str, float]) -> Summary:
        """Loss, cost, effective axes and shares by evaluating the law and the cost."""
        return (float(self.loss_at(values)), float(self.cost_at(values)),
                {k: float(v) for k, v in self.effective(values).items()},
                self.shares_at(values))

    @cached_property
    def cheapest(self) -> tuple[float, dict[str, float]]:
        """Cost of the smallest allocation the bounds allow, and that allocation."""
        lows = {v: lo for v, (lo, _) in self.bounds.items()}
        total = 0.0
        for m in self.cost.terms:
            total += m.coefficient * math.prod(lows[a] ** e for a, e in m.exponents)
        total += sum(m.unit_cost * lows[m.name] for m in self.synthesis)
        return total, lows

    @cached_property
    def lowest_loss(self) -> float:
        """Infimum of the loss over the bounds (unlimited budget)."""
        return self._lowest()

    def _lowest(self) -> float:
        """Each term of the reducible loss at the bound that minimises it."""
        total = self.law.floor
        for m in self.objective.terms:
            val = m.coefficient
            for a, e in m.exponents:
                lo, hi = self.bounds[a]
                side = hi if e < 0 else lo
                val *= side ** e if math.isfinite(side) and side > 0 else 0.0
            total += val
        return total

    def kkt(self, sense: Sense, bound: float, values: Mapping[str, float]
            ) -> tuple[float, dict[str, float]]:
        """The KKT residual and multipliers of ``values`` (:mod:`._alloc_kkt`), in the
        coordinates of :meth:`space_at`."""
        return self.space_at(sense, bound)(values).kkt(values)

    @abc.abstractmethod
    def space_at(self, sense: Sense, bound: float) -> SpaceAt:
        """``values -> space``: the coordinates of the KKT check (:mod:`._alloc_space`)."""

    @abc.abstractmethod
    def closed_plan(self, sense: Sense) -> ClosedPlan | None:
        """The closed form precomputed for ``sense``, or None."""

    @abc.abstractmethod
    def summary(self, values: dict[str, float]) -> Summary:
        """Loss, cost, effective axes and cost shares at a solver's point."""

    @abc.abstractmethod
    def candidate_loss_cost(self, cand: dict[str, np.ndarray]
                            ) -> tuple[np.ndarray, np.ndarray]:
        """Loss and cost of integer rounding candidates (``variable -> array``)."""

    @abc.abstractmethod
    def conic_solve(self, sense: Sense, rhs: float) -> tuple[str, np.ndarray | None]:
        """cvxpy's status and the point of the conic program at right-hand side ``rhs``."""


@dataclass(frozen=True, eq=False)
class GPState(_State):
    """A geometric program's state: the posynomials and their term matrices (module
    docstring)."""

    gp: ClassVar[bool] = True
    method: ClassVar[str] = "gp"
    program: ClassVar[str] = "geometric program (cvxpy, in log space)"
    why: ClassVar[str] = "it has no synthetic data, so it is a geometric program"
    via: ClassVar[str] = "cvxpy, the GP in log space"

    # -- term matrices and the box in log space ---------------------------------------
    def _terms(self, poly: Posynomial) -> TermMatrix:
        A = np.array([[m.power_of(v) for v in self.variables] for m in poly.terms])
        return A, np.log([m.coefficient for m in poly.terms])

    @cached_property
    def law_terms(self) -> TermMatrix:
        """The reducible loss's term matrix (``A`` has one row per term of :attr:`objective`)."""
        return self._terms(self.objective)

    @cached_property
    def cost_terms(self) -> TermMatrix:
        """The cost's term matrix."""
        return self._terms(self.cost)

    @cached_property
    def effective_terms(self) -> TermMatrix:
        """``(A, b)`` with ``log(effective axes) = A @ log(x) + b`` (an axis is a decision
        variable itself or a substituted monomial)."""
        A = np.zeros((len(self.law.axes), len(self.variables)))
        b = np.zeros(len(self.law.axes))
        for i, axis in enumerate(self.law.axes):
            if axis in self.substitute:
                (mono,) = self.substitute[axis].terms
                b[i] = math.log(mono.coefficient)
                A[i] = [mono.power_of(v) for v in self.variables]
            else:
                A[i, self.variables.index(axis)] = 1.0
        return A, b

    @cached_property
    def log_box(self) -> tuple[np.ndarray, np.ndarray]:
        """``(log lo, log hi)`` of the bounds in variable order (``-inf``/``inf`` where open)."""
        with np.errstate(divide="ignore"):  # a bound of 0 is -inf in logs
            return (np.log([lo for lo, _ in self.bounds.values()]),
                    np.log([hi for _, hi in self.bounds.values()]))

    # -- the closed form -------------------------------------------------------------
    @cached_property
    def closed_form(self) -> ClosedForm | None:
        """The problem's closed form (:func:`~._alloc_closed.closed_form`), or None.  One
        whose pooled nesting levels need ``v >= 1`` counts only when the bounds impose it."""
        from rlscale.optimize._alloc_closed import closed_form

        cf = closed_form(self.objective, self.cost, list(self.variables))
        if cf is not None and any(self.bounds[self.variables[i]][0] < 1.0
                                  for i in cf.needs_unit_lower):
            return None
        return cf

    def closed_plan(self, sense: Sense) -> ClosedPlan | None:
        """The closed form precomputed for ``sense`` (:class:`~._alloc_closed_plan.ClosedPlan`);
        None without a closed form."""
        try:  # the hot path of a closed-form solve: one lookup
            return self._memo[("plan", sense.name)]
        except KeyError:
            from rlscale.optimize._alloc_closed_plan import ClosedPlan

            plan = None if self.closed_form is None else ClosedPlan(self, sense)
            self._memo[("plan", sense.name)] = plan
            return plan

    # -- coordinates, Newton and the conic program ------------------------------------
    def log_space(self, sense: Sense, bound: float) -> LogSpace:
        """The log space of ``sense`` with its main constraint at ``bound``."""
        from rlscale.optimize._alloc_space import LogSpace

        base = self._kept("space", sense, lambda: LogSpace(self, sense, bound))
        return base.at(bound, self.law.floor)

    def space_at(self, sense: Sense, bound: float) -> SpaceAt:
        """``values -> space``: one log space, whatever the point."""
        space = self.log_space(sense, bound)
        return lambda values: space

    def newton_kernel(self, sense: Sense, space: LogSpace) -> NewtonGP:
        """Newton's compiled problem for ``sense`` (:class:`~._alloc_newton.NewtonGP`), built
        from ``space`` on first use (it reads only what every bound shares)."""
        from rlscale.optimize._alloc_newton import NewtonGP

        return self._kept("newton", sense, lambda: NewtonGP(space))

    def conic_model(self, sense: Sense) -> GPModel:
        """The compiled log-space GP of this structure (:func:`~._alloc_model.gp_model`:
        shared by every problem with as many terms and the same bounds pattern, looked up
        in its cache at each solve)."""
        from rlscale.optimize._alloc_model import gp_model

        return gp_model(sense, len(self.law_terms[1]), len(self.cost_terms[1]),
                        list(self.bounds.values()))

    def conic_solve(self, sense: Sense, rhs: float) -> tuple[str, np.ndarray | None]:
        """:meth:`conic_model` with this problem's numbers, solved at ``rhs``."""
        bounds = list(self.bounds.values())
        return self.conic_model(sense).solve(self.law_terms, self.cost_terms,
                                             [lo for lo, _ in bounds],
                                             [hi for _, hi in bounds], rhs)

    # -- summaries ---------------------------------------------------------------------
    def summary(self, values: dict[str, float]) -> Summary:
        """Loss, cost, effective axes and cost shares at a solver's point: from the term
        matrices in log space at positive counts (one pass, no re-validation: the point
        came from a solver), by evaluation otherwise."""
        x = np.array([values[v] for v in self.variables])
        if not np.all(x > 0):
            return self.evaluated_summary(values)
        u = np.log(x)
        A, b = self.law_terms
        Ac, bc = self.cost_terms
        Ae, be = self.effective_terms
        with np.errstate(over="ignore"):
            terms = np.exp(Ac @ u + bc)
            cost = float(terms.sum())
            loss = self.law.floor + float(np.exp(A @ u + b).sum())
            eff = np.exp(Ae @ u + be)
        return (loss, cost, dict(zip(self.law.axes, eff.tolist())),
                dict(zip(self.labels, (terms / cost).tolist())))

    def candidate_loss_cost(self, cand: dict[str, np.ndarray]
                            ) -> tuple[np.ndarray, np.ndarray]:
        """Loss and cost of rounding candidates (integers >= 1): the digits of
        :meth:`loss_at`/:meth:`cost_at` without their checks where every value is positive
        and finite, the checked evaluation otherwise (with its limits)."""
        size = next(iter(cand.values())).size
        with np.errstate(all="ignore"):
            eff = {axis: (_terms_sum(self.substitute[axis], cand, size)
                          if axis in self.substitute else cand[axis])
                   for axis in self.law.axes}
            loss = self.law.floor + _terms_sum(self.reducible, eff, size)
            cost = _terms_sum(self.cost, cand, size)
        if (np.all(np.isfinite(loss)) and np.all(np.isfinite(cost)) and np.all(cost > 0)
                and all(np.all((a > 0) & np.isfinite(a)) for a in eff.values())):
            return loss, cost
        return _checked_loss_cost(self, cand)


@dataclass(frozen=True, eq=False)
class DCPState(_State):
    """A problem with synthetic data: a DCP program in the counts (module docstring)."""

    gp: ClassVar[bool] = False
    method: ClassVar[str] = "dcp"
    program: ClassVar[str] = "convex program (cvxpy DCP)"
    why: ClassVar[str] = "synthetic data makes it a DCP program in the counts"
    via: ClassVar[str] = "cvxpy DCP"

    #: No closed form with synthetic data.
    closed_form: ClassVar[None] = None

    def closed_plan(self, sense: Sense) -> None:
        return None

    def _lowest(self) -> float:
        """Synthetic units can only lower the loss: to the floor itself where a linear
        source is unbounded, else at most to the loss with every count at its cap."""
        total = super()._lowest()
        if any(math.isinf(self.bounds[m.name][1]) and m.kind == "linear"
               for m in self.synthesis):
            return self.law.floor
        vals = {v: (hi if math.isfinite(hi) else 1e300) for v, (_, hi) in self.bounds.items()}
        return min(total, float(self.loss_at(vals)))

    def space_at(self, sense: Sense, bound: float) -> SpaceAt:
        """``values -> space``: scaled counts, scaled at the point itself."""
        from rlscale.optimize._alloc_space import CountSpace

        return lambda values: CountSpace(self, sense, bound, values)

    def conic_model(self, sense: Sense) -> DCPModel:
        """This problem's DCP program in ``sense`` (:class:`~._alloc_model.DCPModel`: one
        per problem and sense, built on first use)."""
        from rlscale.optimize._alloc_model import DCPModel

        return self._kept("dcp", sense, lambda: DCPModel(self, sense))

    def conic_solve(self, sense: Sense, rhs: float) -> tuple[str, np.ndarray | None]:
        """:meth:`conic_model`, solved at ``rhs``."""
        return self.conic_model(sense).solve(rhs)

    def summary(self, values: dict[str, float]) -> Summary:
        return self.evaluated_summary(values)

    def candidate_loss_cost(self, cand: dict[str, np.ndarray]
                            ) -> tuple[np.ndarray, np.ndarray]:
        return _checked_loss_cost(self, cand)


def _checked_loss_cost(state: _State, cand: dict[str, np.ndarray]
                       ) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(divide="ignore"):
        return (np.asarray(state.loss_at(cand), dtype=np.float64),
                np.asarray(state.cost_at(cand), dtype=np.float64))


def _terms_sum(poly: Posynomial, arrays: dict[str, np.ndarray], size: int) -> np.ndarray:
    """``poly`` at checked positive ``arrays``: the arithmetic of
    :meth:`~rlscale.theory.Posynomial.evaluate` (each term ``c * x**e * ...`` in its
    exponents' order, the terms added in order), without re-validating the input."""
    total = None
    for m in poly.terms:
        term = np.full(size, m.coefficient)
        for name, e in m.exponents:
            term = term * arrays[name] ** e
        total = term if total is None else total + term
    return total
