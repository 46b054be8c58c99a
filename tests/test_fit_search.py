"""The search step of ``fit_law`` (optimize/_fit_search.py): its work limit, the
paths it takes and the warm starts it hands to refits, pinned by hand."""

from __future__ import annotations

import numpy as np
import pytest

from rlscale.optimize import fit_law
from rlscale.optimize._fit_objective import MAX_FIT_WORK
from rlscale.optimize._fit_search import _warm


def _power_law(n: int) -> dict[str, np.ndarray]:
    x = np.logspace(0, 4, n)
    noise = np.random.default_rng(3).normal(0, 0.01, n)
    return {"x": x, "loss": 2.0 * x ** -0.3 * np.exp(noise)}


def test_the_work_limit_is_starts_times_points_up_to_and_including_1e7() -> None:
    assert MAX_FIT_WORK == 10**7
    data = _power_law(100)
    # 100,000 starts x 100 points is exactly the limit: allowed (the multiplicative
    # law's one-axis grid has 30 points, so 30 are run)
    fit = fit_law(data, law="multiplicative", axes=["x"], starts=100_000, holdout=0)
    assert fit.n_starts == 30
    assert fit.params["exponent[x]"] == pytest.approx(0.3, abs=0.01)
    with pytest.raises(ValueError, match=r"exceeds the multistart limit 1e\+07: pass fewer "
                                         r"starts \(starts='auto' picks 100000\)"):
        fit_law(data, law="multiplicative", axes=["x"], starts=100_001, holdout=0)


def test_auto_takes_the_multistart_with_the_sum_and_the_grid_with_the_mean() -> None:
    data = _power_law(20)
    total = fit_law(data, axes=["x"], holdout=0)
    assert total.n_starts == 5                   # one start per exponent of the grid
    mean = fit_law(data, axes=["x"], holdout=0, reduction="mean")
    assert mean.n_starts == 150                  # the whole 1-axis grid: 5 x 6 x 5
    grid = fit_law(data, axes=["x"], holdout=0, starts="grid")
    assert grid.n_starts == 150
    some = fit_law(data, axes=["x"], holdout=0, starts=7)
    assert some.n_starts == 7
    # the multistart's optimum is at least as low as L-BFGS from the whole grid
    assert total.objective <= grid.objective * (1 + 1e-9)


def test_warm_starts_are_the_best_and_two_distinct_runner_ups() -> None:
    a, b, c, d = np.array([[0.0, 0.0], [5.0, 0.0], [1e-3, 0.0], [0.0, 2e-3]])
    ranked = [(3.0, b), (1.0, a), (2.0, c), (2.5, d), (4.0, np.array([9.0, 9.0]))]
    warm = _warm(ranked)
    # best first; 1e-3 away (not more) is the same start; at most three
    np.testing.assert_array_equal(warm, [a, d, b])
    np.testing.assert_array_equal(_warm([(1.0, a)]), [a])
    np.testing.assert_array_equal(_warm([(2.0, a + 1.0), (1.0, a)]), [a, a + 1.0])
