"""Newton on the KKT equations of a geometric program (optimize/_alloc_newton.py).

Checked against computations that share nothing with it: the README's capped example by
its own separable optimality conditions (one multiplier found by ``brentq``), random
instances against cvxpy's conic solve polished (``method="gp"``), and the fallback to
cvxpy where Newton does not certify.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from rlscale.optimize import AllocationProblem, allocate, min_cost
from rlscale.optimize._alloc_kkt import ALLOCATE, MIN_COST
from rlscale.optimize._alloc_newton import NEWTON_KKT, newton_gp
from rlscale.theory import AdditiveLaw

LAW = AdditiveLaw(0.15, {"environments": 2.0, "tasks": 1.5, "trajectories": 1.2},
                  {"environments": 0.45, "tasks": 0.3, "trajectories": 0.2})
NESTED = {"environments": "E", "tasks": "E*t", "trajectories": "E*t*k"}
BOUNDS = {"E": (1, 500), "t": (1, None), "k": (1, None)}
COST = "100*E + 10*E*t + E*t*k"


def _readme_by_hand(budget: float) -> dict[str, float]:
    """E at its cap 500; then tasks T = E t and trajectories R = E t k minimise
    1.5 T^-0.3 + 1.2 R^-0.2 under 10 T + R = budget - 100 * 500, a separable problem:
    a_j alpha_j x_j^(-alpha_j - 1) = lam c_j, with lam fixed by the budget."""
    left = budget - 100 * 500

    def x(lam: float, a: float, alpha: float, c: float) -> float:
        return (a * alpha / (lam * c)) ** (1 / (1 + alpha))

    lam = brentq(lambda lam: 10 * x(lam, 1.5, 0.3, 10) + x(lam, 1.2, 0.2, 1) - left,
                 1e-30, 1e3, xtol=1e-300, rtol=1e-15)
    T, R = x(lam, 1.5, 0.3, 10), x(lam, 1.2, 0.2, 1)
    return {"E": 500.0, "t": T / 500, "k": R / T}


@pytest.mark.parametrize("budget", [1e6, 3e7, 1e9])
def test_the_readme_example_by_newton_matches_its_optimality_conditions(budget) -> None:
    a = allocate(LAW, COST, budget, BOUNDS, substitute=NESTED)
    ref = _readme_by_hand(budget)
    assert a.solver == "Newton gp" and a.method == "gp" and a.status == "optimal"
    assert a.kkt_residual <= NEWTON_KKT and a.success
    assert a.values == pytest.approx(ref, rel=1e-11)
    assert set(a.duals) == {"budget", "E<=500"}  # the cap binds, t, k >= 1 do not
    assert a.message.startswith("Newton on the KKT equations in log space (")
    assert a.rounded is not None and a.rounded_cost <= budget


def test_newton_and_cvxpy_reach_the_same_point_on_random_instances() -> None:
    rng = np.random.default_rng(3)
    newton = 0
    for _ in range(60):
        c = [float(v) for v in np.exp(rng.uniform(-2, 5, 3))]
        law = AdditiveLaw(float(rng.uniform(0, 1)), dict(zip("Etk", np.exp(rng.uniform(-2, 3, 3)))),
                          dict(zip("Etk", rng.uniform(0.1, 1.2, 3))))
        bounds = {"E": (1, float(np.exp(rng.uniform(1, 7)))),
                  "t": (float(np.exp(rng.uniform(-2, 0))), float(np.exp(rng.uniform(1, 6))))}
        prob = AllocationProblem(law, f"{c[0]!r}*E + {c[1]!r}*E*t + {c[2]!r}*E*t*k", bounds)
        budget = prob.cheapest()[0] * float(np.exp(rng.uniform(0.5, 10)))
        auto = prob.allocate(budget, round_integers=False)
        conic = prob.allocate(budget, round_integers=False, method="gp")
        assert auto.kkt_residual <= 1e-12 and conic.kkt_residual <= 1e-12
        assert auto.values == pytest.approx(conic.values, rel=1e-9)
        assert auto.loss == pytest.approx(conic.loss, rel=1e-13)
        newton += auto.solver == "Newton gp"
    assert newton >= 55  # the fast path is the common path, cvxpy the exception


def test_min_cost_by_newton_reaches_the_target_at_the_cost_of_the_conic_solve() -> None:
    prob = AllocationProblem(LAW, COST, BOUNDS, NESTED)
    for target in (0.3, 0.45, 0.8):
        a = prob.min_cost(target, round_integers=False)
        b = prob.min_cost(target, round_integers=False, method="gp")
        assert a.solver == "Newton gp" and a.kkt_residual <= NEWTON_KKT
        assert a.loss == pytest.approx(target, rel=1e-13)
        assert a.cost == pytest.approx(b.cost, rel=1e-12)


def test_a_lower_bound_that_binds_is_found_from_a_start_above_it() -> None:
    # E is dear and nearly useless: the optimum sits on E >= 1 although the equal-share
    # start puts E far above it; Newton reaches the bound, holds it and certifies.
    law = AdditiveLaw(0.1, {"E": 1e-3, "t": 1.0, "k": 1.0}, {"E": 0.2, "t": 0.5, "k": 0.5})
    prob = AllocationProblem(law, "100*E + E*t + E*t*k", {"E": (1, 1e4)})
    got = newton_gp(prob, ALLOCATE, 1e5)
    assert got is not None
    values, steps = got
    assert values["E"] == pytest.approx(1.0, rel=1e-12) and steps >= 2
    residual, duals = prob._kkt(ALLOCATE, 1e5, values)
    assert residual <= NEWTON_KKT and "E>=1" in duals
    assert values == pytest.approx(prob.allocate(1e5, method="gp").values, rel=1e-10)


def test_an_uncertified_newton_point_goes_to_cvxpy(monkeypatch) -> None:
    import rlscale.optimize._allocate as alloc_mod

    prob = AllocationProblem(LAW, COST, BOUNDS, NESTED)
    right = prob.allocate(1e6, round_integers=False).values
    off = {k: v * 1.01 for k, v in right.items()}
    monkeypatch.setattr(alloc_mod, "newton_gp", lambda *a: (off, 3))
    a = AllocationProblem(LAW, COST, BOUNDS, NESTED).allocate(1e6, round_integers=False)
    assert a.solver == "CLARABEL gp" and a.kkt_residual <= 1e-12
    assert a.values == pytest.approx(right, rel=1e-11)
    monkeypatch.setattr(alloc_mod, "newton_gp", lambda *a: None)
    assert AllocationProblem(LAW, COST, BOUNDS, NESTED).allocate(1e6).solver == "CLARABEL gp"


def test_method_gp_is_the_conic_solve_of_record_and_a_closed_form_stays_closed() -> None:
    a = allocate(LAW, COST, 1e6, BOUNDS, substitute=NESTED, method="gp")
    assert a.solver == "CLARABEL gp"
    chin = AdditiveLaw(1.82, {"N": 482.01, "D": 2085.43}, {"N": 0.3478, "D": 0.3658})
    assert allocate(chin, "6*N*D", 1e23).method == "closed_form"


def test_the_beyond_float64_budget_still_refuses() -> None:
    with pytest.raises(ValueError, match="beyond what float64 can resolve"):
        allocate(LAW, COST, 1e308, BOUNDS, substitute=NESTED)


def test_an_unreachable_target_is_refused_before_newton_runs() -> None:
    with pytest.raises(ValueError, match="below the lowest loss the bounds allow"):
        min_cost(AdditiveLaw(0.1, {"E": 1.0}, {"E": 0.5}), "E", 0.1 + 1 / math.sqrt(200),
                 {"E": (1, 100)})
    prob = AllocationProblem(AdditiveLaw(0.1, {"E": 1.0}, {"E": 0.5}), "E", {"E": (1, 100)})
    got = newton_gp(prob, MIN_COST, 0.1 + 1 / math.sqrt(50))
    assert got is not None and got[0]["E"] == pytest.approx(50.0, rel=1e-12)
