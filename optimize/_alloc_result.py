"""The result records of an allocation (:class:`Allocation`, :class:`AllocationFrontier`) and
the summary of a solver's point that fills them."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Allocation", "AllocationFrontier", "summarise"]


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
        The solver's own status: cvxpy's (``"optimal"``, ``"optimal_inaccurate"``)
        for the ``"gp"`` and ``"dcp"`` methods, ``"optimal"`` for a closed form.
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
    solver : str
        What produced the point: ``"CLARABEL gp"``, ``"CLARABEL dcp"`` or
        ``"closed form (<kind>)"``.
    seconds : float
        Wall time of the solve.
    success : bool
        Whether the KKT residual is ``<= 1e-6`` (failures raise instead of
        returning, so this flags a point that is feasible but not certified).
    message : str
        How it was solved, in words: the closed form used, or the solver and
        whether polishing and the SLSQP rescue ran.
    method : str
        ``"closed_form"``, ``"gp"`` or ``"dcp"`` (see :func:`allocate`).
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
    success: bool = True
    message: str = ""
    method: str = ""

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



@dataclass(frozen=True)
class AllocationFrontier:
    """Optimal allocations at many budgets, as arrays (:meth:`AllocationProblem.frontier`).

    Attributes
    ----------
    budgets : ndarray
        The budgets, in the order given.
    values : dict of ndarray
        Optimal value of each decision variable at each budget (continuous).
    loss, cost, kkt_residual : ndarray
        Loss, cost and KKT residual at each budget.
    method : tuple of str
        ``"closed_form"``, ``"gp"`` or ``"dcp"`` per budget.
    """

    budgets: np.ndarray
    values: dict[str, np.ndarray]
    loss: np.ndarray
    cost: np.ndarray
    kkt_residual: np.ndarray
    method: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"budgets": self.budgets.tolist(),
                "values": {k: v.tolist() for k, v in self.values.items()},
                "loss": self.loss.tolist(), "cost": self.cost.tolist(),
                "kkt_residual": self.kkt_residual.tolist(), "method": list(self.method)}


def summarise(problem: Any, values: dict[str, float]
              ) -> tuple[float, float, dict[str, float], dict[str, float]]:
    """Loss, cost, effective axes and cost shares at a solver's point.

    For a GP at positive counts, from the term matrices in log space (one
    pass, no re-validation: the point came from the solver); otherwise by
    evaluating the law and the cost.
    """
    x = np.array([values[v] for v in problem.variables])
    if not problem.gp or not np.all(x > 0):
        return (float(problem.loss_at(values)), float(problem.cost_at(values)),
                {k: float(v) for k, v in problem.effective(values).items()},
                _shares(problem, values))
    u = np.log(x)
    A, b = problem._matrix(problem.objective)
    Ac, bc = problem._matrix(problem.cost)
    Ae, be = _effective_matrix(problem)
    with np.errstate(over="ignore"):
        terms = np.exp(Ac @ u + bc)
        cost = float(terms.sum())
        loss = problem.law.floor + float(np.exp(A @ u + b).sum())
        eff = np.exp(Ae @ u + be)
    return (loss, cost, dict(zip(problem.law.axes, eff.tolist())),
            dict(zip(problem._labels, (terms / cost).tolist())))


def _effective_matrix(problem: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(A, b)`` with ``log(effective axes) = A @ log(x) + b`` (GP problems)."""
    if "effective" not in problem._mats:
        A = np.zeros((len(problem.law.axes), len(problem.variables)))
        b = np.zeros(len(problem.law.axes))
        for i, axis in enumerate(problem.law.axes):
            if axis in problem.substitute:
                (mono,) = problem.substitute[axis].terms
                b[i] = math.log(mono.coefficient)
                A[i] = [mono.power_of(v) for v in problem.variables]
            else:
                A[i, problem.variables.index(axis)] = 1.0
        problem._mats["effective"] = (A, b)
    return problem._mats["effective"]


def _shares(problem: Any, values: Mapping[str, float]) -> dict[str, float]:
    terms = problem.cost.term_values(values) if problem.cost.axes else np.array(
        [m.coefficient for m in problem.cost.terms])
    labels = [m.label() for m in problem.cost.terms]
    amounts = dict(zip(labels, (float(t) for t in terms)))
    for m in problem.synthesis:
        amounts[m.name] = m.unit_cost * values[m.name]
    total = sum(amounts.values())
    return {k: v / total for k, v in amounts.items()}
