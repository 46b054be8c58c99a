"""The cvxpy models of an allocation problem, compiled once per *structure*.

Geometric programs (no synthetic data) are posed in log space (see
:class:`GPModel`) and cached by structure: the sense, the number of terms of
the law and of the cost, the number of decision variables and which bounds
are present.  Everything numeric -- exponents, coefficients, bounds and the
right-hand side -- is a cvxpy ``Parameter`` and the problem obeys the
disciplined-parametrized-programming rules (Agrawal, Amos, Barratt, Boyd,
Diamond & Kolter 2019, "Differentiable convex optimization layers", §4), so
cvxpy compiles it on its first solve and afterwards only maps new parameter
values into the cached conic data.  Two :class:`~rlscale.optimize.AllocationProblem`
with as many terms and the same bounds pattern -- any exponents and
coefficients -- share one compiled model.  The cache holds the 64 most recent structures;
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

__all__ = ["DCPModel", "GPModel", "gp_model", "solve_numeric"]

_CACHE: OrderedDict[tuple, GPModel] = OrderedDict()
_CACHE_SIZE = 64
_CACHE_LOCK = threading.Lock()


class GPModel:
    """One compiled GP structure; :meth:`solve` sets its parameters and solves.

    The GP is posed in ``u = log x`` as the convex program it is (Boyd et al.
    2007, §2.5): minimise ``lse(A u + b)`` subject to ``lse(A_c u + b_c) <= log
    B`` and ``log lo <= u <= log hi`` (for min-cost the two log-sum-exps swap
    and the right-hand side is ``log(target - floor)``) -- exactly what cvxpy's
    ``gp=True`` produces from the posynomials, but with the exponent matrices
    ``A``, the log-coefficients ``b``, the bounds and the right-hand side all
    ``Parameter``s, so the structure is only the number of terms and variables
    and which bounds exist.

    Attributes
    ----------
    problem : cvxpy.Problem
        The parametrised problem (compiled on the first solve, then cached by cvxpy).
    solves, compiles : int
        How many times it was solved, and how many of those compiled it.
    """

    def __init__(self, sense: Sense, n_obj: int, n_cost: int, has_lo: tuple[bool, ...],
                 has_hi: tuple[bool, ...]) -> None:
        import cvxpy as cp

        n = len(has_lo)
        self.u = cp.Variable(n)
        self.A, self.b = cp.Parameter((n_obj, n)), cp.Parameter(n_obj)
        self.Ac, self.bc = cp.Parameter((n_cost, n)), cp.Parameter(n_cost)
        self.lo, self.hi = cp.Parameter(n), cp.Parameter(n)
        self.rhs = cp.Parameter()
        law = cp.log_sum_exp(self.A @ self.u + self.b)
        cost = cp.log_sum_exp(self.Ac @ self.u + self.bc)
        lo = [i for i, flag in enumerate(has_lo) if flag]
        hi = [i for i, flag in enumerate(has_hi) if flag]
        cons = ([self.u[lo] >= self.lo[lo]] if lo else []) + (
            [self.u[hi] <= self.hi[hi]] if hi else [])
        if sense.minimises_loss:
            self.problem = cp.Problem(cp.Minimize(law), [cost <= self.rhs, *cons])
        else:
            self.problem = cp.Problem(cp.Minimize(cost), [law <= self.rhs, *cons])
        self.solves = self.compiles = 0
        self._lock = threading.Lock()

    def solve(self, law: tuple[np.ndarray, np.ndarray], cost: tuple[np.ndarray, np.ndarray],
              lo: list[float], hi: list[float], rhs: float) -> tuple[str, np.ndarray | None]:
        """Solve with these numbers; returns cvxpy's status and the variables' values.

        ``law`` and ``cost`` are ``(A, b)`` term matrices over the decision
        variables, ``lo``/``hi`` the bounds (0 and inf where absent) and ``rhs``
        the budget or ``target - floor``.
        """
        import warnings

        import cvxpy as cp

        with np.errstate(divide="ignore"):
            log_lo, log_hi = np.log(lo), np.log(hi)
        with self._lock:
            self.A.value, self.b.value = law
            self.Ac.value, self.bc.value = cost
            self.lo.value = np.where(np.isfinite(log_lo), log_lo, 0.0)
            self.hi.value = np.where(np.isfinite(log_hi), log_hi, 0.0)
            self.rhs.value = math.log(rhs)
            self.compiles += self.problem._cache.param_prog is None
            self.solves += 1
            # An "inaccurate" solve is reported in ``status`` and then polished and
            # graded by the KKT residual, so cvxpy's warning adds nothing.
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                self.problem.solve(solver=cp.CLARABEL)
            if self.u.value is None:
                return self.problem.status, None
            with np.errstate(over="ignore", under="ignore"):
                return self.problem.status, np.exp(np.asarray(self.u.value, dtype=np.float64))


def gp_model(sense: Sense, n_obj: int, n_cost: int,
             bounds: list[tuple[float, float]]) -> GPModel:
    """The cached :class:`GPModel` of this structure (built on first use)."""
    has_lo = tuple(lo > 0 for lo, _ in bounds)
    has_hi = tuple(math.isfinite(hi) for _, hi in bounds)
    key = (sense.name, n_obj, n_cost, has_lo, has_hi)
    with _CACHE_LOCK:
        model = _CACHE.get(key)
        if model is None:
            model = _CACHE[key] = GPModel(sense, n_obj, n_cost, has_lo, has_hi)
            if len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
        else:
            _CACHE.move_to_end(key)
    return model


class DCPModel:
    """The synthetic-data program of one problem (see the module docstring)."""

    def __init__(self, state: Any, sense: Sense) -> None:
        import cvxpy as cp

        x = {v: cp.Variable(nonneg=True, name=v) for v in state.variables}
        cons = []
        eff = {}
        for axis in state.law.axes:
            z = x[axis]
            for m in state.synthesis:
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
        for term in state.objective.terms:
            (axis, e), = term.exponents
            obj = obj + term.coefficient * cp.power(eff[axis], e, approx=False)
        cost = 0
        for term in state.cost.terms:
            cost = cost + (term.coefficient * x[term.exponents[0][0]] if term.exponents
                           else term.coefficient)
        for m in state.synthesis:
            cost = cost + m.unit_cost * x[m.name]
        for v, (lo, hi) in state.bounds.items():
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
        if any(x.value is None for x in self.x):
            return self.problem.status, None
        return self.problem.status, np.array([float(x.value) for x in self.x])


def solve_numeric(state: Any, sense: Sense, bound: float, method: str
                  ) -> tuple[dict[str, float], str, str, str]:
    """cvxpy (the state's conic program: GP or DCP), then the polish and, if needed, the
    rescue."""
    import cvxpy as cp

    kind = state.method
    if method not in ("auto", kind):
        raise ValueError(f"method={method!r} does not fit this problem: {state.why}; use "
                         f"method={kind!r} or 'auto'")
    rhs = sense.rhs(bound, state.floor)
    try:
        status, x = state.conic_solve(sense, rhs)
    except (cp.error.SolverError, ArithmeticError) as exc:
        raise SolverError(solver_failure(state, sense, bound, exc)) from exc
    if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        raise InfeasibleError(f"the {sense.name} problem is infeasible (solver status "
                              f"{status}); check the bounds {dict(state.bounds)}")
    if status in (cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE):
        raise InfeasibleError(f"the {sense.name} problem is unbounded (solver status "
                              f"{status}); some axis can grow for free")
    if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or x is None:
        raise SolverError(solver_failure(state, sense, bound, f"status {status}"))
    values = {v: float(xi) for v, xi in zip(state.variables, x)}
    space_at = state.space_at(sense, bound)
    values, polished = polish(space_at, values)
    steps = ["polished by Newton on the KKT equations"] if polished else []
    if space_at(values).kkt(values)[0] > 1e-9:
        values, rescued = rescue(space_at, values)
        if rescued:
            steps.append("rescued by SLSQP")
    return values, status, kind, ", ".join([f"CLARABEL via {state.via} ({status})", *steps])


def solver_failure(state: Any, sense: Sense, bound: float, why: Any) -> str:
    """What rlscale tried and what the user can change, in place of cvxpy's advice."""
    text = " ".join(str(why).split())
    text = text.split(" Try another solver")[0].split(" Try re-solving")[0].rstrip(". ")
    text = text or "no reason given"
    return (f"the {sense.name} problem at {sense.what} {bound:g} could not be solved: "
            f"rlscale posed it as a {state.program} and ran the CLARABEL solver, which failed "
            f"({text}); try a {sense.what} nearer the spec's typical scale, rescale the "
            "law's coefficients and the cost toward 1, or tighten the bounds")
