"""Closed-form optima of allocation problems, vectorised over budgets and targets.

Three structures have a closed form; :func:`closed_form` recognises them on
the posynomials in the decision variables (after substitution) and returns a
:class:`ClosedForm` whose :meth:`~ClosedForm.log_values` maps the log of the
right-hand side (budget, or target minus floor) to ``log x`` for every
variable at once.  Each solves a *relaxation* of the bounded problem (only
the main constraint, plus for pooled nesting levels ``v >= 1``); when its
point lies within the bounds it is the optimum of the bounded problem too
(the feasible set is a subset of the relaxation's), otherwise the caller
falls back to the geometric program.

**Power laws under a monomial cost** (Hoffmann et al. 2022, appendix D.2,
for ``6 N D``; here any number of axes): ``P = sum_i a_i x_i^-alpha_i``
(one term per variable) and ``C = k prod_i x_i^gamma_i`` (``gamma_i > 0``).
Stationarity of ``log P + mu log C`` in ``log x`` makes ``lam = alpha_i l_i
/ gamma_i`` equal across terms (``l_i = a_i x_i^-alpha_i``), so ``log x_i =
(log(a_i alpha_i / gamma_i) - log lam) / alpha_i``.  With ``r_i = gamma_i /
alpha_i``, the budget ``log k + sum_i gamma_i log x_i = log B`` gives ``log
lam = (sum_i r_i log(a_i alpha_i / gamma_i) - log(B / k)) / sum_i r_i``; the
target ``sum_i l_i = T`` gives ``lam = T / sum_i r_i``.

**Cobb–Douglas** (a single-monomial law ``P = a prod_j x_j^-alpha_j`` under a
linear cost ``sum_j c_j x_j``): ``alpha_j / x_j = lam c_j`` gives the budget
shares ``c_j x_j / B = alpha_j / sum alpha`` (Varian 1992, *Microeconomic
Analysis*, §7.4), so ``log x_j = log B + log(s_j / c_j)``; for a target,
``log B = (log a - log T - sum_j alpha_j log(s_j / c_j)) / sum alpha``.

**Nested variance components** (Cochran 1977, *Sampling Techniques*, ch. 10;
:mod:`rlscale.theory._nested`): ``P = sum_i s_i / n_i`` and ``C = sum_i c_i
n_i`` with ``n_i = v_0 v_1 ... v_i``.  Lagrange gives ``n_i = sqrt(s_i / c_i)
B / sum_j sqrt(s_j c_j)`` and the loss ``(sum_j sqrt(s_j c_j))^2 / B``; for
a target ``T``, ``n_i = sqrt(s_i / c_i) sum_j sqrt(s_j c_j) / T``.  Nesting
``v_j >= 1`` pools adjacent levels whose ``sqrt(s/c)`` decreases (pool
adjacent violators, exact along a chain); pooled levels need ``v_j >= 1`` in
the bounds for the relaxation to contain the feasible set.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from functools import partial
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from rlscale.optimize._alloc_kkt import ALLOCATE, Sense, round_allocation
from rlscale.optimize._alloc_result import Allocation, AllocationFrontier

if TYPE_CHECKING:
    from rlscale.optimize._alloc_state import GPState

__all__ = ["KINDS", "ClosedForm", "ClosedPlan", "closed_form", "closed_frontier", "closed_logs"]

#: ``log x`` outside this range is refused (``exp`` would leave the float range).
_LOG_RANGE = (-708.0, 709.0)
_LOG_MAX = math.log(sys.float_info.max)  # the largest log of a finite float
# Bound once: the per-call hot path looks nothing up.
_new, _set, _clock, _np_log = object.__new__, object.__setattr__, time.perf_counter, np.log
_ROUNDING = ("rounded", "rounded_loss", "rounded_cost", "rounding_note")  # deferred if asked

#: Each closed form in words, with its source.
KINDS = {"power-laws/monomial-cost": "power laws under a single-monomial cost "
          "(Hoffmann et al. 2022, app. D.2)",
          "cobb-douglas": "a single-monomial law under a linear cost (Cobb-Douglas shares)",
          "nested": "nested variance components (Cochran 1977, ch. 10)"}


@dataclass(frozen=True)
class ClosedForm:
    """A recognised closed form (see the module docstring).

    Attributes
    ----------
    kind : str
        ``"power-laws/monomial-cost"``, ``"cobb-douglas"`` or ``"nested"``.
    needs_unit_lower : tuple of int
        Variables whose lower bound must be >= 1 for the relaxation to contain
        the problem (pooled nesting levels); empty otherwise.
    """

    kind: str
    needs_unit_lower: tuple[int, ...]
    _data: tuple[Any, ...]

    def log_values(self, sense: Sense, log_rhs: np.ndarray) -> np.ndarray:
        """``log x`` of shape ``(n_variables, n_rhs)`` at each ``log`` right-hand side."""
        p, q = self.affine(sense)
        return p[:, None] + q[:, None] * np.asarray(log_rhs, dtype=np.float64)[None, :]

    def affine(self, sense: Sense) -> tuple[np.ndarray, np.ndarray]:
        """``(p, q)`` with ``log x = p + q * log rhs``: every closed form is affine in logs.

        The formulas of the module docstring, solved for ``log x``: for power laws
        ``log x_i = (log w_i - log lam) / alpha_i`` with ``log lam = (r . log w +
        log k - log B) / sum r`` (budget) or ``log T - log sum r`` (target);
        Cobb-Douglas ``log x_j = log B + log(s_j / c_j)``; nested ``log n_i = log B +
        h_i - log total`` (budget) or ``h_i + log total - log T`` (target), then
        ``log v_0 = log n_0`` and ``log v_j = log n_j - log n_(j-1)``.
        """
        if self.kind == "power-laws/monomial-cost":
            var, alpha, r, log_w, log_k = self._data
            big_r = float(r.sum())
            p, q = np.empty(len(var)), np.empty(len(var))
            if sense.minimises_loss:
                p[var] = (log_w - (float(r @ log_w) + log_k) / big_r) / alpha
                q[var] = 1.0 / (big_r * alpha)
            else:
                p[var] = (log_w + math.log(big_r)) / alpha
                q[var] = -1.0 / alpha
            return p, q
        if self.kind == "cobb-douglas":
            alpha, lsp, log_a = self._data
            if sense.minimises_loss:
                return lsp.copy(), np.ones_like(lsp)
            total = float(alpha.sum())
            return lsp + (log_a - float(alpha @ lsp)) / total, np.full_like(lsp, -1.0 / total)
        order, half, log_total = self._data  # nested
        if sense.minimises_loss:
            pn, qn = half - log_total, np.ones_like(half)
        else:
            pn, qn = half + log_total, -np.ones_like(half)
        p, q = np.empty_like(pn), np.empty_like(qn)
        p[order[0]], q[order[0]] = pn[0], qn[0]
        p[order[1:]], q[order[1:]] = pn[1:] - pn[:-1], qn[1:] - qn[:-1]
        return p, q


def closed_form(objective: Any, cost: Any, variables: list[str]) -> ClosedForm | None:
    """The closed form of ``min objective s.t. cost <= B`` (and its dual), or None.

    ``objective`` and ``cost`` are :class:`~rlscale.theory.Posynomial` over
    ``variables`` (the reducible loss, and the cost).
    """
    idx = {v: i for i, v in enumerate(variables)}
    n = len(variables)
    obj = [(m.coefficient, dict(m.exponents)) for m in objective.terms]
    cst = [(m.coefficient, dict(m.exponents)) for m in cost.terms]
    if any(not e for _, e in cst) or any(not e for _, e in obj):
        return None  # a constant term (fixed cost or constant loss): no closed form here
    return (_power_laws(obj, cst, idx, n) or _cobb_douglas(obj, cst, idx, n)
            or _nested(obj, cst, idx, n))


def _power_laws(obj: list, cst: list, idx: dict, n: int) -> ClosedForm | None:
    if len(cst) != 1 or len(obj) != n:
        return None
    k, gam = cst[0]
    if len(gam) != n or any(g <= 0 for g in gam.values()):
        return None
    var, alpha, log_w, r = [], [], [], []
    for a, e in obj:
        if len(e) != 1:
            return None
        (v, x), = e.items()
        if x >= 0:
            return None
        var.append(idx[v])
        alpha.append(-x)
        log_w.append(math.log(a) + math.log(-x) - math.log(gam[v]))
        r.append(gam[v] / -x)
    if len(set(var)) != n:
        return None
    return ClosedForm("power-laws/monomial-cost", (), (
        np.array(var), np.array(alpha), np.array(r), np.array(log_w), math.log(k)))


def _cobb_douglas(obj: list, cst: list, idx: dict, n: int) -> ClosedForm | None:
    if len(obj) != 1 or len(cst) != n:
        return None
    a, exps = obj[0]
    if len(exps) != n or any(x >= 0 for x in exps.values()):
        return None
    price = np.zeros(n)
    for c, e in cst:
        if len(e) != 1 or next(iter(e.values())) != 1:
            return None
        price[idx[next(iter(e))]] = c
    if np.any(price == 0):
        return None
    alpha = np.array([-exps[v] for v in sorted(idx, key=idx.get)])
    # log(s_j / c_j) with s_j = alpha_j / sum(alpha): the log of x_j per unit budget.
    log_share_price = np.log(alpha) - math.log(alpha.sum()) - np.log(price)
    return ClosedForm("cobb-douglas", (), (alpha, log_share_price, math.log(a)))


def _nested(obj: list, cst: list, idx: dict, n: int) -> ClosedForm | None:
    if len(obj) != n or len(cst) != n:
        return None
    levels: list[list] = [[None, None, None] for _ in range(n)]  # [vars, s, c]
    for col, terms, sign in ((1, obj, -1.0), (2, cst, 1.0)):
        for coef, e in terms:
            if any(x != sign for x in e.values()) or levels[len(e) - 1][col] is not None:
                return None
            keys = frozenset(e)
            if levels[len(e) - 1][0] not in (None, keys):
                return None
            levels[len(e) - 1][0] = keys
            levels[len(e) - 1][col] = coef
    order, seen = [], frozenset()
    for keys, _, _ in levels:
        if keys is None or not seen < keys:
            return None
        (new,) = keys - seen
        order.append(idx[new])
        seen = keys
    # Pool adjacent violators on log sqrt(s/c); blocks are [levels, S, C].
    blocks: list[list] = []
    for i, (_, s, c) in enumerate(levels):
        blocks.append([[i], s, c])
        while len(blocks) > 1 and (math.log(blocks[-2][1]) - math.log(blocks[-2][2])
                                   > math.log(blocks[-1][1]) - math.log(blocks[-1][2])):
            last = blocks.pop()
            blocks[-1] = [blocks[-1][0] + last[0], blocks[-1][1] + last[1],
                          blocks[-1][2] + last[2]]
    if not all(math.isfinite(b[1]) and math.isfinite(b[2]) for b in blocks):
        return None
    halves = [0.5 * (math.log(s) + math.log(c)) for _, s, c in blocks]
    top = max(halves)
    log_total = top + math.log(math.fsum(math.exp(h - top) for h in halves))
    half = np.empty(n)
    for lv, s, c in blocks:
        half[lv] = 0.5 * (math.log(s) - math.log(c))
    pooled = tuple(order[i] for lv, _, _ in blocks for i in lv[1:])
    return ClosedForm("nested", pooled, (np.array(order), half, log_total))


def closed_logs(state: Any, sense: Sense, bounds: np.ndarray, method: str
                ) -> np.ndarray | None:
    """Closed-form ``log x`` (variables x bounds), NaN columns where the bounds cut it off.

    ``log x`` is clipped onto the box where it lies outside by at most 1e-12 (rounding).
    None when the problem has no closed form or ``method`` asks for a solver.
    Raises ValueError for ``method="closed_form"`` when there is none, when it
    leaves the bounds, or when the optimum leaves the float range.
    """
    if method not in ("auto", "closed_form"):
        return None
    cf = state.closed_form
    if cf is None:
        if method == "closed_form":
            raise ValueError(
                "method='closed_form' needs power laws under a single-monomial cost, a "
                "single-monomial law under a linear cost (Cobb-Douglas) or nested variance "
                "components, without synthetic data; this problem has none: use "
                "method='auto'")
        return None
    rhs = bounds if sense.minimises_loss else bounds - state.floor
    logx = cf.log_values(sense, np.log(rhs))
    low, high = _LOG_RANGE
    if np.any(logx > high) or np.any(logx < low):
        j = int(np.flatnonzero((logx > high).any(0) | (logx < low).any(0))[0])
        raise ValueError(f"the optimum at {sense.what} {bounds[j]:g} leaves the float range "
                         f"(a variable would be e^{float(np.max(np.abs(logx[:, j]))):.4g} "
                         f"or its reciprocal); use a {sense.what} nearer the law's scale")
    tol = 1e-12
    log_lo, log_hi = (side[:, None] for side in state.log_box)
    inside = np.all((logx >= log_lo - tol) & (logx <= log_hi + tol), axis=0)
    if method == "closed_form" and not inside.all():
        j = int(np.flatnonzero(~inside)[0])
        raise ValueError(f"method='closed_form': at {sense.what} {bounds[j]:g} the closed "
                         f"form ({cf.kind}) leaves the bounds {dict(state.bounds)}; use "
                         "method='auto' to solve the bounded problem")
    u = np.clip(logx, log_lo, log_hi)
    u[:, ~inside] = np.nan
    return u


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
                if not (max(lo, _LOG_RANGE[0]) <= pi <= min(hi, _LOG_RANGE[1])):
                    return math.inf, -math.inf
                continue
            lo, hi = max(lo, _LOG_RANGE[0]) + 1e-9, min(hi, _LOG_RANGE[1]) - 1e-9
            if not lo < hi:  # a box narrower than the margins
                return math.inf, -math.inf
            a, b = (lo - pi) / qi, (hi - pi) / qi
            lo_l, hi_l = max(lo_l, min(a, b)), min(hi_l, max(a, b))
        if not lo_l < hi_l:
            return math.inf, -math.inf
        low = _exp_or_inf(lo_l)
        high = math.inf if hi_l >= _LOG_MAX else _exp_or_inf(hi_l)
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
