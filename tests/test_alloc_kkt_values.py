"""Values of optimize/_alloc_kkt.py pinned by hand: the senses' tolerances, the KKT residual's
active set, scale and multipliers, every validation branch, and integer rounding checked by
brute-force enumeration of the nearby integer points."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest

from rlscale.optimize import AllocationProblem, kkt_residual
from rlscale.optimize._alloc_kkt import ALLOCATE, MIN_COST, kkt_core, round_allocation
from rlscale.theory import AdditiveLaw, SynthesisMethod

LAW = AdditiveLaw(0.0, {"E": 1.0, "K": 1.0}, {"E": 0.5, "K": 0.5})


def _loss(x):
    """The law above, written out: 1/sqrt(E) + 1/sqrt(K)."""
    return sum(v ** -0.5 for v in x)


# -- senses -----------------------------------------------------------------

def test_the_senses_right_hand_sides_and_names() -> None:
    assert ALLOCATE.rhs(5.0, 1.5) == 5.0 and MIN_COST.rhs(5.0, 1.5) == 3.5
    assert (ALLOCATE.name, ALLOCATE.constraint, ALLOCATE.what) == ("allocate", "budget", "budget")
    assert (MIN_COST.name, MIN_COST.constraint, MIN_COST.what) == (
        "min_cost", "target", "target loss")
    assert ALLOCATE.minimises_loss is True and MIN_COST.minimises_loss is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        ALLOCATE.minimises_loss = False  # type: ignore[misc]


def test_rank_accepts_exactly_one_part_in_1e12_over_the_bound() -> None:
    bound = 10.0
    edge = bound * (1 + 1e-12)                       # accepted (<=)
    over = bound * (1 + 1.2e-12)                     # refused (a 1.5e-12 slack would take it)
    vals = np.array([bound, edge, over, 9.0])
    other = np.array([3.0, 2.0, 1.0, 4.0])
    ok, key = ALLOCATE.rank(other, vals, bound)
    assert ok.tolist() == [True, True, False, True]
    assert key.tolist() == [3.0, 2.0, math.inf, 4.0]
    ok, key = MIN_COST.rank(vals, other, bound)
    assert ok.tolist() == [True, True, False, True]
    assert key.tolist() == [3.0, 2.0, math.inf, 4.0]


# -- the KKT residual ----------------------------------------------------------

def test_a_constraint_is_active_from_a_slack_of_exactly_1e6() -> None:
    grad, d = np.array([-2.0, 0.0]), np.array([1.0, 0.0])
    # g = -1e-6 is active (>=): mu = 2 exactly, stationarity 0.
    assert kkt_core(grad, [(-1e-6, d)], ["c"]) == (0.0, {"c": 2.0})
    # g = -1.2e-6 is slack: no multiplier, the residual is |grad|/|grad| = 1.
    assert kkt_core(grad, [(-1.2e-6, d)], ["c"]) == (1.0, {})
    # a slack positive g of 5e-7 is a violation, reported as such.
    assert kkt_core(grad, [(5e-7, d)], ["c"]) == (5e-7, {"c": 2.0})


def test_the_residual_is_relative_to_the_largest_gradient_entry() -> None:
    # No constraint: the residual is |grad|_inf / |grad|_inf = 1 whatever the scale...
    assert kkt_core(np.array([4.0, -8.0]), [], []) == (1.0, {})
    # ... and with one active constraint the stationarity error is divided by 8:
    # mu = -(4*1 - 8*1)/2 = 2, stat = (6, -6), residual 6/8.
    res, mu = kkt_core(np.array([4.0, -8.0]), [(0.0, np.array([1.0, 1.0]))], ["c"])
    assert res == 0.75 and mu == {"c": 2.0}
    # A subnormal gradient is divided by the floor 1e-300, not by itself.
    assert kkt_core(np.array([1e-310, 0.0]), [], [])[0] == pytest.approx(1e-10, rel=1e-3)
    assert kkt_core(np.zeros(2), [], []) == (0.0, {})


def test_one_active_constraint_multiplier_below_one_or_clipped_to_zero() -> None:
    # mu = -(-1*1 + 0)/(1 + 1) = 0.5, stat (-0.5, 0.5), residual 0.5
    assert kkt_core(np.array([-1.0, 0.0]), [(0.0, np.array([1.0, 1.0]))], ["c"]) == (
        0.5, {"c": 0.5})
    # grad along d: mu would be -1, clipped to 0; the residual is the whole gradient.
    assert kkt_core(np.array([1.0, 1.0]), [(0.0, np.array([1.0, 1.0]))], ["c"]) == (1.0, {})


def test_a_zero_constraint_gradient_gets_no_multiplier() -> None:
    res, mu = kkt_core(np.array([-3.0]), [(0.0, np.array([0.0]))], ["c"])
    assert (res, mu) == (1.0, {})


def test_nnls_clips_one_multiplier_and_fits_the_other() -> None:
    # grad (1, -2) against e1, e2: mu1 would be -1 (clipped to 0), mu2 = 2; stat (1, 0).
    res, mu = kkt_core(np.array([1.0, -2.0]), [(0.0, np.array([1.0, 0.0])),
                                               (0.0, np.array([0.0, 1.0]))], ["a", "b"])
    assert res == 0.5 and mu == {"b": 2.0}
    # A third, violated and inactive-direction constraint sets the residual alone.
    res, mu = kkt_core(np.array([-1.0, -2.0]), [(0.0, np.array([1.0, 0.0])),
                                                (0.0, np.array([0.0, 1.0])),
                                                (0.7, np.array([0.0, 0.0]))], ["a", "b", "c"])
    assert res == 0.7 and mu == {"a": 1.0, "b": 2.0}


@pytest.mark.parametrize(("args", "err", "match"), [
    (([[1.0]], []), ValueError, r"grad must be a non-empty 1-D array; got shape \(1, 1\)"),
    (([], []), ValueError, r"grad must be a non-empty 1-D array; got shape \(0,\)"),
    (([float("nan")], []), ValueError, "grad"),
    (([1.0], b"ab"), TypeError, "constraints must be a sequence of"),
    (([1.0], 3), TypeError, "constraints=3"),
    (([1.0], [{0.0: 1}]), TypeError, r"constraints\[0\] must be a \(g, grad_g\) pair"),
    (([1.0], [(0.0, [1.0]), (0.0, [1.0], 2)]), TypeError, r"constraints\[1\] must be a"),
    (([1.0], [("x", [1.0])]), TypeError, r"constraints\[0\] g"),
    (([1.0], [(0.0, ["x"])]), TypeError, r"constraints\[0\] grad_g"),
    (([1.0, 2.0], [(0.0, [1.0])]), ValueError,
     r"constraints\[0\] grad_g must have the shape of grad \(2,\); got \(1,\)"),
    (([1.0], [(0.0, [1.0])], "a"), TypeError, "names must be a sequence of 1 labels"),
    (([1.0], [(0.0, [1.0])], 7), TypeError, "names=7"),
])
def test_kkt_residual_refuses_each_bad_argument(args, err, match) -> None:
    with pytest.raises(err, match=match):
        kkt_residual(*args)


def test_kkt_residual_names_and_default_labels() -> None:
    res, mu = kkt_residual([-1.0, -2.0], [(0.0, [1.0, 0.0]), (0.0, [0.0, 1.0])])
    assert res == 0.0 and mu == {"c0": 1.0, "c1": 2.0}
    res, mu = kkt_residual(np.array([-1.0, -2.0]), ((0.0, [1.0, 0.0]), (0.0, [0.0, 1.0])),
                           ("x", "y"))
    assert mu == {"x": 1.0, "y": 2.0}


# -- rounding, against brute force ---------------------------------------------

def _brute(bound, values, lows, highs, cost=sum, loss=_loss, allocate=True):
    """Every floor/ceil combination, clipped to the integer box, ranked like the docstring."""
    choices = []
    for v, lo, hi in zip(values, lows, highs):
        cs = {min(max(math.floor(v), lo), hi), min(max(math.ceil(v), lo), hi)}
        choices.append(sorted(cs))
    best = None
    for combo in itertools.product(*choices):
        lv, cv = loss(combo), cost(combo)
        ok = cv <= bound if allocate else lv <= bound
        key = lv if allocate else cv
        if ok and (best is None or key < best[0]):
            best = (key, combo, lv, cv)
    return best


@pytest.mark.parametrize(("values", "budget"), [((3.4, 6.6), 10.0), ((3.4, 6.6), 11.0),
                                                 ((2.3, 7.9), 10.0), ((0.3, 9.2), 10.0),
                                                 ((5.0, 4.5), 10.0)])
def test_rounding_is_the_best_feasible_floor_ceiling_combination(values, budget) -> None:
    prob = AllocationProblem(LAW, "E + K")
    out = round_allocation(prob.state, ALLOCATE, budget, dict(zip("EK", values)))
    _, combo, lv, cv = _brute(budget, values, (1, 1), (math.inf, math.inf))
    assert out["rounded"] == dict(zip("EK", combo))
    assert out["rounded_loss"] == pytest.approx(lv, rel=1e-15)
    assert out["rounded_cost"] == cv


def test_rounding_for_a_target_ranks_by_cost() -> None:
    prob = AllocationProblem(LAW, "3*E + K")
    values = {"E": 20.4, "K": 12.6}
    target = 0.5
    out = round_allocation(prob.state, MIN_COST, target, values)
    best = _brute(target, (20.4, 12.6), (1, 1), (math.inf, math.inf),
                  cost=lambda c: 3 * c[0] + c[1], allocate=False)
    assert out["rounded"] == dict(zip("EK", best[1])) == {"E": 21, "K": 13}
    assert out["rounded_cost"] == 76.0
    # Nothing reaches a target below every candidate's loss.
    note = round_allocation(prob.state, MIN_COST, 0.3, values)["rounding_note"]
    assert note == "no floor/ceiling combination of the optimum is reaching the target"
    note = round_allocation(prob.state, ALLOCATE, 50.0, values)["rounding_note"]
    assert note == "no floor/ceiling combination of the optimum is within the budget"


def test_rounding_bounds_allow_1e9_of_slack_and_no_more() -> None:
    values = {"E": 2.2, "K": 7.0}
    # min 2 + 1e-10 rounds to the integer 2 (within the 1e-9 slack); max 2.5 to 2.
    prob = AllocationProblem(LAW, "E + K", {"E": (2 + 1e-10, 2.5)})
    assert round_allocation(prob.state, ALLOCATE, 100.0, values)["rounded"] == {"E": 2, "K": 7}
    # min 2 + 1.2e-9 is past the slack: the smallest integer is 3 > max 2, so none.
    prob = AllocationProblem(LAW, "E + K", {"E": (2 + 1.2e-9, 2.5)})
    note = round_allocation(prob.state, ALLOCATE, 100.0, values)["rounding_note"]
    assert note == f"no integer value of E lies within its bounds {prob.bounds['E']}"
    # max 3 - 1e-10 rounds to 3; max 3 - 1.2e-9 to 2, below min 2.5's integer 3.
    prob = AllocationProblem(LAW, "E + K", {"E": (2.5, 3 - 1e-10)})
    assert round_allocation(prob.state, ALLOCATE, 100.0, values)["rounded"] == {"E": 3, "K": 7}
    prob = AllocationProblem(LAW, "E + K", {"E": (2.5, 3 - 1.2e-9)})
    assert "no integer value of E" in round_allocation(prob.state, ALLOCATE, 100.0, values)[
        "rounding_note"]


def test_rounding_clips_to_the_integer_box() -> None:
    prob = AllocationProblem(LAW, "E + K", {"E": (4, 6), "K": (None, 3)})
    out = round_allocation(prob.state, ALLOCATE, 100.0, {"E": 2.5, "K": 7.5})
    assert out["rounded"] == {"E": 4, "K": 3}
    out = round_allocation(prob.state, ALLOCATE, 100.0, {"E": 6.5, "K": 2.5})
    assert out["rounded"] == {"E": 6, "K": 3}


def test_a_law_axis_rounds_to_at_least_one_and_a_synthetic_count_to_zero() -> None:
    syn = [SynthesisMethod("E", unit_cost=1.0, rho=1.0, name="gen")]
    prob = AllocationProblem(LAW, "E + K", synthesis=syn)
    # E in {1} (never 0), K in {6, 7}, gen in {0, 1}: budget 7 buys only E=1, K=6, gen=0...
    out = round_allocation(prob.state, ALLOCATE, 7.0, {"E": 0.3, "K": 6.6, "gen": 0.2})
    assert out["rounded"] == {"E": 1, "K": 6, "gen": 0}
    # ... and budget 8 the synthetic unit too (E_eff = 2): 1/sqrt(2) + 1/sqrt(6).
    out = round_allocation(prob.state, ALLOCATE, 8.0, {"E": 0.3, "K": 6.6, "gen": 0.2})
    assert out["rounded"] == {"E": 1, "K": 6, "gen": 1}
    assert out["rounded_loss"] == pytest.approx(2 ** -0.5 + 6 ** -0.5, rel=1e-15)


def _wide(n):
    axes = [f"x{i}" for i in range(n)]
    law = AdditiveLaw(0.0, dict.fromkeys(axes, 1.0), dict.fromkeys(axes, 0.5))
    return AllocationProblem(law, " + ".join(axes)), axes


def test_fourteen_variables_try_every_combination_fifteen_only_the_nearest() -> None:
    prob, axes = _wide(14)
    out = round_allocation(prob.state, ALLOCATE, 1e6, dict.fromkeys(axes, 3.4))
    assert out["rounded"] == dict.fromkeys(axes, 4)       # all ceilings: the least loss
    prob, axes = _wide(15)
    out = round_allocation(prob.state, ALLOCATE, 1e6, dict.fromkeys(axes, 3.4))
    assert out["rounded"] == dict.fromkeys(axes, 3)       # the nearest integers
    out = round_allocation(prob.state, ALLOCATE, 1e6, dict.fromkeys(axes, 3.6))
    assert out["rounded"] == dict.fromkeys(axes, 4)
    assert out["rounded_cost"] == 60.0
    assert out["rounded_loss"] == pytest.approx(15 * 0.5, rel=1e-15)
