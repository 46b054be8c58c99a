"""``theory/_gaussian.py`` at its branch points and validation boundaries, against mpmath.

The existing tables (``tests/test_gaussian_pinned.py``) pin the quadrature on
``n ∈ [1, 1e300]`` and ``log n ∈ {640, 660, 5000}``; here the places where
one code path hands over to another are pinned too: ``log n`` past 745 (where
``e^{-log n}`` underflows and only the log-``p`` path is exact), ``n`` just
below and above 2 and ``log 2``, ``K`` between 1e300 and the float maximum
for tilting, and each argument's lower limit (accepted at the limit, refused
below it).  E[max] is recomputed by mpmath from ``μ + ∫_μ^∞ (1 − Φ^n) −
∫_{−∞}^μ Φ^n`` (``n log Φ(μ) = −1``), a different representation from the
module's Gumbel-variable quadrature, at 40 digits: the tables below were computed by
``emax_mp`` and rounded to the nearest double (``test_tables_recompute``, marked slow,
recomputes them; about two minutes).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from _mp_oracles import emax_mp

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
from rlscale.theory._gaussian import EULER_GAMMA

mp.mp.dps = 40
RTOL = 2.5e-14




#: log n -> E[max of e^{log n} iid N(0,1)], from ``emax_mp`` at 40 digits.
LOG_TABLE = {
    649.0: 35.918675110916745,
    651.0: 35.974270488389145,
    744.0: 38.47095384936772,
    746.0: 38.52287112178779,
    800.0: 39.899142344664995,
    974.0: 44.04252907109702,
    2000.0: 63.17455056172295,
    0.3: 0.25861463969851095,
    2.0: 1.3813462821039846,
    700.0: 37.3105265475571,
    math.log(2.0): 0.5641895835477563,
}
#: n -> E[max of n iid N(0,1)], same computation.
N_TABLE = {
    1.9999999: 0.564189546824865,
    2.0000001: 0.5641896202706451,
    2.9: 0.8238308656677952,
    2.999: 0.8460645089726494,
    3.5: 0.945999007818268,
    1.5: 0.34405066133917084,
    7.0: 1.3521783756069043,
    1.2: 0.16002333487140658,
    1e6: 4.862897486196463,
    1.9: 0.5262464103608445,
    2.0: 0.5641895835477563,
}


@pytest.mark.slow
def test_tables_recompute() -> None:
    for t, v in LOG_TABLE.items():
        assert emax_mp(t) == pytest.approx(v, rel=1e-15)
    for n, v in N_TABLE.items():
        assert emax_mp(math.log(n)) == pytest.approx(v, rel=1e-15)


@pytest.mark.parametrize("log_n", [649.0, 651.0, 744.0, 746.0, 800.0, 974.0, 2000.0])
def test_expected_max_log_at_and_past_the_underflow(log_n: float) -> None:
    assert expected_max_normal_log(log_n) == pytest.approx(LOG_TABLE[log_n], rel=RTOL)


def test_expected_max_log_vectorised_across_all_three_paths() -> None:
    ts = np.array([0.3, 800.0, 2.0, math.log(2.0), 0.0, 700.0])
    want = [LOG_TABLE[t] if t > 0 else 0.0 for t in ts]
    np.testing.assert_allclose(expected_max_normal_log(ts), want, rtol=RTOL, atol=1e-300)


@pytest.mark.parametrize("n", [1.9999999, 2.0000001, 2.9, 2.999, 3.5])
def test_expected_max_near_the_path_switch(n: float) -> None:
    assert expected_max_normal(n) == pytest.approx(N_TABLE[n], rel=RTOL)
    assert expected_max_normal_log(math.log(n)) == pytest.approx(N_TABLE[n], rel=RTOL)


def test_expected_max_arrays_keep_every_entry() -> None:
    # the first and last rows of each block are written (an array mixing both paths)
    ns = np.array([1.5, 7.0, 1.2, 1e6, 1.9, 2.0])
    want = [N_TABLE[v] for v in ns]
    np.testing.assert_allclose(expected_max_normal(ns), want, rtol=RTOL)
    np.testing.assert_allclose(expected_max_normal(ns.reshape(2, 3)),
                               np.reshape(want, (2, 3)), rtol=RTOL)


def test_bounds_at_and_around_two() -> None:
    # chord (n-1)/sqrt(pi) below 2, Kamath's sqrt(log n/(pi log 2)) from 2 on
    for n in (1.5, 1.999, 2.0, 2.5, 1e6):
        lo, hi = expected_max_normal_bounds(n)
        want_lo = math.sqrt(math.log(n) / (math.pi * math.log(2))) if n >= 2 else (
            (n - 1) / math.sqrt(math.pi))
        assert lo == pytest.approx(want_lo, rel=1e-15)
        assert hi == pytest.approx(math.sqrt(2 * math.log(n)), rel=1e-15)
    lo1, hi1 = expected_max_normal_bounds(1.0)
    assert (lo1, hi1) == (0.0, 0.0)


def test_asymptotic_expansion_by_hand() -> None:
    assert float(mp.euler) == EULER_GAMMA
    for n in (1.2, 10.0, 1e6):
        a = math.sqrt(2 * math.log(n))
        b = a - (math.log(math.log(n)) + math.log(4 * math.pi)) / (2 * a)
        assert expected_max_normal_asymptotic(n) == pytest.approx(b + EULER_GAMMA / a,
                                                                  rel=1e-14)
    with pytest.raises(ValueError, match="n must be > 1; got n=1"):
        expected_max_normal_asymptotic(1.0)


def test_lower_limits_are_accepted_at_the_limit() -> None:
    assert expected_max_normal(1.0) == 0.0 and expected_max_normal(1.2) > 0
    assert expected_max_normal_log(0.0) == 0.0
    assert bon_kl(1.0) == 0.0 and bon_kl(1.2) == pytest.approx(
        math.log(1.2) - 0.2 / 1.2, rel=1e-13)
    assert quantile_mean_normal(1.0) == 0.0
    assert quantile_mean_normal(1.25) == pytest.approx(
        float(1.25 * mp.npdf(mp.sqrt(2) * mp.erfinv(2 * (1 - 1 / mp.mpf(1.25)) - 1))), rel=1e-13)
    lo, _ = expected_max_normal_bounds(1.25)
    assert lo == pytest.approx(0.25 / math.sqrt(math.pi), rel=1e-15)
    assert bon_n_for_kl(0.0) == 1.0
    assert bon_kl(bon_n_for_kl(0.5)) == pytest.approx(0.5, rel=1e-13)
    assert tilt_gain(0.0) == 0.0 and tilt_gain(0.5) == 1.0
    assert regressional_gain(2, 0.0) == pytest.approx(1 / math.sqrt(math.pi), rel=1e-14)
    assert regressional_gain(2, 0.75) == pytest.approx(0.8 / math.sqrt(math.pi), rel=1e-14)


def test_bon_n_for_kl_limit() -> None:
    n = bon_n_for_kl(708.0)
    assert math.isfinite(n)
    assert math.log(n) == pytest.approx(709.0, rel=1e-15)  # t - 1 + e^-t = 708
    with pytest.raises(ValueError, match="kl must be >= 0 and <= 708"):
        bon_n_for_kl(708.5)


@pytest.mark.parametrize("k", [0.3, 2.0, 1e200, 9.99e299, 1e300, 1.2e300, 1.4e300, 1.7e308])
def test_tilt_gain_everywhere(k: float) -> None:
    assert tilt_gain(k) == pytest.approx(float(mp.sqrt(2 * mp.mpf(k))), rel=3e-16)


def test_tilt_gain_array_without_warnings() -> None:
    ks = np.array([2.0, 1.2e300, 1.7e308, 0.5])
    with np.errstate(all="raise"):
        got = tilt_gain(ks)
    np.testing.assert_allclose(got, [2.0, math.sqrt(2.4e300), float(mp.sqrt(2 * mp.mpf(
        1.7e308))), 1.0], rtol=3e-16)


def test_regressional_gain_shapes() -> None:
    got = regressional_gain(np.array([2.0, 2.0]), np.array([[0.0], [0.75]]))
    np.testing.assert_allclose(got, np.array([[1.0, 1.0], [0.8, 0.8]]) / math.sqrt(math.pi),
                               rtol=1e-14)
    with pytest.raises(ValueError, match=r"the shapes of n \(2,\) and noise_sd \(3,\) do not "
                                         r"broadcast together"):
        regressional_gain(np.array([2.0, 3.0]), np.array([0.1, 0.2, 0.3]))
    assert regressional_gain(2, 1e300) == pytest.approx(1e-300 / math.sqrt(math.pi), rel=1e-14)
