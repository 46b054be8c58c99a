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

A problem's closed form in one sense, reduced to numbers for calls of microseconds
(the fast path of ``allocate``, ``min_cost`` and ``frontier``), is
:class:`._alloc_closed_plan.ClosedPlan`.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.optimize._alloc_kkt import Sense

__all__ = ["KINDS", "LOG_MAX", "LOG_RANGE", "ClosedForm", "closed_form", "closed_logs"]

#: ``log x`` outside this range is refused (``exp`` would leave the float range).
LOG_RANGE = (-708.0, 709.0)
LOG_MAX = math.log(sys.float_info.max)  # the largest log of a finite float

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
    low, high = LOG_RANGE
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
