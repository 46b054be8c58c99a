"""The allocation solver's internals: the KKT residual by hand, the senses, the Newton
polish and the SLSQP rescue, every validation branch, solver statuses turned into errors, and
robustness on random instances (split from test_allocate_paths.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlscale._errors import InfeasibleError, SolverError
from rlscale.optimize import AllocationProblem, allocate, kkt_residual, min_cost
from rlscale.optimize._alloc_kkt import ALLOCATE, MIN_COST, kkt_core
from rlscale.theory import (
    AdditiveLaw,
    MultiplicativeLaw,
    SynthesisMethod,
    chinchilla_optimal,
)

NESTED_COST = "{0!r}*E + {1!r}*E*t + {2!r}*E*t*k"


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
    with pytest.raises(err, match=match):  # method="gp": the conic solve (auto takes Newton)
        allocate(law, "E + K", 100.0, method="gp")


def test_a_solver_exception_is_reported_without_cvxpys_advice(monkeypatch) -> None:
    import cvxpy as cp

    from rlscale.optimize._alloc_model import GPModel

    def fail(self, *args):
        raise cp.error.SolverError("numerical trouble.  Try another solver, or ...")

    monkeypatch.setattr(GPModel, "solve", fail)
    law = AdditiveLaw(0.2, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.5})
    with pytest.raises(SolverError, match=r"target loss 0.5 could not be solved: .* which failed "
                                          r"\(numerical trouble\); try a target loss"):
        min_cost(law, "E + K", 0.5, method="gp")


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
