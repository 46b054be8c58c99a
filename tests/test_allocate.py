"""Allocation solver against closed forms, brute force and its own duality."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlscale._errors import InfeasibleError
from rlscale.cli import main
from rlscale.optimize import AllocationProblem, allocate, kkt_residual, load_spec, min_cost
from rlscale.optimize._alloc_kkt import ALLOCATE
from rlscale.theory import (
    AdditiveLaw,
    MultiplicativeLaw,
    PassRateLaw,
    VarianceComponentsLaw,
    budget_shares,
    chinchilla_optimal,
    nested_optimum,
)

# Besiroglu et al. (2024) replication of Hoffmann et al. (2022) approach 3.
CHINCHILLA = {"E": 1.8172, "A": 482.01, "B": 2085.43, "alpha": 0.3478, "beta": 0.3658}


def _chinchilla_law() -> AdditiveLaw:
    c = CHINCHILLA
    return AdditiveLaw(c["E"], {"N": c["A"], "D": c["B"]}, {"N": c["alpha"], "D": c["beta"]})


@pytest.mark.parametrize("compute", [1e18, 5.76e23, 1e26])
def test_chinchilla_compute_optimal_matches_the_closed_form(compute: float) -> None:
    c = CHINCHILLA
    a = allocate(_chinchilla_law(), "6*N*D", compute)
    N, D = chinchilla_optimal(c["A"], c["B"], c["alpha"], c["beta"], compute)
    assert a.values["N"] == pytest.approx(N, rel=1e-6)
    assert a.values["D"] == pytest.approx(D, rel=1e-6)
    assert a.cost == pytest.approx(compute, rel=1e-9)
    assert a.kkt_residual <= 1e-6


@pytest.mark.parametrize("costs", [(100, 10, 1), (1, 10, 100), (10, 1, 100), (1, 1, 1),
                                   (5, 50, 0.5)])
def test_nested_variance_components_match_the_closed_form(costs) -> None:
    law = VarianceComponentsLaw(0.1, 4.0, 1.0, 1.0)
    cost = f"{costs[0]}*E + {costs[1]}*E*t + {costs[2]}*E*t*k"
    for budget in (1e3, 1e5):
        a = allocate(law, cost, budget)
        cf = nested_optimum(law, *costs, budget)
        for v in ("E", "t", "k"):
            assert a.values[v] == pytest.approx(cf.values[v], rel=1e-6)
        assert a.loss == pytest.approx(cf.loss, rel=1e-9)
        assert a.kkt_residual <= 1e-6


def test_cochran_two_stage_ratios() -> None:
    # Cochran (1977, ch. 10): m_opt = sqrt(c1 s2 / (c2 s1)) units per stage, stage by stage.
    law = VarianceComponentsLaw(0.0, 9.0, 4.0, 1.0)
    a = allocate(law, "50*E + 5*E*t + 0.2*E*t*k", 1e6)
    assert a.values["t"] == pytest.approx(math.sqrt(50 * 4.0 / (5 * 9.0)), rel=1e-6)
    assert a.values["k"] == pytest.approx(math.sqrt(5 * 1.0 / (0.2 * 4.0)), rel=1e-6)


def test_pooled_levels_sit_exactly_on_the_nesting_bound() -> None:
    law = VarianceComponentsLaw(0.0, 9.0, 4.0, 1.0)
    a = allocate(law, "50*E + 5*E*t + 2*E*t*k", 1e6)
    cf = nested_optimum(law, 50, 5, 2, 1e6)
    assert cf.pooled == ((0,), (1, 2))
    assert a.values["k"] == pytest.approx(1.0, rel=1e-9)
    assert a.values["t"] == pytest.approx(cf.values["t"], rel=1e-6)
    assert a.kkt_residual <= 1e-6


def test_budget_shares_match_the_cobb_douglas_oracle() -> None:
    law = AdditiveLaw(0.2, {"environments": 3.0, "tasks": 2.0, "trajectories": 4.0},
                      {"environments": 0.45, "tasks": 0.3, "trajectories": 0.2})
    a = allocate(law, "100*environments + 10*tasks + trajectories", 1e6)
    want = budget_shares(law, a.values)
    for axis, share in want.items():
        assert a.shares[axis] == pytest.approx(share, rel=1e-8)


def test_min_cost_and_allocate_are_dual() -> None:
    law = AdditiveLaw(0.2, {"E": 3.0, "K": 4.0}, {"E": 0.45, "K": 0.2})
    a = allocate(law, "100*E + K", 1e5)
    b = min_cost(law, "100*E + K", a.loss)
    assert b.cost == pytest.approx(1e5, rel=1e-8)
    assert b.values["E"] == pytest.approx(a.values["E"], rel=1e-6)
    assert b.kkt_residual <= 1e-6
    # The log-log multipliers are reciprocal: d log(L-L_inf)/d log B * d log C/d log(L-L_inf) = 1.
    assert a.duals["budget"] * b.duals["target"] == pytest.approx(1.0, rel=1e-6)


def test_no_random_feasible_allocation_beats_the_solver(rng) -> None:
    law = AdditiveLaw(0.1, {"E": 2.0, "t": 1.0, "k": 3.0}, {"E": 0.5, "t": 0.3, "k": 0.25})
    prob = AllocationProblem(law, "100*E + 10*E*t + E*t*k", bounds={"E": (1, 300)})
    a = prob.allocate(1e6)
    x = {v: np.exp(rng.uniform(0, 10, 20000)) for v in ("E", "t", "k")}
    feasible = (prob.cost_at(x) <= 1e6) & (x["E"] >= 1) & (x["E"] <= 300)
    assert feasible.sum() > 100
    assert np.all(prob.loss_at(x)[feasible] >= a.loss * (1 - 1e-12))


def test_bounds_bind_and_appear_in_the_duals() -> None:
    law = AdditiveLaw(0.2, {"E": 3.0, "K": 4.0}, {"E": 0.45, "K": 0.2})
    a = allocate(law, "100*E + K", 1e7, bounds={"E": (None, 500)})
    assert a.values["E"] == pytest.approx(500, rel=1e-9)
    assert "E<=500" in a.duals
    assert a.kkt_residual <= 1e-6
    assert a.rounded["E"] == 500
    assert a.rounded_cost <= 1e7
    assert a.rounded_loss >= a.loss


def test_rounded_allocation_is_the_best_floor_ceiling_combination() -> None:
    law = VarianceComponentsLaw(0.1, 4.0, 1.0, 1.0)
    prob = AllocationProblem(law, "100*E + 10*E*t + E*t*k")
    a = prob.allocate(1e4)
    best = (math.inf, None)
    for E in (math.floor(a.values["E"]), math.ceil(a.values["E"])):
        for t in (math.floor(a.values["t"]), math.ceil(a.values["t"])):
            for k in (math.floor(a.values["k"]), math.ceil(a.values["k"])):
                vals = {"E": E, "t": max(t, 1), "k": max(k, 1)}
                if float(prob.cost_at(vals)) <= 1e4 and float(prob.loss_at(vals)) < best[0]:
                    best = (float(prob.loss_at(vals)), vals)
    assert a.rounded == best[1]
    assert a.rounded_loss == pytest.approx(best[0], rel=1e-14)


def test_sweep_reuses_one_compiled_problem_and_matches_single_solves() -> None:
    law = VarianceComponentsLaw(0.1, 4.0, 1.0, 1.0)
    prob = AllocationProblem(law, "100*E + 10*E*t + E*t*k")
    budgets = np.logspace(3, 7, 6)
    # This law has a closed form; method="gp" keeps the GP path this test is about.
    out = prob.sweep(budgets, method="gp")
    compiled = prob.state.conic_model(ALLOCATE).problem
    prob.sweep(budgets[:2], method="gp")
    assert prob.state.conic_model(ALLOCATE).problem is compiled
    for a, b in zip(out, budgets):
        assert a.loss == pytest.approx(nested_optimum(law, 100, 10, 1, b).loss, rel=1e-9)


def test_substitution_allocates_a_law_on_totals_over_nested_variables() -> None:
    law = AdditiveLaw(0.0, {"environments": 4.0, "tasks": 1.0, "trajectories": 1.0},
                      {"environments": 1.0, "tasks": 1.0, "trajectories": 1.0})
    a = allocate(law, "100*E + 10*E*t + E*t*k", 1e4, bounds={"t": (1, None), "k": (1, None)},
                 substitute={"environments": "E", "tasks": "E*t", "trajectories": "E*t*k"})
    cf = nested_optimum(VarianceComponentsLaw(0.0, 4.0, 1.0, 1.0), 100, 10, 1, 1e4)
    assert a.values["E"] == pytest.approx(cf.values["E"], rel=1e-6)
    assert a.effective["tasks"] == pytest.approx(cf.values["E"] * cf.values["t"], rel=1e-6)


@pytest.mark.parametrize("law", [MultiplicativeLaw(2.0, {"E": 0.3, "K": 0.1}),
                                 PassRateLaw(0.8, {"E": 50.0, "K": 5.0}, {"E": 1.0, "K": 0.5})])
def test_other_law_families_allocate_with_kkt(law) -> None:
    a = allocate(law, "10*E + K", 1e5)
    assert a.kkt_residual <= 1e-6
    assert a.cost == pytest.approx(1e5, rel=1e-9)


def test_kkt_residual_detects_a_suboptimal_point() -> None:
    res, _ = kkt_residual(np.array([-1.0, -2.0]), [(0.0, np.array([1.0, 1.0]))])
    # Best mu = 1.5 leaves stationarity (0.5, -0.5); relative to |grad| = 2 that is 0.25.
    assert res == pytest.approx(0.25, rel=1e-9)


def test_infeasible_and_unbounded_problems_say_why() -> None:
    law = AdditiveLaw(0.2, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.5})
    with pytest.raises(InfeasibleError, match=r"target loss 0\.18 is below the law's floor 0\.2"):
        min_cost(law, "E + K", 0.18)
    with pytest.raises(InfeasibleError, match="equal to the law's floor"):
        min_cost(law, "E + K", 0.2)
    with pytest.raises(InfeasibleError, match=r"below the lowest loss the bounds allow"):
        min_cost(law, "E + K", 0.21, bounds={"E": (1, 100), "K": (1, 100)})
    with pytest.raises(InfeasibleError, match=r"budget 10 is below the cost 101 of the smallest"):
        allocate(law, "E + K", 10, bounds={"E": (1, None), "K": (100, None)})
    with pytest.raises(InfeasibleError, match="axis 'K' has no cost and no upper bound"):
        allocate(law, "E", 100)
    with pytest.raises(ValueError, match="budget must be > 0"):
        allocate(law, "E + K", 0.0)
    with pytest.raises(ValueError, match="unknown axis 'Q'"):
        allocate(law, "E + K + Q", 10.0)
    with pytest.raises(ValueError, match="subtraction"):
        allocate(law, "E - K", 10.0)
    with pytest.raises(ValueError, match="decreases as K grows"):
        allocate(law, "E + 1/K", 10.0)
    with pytest.raises(ValueError, match="min 5 exceeds max 1"):
        allocate(law, "E + K", 10.0, bounds={"E": (5, 1)})
    with pytest.raises(ValueError, match="bounds name unknown axis 'Z'"):
        allocate(law, "E + K", 10.0, bounds={"Z": (1, 2)})
    with pytest.raises(TypeError, match="law must be"):
        allocate("additive", "E + K", 10.0)


def test_cli_allocate_budget_target_and_sweep(tmp_path, capsys) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[law]\nfamily = "variance_components"\nfloor = 0.1\nsigma2_env = 4.0\n'
        'sigma2_task = 1.0\nsigma2_traj = 1.0\n[cost]\nexpression = "100*E + 10*E*t + E*t*k"\n'
        '[baseline]\nscaled = "k"\nfixed = { E = 10, t = 2 }\n')
    assert main(["allocate", str(spec), "--budget", "1e4"]) == 0
    out = capsys.readouterr().out
    assert "KKT residual" in out and "eta =" in out
    assert main(["allocate", str(spec), "--target", "0.2", "--out", str(tmp_path / "t")]) == 0
    assert (tmp_path / "t" / "allocation.json").is_file()
    assert main(["allocate", str(spec), "--sweep", "1e4:1e6:3", "--no-progress",
                 "--out", str(tmp_path / "s")]) == 0
    lines = (tmp_path / "s" / "sweep.csv").read_text().splitlines()
    assert lines[0].startswith("budget,loss,E,k,t,kkt_residual,baseline_loss,eta")
    assert len(lines) == 4
    assert (tmp_path / "s" / "sweep.png").stat().st_size > 1000
    assert main(["allocate", str(spec), "--target", "0.05"]) == 2
    assert "below the law's floor 0.1" in capsys.readouterr().err
    assert main(["allocate", str(spec), "--sweep", "1e6:1e4:3"]) == 2


def test_example_spec_loads_and_solves() -> None:
    from pathlib import Path

    spec = load_spec(Path(__file__).resolve().parents[1] / "examples" / "allocate.toml")
    a = spec.problem().allocate(1e6)
    assert a.kkt_residual <= 1e-6
    assert a.values["E"] == pytest.approx(500, rel=1e-9)  # the real-environment cap binds


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('[law]\nfamily = "additive"\nfloor = 0.1\ncoefficients = {E = 1.0}\n'
         'exponents = {E = 0.5}\n[cost]\nexpresion = "E"', "unknown key 'expresion' in \\[cost\\]"),
        ('[law]\nfamily = "additive"\nfloor = 0.1\ncoefficients = {E = 1.0}\n'
         'exponents = {E = 0.5}\n[cost]\nexpression = "E"\n[bounds]\nE = {maximum = 3}',
         "unknown key 'maximum'"),
        ('[cost]\nexpression = "E"', "needs a \\[law\\] table"),
        ('[law\n', "invalid TOML"),
    ],
)
def test_spec_errors_name_the_key(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        load_spec(text)
