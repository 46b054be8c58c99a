"""Inference-budget plans: greedy integer plan, adaptive DP and cvxpy relaxation vs naive peers.

Budgets of issue 14: the exact integer plan for T = 20 turns and B = 10,000
samples in ≤ 50 ms; the adaptive DP for T = 10, B = 1,000 in ≤ 1 s.  The peers
are written from the coverage law ``p(n) = 1 − (1 − q)^n`` of each turn (the
turns' ``q`` read off once, outside the timing), never from rlscale's ``Turn``.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from benchmarks._harness import Case
from rlscale.optimize import adaptive_plan, continuous_plan, integer_plan
from rlscale.theory import Turn


def _turns(T: int, seed: int, noisy: bool) -> list[Turn]:
    gen = np.random.default_rng(seed)
    q = gen.uniform(0.001, 0.5, T)
    if noisy:
        return [Turn.with_verifier(float(v), fpr=0.1, fnr=0.2) for v in q]
    return [Turn.with_coverage(float(v)) for v in q]


def _log_p(q: float, n: float) -> float:
    """log p(n) of a coverage turn, ``log(1 − (1 − q)^n)``, without cancellation."""
    return math.log(-math.expm1(n * math.log1p(-q)))


def _heap_greedy(qs: list[float], B: int) -> tuple[int, ...]:
    """Textbook greedy: one unit at a time to the largest marginal gain (heap of T)."""
    n = [1] * len(qs)
    heap = [(-(_log_p(q, 2) - _log_p(q, 1)), i) for i, q in enumerate(qs)]
    heapq.heapify(heap)
    for _ in range(B - len(qs)):
        _, i = heapq.heappop(heap)
        n[i] += 1
        gain = _log_p(qs[i], n[i] + 1) - _log_p(qs[i], n[i])
        heapq.heappush(heap, (-gain, i))
    return tuple(n)


def _python_dp(qs: list[float], B: int) -> float:
    """Adaptive value by plain Python loops over (turn, budget, draws) (coverage turns)."""
    nxt = [1.0] * (B + 1)
    for q in reversed(qs):
        p = [-math.expm1(k * math.log1p(-q)) for k in range(B + 1)]
        cur = [0.0] * (B + 1)
        for b in range(B + 1):
            cur[b] = sum((p[k] - p[k - 1]) * nxt[b - k] for k in range(1, b + 1))
        nxt = cur
    return nxt[B]


def _slsqp(qs: list[float], B: int) -> float:
    from scipy.optimize import minimize

    T = len(qs)
    L = -np.log1p(-np.array(qs))

    def obj(n):
        w = np.exp(-L * n)
        return -np.sum(np.log1p(-w)), -(L * w / (1 - w))

    res = minimize(obj, np.full(T, B / T), jac=True, method="SLSQP",
                   bounds=[(1, None)] * T,
                   constraints=[{"type": "ineq", "fun": lambda n: B - n.sum(),
                                 "jac": lambda n: -np.ones(T)}],
                   options={"maxiter": 500, "ftol": 1e-12})
    return float(-res.fun)


def cases(smoke: bool) -> list[Case]:
    T, B = (5, 300) if smoke else (20, 10_000)
    Td, Bd = (4, 60) if smoke else (10, 1_000)
    turns = _turns(T, 0, noisy=False)
    noisy = _turns(Td, 1, noisy=True)
    cover = _turns(Td, 2, noisy=False)
    qs, q_cover = [t.q for t in turns], [t.q for t in cover]  # the peers' input: numbers
    got: dict[str, object] = {}

    def greedy():
        got["ours"] = integer_plan(turns, B)

    def heap():
        got["heap"] = _heap_greedy(qs, B)

    def same():
        ours = got["ours"]
        peer = sum(_log_p(q, k) for q, k in zip(qs, got["heap"]))
        return {"log-success ours - heap greedy": f"{ours.log_success - peer:.3e}"}

    def dp_cover():
        got["dp"] = adaptive_plan(cover, Bd).success

    def dp_python():
        got["dp_py"] = _python_dp(q_cover, Bd)

    def dp_same():
        return {"success ours - python": f"{got['dp'] - got['dp_py']:.3e}"}

    def cvx():
        got["cvx"] = continuous_plan(turns, B).log_success

    def slsqp():
        got["slsqp"] = _slsqp(qs, B)

    def cvx_same():
        return {"log-success cvxpy - SLSQP": f"{got['cvx'] - got['slsqp']:.3e}"}

    return [
        Case(f"integer plan T={T}, B={B}", greedy, heap,
             "pure-Python heap greedy, one unit at a time", extra=same),
        Case(f"adaptive DP (coverage) T={Td}, B={Bd}", dp_cover, dp_python,
             "pure-Python Bellman loops over (turn, budget, draws)", extra=dp_same, repeats=3),
        Case(f"adaptive DP (noisy verifier) T={Td}, B={Bd}",
             lambda: adaptive_plan(noisy, Bd), None, ""),
        Case(f"continuous plan T={T}, B={B}", cvx, slsqp, "scipy SLSQP on the same relaxation",
             extra=cvx_same),
    ]
