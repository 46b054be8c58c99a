"""Compute-optimal allocation: closed forms vs the chinchilla package, single solves vs SLSQP.

Rows (issue 13 goals 3-4, issue 26 item 2): one allocation, build + solve, against scipy SLSQP
**written from the law** (:func:`slsqp_from_law`: its own log-space objective, gradient,
budget constraint, bounds and start, from the law's numbers alone -- nothing of rlscale's
inside its timed call): the README's capped nested example (an additive law over the
totals allocated over ``E, t, k`` with ``E <= 500`` at budget ``1e6``: no closed form, so
``allocate`` runs Newton on the KKT equations and keeps it only with a KKT certificate
<= 1e-12, cvxpy otherwise), and a nested variance-components law (``method="auto"`` takes
its closed form, ``method="gp"`` the conic solve); the Chinchilla 2-axis allocation per
call and 100- and 10,000-budget frontiers per budget against the ``chinchilla`` PyPI
package's ``allocate_compute`` (closed form; install it with ``pip install chinchilla``
in the benchmark's environment only -- without it these rows print "peer not
installed"); ``chinchilla_optimal`` against the package; a sweep against a new problem
per budget (an ablation); and 1,000 random feasible instances, ours and SLSQP's KKT
residuals graded by the same check after the timing (ours computes its certificate
inside the timing, SLSQP has none).

A closed-form record defers its KKT certificate (and a frontier its loss, cost and residuals)
to first read, so the Chinchilla rows come twice: as called (values, loss, cost, shares; the
package returns N and D only) and with the certificate read as well.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from benchmarks._harness import Case
from rlscale.optimize import AllocationProblem, allocate
from rlscale.optimize._alloc_kkt import ALLOCATE
from rlscale.theory import AdditiveLaw, VarianceComponentsLaw, chinchilla_optimal

#: Besiroglu et al. (2024) replication of Hoffmann et al. (2022), approach 3.
CHIN = {"E": 1.8172, "A": 482.01, "B": 2085.43, "alpha": 0.3478, "beta": 0.3658}


@dataclass(frozen=True)
class Spec:
    """A three-axis allocation in numbers, as a peer reads it off the law's formula.

    ``loss = floor + sum_j coef_j * prod_i x_i**powers[j][i]`` and ``cost = sum_j
    price_j * prod_i x_i**cost_powers[j][i]`` over ``x = (E, t, k)``; ``lower`` and
    ``upper`` bound each variable (``None``: open).
    """

    floor: float
    coef: tuple[float, ...]
    powers: tuple[tuple[float, float, float], ...]
    price: tuple[float, ...]
    cost_powers: tuple[tuple[float, float, float], ...]
    lower: tuple[float | None, float | None, float | None]
    upper: tuple[float | None, float | None, float | None]


#: The nested cost ``c0*E + c1*E*t + c2*E*t*k``.
NESTED_POWERS = ((1.0, 0.0, 0.0), (1.0, 1.0, 0.0), (1.0, 1.0, 1.0))


def nested_cost(c: tuple[float, float, float]) -> str:
    return f"{c[0]!r}*E + {c[1]!r}*E*t + {c[2]!r}*E*t*k"


def variance_components(floor: float, s: tuple[float, float, float],
                        c: tuple[float, float, float]) -> Spec:
    """``floor + s_E/E + s_T/(E t) + s_tau/(E t k)`` with nesting ``t, k >= 1``."""
    return Spec(floor, s, ((-1.0, 0.0, 0.0), (-1.0, -1.0, 0.0), (-1.0, -1.0, -1.0)), c,
                NESTED_POWERS, (None, 1.0, 1.0), (None, None, None))


def additive(floor: float, a: tuple[float, float, float], alpha: tuple[float, float, float],
             c: tuple[float, float, float], e_cap: float) -> Spec:
    """``floor + sum_i a_i x_i**-alpha_i`` over ``(E, t, k)`` with ``1 <= E <= e_cap``."""
    return Spec(floor, a, ((-alpha[0], 0.0, 0.0), (0.0, -alpha[1], 0.0), (0.0, 0.0, -alpha[2])),
                c, NESTED_POWERS, (1.0, None, None), (e_cap, None, None))


def totals(floor: float, a: tuple[float, float, float], alpha: tuple[float, float, float],
           c: tuple[float, float, float], e_cap: float) -> Spec:
    """An additive law over the totals ``E``, ``E t``, ``E t k`` (the README's example),
    with ``1 <= E <= e_cap`` and ``t, k >= 1``."""
    return Spec(floor, a, ((-alpha[0], 0.0, 0.0), (-alpha[1], -alpha[1], 0.0),
                           (-alpha[2], -alpha[2], -alpha[2])), c, NESTED_POWERS,
                (1.0, 1.0, 1.0), (e_cap, None, None))


def slsqp_from_law(spec: Spec, budget: float) -> np.ndarray:
    """The peer: scipy SLSQP on the allocation, written from the law.

    Variables ``u = log x``; the reducible loss ``sum_j coef_j exp(P_j u)`` and its
    gradient; the budget as ``1 - cost(u)/B >= 0`` with its gradient; bounds in
    logs.  Start: every variable at ``x = s`` (inside its bounds) with ``s`` the
    largest that keeps every cost term within a third of the budget, so the start
    is feasible.  Returns ``x``.
    """
    from scipy.optimize import minimize

    P, logc = np.array(spec.powers), np.log(spec.coef)
    Q, logp = np.array(spec.cost_powers), np.log(spec.price)

    def loss(u: np.ndarray) -> tuple[float, np.ndarray]:
        terms = np.exp(P @ u + logc)
        return float(terms.sum()), terms @ P

    def slack(u: np.ndarray) -> float:
        return 1.0 - float(np.exp(Q @ u + logp).sum()) / budget

    def slack_grad(u: np.ndarray) -> np.ndarray:
        return -(np.exp(Q @ u + logp) @ Q) / budget

    bounds = [(None if lo is None else math.log(lo), None if hi is None else math.log(hi))
              for lo, hi in zip(spec.lower, spec.upper)]
    degree = Q.sum(axis=1)
    s = min((math.log(budget / 3) - lp) / dg for lp, dg in zip(logp, degree))
    u0 = np.array([min(max(s, -1e300 if lo is None else lo), 1e300 if hi is None else hi)
                   for lo, hi in bounds])
    with np.errstate(over="ignore"):  # a trial step far out overflows to inf: SLSQP backs off
        res = minimize(loss, u0, jac=True, method="SLSQP", bounds=bounds,
                       constraints=[{"type": "ineq", "fun": slack, "jac": slack_grad}],
                       options={"maxiter": 500, "ftol": 1e-12})
    return np.exp(res.x)


# -- our side of each instance: the same law built with rlscale ---------------------------

README_SPEC = totals(0.15, (2.0, 1.5, 1.2), (0.45, 0.3, 0.2), (100.0, 10.0, 1.0), 500.0)
README_LAW = AdditiveLaw(0.15, {"environments": 2.0, "tasks": 1.5, "trajectories": 1.2},
                         {"environments": 0.45, "tasks": 0.3, "trajectories": 0.2})
README_NESTED = {"environments": "E", "tasks": "E*t", "trajectories": "E*t*k"}
README_BOUNDS = {"E": (1, 500), "t": (1, None), "k": (1, None)}
README_COST = "100*E + 10*E*t + E*t*k"
VC_SPEC = variance_components(0.1, (4.0, 1.0, 0.25), (100.0, 10.0, 1.0))
NESTED = VarianceComponentsLaw(0.1, 4.0, 1.0, 0.25)
NESTED_COST = "100*E + 10*E*t + E*t*k"


def problem_of(spec: Spec) -> AllocationProblem:
    """Our problem for a spec made by :func:`variance_components` or :func:`additive`."""
    cost = nested_cost(spec.price)
    if spec.powers[0] == (-1.0, 0.0, 0.0) and spec.powers[2] == (-1.0, -1.0, -1.0):
        return AllocationProblem(VarianceComponentsLaw(spec.floor, *spec.coef), cost)
    law = AdditiveLaw(spec.floor, dict(zip("Etk", spec.coef)),
                      dict(zip("Etk", (-spec.powers[0][0], -spec.powers[1][1],
                                       -spec.powers[2][2]))))
    return AllocationProblem(law, cost, {"E": (1, spec.upper[0])})


def instances(n: int, seed: int = 0) -> list[tuple[AllocationProblem, float]]:
    """Random feasible 3-axis problems: nested variance components or additive laws.

    Even instances are nested variance-components laws without extra bounds (the
    closed form applies); odd ones additive laws over the same nested cost with a cap
    on ``E`` (the GP).
    """
    return [(problem_of(spec), b) for spec, b in random_specs(n, seed)]


def random_specs(n: int, seed: int = 0) -> list[tuple[Spec, float]]:
    """The specs of :func:`instances` with their budgets."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        c = tuple(float(v) for v in np.exp(rng.uniform(-2, 6, 3)))
        if i % 2 == 0:
            s = tuple(float(v) for v in np.exp(rng.uniform(-3, 3, 3)))
            spec = variance_components(float(rng.uniform(0, 1)), s, c)
        else:
            floor = float(rng.uniform(0, 1))
            a = tuple(float(v) for v in np.exp(rng.uniform(-2, 4, 3)))
            alpha = tuple(float(v) for v in rng.uniform(0.1, 1.2, 3))
            spec = additive(floor, a, alpha, c, float(np.exp(rng.uniform(2, 8))))
        budget = max(_cheapest(spec), 1.0) * float(np.exp(rng.uniform(1, 12)))
        out.append((spec, budget))
    return out


def _cheapest(spec: Spec) -> float:
    """Cost of the smallest allocation the bounds allow (open lower bounds: 0)."""
    lows = [0.0 if lo is None else lo for lo in spec.lower]
    return sum(p * math.prod(x ** q for x, q in zip(lows, qs))
               for p, qs in zip(spec.price, spec.cost_powers))


def _chinchilla_peer():
    try:
        from chinchilla import Chinchilla
    except ImportError:
        return None
    return Chinchilla.allocate_compute


def _agreement(ours: dict[str, object], peer: dict[str, object], spec: Spec,
               budget: float) -> dict[str, str]:
    """Same optimum? Relative gaps of the values and the loss, and both KKT residuals by
    the problem's own check (after the timing)."""
    a, x = ours["alloc"], peer["x"]
    gap = max(abs(a.values[v] / xi - 1) for v, xi in zip("Etk", x))
    peer_loss = spec.floor + sum(c * math.prod(xi ** e for xi, e in zip(x, pw))
                                 for c, pw in zip(spec.coef, spec.powers))
    prob = ours["problem"]
    peer_kkt = prob._kkt(ALLOCATE, budget, dict(zip("Etk", x)))[0]
    return {"optimum": f"values within {gap:.1e} relative, loss ours {a.loss:.15g} / peer "
                       f"{peer_loss:.15g}",
            "KKT residual (the problem's check)": f"ours {a.kkt_residual:.1e} ({a.solver}: "
                                                  f"{a.message.split(';')[0]}), peer "
                                                  f"{peer_kkt:.1e}"}


def _single(name: str, solve, spec: Spec, budget: float) -> Case:
    """One allocation, build + solve (ours with its certificate and rounding) vs SLSQP."""
    ours: dict[str, object] = {}
    peer: dict[str, object] = {}

    def run_ours() -> None:
        ours["alloc"], ours["problem"] = solve()

    def run_peer() -> None:
        peer["x"] = slsqp_from_law(spec, budget)

    return Case(name, run_ours, run_peer, "scipy SLSQP written from the law",
                extra=lambda: _agreement(ours, peer, spec, budget))


def cases(smoke: bool) -> list[Case]:
    n_budgets = 5 if smoke else 100
    calls = 5 if smoke else 200
    budgets = np.logspace(3, 8, n_budgets)
    swept = AllocationProblem(NESTED, NESTED_COST)
    swept.allocate(1e4, method="gp")  # compile once

    def readme():
        a = allocate(README_LAW, README_COST, 1e6, README_BOUNDS, substitute=README_NESTED)
        return a, AllocationProblem(README_LAW, README_COST, README_BOUNDS, README_NESTED)

    def nested(method: str):
        def run():
            prob = AllocationProblem(NESTED, NESTED_COST)
            return prob.allocate(1e5, method=method), prob
        return run

    def sweep():
        swept.sweep(budgets, method="gp")

    def rebuild():
        for b in budgets:
            AllocationProblem(NESTED, NESTED_COST).allocate(float(b), method="gp")

    # -- Chinchilla: the closed form against the package --------------------------------
    peer = _chinchilla_peer()
    missing = {"peer": "not installed (pip install chinchilla in this environment)"}
    chin_law = AdditiveLaw(CHIN["E"], {"N": CHIN["A"], "D": CHIN["B"]},
                           {"N": CHIN["alpha"], "D": CHIN["beta"]})
    chin = AllocationProblem(chin_law, "6*N*D")
    big = 50 if smoke else 10_000
    compute = np.logspace(18, 26, n_budgets)
    many = np.logspace(18, 26, big)
    big_calls = 2 if smoke else 20

    def chin_call():
        for _ in range(calls):
            chin.allocate(5.76e23, round_integers=False)

    def chin_call_certified():
        for _ in range(calls):
            chin.allocate(5.76e23, round_integers=False).kkt_residual  # noqa: B018

    def peer_call():
        for _ in range(calls):
            peer(5.76e23, CHIN)

    def frontier(budgets, times, certified=False):
        def run():
            for _ in range(times):
                f = chin.frontier(budgets)
                if certified:
                    f.kkt_residual  # noqa: B018
        return run

    def peer_frontier(budgets, times):
        def run():
            for _ in range(times):
                peer(budgets, CHIN)
        return run

    def ours_closed():
        for _ in range(calls):
            chinchilla_optimal(CHIN["A"], CHIN["B"], CHIN["alpha"], CHIN["beta"], 5.76e23)

    def agree():
        out = {}
        f = chin.frontier(compute)
        g = [chin.allocate(float(c), round_integers=False, method="gp") for c in compute[:5]]
        gap = max(abs(a.values["N"] / f.values["N"][i] - 1) for i, a in enumerate(g))
        out["frontier vs GP, worst relative gap (5 budgets)"] = f"{gap:.2e}"
        out["frontier worst KKT residual"] = f"{float(np.max(f.kkt_residual)):.2e}"
        if peer is not None:
            n, _ = peer(compute, CHIN)
            out["frontier vs package N, worst relative gap"] = \
                f"{float(np.max(np.abs(f.values['N'] / n - 1))):.2e}"
        return out

    def peer_row(name, ours, peer_fn, label, work, unit, extra=None):
        return Case(name, ours, peer_fn if peer else None, label, work=work, work_unit=unit,
                    extra=extra if peer else (lambda: missing))

    # -- robustness: random instances --------------------------------------------------
    n_inst = 20 if smoke else 1000
    inst = instances(n_inst)
    summary: dict[str, object] = {}

    def ours_all(method: str):
        def run():
            res = [p.allocate(b, round_integers=False, method=method) for p, b in inst]
            for a in res:  # the certificate inside the timing, as the peer's KKT check is
                a.kkt_residual  # noqa: B018
            summary[method] = res
        return run

    specs = random_specs(n_inst)

    def slsqp_all():
        summary["slsqp_x"] = [slsqp_from_law(spec, b) for spec, b in specs]

    def accuracy(method: str):
        def report():
            res = summary[method]
            r = np.array([a.kkt_residual for a in res])
            s = np.array([p._kkt(ALLOCATE, b, dict(zip("Etk", x)))[0]
                          for (p, b), x in zip(inst, summary["slsqp_x"])])
            return {f"ours ({method}): KKT <= 1e-12": f"{int(np.sum(r <= 1e-12))}/{r.size}",
                    f"ours ({method}): worst KKT residual": f"{np.max(r):.3e}",
                    f"ours ({method}): solvers used": {str(k): int(v) for k, v in zip(*np.unique(
                        [a.solver for a in res], return_counts=True))},
                    "slsqp: KKT <= 1e-12": f"{int(np.sum(s <= 1e-12))}/{s.size}",
                    "slsqp: KKT <= 1e-6": f"{int(np.sum(s <= 1e-6))}/{s.size}",
                    "slsqp: worst KKT residual": f"{np.max(s):.3e}"}
        return report

    return [
        _single("README capped nested 3-axis, allocate()", readme, README_SPEC, 1e6),
        _single("nested variance components (auto)", nested("auto"), VC_SPEC, 1e5),
        _single("nested variance components (gp)", nested("gp"), VC_SPEC, 1e5),
        peer_row("chinchilla allocation per call", chin_call, peer_call,
                 "chinchilla package allocate_compute", calls, "calls"),
        peer_row("chinchilla allocation, certificate read", chin_call_certified, peer_call,
                 "chinchilla package allocate_compute", calls, "calls"),
        peer_row(f"chinchilla {n_budgets}-budget frontier", frontier(compute, calls),
                 peer_frontier(compute, calls), "chinchilla package allocate_compute, vectorised",
                 calls * n_budgets, "budgets", agree),
        peer_row(f"chinchilla {n_budgets}-budget frontier, certificate read",
                 frontier(compute, calls, certified=True), peer_frontier(compute, calls),
                 "chinchilla package allocate_compute, vectorised", calls * n_budgets,
                 "budgets"),
        peer_row(f"chinchilla {big}-budget frontier", frontier(many, big_calls),
                 peer_frontier(many, big_calls), "chinchilla package allocate_compute, "
                 "vectorised", big_calls * big, "budgets"),
        peer_row("chinchilla_optimal closed form", ours_closed,
                 (lambda: [peer(5.76e23, CHIN) for _ in range(calls)]) if peer else None,
                 "chinchilla package allocate_compute", calls, "calls"),
        Case(f"nested sweep, {n_budgets} budgets (gp, DPP)", sweep, rebuild,
             "ours, a new problem (cvxpy rebuilt) for each budget", work=n_budgets,
             work_unit="budgets", independent=False),
        Case(f"{n_inst} random feasible instances (auto)", ours_all("auto"), slsqp_all,
             "scipy SLSQP written from the law (graded by the same KKT check)",
             work=n_inst, work_unit="instances", extra=accuracy("auto"), repeats=1),
        Case(f"{n_inst} random feasible instances (gp)", ours_all("gp"), slsqp_all,
             "scipy SLSQP written from the law (graded by the same KKT check)",
             work=n_inst, work_unit="instances", extra=accuracy("gp"), repeats=1),
    ]
