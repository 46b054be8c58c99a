"""The two senses of an allocation problem, the KKT residual and integer rounding.

An allocation problem is solved in one of two *senses*: :data:`ALLOCATE`
minimises the loss subject to ``cost <= budget``; :data:`MIN_COST` minimises
the cost subject to ``loss <= target``.  A :class:`Sense` carries everything
that differs between them (which posynomial is the objective, what the
constraint is called, how a rounding candidate is ranked), so the solver
code never branches on a mode string.

KKT residual (reported on every allocation): in the coordinates of the
problem's space (``u = log x`` for a geometric program) stationarity reads
``grad f + sum_i mu_i grad g_i = 0`` with ``mu >= 0`` over the active
constraints ``g_i <= 0``.  The multipliers are fitted by non-negative least
squares (Lawson & Hanson 1974, ch. 23); the residual is the larger of the
stationarity error relative to ``|grad f|_inf`` and the largest constraint
violation.  It depends on the point only, so it grades any solver.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.theory._validation import check_real, check_scalar

__all__ = ["ALLOCATE", "MIN_COST", "Sense", "kkt_residual"]

_ACTIVE = 1e-6  # relative slack under which a constraint counts as active


@dataclass(frozen=True)
class Sense:
    """Which way an allocation problem is posed.

    Attributes
    ----------
    name : str
        ``"allocate"`` or ``"min_cost"`` (the method that poses it).
    constraint : str
        Name of the main constraint's multiplier: ``"budget"`` or ``"target"``.
    what : str
        The bound in words, for messages: ``"budget"`` or ``"target loss"``.
    minimises_loss : bool
        True for :data:`ALLOCATE` (objective: the law; constraint: the cost).
    """

    name: str
    constraint: str
    what: str
    minimises_loss: bool

    def rhs(self, bound: float, floor: float) -> float:
        """Right-hand side of the main constraint: the budget, or ``target - floor``."""
        return bound if self.minimises_loss else bound - floor

    def rank(self, loss: np.ndarray, cost: np.ndarray, bound: float
             ) -> tuple[np.ndarray, np.ndarray]:
        """``(feasible, key)`` of rounding candidates: within the bound, smallest key wins."""
        if self.minimises_loss:
            ok = cost <= bound * (1 + 1e-12)
            return ok, np.where(ok, loss, np.inf)
        ok = loss <= bound * (1 + 1e-12)
        return ok, np.where(ok, cost, np.inf)


ALLOCATE = Sense("allocate", "budget", "budget", True)
MIN_COST = Sense("min_cost", "target", "target loss", False)


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
    if names is not None and (isinstance(names, str | bytes) or not isinstance(names, Sequence)
                              or len(names) != len(checked)
                              or not all(isinstance(n, str) for n in names)):
        raise TypeError(f"names must be a sequence of {len(checked)} labels; got "
                        f"names={names!r:.60}")
    names = list(names) if names is not None else [f"c{i}" for i in range(len(checked))]
    return kkt_core(grad, checked, names)


def kkt_core(grad: np.ndarray, constraints: Sequence[tuple[float, np.ndarray]],
             names: Sequence[str]) -> tuple[float, dict[str, float]]:
    """:func:`kkt_residual` on checked input (the solver's inner loop).

    One active constraint is fitted in closed form, ``mu = max(0, -g.d / d.d)``
    (NNLS on one column); more go through :func:`scipy.optimize.nnls`.
    """
    infeas = max([0.0, *(float(g) for g, _ in constraints)])
    active = [i for i, (g, _) in enumerate(constraints) if g >= -_ACTIVE]
    scale = max(float(np.max(np.abs(grad))), 1e-300)
    if len(active) == 1:
        d = constraints[active[0]][1]
        dd = float(d @ d)
        mu = np.array([max(0.0, -float(grad @ d) / dd) if dd > 0 else 0.0])
        stat = grad + mu[0] * d
    elif active:
        from scipy.optimize import nnls

        J = np.column_stack([constraints[i][1] for i in active])
        mu, _ = nnls(J, -grad)
        stat = grad + J @ mu
    else:
        mu, stat = [], grad
    residual = max(float(np.max(np.abs(stat))) / scale, infeas)
    return residual, {names[i]: float(m) for i, m in zip(active, mu) if m > 0}


def round_allocation(state: Any, sense: Sense, bound: float,
                     values: dict[str, float]) -> dict[str, Any]:
    """Best integer allocation among the floors and ceilings of ``values``.

    Every combination of ``floor``/``ceil`` per variable (clipped to its
    integer bounds; at least 1 for a law axis, where 0 means no data) is
    evaluated at once (``state.candidate_loss_cost``: the problem's
    :class:`~._alloc_state.AllocationState`); the feasible one with the smallest
    objective wins.  Past 14 variables only the nearest integer of each is tried.
    Returns the ``rounded``, ``rounded_loss`` and ``rounded_cost`` fields of an
    :class:`~rlscale.optimize.Allocation`, or a ``rounding_note`` saying why
    there is none.
    """
    choices = []
    for v in state.variables:
        lo, hi = state.bounds[v]
        lo_i = max(math.ceil(lo - 1e-9), 1 if v in state.objective.axes else 0)
        hi_i = math.floor(hi + 1e-9) if math.isfinite(hi) else math.inf
        cands = {min(max(math.floor(values[v]), lo_i), hi_i),
                 min(max(math.ceil(values[v]), lo_i), hi_i)}
        cands = {c for c in cands if lo_i <= c <= hi_i}
        if not cands:
            return {"rounding_note": f"no integer value of {v} lies within its bounds "
                                     f"{state.bounds[v]}"}
        choices.append(sorted(cands))
    if len(state.variables) > 14:
        choices = [[min(c, key=lambda z, v=v: abs(z - values[v]))]
                   for c, v in zip(choices, state.variables)]
    grid = np.array(list(itertools.product(*choices)), dtype=np.float64)
    cand = {v: grid[:, i] for i, v in enumerate(state.variables)}
    loss, cost = state.candidate_loss_cost(cand)
    ok, key = sense.rank(loss, cost, bound)
    if not ok.any():
        what = "within the budget" if sense.minimises_loss else "reaching the target"
        return {"rounding_note": f"no floor/ceiling combination of the optimum is {what}"}
    best = int(np.argmin(key))
    return {"rounded": {v: int(grid[best, i]) for i, v in enumerate(state.variables)},
            "rounded_loss": float(loss[best]), "rounded_cost": float(cost[best])}
