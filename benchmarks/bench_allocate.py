"""Compute-optimal allocation: closed forms vs the chinchilla package, single solves vs SLSQP.

Rows (issue 13 goals 3-4): nested 3-axis build+solve against scipy SLSQP (``method="auto"``,
which takes the nested closed form, and ``method="gp"``, cvxpy + polish); the Chinchilla
2-axis allocation per call and 100- and 10,000-budget frontiers per budget against the
``chinchilla`` PyPI package's ``allocate_compute`` (closed form; install it with ``pip install
chinchilla`` in the benchmark's environment only -- without it these rows print "peer not
installed"); ``chinchilla_optimal`` against the package; a DPP sweep against rebuilding; and
1,000 random feasible instances (KKT residual of every one, ours and SLSQP's, by the same
check).

A closed-form record defers its KKT certificate (and a frontier its loss, cost and residuals)
to first read, so the Chinchilla rows come twice: as called (values, loss, cost, shares; the
package returns N and D only) and with the certificate read as well.
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks._harness import Case
from rlscale.optimize import AllocationProblem
from rlscale.optimize._alloc_kkt import ALLOCATE
from rlscale.optimize._alloc_space import log_value_grad
from rlscale.theory import AdditiveLaw, VarianceComponentsLaw, chinchilla_optimal

NESTED = VarianceComponentsLaw(0.1, 4.0, 1.0, 0.25)
NESTED_COST = "100*E + 10*E*t + E*t*k"
#: Besiroglu et al. (2024) replication of Hoffmann et al. (2022), approach 3.
CHIN = {"E": 1.8172, "A": 482.01, "B": 2085.43, "alpha": 0.3478, "beta": 0.3658}


def _slsqp(prob: AllocationProblem, budget: float) -> dict[str, float]:
    """The same GP solved by scipy's SLSQP in log variables (the peer)."""
    from scipy.optimize import minimize

    names = prob.variables
    obj, cost = prob._matrix(prob.objective), prob._matrix(prob.cost)
    bounds = [(math.log(lo) if lo > 0 else None, math.log(hi) if math.isfinite(hi) else None)
              for lo, hi in (prob.bounds[v] for v in names)]
    # Start: all variables equal (within their bounds) with half the budget spent.
    lo_s, hi_s = -50.0, 50.0
    for _ in range(200):
        mid = (lo_s + hi_s) / 2
        u = np.array([min(max(mid, b[0] if b[0] is not None else -np.inf),
                          b[1] if b[1] is not None else np.inf) for b in bounds])
        if log_value_grad(*cost, u)[0] > math.log(budget / 2):
            hi_s = mid
        else:
            lo_s = mid
    log_b = math.log(budget)
    res = minimize(lambda u: log_value_grad(*obj, u)[:2], u, jac=True, method="SLSQP",
                   bounds=bounds,
                   constraints=[{"type": "ineq", "fun": lambda u: log_b - log_value_grad(
                       *cost, u)[0], "jac": lambda u: -log_value_grad(*cost, u)[1]}],
                   options={"maxiter": 500, "ftol": 1e-12})
    return {v: float(np.exp(x)) for v, x in zip(names, res.x)}


def instances(n: int, seed: int = 0) -> list[tuple[AllocationProblem, float]]:
    """Random feasible 3-axis problems: nested variance components or additive laws.

    Even instances are nested variance-components laws without extra bounds (the
    closed form applies); odd ones additive laws over the same nested cost with a cap
    on ``E`` (the GP).
    """
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        c = [float(v) for v in np.exp(rng.uniform(-2, 6, 3))]
        cost = f"{c[0]!r}*E + {c[1]!r}*E*t + {c[2]!r}*E*t*k"
        if i % 2 == 0:
            s = np.exp(rng.uniform(-3, 3, 3))
            law = VarianceComponentsLaw(rng.uniform(0, 1), *s)
            bounds = None
        else:
            law = AdditiveLaw(rng.uniform(0, 1), dict(zip("Etk", np.exp(rng.uniform(-2, 4, 3)))),
                              dict(zip("Etk", rng.uniform(0.1, 1.2, 3))))
            bounds = {"E": (1, float(np.exp(rng.uniform(2, 8))))}
        prob = AllocationProblem(law, cost, bounds)
        cheapest = prob.cheapest()[0]
        budget = max(cheapest, 1.0) * float(np.exp(rng.uniform(1, 12)))
        out.append((prob, budget))
    return out


def _chinchilla_peer():
    try:
        from chinchilla import Chinchilla
    except ImportError:
        return None
    return Chinchilla.allocate_compute


def cases(smoke: bool) -> list[Case]:
    n_budgets = 5 if smoke else 100
    calls = 5 if smoke else 200
    budgets = np.logspace(3, 8, n_budgets)
    swept = AllocationProblem(NESTED, NESTED_COST)
    swept.allocate(1e4, method="gp")  # compile once

    def build_and_solve():
        AllocationProblem(NESTED, NESTED_COST).allocate(1e5)

    def build_and_solve_gp():
        AllocationProblem(NESTED, NESTED_COST).allocate(1e5, method="gp")

    def slsqp_once():
        _slsqp(AllocationProblem(NESTED, NESTED_COST, {"t": (1, None), "k": (1, None)}), 1e5)

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

    def slsqp_all():
        summary["slsqp"] = [p._kkt(ALLOCATE, b, _slsqp(p, b))[0] for p, b in inst]

    def accuracy(method: str):
        def report():
            res = summary[method]
            r = np.array([a.kkt_residual for a in res])
            s = np.array(summary["slsqp"])
            return {f"ours ({method}): KKT <= 1e-12": f"{int(np.sum(r <= 1e-12))}/{r.size}",
                    f"ours ({method}): worst KKT residual": f"{np.max(r):.3e}",
                    f"ours ({method}): methods used": dict(zip(*np.unique(
                        [a.method for a in res], return_counts=True))),
                    "slsqp: KKT <= 1e-12": f"{int(np.sum(s <= 1e-12))}/{s.size}",
                    "slsqp: KKT <= 1e-6": f"{int(np.sum(s <= 1e-6))}/{s.size}",
                    "slsqp: worst KKT residual": f"{np.max(s):.3e}"}
        return report

    return [
        Case("nested 3-axis build+solve (auto)", build_and_solve, slsqp_once,
             "scipy SLSQP in log variables"),
        Case("nested 3-axis build+solve (gp)", build_and_solve_gp, slsqp_once,
             "scipy SLSQP in log variables"),
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
        Case(f"nested sweep, {n_budgets} budgets (DPP)", sweep, rebuild,
             "rebuild the cvxpy problem for each budget", work=n_budgets, work_unit="budgets"),
        Case(f"{n_inst} random feasible instances (auto)", ours_all("auto"), slsqp_all,
             "scipy SLSQP in log variables (same KKT check)", work=n_inst,
             work_unit="instances", extra=accuracy("auto"), repeats=1),
        Case(f"{n_inst} random feasible instances (gp)", ours_all("gp"), slsqp_all,
             "scipy SLSQP in log variables (same KKT check)", work=n_inst,
             work_unit="instances", extra=accuracy("gp"), repeats=1),
    ]
