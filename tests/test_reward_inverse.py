"""Exact inverses of the model gain: comparisons and KL budget needed (issue 11 §5)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from rlscale.theory import bon_n_for_kl, expected_max_normal, reward

mp.mp.dps = 30


def _tilt_gain_mp(m: mp.mpf, k: mp.mpf, tau: mp.mpf) -> mp.mpf:
    """Closed-form envelope U(M, K) (module docstring), evaluated in mpmath."""
    kstar = 1 + mp.lambertw(m / (mp.e * tau**2)).real
    t = min(k, kstar)
    return mp.sqrt(2 * t / (1 + tau**2 * mp.exp(t) / m))


def _tilt_m_needed(g: float, k: float, tau: float) -> float:
    """Invert U in closed form: M = τ²e^K g²/(2K − g²) while K <= K*(M), else
    M = eτ² w e^w with w = g²/2 (the saturated branch sqrt(2 W(M/(eτ²))) = g)."""
    g, k, tau = mp.mpf(g), mp.mpf(k), mp.mpf(tau)
    if 2 * k > g**2:
        m = tau**2 * mp.exp(k) * g**2 / (2 * k - g**2)
        if k <= 1 + mp.lambertw(m / (mp.e * tau**2)).real:
            return float(m)
    w = g**2 / 2
    return float(mp.e * tau**2 * w * mp.exp(w))


@pytest.mark.parametrize(("m0", "k", "tau"), [(50.0, 4.0, 1.0), (1e6, 3.0, 0.5), (1e6, 30.0, 2.0),
                                               (1e300, 690.0, 1.0), (1e300, 680.0, 1.0),
                                               (1e40, 80.0, 1.0)])
def test_tilt_comparisons_match_closed_form(m0, k, tau) -> None:
    g = float(_tilt_gain_mp(mp.mpf(m0), mp.mpf(k), mp.mpf(tau)))
    m = reward.comparisons_needed(g, k, tau, method="tilt")
    assert m == pytest.approx(_tilt_m_needed(g, k, tau), rel=1e-9)
    assert reward.gain(m, k, tau, method="tilt") == pytest.approx(g, rel=1e-9)


@pytest.mark.parametrize(("g", "m", "tau"), [(1.0, 1e3, 1.0), (2.0, 1e6, 1.0), (3.5, 1e8, 2.0),
                                              (30.0, 1e300, 1.0)])
def test_tilt_kl_matches_mpmath_root(g, m, tau) -> None:
    mm, tt = mp.mpf(m), mp.mpf(tau)
    kstar = 1 + mp.lambertw(mm / (mp.e * tt**2)).real
    root = mp.findroot(lambda t: 2 * t / (1 + tt**2 * mp.exp(t) / mm) - g**2,
                       (mp.mpf("1e-30"), kstar), solver="bisect")
    k = reward.kl_needed(g, m, tau, method="tilt")
    assert k == pytest.approx(float(root), rel=1e-9)


@pytest.mark.parametrize("method", reward.METHODS)
@pytest.mark.parametrize(("m0", "k", "tau"), [(10.0, 0.3, 1.0), (1e4, 4.0, 0.5), (1e9, 20.0, 2.0),
                                               (1e100, 600.0, 1.0)])
def test_round_trip_and_smallest(method, m0, k, tau) -> None:
    g = float(reward.gain(m0, k, tau, method))
    m = reward.comparisons_needed(g, k, tau, method)
    assert reward.gain(m, k, tau, method) == pytest.approx(g, rel=1e-9, abs=0)
    assert reward.gain(m * (1 - 1e-6), k, tau, method) < g  # the smallest such M
    kk = reward.kl_needed(g, m0, tau, method)
    assert reward.gain(m0, kk, tau, method) == pytest.approx(g, rel=1e-9, abs=0)
    if reward.gain(m0, 1.01 * k, tau, method) > g * (1 + 1e-9):  # the budget binds at k
        assert reward.gain(m0, kk * (1 - 1e-6), tau, method) < g  # the smallest such K


def test_the_issue_example_needs_far_more_than_the_theta_form() -> None:
    m = reward.comparisons_needed(2.0, 4.0)  # bon, τ = 1
    assert 160 < m < 180                      # the exact model (issue 11: "about 171")
    assert reward.comparisons_needed_theta(2.0, 4.0) == pytest.approx(math.exp(2.0))
    # brute force: the best pool gain e(n)/sqrt(1 + n/M) over feasible n, just below and at m
    n = np.exp(np.linspace(0.0, math.log(bon_n_for_kl(4.0)), 200_001))
    best = lambda mm: float(np.max(expected_max_normal(n) / np.sqrt(1 + n / mm)))  # noqa: E731
    assert best(m * 0.999) < 2.0 <= best(m * 1.001)


def test_unreachable_targets_name_the_supremum() -> None:
    sup = float(expected_max_normal(bon_n_for_kl(4.0)))  # noise-free best-of-n at K = 4
    with pytest.raises(ValueError, match=f"supremum {sup:.5g}"):
        reward.comparisons_needed(sup, 4.0)
    with pytest.raises(ValueError, match=r"unreachable by tilt at M=1e\+06.*best gain"):
        reward.kl_needed(10.0, 1e6, method="tilt")
    with pytest.raises(ValueError, match="target must be >= 0"):
        reward.comparisons_needed(-1.0, 4.0)
    with pytest.raises(ValueError, match="method must be one of"):
        reward.kl_needed(1.0, 1e6, method="best")


def test_edges_and_vectorisation() -> None:
    assert reward.comparisons_needed(0.0, 4.0) == 1.0      # nothing to gain: one comparison
    assert reward.kl_needed(0.0, 1e6) == 0.0
    assert reward.comparisons_needed(0.5, 4.0, noise=0.0) == 1.0  # no noise: M does not matter
    assert reward.kl_needed(3.0, 10.0, noise=0.0, method="tilt") == pytest.approx(4.5, rel=1e-12)
    gs = np.array([0.5, 1.0, 2.0])
    vec = reward.comparisons_needed(gs, 4.0)
    assert vec.shape == (3,) and np.all(np.diff(vec) > 0)
    assert vec[1] == pytest.approx(reward.comparisons_needed(1.0, 4.0), rel=1e-13)


def test_comparisons_beyond_float64_name_the_noise() -> None:
    # Found by the theory contract suite (dev profile, noise fuzzed): the message named
    # target, K and method but not the noise that put the target beyond 1.8e308 comparisons.
    with pytest.raises(ValueError, match=r"noise=4\.98064e\+153 needs more than 1\.8e308"):
        reward.comparisons_needed(1.0, 4.0, noise=4.980636125403946e+153)
