"""Whole runs from a design criterion: rounding, greedy filling and exchange, with costs.

A fractional design is not a set of runs.  :func:`round_design` turns one
into whole runs within the budget (Pukelsheim 2006, ch. 12, for rounding;
Fedorov 1972 and Cook & Nachtsheim 1980 for exchange; Krause & Golovin 2014
for greedy by gain per cost):

1. **keep** the runs the relaxation buys whole (``⌊w_i⌋``);
2. **identify** (V only): while the information of the observed and kept runs
   is rank-deficient, add the run with the largest D-gain per cost -- a
   V-optimal design for a few target points can leave parameters the target
   does not see unidentified, and a nonlinear fit then wanders;
3. **fill** greedily: add the run with the largest criterion gain per cost
   that still fits the budget, first among the relaxation's support, then
   among all candidates, until nothing fits;
4. **exchange**: for each run added in steps 2–3, try swapping it for the
   best affordable other run (gains from the downdated information) and
   dropping it and refilling greedily (a 1-for-k move, which a knapsack
   needs), and -- when neither helps and few runs are exchangeable -- dropping
   a pair and refilling; make the best move when it improves the criterion, repeat
   until a pass changes nothing (at most ``passes``).  The runs the
   relaxation buys whole are kept: the fractional ones are where rounding
   decides.

Exchange stops once a design meets the relaxation's bound (its
certificate): no move can gain more.  Without a relaxation (``weights=None``)
the starts are the greedy designs by gain per cost and by gain alone (the
better of the two has the knapsack guarantee for submodular criteria such as
log det: Leskovec et al. 2007, "Cost-effective outbreak detection"), every
run exchangeable.  With a relaxation the rounded relaxation is the start; the
greedy designs join it (swaps only) when a single law's rounding falls below
:data:`FALLBACK` of the bound.
Gains are exact whole-run changes of the criterion (matrix determinant lemma
and Woodbury, :mod:`rlscale.optimize._design_criteria`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlscale.optimize._design_criteria import Information

__all__ = ["Rounded", "round_design"]

#: Candidates considered for each exchange (the best by gain per cost).
EXCHANGE_CANDIDATES = 400
#: Exchangeable runs up to which the drop-and-refill move is tried as well.
REFILL_LIMIT = 200
#: Exchangeable runs up to which pairs are dropped and refilled (when no single move helps),
#: and the efficiency below which that is worth its cost.
PAIR_LIMIT = 24
PAIR_BELOW = 0.99
#: Efficiency of the rounded relaxation below which the greedy designs are tried as well.
FALLBACK = 0.95
#: Efficiency at which exchange stops (no move can gain more than this).
SETTLED = 1e-6


@dataclass(frozen=True)
class Rounded:
    """Whole runs per candidate, their utility and cost."""

    counts: np.ndarray
    value: float
    cost: float
    exchanges: int


def _rank_deficient(info: Information, counts: np.ndarray) -> bool:
    M = info.matrix(counts.astype(float)) - (info.M0 - info.fixed)
    eig = np.linalg.eigvalsh(M)
    return bool(np.any(eig[:, 0] <= 1e-9 * np.maximum(eig[:, -1], 1e-300)))


def _fill(info: Information, kind: str, counts: np.ndarray, cost: np.ndarray,
          cap: np.ndarray, budget: float, among: np.ndarray | None, until_full_rank=False,
          per_cost: bool = True) -> None:
    """Add runs greedily by gain per cost (or by gain) in place while one fits and gains."""
    M = info.matrix(counts.astype(float))
    spent = float(cost @ counts)
    pool = np.arange(info.n) if among is None else among
    while True:
        if until_full_rank and not _rank_deficient(info, counts):
            return
        ok = pool[(counts[pool] < cap[pool]) & (cost[pool] <= budget - spent + 1e-12 * budget)]
        if ok.size == 0:
            return
        g = info.gains(kind, M, ok)
        best = int(np.argmax(g / cost[ok] if per_cost else g))
        if not g[best] > 1e-12:
            return
        i = int(ok[best])
        counts[i] += 1
        spent += cost[i]
        M = M + info.F[:, i]


def efficiency(kind: str, value: float, bound: float | None, p: int) -> float:
    """What ``value`` achieves of the best possible (``bound``): D ``exp((v − b)/p)``,
    V ``b/v`` on the (negative) utilities; 0 without a bound."""
    if bound is None or not np.isfinite(bound):
        return 0.0
    if kind == "D":
        return float(np.exp(min(value - bound, 0.0) / p))
    return float(min(bound / value, 1.0)) if value < 0 else 1.0


def _exchange(info: Information, kind: str, counts: np.ndarray, cost: np.ndarray,
              cap: np.ndarray, budget: float, passes: int, keep: np.ndarray,
              bound: float | None = None, levels: int = 3) -> int:
    """Improve the runs beyond ``keep`` by exchange (in place); return the moves made.

    Moves, from cheap to costly, each kind tried only when the cheaper ones
    found nothing in a whole pass: swap a chosen run ``j`` for the best
    affordable other run; drop ``j`` and refill greedily (which may buy several
    cheaper runs in its place: a knapsack needs 1-for-k moves); drop a pair and
    refill.  A move is made when it improves the criterion.
    """
    moves = 0
    level = 0  # 0: swaps, 1: drop-and-refill, 2: pairs
    for _ in range(3 * passes):
        value = info.value(kind, counts.astype(float))
        eff = efficiency(kind, value, bound, info.p)
        free = np.flatnonzero(counts > keep)
        if eff >= 1.0 - SETTLED or free.size == 0:
            break  # nothing left to gain: the design meets the relaxation's bound
        if level == 1 and free.size > REFILL_LIMIT:
            break
        if level == 2 and (free.size > PAIR_LIMIT or eff >= PAIR_BELOW):
            break
        improved = False
        M = info.matrix(counts.astype(float))
        spent = float(cost @ counts)
        room = np.flatnonzero(counts < cap)
        if level == 0 and room.size > EXCHANGE_CANDIDATES:
            g = info.gains(kind, M, room) / cost[room]
            room = room[np.argsort(-g, kind="stable")[:EXCHANGE_CANDIDATES]]
        groups = ([(j,) for j in free] if level < 2 else
                  [(j, k) for i, j in enumerate(free) for k in free[i:]
                   if j != k or counts[j] - keep[j] >= 2])
        for group in groups:
            if any(counts[j] <= keep[j] for j in group):
                continue
            best_value, best_counts = value, None
            if level == 0:
                j = group[0]
                Mj = M - info.F[:, j]
                left = budget - (spent - cost[j])
                ok = room[(cost[room] <= left + 1e-12 * budget) & (room != j)
                          & (counts[room] < cap[room])]
                if ok.size:
                    g = info.gains(kind, Mj, ok)
                    b = int(np.argmax(g))
                    v = info.value_of(kind, Mj) + g[b]
                    if v > best_value + 1e-10 * max(1.0, abs(best_value)):
                        trial = counts.copy()
                        trial[j] -= 1
                        trial[ok[b]] += 1
                        best_value, best_counts = v, trial
            else:
                for per_cost in (True, False):
                    trial = counts.copy()
                    frozen = cap.copy()
                    for j in group:
                        trial[j] -= 1
                    frozen[list(group)] = trial[list(group)]  # dropped runs stay dropped
                    _fill(info, kind, trial, cost, frozen, budget, None, per_cost=per_cost)
                    v = info.value(kind, trial.astype(float))
                    if v > best_value + 1e-10 * max(1.0, abs(best_value)):
                        best_value, best_counts = v, trial
            if best_counts is not None:
                counts[:] = best_counts
                _fill(info, kind, counts, cost, cap, budget, None)
                moves += 1
                improved = True
                M = info.matrix(counts.astype(float))
                value = info.value_of(kind, M)
                spent = float(cost @ counts)
        level = 0 if improved else level + 1
        if level >= levels:
            break
    return moves


def _one(info, kind, cost, cap, budget, weights, passes, fixed_counts, per_cost=True,
         bound=None, levels=3) -> Rounded:
    counts = fixed_counts.copy()
    support = None
    if weights is not None:
        counts += np.minimum(np.floor(weights + 1e-9).astype(int), cap - counts)
        support = np.flatnonzero(weights > 1e-6 * np.maximum(cap, 1))
    # Runs the relaxation buys whole stay; only what rounding added is exchanged.
    keep = counts.copy() if weights is not None else fixed_counts.copy()
    if kind == "V" and _rank_deficient(info, counts):
        _fill(info, "D", counts, cost, cap, budget, None, until_full_rank=True)
    if support is not None and support.size:
        _fill(info, kind, counts, cost, cap, budget, support)
    _fill(info, kind, counts, cost, cap, budget, None, per_cost=per_cost)
    swaps = _exchange(info, kind, counts, cost, cap, budget, passes, keep, bound, levels) \
        if passes else 0
    return Rounded(counts, info.value(kind, counts.astype(float)), float(cost @ counts), swaps)


def round_design(info: Information, kind: str, cost: np.ndarray, cap: np.ndarray,
                 budget: float, weights: np.ndarray | None = None, *, passes: int = 5,
                 start: np.ndarray | None = None, bound: float | None = None) -> Rounded:
    """Whole runs within ``budget`` for criterion ``kind`` (see the module docstring).

    ``start`` holds runs that must stay in the design (counts per candidate);
    ``bound`` is the relaxation's bound on the criterion (its certificate),
    which ends the exchange once a design meets it.
    """
    fixed = np.zeros(info.n, dtype=int) if start is None else np.asarray(start, dtype=int)
    starts = [] if weights is None else [_one(info, kind, cost, cap, budget, weights, passes,
                                              fixed, bound=bound)]
    if weights is None:
        # Greedy by gain per cost and by gain alone: the better of the two carries the
        # knapsack guarantee of Leskovec et al. (2007) for submodular criteria.
        starts += [_one(info, kind, cost, cap, budget, None, passes, fixed, per_cost=pc,
                        bound=bound) for pc in (True, False)]
    elif info.S == 1 and efficiency(kind, starts[0].value, bound, info.p) < FALLBACK:
        # Rounding went badly: the greedy designs as a safety net (swaps only).
        starts += [_one(info, kind, cost, cap, budget, None, passes, fixed, per_cost=pc,
                        bound=bound, levels=1) for pc in (True, False)]
    return max(starts, key=lambda r: r.value)
