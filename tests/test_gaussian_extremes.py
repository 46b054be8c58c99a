"""e(n), its bounds and asymptotics, best-of-n KL, tilting and regressional gains (issue 3).

Every number is checked against an independent computation: mpmath at 50
digits with a different integral representation (``μ + ∫(1-Φ^n) - ∫Φ^n``
around the location ``Φ(μ)^n = 1/e``), closed forms, or brute-force sampling.
"""

from __future__ import annotations

import math
import warnings

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
    reward,
    tilt_gain,
)

mp.mp.dps = 50  # the reference precision




def _sample_ns(count: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    return np.concatenate([
        [1.0 + 1e-15, 1.0 + 1e-9, 1.5, 1.999999, 2.0, 2.000001, 10.0, 1e6, 1e300],
        np.exp(rng.uniform(0.0, np.log(1e300), count)),
    ])


@pytest.mark.parametrize("count", [3, pytest.param(200, marks=pytest.mark.slow)])
def test_expected_max_matches_mpmath_to_1e10(count: int) -> None:
    ns = _sample_ns(count)
    ours = expected_max_normal(ns)
    ref = np.array([emax_mp(mp.log(mp.mpf(float(n)))) for n in ns])
    # n = 1 + 1e-15 is not exact in binary; mp.mpf(float(n)) is, so both see the same n.
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=0)


def test_expected_max_beyond_float_range_matches_mpmath() -> None:
    ts = np.array([640.0, 660.0, 5000.0])
    ref = np.array([emax_mp(t) for t in ts])
    np.testing.assert_allclose(expected_max_normal_log(ts), ref, rtol=1e-10)


def test_expected_max_closed_forms_and_shapes() -> None:
    assert expected_max_normal(1) == 0.0
    assert expected_max_normal(2) == pytest.approx(1 / np.sqrt(np.pi), rel=1e-14)
    assert expected_max_normal(3) == pytest.approx(1.5 / np.sqrt(np.pi), rel=1e-14)
    assert isinstance(expected_max_normal(5), float)
    assert expected_max_normal(np.ones((2, 3)) * 4).shape == (2, 3)
    big = np.geomspace(2.0, 1e300, 20000)
    assert expected_max_normal(big).shape == big.shape  # the chunked path


def test_expected_max_monotone_and_concave_in_n() -> None:
    n = np.linspace(1.0, 40.0, 4001)
    e = expected_max_normal(n)
    assert np.all(np.diff(e) > 0)
    assert np.all(np.diff(e, 2) < 1e-13)  # e'' < 0 (module docstring)


def test_huge_n_no_overflow_or_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        v = expected_max_normal(1e300)
        expected_max_normal(np.finfo(float).max)
        bon_kl(1e300)
        quantile_mean_normal(1e300)
        regressional_gain(1e300, 1e3)
        assert regressional_gain(2.0, 1e300) == pytest.approx(1 / np.sqrt(np.pi) / 1e300)
        assert bon_n_for_kl(708.0) < np.finfo(float).max
        with pytest.raises(ValueError, match="kl must be >= 0 and <= 708"):
            bon_n_for_kl(np.finfo(float).max)  # n = e^kl beyond the float range: refused
        assert tilt_gain(1e308) == pytest.approx(math.sqrt(2) * 1e154, rel=1e-15)
    assert np.isfinite(v)


def test_kamath_bounds_hold_and_are_tight_where_claimed() -> None:
    n = np.concatenate([np.arange(1, 200), np.geomspace(2, 1e300, 5000), np.linspace(1, 2, 101)])
    e = expected_max_normal(n)
    lo, hi = expected_max_normal_bounds(n)
    assert np.all(lo <= e + 1e-14) and np.all(e <= hi + 1e-14)
    assert expected_max_normal_bounds(2)[0] == pytest.approx(expected_max_normal(2), rel=1e-13)
    # The integer-n bound fails for real n in (1, 2): the chord is returned there.
    assert np.sqrt(np.log(1.1) / (np.pi * np.log(2))) > expected_max_normal(1.1)


def test_asymptotic_expansion_error_shrinks() -> None:
    n = np.array([1e3, 1e6, 1e12, 1e50, 1e300])
    rel = np.abs(expected_max_normal_asymptotic(n) / expected_max_normal(n) - 1)
    assert np.all(np.diff(rel) < 0)
    assert rel[-1] < 5e-4


def test_bon_kl_against_mpmath_and_inverse() -> None:
    for n in [1 + 2.0**-30, 1.05, 2.0, 7.5, 1e6, 1e300]:
        ref = mp.log(mp.mpf(n)) - (mp.mpf(n) - 1) / mp.mpf(n)
        assert bon_kl(n) == pytest.approx(float(ref), rel=1e-12)
    ks = np.array([1e-12, 1e-3, 0.1, 1.0, 10.0, 600.0])
    # n = 1 + 1.4e-6 carries a relative rounding error 1e-16/1.4e-6 in n - 1,
    # doubled in KL ~ (n-1)^2/2: the round trip is exact to that level only.
    np.testing.assert_allclose(bon_kl(bon_n_for_kl(ks)), ks, rtol=1e-9)
    assert bon_n_for_kl(0.0) == 1.0


def test_quantile_mean_against_mpmath() -> None:
    for n in [1.5, 2.0, 10.0, 1e6, 1e300]:
        with mp.workdps(400):  # 1 - 2/n must survive for n = 1e300
            q = -mp.sqrt(2) * mp.erfinv(2 / mp.mpf(n) - 1)  # Φ⁻¹(1 - 1/n)
            ref = mp.npdf(q) * n
        assert quantile_mean_normal(n) == pytest.approx(float(ref), rel=1e-10)
    assert quantile_mean_normal(1.0) == 0.0


def test_quantile_mean_beyond_float_range_matches_mpmath() -> None:
    # log n = t up to 1e16: x solves Q(x) = e^{-t} and the mean is φ(x)/Q(x).
    # exp(t - x²/2) lost all accuracy here (3.5e6 instead of ~1.4e8 at t = 1e16).
    from rlscale.theory._normal_selection import quantile_mean_log as _quantile_mean_log

    ts = np.array([1e3, 1e8, 1e12, 1e16])
    ref = []
    with mp.workdps(30):
        for t in ts:
            def log_tail(x, t=t):
                return mp.log(mp.erfc(x / mp.sqrt(2)) / 2) + t

            x = mp.findroot(log_tail, mp.sqrt(2 * t))
            ref.append(float(mp.npdf(x) / (mp.erfc(x / mp.sqrt(2)) / 2)))
    np.testing.assert_allclose(_quantile_mean_log(ts), ref, rtol=1e-10)
    # and the quantilizer's gain respects the Donsker-Varadhan bound sqrt(2K) there
    assert reward.gain(1e300, 1e12, 0.0, "quantile") <= np.sqrt(2e12)


def test_tilt_and_regressional_gains(rng) -> None:
    assert tilt_gain(0.0) == 0.0 and tilt_gain(8.0) == 4.0
    # Tilting N(0,1) by exp(beta r), by quadrature: mean and KL = beta*mean - log Z.
    for beta in (0.3, 1.5, 4.0):
        with mp.workdps(20):  # plenty for rel=1e-12
            z_norm = mp.quad(lambda z, b=beta: mp.npdf(z) * mp.exp(b * z),
                             [-mp.inf, 0, beta, mp.inf])
            mean = mp.quad(lambda z, b=beta: z * mp.npdf(z) * mp.exp(b * z),
                           [-mp.inf, 0, beta, mp.inf]) / z_norm
            kl = beta * mean - mp.log(z_norm)
        assert tilt_gain(float(kl)) == pytest.approx(float(mean), rel=1e-12)
    x = rng.standard_normal((100_000, 10))
    y = x + 0.7 * rng.standard_normal(x.shape)
    gold = x[np.arange(x.shape[0]), np.argmax(y, axis=1)]
    se = gold.std() / np.sqrt(gold.size)
    assert abs(gold.mean() - regressional_gain(10, 0.7)) < 3 * se


@pytest.mark.parametrize(
    ("func", "args", "message"),
    [
        (expected_max_normal, (0.5,), "n must be >= 1; got n=0.5"),
        (expected_max_normal, (np.nan,), "n must be >= 1; got n=nan"),
        (expected_max_normal, (np.inf,), "n must be finite and >= 1; got n=inf"),
        (bon_kl, (0.0,), "n must be >= 1"),
        (tilt_gain, (-1.0,), "K must be >= 0; got K=-1"),
        (regressional_gain, (5, -0.1), "noise_sd must be >= 0; got noise_sd=-0.1"),
        (bon_n_for_kl, (-2.0,), "kl must be >= 0"),
        (expected_max_normal_log, (-1.0,), "log_n must be >= 0"),
    ],
)
def test_bad_input_names_argument_value_and_range(func, args, message) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        func(*args)


def test_non_numbers_are_type_errors() -> None:
    with pytest.raises(TypeError):
        expected_max_normal("10")
