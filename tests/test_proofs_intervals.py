"""The emax-lower proof's float64 enclosures with directed rounding are rigorous.

Each enclosure is checked against mpmath at 200 bits (an independent computation):
Φ at every grid point of the proof lies inside its enclosure, every power bound is
above the true power, and the certified lower bounds of e(n) lie below e(n) and
within 1e-5 of the old ``mpmath.iv`` sums (0.8306593748972698 at n = 3, ...).
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp

from rlscale.proofs._emax_lower import (
    _real_power_up,
    _series_bounds,
    emax_lower_bound,
    emax_lower_bounds,
    gaussian_cdf_enclosures,
)
from tests._mp_oracles import emax_mp


@pytest.fixture(autouse=True)
def _precision():
    with mpmath.workprec(200):
        yield


@pytest.mark.parametrize(("step", "count"), [(sp.Rational(1, 32), 192), (sp.Rational(1, 3), 24),
                                             (sp.Rational(7, 10), 9)])
def test_cdf_enclosures_contain_the_true_cdf(step, count) -> None:
    encs = gaussian_cdf_enclosures(step, count)
    assert len(encs) == count + 1
    for j, enc in enumerate(encs):
        z = mpmath.mpf(step.p) * j / step.q  # 200 bits: exact for these grids
        true = mpmath.ncdf(z)
        assert mpmath.mpf(enc.a) <= true <= mpmath.mpf(enc.b), (j, enc, true)
        assert enc.b - enc.a < 1e-13  # tight, not merely valid
    assert encs[0].a == encs[0].b == 0.5


def test_series_bounds_enclose_the_series() -> None:
    z = np.array([1e-300, 1 / 3, 1.0, 2.5, 6.0])
    lo, hi = _series_bounds(z, z)
    for zz, a, b in zip(z, lo, hi):
        # S(z) = (Φ(z) − ½)/φ(z) = √(π/2)·e^(z²/2)·erf(z/√2), without cancellation
        zz = mpmath.mpf(zz)
        true = mpmath.sqrt(mpmath.pi / 2) * mpmath.exp(zz**2 / 2) * mpmath.erf(zz / mpmath.sqrt(2))
        assert mpmath.mpf(a) <= true <= mpmath.mpf(b)
        assert b - a <= 1e-13 * b


def test_power_bounds_are_above_the_true_power_and_tight() -> None:
    rng = np.random.default_rng(20261203)
    x = np.concatenate([[1.0, 0.5, 1 - 2.0**-52, 2.0**-30, 0.0], rng.uniform(0, 1, 60)])
    n = np.concatenate([[1.0, 2.0, 3.0, 3.1875, 63.99, 64.0], rng.uniform(1, 64, 8)])
    up = _real_power_up(x, n)
    assert up.shape == (len(n), len(x))
    for i, nn in enumerate(n):
        for j, xx in enumerate(x):
            true = mpmath.mpf(xx) ** mpmath.mpf(nn)
            assert mpmath.mpf(up[i, j]) >= true, (nn, xx)
            if true > 1e-250:
                # integer n: rounding only; real n: also x^(m − n) with n − 2^-16 < m ≤ n
                weaker = 1 if nn == int(nn) else mpmath.mpf(xx) ** -mpmath.mpf(2.0**-16)
                assert up[i, j] <= true * weaker * (1 + 1e-10), (nn, xx)


def test_emax_lower_bounds_are_below_the_expected_maximum() -> None:
    ns = [1.0, 2.0, 3.0, 3.7, 10.0, 63.9]
    bounds = emax_lower_bounds(ns)
    for n, b in zip(ns, bounds):
        with mpmath.workdps(20):  # the gap is above 1e-3: 20 digits are plenty (and fast)
            true = emax_mp(mpmath.log(n)) if n > 1 else 0.0
        assert b <= true
        assert true - b < 0.02  # the 1/32 grid truncated at 6 loses little
    # the old mpmath.iv sums (main before the vectorisation), to 1e-5
    assert abs(bounds[2] - 0.8306593748972698) < 1e-12
    assert emax_lower_bound(62.168185359322734) == pytest.approx(2.3171295786403006, abs=1e-5)
    assert emax_lower_bound(3) == bounds[2]


def test_emax_lower_bounds_refuse_exponents_below_one() -> None:
    with pytest.raises(ValueError, match="ns must be real numbers >= 1"):
        emax_lower_bounds([0.5])
