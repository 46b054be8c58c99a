"""The result records of an allocation (:class:`Allocation`, :class:`AllocationFrontier`).

(What fills a solver's record -- loss, cost, effective axes and shares at its point -- is
the problem state's ``summary``: :mod:`._alloc_state`.)

A closed form (:mod:`._alloc_closed`) costs microseconds, its certificate -- the KKT
residual and multipliers, checked at the point in log space -- ten to a hundred times more.
So records of a closed form are built with that certificate *deferred*: the fields named in
``_DEFERRED`` are absent from the instance until first read, when one call computes all of
them and stores them (:class:`_Deferred`).  Reading, comparing, printing, ``as_dict`` and
pickling all see the computed values; a solver's record has every field from the start.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from rlscale.theory._result import Result

__all__ = ["Allocation", "AllocationFrontier"]


class _Deferred:
    """Fields computed on first read (see the module docstring).

    A record made by :meth:`_deferred` holds a callable under ``_pending`` that
    takes the record and returns the deferred fields as a dict.  ``__getattr__`` runs
    only when ordinary lookup fails, so a field already present costs nothing;
    the deferred fields have no class-level default (``default_factory``), so
    their lookup does fail until they are computed.
    """

    _DEFERRED: frozenset[str] = frozenset()

    @classmethod
    def _deferred(cls, known: dict[str, Any], pending: Callable[[Any], dict[str, Any]]) -> Any:
        """A record with the ``known`` fields (the dict is taken over, not copied) and the
        others computed by ``pending``."""
        known["_pending"] = pending
        obj = object.__new__(cls)
        object.__setattr__(obj, "__dict__", known)  # ``known`` becomes the instance's own
        return obj

    def __getattr__(self, name: str) -> Any:
        state = self.__dict__
        if name in self._DEFERRED and "_pending" in state:
            state.update(state["_pending"](self))
            state.pop("_pending", None)
            return state[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _settled(self) -> dict[str, Any]:
        """The instance's fields, deferred ones computed."""
        if "_pending" in self.__dict__:
            getattr(self, next(iter(self._DEFERRED)))
        return self.__dict__

    def __getstate__(self) -> dict[str, Any]:  # pickle and copy: a plain record
        return dict(self._settled())


@dataclass(frozen=True)
class Allocation(_Deferred, Result):
    """The outcome of :func:`allocate` or :func:`min_cost`.

    A closed form's record computes its certificate -- ``kkt_residual``,
    ``duals``, ``success`` and ``message`` -- and its integer rounding when one
    of them is first read (the solve itself then costs a few microseconds); a
    solver's record carries them from the start.

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
        for the conic solves, ``"optimal"`` for a closed form and a certified
        Newton point.
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
        What produced the point: ``"Newton gp"`` (Newton on the KKT equations,
        certified), ``"CLARABEL gp"``, ``"CLARABEL dcp"`` or ``"closed form (<kind>)"``.
    seconds : float
        Wall time of the solve.
    success : bool
        Whether the KKT residual is ``<= 1e-6`` (failures raise instead of
        returning, so this flags a point that is feasible but not certified).
        Default True.
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
    # No class-level defaults (factories instead): deferred fields must be absent until read.
    rounded: dict[str, int] | None = field(default_factory=lambda: None)
    rounded_loss: float | None = field(default_factory=lambda: None)
    rounded_cost: float | None = field(default_factory=lambda: None)
    rounding_note: str = field(default_factory=str)
    solver: str = ""
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    success: bool = field(default_factory=lambda: True)
    message: str = field(default_factory=str)
    method: str = ""

    _DEFERRED = frozenset({"kkt_residual", "duals", "success", "message", "rounded",
                           "rounded_loss", "rounded_cost", "rounding_note"})

    def as_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
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
class AllocationFrontier(_Deferred, Result):
    """Optimal allocations at many budgets, as arrays (:meth:`AllocationProblem.frontier`).

    From a closed form only ``budgets`` and ``values`` are computed by the call
    (one vectorised pass); ``loss``, ``cost``, ``kkt_residual`` and ``method``
    are computed together, vectorised, when one of them is first read.

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
    success, status, message
        The result convention of :mod:`rlscale.optimize._outcome` for the whole
        frontier: ``success`` when every budget's KKT residual is ``<= 1e-6``;
        ``status`` ``"closed_form"`` when every budget took the closed form,
        ``"optimal"`` otherwise, ``"uncertified"`` when a budget fails the test;
        ``message`` counts the methods and gives the worst residual.  Read
        them and the certificate is computed.
    """

    budgets: np.ndarray
    values: dict[str, np.ndarray]
    loss: np.ndarray
    cost: np.ndarray
    kkt_residual: np.ndarray
    method: tuple[str, ...]

    _DEFERRED = frozenset({"loss", "cost", "kkt_residual", "method"})

    @property
    def success(self) -> bool:
        return bool(np.all(self.kkt_residual <= 1e-6))

    @property
    def status(self) -> str:
        if not self.success:
            return "uncertified"
        return "closed_form" if set(self.method) == {"closed_form"} else "optimal"

    @property
    def message(self) -> str:
        counts = ", ".join(f"{self.method.count(m)} {m}" for m in sorted(set(self.method)))
        worst = float(np.max(self.kkt_residual)) if self.kkt_residual.size else 0.0
        return f"{self.budgets.size} budgets ({counts}); worst KKT residual {worst:.2g}"

    def as_dict(self) -> dict[str, Any]:
        return {"budgets": self.budgets.tolist(),
                "values": {k: v.tolist() for k, v in self.values.items()},
                "loss": self.loss.tolist(), "cost": self.cost.tolist(),
                "kkt_residual": self.kkt_residual.tolist(), "method": list(self.method),
                "success": self.success, "status": self.status, "message": self.message}
