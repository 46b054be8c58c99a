"""The cvxpy models of an allocation problem, compiled once per *structure*.

Geometric programs (no synthetic data) are cached by structure: the sense,
the exponent matrices of the objective and the cost over the decision
variables, and which bounds are present.  Everything numeric -- the
coefficients of every term, the bounds and the right-hand side -- is a cvxpy
``Parameter``, and the problem obeys the disciplined-parametrized rules for
GPs (``is_dgp(dpp=True)``), so cvxpy compiles the problem on its first solve
and afterwards only maps new parameter values into the cached conic data
(Agrawal, Barratt, Boyd & Stellato 2019, "Differentiating through log-log
convex programs", §4).  Two :class:`~rlscale.optimize.AllocationProblem` with
the same law family, cost shape and bounds pattern -- any coefficients --
share one compiled model.  The cache holds the 64 most recent structures;
each model's solve holds its own lock, so threads that share a structure
take turns instead of overwriting each other's parameter values.

Synthetic data turns the problem into a DCP program in the counts (a
decreasing convex power of a concave effective count), built per problem
with the right-hand side as its only parameter.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from rlscale.optimize._alloc_kkt import Sense
from rlscale.optimize._alloc_polish import polish, rescue
from rlscale.theory._errors import InfeasibleError, SolverError

__all__ = ["GPModel", "dcp_model", "gp_model", "solve_numeric"]

_CACHE: OrderedDict[tuple, GPModel] = OrderedDict()
_CACHE_SIZE = 64
_CACHE_LOCK = threading.Lock()


class GPModel:
    """One compiled GP structure; :meth:`solve` sets its parameters and solves.

    Attributes
    ----------
    problem : cvxpy.Problem
        The parametrised problem (compiled on the first solve, then cached by cvxpy).
    solves, compiles : int
        How many times it was solved, and how many of those compiled it.
    """

    def __init__(self, sense: Sense, obj_exp: np.ndarray, cost_exp: np.ndarray,
                 has_lo: tuple[bool, ...], has_hi: tuple[bool, ...]) -> None:
        import cvxpy as cp

        n = obj_exp.shape[1]
        self.x = [cp.Variable(pos=True) for _ in range(n)]
        self.obj_coef = [cp.Parameter(pos=True) for _ in range(len(obj_exp))]
        self.cost_coef = [cp.Parameter(pos=True) for _ in range(len(cost_exp))]
        self.lo = [cp.Parameter(pos=True) if flag else None for flag in has_lo]
        self.hi = [cp.Parameter(pos=True) if flag else None for flag in has_hi]
        self.rhs = cp.Parameter(pos=True)
        obj = self._posynomial(self.obj_coef, obj_exp)
        cost = self._posynomial(self.cost_coef, cost_exp)
        cons = [self.x[i] >= p for i, p in enumerate(self.lo) if p is not None]
        cons += [self.x[i] <= p for i, p in enumerate(self.hi) if p is not None]
        if sense.minimises_loss:
            self.problem = cp.Problem(cp.Minimize(obj), [cost <= self.rhs, *cons])
        else:
            self.problem = cp.Problem(cp.Minimize(cost), [obj <= self.rhs, *cons])
        self.solves = self.compiles = 0
        self._lock = threading.Lock()

    def _posynomial(self, coefs: list[Any], exps: np.ndarray) -> Any:
        total = 0
        for c, row in zip(coefs, exps):
            term = c
            for xi, e in zip(self.x, row):
                if e != 0:
                    term = term * (xi if e == 1 else xi ** float(e))
            total = total + term
        return total

    def solve(self, obj_coef: np.ndarray, cost_coef: np.ndarray, lo: list[float],
              hi: list[float], rhs: float) -> tuple[str, np.ndarray | None]:
        """Solve with these numbers; returns cvxpy's status and the variables' values."""
        import warnings

        import cvxpy as cp

        with self._lock:
            for p, v in zip(self.obj_coef, obj_coef):
                p.value = float(v)
            for p, v in zip(self.cost_coef, cost_coef):
                p.value = float(v)
            for p, v in zip(self.lo, lo):
                if p is not None:
                    p.value = float(v)
            for p, v in zip(self.hi, hi):
                if p is not None:
                    p.value = float(v)
            self.rhs.value = float(rhs)
            self.compiles += self.problem._cache.param_prog is None
            self.solves += 1
            # An "inaccurate" solve is reported in ``status`` and then polished and
            # graded by the KKT residual, so cvxpy's warning adds nothing.
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                self.problem.solve(gp=True, solver=cp.CLARABEL)
            if self.x[0].value is None:
                return self.problem.status, None
            return self.problem.status, np.array([float(x.value) for x in self.x])


def gp_model(sense: Sense, obj_exp: np.ndarray, cost_exp: np.ndarray,
             bounds: list[tuple[float, float]]) -> GPModel:
    """The cached :class:`GPModel` of this structure (built on first use)."""
    has_lo = tuple(lo > 0 for lo, _ in bounds)
    has_hi = tuple(math.isfinite(hi) for _, hi in bounds)
    key = (sense.name, obj_exp.shape, obj_exp.tobytes(), cost_exp.shape, cost_exp.tobytes(),
           has_lo, has_hi)
    with _CACHE_LOCK:
        model = _CACHE.get(key)
        if model is None:
            model = _CACHE[key] = GPModel(sense, obj_exp, cost_exp, has_lo, has_hi)
            if len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
        else:
            _CACHE.move_to_end(key)
    return model


class DCPModel:
    """The synthetic-data program of one problem (see the module docstring)."""

    def __init__(self, problem: Any, sense: Sense) -> None:
        import cvxpy as cp

        x = {v: cp.Variable(nonneg=True, name=v) for v in problem.variables}
        cons = []
        eff = {}
        for axis in problem.law.axes:
            z = x[axis]
            for m in problem.synthesis:
                if m.axis != axis:
                    continue
                xs = x[m.name]
                if m.kind == "linear":
                    z = z + m.rho * xs
                elif m.kind == "saturating":
                    S = float(m.saturation)
                    z = z + m.rho * S * (1 - cp.exp(-xs / S))
                else:
                    s = float(m.saturation)
                    tvar = cp.Variable(nonneg=True)
                    cons.append(cp.constraints.ExpCone(-xs / s, x[axis], tvar))
                    z = z + m.rho * s * (x[axis] - tvar)
            eff[axis] = z
        obj = 0
        for term in problem.objective.terms:
            (axis, e), = term.exponents
            obj = obj + term.coefficient * cp.power(eff[axis], e, approx=False)
        cost = 0
        for term in problem.cost.terms:
            cost = cost + (term.coefficient * x[term.exponents[0][0]] if term.exponents
                           else term.coefficient)
        for m in problem.synthesis:
            cost = cost + m.unit_cost * x[m.name]
        for v, (lo, hi) in problem.bounds.items():
            if lo > 0:
                cons.append(x[v] >= lo)
            if math.isfinite(hi):
                cons.append(x[v] <= hi)
        self.rhs = cp.Parameter(nonneg=True)
        if sense.minimises_loss:
            self.problem = cp.Problem(cp.Minimize(obj), [cost <= self.rhs, *cons])
        else:
            self.problem = cp.Problem(cp.Minimize(cost), [obj <= self.rhs, *cons])
        self.x = list(x.values())
        self.solves = self.compiles = 0

    def solve(self, rhs: float) -> tuple[str, np.ndarray | None]:
        import warnings

        import cvxpy as cp

        self.rhs.value = float(rhs)
        self.compiles += self.problem._cache.param_prog is None
        self.solves += 1
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            self.problem.solve(solver=cp.CLARABEL)
        if self.x[0].value is None:
            return self.problem.status, None
        return self.problem.status, np.array([float(x.value) for x in self.x])


def dcp_model(problem: Any, sense: Sense) -> DCPModel:
    """The synthetic-data program of ``problem`` (one per problem and sense)."""
    return DCPModel(problem, sense)


def solve_numeric(problem: Any, sense: Sense, bound: float, method: str
             ) -> tuple[dict[str, float], str, str, str]:
    """cvxpy (GP or DCP), then the polish and, if needed, the rescue."""
    import cvxpy as cp

    kind = "gp" if problem.gp else "dcp"
    if method not in ("auto", kind):
        why = ("synthetic data makes it a DCP program in the counts" if problem.gp is False
               else "it has no synthetic data, so it is a geometric program")
        raise ValueError(f"method={method!r} does not fit this problem: {why}; use "
                         f"method={kind!r} or 'auto'")
    rhs = sense.rhs(bound, problem.law.floor)
    try:
        if problem.gp:
            model = gp_model(sense, problem._matrix(problem.objective)[0],
                             problem._matrix(problem.cost)[0], list(problem.bounds.values()))
            problem._compiled[sense.name] = model
            status, x = model.solve(
                [m.coefficient for m in problem.objective.terms],
                [m.coefficient for m in problem.cost.terms],
                [lo for lo, _ in problem.bounds.values()],
                [hi for _, hi in problem.bounds.values()], rhs)
        else:
            if sense.name not in problem._compiled:
                problem._compiled[sense.name] = dcp_model(problem, sense)
            status, x = problem._compiled[sense.name].solve(rhs)
    except (cp.error.SolverError, ArithmeticError) as exc:
        raise SolverError(solver_failure(problem, sense, bound, exc)) from exc
    if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        raise InfeasibleError(f"the {sense.name} problem is infeasible (solver status "
                              f"{status}); check the bounds {problem.bounds}")
    if status in (cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE):
        raise InfeasibleError(f"the {sense.name} problem is unbounded (solver status "
                              f"{status}); some axis can grow for free")
    if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or x is None:
        raise SolverError(solver_failure(problem, sense, bound, f"status {status}"))
    values = {v: float(xi) for v, xi in zip(problem.variables, x)}
    space_at = problem._space(sense, bound)
    values, polished = polish(space_at, values)
    steps = ["polished by Newton on the KKT equations"] if polished else []
    if space_at(values).kkt(values)[0] > 1e-9:
        values, rescued = rescue(space_at, values)
        if rescued:
            steps.append("rescued by SLSQP")
    how = "cvxpy gp=True" if problem.gp else "cvxpy DCP"
    return values, status, kind, ", ".join([f"CLARABEL via {how} ({status})", *steps])

def solver_failure(problem: Any, sense: Sense, bound: float, why: Any) -> str:
    """What rlscale tried and what the user can change, in place of cvxpy's advice."""
    text = " ".join(str(why).split())
    text = text.split(" Try another solver")[0].split(" Try re-solving")[0].rstrip(". ")
    kind = "geometric program (cvxpy gp=True)" if problem.gp else "convex program (cvxpy DCP)"
    text = text or "no reason given"
    return (f"the {sense.name} problem at {sense.what} {bound:g} could not be solved: "
            f"rlscale posed it as a {kind} and ran the CLARABEL solver, which failed "
            f"({text}); try a {sense.what} nearer the spec's typical scale, rescale the "
            "law's coefficients and the cost toward 1, or tighten the bounds")
