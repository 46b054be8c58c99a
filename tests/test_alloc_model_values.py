"""optimize/_alloc_model.py pinned by independent computations: the compiled GP at optima
solved on paper (interior, capped, min-cost), the DCP program of each synthesis kind
checked against the law evaluated at its point, the structure cache's size and order, the
method check, the rescue threshold and the failure message written out in full."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlscale.optimize import AllocationProblem, allocate
from rlscale.optimize import _alloc_model as model_mod
from rlscale.optimize._alloc_kkt import ALLOCATE, MIN_COST
from rlscale.optimize._alloc_model import _CACHE, DCPModel, gp_model, solver_failure
from rlscale.theory import AdditiveLaw, SynthesisMethod

# L = 0.5 + 2 N^-1/2 + 3 D^-1/4, cost 6 N D; variables ("D", "N").
LAW = AdditiveLaw(0.5, {"N": 2.0, "D": 3.0}, {"N": 0.5, "D": 0.25})
AL, BE = 0.5, 0.25
A_LAW = (np.array([[0.0, -AL], [-BE, 0.0]]), np.log([2.0, 3.0]))
A_COST = (np.array([[1.0, 1.0]]), np.array([math.log(6.0)]))


def _paper(B):
    """alpha a N^-alpha = beta b D^-beta with 6 N D = B (see test_alloc_space_values)."""
    N = ((AL * 2.0) / (BE * 3.0) * (B / 6.0) ** BE) ** (1.0 / (AL + BE))
    return B / (6.0 * N), N                                   # (D, N)


def test_the_compiled_gp_solves_the_paper_optimum_and_compiles_once() -> None:
    model = gp_model(ALLOCATE, 2, 1, [(0.0, math.inf), (0.0, math.inf)])
    first, solves = model.compiles, model.solves
    for B in (1e8, 1e10):
        status, x = model.solve(A_LAW, A_COST, [0.0, 0.0], [math.inf, math.inf], B)
        assert status == "optimal"
        assert x == pytest.approx(_paper(B), rel=1e-3)   # a conic solve: ~1e-4
    assert model.compiles - first <= 1 and model.compiles >= 1
    assert model.solves == solves + 2


def test_the_compiled_gp_imposes_present_bounds_only() -> None:
    B = 1e8
    D_opt, N_opt = _paper(B)
    cap = N_opt / 2
    model = gp_model(ALLOCATE, 2, 1, [(0.0, math.inf), (0.0, cap)])
    _, x = model.solve(A_LAW, A_COST, [0.0, 0.0], [math.inf, cap], B)
    assert x == pytest.approx([B / (6 * cap), cap], rel=1e-6)
    # A lower bound on D above its optimum binds; N takes the rest of the budget.
    model = gp_model(ALLOCATE, 2, 1, [(2 * D_opt, math.inf), (0.0, math.inf)])
    _, x = model.solve(A_LAW, A_COST, [2 * D_opt, 0.0], [math.inf, math.inf], B)
    assert x == pytest.approx([2 * D_opt, B / (12 * D_opt)], rel=1e-6)


def test_the_compiled_gp_for_a_target_swaps_objective_and_constraint() -> None:
    B = 1e8
    D, N = _paper(B)
    target_red = 2.0 * N ** -AL + 3.0 * D ** -BE          # the loss above the floor there
    model = gp_model(MIN_COST, 2, 1, [(0.0, math.inf), (0.0, math.inf)])
    status, x = model.solve(A_LAW, A_COST, [0.0, 0.0], [math.inf, math.inf], target_red)
    assert status == "optimal" and x == pytest.approx([D, N], rel=1e-3)


def test_the_structure_cache_keeps_the_64_most_recent() -> None:
    saved = dict(_CACHE)
    try:
        keys = [(ALLOCATE, 100 + i, 1, [(0.0, math.inf)]) for i in range(66)]
        models = [gp_model(*k) for k in keys[:64]]
        assert len(_CACHE) == 64
        assert gp_model(*keys[0]) is models[0]          # a hit moves it to the end...
        gp_model(*keys[64])
        assert len(_CACHE) == 64
        assert gp_model(*keys[0]) is models[0]          # ... so keys[1] went instead
        assert gp_model(*keys[1]) is not models[1]
        hi = gp_model(ALLOCATE, 100, 1, [(1.0, 5.0)])   # other bounds: another structure
        assert hi is not models[0]
        assert gp_model(MIN_COST, 101, 1, [(0.0, math.inf)]) is not models[1]
    finally:
        _CACHE.clear()
        _CACHE.update(saved)


# -- the DCP program of synthetic data ------------------------------------------------

SLAW = AdditiveLaw(0.1, {"E": 2.0, "K": 1.0}, {"E": 0.5, "K": 0.3})


def _syn(kind):
    sat = None if kind == "linear" else 2.0
    return [SynthesisMethod("E", unit_cost=1.5, rho=0.8, saturation=sat, kind=kind, name="gen")]


def _sampled_best(prob, budget, rng, n=4000):
    """The least loss among random allocations spending the whole budget."""
    w = rng.dirichlet(np.ones(3), n) * budget
    x = {"E": w[:, 0] / 10, "K": w[:, 1], "gen": w[:, 2] / 1.5}
    return float(np.min(prob.loss_at(x)))


@pytest.mark.parametrize("kind", ["linear", "saturating", "relative"])
def test_the_dcp_program_is_the_law_at_its_point(kind) -> None:
    prob = AllocationProblem(SLAW, "10*E + K + 7", synthesis=_syn(kind))
    budget = 1007.0
    model = DCPModel(prob.state, ALLOCATE)
    status, x = model.solve(budget)
    vals = dict(zip(prob.variables, x))
    assert status in ("optimal", "optimal_inaccurate")
    # The model's objective is the law's reducible loss at the point it returns...
    assert model.problem.value == pytest.approx(float(prob.state.reducible_at(vals)), rel=1e-6)
    # ... it spends the budget (7 of it fixed) and no sampled allocation does better.
    assert float(prob.cost_at(vals)) == pytest.approx(budget, rel=1e-6)
    best = _sampled_best(prob, budget - 7.0, np.random.default_rng(3))
    assert float(prob.loss_at(vals)) <= best + 1e-6
    assert model.solves == 1


def test_the_dcp_program_for_a_target_and_its_bounds() -> None:
    prob = AllocationProblem(SLAW, "10*E + K", {"K": (50, 120), "E": (3, None)},
                             synthesis=_syn("saturating"))
    a = prob.allocate(2000.0, round_integers=False)
    model = DCPModel(prob.state, MIN_COST)
    _, x = model.solve(a.loss - 0.1)
    vals = dict(zip(prob.variables, x))
    assert model.problem.value == pytest.approx(float(prob.cost_at(vals)), rel=1e-6)
    assert float(prob.state.reducible_at(vals)) == pytest.approx(a.loss - 0.1, rel=1e-6)
    assert vals["K"] == pytest.approx(120.0, rel=1e-6)              # the cap binds
    assert x == pytest.approx([a.values[v] for v in prob.variables], rel=1e-3)


def test_a_fractional_lower_bound_is_part_of_the_dcp_program() -> None:
    # E is nearly worthless and dear (free optimum E ~ 0.004): the program itself must put it
    # on its floor 0.5.
    law = AdditiveLaw(0.1, {"E": 1e-6, "K": 1.0}, {"E": 0.5, "K": 0.5})
    syn = [SynthesisMethod("K", unit_cost=2.0, rho=0.5, name="gen")]
    prob = AllocationProblem(law, "100*E + K", {"E": (0.5, None)}, synthesis=syn)
    _, x = DCPModel(prob.state, ALLOCATE).solve(1000.0)
    assert x[0] == pytest.approx(0.5, rel=1e-3)       # a conic solve: ~1e-5


def test_a_synthetic_problem_compiles_its_program_once() -> None:
    prob = AllocationProblem(SLAW, "10*E + K", synthesis=_syn("linear"))
    a = prob.allocate(1e3, round_integers=False)
    program = prob.state.conic_model(ALLOCATE)
    b = prob.allocate(2e3, round_integers=False)
    assert prob.state.conic_model(ALLOCATE) is program and program.solves == 2
    assert a.message.startswith("CLARABEL via cvxpy DCP (optimal)")
    assert (a.method, a.solver, b.status) == ("dcp", "CLARABEL dcp", "optimal")


# -- solve_numeric ----------------------------------------------------------------

def test_the_gp_message_says_what_ran() -> None:
    a = allocate(LAW, "6*N*D", 1e8, method="gp", round_integers=False)
    assert a.message.startswith("CLARABEL via cvxpy, the GP in log space (optimal), polished "
                                "by Newton on the KKT equations; KKT residual ")
    assert (a.method, a.solver, a.status) == ("gp", "CLARABEL gp", "optimal")
    assert a.values == pytest.approx(dict(zip(("D", "N"), _paper(1e8))), rel=1e-12)


def test_a_method_that_does_not_fit_is_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match=r"^method='dcp' does not fit this problem: it has no "
                                         r"synthetic data, so it is a geometric program; use "
                                         r"method='gp' or 'auto'$"):
        allocate(LAW, "N + D", 100.0, method="dcp")
    with pytest.raises(ValueError, match=r"^method='gp' does not fit this problem: synthetic "
                                         r"data makes it a DCP program in the counts; use "
                                         r"method='dcp' or 'auto'$"):
        allocate(SLAW, "10*E + K", 100.0, synthesis=_syn("linear"), method="gp")


def _residual_at(prob, B, E):
    values = {"E": E, "K": B - 100 * E}
    return prob.state.kkt(ALLOCATE, B, values)[0], values


@pytest.mark.parametrize(("level", "rescued"), [(1.2e-9, True), (0.8e-9, False)])
def test_the_rescue_runs_above_a_residual_of_1e9(monkeypatch, level, rescued) -> None:
    # Make the polish hand back a point whose residual is `level` (found by the secant on the
    # residual along the budget line) and record whether the rescue is called.
    law = AdditiveLaw(0.2, {"E": 3.0, "K": 4.0}, {"E": 0.45, "K": 0.2})
    prob = AllocationProblem(law, "100*E + K")
    B = 1e5
    E0 = prob.allocate(B, round_integers=False, method="gp").values["E"]
    r1, _ = _residual_at(prob, B, E0 * (1 + 1e-8))
    r0, _ = _residual_at(prob, B, E0)
    rel = 1e-8 * (level - r0) / (r1 - r0)
    res, point = _residual_at(prob, B, E0 * (1 + rel))
    assert res == pytest.approx(level, rel=0.1)
    calls = []
    monkeypatch.setattr(model_mod, "polish", lambda space_at, values: (point, False))
    monkeypatch.setattr(model_mod, "rescue",
                        lambda space_at, values: calls.append(values) or (values, True))
    a = prob.allocate(B, round_integers=False, method="gp")
    assert (calls == [point]) is rescued
    assert ("rescued by SLSQP" in a.message) is rescued
    assert "polished" not in a.message


def test_the_failure_message_in_full() -> None:
    prob = AllocationProblem(LAW, "6*N*D")
    text = solver_failure(prob.state, ALLOCATE, 1e8,
                          "Solver 'CLARABEL' failed.  Try another solver, "
                          "or solve with verbose=True for more information.")
    assert text == ("the allocate problem at budget 1e+08 could not be solved: rlscale posed it "
                    "as a geometric program (cvxpy, in log space) and ran the CLARABEL solver, "
                    "which failed (Solver 'CLARABEL' failed); try a budget nearer the spec's "
                    "typical scale, rescale the law's coefficients and the cost toward 1, or "
                    "tighten the bounds")
    syn = AllocationProblem(SLAW, "10*E + K", synthesis=_syn("linear"))
    text = solver_failure(syn.state, MIN_COST, 0.5, "numerical trouble. Try re-solving with x. ")
    assert text.startswith("the min_cost problem at target loss 0.5 could not be solved: rlscale "
                           "posed it as a convex program (cvxpy DCP) and ran the CLARABEL "
                           "solver, which failed (numerical trouble); try a target loss nearer")
    assert "which failed (no reason given)" in solver_failure(prob.state, ALLOCATE, 1.0, " .")


@pytest.mark.parametrize(("status", "x", "err", "match"), [
    ("infeasible", None, "InfeasibleError", r"^the allocate problem is infeasible \(solver "
                                            r"status infeasible\); check the bounds \{"),
    ("infeasible_inaccurate", None, "InfeasibleError", "is infeasible"),
    ("unbounded", None, "InfeasibleError", r"^the allocate problem is unbounded \(solver "
                                           r"status unbounded\); some axis can grow for free$"),
    ("unbounded_inaccurate", None, "InfeasibleError", "is unbounded"),
    ("solver_error", None, "SolverError", r"which failed \(status solver_error\)"),
    ("optimal", None, "SolverError", r"which failed \(status optimal\)"),
])
def test_each_solver_status_becomes_an_error_that_says_why(monkeypatch, status, x, err,
                                                           match) -> None:
    import rlscale

    monkeypatch.setattr(model_mod.GPModel, "solve", lambda self, *a: (status, x))
    with pytest.raises(getattr(rlscale, err), match=match):
        allocate(LAW, "N + D", 100.0, method="gp")


@pytest.mark.parametrize("exc", ["solver", "arithmetic"])
def test_a_solver_exception_is_reported_in_rlscales_words(monkeypatch, exc) -> None:
    import cvxpy as cp

    import rlscale

    def fail(self, *args):
        if exc == "solver":
            raise cp.error.SolverError("numerical trouble.  Try another solver, or ...")
        raise ZeroDivisionError("fraction")

    monkeypatch.setattr(model_mod.GPModel, "solve", fail)
    why = "numerical trouble" if exc == "solver" else "fraction"
    with pytest.raises(rlscale.SolverError, match=rf"which failed \({why}\); try a budget"):
        allocate(LAW, "N + D", 100.0, method="gp")
