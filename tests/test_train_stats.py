"""IQM and the stratified bootstrap."""

from __future__ import annotations

import numpy as np
import pytest

from rlscale.simulate import iqm, iqm_ci, iqm_difference_ci


def test_iqm_is_the_mean_of_the_middle_half():
    x = np.arange(1.0, 9.0)  # 8 values: the middle half is 3, 4, 5, 6
    assert iqm(x) == pytest.approx(4.5)
    assert iqm(np.r_[x, 1e9, -1e9, 4.5, 4.5]) == pytest.approx(4.5)


def test_ci_covers_the_truth_and_shrinks_with_runs(rng):
    small = rng.normal(0.5, 0.1, size=(5, 20))
    big = rng.normal(0.5, 0.1, size=(200, 20))
    a, b = iqm_ci(small, rng=1), iqm_ci(big, rng=1)
    assert a.low <= 0.5 <= a.high and b.low <= 0.5 <= b.high
    assert (b.high - b.low) < (a.high - a.low) / 3


def test_coverage_is_near_nominal(rng):
    hits = 0
    for i in range(200):
        x = rng.normal(0.0, 1.0, size=(10, 4))
        ci = iqm_ci(x, n_boot=400, rng=i)
        hits += ci.low <= 0.0 <= ci.high
    assert 0.85 <= hits / 200 <= 0.99


def test_stratification_keeps_task_columns_apart():
    # Columns constant across runs: every stratified resample is the same matrix.
    x = np.tile(np.array([0.1, 0.9, 0.5, 0.3]), (6, 1))
    ci = iqm_ci(x, rng=0)
    assert ci.low == ci.high == pytest.approx(iqm(x))


def test_runs_are_resampled_independently_in_each_task_column():
    # Task 2 mirrors task 1 (score 1 − s).  Resampling whole runs would keep every
    # resample symmetric about 0.5, so its IQM would be exactly 0.5 and the CI a
    # point; resampling each column on its own breaks the pairing and the CI opens.
    s = np.linspace(0.0, 1.0, 9)
    x = np.column_stack([s, 1.0 - s])
    ci = iqm_ci(x, rng=0)
    assert ci.estimate == pytest.approx(0.5)
    assert ci.high - ci.low > 0.1


def test_difference_sign_and_bad_input():
    d = iqm_difference_ci(np.full(8, 1.0) + np.arange(8) * 1e-3, np.zeros(8), rng=0)
    assert d.low > 0.9
    with pytest.raises(ValueError, match="scores must not be empty"):
        iqm([])
    with pytest.raises(ValueError, match="confidence must be"):
        iqm_ci([1.0, 2.0], confidence=1.0)
