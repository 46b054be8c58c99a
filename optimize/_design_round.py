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

Without a relaxation (``weights=None``) the starts are the greedy designs by
gain per cost and by gain alone (the better of the two has the knapsack
guarantee for submodular criteria such as log det: Leskovec et al. 2007,
"Cost-effective outbreak detection"), every run exchangeable.  With a
relaxation and a single law these run too and the best design is kept; with
an ensemble (``S`` times the work per gain) only the relaxation's start.
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
#: Exchangeable runs up to which pairs are dropped and refilled (when no single move helps).
PAIR_LIMIT = 24


@dataclass(frozen=True)
class Rounded:
    """Whole runs per candidate, their utility and cost."""

    counts: np.ndarray
    value: float
    cost: float
    exchanges: int


def _rank_deficient(info: Information, counts: np.ndarray) -> bool:
    M = info.fixed + np.einsum("n,snpq->spq", counts.astype(float), info.F)
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


def _exchange(info: Information, kind: str, counts: np.ndarray, cost: np.ndarray,
              cap: np.ndarray, budget: float, passes: int, keep: np.ndarray) -> int:
    """Improve the runs beyond ``keep`` by exchange (in place); return the moves made.

    Two moves per chosen run ``j``: swap it for the best affordable other run,
    or drop it and refill greedily (which may buy several cheaper runs in its
    place: a knapsack needs 1-for-k moves).  The better move is made when it
    improves the criterion.
    """
    moves = 0
    for _ in range(passes):
        improved = False
        value = info.value(kind, counts.astype(float))
        spent = float(cost @ counts)
        free = np.flatnonzero(counts > keep)
        refill = free.size <= REFILL_LIMIT
        pairs = free.size <= PAIR_LIMIT
        M = info.matrix(counts.astype(float))
        room = np.flatnonzero(counts < cap)
        if room.size > EXCHANGE_CANDIDATES:
            g = info.gains(kind, M, room) / cost[room]
            room = room[np.argsort(-g, kind="stable")[:EXCHANGE_CANDIDATES]]
        for j in free:
            if counts[j] <= keep[j]:
                continue
            Mj = M - info.F[:, j]
            left = budget - (spent - cost[j])
            best_value, best_counts = value, None
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
            for per_cost in (True, False) if refill else ():
                trial = counts.copy()
                trial[j] -= 1
                frozen = cap.copy()
                frozen[j] = trial[j]  # the dropped run stays dropped in this move
                _fill(info, kind, trial, cost, frozen, budget, None, per_cost=per_cost)
                v = info.value(kind, trial.astype(float))
                if v > best_value + 1e-10 * max(1.0, abs(best_value)):
                    best_value, best_counts = v, trial
            if pairs and best_counts is None:
                for k in free[free > j]:
                    if counts[k] <= keep[k]:
                        continue
                    for per_cost in (True, False):
                        trial = counts.copy()
                        trial[j] -= 1
                        trial[k] -= 1
                        frozen = cap.copy()
                        frozen[[j, k]] = trial[[j, k]]
                        _fill(info, kind, trial, cost, frozen, budget, None,
                              per_cost=per_cost)
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
        if not improved:
            break
    return moves


def _one(info, kind, cost, cap, budget, weights, passes, fixed_counts, per_cost=True
         ) -> Rounded:
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
    swaps = _exchange(info, kind, counts, cost, cap, budget, passes, keep) if passes else 0
    return Rounded(counts, info.value(kind, counts.astype(float)), float(cost @ counts), swaps)


def round_design(info: Information, kind: str, cost: np.ndarray, cap: np.ndarray,
                 budget: float, weights: np.ndarray | None = None, *, passes: int = 5,
                 start: np.ndarray | None = None) -> Rounded:
    """Whole runs within ``budget`` for criterion ``kind`` (see the module docstring).

    ``start`` holds runs that must stay in the design (counts per candidate).
    """
    fixed = np.zeros(info.n, dtype=int) if start is None else np.asarray(start, dtype=int)
    starts = [] if weights is None else [_one(info, kind, cost, cap, budget, weights, passes,
                                              fixed)]
    if weights is None or info.S == 1:
        # Greedy by gain per cost and by gain alone: the better of the two carries the
        # knapsack guarantee of Leskovec et al. (2007) for submodular criteria.
        starts += [_one(info, kind, cost, cap, budget, None, passes, fixed, per_cost=pc)
                   for pc in (True, False)]
    return max(starts, key=lambda r: r.value)
