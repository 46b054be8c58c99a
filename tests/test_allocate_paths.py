"""The allocation solver's paths: closed forms against the GP certificate and independent
oracles, the method dispatch and the structure cache (internals: test_allocate_internals.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlscale.optimize import AllocationProblem, allocate, min_cost
from rlscale.optimize._alloc_closed import closed_form
from rlscale.optimize._alloc_kkt import ALLOCATE, MIN_COST
from rlscale.optimize._alloc_model import _CACHE, gp_model
from rlscale.theory import (
    AdditiveLaw,
    MultiplicativeLaw,
    SynthesisMethod,
    VarianceComponentsLaw,
    chinchilla_optimal,
    nested_optimum,
)

NESTED_COST = "{0!r}*E + {1!r}*E*t + {2!r}*E*t*k"


def _rel(a: dict, b: dict) -> float:
    return max(abs(a[k] / b[k] - 1) for k in a)


def _random_power_law(rng):
    n = int(rng.integers(2, 4))
    axes = ["N", "D", "K"][:n]
    law = AdditiveLaw(float(rng.uniform(0, 2)),
                      {a: float(np.exp(rng.uniform(-2, 7))) for a in axes},
                      {a: float(rng.uniform(0.1, 1.0)) for a in axes})
    gam = [float(rng.uniform(0.5, 2.0)) for _ in axes]
    cost = f"{float(np.exp(rng.uniform(0, 3)))!r}*" + "*".join(
        f"{a}**{g!r}" for a, g in zip(axes, gam))
    return law, cost


def _random_cobb_douglas(rng):
    axes = ["E", "K", "T"][: int(rng.integers(2, 4))]
    law = MultiplicativeLaw(float(np.exp(rng.uniform(-1, 3))),
                            {a: float(rng.uniform(0.05, 1.0)) for a in axes},
                            floor=float(rng.uniform(0, 1)))
    cost = " + ".join(f"{float(np.exp(rng.uniform(-2, 4)))!r}*{a}" for a in axes)
    return law, cost


def _random_nested(rng):
    law = VarianceComponentsLaw(float(rng.uniform(0, 1)), *np.exp(rng.uniform(-3, 3, 3)))
    return law, NESTED_COST.format(*(float(c) for c in np.exp(rng.uniform(-2, 5, 3))))


@pytest.mark.parametrize(("make", "kind"), [(_random_power_law, "power-laws/monomial-cost"),
                                            (_random_cobb_douglas, "cobb-douglas"),
                                            (_random_nested, "nested")])
def test_closed_forms_agree_with_the_gp_to_1e12(make, kind) -> None:
    rng = np.random.default_rng(7)
    for _ in range(6):
        law, cost = make(rng)
        prob = AllocationProblem(law, cost)
        assert prob.closed_form is not None and prob.closed_form.kind == kind
        budget = max(prob.cheapest()[0], 1.0) * float(np.exp(rng.uniform(3, 15)))
        a = prob.allocate(budget, round_integers=False)
        g = prob.allocate(budget, round_integers=False, method="gp")
        assert (a.method, a.solver, g.method) == ("closed_form", f"closed form ({kind})", "gp")
        assert _rel(a.values, g.values) <= 1e-12
        assert a.loss == pytest.approx(g.loss, rel=1e-12)
        assert a.kkt_residual <= 1e-12
        target = law.floor + 2 * (a.loss - law.floor)
        b = prob.min_cost(target, round_integers=False)
        h = prob.min_cost(target, round_integers=False, method="gp")
        assert b.method == "closed_form" and _rel(b.values, h.values) <= 1e-12
        assert b.cost == pytest.approx(h.cost, rel=1e-12)
        assert b.loss == pytest.approx(target, rel=1e-12)


def test_power_laws_match_chinchilla_optimal_and_the_cobb_douglas_shares() -> None:
    law = AdditiveLaw(1.82, {"N": 482.01, "D": 2085.43}, {"N": 0.3478, "D": 0.3658})
    a = allocate(law, "6*N*D", 5.76e23)
    N, D = chinchilla_optimal(482.01, 2085.43, 0.3478, 0.3658, 5.76e23)
    assert a.values["N"] == pytest.approx(N, rel=1e-13)
    assert a.values["D"] == pytest.approx(D, rel=1e-13)
    # Cobb-Douglas: spend shares c_j x_j / B = alpha_j / sum(alpha) = 0.6, 0.4.
    cd = allocate(MultiplicativeLaw(2.0, {"E": 0.3, "K": 0.2}), "10*E + K", 1e5)
    assert cd.values["E"] == pytest.approx(0.6 * 1e5 / 10, rel=1e-14)
    assert cd.values["K"] == pytest.approx(0.4 * 1e5, rel=1e-14)
    assert cd.shares == pytest.approx({"E": 0.6, "K": 0.4}, rel=1e-14)
    # Its dual: at the loss just found, the cheapest allocation costs the budget again.
    back = min_cost(MultiplicativeLaw(2.0, {"E": 0.3, "K": 0.2}), "10*E + K", cd.loss)
    assert back.cost == pytest.approx(1e5, rel=1e-13)


@pytest.mark.parametrize("costs", [(100, 10, 1), (50, 5, 2), (1, 10, 100), (5, 50, 0.5)])
def test_nested_closed_form_matches_nested_optimum_pooled_or_not(costs) -> None:
    law = VarianceComponentsLaw(0.1, 9.0, 4.0, 1.0)
    prob = AllocationProblem(law, NESTED_COST.format(*map(float, costs)))
    for budget in (1e3, 1e6):
        a = prob.allocate(budget)
        cf = nested_optimum(law, *costs, budget)
        assert a.method == "closed_form"
        assert _rel(a.values, cf.values) <= 1e-13
        assert a.loss == pytest.approx(cf.loss, rel=1e-13)


def test_pooled_nesting_needs_the_unit_lower_bounds() -> None:
    # Costs (50, 5, 2) pool tasks with trajectories (k = 1): without k >= 1 there is no
    # relaxation to use, so the GP solves it; with the law's default bounds the closed form does.
    law = AdditiveLaw(0.0, {"environments": 9.0, "tasks": 4.0, "trajectories": 1.0},
                      dict.fromkeys(("environments", "tasks", "trajectories"), 1.0))
    sub = {"environments": "E", "tasks": "E*t", "trajectories": "E*t*k"}
    free = AllocationProblem(law, "50*E + 5*E*t + 2*E*t*k", substitute=sub)
    assert free.closed_form is None
    nested = AllocationProblem(law, "50*E + 5*E*t + 2*E*t*k", substitute=sub,
                               bounds={"t": (1, None), "k": (1, None)})
    assert nested.closed_form.kind == "nested" and nested.closed_form.needs_unit_lower == (1,)
    a = nested.allocate(1e6)
    assert a.method == "closed_form" and a.values["k"] == 1.0
    assert "k>=1" in a.duals


def test_auto_falls_back_to_the_gp_where_a_bound_cuts_the_closed_form_off() -> None:
    law = AdditiveLaw(1.82, {"N": 482.01, "D": 2085.43}, {"N": 0.3478, "D": 0.3658})
    prob = AllocationProblem(law, "6*N*D", bounds={"N": (None, 1e9)})
    small, big = prob.allocate(1e18), prob.allocate(1e23)
    assert small.method == "closed_form" and big.method == "gp"
    assert big.values["N"] == pytest.approx(1e9, rel=1e-12)
    assert big.values["D"] == pytest.approx(1e23 / 6e9, rel=1e-12)
    assert "N<=1e+09" in big.duals and big.status == "optimal"
    f = prob.frontier([1e18, 1e23])
    assert f.method == ("closed_form", "gp")
    assert f.values["N"][1] == pytest.approx(1e9, rel=1e-12)
    with pytest.raises(ValueError, match=r"method='closed_form': at budget 1e\+23 the closed "
                                         r"form \(power-laws/monomial-cost\) leaves the bounds"):
        prob.allocate(1e23, method="closed_form")


def test_frontier_matches_single_allocations_and_its_kkt_is_the_pointwise_one() -> None:
    law = AdditiveLaw(0.5, {"N": 40.0, "D": 90.0, "K": 7.0}, {"N": 0.3, "D": 0.4, "K": 0.6})
    prob = AllocationProblem(law, "3*N*D**0.5*K**2")
    budgets = np.logspace(8, 20, 7)
    f = prob.frontier(budgets)
    assert f.method == ("closed_form",) * 7
    for i, b in enumerate(budgets):
        a = prob.allocate(float(b), round_integers=False)
        assert f.loss[i] == pytest.approx(a.loss, rel=1e-14)
        assert f.cost[i] == pytest.approx(b, rel=1e-14)
        assert f.kkt_residual[i] == pytest.approx(a.kkt_residual, abs=1e-15)
        for v in prob.variables:
            assert f.values[v][i] == a.values[v]
    assert f.as_dict()["method"] == ["closed_form"] * 7


def test_sweep_uses_the_vectorised_closed_form() -> None:
    law = VarianceComponentsLaw(0.0, 4.0, 1.0, 1.0)
    out = AllocationProblem(law, "100*E + 10*E*t + E*t*k").sweep([1e4, 1e5])
    assert [a.method for a in out] == ["closed_form"] * 2
    assert [a.loss for a in out] == pytest.approx([nested_optimum(law, 100, 10, 1, b).loss
                                                   for b in (1e4, 1e5)], rel=1e-14)


def test_a_second_problem_of_the_same_structure_reuses_the_compiled_gp() -> None:
    def prob(scale):
        law = AdditiveLaw(0.1, {"E": 2.0 * scale, "t": 1.0, "k": 3.0},
                          {"E": 0.5, "t": 0.3, "k": 0.25})
        return AllocationProblem(law, f"{100 * scale!r}*E + 10*E*t + E*t*k", {"E": (1, 300)})
    first, second = prob(1.0), prob(1.7)
    a = first.allocate(1e6, method="gp")
    model = first._compiled["allocate"]
    compiles, solves = model.compiles, model.solves
    b = second.allocate(2e6, method="gp")
    assert second._compiled["allocate"] is model          # one model per structure
    assert (model.compiles, model.solves) == (compiles, solves + 1)   # no recompilation
    assert a.kkt_residual <= 1e-12 and b.kkt_residual <= 1e-12
    assert a.values != b.values
    # Other exponents, same numbers of terms: the same structure; another bounds pattern is not.
    other = AdditiveLaw(0.3, {"E": 1.0, "t": 2.0, "k": 0.5}, {"E": 0.9, "t": 0.1, "k": 0.7})
    fourth = AllocationProblem(other, "3*E**2 + E*t**0.5 + E*t*k", {"E": (1, 30)})
    assert fourth.allocate(1e4, method="gp").kkt_residual <= 1e-12
    assert fourth._compiled["allocate"] is model and model.compiles == compiles
    third = AllocationProblem(first.law, "100.0*E + 10*E*t + E*t*k")
    third.allocate(1e6, method="gp")
    assert third._compiled["allocate"] is not model
    assert gp_model(ALLOCATE, 3, 3, list(first.bounds.values())) is model


def test_the_structure_cache_is_bounded() -> None:
    law = AdditiveLaw(0.1, {"E": 1.0, "k": 1.0}, {"E": 0.5, "k": 0.3})
    for i in range(70):
        gp_model(MIN_COST, 100 + i, 2, [(0.0, math.inf), (0.0, math.inf)])
    assert len(_CACHE) == 64
    assert AllocationProblem(law, "E + k").min_cost(0.5, method="gp").kkt_residual <= 1e-12


def test_allocation_reports_success_message_and_the_solvers_status() -> None:
    law = AdditiveLaw(0.2, {"E": 3.0, "K": 4.0}, {"E": 0.45, "K": 0.2})
    a = allocate(law, "100*E + K", 1e5, method="gp")
    assert (a.method, a.status, a.solver, a.success) == ("gp", "optimal", "CLARABEL gp", True)
    assert a.message.startswith("CLARABEL via cvxpy, the GP in log space (optimal)")
    assert "KKT residual" in a.message and a.as_dict()["method"] == "gp"
    # "auto" (the default) solves the same GP by Newton when it certifies (_alloc_newton).
    b = allocate(law, "100*E + K", 1e5)
    assert (b.method, b.status, b.solver, b.success) == ("gp", "optimal", "Newton gp", True)
    assert b.message.startswith("Newton on the KKT equations in log space (")
    assert b.kkt_residual <= 1e-12
    assert b.values == pytest.approx(a.values, rel=1e-11)
    c = allocate(law, "100*E*K", 1e5)
    assert (c.method, c.status, c.success) == ("closed_form", "optimal", True)
    assert c.message.startswith("closed form: power laws under a single-monomial cost")


def test_synthetic_problems_take_the_dcp_path() -> None:
    law = AdditiveLaw(0.1, {"environments": 2.0, "trajectories": 1.0},
                      {"environments": 0.5, "trajectories": 0.3})
    syn = [SynthesisMethod("environments", unit_cost=1.0, rho=0.5, name="gen")]
    a = allocate(law, "10*environments + trajectories", 1e4, synthesis=syn)
    assert (a.method, a.solver) == ("dcp", "CLARABEL dcp") and a.kkt_residual <= 1e-9
    with pytest.raises(ValueError, match="method='gp' does not fit this problem: synthetic"):
        allocate(law, "10*environments + trajectories", 1e4, synthesis=syn, method="gp")
    with pytest.raises(ValueError, match="method='closed_form' needs"):
        allocate(law, "10*environments + trajectories", 1e4, synthesis=syn,
                 method="closed_form")


def test_method_is_checked() -> None:
    law = AdditiveLaw(0.2, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.5})
    with pytest.raises(ValueError, match=r"method must be one of \['auto', 'closed_form', "
                                         r"'gp', 'dcp'\]; got method='fast'"):
        allocate(law, "E + K", 10.0, method="fast")
    with pytest.raises(TypeError, match="method must be one of"):
        min_cost(law, "E + K", 0.5, method=1)
    with pytest.raises(ValueError, match="method='dcp' does not fit this problem: it has no "
                                         "synthetic data"):
        allocate(law, "E + K", 10.0, method="dcp")
    with pytest.raises(ValueError, match="this problem has none"):
        AllocationProblem(law, "E + K").sweep([10.0], method="closed_form")


def test_closed_form_optimum_outside_the_float_range_is_refused() -> None:
    law = AdditiveLaw(0.0, {"N": 1.0, "D": 1.0}, {"N": 0.01, "D": 1.0})
    with pytest.raises(ValueError, match=r"the optimum at budget 1e\+300 leaves the float"):
        allocate(law, "1e-20*N*D", 1e300)


def test_closed_form_recognition_refuses_near_misses() -> None:
    from rlscale.theory._posynomial import parse_posynomial as P

    assert closed_form(P("N**-0.5 + D**-0.5"), P("N*D + 1"), ["N", "D"]) is None  # fixed cost
    assert closed_form(P("N**-0.5 + D**-0.5"), P("N + D"), ["N", "D"]) is None    # linear
    assert closed_form(P("N**-0.5*D**-0.5"), P("N*D"), ["N", "D"]) is None        # monomial/mono
    assert closed_form(P("N**-0.5*D**-0.2"), P("N + D**2"), ["N", "D"]) is None   # D**2 not linear
    assert closed_form(P("E**-1 + E**-1*t**-1"), P("E + E*t**2"), ["E", "t"]) is None
    assert closed_form(P("E**-1 + E**-2*t**-1"), P("E + E*t"), ["E", "t"]) is None
    assert closed_form(P("E**-1 + t**-1"), P("E + E*t"), ["E", "t"]) is None
    assert closed_form(P("N**-0.5 + D**-0.5"), P("N**0.5"), ["N", "D"]) is None   # D costs nothing
    assert closed_form(P("N**-0.5 + N**-0.5*D**-1"), P("N*D"), ["N", "D"]) is None
    assert closed_form(P("N**-0.5 + D**-0.5"), P("N*D"), ["N", "D"]).kind == \
        "power-laws/monomial-cost"
