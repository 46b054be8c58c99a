"""Values of the Gaussian-extremes module pinned to ~1e-14 against mpmath and closed forms.

The reference table was computed with mpmath at 40 digits by the integral
``_emax_mp`` of ``tests/test_gaussian_extremes.py`` (E[max] split at the mode of
the Gumbel weight), and rounded to the nearest double; the slow test at the end
recomputes it.  The quadrature's own error is below 7e-15 relative at every
entry, so a tolerance of 2.5e-14 pins the quadrature nodes, panels and
branch points: a change that moves a value by more is a bug.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from rlscale.theory import (
    bon_kl,
    bon_n_for_kl,
    expected_max_normal,
    expected_max_normal_asymptotic,
    expected_max_normal_bounds,
    expected_max_normal_log,
    quantile_mean_normal,
    regressional_gain,
    tilt_gain,
)
from rlscale.theory._normal_selection import bon_log_n_for_kl, kl_of_log_n, quantile_mean_log

RTOL = 2.5e-14

#: (n, E[max of n iid N(0,1)]) from mpmath at 40 digits.
EMAX = [
    (1.000000001, 9.031973597036988e-10),
    (1.3, 0.2274664783502488),
    (1.7, 0.4420611096573598),
    (1.99, 0.5605055202704239),
    (2.0, 0.5641895835477563),
    (2.5, 0.723184261165497),
    (3.0, 0.8462843753216345),
    (5.0, 1.1629644736405196),
    (10.0, 1.538752730835173),
    (100.0, 2.507593636441684),
    (10000.0, 3.851615817066675),
    (1000000.0, 4.862897486196463),
    (1e15, 8.011140722778743),
    (1e50, 14.971530983883211),
    (1e150, 26.144970116379582),
    (1e300, 37.06264620664525),
]
#: (log n, E[max]) beyond the float range, same computation.
EMAX_LOG = [(640.0, 35.667425209573466), (660.0, 36.22339538399952),
            (5000.0, 99.95052195444708)]


def test_expected_max_table() -> None:
    ns, ref = np.array(EMAX).T
    np.testing.assert_allclose(expected_max_normal(ns), ref, rtol=RTOL, atol=0)
    np.testing.assert_allclose(expected_max_normal_log(np.log(ns)), ref, rtol=RTOL, atol=0)
    ts, ref_log = np.array(EMAX_LOG).T
    np.testing.assert_allclose(expected_max_normal_log(ts), ref_log, rtol=RTOL, atol=0)


def test_expected_max_closed_forms() -> None:
    # E[max of 2] = 1/sqrt(pi), E[max of 3] = 3/(2 sqrt(pi)) (order statistics of N(0,1))
    assert expected_max_normal(2.0) == pytest.approx(1 / math.sqrt(math.pi), rel=RTOL)
    assert expected_max_normal(3.0) == pytest.approx(1.5 / math.sqrt(math.pi), rel=RTOL)
    assert expected_max_normal(1.0) == 0.0
    assert expected_max_normal_log(0.0) == 0.0


def test_kamath_bounds_and_chord_values() -> None:
    lo, hi = expected_max_normal_bounds(np.array([1.5, 2.0, 2.5, 100.0]))
    want_lo = [0.5 / math.sqrt(math.pi), 1 / math.sqrt(math.pi),
               math.sqrt(math.log(2.5) / (math.pi * math.log(2))),
               math.sqrt(math.log(100.0) / (math.pi * math.log(2)))]
    np.testing.assert_allclose(lo, want_lo, rtol=1e-15)
    np.testing.assert_allclose(hi, np.sqrt(2 * np.log([1.5, 2.0, 2.5, 100.0])), rtol=1e-15)


def test_asymptotic_expansion_value() -> None:
    n = 1e6
    with mp.workdps(30):
        a = mp.sqrt(2 * mp.log(n))
        b = a - (mp.log(mp.log(n)) + mp.log(4 * mp.pi)) / (2 * a)
        want = float(b + mp.euler / a)
    assert expected_max_normal_asymptotic(n) == pytest.approx(want, rel=1e-14)


@pytest.mark.parametrize("n", [1.0 + 1e-7, 1.01, 1.2, 1.11, 2.0, 7.5, 1e300])
def test_bon_kl_matches_mpmath(n: float) -> None:
    with mp.workdps(40):
        nn = mp.mpf(n)
        want = float(mp.log(nn) - (nn - 1) / nn)
    assert bon_kl(n) == pytest.approx(want, rel=1e-14)


@pytest.mark.parametrize("t", [1e-8, 0.01, 0.0999, 0.1, 0.1001, 0.5, 3.0, 700.0])
def test_kl_of_log_n_series_and_closed_form(t: float) -> None:
    # t - 1 + e^{-t}: the Taylor branch below t = 0.1, the closed form above
    with mp.workdps(40):
        want = float(mp.mpf(t) - 1 + mp.exp(-mp.mpf(t)))
    assert float(kl_of_log_n(t)) == pytest.approx(want, rel=1e-15)


@pytest.mark.parametrize("k", [0.0, 1e-12, 0.005, 0.3, 0.999, 1.0, 4.0, 700.0])
def test_bon_pool_for_kl_inverts_exactly(k: float) -> None:
    t = float(bon_log_n_for_kl(np.float64(k)))
    with mp.workdps(40):
        kl = mp.mpf(t) - 1 + mp.exp(-mp.mpf(t))
        assert float(kl) == pytest.approx(k, rel=1e-14, abs=1e-300)
    assert bon_n_for_kl(k) == pytest.approx(math.exp(t), rel=1e-15)


@pytest.mark.parametrize("t", [1e-6, 0.3, math.log(2.0), 0.7, 3.0, 40.0, 300.0])
def test_quantile_mean_log_matches_mpmath(t: float) -> None:
    with mp.workdps(200):  # 2q - 1 must not round to -1 at q = e^-300
        q = mp.exp(-mp.mpf(t))  # kept fraction 1/n
        x = -mp.sqrt(2) * mp.erfinv(2 * q - 1)  # Φ⁻¹(1 - q)
        want = float(mp.npdf(x) / q)
    assert float(quantile_mean_log(t)) == pytest.approx(want, rel=1e-13)
    assert float(quantile_mean_log(0.0)) == 0.0
    if t < 700:
        assert quantile_mean_normal(math.exp(t)) == pytest.approx(want, rel=1e-13)


def test_tilt_and_regressional_values() -> None:
    k = np.array([0.0, 2.0, 1e299, 1e301, 1e308])
    want = [0.0, 2.0] + [math.sqrt(2) * math.sqrt(v) for v in k[2:]]
    np.testing.assert_allclose(tilt_gain(k), want, rtol=1e-15)
    # e(3) / sqrt(1 + σ²) with σ = 2
    assert regressional_gain(3.0, 2.0) == pytest.approx(1.5 / math.sqrt(5 * math.pi), rel=RTOL)
    with pytest.raises(ValueError, match=r"the shapes of n \(2,\) and noise_sd \(3,\) do not "
                                         r"broadcast together"):
        regressional_gain([2.0, 3.0], [1.0, 2.0, 3.0])


@pytest.mark.slow
def test_reference_table_recomputes() -> None:
    from tests.test_gaussian_extremes import _emax_mp

    with mp.workdps(40):
        for n, ref in EMAX:
            assert _emax_mp(mp.log(mp.mpf(n))) == pytest.approx(ref, rel=1e-15)
        for t, ref in EMAX_LOG:
            assert _emax_mp(t) == pytest.approx(ref, rel=1e-15)
