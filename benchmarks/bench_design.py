"""Pilot design: one design step on a 3,000-candidate pool with a 7-parameter law.

Issue 23's goal: one design step (relaxation, certificate and rounding) on a
3,000-candidate pool with a 7-parameter law in at most 1 s on 2 cores.  The
law is the report's three-axis additive law ``L = 0.26 + 0.5 E^-0.3 + 0.35
t^-0.3 + 0.2 k^-0.5`` (7 parameters), the cost the report's ``20E + 2Et +
0.1Etk``, the candidates log-uniform over ``E ∈ [1, 256]``, ``t ∈ [1, 64]``,
``k ∈ [2, 128]``, the budget 5 % of the pool's cost, the target the
compute-optimal plan at 30x the budget.

Peers, written from the problem (their own sensitivities, criteria and solver):

``d-optimal``
    greedy by log-det gain per cost (``log(1 + j M⁻¹ jᵀ)/c``, the matrix
    determinant lemma), from an empty design (a 1e-9 ridge), the inverse
    information recomputed each step;
``v-optimal``
    greedy by reduction of the target variance per cost, the same way.

Both are the designs one would write without a relaxation; every candidate
runs at most once, as in ours.

``d-optimal, 30 params``
    A wide law: six domains (one loss each, every run measures all six), each
    ``E_d + A_d N^-a_d + B_d D^-b_d`` (30 parameters, ``MultiOutputModel``),
    cost ``6ND``, 3,000 candidates.  Peer: lazy greedy (Minoux 1978) by
    ``log det(I + J_i M⁻¹ J_iᵀ)/c_i`` -- valid because log det is submodular,
    so a candidate's gain can only fall -- with ``M⁻¹`` updated by Woodbury.

Each row prints both medians, the ratio (peer/ours) and the criterion each
reaches, computed here from the runs.  Ours is timed from the pool table to
the design (its sensitivities and the plan target included); the peers get
the sensitivities and the target gradient precomputed.
"""

from __future__ import annotations

import math
import os
import time

import numpy as np

from benchmarks._harness import Case
from rlscale.optimize import PlanTarget, design
from rlscale.theory import AdditiveLaw

COST = "20*E + 2*E*t + 0.1*E*t*k"
LAW = AdditiveLaw(0.26, {"E": 0.5, "t": 0.35, "k": 0.2}, {"E": 0.3, "t": 0.3, "k": 0.5})
AXES = ("E", "t", "k")


def pool(n: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"E": np.exp(rng.uniform(0, math.log(256), n)),
            "t": np.exp(rng.uniform(0, math.log(64), n)),
            "k": np.exp(rng.uniform(math.log(2), math.log(128), n))}


def cost_of(x: dict[str, np.ndarray]) -> np.ndarray:
    return 20 * x["E"] + 2 * x["E"] * x["t"] + 0.1 * x["E"] * x["t"] * x["k"]


def plain(law: AdditiveLaw) -> tuple[float, dict[str, float], dict[str, float]]:
    """The law's numbers as plain values (floor, coefficients, exponents): what a peer gets."""
    return float(law.floor), dict(law.coefficients), dict(law.exponents)


def sensitivities(x: dict[str, np.ndarray],
                  law: tuple[float, dict[str, float], dict[str, float]]) -> np.ndarray:
    """``∂ log L/∂(log floor, log a_i, α_i)`` of ``L = floor + Σ a_i x_i^-α_i`` (plain
    numbers), from its definition."""
    floor, coefficients, exponents = law
    terms = [coefficients[a] * np.asarray(x[a]) ** -exponents[a] for a in AXES]
    L = floor + sum(terms)
    cols = [floor / L] + [t / L for t in terms] + [-t / L * np.log(x[a])
                                                   for t, a in zip(terms, AXES)]
    return np.column_stack(cols)


def log_det(J: np.ndarray, counts: np.ndarray) -> float:
    return float(np.linalg.slogdet((J * counts[:, None]).T @ J)[1])


def target_variance(J: np.ndarray, counts: np.ndarray, g: np.ndarray) -> float:
    M = (J * counts[:, None]).T @ J
    return float(g @ np.linalg.solve(M, g))


def peer_d(J: np.ndarray, c: np.ndarray, budget: float) -> np.ndarray:
    n, p = J.shape
    counts = np.zeros(n, dtype=int)
    M = 1e-9 * np.eye(p)
    spent = 0.0
    while True:
        ok = np.flatnonzero((c <= budget - spent) & (counts == 0))
        if ok.size == 0:
            return counts
        q = np.einsum("ip,pq,iq->i", J[ok], np.linalg.inv(M), J[ok])
        i = ok[np.argmax(np.log1p(q) / c[ok])]
        counts[i] = 1
        spent += c[i]
        M += np.outer(J[i], J[i])


def peer_v(J: np.ndarray, c: np.ndarray, budget: float, g: np.ndarray) -> np.ndarray:
    n, p = J.shape
    counts = np.zeros(n, dtype=int)
    M = 1e-9 * np.eye(p)
    spent = 0.0
    while True:
        ok = np.flatnonzero((c <= budget - spent) & (counts == 0))
        if ok.size == 0:
            return counts
        P = np.linalg.inv(M)
        z = J[ok] @ P
        gain = (z @ g) ** 2 / (1 + np.einsum("ip,ip->i", z, J[ok]))
        i = ok[np.argmax(gain / c[ok])]
        counts[i] = 1
        spent += c[i]
        M += np.outer(J[i], J[i])


def peer_v_robust(Js: list[np.ndarray], c: np.ndarray, budget: float,
                  gs: list[np.ndarray]) -> np.ndarray:
    """Greedy by the mean (over laws) target-variance reduction per cost."""
    n, p = Js[0].shape
    counts = np.zeros(n, dtype=int)
    Ms = [1e-9 * np.eye(p) for _ in Js]
    spent = 0.0
    while True:
        ok = np.flatnonzero((c <= budget - spent) & (counts == 0))
        if ok.size == 0:
            return counts
        gain = np.zeros(ok.size)
        for J, g, M in zip(Js, gs, Ms):
            z = J[ok] @ np.linalg.inv(M)
            gain += (z @ g) ** 2 / (1 + np.einsum("ip,ip->i", z, J[ok]))
        i = ok[np.argmax(gain / c[ok])]
        counts[i] = 1
        spent += c[i]
        for J, M in zip(Js, Ms):
            M += np.outer(J[i], J[i])


WIDE_DOMAINS = 6


def wide_truth() -> dict[str, float]:
    out: dict[str, float] = {}
    for k in range(WIDE_DOMAINS):
        out |= {f"E{k}": 1.5 + 0.1 * k, f"A{k}": 400.0 * (1 + 0.2 * k), f"a{k}": 0.3 + 0.02 * k,
                f"B{k}": 2000.0 * (1 + 0.1 * k), f"b{k}": 0.28 + 0.015 * k}
    return out


def wide_sensitivities(N: np.ndarray, D: np.ndarray, v: dict[str, float]) -> np.ndarray:
    """``∂ log L_d/∂(log E, log A, log a, log B, log b)`` of each domain, block-diagonal in
    the parameters: shape ``(n, 6, 30)``, columns domain by domain."""
    n = N.size
    J = np.zeros((n, WIDE_DOMAINS, 5 * WIDE_DOMAINS))
    for k in range(WIDE_DOMAINS):
        tn, td = v[f"A{k}"] * N ** -v[f"a{k}"], v[f"B{k}"] * D ** -v[f"b{k}"]
        L = v[f"E{k}"] + tn + td
        J[:, k, 5 * k:5 * k + 5] = np.column_stack(
            [v[f"E{k}"] / L, tn / L, -tn * np.log(N) * v[f"a{k}"] / L, td / L,
             -td * np.log(D) * v[f"b{k}"] / L])
    return J


def lazy_greedy_d(J: np.ndarray, c: np.ndarray, budget: float) -> np.ndarray:
    import heapq

    n, m, p = J.shape
    P = np.eye(p) / 1e-9
    eye = np.eye(m)

    def gain(i: int) -> float:
        return float(np.linalg.slogdet(eye + J[i] @ P @ J[i].T)[1]) / c[i]

    heap = [(-gain(i), i) for i in range(n)]
    heapq.heapify(heap)
    counts = np.zeros(n, dtype=int)
    left = budget
    while heap:
        _, i = heapq.heappop(heap)
        if c[i] > left:
            continue
        g = gain(i)
        if heap and g < -heap[0][0]:
            heapq.heappush(heap, (-g, i))  # stale: re-rank with its current gain
            continue
        counts[i] = 1
        left -= c[i]
        Z = P @ J[i].T
        P = P - Z @ np.linalg.solve(eye + J[i] @ Z, Z.T)
        P = (P + P.T) / 2
    return counts


def cases(smoke: bool) -> list[Case]:
    n = 300 if smoke else 3000
    x = pool(n)
    c = cost_of(x)
    budget = 0.05 * float(c.sum())
    target = PlanTarget(30 * budget)
    J = sensitivities(x, plain(LAW))
    plan = design(LAW, x, budget, target, cost=COST, method="v-optimal").target.points
    g = sensitivities(plan, plain(LAW))[0]
    got: dict[str, object] = {}

    cpu: dict[str, list[float]] = {"d": [], "v": []}

    def ours_d():
        t0 = time.process_time()
        got["d"] = design(LAW, x, budget, cost=COST, method="d-optimal")
        cpu["d"].append(time.process_time() - t0)

    def peer_d_call():
        t0 = time.process_time()
        got["peer_d"] = peer_d(J, c, budget)
        cpu.setdefault('peer_d', []).append(time.process_time() - t0)

    def extra_d():
        ours = np.zeros(n)
        ours[got["d"].pool_rows] = 1
        p = J.shape[1]
        ld_o, ld_p = log_det(J, ours), log_det(J, got["peer_d"])
        return {"D criterion (log det)": f"ours {ld_o:.6f}, peer {ld_p:.6f}; D-efficiency of "
                                         f"the peer's runs against ours "
                                         f"{math.exp((ld_p - ld_o) / p):.4f}",
                "ours": got["d"].message,
                "CPU s (median), ours / peer": f"{np.median(cpu['d']):.3f} / "
                                               f"{np.median(cpu['peer_d']):.3f}",
                "load": f"{os.getloadavg()[0]:.2f}"}

    def ours_v():
        t0 = time.process_time()
        got["v"] = design(LAW, x, budget, target, cost=COST, method="v-optimal")
        cpu["v"].append(time.process_time() - t0)

    def peer_v_call():
        t0 = time.process_time()
        got["peer_v"] = peer_v(J, c, budget, g)
        cpu.setdefault('peer_v', []).append(time.process_time() - t0)

    def extra_v():
        ours = np.zeros(n)
        ours[got["v"].pool_rows] = 1
        vo, vp = target_variance(J, ours, g), target_variance(J, got["peer_v"], g)
        return {"target variance (units of noise²)": f"ours {vo:.6g}, greedy peer {vp:.6g} "
                                                     f"(peer/ours {vp / vo:.3f})",
                "ours": got["v"].message,
                "CPU s (median), ours / peer": f"{np.median(cpu['v']):.3f} / "
                                               f"{np.median(cpu['peer_v']):.3f}",
                "load": f"{os.getloadavg()[0]:.2f}"}

    # A robust step: the criterion averaged over 16 laws (exponents perturbed by 10 %, a
    # stand-in for bootstrap laws), against the same greedy averaged over those laws.
    rng = np.random.default_rng(1)
    laws = [AdditiveLaw(LAW.floor, LAW.coefficients,
                        {a: e * float(np.exp(0.1 * rng.standard_normal()))
                         for a, e in LAW.exponents.items()}) for _ in range(16)]
    cpu["b"] = []
    numbers = [plain(law) for law in [LAW, *laws]]  # the peer's laws: plain numbers

    def ours_b():
        t0 = time.process_time()
        got["b"] = design(LAW, x, budget, target, cost=COST, method="bayes-v", laws=laws)
        cpu["b"].append(time.process_time() - t0)

    def peer_b_call():
        Js = [sensitivities(x, law) for law in numbers]
        plans = got["b"].target.points if "b" in got else plan
        gs = [sensitivities(plans, law).mean(axis=0) for law in numbers]
        t0 = time.process_time()
        got["peer_b"] = peer_v_robust(Js, c, budget, gs)
        cpu.setdefault("peer_b", []).append(time.process_time() - t0)

    def extra_b():
        ours = np.zeros(n)
        ours[got["b"].pool_rows] = 1
        Js = [sensitivities(x, law) for law in numbers]
        pts = got["b"].target.points
        gs = [sensitivities(pts, law) for law in numbers]

        def mean_var(counts):
            return float(np.mean([np.mean([target_variance(J, counts, g) for g in G])
                                  for J, G in zip(Js, gs)]))

        vo, vp = mean_var(ours), mean_var(got["peer_b"])
        return {"mean target variance over the 17 laws": f"ours {vo:.6g}, peer {vp:.6g} "
                                                          f"(peer/ours {vp / vo:.3f})",
                "ours": got["b"].message,
                "CPU s (median), ours / peer": f"{np.median(cpu['b']):.3f} / "
                                               f"{np.median(cpu['peer_b']):.3f}",
                "load": f"{os.getloadavg()[0]:.2f}"}

    from rlscale.optimize import MultiOutputModel

    truth = wide_truth()
    ranges = dict.fromkeys(truth, (1e-3, 1e7))
    wide = MultiOutputModel({f"d{k}": f"E{k} + A{k}/N**a{k} + B{k}/D**b{k}"
                             for k in range(WIDE_DOMAINS)}, truth, axes=["N", "D"],
                            ranges=ranges)
    rng_w = np.random.default_rng(2)
    xw = {"N": np.exp(rng_w.uniform(math.log(1e6), math.log(1e9), n)),
          "D": np.exp(rng_w.uniform(math.log(1e8), math.log(1e11), n))}
    cw = 6 * xw["N"] * xw["D"]
    bw = 0.05 * float(cw.sum())
    Jw = wide_sensitivities(xw["N"], xw["D"], dict(truth))
    cpu["w"] = []

    def ours_w():
        t0 = time.process_time()
        got["w"] = design(wide, xw, bw, cost="6*N*D", method="d-optimal")
        cpu["w"].append(time.process_time() - t0)

    def peer_w_call():
        t0 = time.process_time()
        got["peer_w"] = lazy_greedy_d(Jw, cw, bw)
        cpu.setdefault("peer_w", []).append(time.process_time() - t0)

    def extra_w():
        ours = np.zeros(n)
        ours[got["w"].pool_rows] = 1

        def ld(counts):
            return float(np.linalg.slogdet(np.einsum("i,imp,imq->pq", counts, Jw, Jw))[1])

        lo, lp = ld(ours), ld(got["peer_w"].astype(float))
        return {"D criterion (log det, 30 params)": f"ours {lo:.6f}, peer {lp:.6f}; "
                                                    f"D-efficiency of the peer's runs against "
                                                    f"ours {math.exp((lp - lo) / 30):.4f}",
                "ours": got["w"].message,
                "CPU s (median), ours / peer": f"{np.median(cpu['w']):.3f} / "
                                               f"{np.median(cpu['peer_w']):.3f}",
                "load": f"{os.getloadavg()[0]:.2f}"}

    return [Case(f"d-optimal step, {n} candidates, 7 params", ours_d, peer_d_call,
                 "greedy by log-det gain per cost", extra=extra_d, repeats=3),
            Case(f"v-optimal step, {n} candidates, 7 params", ours_v, peer_v_call,
                 "greedy by target-variance reduction per cost", extra=extra_v, repeats=3),
            Case(f"bayes-v step, {n} candidates, 7 params, 17 laws", ours_b, peer_b_call,
                 "greedy by mean target-variance reduction per cost", extra=extra_b,
                 repeats=3),
            Case(f"d-optimal step, {n} candidates, 30 params (6 outputs)", ours_w, peer_w_call,
                 "lazy greedy by log-det gain per cost", extra=extra_w, repeats=3)]
