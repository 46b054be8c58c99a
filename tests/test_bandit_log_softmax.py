"""The bandit's plain-numpy log-softmax against scipy's logsumexp and by hand."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

from rlscale.simulate._bandit import _log_softmax


def test_matches_scipy_logsumexp_with_ties_and_wide_ranges():
    rng = np.random.default_rng(7)
    for trial in range(60):
        B, n = int(rng.integers(1, 30)), int(rng.integers(1, 400))
        theta = rng.standard_normal((B, n)) * [1e-3, 1.0, 30.0, 300.0][trial % 4]
        if trial % 3 == 0:
            theta = np.round(theta)  # several entries at the maximum
        expected = theta - logsumexp(theta, axis=-1, keepdims=True)
        got = _log_softmax(theta)
        assert np.allclose(got, expected, rtol=0.0, atol=1e-12)
        assert np.allclose(np.exp(got).sum(axis=1), 1.0, rtol=0.0, atol=1e-12)


def test_by_hand():
    # [0, log 3]: probabilities 1/4 and 3/4.
    got = _log_softmax(np.array([[0.0, math.log(3.0)], [5.0, 5.0]]))
    assert np.allclose(got, [[math.log(0.25), math.log(0.75)], [-math.log(2), -math.log(2)]],
                       rtol=0.0, atol=1e-15)
    # One entry far below the others underflows to probability 0, not NaN.
    far = _log_softmax(np.array([[0.0, -2000.0]]))
    assert far[0, 0] == 0.0 and far[0, 1] == -2000.0
