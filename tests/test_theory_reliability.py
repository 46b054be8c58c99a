"""Regression tests for the theory reproducers of issue 10 (§3-§5), each against an
independent value (mpmath, closed forms) or the documented error."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
import sympy as sp

import rlscale.theory as T
from rlscale.theory import reward


def test_chinchilla_optimal_refuses_an_optimum_beyond_the_float_range() -> None:
    with pytest.raises(ValueError, match=r"outside the float range for A=1e\+308"):
        T.chinchilla_optimal(1e308, 410.7, 0.34, 0.28, 1e21)  # was OverflowError
    # huge but representable: log N + log D = log(C/6) exactly (6 N D = C)
    n, d = T.chinchilla_optimal(1e300, 1.0, 1.0, 1.0, 1e300)
    assert math.isclose(math.log(n) + math.log(d), math.log(1e300 / 6), rel_tol=1e-12)


@pytest.mark.parametrize(("cap", "error"), [(0.0, ValueError), (-1.0, ValueError),
                                            (math.nan, ValueError), ("1", TypeError),
                                            ([1.0], TypeError)])
def test_floor_at_bounds_validates_caps(cap, error) -> None:
    law = T.AdditiveLaw(0.5, {"E": 2.0, "T": 1.0}, {"E": 0.5, "T": 1.0})
    with pytest.raises(error, match=r"upper\['E'\] must be"):
        law.floor_at_bounds({"E": cap})   # 0 was ZeroDivisionError, -1 a complex number
    with pytest.raises(ValueError, match=r"upper names 'X'"):
        law.floor_at_bounds({"X": 1.0})


def test_floor_at_bounds_in_log_space() -> None:
    law = T.AdditiveLaw(0.5, {"E": 2.0, "T": 1.0}, {"E": 0.5, "T": 1.0})
    assert law.floor_at_bounds({"E": 1e400}) == 0.5          # inf cap = uncapped
    assert law.floor_at_bounds({"E": 4.0, "T": 1e-300}) == pytest.approx(1e300, rel=1e-12)
    with pytest.raises(ValueError, match="overflows the float range"):
        law.floor_at_bounds({"E": 4.0, "T": 5e-324})


def test_reward_constants_are_validated() -> None:
    with pytest.raises(TypeError, match=r"^c must be a real scalar"):
        reward.inverses(True)                                 # was AttributeError
    with pytest.raises(ValueError, match=r"^c must be > 0; got c=nan"):
        reward.law_piecewise(math.nan)                        # was a NaN expression
    with pytest.raises(ValueError, match=r"^c must be a positive"):
        reward.law_piecewise(-sp.sqrt(2))
    c = sp.Symbol("c", positive=True)
    assert reward.law_piecewise(c).subs({reward.M: sp.E**4, reward.K: 1}) == c


def test_uniform_filter_threshold_against_mpmath() -> None:
    for c_g, c_t in [(1.0, 1e218), (0.5, 2.0), (1e-300, 1e300), (1e300, 1.0), (3.0, 1e-200)]:
        with mp.workdps(60):
            s = mp.mpf(c_g) + mp.mpf(c_t)
            want = (s - mp.sqrt(s * s - mp.mpf(c_t) ** 2)) / mp.mpf(c_t)
        assert T.uniform_filter_threshold(c_g, c_t) == pytest.approx(float(want), rel=1e-13)


def test_relative_critical_ratio_against_mpmath_without_cancellation() -> None:
    for rho, S, c_r, c_s in [(0.5, 2.0, 10.0, 1.0), (0.9, 1e-3, 1e20, 1.0),
                             (2.0, 1.0, 1.0, 1.9), (0.5, 1e5, 1e3, 1.0)]:
        m = T.SynthesisMethod("E", unit_cost=c_s, rho=rho, saturation=S, kind="relative")
        with mp.workdps(80):
            z = -((1 + mp.mpf(rho) * S) / (mp.mpf(rho) * S)) * mp.exp(-1 - mp.mpf(c_r) / (c_s * S))
            want = -S * mp.lambertw(z, -1).real - S - mp.mpf(c_r) / c_s
        assert T.critical_synthetic_ratio(m, c_r).ratio == pytest.approx(float(want), rel=1e-10)


def test_nested_totals_validates_and_refuses_overflow() -> None:
    with pytest.raises(TypeError, match=r"^E must be a real number"):
        T.nested_totals("a", 2, 2)                            # was {'tasks': 'aa', ...}
    with pytest.raises(ValueError, match="overflows the float range"):
        T.nested_totals(1e200, 1e200, 1.0)
    assert T.nested_totals(2**40, 2**40, 2**40)["trajectories"] == 2**120  # exact integers


@pytest.mark.parametrize(("call", "name"), [
    (lambda v: T.chinchilla_optimal(v, 410.7, 0.34, 0.28, 1e21), "A"),
    (lambda v: T.uniform_filter_threshold(v, 1.0), "gen_cost"),
    (lambda v: T.nested_optimum(T.VarianceComponentsLaw(0, 1, 1, 1), 1.0, 1.0, 1.0, v),
     "budget"),
    (lambda v: T.AdditiveLaw(v, {"E": 1.0}, {"E": 1.0}), "floor"),
    (lambda v: reward.comparisons_needed_theta(2.0, 10.0, c=v), "c"),
    (lambda v: T.SynthesisMethod("E", unit_cost=v, rho=1.0), "unit_cost"),
])
@pytest.mark.parametrize("value", [np.array([1.0]), [1.0], np.array([[1.0, 2.0]])])
def test_one_element_arrays_for_scalars_are_refused_naming_the_argument(call, name, value):
    # numpy's "only 0-dimensional arrays can be converted to Python scalars" before
    with pytest.raises(TypeError, match=rf"^{name} must be a real scalar, not an array of shape"):
        call(value)
