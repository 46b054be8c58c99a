"""The closed form as the allocation verbs' fast path: records in microseconds.

:class:`ClosedPlan` reduces a problem's closed form (:mod:`._alloc_closed`, with the
derivations) in one sense to the numbers a call needs, and builds its
:class:`~._alloc_result.Allocation` records, the certificate and the rounding deferred;
:func:`closed_frontier` grades a frontier of closed-form points in one vectorised pass.
"""

from __future__ import annotations

import math
import time
from functools import partial
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from rlscale.optimize._alloc_closed import KINDS, LOG_MAX, LOG_RANGE
from rlscale.optimize._alloc_kkt import ALLOCATE, Sense, round_allocation
from rlscale.optimize._alloc_result import Allocation, AllocationFrontier

if TYPE_CHECKING:
    from rlscale.optimize._alloc_state import GPState

__all__ = ["ClosedPlan", "closed_frontier", "frontier_certificate"]

# Bound once: the per-call hot path looks nothing up.
_new, _set, _clock, _np_log = object.__new__, object.__setattr__, time.perf_counter, np.log
_ROUNDING = ("rounded", "rounded_loss", "rounded_cost", "rounding_note")  # deferred if asked


def closed_frontier(state: GPState, x: np.ndarray, budgets: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Loss, cost and KKT residual of closed-form points ``x`` (variables x budgets).

    All in log space from the term matrices; the KKT residual (see
    :mod:`._alloc_kkt`) is vectorised where no bound is active (one
    multiplier, fitted in closed form) and computed point by point elsewhere.
    """
    A, b = state.law_terms
    Ac, bc = state.cost_terms
    u = np.log(x)
    zo, zc = A @ u + b[:, None], Ac @ u + bc[:, None]
    with np.errstate(over="ignore"):
        loss = state.floor + np.exp(zo).sum(axis=0)
        cost = np.exp(zc).sum(axis=0)
    log_lo, log_hi = state.log_box
    near = ((u - log_lo[:, None] <= 1e-6) | (log_hi[:, None] - u <= 1e-6))
    kkt = np.empty(budgets.size)
    free = ~near.any(axis=0)
    if free.any():
        gf, gc = _softmax_grad(zo[:, free], A), _softmax_grad(zc[:, free], Ac)
        mu = np.maximum(0.0, -np.sum(gf * gc, axis=0) / np.sum(gc * gc, axis=0))
        stat = np.max(np.abs(gf + mu * gc), axis=0) / np.max(np.abs(gf), axis=0)
        gap = np.log(cost[free]) - np.log(budgets[free])
        kkt[free] = np.maximum(stat, np.maximum(gap, 0.0))
    for j in np.flatnonzero(~free):
        vals = {v: float(x[i, j]) for i, v in enumerate(state.variables)}
        kkt[j] = state.kkt(ALLOCATE, float(budgets[j]), vals)[0]
    return loss, cost, kkt


def _softmax_grad(z: np.ndarray, A: np.ndarray) -> np.ndarray:
    """Gradients of ``log sum exp(z)``, ``z = A u + b``, per column (variables x points)."""
    w = np.exp(z - z.max(axis=0))
    return A.T @ (w / w.sum(axis=0))


class ClosedPlan:
    """A problem's closed form in one sense, reduced to numbers for calls of microseconds.

    Built once per problem and sense (:meth:`._alloc_state.GPState.closed_plan`).  Every
    closed form is affine in logs (:meth:`ClosedForm.affine`): ``log x = p + q L``,
    ``L = log rhs``, ``rhs`` the budget or target minus floor; so are the logs of the law's
    and cost's terms and of the effective axes, ``A log x + b = (A p + b) + (A q) L``.

    **The fast interval** ``low < rhs < high``: each check of the general path bounds ``L``
    on one side -- ``log x`` inside the box and the float range ``[-708, 709]`` shrunk by
    1e-9 (far above the rounding of ``p + q L``), a budget above the cheapest allocation, a
    target above the lowest loss the bounds allow -- so together they leave an interval.
    Inside it nothing else is checked or clipped (:meth:`solve`); NaN, infinities, values
    <= 0 and the edges take the general path (:func:`closed_logs`, then :meth:`build`),
    which raises or clips as before.  Values are ``numpy.exp`` of the same ``p + q L`` on
    every path (numpy gives a scalar the digits it gives inside an array), so a call, a
    sweep and a frontier agree to the last bit.  The certificate and the integer rounding
    are deferred to first read (:class:`._alloc_result._Deferred`).
    """

    def __init__(self, state: GPState, sense: Sense) -> None:
        cf = state.closed_form
        self.state, self.sense = state, sense
        p, q = cf.affine(sense)
        self._p_col, self._q_col = p[:, None], q[:, None]
        #: ``L -> x``: numpy's exp, whose digits the vectorised frontier shares.
        self._values_at = _affine_exp(p.tolist(), q.tolist(), np.exp)
        #: Subtracted from the bound to give ``rhs``: 0 for a budget, the floor for a target.
        self.floor = 0.0 if sense.minimises_loss else state.floor
        self._law_floor = state.floor
        self._names, self._axes = tuple(state.variables), tuple(state.law.axes)
        mats = [state.law_terms, state.cost_terms]
        n_obj, n_cost = len(mats[0][1]), len(mats[1][1])
        self._obj_slice, self._cost_slice = slice(0, n_obj), slice(n_obj, n_obj + n_cost)
        self._eff_slice = slice(n_obj + n_cost, None)
        eff = state.effective_terms
        # Axes that are decision variables themselves (no substitution) are read off the values.
        direct = [int(np.argmax(row)) for row, c in zip(*eff)
                  if c == 0.0 and np.count_nonzero(row) == 1 and row.max() == 1.0]
        #: ``x -> the effective axes`` when every axis is a decision variable, else None (the
        #: spare index keeps the result a tuple for one axis; ``zip`` with the axes drops it).
        self._direct = (itemgetter(*direct, 0) if len(direct) == len(self._axes)
                        else None)
        if self._direct is None:
            mats.append(eff)
        A, b = np.vstack([m[0] for m in mats]), np.concatenate([m[1] for m in mats])
        #: ``L -> the terms`` (law's, cost's, effective axes'): math.exp, no digits to share.
        self._terms_at = _affine_exp((A @ p + b).tolist(), (A @ q).tolist(), math.exp)
        self._sparse = _sparse_rows(A, b)
        self._labels = state.labels
        self._message = f"closed form: {KINDS[cf.kind]}"
        self._bound_key = "budget" if sense.minimises_loss else "target"
        #: Every field of a record in order, with the values all records share.
        self._template = {
            "values": None, "effective": None, "loss": None, "cost": None, "budget": None,
            "target": None, "shares": None, "status": "optimal", "rounded": None,
            "rounded_loss": None, "rounded_cost": None, "rounding_note": "",
            "solver": f"closed form ({cf.kind})", "seconds": 0.0, "extra": None,
            "method": "closed_form"}
        self.low, self.high = self._fast_interval(state, p, q)

    def _fast_interval(self, state: GPState, p: np.ndarray, q: np.ndarray
                       ) -> tuple[float, float]:
        """``(low, high)`` of ``rhs`` (see the class docstring); empty as ``(inf, -inf)``."""
        lo_l, hi_l = -math.inf, math.inf
        log_lo, log_hi = state.log_box
        for pi, qi, lo, hi in zip(p.tolist(), q.tolist(), log_lo.tolist(), log_hi.tolist()):
            if qi == 0.0:  # a pooled nesting level: log x = p whatever the rhs
                if not (max(lo, LOG_RANGE[0]) <= pi <= min(hi, LOG_RANGE[1])):
                    return math.inf, -math.inf
                continue
            lo, hi = max(lo, LOG_RANGE[0]) + 1e-9, min(hi, LOG_RANGE[1]) - 1e-9
            if not lo < hi:  # a box narrower than the margins
                return math.inf, -math.inf
            a, b = (lo - pi) / qi, (hi - pi) / qi
            lo_l, hi_l = max(lo_l, min(a, b)), min(hi_l, max(a, b))
        if not lo_l < hi_l:
            return math.inf, -math.inf
        low = _exp_or_inf(lo_l)
        high = math.inf if hi_l >= LOG_MAX else _exp_or_inf(hi_l)
        if self.sense.minimises_loss:
            low = max(low, state.cheapest[0])
        else:
            low = max(low, state.lowest_loss * (1 + 1e-12) - self.floor)
        return low, high

    def solve(self, bound: float, round_integers: bool) -> Allocation:
        """The record at ``bound`` (a float whose ``rhs = bound - floor`` the caller has
        checked lies in the fast interval): the terms from their affine forms in ``L``."""
        start = _clock()
        log_rhs = float(_np_log(bound - self.floor))
        return self._record(bound, self._values_at(log_rhs), self._terms_at(log_rhs),
                            round_integers, start)

    def build(self, bound: float, u: list[float], x: list[float], round_integers: bool,
              start: float) -> Allocation:
        """The record of the general path's point ``x = exp(u)`` (``u`` possibly clipped onto
        a bound): the terms from ``A u + b``."""
        return self._record(bound, x, _terms(self._sparse, u), round_integers, start)

    def _record(self, bound: float, x: list[float], terms: list[float], round_integers: bool,
                start: float) -> Allocation:
        """The record (``terms``: the law's, the cost's, the effective axes'); the hot path."""
        cost_terms = terms[self._cost_slice]
        cost = sum(cost_terms)
        state = self._template.copy()  # a copy is cheaper than a 17-key literal
        state["values"] = dict(zip(self._names, x))
        state["effective"] = dict(zip(self._axes, terms[self._eff_slice] if self._direct is None
                                      else self._direct(x)))
        state["loss"] = self._law_floor + sum(terms[self._obj_slice])
        state["cost"] = cost
        state[self._bound_key] = bound
        # one cost term: its share is t / t = 1.0 exactly
        state["shares"] = ({self._labels[0]: 1.0} if len(cost_terms) == 1
                           else dict(zip(self._labels, map(cost.__rtruediv__, cost_terms))))
        state["extra"] = {}
        if round_integers:  # deferred with the certificate
            for key in _ROUNDING:
                del state[key]
        state["_pending"] = self._certify  # Allocation._deferred, inlined: the hot path
        state["seconds"] = _clock() - start
        record = _new(Allocation)
        _set(record, "__dict__", state)
        return record

    def _certify(self, record: Allocation) -> dict[str, Any]:
        """The deferred fields of ``record``: its certificate, and its rounding if asked."""
        state = record.__dict__
        bound, values = state[self._bound_key], state["values"]
        residual, duals = self.state.kkt(self.sense, bound, values)
        out = {"kkt_residual": residual, "duals": duals, "success": residual <= 1e-6,
               "message": f"{self._message}; KKT residual {residual:.2g}"}
        if "rounded" not in state:
            out.update(dict.fromkeys(_ROUNDING), rounding_note="")
            out.update(round_allocation(self.state, self.sense, bound, values))
        return out

    def frontier(self, budgets: np.ndarray) -> AllocationFrontier:
        """Allocations at ``budgets``, all in the fast interval: one vectorised pass."""
        budgets = budgets.copy()  # the record's own: its certificate reads them later
        x = self._q_col * np.log(budgets)  # p + q L as in ClosedForm.log_values, in place
        x += self._p_col
        np.exp(x, out=x)
        record = _new(AllocationFrontier)  # AllocationFrontier._deferred, inlined
        _set(record, "__dict__", {"budgets": budgets, "values": dict(zip(self._names, x)),
                                  "_pending": partial(frontier_certificate, self.state, x)})
        return record


def frontier_certificate(state: GPState, x: np.ndarray, record: AllocationFrontier
                         ) -> dict[str, Any]:
    """The deferred fields of a closed-form :class:`AllocationFrontier` at points ``x``."""
    loss, cost, kkt = closed_frontier(state, x, record.budgets)
    return {"loss": loss, "cost": cost, "kkt_residual": kkt,
            "method": ("closed_form",) * record.budgets.size}


def _affine_exp(c: list[float], d: list[float], exp: Any) -> Any:
    """``L -> [float(exp(c_i + d_i L)) for each i]``, unrolled up to three terms (for so few,
    a loop's set-up costs as much as the arithmetic); ``float`` unwraps numpy's scalars."""
    if len(c) == 1:
        (c0,), (d0,) = c, d
        return lambda L: [float(exp(c0 + d0 * L))]
    if len(c) == 2:
        (c0, c1), (d0, d1) = c, d
        return lambda L: [float(exp(c0 + d0 * L)), float(exp(c1 + d1 * L))]
    if len(c) == 3:
        (c0, c1, c2), (d0, d1, d2) = c, d
        return lambda L: [float(exp(c0 + d0 * L)), float(exp(c1 + d1 * L)),
                          float(exp(c2 + d2 * L))]
    pairs = tuple(zip(c, d))
    return lambda L: [float(exp(ci + di * L)) for ci, di in pairs]


def _sparse_rows(A: np.ndarray, b: np.ndarray) -> tuple[tuple[float, tuple], ...]:
    """Rows ``b_k + sum_i A_ki u_i`` as ``(b_k, ((i, A_ki), ...))`` over the non-zero ``A_ki``."""
    return tuple((float(bk), tuple((i, float(a)) for i, a in enumerate(row) if a != 0.0))
                 for row, bk in zip(A.tolist(), b.tolist()))


def _terms(rows: tuple, u: list[float]) -> list[float]:
    """``exp`` of each sparse row at ``u``."""
    out = []
    for z, nz in rows:
        for i, a in nz:
            z += a * u[i]
        out.append(math.exp(z))
    return out


def _exp_or_inf(z: float) -> float:  # the bound of an interval: overflow is "no bound"
    try:
        return math.exp(z)
    except OverflowError:
        return math.inf
