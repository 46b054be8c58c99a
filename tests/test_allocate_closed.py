"""Closed-form allocations on their fast path (issue 13, goal 3): one precomputed plan per
problem and sense, the certificate and the rounding deferred to first read, vectorised
frontiers.  Oracles: the textbook closed forms in mpmath, the scaling of the optimal loss
with the budget (the duals), brute-force rounding, the GP, and the general path itself."""

from __future__ import annotations

import copy
import itertools
import math
import pickle

import mpmath
import numpy as np
import pytest

from rlscale._errors import InfeasibleError
from rlscale.optimize import Allocation, AllocationFrontier, AllocationProblem
from rlscale.optimize._alloc_kkt import ALLOCATE, MIN_COST
from rlscale.theory import AdditiveLaw, MultiplicativeLaw, VarianceComponentsLaw

CHIN = {"E": 1.8172, "A": 482.01, "B": 2085.43, "alpha": 0.3478, "beta": 0.3658}
CHIN_LAW = AdditiveLaw(CHIN["E"], {"N": CHIN["A"], "D": CHIN["B"]},
                       {"N": CHIN["alpha"], "D": CHIN["beta"]})
NESTED_COST = "{0!r}*E + {1!r}*E*t + {2!r}*E*t*k"


def _chinchilla_mp(compute: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """Hoffmann et al. (2022) app. D.2 in 50 digits: N = G (C/6)^(b/(a+b)), D = (C/6)^(a/(a+b))/G,
    G = (a A / (b B))^(1/(a+b))."""
    with mpmath.workdps(50):
        a, b = mpmath.mpf(CHIN["alpha"]), mpmath.mpf(CHIN["beta"])
        g = (a * CHIN["A"] / (b * CHIN["B"])) ** (1 / (a + b))
        c6 = mpmath.mpf(compute) / 6
        return g * c6 ** (b / (a + b)), c6 ** (a / (a + b)) / g


def _same(a: Allocation, b: Allocation) -> bool:
    """Equal records but for the wall time of the solve."""
    return ({k: v for k, v in a.as_dict().items() if k != "seconds"}
            == {k: v for k, v in b.as_dict().items() if k != "seconds"})


def _counting_kkt(prob: AllocationProblem) -> list[int]:
    """Count the problem's KKT evaluations (the certificate)."""
    calls = [0]
    original = prob.state.kkt

    def counted(*args):
        calls[0] += 1
        return original(*args)

    object.__setattr__(prob.state, "kkt", counted)  # the frozen state's method, shadowed
    return calls


def _random_power_law(rng):
    axes = ["N", "D", "K"][: int(rng.integers(2, 4))]
    law = AdditiveLaw(float(rng.uniform(0, 2)),
                      {a: float(np.exp(rng.uniform(-2, 7))) for a in axes},
                      {a: float(rng.uniform(0.1, 1.0)) for a in axes})
    gam = {a: float(rng.uniform(0.5, 2.0)) for a in axes}
    cost = f"{float(np.exp(rng.uniform(0, 3)))!r}*" + "*".join(
        f"{a}**{g!r}" for a, g in gam.items())
    return law, cost, 1.0 / sum(g / law.exponents[a] for a, g in gam.items())


def _random_cobb_douglas(rng):
    axes = ["E", "K", "T"][: int(rng.integers(2, 4))]
    alpha = {a: float(rng.uniform(0.05, 1.0)) for a in axes}
    law = MultiplicativeLaw(float(np.exp(rng.uniform(-1, 3))), alpha,
                            floor=float(rng.uniform(0, 1)))
    cost = " + ".join(f"{float(np.exp(rng.uniform(-2, 4)))!r}*{a}" for a in axes)
    return law, cost, sum(alpha.values())


def _random_nested(rng):
    law = VarianceComponentsLaw(float(rng.uniform(0, 1)), *np.exp(rng.uniform(-3, 3, 3)))
    return law, NESTED_COST.format(*(float(c) for c in np.exp(rng.uniform(-2, 5, 3)))), 1.0


KINDS = [(_random_power_law, "power-laws/monomial-cost"), (_random_cobb_douglas, "cobb-douglas"),
         (_random_nested, "nested")]


# -- the fast path against independent oracles ---------------------------------------------
def test_chinchilla_fast_path_matches_the_textbook_closed_form_and_its_dual() -> None:
    prob = AllocationProblem(CHIN_LAW, "6*N*D")
    calls = _counting_kkt(prob)
    for compute in (1e18, 5.76e23, 3e26):
        a = prob.allocate(compute, round_integers=False)
        N, D = _chinchilla_mp(compute)
        assert a.values["N"] == pytest.approx(float(N), rel=1e-14)
        assert a.values["D"] == pytest.approx(float(D), rel=1e-14)
        assert a.effective == {"N": a.values["N"], "D": a.values["D"]}
        assert list(a.effective) == ["N", "D"]  # the law's axis order
        loss = CHIN["E"] + CHIN["A"] * N ** -CHIN["alpha"] + CHIN["B"] * D ** -CHIN["beta"]
        assert a.loss == pytest.approx(float(loss), rel=1e-15)
        assert a.cost == pytest.approx(compute, rel=1e-14) and a.shares == {"D*N": 1.0}
        assert (a.budget, a.target, a.method, a.status) == (compute, None, "closed_form",
                                                            "optimal")
        assert a.solver == "closed form (power-laws/monomial-cost)"
        assert a.rounded is None and a.rounding_note == "" and a.extra == {}
        assert 0.0 <= a.seconds < 0.1
    assert calls == [0]  # nothing certified yet: the rounding was not asked for
    # Both terms of the optimal loss scale as C^(-ab/(a+b)): that is the budget's dual.
    a = prob.allocate(5.76e23, round_integers=False)
    ab = CHIN["alpha"] * CHIN["beta"] / (CHIN["alpha"] + CHIN["beta"])
    assert a.duals == {"budget": pytest.approx(ab, rel=1e-12)}
    assert calls == [1] and a.kkt_residual <= 1e-14 and a.success is True
    assert a.message == ("closed form: power laws under a single-monomial cost (Hoffmann et al. "
                         f"2022, app. D.2); KKT residual {a.kkt_residual:.2g}")
    assert calls == [1]  # one certificate per record, all its fields at once


@pytest.mark.parametrize(("make", "kind"), KINDS)
def test_fast_path_agrees_with_the_gp_and_its_duals_follow_the_loss_scaling(make, kind) -> None:
    # Power laws: every term of the optimal loss scales as B^(-1/R), R = sum gamma_i/alpha_i;
    # Cobb-Douglas: P scales as B^(-sum alpha); nested: as 1/B.  So d log P / d log B is the
    # exponent, and at a target d log C / d log(T - floor) its reciprocal.
    rng = np.random.default_rng(11)
    for _ in range(3):
        law, cost, slope = make(rng)
        prob = AllocationProblem(law, cost)
        assert prob.closed_form.kind == kind
        budget = max(prob.cheapest()[0], 1.0) * float(np.exp(rng.uniform(3, 15)))
        a = prob.allocate(budget, round_integers=False)
        g = prob.allocate(budget, round_integers=False, method="gp")
        assert a.method == "closed_form" and g.method == "gp"
        assert max(abs(a.values[v] / g.values[v] - 1) for v in a.values) <= 1e-12
        assert a.loss == pytest.approx(g.loss, rel=1e-12)
        assert a.cost == pytest.approx(budget, rel=1e-13)
        assert a.effective == pytest.approx(g.effective, rel=1e-12)
        assert a.shares == pytest.approx(g.shares, rel=1e-11)
        assert a.kkt_residual <= 1e-12 and a.duals["budget"] == pytest.approx(slope, rel=1e-9)
        target = law.floor + 3 * (a.loss - law.floor)
        b = prob.min_cost(target, round_integers=False)
        h = prob.min_cost(target, round_integers=False, method="gp")
        assert b.method == "closed_form" and (b.budget, b.target) == (None, target)
        assert max(abs(b.values[v] / h.values[v] - 1) for v in b.values) <= 1e-12
        assert b.loss == pytest.approx(target, rel=1e-13)
        assert b.cost == pytest.approx(h.cost, rel=1e-12)
        assert b.kkt_residual <= 1e-12 and b.duals["target"] == pytest.approx(1 / slope,
                                                                              rel=1e-9)


def test_cobb_douglas_shares_and_nested_effective_axes_by_hand() -> None:
    # Spend shares c_j x_j / B = alpha_j / sum(alpha) (Varian 1992, §7.4).
    a = AllocationProblem(MultiplicativeLaw(2.0, {"E": 0.3, "K": 0.1, "T": 0.6}),
                          "10*E + K + 4*T").allocate(1e5, round_integers=False)
    assert a.shares == {"E": pytest.approx(0.3, rel=1e-14), "K": pytest.approx(0.1, rel=1e-14),
                        "T": pytest.approx(0.6, rel=1e-14)}
    assert a.values["T"] == pytest.approx(0.6 * 1e5 / 4, rel=1e-14)
    assert a.loss == pytest.approx(2.0 * (3e3 ** -0.3 * 1e4 ** -0.1 * 1.5e4 ** -0.6), rel=1e-14)
    # Nested with a law over totals: the effective axes are E, E*t and E*t*k.
    law = AdditiveLaw(0.1, {"environments": 9.0, "tasks": 4.0, "trajectories": 1.0},
                      dict.fromkeys(("environments", "tasks", "trajectories"), 1.0))
    sub = {"environments": "E", "tasks": "2*E*t", "trajectories": "E*t*k"}
    prob = AllocationProblem(law, "100*E + 10*E*t + E*t*k", substitute=sub)
    n = prob.allocate(1e6, round_integers=False)
    E, t, k = n.values["E"], n.values["t"], n.values["k"]
    assert n.method == "closed_form" and list(n.effective) == list(law.axes)
    assert n.effective["environments"] == pytest.approx(E, rel=1e-15)
    assert n.effective["tasks"] == pytest.approx(2 * E * t, rel=1e-14)
    assert n.effective["trajectories"] == pytest.approx(E * t * k, rel=1e-14)
    assert n.loss == pytest.approx(0.1 + 9 / E + 4 / (2 * E * t) + 1 / (E * t * k), rel=1e-14)
    assert n.shares == pytest.approx({"E": 100 * E / 1e6, "E*t": 10 * E * t / 1e6,
                                      "E*k*t": E * t * k / 1e6}, rel=1e-13)


def test_pooled_levels_are_exactly_one_on_the_fast_path() -> None:
    # Costs (50, 5, 2): sqrt(s/c) = (0.42, 0.89, 0.71) is not increasing, so tasks and
    # trajectories pool and k = 1 whatever the budget (Cochran 1977, ch. 10).
    law = VarianceComponentsLaw(0.1, 9.0, 4.0, 1.0)
    prob = AllocationProblem(law, "50*E + 5*E*t + 2*E*t*k")
    plan = prob.state.closed_plan(ALLOCATE)
    # The pooled level (s = 4 + 1, c = 5 + 2): n_i = sqrt(s_i / c_i) B / sum sqrt(s_j c_j);
    # the interval starts where E = sqrt(9/50) B / total reaches e^-708 (t = k = 1 throughout).
    total = math.sqrt(9 * 50) + math.sqrt(5 * 7)
    # (with the interval's margin of 1e-9 in log x)
    assert plan.low == pytest.approx(math.exp(-708 + 1e-9) * total / math.sqrt(9 / 50),
                                     rel=1e-12)
    assert plan.high == math.inf
    for budget in (1e3, 1e9):
        a = prob.allocate(budget, round_integers=False)
        assert a.method == "closed_form" and a.values["k"] == 1.0
        assert a.values["E"] == pytest.approx(math.sqrt(9 / 50) * budget / total, rel=1e-14)
        assert a.values["E"] * a.values["t"] == pytest.approx(
            math.sqrt(5 / 7) * budget / total, rel=1e-14)
        assert a.loss == pytest.approx(0.1 + total ** 2 / budget, rel=1e-14)
        assert "k>=1" in a.duals and a.kkt_residual <= 1e-13


# -- one result whatever the path --------------------------------------------------------
@pytest.mark.parametrize(("make", "kind"), KINDS)
def test_allocate_sweep_frontier_and_the_general_path_agree_to_the_last_bit(make, kind) -> None:
    rng = np.random.default_rng(5)
    law, cost, _ = make(rng)
    prob = AllocationProblem(law, cost)
    budgets = max(prob.cheapest()[0], 1.0) * np.exp(rng.uniform(2, 20, 40))
    front = prob.frontier(budgets)
    listed = prob.frontier(budgets.tolist())  # a list takes the checked path
    swept = prob.sweep(budgets, round_integers=False)
    for i, b in enumerate(budgets.tolist()):
        fast = prob.allocate(b, round_integers=False)
        general = prob.allocate(np.float64(b), round_integers=False)  # not a float: checked
        assert _same(fast, general) and _same(fast, swept[i])
        for v in prob.variables:
            assert front.values[v][i] == listed.values[v][i] == fast.values[v]
        assert front.loss[i] == pytest.approx(fast.loss, rel=1e-14)
    for bound in (law.floor + 0.5, law.floor + 1e-3):
        fast = prob.min_cost(bound, round_integers=False)
        assert _same(fast, prob.min_cost(np.float64(bound), round_integers=False))
        assert fast.loss == pytest.approx(bound, rel=1e-13)


def test_budgets_at_the_edges_of_the_fast_interval() -> None:
    # N <= 1e9 cuts the Chinchilla closed form off above B* = 6 (1e9 / G)^((a+b)/b); the fast
    # interval ends just below it, the general path takes over there and the GP beyond.
    a_, b_ = CHIN["alpha"], CHIN["beta"]
    with mpmath.workdps(40):
        G = (mpmath.mpf(a_) * CHIN["A"] / (b_ * CHIN["B"])) ** (1 / (mpmath.mpf(a_) + b_))
        edge = float(6 * (mpmath.mpf(10) ** 9 / G) ** ((a_ + b_) / mpmath.mpf(b_)))
    prob = AllocationProblem(CHIN_LAW, "6*N*D", bounds={"N": (None, 1e9)})
    plan = prob.state.closed_plan(ALLOCATE)
    assert plan.low == 0.0 and edge * (1 - 1e-8) < plan.high < edge
    inside = prob.allocate(plan.high * (1 - 1e-12), round_integers=False)
    margin = prob.allocate(edge * (1 - 1e-13), round_integers=False)  # general path, closed
    beyond = prob.allocate(edge * (1 + 1e-6), round_integers=False)
    assert (inside.method, margin.method, beyond.method) == ("closed_form", "closed_form", "gp")
    assert margin.values["N"] == pytest.approx(1e9, rel=1e-12) and margin.kkt_residual < 1e-12
    assert inside.values["N"] < 1e9 and beyond.values["N"] == pytest.approx(1e9, rel=1e-12)
    for a in (inside, margin):
        g = prob.allocate(a.budget, round_integers=False, method="gp")
        assert max(abs(a.values[v] / g.values[v] - 1) for v in a.values) <= 1e-11
    f = prob.frontier(np.array([plan.high * 0.5, edge * (1 - 1e-13), edge * 2]))
    assert f.method == ("closed_form", "closed_form", "gp")
    assert f.values["N"][1] == margin.values["N"]
    # A box narrower than the margins: no fast interval, the general path clips onto it.
    pinned = AllocationProblem(CHIN_LAW, "6*N*D", bounds={"N": (2.1e10, 2.1e10 * (1 + 1e-10))})
    plan = pinned.state.closed_plan(ALLOCATE)
    assert (plan.low, plan.high) == (math.inf, -math.inf)
    assert pinned.allocate(1e24, round_integers=False).values["N"] == pytest.approx(2.1e10)
    # Bounds no budget satisfies together (N >= 1e10 needs B above 1.2e22, D <= 1e9 below
    # 2.2e17): an empty interval, so every budget goes to the general path (here the GP).
    apart = AllocationProblem(CHIN_LAW, "6*N*D", bounds={"N": (1e10, None), "D": (None, 1e9)})
    plan = apart.state.closed_plan(ALLOCATE)
    assert (plan.low, plan.high) == (math.inf, -math.inf)
    assert apart.allocate(1e20, round_integers=False).method == "gp"
    # Lower bounds: below the larger of B = 6 (10 / G)^((a+b)/b) (where N reaches 10) and
    # 6 (100 G)^((a+b)/a) (where D reaches 100) the closed form leaves the box and the GP
    # solves; below the cheapest allocation, 6 * 10 * 100, nothing does.
    floor = AllocationProblem(CHIN_LAW, "6*N*D", bounds={"N": (10, None), "D": (100, None)})
    with mpmath.workdps(40):
        d_edge = float(max(6 * (10 / G) ** ((a_ + b_) / mpmath.mpf(b_)),
                           6 * (100 * G) ** ((a_ + b_) / mpmath.mpf(a_))))
    assert d_edge < floor.state.closed_plan(ALLOCATE).low < d_edge * (1 + 1e-8)
    assert floor.allocate(d_edge * 1.001).method == "closed_form"
    assert floor.allocate(d_edge * 0.999).method == "gp"
    with pytest.raises(InfeasibleError, match="budget 5999 is below the cost 6000"):
        floor.allocate(5999.0)


def test_the_fast_interval_in_float_range_and_of_a_target() -> None:
    # log x = p + q L must stay within [-708, 709]: here D ~ B^(1/1.01) / ... reaches e^709
    # near B = 1e306, so the interval stops there and the general path refuses beyond.
    law = AdditiveLaw(0.0, {"N": 1.0, "D": 1.0}, {"N": 0.01, "D": 1.0})
    prob = AllocationProblem(law, "1e-20*N*D")
    plan = prob.state.closed_plan(ALLOCATE)
    p, q = prob.closed_form.affine(ALLOCATE)
    top = min((709.0 - 1e-9 - pi) / qi for pi, qi in zip(p, q) if qi > 0)
    assert plan.high == pytest.approx(math.exp(top), rel=1e-12)
    assert prob.allocate(plan.high * 0.99, round_integers=False).method == "closed_form"
    with pytest.raises(ValueError, match="leaves the float range"):
        prob.allocate(plan.high * 1.01)
    # A target: above the floor, and the interval is in target - floor.
    tprob = AllocationProblem(CHIN_LAW, "6*N*D")
    tplan = tprob.state.closed_plan(MIN_COST)
    assert tplan.floor == CHIN["E"]
    assert tplan.low == CHIN["E"] * (1 + 1e-12) - CHIN["E"]  # the general path's rule
    # A loss 1e110 above the floor needs N, D below e^-708: the interval ends before it.
    assert 1e100 < tplan.high < 1e110
    assert tprob.min_cost(CHIN["E"] + 1e100).method == "closed_form"
    with pytest.raises(ValueError, match="the optimum at target loss 1e\\+110 leaves the float"):
        tprob.min_cost(1e110)
    with pytest.raises(InfeasibleError, match="equal to the law's floor"):
        tprob.min_cost(CHIN["E"])
    for bad in (math.nan, math.inf, -1.0):
        with pytest.raises(ValueError, match="target"):
            tprob.min_cost(bad)
    # With a cap on N the lowest reachable loss is above the floor: targets below it refuse.
    capped = AllocationProblem(CHIN_LAW, "6*N*D", bounds={"N": (None, 1e9), "D": (None, 1e12)})
    lowest = CHIN["E"] + CHIN["A"] * 1e9 ** -CHIN["alpha"] + CHIN["B"] * 1e12 ** -CHIN["beta"]
    assert capped.state.closed_plan(MIN_COST).low >= lowest * (1 + 1e-12) - CHIN["E"]
    with pytest.raises(InfeasibleError, match="below the lowest loss the bounds allow"):
        capped.min_cost(lowest)


@pytest.mark.parametrize("budget", [math.nan, math.inf, -math.inf, -1.0, 0.0, -0.0])
def test_bad_budgets_never_take_the_fast_path(budget) -> None:
    prob = AllocationProblem(CHIN_LAW, "6*N*D")
    with pytest.raises(ValueError, match=r"budget|float range"):
        prob.allocate(budget)
    bad = np.logspace(20, 24, 5)
    bad[3] = budget
    with pytest.raises(ValueError, match=r"budget|float range"):
        prob.frontier(bad)


def test_bad_arguments_on_the_fast_path() -> None:
    prob = AllocationProblem(CHIN_LAW, "6*N*D")
    with pytest.raises(TypeError, match="budget must be a real scalar, not an array"):
        prob.allocate(np.array([1e20]))
    with pytest.raises(TypeError, match="budget"):
        prob.allocate(True)
    with pytest.raises(TypeError, match="method must be one of"):
        prob.allocate(1e20, method=np.array(["auto"]))
    with pytest.raises(ValueError, match="method must be one of"):
        prob.frontier(np.array([1e20]), method="fast")
    with pytest.raises(ValueError, match="at most 10000 budgets"):
        prob.frontier(np.full(10_001, 1e20))
    with pytest.raises(TypeError, match="budgets must be a sequence"):
        prob.frontier(1e20)
    assert prob.allocate(10**15).values == prob.allocate(1e15).values  # an int is fine
    assert prob.frontier(np.full(10_000, 1e20)).values["N"][-1] == prob.allocate(1e20).values["N"]


# -- the deferred fields ------------------------------------------------------------------
def test_rounding_is_deferred_and_is_the_best_floor_or_ceiling() -> None:
    law = AdditiveLaw(0.3, {"E": 2.0, "k": 1.5}, {"E": 0.6, "k": 0.4})
    prob = AllocationProblem(law, "7*E*k")
    calls = _counting_kkt(prob)
    a = prob.allocate(1000.0)
    assert calls == [0] and a.method == "closed_form"

    def loss(E, k):
        return 0.3 + 2.0 * E ** -0.6 + 1.5 * k ** -0.4

    best = min((c for c in itertools.product(*[(math.floor(a.values[v]), math.ceil(a.values[v]))
                                               for v in ("E", "k")])
                if 7 * c[0] * c[1] <= 1000.0), key=lambda c: loss(*c))
    assert a.rounded == dict(zip(("E", "k"), best)) and calls == [1]
    assert a.rounded_loss == pytest.approx(loss(*best), rel=1e-14)
    assert a.rounded_cost == 7 * best[0] * best[1] and a.rounding_note == ""
    assert a.kkt_residual <= 1e-13 and calls == [1]
    # min_cost defers its rounding too: the cheapest floor/ceiling reaching the target.
    b = prob.min_cost(0.5)
    cands = [c for c in itertools.product(*[(math.floor(b.values[v]), math.ceil(b.values[v]))
                                            for v in ("E", "k")]) if loss(*c) <= 0.5]
    assert b.rounded == dict(zip(("E", "k"), min(cands, key=lambda c: c[0] * c[1])))
    # No integer in the bounds: a note instead.
    tight = AllocationProblem(law, "7*E*k", bounds={"E": (5.2, 5.9)})  # E* = 5.79
    c = tight.allocate(100.0)
    assert c.method == "closed_form" and c.rounded is None
    assert c.rounding_note.startswith("no integer value of E lies within its bounds")


def test_a_deferred_record_reads_compares_copies_and_pickles_as_a_plain_one() -> None:
    prob = AllocationProblem(CHIN_LAW, "6*N*D")
    calls = _counting_kkt(prob)
    a, b = prob.allocate(5.76e23), prob.allocate(5.76e23)
    plain = Allocation(**a.as_dict())
    assert calls == [1]  # as_dict computed a's deferred fields
    assert a.as_dict() == plain.as_dict() and list(a.as_dict()) == list(plain.as_dict())
    assert "_pending" not in a.as_dict() and a.as_dict()["kkt_residual"] <= 1e-14
    assert b != a  # the wall times differ ...
    assert _same(b, a) and calls == [2]  # ... nothing else
    for make in (lambda r: pickle.loads(pickle.dumps(r)), copy.copy, copy.deepcopy):
        r = prob.allocate(1e22)
        twin = make(r)
        assert twin == r and type(twin) is Allocation and "_pending" not in vars(twin)
    # the one-screen repr of rlscale.theory._result.Result (issue 25) reads every field
    text = repr(prob.allocate(1e22))
    assert text.startswith("Allocation(\n  values=") and "kkt_residual=" in text
    assert "KKT residual" in prob.allocate(1e22)._repr_html_()
    with pytest.raises(AttributeError, match="'Allocation' object has no attribute 'nope'"):
        _ = a.nope
    with pytest.raises(AttributeError):
        a.loss = 1.0  # still frozen


def test_a_closed_form_frontier_defers_loss_cost_and_certificate() -> None:
    prob = AllocationProblem(CHIN_LAW, "6*N*D")
    calls = _counting_kkt(prob)
    budgets = np.logspace(18, 26, 50)
    f = prob.frontier(budgets)
    budgets[:] = 1.0  # the record keeps its own copy
    assert isinstance(f, AllocationFrontier) and f.budgets[0] == 1e18
    N, D = (np.array([float(z) for z in col]) for col in zip(*map(_chinchilla_mp, f.budgets)))
    assert f.values["N"] == pytest.approx(N, rel=1e-14)
    assert f.values["D"] == pytest.approx(D, rel=1e-14)
    loss = CHIN["E"] + CHIN["A"] * N ** -CHIN["alpha"] + CHIN["B"] * D ** -CHIN["beta"]
    assert f.loss == pytest.approx(loss, rel=1e-14)
    assert f.cost == pytest.approx(f.budgets, rel=1e-13)
    assert np.all(f.kkt_residual <= 1e-13) and f.method == ("closed_form",) * 50
    assert calls == [0]  # vectorised: no per-budget certificate
    assert pickle.loads(pickle.dumps(prob.frontier(f.budgets))).as_dict() == f.as_dict()
    # Near a bound the residual is checked point by point (the bound's multiplier).
    capped = AllocationProblem(CHIN_LAW, "6*N*D", bounds={"N": (None, 1e9)})
    calls = _counting_kkt(capped)
    edge = capped.state.closed_plan(ALLOCATE).high
    g = capped.frontier(np.array([edge * 0.5, edge * (1 - 1e-12)]))
    assert calls == [0]
    assert g.method == ("closed_form", "closed_form") and calls == [1]
    assert np.all(g.kkt_residual <= 1e-12)


@pytest.mark.parametrize("axes", [["N"], ["N", "D", "K", "T"]])
def test_one_and_four_variables_by_their_optimality_conditions(axes) -> None:
    # Power laws under k prod x_i^g_i = B: alpha_i l_i / g_i is the same for every term
    # (stationarity in log x) and the budget is spent; one axis: x = (B / k)^(1 / g).
    alpha = dict(zip(axes, (0.4, 0.3, 0.55, 0.2)))
    coef = dict(zip(axes, (3.0, 50.0, 7.0, 0.5)))
    gam = dict(zip(axes, (1.5, 1.0, 0.5, 2.0)))
    law = AdditiveLaw(0.5, coef, alpha)
    prob = AllocationProblem(law, "2*" + "*".join(f"{a}**{gam[a]!r}" for a in axes))
    for budget in (1e3, 1e12):
        a = prob.allocate(budget, round_integers=False)
        x = a.values
        assert a.method == "closed_form" and list(a.effective) == axes
        assert 2 * math.prod(x[v] ** gam[v] for v in axes) == pytest.approx(budget, rel=1e-13)
        terms = {v: coef[v] * x[v] ** -alpha[v] for v in axes}
        marg = [alpha[v] * terms[v] / gam[v] for v in axes]
        assert marg == pytest.approx([marg[0]] * len(axes), rel=1e-12)
        assert a.loss == pytest.approx(0.5 + sum(terms.values()), rel=1e-14)
        assert a.effective == x and a.shares == {prob.state.labels[0]: 1.0}
        if len(axes) == 1:
            assert x["N"] == pytest.approx((budget / 2) ** (1 / 1.5), rel=1e-14)
        b = prob.min_cost(a.loss, round_integers=False)
        assert b.cost == pytest.approx(budget, rel=1e-12) and b.kkt_residual <= 1e-12
        assert a.kkt_residual <= 1e-12 and a.success


def test_the_general_closed_path_reports_the_loss_and_cost_of_its_values() -> None:
    """Just outside the fast interval (its 1e-9 log margins) but inside the box, the closed
    form is taken by the general path (``ClosedPlan.build``, terms from ``A u + b``); its
    loss and cost are the law and the cost at its values, by hand: 0.2 + 2/sqrt(E) +
    4/sqrt(K) and E K, with E = sqrt(B)/2, K = 2 sqrt(B) (the Lagrange optimum)."""
    from rlscale.optimize import AllocationProblem
    from rlscale.optimize._alloc_kkt import ALLOCATE, MIN_COST
    from rlscale.theory import AdditiveLaw

    law = AdditiveLaw(0.2, {"E": 2.0, "K": 4.0}, {"E": 0.5, "K": 0.5})
    prob = AllocationProblem(law, "E*K", {"E": (1, 1e4), "K": (1, 1e4)})
    for sense, verb in ((ALLOCATE, prob.allocate), (MIN_COST, prob.min_cost)):
        plan = prob.state.closed_plan(sense)
        for gap in (plan.low * (1 - 1e-10), plan.high * (1 + 1e-10)):
            out = verb(plan.floor + gap, round_integers=False)
            e, k = out.values["E"], out.values["K"]
            assert out.method == "closed_form"
            assert k / e == pytest.approx(4.0, rel=1e-12)
            assert out.loss == pytest.approx(0.2 + 2 / math.sqrt(e) + 4 / math.sqrt(k),
                                             rel=1e-13)
            assert out.cost == pytest.approx(e * k, rel=1e-13)
            assert out.effective == pytest.approx({"E": e, "K": k}, rel=1e-13)


def test_axes_that_are_scaled_variables_are_not_read_off_the_values() -> None:
    """Issue 25: with ``environments = 2 E`` and ``tasks = 3 K`` (or ``E**2`` and ``K**2``) every
    axis is one variable, but not the variable itself, so the closed form's effective axes
    are ``2E`` and ``3K`` (``E²`` and ``K²``), not the values.
    By hand: ``u = 2E``, ``v = 3K`` under ``E K = B`` give ``u v = 6B``, and the symmetric
    law puts ``u = v = √(6B)``."""
    half = {"environments": 0.5, "tasks": 0.5}
    law = AdditiveLaw(0.2, dict.fromkeys(half, 1.0), half)
    prob = AllocationProblem(law, "E*K", substitute={"environments": "2*E", "tasks": "3*K"})
    for budget in (10.0, 1e4, 3e9):
        a = prob.allocate(budget, round_integers=False)
        root = math.sqrt(6.0 * budget)
        assert a.method == "closed_form"
        assert a.values == pytest.approx({"E": root / 2, "K": root / 3}, rel=1e-14)
        assert a.effective == pytest.approx({"environments": root, "tasks": root}, rel=1e-14)
        assert a.loss == pytest.approx(0.2 + 2.0 / math.sqrt(root), rel=1e-14)
    # environments = E**2, tasks = K**2: the law is symmetric in u = E², v = K² under
    # √(u v) = B, so u = v = B and E = K = √B.
    prob = AllocationProblem(law, "E*K", substitute={"environments": "E**2", "tasks": "K**2"})
    for budget in (10.0, 1e4, 3e9):
        a = prob.allocate(budget, round_integers=False)
        assert a.method == "closed_form"
        assert a.values == pytest.approx(dict.fromkeys("EK", math.sqrt(budget)), rel=1e-14)
        assert a.effective == pytest.approx(dict.fromkeys(half, budget), rel=1e-14)


@pytest.mark.parametrize(("outside", "clipped"), [(0.8e-12, True), (1.2e-12, False)])
def test_the_closed_form_is_clipped_onto_a_bound_within_1e12_in_log(outside, clipped) -> None:
    """Issue 25: ``closed_logs`` puts ``log x`` on the box where it lies outside by at most
    1e-12 (rounding) and otherwise leaves the bounds (``method="closed_form"`` says so).
    The unbounded optimum of the symmetric law under ``E K = 100`` is ``E = K = 10``; the
    cap on ``E`` is set ``outside`` below it in log."""
    half = {"E": 0.5, "K": 0.5}
    law = AdditiveLaw(0.2, dict.fromkeys(half, 1.0), half)
    cap = 10.0 * math.exp(-outside)
    prob = AllocationProblem(law, "E*K", {"E": (None, cap)})
    if clipped:
        a = prob.allocate(100.0, round_integers=False, method="closed_form")
        assert a.values["E"] == pytest.approx(cap, rel=1e-15)
        assert a.values["K"] == pytest.approx(10.0, rel=1e-11)
    else:
        with pytest.raises(ValueError, match="leaves the bounds"):
            prob.allocate(100.0, round_integers=False, method="closed_form")


def test_pooled_levels_whose_sum_overflows_have_no_closed_form() -> None:
    """Issue 25: costs (50, 5, 20) pool tasks and trajectories (√(s/c) falls between them),
    and with s = 1e308 each the pooled level's 2e308 is not a float: no closed form, and the
    GP solves it.  By hand, with k = 1 the loss is 2e308 / (E t) and the budget buys
    ``E t = 1e6 / 25`` (the ``50 E`` term is negligible at the optimum), so the loss is
    ``5e303``; E's own term, 9/E, is below the loss's rounding."""
    prob = AllocationProblem(VarianceComponentsLaw(0.1, 9.0, 1e308, 1e308),
                             "50*E + 5*E*t + 20*E*t*k")
    with pytest.raises(ValueError, match="this problem has none"):
        prob.allocate(1e6, method="closed_form")
    a = prob.allocate(1e6, round_integers=False)
    assert a.method == "gp" and math.isfinite(a.loss)
    assert a.loss == pytest.approx(2.0 * (1e308 / (1e6 / 25.0)), rel=1e-9)
    assert a.values["k"] == pytest.approx(1.0, rel=1e-9)
