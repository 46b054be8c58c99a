"""The coordinates in which an allocation's KKT conditions are checked and polished.

:class:`LogSpace` (geometric programs): ``p = log x``.  With ``log P`` the
log of a posynomial ``P = sum_k exp(a_k . p + b_k)`` (log-sum-exp, convex),
its gradient is ``w^T A`` and its Hessian ``A^T (diag w - w w^T) A`` with
``w`` the softmax of the terms (Boyd & Vandenberghe 2004, §3.1.5 and
example 3.14).  The objective is ``log P`` (allocate) or ``log C``
(min-cost); the main constraint ``log C - log B`` or ``log P - log(target -
floor)``; bounds are ``log lo - p <= 0`` and ``p - log hi <= 0``.

:class:`CountSpace` (synthetic data, a DCP problem in the counts): ``p = x /
s`` with ``s`` what the whole budget buys of each count, objective and main
constraint divided by their values at the solver's point, so every quantity
is unit-free.  Gradients are the chain rule through each synthesis method's
effective count (``x_eff = x_real + gain(x_syn)``).

Both expose the same interface: ``p0``, ``to_values(p)``, ``obj_grad(p)``,
``main(p) -> (g, grad g)``, ``bound_cons(p)`` and the box ``lo``/``hi`` in
``p``; :class:`LogSpace` adds ``obj_hess`` and ``main_hess`` for the exact
Newton polish.
"""

from __future__ import annotations

import copy
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

import numpy as np

from rlscale.optimize._alloc_kkt import Sense, kkt_core

__all__ = ["CountSpace", "LogSpace", "grad_counts", "log_value_grad"]


def log_value_grad(A: np.ndarray, b: np.ndarray, u: np.ndarray
                   ) -> tuple[float, np.ndarray, np.ndarray]:
    """``log sum exp(A u + b)``, its gradient ``w^T A`` and the softmax weights ``w``."""
    z = A @ u + b
    zmax = float(np.max(z))
    w = np.exp(z - zmax)
    total = float(w.sum())
    w /= total
    return zmax + math.log(total), w @ A, w


def _hess(A: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Hessian of log-sum-exp: ``A^T (diag w - w w^T) A``."""
    Aw = w @ A
    return (A.T * w) @ A - np.outer(Aw, Aw)


class _Space(ABC):
    """Shared parts: bound constraints in ``p`` and the KKT residual at a point."""

    sense: Sense
    lo: np.ndarray
    hi: np.ndarray
    labels_lo: list[str | None]
    labels_hi: list[str | None]

    def bound_cons(self, p: np.ndarray) -> list[tuple[str, float, np.ndarray]]:
        n = len(p)
        out = []
        for i in range(n):
            if self.labels_lo[i] is not None:
                e = np.zeros(n)
                e[i] = -1.0
                out.append((self.labels_lo[i], self.lo[i] - p[i], e))
            if self.labels_hi[i] is not None:
                e = np.zeros(n)
                e[i] = 1.0
                out.append((self.labels_hi[i], p[i] - self.hi[i], e))
        return out

    def kkt(self, values: Mapping[str, float]) -> tuple[float, dict[str, float]]:
        """KKT residual and multipliers at ``values`` (see :mod:`._alloc_kkt`)."""
        p = self.point(values)
        g, d = self.main(p)
        cons = [(self.sense.constraint, g, d), *self.bound_cons(p)]
        return kkt_core(self.obj_grad(p), [(c[1], c[2]) for c in cons], [c[0] for c in cons])

    @abstractmethod
    def point(self, values: Mapping[str, float]) -> np.ndarray: ...

    @abstractmethod
    def obj_grad(self, p: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def main(self, p: np.ndarray) -> tuple[float, np.ndarray]: ...


class LogSpace(_Space):
    """A geometric program in ``p = log x`` (see the module docstring)."""

    hessians = True

    def __init__(self, state: Any, sense: Sense, bound: float) -> None:
        self.sense, self.variables = sense, state.variables
        law, cost = state.law_terms, state.cost_terms
        self.f, self.g = (law, cost) if sense.minimises_loss else (cost, law)
        self.log_rhs = math.log(sense.rhs(bound, state.floor))
        bounds = [state.bounds[v] for v in self.variables]
        self.lo = np.array([math.log(lo) if lo > 0 else -math.inf for lo, _ in bounds])
        self.hi = np.array([math.log(hi) if math.isfinite(hi) else math.inf for _, hi in bounds])
        self.labels_lo = [f"{v}>={lo:g}" if lo > 0 else None
                          for v, (lo, _) in zip(self.variables, bounds)]
        self.labels_hi = [f"{v}<={hi:g}" if math.isfinite(hi) else None
                          for v, (_, hi) in zip(self.variables, bounds)]

    def at(self, bound: float, floor: float) -> LogSpace:
        """The same space with the main constraint at another ``bound``."""
        out = copy.copy(self)
        out.log_rhs = math.log(self.sense.rhs(bound, floor))
        return out

    def point(self, values: Mapping[str, float]) -> np.ndarray:
        return np.log([max(values[v], 1e-300) for v in self.variables])

    def to_values(self, p: np.ndarray) -> dict[str, float]:
        return {v: float(np.exp(pi)) for v, pi in zip(self.variables, p)}

    def obj_value(self, p: np.ndarray) -> float:
        return log_value_grad(*self.f, p)[0]

    def obj_grad(self, p: np.ndarray) -> np.ndarray:
        return log_value_grad(*self.f, p)[1]

    def obj_hess(self, p: np.ndarray) -> np.ndarray:
        return _hess(self.f[0], log_value_grad(*self.f, p)[2])

    def main(self, p: np.ndarray) -> tuple[float, np.ndarray]:
        val, grad, _ = log_value_grad(*self.g, p)
        return val - self.log_rhs, grad

    def main_hess(self, p: np.ndarray) -> np.ndarray:
        return _hess(self.g[0], log_value_grad(*self.g, p)[2])


class CountSpace(_Space):
    """A convex program in scaled counts ``p = x / s`` (see the module docstring)."""

    hessians = False

    def __init__(self, state: Any, sense: Sense, bound: float,
                 values: Mapping[str, float]) -> None:
        self.state, self.sense, self.bound = state, sense, bound
        self.variables = state.variables
        _, gc0 = grad_counts(state, values)
        ref = bound if sense.minimises_loss else float(state.cost_at(values))
        with np.errstate(divide="ignore"):  # an uncosted axis: ref / 0 = inf, not used
            per_unit = ref / gc0
        self.scale = np.where(gc0 > 0, per_unit,
                              np.array([max(values[v], 1.0) for v in self.variables]))
        self.red0 = float(state.objective.evaluate(state.effective(values)))
        self.cost0 = float(state.cost_at(values))
        bounds = [state.bounds[v] for v in self.variables]
        self.lo = np.array([lo / s for (lo, _), s in zip(bounds, self.scale)])
        self.hi = np.array([hi / s for (_, hi), s in zip(bounds, self.scale)])
        self.labels_lo = [f"{v}>={lo:g}" for v, (lo, _) in zip(self.variables, bounds)]
        self.labels_hi = [f"{v}<={hi:g}" if math.isfinite(hi) else None
                          for v, (_, hi) in zip(self.variables, bounds)]

    def point(self, values: Mapping[str, float]) -> np.ndarray:
        return np.array([values[v] for v in self.variables]) / self.scale

    def to_values(self, p: np.ndarray) -> dict[str, float]:
        return {v: float(max(pi, 0.0) * si) for v, pi, si in zip(self.variables, p, self.scale)}

    def obj_value(self, p: np.ndarray) -> float:
        vals = self.to_values(p)
        if self.sense.minimises_loss:
            return float(self.state.reducible_at(vals)) / self.red0
        return float(self.state.cost_at(vals)) / self.cost0

    def obj_grad(self, p: np.ndarray) -> np.ndarray:
        gl, gc = grad_counts(self.state, self.to_values(p))
        if self.sense.minimises_loss:
            return gl * self.scale / self.red0
        return gc * self.scale / self.cost0

    def main(self, p: np.ndarray) -> tuple[float, np.ndarray]:
        vals = self.to_values(p)
        gl, gc = grad_counts(self.state, vals)
        if self.sense.minimises_loss:
            return (float(self.state.cost_at(vals)) / self.bound - 1.0,
                    gc * self.scale / self.bound)
        target = self.bound - self.state.floor
        red = float(self.state.objective.evaluate(self.state.effective(vals)))
        return red / target - 1.0, gl * self.scale / target


def grad_counts(state: Any, values: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Gradients of the reducible loss and the cost w.r.t. the decision counts."""
    n = len(state.variables)
    idx = {v: i for i, v in enumerate(state.variables)}
    eff = {a: float(z) for a, z in state.effective(values).items()}
    gl = np.zeros(n)
    for term in state.objective.terms:
        (axis, e), = term.exponents
        dz = term.coefficient * e * eff[axis] ** (e - 1)
        gl[idx[axis]] += dz
        for m in state.synthesis:
            if m.axis == axis:
                gl[idx[axis]] += dz * float(m.marginal_real(max(values[axis], 1e-300),
                                                            values[m.name]))
                gl[idx[m.name]] += dz * float(m.marginal(values[axis], values[m.name]))
    gc = np.zeros(n)
    for term in state.cost.terms:
        if term.exponents:
            gc[idx[term.exponents[0][0]]] += term.coefficient
    for m in state.synthesis:
        gc[idx[m.name]] += m.unit_cost
    return gl, gc
