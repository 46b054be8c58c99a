"""Compute-optimal data allocation as a geometric program (cvxpy).

Minimising a law's loss ``L_inf + P(x)`` (``P`` a posynomial with negative
powers, see :mod:`rlscale.theory._laws`) subject to a posynomial cost
``C(x) <= B`` and box bounds is a geometric program: in ``u = log x`` both
``log P`` and ``log C`` are convex (log-sum-exp of affine functions), so the
local optimum is global (Boyd, Kim, Vandenberghe & Hassibi 2007, "A tutorial
on geometric programming", §2.5).  It is solved with cvxpy's disciplined GP
mode (``solve(gp=True)``), then *polished*: Newton's method on the KKT
equations of the active set, so results are accurate to ~1e-12 rather than
the conic solver's ~1e-8.  ``min_cost`` swaps objective and constraint.

KKT residual (reported on every :class:`Allocation`): in log-log variables
the stationarity condition reads ``grad_u log P + lambda grad_u log C +
sum bound multipliers = 0``, where ``-grad_u log P`` are the law's
elasticities and ``grad_u log C`` the cost's.  Multipliers are fitted by
non-negative least squares over the active constraints; the residual is the
largest of the stationarity error (relative to the largest elasticity) and
the relative constraint violation.  It depends on the point only, so it
grades any solver (the benchmark grades scipy's SLSQP with it too).

Synthetic data (``synthesis=``) turns an axis into ``x_eff = x_real +
gain(x_syn)``, which is not a posynomial; with a cost linear in the counts
the problem is still convex in the counts themselves (a decreasing convex
power of a concave effective count), and it is solved in cvxpy's DCP mode.

Budget sweeps (:meth:`AllocationProblem.sweep`) reuse one compiled problem:
the budget is a cvxpy ``Parameter`` and the problem obeys the DPP rules, so
cvxpy caches the compilation and each budget only re-solves.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlscale.theory._errors import InfeasibleError, SolverError
from rlscale.theory._laws import Law
from rlscale.theory._posynomial import Posynomial, parse_posynomial
from rlscale.theory._synthetic import SynthesisMethod
from rlscale.theory._validation import check_real, check_scalar

__all__ = ["Allocation", "AllocationProblem", "allocate", "kkt_residual", "min_cost"]

_ACTIVE = 1e-6  # relative slack under which a constraint counts as active


@dataclass(frozen=True)
class Allocation:
    """The outcome of :func:`allocate` or :func:`min_cost`.

    Attributes
    ----------
    values : dict
        Optimal value of each decision variable (continuous).
    effective : dict
        The law's axes at the optimum (after substitution and synthetic data).
    loss, cost : float
        Loss and cost at the optimum.
    budget, target : float or None
        The constraint that was imposed (one of them is ``None``).
    shares : dict
        Share of the cost per cost term, keyed by the term without its
        coefficient (``"E*t"``); for a linear cost, the share per axis.
    status : str
        Solver status (``"optimal"``) and whether polishing ran.
    duals : dict
        Multipliers in log-log form: ``"budget"`` is ``d log(L - L_inf) / d log B``
        (minus; reported positive), ``"target"`` is ``d log C / d log(target - L_inf)``;
        active bounds appear as ``"x>=lo"`` / ``"x<=hi"``.
    kkt_residual : float
        See the module docstring; ``<= 1e-6`` means solved.
    rounded, rounded_loss, rounded_cost :
        Best integer allocation found among the floors/ceilings of the
        continuous optimum (feasible for the same constraint), its loss and
        cost; ``None`` with ``rounding_note`` saying why when none is feasible.
    """

    values: dict[str, float]
    effective: dict[str, float]
    loss: float
    cost: float
    budget: float | None
    target: float | None
    shares: dict[str, float]
    status: str
    duals: dict[str, float]
    kkt_residual: float
    rounded: dict[str, int] | None = None
    rounded_loss: float | None = None
    rounded_cost: float | None = None
    rounding_note: str = ""
    solver: str = ""
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out.pop("extra")
        out.update(self.extra)
        return out

    # -- notebook display and pandas -------------------------------------------
    def to_frame(self) -> Any:
        """The decision variables as a :class:`pandas.DataFrame` indexed by ``variable``.

        Columns ``value`` (continuous optimum) and ``rounded`` (best integer rounding,
        NaN when none is feasible).  Needs pandas (``pip install 'rlscale[pandas]'``),
        else ImportError.
        """
        from rlscale.theory._display import data_frame

        rounded = self.rounded or {}
        return data_frame([{"variable": v, "value": float(x),
                            "rounded": float(rounded.get(v, float("nan")))}
                           for v, x in self.values.items()], index="variable")

    def _repr_html_(self) -> str:
        from rlscale.theory._display import html_table

        rounded = self.rounded or {}
        rows = [[v, x, rounded.get(v)] for v, x in self.values.items()]
        constraint = (f"budget {self.budget:.6g}" if self.budget is not None
                      else f"target loss {self.target:.6g}")
        notes = [f"{constraint}: loss {self.loss:.6g}, cost {self.cost:.6g}, status "
                 f"{self.status}, KKT residual {self.kkt_residual:.2g}",
                 "cost shares: " + ", ".join(f"{t} {s:.3g}" for t, s in self.shares.items()),
                 self.rounding_note]
        return html_table("Allocation", ["variable", "value", "rounded"], rows, notes)


# ---------------------------------------------------------------------------
# KKT residual (solver-independent)
# ---------------------------------------------------------------------------

def kkt_residual(grad: np.ndarray, constraints: Sequence[tuple[float, np.ndarray]],
                 names: Sequence[str] | None = None) -> tuple[float, dict[str, float]]:
    """Residual of the KKT conditions at a point and the fitted multipliers.

    Parameters
    ----------
    grad : array, shape (n,)
        Gradient of the objective.
    constraints : sequence of (g, grad_g)
        Each constraint ``g <= 0`` normalised to be dimensionless (e.g.
        ``log C - log B``) with its gradient.
    names : sequence of str, optional
        Labels of the constraints for the returned multipliers.

    Returns
    -------
    residual : float
        ``max(|grad + J^T mu|_inf / |grad|_inf, max(g, 0))`` with ``mu >= 0``
        fitted by NNLS over the active constraints (``g >= -1e-6``).
    multipliers : dict
        Non-zero multipliers by name.

    Examples
    --------
    >>> g = np.array([-1.0, -1.0])           # minimise -x - y ...
    >>> res, mu = kkt_residual(g, [(0.0, np.array([1.0, 1.0]))], ["x+y<=1"])
    >>> round(res, 12), {k: round(v, 6) for k, v in mu.items()}
    (0.0, {'x+y<=1': 1.0})
    """
    from scipy.optimize import nnls

    grad = check_real("grad", grad)
    if grad.ndim != 1 or grad.size == 0:
        raise ValueError(f"grad must be a non-empty 1-D array; got shape {grad.shape}")
    if isinstance(constraints, str | bytes) or not isinstance(constraints, Sequence):
        raise TypeError(f"constraints must be a sequence of (g, grad_g) pairs; got "
                        f"constraints={constraints!r:.60}")
    checked = []
    for i, pair in enumerate(constraints):
        if not isinstance(pair, Sequence) or len(pair) != 2:
            raise TypeError(f"constraints[{i}] must be a (g, grad_g) pair; got {pair!r:.60}")
        g, gg = check_scalar(f"constraints[{i}] g", pair[0]), check_real(
            f"constraints[{i}] grad_g", pair[1])
        if gg.shape != grad.shape:
            raise ValueError(f"constraints[{i}] grad_g must have the shape of grad "
                             f"{grad.shape}; got {gg.shape}")
        checked.append((g, gg))
    constraints = checked
    if names is not None and (isinstance(names, str | bytes) or not isinstance(names, Sequence)
                              or len(names) != len(constraints)):
        raise TypeError(f"names must be a sequence of {len(constraints)} labels; got "
                        f"names={names!r:.60}")
    names = list(names) if names is not None else [f"c{i}" for i in range(len(constraints))]
    infeas = max([0.0, *(float(g) for g, _ in constraints)])
    active = [i for i, (g, _) in enumerate(constraints) if g >= -_ACTIVE]
    scale = max(float(np.max(np.abs(grad))), 1e-300)
    if active:
        J = np.column_stack([constraints[i][1] for i in active])
        mu, _ = nnls(J, -grad)
        stat = grad + J @ mu
    else:
        mu, stat = np.zeros(0), grad
    residual = max(float(np.max(np.abs(stat))) / scale, infeas)
    return residual, {names[i]: float(m) for i, m in zip(active, mu) if m > 0}


# ---------------------------------------------------------------------------
# The problem
# ---------------------------------------------------------------------------

def _bounds(bounds: Mapping[str, Any] | None, variables: Sequence[str],
            defaults: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    out = dict.fromkeys(variables, (0.0, math.inf))
    _mapping("bounds", bounds)
    merged = {**defaults, **(bounds or {})}
    for name, spec in merged.items():
        if name not in out:
            raise ValueError(f"bounds name unknown axis {name!r}; the decision variables are "
                             f"{list(variables)}")
        if isinstance(spec, Mapping):
            bad = set(spec) - {"min", "max"}
            if bad:
                raise ValueError(f"bounds[{name!r}] takes keys 'min' and 'max'; got {sorted(bad)}")
            lo, hi = spec.get("min"), spec.get("max")
        else:
            try:
                lo, hi = spec
            except (TypeError, ValueError) as exc:
                raise TypeError(f"bounds[{name!r}] must be (min, max) or {{'min':, 'max':}}; "
                                f"got {spec!r}") from exc
        lo = 0.0 if lo is None else check_scalar(f"bounds[{name!r}] min", lo, low=0.0)
        hi = math.inf if hi is None else check_scalar(f"bounds[{name!r}] max", hi, low=0.0,
                                                          low_open=True)
        if lo > hi:
            raise ValueError(f"bounds[{name!r}]: min {lo:g} exceeds max {hi:g}")
        out[name] = (lo, hi)
    return out


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
    """

    def __init__(self, law: Law, cost: Any, bounds: Mapping[str, Any] | None = None,
                 substitute: Mapping[str, Any] | None = None,
                 synthesis: Iterable[SynthesisMethod] | None = None) -> None:
        if not isinstance(law, Law):
            raise TypeError(f"law must be a rlscale.theory law (AdditiveLaw, ...); got "
                            f"{type(law).__name__}")
        _mapping("substitute", substitute)
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
        objective = law.reducible_posynomial()
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
                mono = parse_posynomial(expr)
                if not mono.is_monomial:
                    raise ValueError(f"substitute[{axis!r}] = {expr!r} must be a monomial such "
                                     "as 'E*t'")
                subs[axis] = mono
            objective = objective.substitute(subs)
        self.substitute = subs
        self.objective = objective
        _check_exponents("the law (in the decision variables)", objective)
        law_vars = list(objective.axes)
        self.cost = parse_posynomial(cost)
        _check_exponents("the cost", self.cost)
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
        self.bounds = _bounds(bounds, self.variables, defaults)
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
        self._mats: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    # -- helpers -----------------------------------------------------------
    @property
    def gp(self) -> bool:
        return not self.synthesis

    def _values(self, values: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """``values`` checked: a mapping with every decision variable, each >= 0 and finite."""
        _mapping("values", values, required=True)
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
        return self.law.reducible_posynomial().evaluate(self.effective(values))

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

    # -- cvxpy model ---------------------------------------------------------
    def _build(self, mode: str) -> Any:
        import cvxpy as cp

        if mode in self._compiled:
            return self._compiled[mode]
        if self.gp:
            x = {v: cp.Variable(pos=True, name=v) for v in self.variables}
            obj = _cp_posynomial(cp, self.objective, x)
            cost = _cp_posynomial(cp, self.cost, x)
            cons = []
            for v, (lo, hi) in self.bounds.items():
                if lo > 0:
                    cons.append(x[v] >= lo)
                if math.isfinite(hi):
                    cons.append(x[v] <= hi)
            param = cp.Parameter(pos=True, name="budget" if mode == "allocate" else "target")
            if mode == "allocate":
                prob = cp.Problem(cp.Minimize(obj), [cost <= param, *cons])
            else:
                prob = cp.Problem(cp.Minimize(cost), [obj <= param, *cons])
        else:
            x = {v: cp.Variable(nonneg=True, name=v) for v in self.variables}
            cons = []
            eff = {}
            for axis in self.law.axes:
                z = x[axis]
                for m in self.synthesis:
                    if m.axis != axis:
                        continue
                    xs = x[m.name]
                    if m.kind == "linear":
                        z = z + m.rho * xs
                    elif m.kind == "saturating":
                        S = float(m.saturation)  # type: ignore[arg-type]
                        z = z + m.rho * S * (1 - cp.exp(-xs / S))
                    else:
                        s = float(m.saturation)  # type: ignore[arg-type]
                        tvar = cp.Variable(nonneg=True)
                        cons.append(cp.constraints.ExpCone(-xs / s, x[axis], tvar))
                        z = z + m.rho * s * (x[axis] - tvar)
                eff[axis] = z
            obj = 0
            for term in self.objective.terms:
                (axis, e), = term.exponents
                obj = obj + term.coefficient * cp.power(eff[axis], e, approx=False)
            cost = 0
            for term in self.cost.terms:
                if term.exponents:
                    cost = cost + term.coefficient * x[term.exponents[0][0]]
                else:
                    cost = cost + term.coefficient
            for m in self.synthesis:
                cost = cost + m.unit_cost * x[m.name]
            for v, (lo, hi) in self.bounds.items():
                if lo > 0:
                    cons.append(x[v] >= lo)
                if math.isfinite(hi):
                    cons.append(x[v] <= hi)
            param = cp.Parameter(nonneg=True)
            if mode == "allocate":
                prob = cp.Problem(cp.Minimize(obj), [cost <= param, *cons])
            else:
                prob = cp.Problem(cp.Minimize(cost), [obj <= param, *cons])
        self._compiled[mode] = (prob, x, param)
        return self._compiled[mode]

    # -- public solves --------------------------------------------------------
    def allocate(self, budget: float, round_integers: bool = True) -> Allocation:
        """Minimise the loss subject to ``cost <= budget``."""
        budget = check_scalar("budget", budget, low=0.0, low_open=True)
        cheapest, lows = self.cheapest()
        if budget < cheapest * (1 - 1e-12):
            raise InfeasibleError(
                f"budget {budget:g} is below the cost {cheapest:g} of the smallest allocation "
                f"the bounds allow ({self._fmt_values(lows)})")
        return self._solve("allocate", budget, round_integers)

    def min_cost(self, target: float, round_integers: bool = True) -> Allocation:
        """Minimise the cost subject to ``loss <= target``."""
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
        return self._solve("min_cost", target, round_integers)

    def sweep(self, budgets: Iterable[float], round_integers: bool = True,
              progress: bool = False) -> list[Allocation]:
        """:meth:`allocate` for many budgets, reusing one compiled problem."""
        if isinstance(budgets, str | bytes) or not isinstance(budgets, Iterable):
            raise TypeError(f"budgets must be a sequence of numbers; got budgets={budgets!r:.60}")
        budgets = check_real("budgets", list(budgets), low=0.0, low_open=True)
        if budgets.ndim != 1 or budgets.size > 10_000:
            raise ValueError(f"budgets must be a flat list of at most 10000 budgets; got shape "
                             f"{budgets.shape}")
        it: Iterable[float] = budgets
        if progress:
            from tqdm import tqdm

            it = tqdm(budgets, desc="budgets", unit="budget", file=__import__("sys").stderr)
        return [self.allocate(float(b), round_integers) for b in it]

    def _solve(self, mode: str, bound: float, round_integers: bool) -> Allocation:
        import cvxpy as cp

        start = time.perf_counter()
        prob, x, param = self._build(mode)
        param.value = bound - self.law.floor if mode == "min_cost" else bound
        import warnings

        try:
            # An "inaccurate" solve is reported in ``status`` and then polished
            # and graded by the KKT residual, so cvxpy's warning adds nothing.
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                if self.gp:
                    prob.solve(gp=True, solver=cp.CLARABEL)
                else:
                    prob.solve(solver=cp.CLARABEL)
        except (cp.error.SolverError, ArithmeticError) as exc:
            raise SolverError(self._solver_failure(mode, bound, exc)) from exc
        status = prob.status
        if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
            raise InfeasibleError(f"the {mode} problem is infeasible (solver status {status}); "
                                  f"check the bounds {self.bounds}")
        if status in (cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE):
            raise InfeasibleError(f"the {mode} problem is unbounded (solver status {status}); "
                                  "some axis can grow for free")
        if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            raise SolverError(self._solver_failure(mode, bound, f"status {status}"))
        values = {v: float(var.value) for v, var in x.items()}
        values, polished = self._polish(mode, bound, values)
        if self._kkt(mode, bound, values)[0] > 1e-9:
            # The conic solver can stop short on flat directions (e.g. two synthetic
            # sources of nearly equal price); an active-set SQP from its point,
            # then the Newton polish, finishes the job when the KKT check improves.
            values, rescued = self._rescue(mode, bound, values)
            polished = polished or rescued
        residual, duals = self._kkt(mode, bound, values)
        loss = float(self.loss_at(values))
        cost = float(self.cost_at(values))
        if mode == "allocate" and self.gp and cost < bound * (1 - 1e-6) and any(
                values[v] < hi * (1 - 1e-9) for v, (_, hi) in self.bounds.items()):
            # The loss falls strictly with every costed variable, so an optimum leaves
            # budget unspent only where float64 can no longer resolve the loss: refuse.
            raise InfeasibleError(
                f"budget {bound:g} is beyond what float64 can resolve for this law: the loss "
                f"stops changing at {loss:.10g} once about {cost:.3g} is spent (the rest of "
                f"the budget moves it by less than its rounding); use budgets up to about "
                f"{cost:.2g}")
        shares = self._shares(values)
        alloc = {"values": values, "effective": {k: float(v) for k, v in
                                               self.effective(values).items()},
                     "loss": loss, "cost": cost, "budget": bound if mode == "allocate" else None,
                     "target": bound if mode == "min_cost" else None, "shares": shares,
                     "status": status + (" (polished)" if polished else ""), "duals": duals,
                     "kkt_residual": residual, "solver": "CLARABEL " + ("gp" if self.gp else "dcp")}
        if round_integers:
            alloc.update(self._round(mode, bound, values))
        alloc["seconds"] = time.perf_counter() - start
        return Allocation(**alloc)

    def _solver_failure(self, mode: str, bound: float, why: Any) -> str:
        """What rlscale tried and what the user can change, in place of cvxpy's advice."""
        text = " ".join(str(why).split())
        text = text.split(" Try another solver")[0].split(" Try re-solving")[0].rstrip(". ")
        kind = "geometric program (cvxpy gp=True)" if self.gp else "convex program (cvxpy DCP)"
        what = "budget" if mode == "allocate" else "target loss"
        text = text or "no reason given"
        return (f"the {mode} problem at {what} {bound:g} could not be solved: rlscale posed it "
                f"as a {kind} and ran the CLARABEL solver, which failed ({text}); try a "
                f"{what} nearer the spec's typical scale, rescale the law's coefficients and "
                "the cost toward 1, or tighten the bounds")

    def _shares(self, values: Mapping[str, float]) -> dict[str, float]:
        terms = self.cost.term_values(values) if self.cost.axes else np.array(
            [m.coefficient for m in self.cost.terms])
        labels = [m.label() for m in self.cost.terms]
        amounts = dict(zip(labels, (float(t) for t in terms)))
        for m in self.synthesis:
            amounts[m.name] = m.unit_cost * values[m.name]
        total = sum(amounts.values())
        return {k: v / total for k, v in amounts.items()}

    # -- KKT and polishing (GP path: log-log space) ------------------------------
    def _matrix(self, poly: Posynomial) -> tuple[np.ndarray, np.ndarray]:
        """``(A, b)`` with ``log(terms) = A @ log(x) + b`` over :attr:`variables`."""
        key = id(poly)
        if key not in self._mats:
            A = np.array([[m.power_of(v) for v in self.variables] for m in poly.terms])
            b = np.log([m.coefficient for m in poly.terms])
            self._mats[key] = (A, b)
        return self._mats[key]

    def _log_value_grad(self, poly: Posynomial, u: np.ndarray) -> tuple[float, np.ndarray]:
        """``log poly`` and its gradient in ``u = log x`` (log-sum-exp, no overflow)."""
        A, b = self._matrix(poly)
        z = A @ u + b
        zmax = float(np.max(z))
        w = np.exp(z - zmax)
        total = float(w.sum())
        return zmax + math.log(total), (w / total) @ A

    def _log_constraints(self, mode: str, bound: float, u: np.ndarray
                         ) -> list[tuple[str, float, np.ndarray]]:
        if mode == "allocate":
            val, grad = self._log_value_grad(self.cost, u)
            out = [("budget", val - math.log(bound), grad)]
        else:
            val, grad = self._log_value_grad(self.objective, u)
            out = [("target", val - math.log(bound - self.law.floor), grad)]
        for i, v in enumerate(self.variables):
            lo, hi = self.bounds[v]
            e = np.zeros(len(self.variables))
            e[i] = 1.0
            if lo > 0:
                out.append((f"{v}>={lo:g}", math.log(lo) - u[i], -e))
            if math.isfinite(hi):
                out.append((f"{v}<={hi:g}", u[i] - math.log(hi), e))
        return out

    def _log_grad(self, mode: str, u: np.ndarray) -> np.ndarray:
        return self._log_value_grad(self.objective if mode == "allocate" else self.cost, u)[1]

    def _space(self, mode: str, bound: float, values: Mapping[str, float]) -> Any:
        """The problem in the coordinates where KKT is checked and polished.

        GP: ``p = log x`` with objective ``log P`` (or ``log C``) and the main
        constraint ``log C - log B`` (or ``log P - log(target - floor)``).
        Synthetic (DCP): ``p = x / s`` with ``s`` what the whole budget buys of
        each count, objective and constraint divided by their values, so every
        quantity is unit-free.
        """
        n = len(self.variables)
        if self.gp:
            def to_values(p: np.ndarray) -> dict[str, float]:
                return {v: float(np.exp(pi)) for v, pi in zip(self.variables, p)}

            def obj_grad(p: np.ndarray) -> np.ndarray:
                return self._log_grad(mode, p)

            def main(p: np.ndarray) -> tuple[float, np.ndarray]:
                _, g, d = self._log_constraints(mode, bound, p)[0]
                return g, d

            p0 = np.log([max(values[v], 1e-300) for v in self.variables])
            lo = [math.log(b[0]) if b[0] > 0 else -math.inf for b in self.bounds.values()]
            hi = [math.log(b[1]) if math.isfinite(b[1]) else math.inf
                  for b in self.bounds.values()]
        else:
            _, gc0 = self._grad_counts(mode, values)
            ref = bound if mode == "allocate" else float(self.cost_at(values))
            scale = np.where(gc0 > 0, ref / np.where(gc0 > 0, gc0, 1.0),
                             np.array([max(values[v], 1.0) for v in self.variables]))
            red0 = float(self.objective.evaluate(self.effective(values)))
            cost0 = float(self.cost_at(values))

            def to_values(p: np.ndarray) -> dict[str, float]:
                return {v: float(max(pi, 0.0) * si)
                        for v, pi, si in zip(self.variables, p, scale)}

            def obj_grad(p: np.ndarray) -> np.ndarray:
                gl, gc = self._grad_counts(mode, to_values(p))
                return gl * scale / red0 if mode == "allocate" else gc * scale / cost0

            def main(p: np.ndarray) -> tuple[float, np.ndarray]:
                vals = to_values(p)
                gl, gc = self._grad_counts(mode, vals)
                if mode == "allocate":
                    return float(self.cost_at(vals)) / bound - 1.0, gc * scale / bound
                target = bound - self.law.floor
                red = float(self.objective.evaluate(self.effective(vals)))
                return red / target - 1.0, gl * scale / target

            p0 = np.array([values[v] for v in self.variables]) / scale
            lo = [b[0] / si for b, si in zip(self.bounds.values(), scale)]
            hi = [b[1] / si for b, si in zip(self.bounds.values(), scale)]

        def bound_cons(p: np.ndarray) -> list[tuple[str, float, np.ndarray]]:
            out = []
            for i, v in enumerate(self.variables):
                e = np.zeros(n)
                e[i] = 1.0
                lo_v, hi_v = self.bounds[v]
                if lo[i] > -math.inf and (self.gp is False or lo_v > 0):
                    out.append((f"{v}>={lo_v:g}", lo[i] - p[i], -e))
                if math.isfinite(hi[i]):
                    out.append((f"{v}<={hi_v:g}", p[i] - hi[i], e))
            return out

        return p0, to_values, obj_grad, main, bound_cons, lo, hi

    def _kkt(self, mode: str, bound: float, values: Mapping[str, float]
             ) -> tuple[float, dict[str, float]]:
        p, _, obj_grad, main, bound_cons, _, _ = self._space(mode, bound, values)
        g, d = main(p)
        cons = [("budget" if mode == "allocate" else "target", g, d), *bound_cons(p)]
        return kkt_residual(obj_grad(p), [(c[1], c[2]) for c in cons], [c[0] for c in cons])

    def _polish(self, mode: str, bound: float, values: dict[str, float]
                ) -> tuple[dict[str, float], bool]:
        """Newton on the active-set KKT equations; kept only if it lowers the residual.

        The active set is guessed by snapping counts near a bound onto it, at
        a few tolerances (a conic solver leaves a nearly-degenerate bound up to
        ~1e-4 away); the candidate with the smallest KKT residual wins.
        """
        before, _ = self._kkt(mode, bound, values)
        best, best_res = values, before
        tried: set[frozenset[int]] = set()
        for j, tol in enumerate((1e-4, 1e-2, 0.0)):
            # The first guess always runs: a point 1e-8 off its bound can have a
            # tiny residual yet a loss off in the eighth digit.
            if j > 0 and best_res < 1e-13:
                break
            cand = self._newton(mode, bound, values, tol, tried)
            if cand is None:
                continue
            res, _ = self._kkt(mode, bound, cand)
            if res <= max(best_res, 1e-14):
                best, best_res = cand, res
        return best, best is not values

    def _rescue(self, mode: str, bound: float, values: dict[str, float]
                ) -> tuple[dict[str, float], bool]:
        from scipy.optimize import minimize

        p0, to_values, obj_grad, main, _bound_cons, lo, hi = self._space(mode, bound, values)
        before, _ = self._kkt(mode, bound, values)
        scale_val = float(self._reducible_at(values)) if mode == "allocate" \
            else float(self.cost_at(values))

        def fun(p: np.ndarray) -> tuple[float, np.ndarray]:
            vals = to_values(p)
            f = float(self._reducible_at(vals) if mode == "allocate" else self.cost_at(vals))
            if self.gp:
                return math.log(f), obj_grad(p)
            return f / scale_val, obj_grad(p)

        bounds = [(None if not math.isfinite(a) else a, None if not math.isfinite(b) else b)
                  for a, b in zip(lo, hi)]
        cons = [{"type": "ineq", "fun": lambda p: -main(p)[0], "jac": lambda p: -main(p)[1]}]
        with np.errstate(all="ignore"):
            res = minimize(fun, p0, jac=True, method="SLSQP", bounds=bounds, constraints=cons,
                           options={"maxiter": 500, "ftol": 1e-15})
        if not np.all(np.isfinite(res.x)):
            return values, False
        cand = to_values(res.x)
        cand, _ = self._polish(mode, bound, cand)
        after, _ = self._kkt(mode, bound, cand)
        return (cand, True) if after < before else (values, False)

    def _newton(self, mode: str, bound: float, values: dict[str, float], tol: float,
                tried: set[frozenset[int]]) -> dict[str, float] | None:
        from scipy.optimize import root

        p0, to_values, obj_grad, main, _bound_cons, lo, hi = self._space(mode, bound, values)
        fixed = {}
        for i in range(len(p0)):
            for edge in (lo[i], hi[i]):
                if math.isfinite(edge) and abs(p0[i] - edge) <= tol * max(1.0, abs(edge)):
                    fixed[i] = edge
        key = frozenset(fixed)
        if key in tried:
            return None
        tried.add(key)
        free = [i for i in range(len(p0)) if i not in fixed]
        g0, d0 = main(p0)
        if not free or g0 < -1e-4:  # main constraint slack: nothing to polish
            return None

        def full(z: np.ndarray) -> np.ndarray:
            p = p0.copy()
            for i, val in fixed.items():
                p[i] = val
            p[free] = z[:-1]
            return p

        def eqs(z: np.ndarray) -> np.ndarray:
            p = full(z)
            g, d = main(p)
            return np.concatenate([obj_grad(p)[free] + z[-1] * d[free], [g]])

        grad0 = obj_grad(p0)[free]
        lam0 = -np.dot(grad0, d0[free]) / max(float(np.dot(d0[free], d0[free])), 1e-300)
        sol = root(eqs, np.concatenate([p0[free], [max(lam0, 0.0)]]), method="hybr",
                   options={"xtol": 1e-14})
        # hybr may stop with 'no progress' once at machine precision; the caller's
        # residual comparison decides whether the Newton point is kept.
        if not np.all(np.isfinite(sol.x)) or sol.x[-1] < 0:
            return None
        p = full(sol.x)
        if any(p[i] < lo[i] - 1e-12 * max(1, abs(lo[i])) or p[i] > hi[i] * (1 + 1e-12) + 1e-300
               for i in free):
            return None
        return to_values(p)

    # -- gradients in counts (DCP path) -----------------------------------------
    def _grad_counts(self, mode: str, values: Mapping[str, float]) -> tuple[np.ndarray, ...]:
        """Gradients of the reducible loss and the cost w.r.t. the decision counts."""
        n = len(self.variables)
        idx = {v: i for i, v in enumerate(self.variables)}
        eff = {a: float(z) for a, z in self.effective(values).items()}
        gl = np.zeros(n)
        for term in self.objective.terms:
            (axis, e), = term.exponents
            dz = term.coefficient * e * eff[axis] ** (e - 1)
            gl[idx[axis]] += dz
            for m in self.synthesis:
                if m.axis == axis:
                    gl[idx[axis]] += dz * float(m.marginal_real(max(values[axis], 1e-300),
                                                                values[m.name]))
                    gl[idx[m.name]] += dz * float(m.marginal(values[axis], values[m.name]))
        gc = np.zeros(n)
        for term in self.cost.terms:
            if term.exponents:
                gc[idx[term.exponents[0][0]]] += term.coefficient
        for m in self.synthesis:
            gc[idx[m.name]] += m.unit_cost
        return gl, gc

    # -- integer rounding ---------------------------------------------------------
    def _round(self, mode: str, bound: float, values: Mapping[str, float]) -> dict[str, Any]:
        choices = []
        for v in self.variables:
            lo, hi = self.bounds[v]
            lo_i = max(math.ceil(lo - 1e-9), 1 if v in self.objective.axes else 0)
            hi_i = math.floor(hi + 1e-9) if math.isfinite(hi) else math.inf
            cands = {min(max(math.floor(values[v]), lo_i), hi_i),
                     min(max(math.ceil(values[v]), lo_i), hi_i)}
            cands = {c for c in cands if lo_i <= c <= hi_i}
            if not cands:
                return {"rounding_note": f"no integer value of {v} lies within its bounds "
                                         f"{self.bounds[v]}"}
            choices.append(sorted(cands))
        if len(self.variables) > 14:
            choices = [[min(c, key=lambda z, v=v: abs(z - values[v]))]
                       for c, v in zip(choices, self.variables)]
        grid = np.array(list(itertools.product(*choices)), dtype=np.float64)
        cand = {v: grid[:, i] for i, v in enumerate(self.variables)}
        with np.errstate(divide="ignore"):
            loss = np.asarray(self.loss_at(cand), dtype=np.float64)
            cost = np.asarray(self.cost_at(cand), dtype=np.float64)
        if mode == "allocate":
            ok = cost <= bound * (1 + 1e-12)
            key = np.where(ok, loss, np.inf)
        else:
            ok = loss <= bound * (1 + 1e-12)
            key = np.where(ok, cost, np.inf)
        if not ok.any():
            what = "within the budget" if mode == "allocate" else "reaching the target"
            return {"rounding_note": f"no floor/ceiling combination of the optimum is {what}"}
        best = int(np.argmin(key))
        return {"rounded": {v: int(grid[best, i]) for i, v in enumerate(self.variables)},
                "rounded_loss": float(loss[best]), "rounded_cost": float(cost[best])}


def _mapping(name: str, value: Any, required: bool = False) -> None:
    if (value is not None or required) and not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping (dict); got {name}={value!r:.60}")


#: Largest exponent magnitude the solver is given (cvxpy turns exponents into fractions,
#: and 1e4 already fails inside it with a ZeroDivisionError; 1000 solves exactly).
MAX_EXPONENT = 1000.0


def _check_exponents(what: str, poly: Posynomial) -> None:
    for term in poly.terms:
        for axis, e in term.exponents:
            if not abs(e) <= MAX_EXPONENT:
                raise ValueError(f"{what} has exponent {e:g} on {axis!r} in term {term}; the "
                                 f"solver handles exponents up to {MAX_EXPONENT:g} in magnitude: "
                                 "rescale the axis (x -> x^p) or use a smaller exponent")


def _cp_posynomial(cp: Any, poly: Posynomial, x: Mapping[str, Any]) -> Any:
    total = 0
    for m in poly.terms:
        term = m.coefficient
        for a, e in m.exponents:
            term = term * (x[a] if e == 1 else cp.power(x[a], e))
        total = total + term
    return total


def allocate(law: Law, cost: Any, budget: float, bounds: Mapping[str, Any] | None = None, *,
             substitute: Mapping[str, Any] | None = None,
             synthesis: Iterable[SynthesisMethod] | None = None,
             round_integers: bool = True) -> Allocation:
    """Minimise ``law``'s loss subject to ``cost <= budget`` (a geometric program).

    Parameters
    ----------
    law : Law
        E.g. :class:`~rlscale.theory.AdditiveLaw`.
    cost : str, sympy expression or Posynomial
        Posynomial cost such as ``"6*N*D"`` or ``"100*E + 10*E*t + E*t*k"``.
    budget : float
        ``> 0``.
    bounds, substitute, synthesis :
        See :class:`AllocationProblem`.

    Returns
    -------
    Allocation

    Raises
    ------
    InfeasibleError
        When no allocation fits the budget and bounds (the message says why).

    Examples
    --------
    Chinchilla (Hoffmann et al. 2022, approach 3 as replicated by Besiroglu
    et al. 2024) at the compute of Chinchilla itself:

    >>> from rlscale.theory import AdditiveLaw, chinchilla_optimal
    >>> law = AdditiveLaw(1.82, {"N": 482.01, "D": 2085.43}, {"N": 0.3478, "D": 0.3658})
    >>> a = allocate(law, "6*N*D", 5.76e23)
    >>> N, D = chinchilla_optimal(482.01, 2085.43, 0.3478, 0.3658, 5.76e23)
    >>> abs(a.values["N"] / N - 1) < 1e-9, abs(a.values["D"] / D - 1) < 1e-9
    (True, True)
    >>> a.kkt_residual < 1e-9
    True
    """
    return AllocationProblem(law, cost, bounds, substitute, synthesis).allocate(
        budget, round_integers)


def min_cost(law: Law, cost: Any, target: float, bounds: Mapping[str, Any] | None = None, *,
             substitute: Mapping[str, Any] | None = None,
             synthesis: Iterable[SynthesisMethod] | None = None,
             round_integers: bool = True) -> Allocation:
    """The cheapest allocation whose loss is at most ``target``.

    Examples
    --------
    >>> from rlscale.theory import AdditiveLaw
    >>> law = AdditiveLaw(0.2, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.5})
    >>> a = min_cost(law, "E + K", target=0.4)
    >>> round(a.values["E"], 6), round(a.cost, 6)
    (100.0, 200.0)
    >>> try:
    ...     min_cost(law, "E + K", target=0.18)
    ... except ValueError as err:  # rlscale.InfeasibleError
    ...     print(err)
    target loss 0.18 is below the law's floor 0.2; the floor is reached only with unlimited data
    """
    return AllocationProblem(law, cost, bounds, substitute, synthesis).min_cost(
        target, round_integers)
