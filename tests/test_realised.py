"""Realised η from a monotone fit of the success path (issue 29, item 5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlscale.optimize import realised_efficiency


def test_isotonic_fit_pools_a_crossing_path_by_hand() -> None:
    # Per-point scores (every seed equal, so the IQM is the value): 0.1, 0.3, 0.25, 0.5.
    # Pool-adjacent-violators with equal weights merges 0.3 and 0.25 into 0.275; the
    # baseline's 0.4 lies between 0.275 (cost 400) and 0.5 (cost 800):
    # w = (0.4 − 0.275)/(0.5 − 0.275) = 5/9 of the way in log cost.
    costs = [100.0, 200.0, 400.0, 800.0]
    path = [[0.1] * 3, [0.3] * 3, [0.25] * 3, [0.5] * 3]
    r = realised_efficiency(costs, path, 800.0, [0.4] * 3, n_boot=50, rng=0)
    iso = math.exp(math.log(400.0) + 5 / 9 * math.log(2.0))
    assert r.fitted == pytest.approx((0.1, 0.275, 0.275, 0.5), rel=1e-12)
    assert r.eta == pytest.approx(800.0 / iso, rel=1e-12)
    assert r.bound == "exact" and r.status == "estimated" and r.success
    # The raw rule reads the first crossing of the unpooled path instead.
    raw = realised_efficiency(costs, path, 800.0, [0.4] * 3, n_boot=50, rng=0,
                              method="interpolate")
    w = (0.4 - 0.25) / (0.5 - 0.25)
    assert raw.eta == pytest.approx(800.0 / math.exp(math.log(400.0) + w * math.log(2.0)),
                                    rel=1e-12)


def test_a_flat_path_is_not_estimable() -> None:
    # The default report: a flat, non-monotone success path.
    rng = np.random.default_rng(3)
    costs = [250.0, 500.0, 1000.0, 2000.0]
    path = [m + rng.normal(0, 0.01, 5) for m in (0.491, 0.504, 0.498, 0.483)]
    r = realised_efficiency(costs, path, 1000.0, 0.49 + rng.normal(0, 0.01, 5), rng=0)
    assert r.bound == "not estimable" and r.eta is None and r.interval is None
    assert r.status == "not_estimable" and not r.success and not r.estimable
    assert r.slope_interval[0] <= 0.0 and "cannot be estimated" in r.note
    assert not r.overlaps(0.5, 2.0)  # nothing to agree with
    assert r.as_dict()["status"] == "not_estimable"


def test_the_slope_is_the_weighted_least_squares_slope() -> None:
    # Scores 0.1·log(cost) exactly (seeds equal): slope 0.1 per e-fold, interval collapsed.
    costs = np.geomspace(10.0, 1000.0, 5)
    path = [[0.1 * math.log(c)] * 4 for c in costs]
    r = realised_efficiency(costs, path, 300.0, [0.1 * math.log(100.0)] * 4, n_boot=100)
    assert r.slope == pytest.approx(0.1, rel=1e-12)
    assert r.slope_interval == pytest.approx((0.1, 0.1), rel=1e-12)
    assert r.eta == pytest.approx(3.0, rel=1e-9)  # reached at cost 100 exactly


def test_realised_checks_its_input() -> None:
    with pytest.raises(ValueError, match="method"):
        realised_efficiency([1.0, 2.0], [[0.1], [0.2]], 1.0, [0.1], method="spline")
    with pytest.raises(ValueError, match="two distinct costs"):
        realised_efficiency([1.0, 1.0], [[0.1], [0.2]], 1.0, [0.1])
