"""Efficiency of the optimum over a one-axis baseline, against hand computations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlscale.optimize import efficiency, efficiency_curve
from rlscale.theory import AdditiveLaw

LAW = AdditiveLaw(0.5, {"environments": 4.0, "trajectories": 4.0},
                  {"environments": 0.5, "trajectories": 0.5})
COST = "environments + trajectories"


def test_iso_loss_eta_by_hand() -> None:
    # Symmetric law and cost: the optimum splits evenly, 8/sqrt(x) = 0.4 -> x = 400 each.
    eff = efficiency(LAW, COST, 0.9, "trajectories", {"environments": 200})
    assert eff.optimal_budget == pytest.approx(800, rel=1e-8)
    # Baseline: 4/sqrt(K) = 0.4 - 4/sqrt(200) -> K = (4 / (0.4 - 4/sqrt(200)))**2.
    K = (4 / (0.4 - 4 / math.sqrt(200))) ** 2
    assert eff.baseline_budget == pytest.approx(200 + K, rel=1e-9)
    assert eff.eta == pytest.approx((200 + K) / 800, rel=1e-8)
    assert eff.baseline_values["trajectories"] == pytest.approx(K, rel=1e-9)


def test_baseline_at_the_optimum_has_eta_one() -> None:
    assert efficiency(LAW, COST, 0.9, "trajectories", {"environments": 400}).eta == \
        pytest.approx(1.0, rel=1e-8)


def test_unreachable_target_gives_inf_with_a_reason() -> None:
    eff = efficiency(LAW, COST, 0.6, "trajectories", {"environments": 400})
    assert math.isinf(eff.eta)
    assert "never falls below 0.7" in eff.reason
    # Capped trajectories: the baseline stops at 0.5 + 0.4 + 0.4 = 1.3; the optimum
    # still reaches 0.95 by buying environments.
    bounded = efficiency(LAW, COST, 0.95, "trajectories", {"environments": 100},
                         bounds={"trajectories": (None, 100)})
    assert math.isinf(bounded.eta)
    assert "never falls below 1.3 up to its bound 100" in bounded.reason
    assert bounded.optimal_budget < math.inf


def test_curve_by_hand_and_monotone() -> None:
    budgets = np.array([1e3, 1e4, 1e5])
    c = efficiency_curve(LAW, COST, budgets, "trajectories", {"environments": 400})
    for i, b in enumerate(budgets):
        lb = 0.5 + 0.2 + 4 / math.sqrt(b - 400)
        assert c.baseline_loss[i] == pytest.approx(lb, rel=1e-9)
        x = (8 / (lb - 0.5)) ** 2  # optimum reaching lb: two equal halves
        assert c.optimal_budget[i] == pytest.approx(2 * x, rel=1e-7)
        assert c.eta[i] == pytest.approx(b / (2 * x), rel=1e-7)
        assert c.loss_ratio[i] == pytest.approx((lb - 0.5) / (8 / math.sqrt(b / 2)), rel=1e-7)
    assert np.all(np.diff(c.eta) > 0)
    assert len(c.rows()) == 3


def test_budgets_the_baseline_cannot_use_are_noted() -> None:
    c = efficiency_curve(LAW, COST, [100.0, 1e4], "trajectories", {"environments": 400})
    assert math.isnan(c.eta[0]) and c.eta[1] > 1
    assert "fixed axes alone cost 400" in c.notes[0]


def test_baseline_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="scaled='steps' is not a decision variable"):
        efficiency(LAW, COST, 0.9, "steps", {"environments": 1})
    with pytest.raises(ValueError, match="missing \\['environments'\\]"):
        efficiency(LAW, COST, 0.9, "trajectories", {})


def test_curve_at_a_huge_budget_keeps_the_reducible_loss() -> None:
    # At 1e300 the optimum's loss is the floor to double precision; the loss ratio
    # must come from the reducible parts (it divided 0.2 by 0.0 with a RuntimeWarning).
    b = 1e300
    c = efficiency_curve(LAW, COST, [b], "trajectories", {"environments": 400})
    want_ratio = (0.2 + 4 / math.sqrt(b - 400)) / (8 / math.sqrt(b / 2))
    assert c.loss_ratio[0] == pytest.approx(want_ratio, rel=1e-9)
    # The optimum reaching the baseline's reducible loss 0.2: 8/sqrt(x) = 0.2, x = 1600 twice.
    assert c.eta[0] == pytest.approx(b / 3200, rel=1e-7)


def test_cost_to_reach_interpolates_in_log_cost() -> None:
    from rlscale.optimize import cost_to_reach

    r = cost_to_reach([1600.0, 100.0, 400.0], [0.5, 0.1, 0.3], 0.4)  # unsorted input
    assert r.bound == "exact" and r.note == ""
    assert r.cost == pytest.approx(800.0, rel=1e-12)  # halfway in log between 400 and 1600
    # The first crossing counts, even if a dearer point dips below the target again.
    assert cost_to_reach([1.0, 10.0, 100.0], [0.0, 1.0, 0.0], 0.5).cost == pytest.approx(
        math.sqrt(10.0))
    low = cost_to_reach([100.0, 400.0], [0.1, 0.3], 0.9)
    assert (low.cost, low.bound) == (400.0, "lower") and "larger" in low.note
    up = cost_to_reach([100.0, 400.0], [0.5, 0.6], 0.4)
    assert (up.cost, up.bound) == (100.0, "upper") and "at most" in up.note
    with pytest.raises(ValueError, match="equal length"):
        cost_to_reach([1.0, 2.0], [0.1], 0.5)
    with pytest.raises(ValueError, match="costs must be > 0"):
        cost_to_reach([0.0, 2.0], [0.1, 0.2], 0.15)
