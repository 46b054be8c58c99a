"""optimize/_allocate.py pinned by hand: the problem's evaluations (effective axes, loss, cost,
term matrices), its lowest loss and cheapest allocation, the budget and target checks at
their 1e-12 edges, the budget list, the frontier and the fields of each result."""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import pytest

from rlscale._errors import InfeasibleError
from rlscale.optimize import AllocationProblem, allocate, min_cost
from rlscale.optimize._alloc_kkt import ALLOCATE, MIN_COST
from rlscale.theory import AdditiveLaw, MultiplicativeLaw, SynthesisMethod

LAW = AdditiveLaw(0.2, {"E": 1.0, "K": 2.0}, {"E": 0.5, "K": 0.25})
SLAW = AdditiveLaw(0.1, {"E": 2.0, "K": 1.0}, {"E": 0.5, "K": 0.3})


def _syn(kind="linear", name="gen"):
    sat = None if kind == "linear" else 2.0
    return [SynthesisMethod("E", unit_cost=1.5, rho=0.8, saturation=sat, kind=kind, name=name)]


def test_evaluations_with_substitution_and_synthesis() -> None:
    law = AdditiveLaw(0.15, {"environments": 2.0, "tasks": 1.5},
                      {"environments": 0.45, "tasks": 0.3})
    prob = AllocationProblem(law, "100*E + 10*E*t", {"t": (1, None)},
                             substitute={"environments": "E", "tasks": "3*E*t"})
    x = {"E": np.array([4.0, 2.0]), "t": np.array([5.0, 1.0])}
    eff = prob.effective(x)
    assert eff["environments"].tolist() == [4.0, 2.0] and eff["tasks"].tolist() == [60.0, 6.0]
    assert prob.loss_at(x) == pytest.approx(
        0.15 + 2.0 * np.array([4.0, 2.0]) ** -0.45 + 1.5 * np.array([60.0, 6.0]) ** -0.3,
        rel=1e-14)
    assert prob.cost_at(x).tolist() == [600.0, 220.0]
    syn = AllocationProblem(SLAW, "10*E + K + 7", synthesis=_syn())
    v = {"E": 30.0, "K": 200.0, "gen": 45.0}
    assert syn.effective(v) == {"E": pytest.approx(66.0, rel=1e-15), "K": 200.0}
    assert float(syn.cost_at(v)) == 300.0 + 200.0 + 7.0 + 67.5
    assert float(syn.loss_at(v)) == pytest.approx(0.1 + 2 * 66.0 ** -0.5 + 200.0 ** -0.3,
                                                  rel=1e-14)
    with pytest.raises(ValueError, match=r"values\['E'\]"):
        syn.cost_at({"E": -1.0, "K": 1.0, "gen": 0.0})


def test_term_matrices_by_hand() -> None:
    prob = AllocationProblem(LAW, "6*E*K + 2*K")
    A, b = prob.state.law_terms
    assert prob.variables == ["E", "K"]
    assert A.tolist() == [[-0.5, 0.0], [0.0, -0.25]]
    assert b.tolist() == pytest.approx([0.0, math.log(2.0)], abs=1e-16)
    A, b = prob.state.cost_terms
    assert A.tolist() == [[1.0, 1.0], [0.0, 1.0]]
    assert b.tolist() == pytest.approx([math.log(6.0), math.log(2.0)], rel=1e-16)
    assert prob.state.cost_terms[0] is A                 # kept


def test_lowest_loss_over_the_bounds() -> None:
    # 0.2 + 100^-1/2 + 2 * 16^-1/4 = 1.3 with both capped; K open drops its term.
    assert AllocationProblem(LAW, "E + K", {"E": (None, 100), "K": (None, 16)}
                             ).lowest_loss() == pytest.approx(1.3, rel=1e-15)
    assert AllocationProblem(LAW, "E + K", {"E": (None, 100)}).lowest_loss() == \
        pytest.approx(0.3, rel=1e-15)
    caps = {"E": (None, 100), "K": (None, 50)}
    # Unbounded linear synthesis reaches the floor.
    assert AllocationProblem(SLAW, "10*E + K", caps, synthesis=_syn()).lowest_loss() == 0.1
    # Bounded linear synthesis: E_eff = 100 + 0.8 * 10.
    prob = AllocationProblem(SLAW, "10*E + K", {**caps, "gen": (None, 10)}, synthesis=_syn())
    assert prob.lowest_loss() == pytest.approx(0.1 + 2 * 108.0 ** -0.5 + 50.0 ** -0.3,
                                               rel=1e-14)
    # Saturating synthesis adds at most rho * S = 1.6 however much is made.
    prob = AllocationProblem(SLAW, "10*E + K", caps, synthesis=_syn("saturating"))
    assert prob.lowest_loss() == pytest.approx(0.1 + 2 * 101.6 ** -0.5 + 50.0 ** -0.3,
                                               rel=1e-14)


def test_the_cheapest_allocation_and_the_budget_check_at_1e12() -> None:
    syn = [SynthesisMethod("E", unit_cost=1.5, rho=0.8, name="gen")]
    prob = AllocationProblem(SLAW, "5*E + 2*K + 7", {"E": (2, None), "K": (3, None),
                                                     "gen": (1, None)}, synthesis=syn)
    assert prob.cheapest() == (10.0 + 6.0 + 7.0 + 1.5, {"E": 2.0, "K": 3.0, "gen": 1.0})
    prob._check_budget(24.5 * (1 - 0.8e-12))
    prob._check_budget(24.5 * (1 - 1e-12))                 # the edge itself is accepted
    with pytest.raises(InfeasibleError, match=r"^budget 24\.5 is below the cost 24\.5 of the "
                                              r"smallest allocation the bounds allow \(E=2, "
                                              r"K=3, gen=1\)$"):
        prob._check_budget(24.5 * (1 - 1.2e-12))


def test_budget_arguments() -> None:
    prob = AllocationProblem(LAW, "E + K")
    assert prob.allocate(100).values == pytest.approx(prob.allocate(100.0).values, rel=0)
    for bad, err in ((0.0, ValueError), (math.inf, ValueError), (-1.0, ValueError),
                     ("100", TypeError)):
        with pytest.raises(err, match="budget"):
            prob.allocate(bad)
    with pytest.raises(ValueError, match="method must be one of"):
        prob.allocate(100.0, method="newton")


def test_target_checks_name_the_floor_and_the_lowest_loss() -> None:
    prob = AllocationProblem(LAW, "E + K", {"E": (None, 100), "K": (None, 16)})
    with pytest.raises(InfeasibleError, match=r"^target loss 0\.1 is below the law's floor 0\.2"):
        prob.min_cost(0.1)
    with pytest.raises(InfeasibleError, match=r"^target loss 0\.2 is equal to the law's floor"):
        prob.min_cost(0.2)
    with pytest.raises(InfeasibleError, match=r"^target loss 1\.3 is below the lowest loss the "
                                              r"bounds allow, 1\.3 \(with E=100, K=16\)$"):
        prob.min_cost(1.3 * (1 + 0.8e-12))
    a = prob.min_cost(1.4, round_integers=False)
    assert a.loss == pytest.approx(1.4, rel=1e-9) and a.target == 1.4 and a.budget is None
    with pytest.raises(TypeError, match="target"):
        prob.min_cost("1.4")


def test_budget_lists() -> None:
    prob = AllocationProblem(LAW, "E + K")
    arr = np.array([10.0, 20.0])
    assert prob._budgets(arr) is arr
    assert prob._budgets((10, 20.0)).tolist() == [10.0, 20.0]
    assert prob._budgets(b for b in (10.0,)).tolist() == [10.0]
    assert prob._budgets(np.array([10, 20])).tolist() == [10.0, 20.0]
    assert prob._budgets([5.0] * 10_000).size == 10_000
    for bad, err, match in (("10", TypeError, "budgets must be a sequence of numbers"),
                            ([5.0] * 10_001, ValueError, "at most 10000 budgets; got shape "
                                                         r"\(10001,\)"),
                            ([[1.0]], ValueError, r"got shape \(1, 1\)"),
                            ([1.0, 0.0], ValueError, "budgets"),
                            (np.ones((2, 2)), ValueError, "flat list")):
        with pytest.raises(err, match=match):
            prob._budgets(bad)


def test_sweep_reports_progress_on_stderr(capsys) -> None:
    prob = AllocationProblem(LAW, "E + K")
    out = prob.sweep([10.0, 20.0], progress=True)
    assert [a.budget for a in out] == [10.0, 20.0]
    assert "budgets" in capsys.readouterr().err


def test_a_frontier_without_a_closed_form_is_solved_budget_by_budget() -> None:
    prob = AllocationProblem(LAW, "E + K")                  # additive under a sum: the GP
    f = prob.frontier([100.0, 1000.0])
    assert f.method == ("gp", "gp")
    E, K = f.values["E"], f.values["K"]
    # stationarity of 1/sqrt(E) + 2 K^-1/4 under E + K = B: E^-3/2 / 2 = K^-5/4 / 2.
    assert (E ** -1.5 / K ** -1.25).tolist() == pytest.approx([1.0, 1.0], rel=1e-10)
    assert (E + K).tolist() == pytest.approx([100.0, 1000.0], rel=1e-12)
    assert f.loss == pytest.approx(0.2 + E ** -0.5 + 2 * K ** -0.25, rel=1e-14)
    assert f.cost == pytest.approx([100.0, 1000.0], rel=1e-12)
    assert np.all(f.kkt_residual <= 1e-12)
    assert f.budgets.tolist() == [100.0, 1000.0]


def test_the_result_fields_of_each_sense() -> None:
    prob = AllocationProblem(LAW, "E + K")
    a = prob.allocate(100.0, method="gp")
    assert (a.budget, a.target, a.success, a.method) == (100.0, None, True, "gp")
    assert a.message.endswith(f"; KKT residual {a.kkt_residual:.2g}")
    assert set(a.duals) == {"budget"} and a.seconds > 0
    assert a.rounded is not None and a.rounded_cost <= 100.0
    b = prob.min_cost(a.loss, method="gp", round_integers=False)
    assert (b.budget, b.target, b.rounded) == (None, a.loss, None)
    assert b.cost == pytest.approx(100.0, rel=1e-9)


def test_capped_variables_may_leave_budget_unspent() -> None:
    # Every variable on its cap: cost 150 < budget 1e4 is the optimum, not a float64 failure
    # (the polish puts the conic point on the caps exactly).
    prob = AllocationProblem(LAW, "E + K", {"E": (None, 100), "K": (None, 50)})
    a = prob.allocate(1e4, method="gp", round_integers=False)
    assert a.values == pytest.approx({"E": 100.0, "K": 50.0}, rel=1e-12)
    assert a.cost == pytest.approx(150.0, rel=1e-12)


def test_only_the_gp_refuses_budgets_beyond_float64_resolution() -> None:
    law = AdditiveLaw(0.15, {"environments": 2.0, "tasks": 1.5, "trajectories": 1.2},
                      {"environments": 0.45, "tasks": 0.3, "trajectories": 0.2})
    sub = {"environments": "E", "tasks": "E*t", "trajectories": "E*t*k"}
    bounds = {"E": (1, 500), "t": (1, None), "k": (1, None)}
    with pytest.raises(InfeasibleError, match=r"^budget 1e\+308 is beyond what float64 can "
                                              r"resolve for this law"):
        allocate(law, "100*E + 10*E*t + E*t*k", 1e308, bounds, substitute=sub)


def test_pooled_nesting_takes_the_closed_form_only_with_unit_lower_bounds() -> None:
    # Costs (50, 5, 2) pool trajectories into tasks (k = 1), which needs k >= 1 imposed:
    # k >= 0.999 is not enough, k >= 1 is (and the GP's answer then has k on that bound).
    law = AdditiveLaw(0.0, {"environments": 9.0, "tasks": 4.0, "trajectories": 1.0},
                      dict.fromkeys(("environments", "tasks", "trajectories"), 1.0))
    sub = {"environments": "E", "tasks": "E*t", "trajectories": "E*t*k"}
    cost = "50*E + 5*E*t + 2*E*t*k"
    assert AllocationProblem(law, cost, {"t": (1, None), "k": (0.999, None)},
                             substitute=sub).closed_form is None
    prob = AllocationProblem(law, cost, {"t": (1, None), "k": (1, None)}, substitute=sub)
    assert prob.closed_form.needs_unit_lower == (1,)
    assert prob.variables[1] == "k"
    a = prob.allocate(1e6, round_integers=False)
    g = prob.allocate(1e6, round_integers=False, method="gp")
    assert a.method == "closed_form" and a.values["k"] == 1.0
    assert a.values == pytest.approx(g.values, rel=1e-10)


def test_min_cost_verb_matches_the_hand_optimum() -> None:
    # min E + K with 1/sqrt(E) + 1/sqrt(K) <= 0.2 (floor 0.2, target 0.4): E = K = 100.
    law = AdditiveLaw(0.2, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.5})
    a = min_cost(law, "E + K", 0.4, method="gp", round_integers=False)
    assert a.values == pytest.approx({"E": 100.0, "K": 100.0}, rel=1e-12)
    assert a.cost == pytest.approx(200.0, rel=1e-12)


def test_the_verbs_round_by_default() -> None:
    # min E + K with 1/sqrt(E) + 1/sqrt(K) <= 0.2: E = K = 100 exactly, already integers.
    law = AdditiveLaw(0.2, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.5})
    a = min_cost(law, "E + K", 0.4, method="gp")
    assert a.rounded == {"E": 100, "K": 100} and a.rounded_cost == 200.0
    # allocate within 250: E = K = 125, integers too; the rounded loss is the law's there.
    b = allocate(law, "E + K", 250.0, method="gp")
    assert b.rounded == {"E": 125, "K": 125}
    assert b.rounded_loss == pytest.approx(0.2 + 2 / math.sqrt(125.0), rel=1e-15)


class _NotGP(AdditiveLaw):
    properties = dataclasses.replace(AdditiveLaw.properties, gp_compatible=False)


@pytest.mark.parametrize(("make", "err", "match"), [
    (lambda: AllocationProblem("law", "E + K"), TypeError,
     r"^law must be a rlscale.theory law \(AdditiveLaw, ...\); got str$"),
    (lambda: AllocationProblem(_NotGP(0.2, {"E": 1.0}, {"E": 0.5}), "E"), ValueError,
     r"^_NotGP is not GP-compatible$"),
    (lambda: AllocationProblem(LAW, "E + K", synthesis="gen"), TypeError,
     r"^synthesis must be a list of SynthesisMethod; got synthesis='gen'$"),
    (lambda: AllocationProblem(LAW, "E + K", synthesis=5), TypeError, "synthesis=5"),
    (lambda: AllocationProblem(LAW, "E + K", synthesis=["gen"]), TypeError,
     "synthesis entries must be SynthesisMethod; got 'gen'"),
    (lambda: AllocationProblem(LAW, "E + K", synthesis=[SynthesisMethod("Q", 1.0, 0.5)]),
     ValueError, r"^synthesis method 'Q_synthetic' targets axis 'Q', which the law does not "
                 r"have \(axes: \['E', 'K'\]\)$"),
    (lambda: AllocationProblem(LAW, "E + K", substitute={"E": "E"}, synthesis=_syn()),
     ValueError, "^synthesis and substitute cannot be combined"),
    (lambda: AllocationProblem(LAW, "x + K", substitute={"E": 3}), TypeError,
     r"^substitute\['E'\] must be a monomial string such as 'E\*t'; got 3$"),
    (lambda: AllocationProblem(LAW, "x + K", substitute={"Q": "x"}), ValueError,
     r"^substitute names 'Q', not an axis of the law \(axes: \['E', 'K'\]\)$"),
    (lambda: AllocationProblem(LAW, "x + K", substitute={"E": "x + y"}), ValueError,
     r"^substitute\['E'\] = 'x \+ y' must be a monomial such as 'E\*t'$"),
    (lambda: AllocationProblem(LAW, "E + Q"), ValueError,
     r"^cost E \+ Q mentions unknown axis 'Q'; the decision variables are \['E', 'K'\]$"),
    (lambda: AllocationProblem(LAW, "E + E*K**-1"), ValueError,
     r"^cost term E\*K\*\*-1 decreases as K grows; costs must not fall with more data$"),
    (lambda: AllocationProblem(LAW, "E + K", synthesis=_syn(name="K")), ValueError,
     r"^synthesis method names clash with axes: \['K'\]$"),
    (lambda: AllocationProblem(LAW, "E**2 + K", synthesis=_syn()), ValueError,
     r"^synthetic data needs a cost linear in the counts \(e.g. '100\*environments \+ "
     r"trajectories'\); got E\*\*2 \+ K$"),
    (lambda: AllocationProblem(LAW, "E*K + K", synthesis=_syn()), ValueError,
     "synthetic data needs a cost linear in the counts"),
    (lambda: AllocationProblem(MultiplicativeLaw(1.0, {"E": 0.5, "K": 0.5}), "E + K",
                               synthesis=_syn()), ValueError,
     r"^synthetic data needs a law whose terms each involve one axis \(additive or "
     r"pass-rate\); term E\*\*-0.5\*K\*\*-0.5 does not$"),
    (lambda: AllocationProblem(LAW, "E", {"E": (None, 10)}), InfeasibleError,
     r"^axis 'K' has no cost and no upper bound, so the loss falls to the floor 0.2 for "
     r"free; add K to the cost or bound it$"),
])
def test_each_construction_error_names_its_cause(make, err, match) -> None:
    with pytest.raises(err, match=match):
        make()


def test_constructions_at_the_edges_of_those_checks() -> None:
    # a concave cost power is still a cost that grows; a constant term is linear; an uncosted
    # axis with a cap is fine.
    assert AllocationProblem(LAW, "E**0.5 + K").variables == ["E", "K"]
    assert AllocationProblem(LAW, "3 + E + K", synthesis=_syn()).variables == ["E", "K", "gen"]
    assert AllocationProblem(LAW, "E", {"K": (None, 10)}).bounds["K"] == (0.0, 10.0)
    prob = AllocationProblem(LAW, "E + K")
    assert prob._budgets([0.5]).tolist() == [0.5]
    a = prob.allocate(np.float64(0.5), round_integers=False)
    assert a.budget == 0.5 and a.cost == pytest.approx(0.5, rel=1e-9)
    with pytest.raises(ValueError, match="budgets"):
        prob._budgets(np.array([1.0, np.inf]))
    # a target exactly at the lowest loss's 1e-12 edge is refused
    capped = AllocationProblem(LAW, "E + K", {"E": (None, 100), "K": (None, 16)})
    with pytest.raises(InfeasibleError, match="below the lowest loss the bounds allow"):
        capped.min_cost(capped.lowest_loss() * (1 + 1e-12))
    # ... and 1.2e-12 above it is passed on to the solver (stubbed here)
    capped._solve = lambda *args: "to the solver"
    assert capped.min_cost(capped.lowest_loss() * (1 + 1.2e-12)) == "to the solver"


def test_lowest_loss_takes_the_floor_of_an_axis_with_a_positive_power() -> None:
    # tasks = E / t: the term 1.0 * E^-0.3 t^0.3 is least at E's cap and t's floor.
    law = AdditiveLaw(0.1, {"tasks": 1.0}, {"tasks": 0.3})
    prob = AllocationProblem(law, "E + t", {"E": (None, 100), "t": (2, 10)},
                             substitute={"tasks": "E*t**-1"})
    assert prob.lowest_loss() == pytest.approx(0.1 + 100 ** -0.3 * 2 ** 0.3, rel=1e-14)


@pytest.mark.parametrize(("level", "success"), [(1.2e-6, False), (0.8e-6, True)])
def test_success_means_a_kkt_residual_of_at_most_1e6(monkeypatch, level, success) -> None:
    # The polish is made to hand back a point on the budget line whose residual is `level`
    # (placed by the secant along the line) and the rescue to keep it.
    from rlscale.optimize import _alloc_model

    law = AdditiveLaw(0.2, {"E": 3.0, "K": 4.0}, {"E": 0.45, "K": 0.2})
    prob = AllocationProblem(law, "100*E + K")
    B = 1e5
    E0 = prob.allocate(B, round_integers=False, method="gp").values["E"]

    def at(E):
        v = {"E": E, "K": B - 100 * E}
        return prob.state.kkt(ALLOCATE, B, v)[0], v

    r0, r1 = at(E0)[0], at(E0 * (1 + 1e-6))[0]
    res, point = at(E0 * (1 + 1e-6 * (level - r0) / (r1 - r0)))
    assert res == pytest.approx(level, rel=0.05)
    monkeypatch.setattr(_alloc_model, "polish", lambda space_at, values: (point, False))
    monkeypatch.setattr(_alloc_model, "rescue", lambda space_at, values: (values, False))
    a = prob.allocate(B, round_integers=False, method="gp")
    assert a.kkt_residual == res and a.success is success


def test_kkt_grades_any_point_in_either_sense() -> None:
    law = AdditiveLaw(0.2, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.5})
    prob = AllocationProblem(law, "E + K")
    # At (50, 50): d log P/d log x = -1/4 each, d log C/d log x = 1/2 each, so mu = 1/2
    # (allocate) and, with the roles swapped, mu = 2 (min_cost at the loss reached there).
    residual, duals = prob.kkt({"E": 50.0, "K": 50.0}, budget=100.0)
    assert residual == pytest.approx(0.0, abs=1e-15) and duals == {"budget": pytest.approx(0.5)}
    residual, duals = prob.kkt({"E": 50.0, "K": 50.0}, target=0.2 + 2 * 50 ** -0.5)
    assert residual == pytest.approx(0.0, abs=1e-15) and duals == {"target": pytest.approx(2.0)}
    # Off the optimum: stationarity |g_f + mu g_c|_inf / |g_f|_inf with mu by least squares.
    E, K = 80.0, 20.0
    P = E ** -0.5 + K ** -0.5
    gf = np.array([-0.5 * E ** -0.5, -0.5 * K ** -0.5]) / P
    gc = np.array([E, K]) / (E + K)
    mu = -gf @ gc / (gc @ gc)
    residual, duals = prob.kkt({"E": E, "K": K}, budget=100.0)
    assert residual == pytest.approx(np.max(np.abs(gf + mu * gc)) / np.max(np.abs(gf)),
                                     rel=1e-12)
    assert duals["budget"] == pytest.approx(mu, rel=1e-12)
    # over budget: the violation log(C/B) is the residual when it is larger
    assert prob.kkt({"E": 50.0, "K": 50.0}, budget=10.0)[0] == pytest.approx(math.log(10.0))
    assert prob.kkt({"E": 50.0, "K": 50.0}, budget=100.0) == prob.state.kkt(
        ALLOCATE, 100.0, {"E": 50.0, "K": 50.0})


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({}, TypeError, "exactly one of budget= and target="),
    ({"budget": 1.0, "target": 0.5}, TypeError, "exactly one of budget= and target="),
    ({"target": 0.2}, ValueError, r"target must be > 0\.2"),
    ({"budget": -1.0}, ValueError, "budget must be > 0"),
])
def test_kkt_refuses_a_missing_or_impossible_constraint(kwargs, error, match) -> None:
    prob = AllocationProblem(LAW, "E + K")
    with pytest.raises(error, match=match):
        prob.kkt({"E": 1.0, "K": 1.0}, **kwargs)
    with pytest.raises(ValueError, match="missing"):
        prob.kkt({"E": 1.0}, budget=2.0)


# ---------------------------------------------------------------- the fast path's route (issue 25)
def _routes(monkeypatch) -> list[tuple[str, bool]]:
    """Record each ``_fast`` test: the sense and whether the closed form's fast path was taken."""
    seen: list[tuple[str, bool]] = []
    real = AllocationProblem._fast

    def recording(self, sense, method, low, high):
        plan = real(self, sense, method, low, high)
        seen.append((sense.name, plan is not None))
        return plan

    monkeypatch.setattr(AllocationProblem, "_fast", recording)
    return seen


def test_a_numpy_scalar_takes_the_route_of_a_float(monkeypatch) -> None:
    """``min_cost(np.float64(2.2))`` and ``min_cost(2.2)`` both take the closed form's fast
    path (issue 25: a ``type(x) is float`` test once sent numpy's scalar elsewhere), with
    the same digits; likewise ``allocate``.  The value is the Lagrange optimum by hand:
    L = 0.2 + 2/sqrt(E) + 4/sqrt(K) at cost E K = B has E dL/dE = K dL/dK, i.e.
    E^-1/2 = 2 K^-1/2: K = 4E, so E = sqrt(B)/2, K = 2 sqrt(B) and
    L = 0.2 + 4 sqrt(2) B^-1/4."""
    law = AdditiveLaw(0.2, {"E": 2.0, "K": 4.0}, {"E": 0.5, "K": 0.5})
    prob = AllocationProblem(law, "E*K", {"E": (1, 1e4), "K": (1, 1e4)})
    seen = _routes(monkeypatch)
    for sense, verb, x in (("min_cost", prob.min_cost, 2.2), ("allocate", prob.allocate, 400.0)):
        plain = verb(x, round_integers=False)
        numpy = verb(np.float64(x), round_integers=False)
        assert seen == [(sense, True), (sense, True)]
        seen.clear()
        assert plain.values == numpy.values and plain.method == numpy.method == "closed_form"
    a = prob.allocate(400.0, round_integers=False)
    assert a.values["E"] == pytest.approx(10.0, rel=1e-13)
    assert a.values["K"] == pytest.approx(40.0, rel=1e-13)
    m = prob.min_cost(2.2, round_integers=False)  # the cost B with L(B) = 2.2
    budget = (4 * math.sqrt(2) / (2.2 - 0.2)) ** 4
    assert m.cost == pytest.approx(budget, rel=1e-12)


def test_the_fast_interval_is_open_on_both_sides_of_target_minus_floor(monkeypatch) -> None:
    """min_cost's fast path holds exactly for ``low < target - floor < high`` of the closed
    plan: just inside either end it is taken, just outside it is not (and the general
    solve still meets the bounds)."""
    law = AdditiveLaw(0.2, {"E": 1.0, "K": 2.0}, {"E": 0.5, "K": 0.5})
    bounds = {"E": (1, 1e4), "K": (1, 1e4)}
    prob = AllocationProblem(law, "E*K", bounds)
    plan = prob.state.closed_plan(MIN_COST)
    assert plan.floor == 0.2
    seen = _routes(monkeypatch)
    for gap, inside in ((plan.low * (1 + 1e-6), True), (plan.low * (1 - 1e-6), False),
                        (plan.high * (1 - 1e-6), True), (plan.high * (1 + 1e-6), False)):
        seen.clear()
        out = prob.min_cost(0.2 + gap, round_integers=False)
        assert seen[0] == ("min_cost", inside), gap
        assert all(lo * (1 - 1e-9) <= out.values[v] <= hi * (1 + 1e-9)
                   for v, (lo, hi) in bounds.items())
        assert out.loss == pytest.approx(0.2 + gap, rel=1e-9)
    # Issue 25: open means open.  allocate's plan has floor 0, so a budget can be an end
    # exactly: not taken there, taken one float inside.
    budget_plan = prob.state.closed_plan(ALLOCATE)
    assert budget_plan.floor == 0.0
    for end, inward in ((budget_plan.low, np.inf), (budget_plan.high, -np.inf)):
        for budget, inside in ((end, False), (float(np.nextafter(end, inward)), True)):
            seen.clear()
            prob.allocate(budget, round_integers=False)
            assert seen[0] == ("allocate", inside), budget


def test_budgets_and_sweeps_at_their_edges(capsys) -> None:
    """A budget of 0 is refused whatever its type; a sweep is silent unless asked; the
    frontier's budget-by-budget path is continuous, as allocate(round_integers=False)."""
    prob = AllocationProblem(LAW, "E + K")
    for zero in (0, 0.0, np.float64(0.0), -1.0):
        with pytest.raises(ValueError, match="budget"):
            prob.allocate(zero)
    prob.sweep([10.0, 20.0])
    assert capsys.readouterr().err == ""
    closed = AllocationProblem(AdditiveLaw(0.2, {"E": 2.0, "K": 4.0}, {"E": 0.5, "K": 0.5}),
                               "E*K", {"E": (1, 1e4), "K": (1, 1e4)})
    for p in (prob, closed):  # the closed form's vectorised frontier takes flat arrays only
        with pytest.raises(ValueError, match="flat list"):
            p.frontier(np.array([[100.0, 1000.0]]))
    flat = closed.frontier(np.array([100.0, 1000.0]))
    assert flat.values["E"].tolist() == pytest.approx([5.0, math.sqrt(1000.0) / 2], rel=1e-13)
    f = prob.frontier([100.0, 1000.0])
    for i, b in enumerate((100.0, 1000.0)):
        ref = prob.allocate(b, round_integers=False)
        assert f.values["E"][i] == pytest.approx(ref.values["E"], rel=1e-9)
        assert f.values["E"][i] != round(f.values["E"][i])


def test_the_array_fast_paths_keep_the_10000_budget_limit() -> None:
    """A float64 array skips the list checks in ``frontier`` (the closed form's fast path,
    taken here) and ``sweep``, but not the limit the error message states: 10000 budgets
    are solved (each the hand optimum of the numpy-scalar test below, E = sqrt(B)/2,
    K = 2 sqrt(B)), 10001 are refused."""
    law = AdditiveLaw(0.2, {"E": 2.0, "K": 4.0}, {"E": 0.5, "K": 0.5})
    prob = AllocationProblem(law, "E*K", {"E": (1, 1e4), "K": (1, 1e4)})
    budgets = np.geomspace(100.0, 1e6, 10_000)
    f = prob.frontier(budgets)
    assert set(f.method) == {"closed_form"}
    np.testing.assert_allclose(f.values["E"], np.sqrt(budgets) / 2, rtol=1e-12)
    np.testing.assert_allclose(f.values["K"], 2 * np.sqrt(budgets), rtol=1e-12)
    for verb in (prob.frontier, prob.sweep):
        with pytest.raises(ValueError, match=r"at most 10000 budgets; got shape \(10001,\)"):
            verb(np.full(10_001, 400.0))


@pytest.mark.parametrize("sense", ["allocate", "min_cost"])
@pytest.mark.parametrize("rounded", [True, False])
def test_the_newton_gp_path_reports_success_and_its_own_time(sense, rounded) -> None:
    """Issue 25: the general GP solved by Newton (``method="auto"``, no closed form: an
    additive law under a sum) carries ``success=True`` with its certificate, and
    ``seconds`` is the solve's own wall time, inside the time measured around the call;
    the conic path (``method="gp"``) too.  The optimum is the Lagrange point by hand,
    ``E^-3/2 / 2 = K^-5/4 / 2`` (stationarity of ``1/√E + 2 K^-1/4`` under ``E + K``)."""
    prob = AllocationProblem(LAW, "E + K")
    for method, solver in (("auto", "Newton gp"), ("gp", "CLARABEL gp")):
        before = time.perf_counter()
        if sense == "allocate":
            a = prob.allocate(100.0, method=method, round_integers=rounded)
        else:
            a = prob.min_cost(0.9, method=method, round_integers=rounded)
        wall = time.perf_counter() - before
        assert (a.solver, a.success, a.status) == (solver, True, "optimal")
        assert 0.0 < a.seconds <= wall
        assert a.kkt_residual <= 1e-12 or solver != "Newton gp"
        E, K = a.values["E"], a.values["K"]
        assert math.isclose(E ** -1.5 / K ** -1.25, 1.0, rel_tol=1e-8)


def test_budgets_below_one_of_any_type_and_the_sweeps_default_rounding() -> None:
    """Issue 25 (seed-3 survivors, written after seed 3 was scored): a budget in (0, 1] is an
    ordinary one whatever its type — a float, numpy's float32, an int 1, numpy's int64 — and
    1/√E + 1/√K under E + K = B is least at E = K = B/2 (symmetry and convexity); a sweep
    rounds to integers unless told not to, as allocate does."""
    law = AdditiveLaw(0.2, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.5})
    prob = AllocationProblem(law, "E + K", {"E": (1e-3, 1e6), "K": (1e-3, 1e6)})
    for budget in (0.5, np.float32(0.5), 1, np.int64(1)):
        a = prob.allocate(budget, round_integers=False)
        half = float(budget) / 2
        assert a.values == pytest.approx({"E": half, "K": half}, rel=1e-8), budget
    # and what is refused names the valid range, > 0, float or not
    for bad in (0.0, -1.0, math.nan, 0, -2):
        with pytest.raises(ValueError, match=r"budget must be > 0; got budget="):
            prob.allocate(bad)
    big = AllocationProblem(LAW, "E + K")
    swept = big.sweep([100.0, 1000.0])
    assert all(s.rounded is not None and s.rounded_cost <= s.budget for s in swept)
    assert [s.rounded for s in swept] == [big.allocate(b).rounded for b in (100.0, 1000.0)]
    assert all(s.rounded is None for s in big.sweep([100.0, 1000.0], round_integers=False))
