"""The allocation solver's paths: closed forms against the GP certificate and independent
oracles, the structure cache, the polish, the KKT residual by hand and every validation branch."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlscale._errors import InfeasibleError, SolverError
from rlscale.optimize import AllocationProblem, allocate, kkt_residual, min_cost
from rlscale.optimize._alloc_closed import closed_form
from rlscale.optimize._alloc_kkt import ALLOCATE, MIN_COST, kkt_core
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
    a = allocate(law, "100*E + K", 1e5)
    assert (a.method, a.status, a.solver, a.success) == ("gp", "optimal", "CLARABEL gp", True)
    assert a.message.startswith("CLARABEL via cvxpy, the GP in log space (optimal)")
    assert "KKT residual" in a.message and a.as_dict()["method"] == "gp"
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


def test_kkt_core_by_hand() -> None:
    # One active constraint: mu = -g.d/d.d = 1.5, stationarity (0.5, -0.5) / |grad| 2 = 0.25.
    res, mu = kkt_core(np.array([-1.0, -2.0]), [(0.0, np.array([1.0, 1.0]))], ["c"])
    assert res == 0.25 and mu == {"c": 1.5}
    # Two active constraints fitted by NNLS: grad (-1, -2), e_1 and e_2 give mu (1, 2), exact.
    res, mu = kkt_core(np.array([-1.0, -2.0]), [(0.0, np.array([1.0, 0.0])),
                                                (-1e-7, np.array([0.0, 1.0]))], ["a", "b"])
    assert res == 0.0 and mu == {"a": 1.0, "b": 2.0}
    # An inactive constraint (slack 1e-3) gets no multiplier; a violated one sets the residual.
    res, mu = kkt_core(np.array([1.0, 0.0]), [(-1e-3, np.array([-1.0, 0.0]))], ["c"])
    assert res == 1.0 and mu == {}
    res, _ = kkt_core(np.array([-1.0]), [(0.3, np.array([1.0]))], ["c"])
    assert res == 0.3
    # A multiplier that would be negative is clipped to 0.
    res, mu = kkt_core(np.array([1.0, 1.0]), [(0.0, np.array([1.0, 1.0]))], ["c"])
    assert res == 1.0 and mu == {}


def test_kkt_residual_validates_its_arguments() -> None:
    with pytest.raises(ValueError, match=r"grad must be a non-empty 1-D array; got shape \(\)"):
        kkt_residual(1.0, [])
    with pytest.raises(TypeError, match="constraints must be a sequence"):
        kkt_residual([1.0], "x")
    with pytest.raises(TypeError, match=r"constraints\[0\] must be a \(g, grad_g\) pair"):
        kkt_residual([1.0], [(0.0,)])
    with pytest.raises(ValueError, match=r"constraints\[0\] grad_g must have the shape"):
        kkt_residual([1.0], [(0.0, [1.0, 2.0])])
    with pytest.raises(TypeError, match="names must be a sequence of 1 labels"):
        kkt_residual([1.0], [(0.0, [1.0])], names=["a", "b"])
    res, mu = kkt_residual([-1.0], [(0.0, [1.0])])
    assert res == 0.0 and mu == {"c0": 1.0}


def test_senses_pose_the_constraint_and_rank_candidates() -> None:
    assert ALLOCATE.rhs(100.0, 0.5) == 100.0 and MIN_COST.rhs(0.75, 0.5) == 0.25
    loss, cost = np.array([0.3, 0.2, 0.1]), np.array([90.0, 100.0, 110.0])
    ok, key = ALLOCATE.rank(loss, cost, 100.0)
    assert ok.tolist() == [True, True, False] and int(np.argmin(key)) == 1
    ok, key = MIN_COST.rank(loss, cost, 0.2)
    assert ok.tolist() == [False, True, True] and int(np.argmin(key)) == 1


def test_the_exact_newton_polish_lands_on_the_bounded_optimum() -> None:
    # Stationarity by hand with E capped at 500: the budget left after 100*500 goes to K.
    law = AdditiveLaw(0.2, {"E": 3.0, "K": 4.0}, {"E": 0.45, "K": 0.2})
    a = allocate(law, "100*E + K", 1e7, bounds={"E": (None, 500)}, method="gp")
    assert a.values["E"] == pytest.approx(500, rel=1e-14)
    assert a.values["K"] == pytest.approx(1e7 - 5e4, rel=1e-13)
    assert a.kkt_residual <= 1e-13
    # Interior GP optimum: alpha_E l_E / (100 E) = alpha_K l_K / K (Cobb-Douglas shares).
    b = allocate(law, "100*E + K", 1e5, method="gp")
    lE, lK = 3.0 * b.values["E"] ** -0.45, 4.0 * b.values["K"] ** -0.2
    assert 0.45 * lE / (100 * b.values["E"]) == pytest.approx(0.2 * lK / b.values["K"],
                                                              rel=1e-12)
    assert "polished" in b.message


@pytest.mark.parametrize(("bounds", "err", "match"), [
    ({"E": {"min": 1, "maxi": 2}}, ValueError, r"bounds\['E'\] takes keys 'min' and 'max'"),
    ({"E": 3}, TypeError, r"bounds\['E'\] must be \(min, max\)"),
    ({"E": (1, 2, 3)}, TypeError, r"bounds\['E'\] must be \(min, max\)"),
    ({"E": (-1, 2)}, ValueError, r"bounds\['E'\] min must be >= 0"),
    ({"E": (1, 0)}, ValueError, r"bounds\['E'\] max must be > 0"),
    ({"E": {"min": 3, "max": 2}}, ValueError, "min 3 exceeds max 2"),
    ([("E", (1, 2))], TypeError, "bounds must be a mapping"),
])
def test_bounds_validation_names_the_entry(bounds, err, match) -> None:
    law = AdditiveLaw(0.2, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.5})
    with pytest.raises(err, match=match):
        AllocationProblem(law, "E + K", bounds)


def test_bounds_as_mappings_and_open_sides() -> None:
    law = AdditiveLaw(0.2, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.5})
    prob = AllocationProblem(law, "E + K", {"E": {"min": 2}, "K": (None, 50)})
    assert prob.bounds == {"E": (2.0, math.inf), "K": (0.0, 50.0)}


def test_problem_construction_errors() -> None:
    law = AdditiveLaw(0.2, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.5})
    with pytest.raises(ValueError, match="exponent 2000 on 'E'"):
        AllocationProblem(law, "E**2000 + K")
    with pytest.raises(TypeError, match="substitute must be a mapping"):
        AllocationProblem(law, "E + K", substitute=["E"])
    with pytest.raises(TypeError, match=r"substitute\['E'\] must be a monomial string"):
        AllocationProblem(law, "x + K", substitute={"E": 3})
    with pytest.raises(ValueError, match="substitute names 'Q', not an axis"):
        AllocationProblem(law, "x + K", substitute={"Q": "x"})
    with pytest.raises(ValueError, match=r"substitute\['E'\] = 'x \+ y' must be a monomial"):
        AllocationProblem(law, "x + K", substitute={"E": "x + y"})
    with pytest.raises(TypeError, match="synthesis must be a list of SynthesisMethod"):
        AllocationProblem(law, "E + K", synthesis="gen")
    with pytest.raises(TypeError, match="synthesis entries must be SynthesisMethod"):
        AllocationProblem(law, "E + K", synthesis=["gen"])
    syn = SynthesisMethod("Q", unit_cost=1.0, rho=0.5, name="gen")
    with pytest.raises(ValueError, match="targets axis 'Q', which the law does not have"):
        AllocationProblem(law, "E + K", synthesis=[syn])
    syn = SynthesisMethod("E", unit_cost=1.0, rho=0.5, name="K")
    with pytest.raises(ValueError, match=r"synthesis method names clash with axes: \['K'\]"):
        AllocationProblem(law, "E + K", synthesis=[syn])
    syn = SynthesisMethod("E", unit_cost=1.0, rho=0.5, name="gen")
    with pytest.raises(ValueError, match="synthetic data needs a cost linear in the counts"):
        AllocationProblem(law, "E*K", synthesis=[syn])
    with pytest.raises(ValueError, match="synthesis and substitute cannot be combined"):
        AllocationProblem(law, "E + K", substitute={"E": "E"}, synthesis=[syn])
    multi = MultiplicativeLaw(1.0, {"E": 0.5, "K": 0.5})
    with pytest.raises(ValueError, match="needs a law whose terms each involve one axis"):
        AllocationProblem(multi, "E + K", synthesis=[syn])
    prob = AllocationProblem(law, "E + K")
    with pytest.raises(ValueError, match=r"values needs every decision variable \['E', 'K'\]"):
        prob.loss_at({"E": 1.0})
    with pytest.raises(TypeError, match="values must be a mapping"):
        prob.cost_at([1.0, 2.0])
    with pytest.raises(TypeError, match="budgets must be a sequence of numbers"):
        prob.sweep(5.0)
    with pytest.raises(ValueError, match="budgets must be a flat list"):
        prob.frontier([[1.0, 2.0]])
    with pytest.raises(InfeasibleError, match="budget 1 is below the cost 4"):
        AllocationProblem(law, "E + K", {"E": (2, None), "K": (2, None)}).frontier([1.0, 5.0])


@pytest.mark.slow
def test_one_thousand_random_instances_all_solve_to_kkt_1e12() -> None:
    from benchmarks.bench_allocate import instances

    worst = 0.0
    for prob, budget in instances(1000):
        worst = max(worst, prob.allocate(budget, round_integers=False).kkt_residual)
    assert worst <= 1e-12


def test_only_the_gp_refuses_budgets_beyond_float64_resolution() -> None:
    law = AdditiveLaw(0.15, {"environments": 2.0, "tasks": 1.5, "trajectories": 1.2},
                      {"environments": 0.45, "tasks": 0.3, "trajectories": 0.2})
    sub = {"environments": "E", "tasks": "E*t", "trajectories": "E*t*k"}
    bounds = {"E": (1, 500), "t": (1, None), "k": (1, None)}
    with pytest.raises(ValueError, match="beyond what float64 can resolve"):
        allocate(law, "100*E + 10*E*t + E*t*k", 1e308, bounds, substitute=sub)
    # A closed form is exact at any budget whose optimum is in the float range.
    chin = AdditiveLaw(1.82, {"N": 482.01, "D": 2085.43}, {"N": 0.3478, "D": 0.3658})
    a = allocate(chin, "6*N*D", 1e300, round_integers=False)
    N, _ = chinchilla_optimal(482.01, 2085.43, 0.3478, 0.3658, 1e300)
    assert a.method == "closed_form" and a.values["N"] == pytest.approx(N, rel=1e-12)
    assert a.loss == 1.82 and a.cost == pytest.approx(1e300, rel=1e-12)


def test_a_budget_equal_to_the_cheapest_allocation_is_feasible() -> None:
    law = MultiplicativeLaw(1.0, {"E": 0.5, "K": 0.5})
    a = allocate(law, "E + K", 4.0, bounds={"E": (2, None), "K": (2, None)})
    assert a.values == {"E": 2.0, "K": 2.0} and a.method == "closed_form"
    with pytest.raises(InfeasibleError, match=r"budget 3\.99 is below the cost 4"):
        allocate(law, "E + K", 3.99, bounds={"E": (2, None), "K": (2, None)})


def test_at_most_ten_thousand_budgets_even_as_a_float_array() -> None:
    prob = AllocationProblem(MultiplicativeLaw(1.0, {"E": 0.5, "K": 0.5}), "E + K")
    assert prob.frontier(np.full(10_000, 10.0)).loss.shape == (10_000,)
    with pytest.raises(ValueError, match="at most 10000 budgets"):
        prob.frontier(np.full(10_001, 10.0))
    with pytest.raises(ValueError, match="budgets must be > 0"):
        prob.frontier(np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="budgets must be"):
        prob.frontier(np.array([1.0, np.inf]))


def test_threads_sharing_a_compiled_structure_get_their_own_answers() -> None:
    from concurrent.futures import ThreadPoolExecutor

    def solve(scale: float) -> float:
        law = AdditiveLaw(0.1, {"E": 2.0 * scale, "k": 3.0}, {"E": 0.5, "k": 0.25})
        return AllocationProblem(law, "10*E + k", {"E": (1, 1e4)}).allocate(
            1e5, round_integers=False, method="gp").values["E"]

    scales = [1.0, 2.0, 4.0, 8.0] * 2
    alone = [solve(s) for s in scales]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(solve, scales))
    assert together == pytest.approx(alone, rel=1e-12)
    assert len(set(np.round(alone, 6))) == 4


def test_synthetic_data_takes_a_fixed_cost_but_not_a_power_of_a_count() -> None:
    law = AdditiveLaw(0.2, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.5})
    syn = [SynthesisMethod("E", unit_cost=1.0, rho=0.5, name="gen")]
    with pytest.raises(ValueError, match="synthetic data needs a cost linear in the counts"):
        AllocationProblem(law, "E**2 + K", synthesis=syn)
    prob = AllocationProblem(law, "5 + E + K", synthesis=syn)
    assert prob.cheapest()[0] == 5.0 and prob.variables == ["E", "K", "gen"]


@pytest.mark.parametrize(("status", "err", "match"), [
    ("infeasible", InfeasibleError, r"the allocate problem is infeasible \(solver status "
                                    r"infeasible\); check the bounds"),
    ("unbounded_inaccurate", InfeasibleError, r"the allocate problem is unbounded \(solver "
                                              r"status unbounded_inaccurate\)"),
    ("solver_error", SolverError, r"the allocate problem at budget 100 could not be solved: "
                                  r"rlscale posed it as a geometric program \(cvxpy, in log "
                                  r"space\) and ran the CLARABEL solver, which failed \(status "
                                  r"solver_error\); try a budget nearer"),
])
def test_solver_statuses_become_errors_that_say_why(monkeypatch, status, err, match) -> None:
    from rlscale.optimize._alloc_model import GPModel

    monkeypatch.setattr(GPModel, "solve", lambda self, *a: (status, None))
    law = AdditiveLaw(0.2, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.5})
    with pytest.raises(err, match=match):
        allocate(law, "E + K", 100.0)


def test_a_solver_exception_is_reported_without_cvxpys_advice(monkeypatch) -> None:
    import cvxpy as cp

    from rlscale.optimize._alloc_model import GPModel

    def fail(self, *args):
        raise cp.error.SolverError("numerical trouble.  Try another solver, or ...")

    monkeypatch.setattr(GPModel, "solve", fail)
    law = AdditiveLaw(0.2, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.5})
    with pytest.raises(SolverError, match=r"target loss 0.5 could not be solved: .* which failed "
                                          r"\(numerical trouble\); try a target loss"):
        min_cost(law, "E + K", 0.5)


def test_a_fractional_lower_bound_binds_in_the_synthetic_program_itself() -> None:
    # E is nearly worthless and dear: the optimum sits on E >= 0.5, which the DCP model
    # must impose (no SLSQP rescue needed to get there).
    law = AdditiveLaw(0.1, {"E": 1e-6, "K": 1.0}, {"E": 0.5, "K": 0.5})  # free optimum E ~ 0.004
    syn = [SynthesisMethod("K", unit_cost=2.0, rho=0.5, name="gen")]
    a = allocate(law, "100*E + K", 1000.0, {"E": (0.5, None)}, synthesis=syn)
    assert a.method == "dcp" and a.values["E"] == pytest.approx(0.5, rel=1e-9)
    assert "E>=0.5" in a.duals and "rescued" not in a.message
    assert a.kkt_residual <= 1e-9


@pytest.mark.parametrize("kind", ["saturating", "relative"])
def test_synthetic_kinds_beat_every_sampled_allocation(kind, rng) -> None:
    law = AdditiveLaw(0.1, {"E": 2.0, "K": 1.0}, {"E": 0.5, "K": 0.3})
    syn = [SynthesisMethod("E", unit_cost=1.0, rho=0.8, saturation=2.0, kind=kind, name="gen")]
    prob = AllocationProblem(law, "10*E + K", synthesis=syn)
    a = prob.allocate(1e3)
    assert a.kkt_residual <= 1e-9 and a.values["gen"] > 1.0
    assert a.effective["E"] == pytest.approx(
        float(syn[0].effective(a.values["E"], a.values["gen"])), rel=1e-12)
    # Brute force over the budget simplex: no sampled allocation does better.
    w = rng.dirichlet([1.0, 1.0, 1.0], 20000) * 1e3
    x = {"E": w[:, 0] / 10, "K": w[:, 1], "gen": w[:, 2]}
    assert np.all(prob.loss_at(x) >= a.loss * (1 - 1e-12))


def test_rescue_keeps_a_point_it_cannot_improve() -> None:
    from rlscale.optimize._alloc_polish import rescue

    # E = K = 50 under E + K <= 100 with equal exponents: the KKT residual is exactly 0.
    prob = AllocationProblem(MultiplicativeLaw(1.0, {"E": 0.5, "K": 0.5}), "E + K")
    values = {"E": 50.0, "K": 50.0}
    assert prob._kkt(ALLOCATE, 100.0, values)[0] == 0.0
    assert rescue(prob._space(ALLOCATE, 100.0), values) == (values, False)


def test_exact_newton_converges_to_the_kkt_point_from_a_perturbed_start() -> None:
    from rlscale.optimize._alloc_polish import _exact_newton

    # E + K <= 100 with L = 1/sqrt(E K): the optimum is E = K = 50 with log-log multiplier 1.
    prob = AllocationProblem(MultiplicativeLaw(1.0, {"E": 0.5, "K": 0.5}), "E + K")
    space = prob._space(ALLOCATE, 100.0)({})
    start = np.log([40.0, 60.0])
    z = _exact_newton(space, start, np.array([0, 1]), np.array([*start, 0.5]))
    assert z == pytest.approx([math.log(50.0), math.log(50.0), 1.0], rel=1e-13)


def test_the_synthetic_programs_budget_dual_is_the_loss_elasticity() -> None:
    # d log(L - L_inf) / d log B by central differences of the optimal loss (an independent check
    # of the multiplier the count space reports).
    law = AdditiveLaw(0.1, {"E": 2.0, "K": 1.0}, {"E": 0.5, "K": 0.3})
    syn = [SynthesisMethod("E", unit_cost=1.0, rho=0.8, saturation=2.0, name="gen")]
    prob = AllocationProblem(law, "10*E + K", synthesis=syn)
    h = 1e-4
    up, down = (prob.allocate(1e3 * math.exp(s), round_integers=False).loss - 0.1
                for s in (h, -h))
    slope = (math.log(up) - math.log(down)) / (2 * h)
    assert prob.allocate(1e3).duals["budget"] == pytest.approx(-slope, rel=1e-5)


def test_rescue_finds_the_optimum_from_a_poor_point() -> None:
    from rlscale.optimize._alloc_polish import rescue

    law = AdditiveLaw(0.2, {"E": 3.0, "K": 4.0}, {"E": 0.45, "K": 0.2})
    prob = AllocationProblem(law, "100*E + K", {"E": (None, 500)})
    best = prob.allocate(1e7, round_integers=False, method="gp").values   # E on its cap
    values, moved = rescue(prob._space(ALLOCATE, 1e7), {"E": 20.0, "K": 3e6})
    assert moved and values == pytest.approx(best, rel=1e-12)
    assert prob._kkt(ALLOCATE, 1e7, values)[0] <= 1e-13
