"""Regression tests for what the contract fuzzing of the issue 11/12/14/15 optimize names
found (tests/_contract_cases_optimize.py); each failed before its fix.

Oracles are independent: the label plan against the numeric 1-D search on the budget
line, the Gao peak interval against the closed-form peak of each resample.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import rlscale.optimize as opt
from rlscale.theory import AdditiveLaw, ComputeSigmoid


def _sqrt_min(M, K):
    return np.sqrt(np.maximum(np.minimum(np.log(M), np.asarray(K, dtype=float)), 0.0))


@pytest.mark.parametrize("budget", [1e4, 1e20, 1e100, 1e300])
def test_plan_labels_for_a_huge_budget_is_the_optimum_not_zero(budget):
    # Before: u = x0 − W(e^(x0 + log ratio)) cancelled x0 ≈ 1e18..1e298 against W, so the
    # plan bought one comparison and the gain was 0.0 from budget 1e20 on.
    p = opt.plan_labels(1.0, 0.0, 1.0, price_m=1.0, price_k=100.0, budget=budget)
    q = opt.plan_labels_numeric(_sqrt_min, price_m=1.0, price_k=100.0, budget=budget,
                                m_max=1e308)
    assert p.gain == pytest.approx(q.gain, rel=1e-6)
    assert p.cost <= budget * (1 + 1e-12)
    # At the optimum the two arms of the min are equal: log M = c·K.
    assert math.log(p.M) == pytest.approx(p.K, rel=1e-6)


@pytest.mark.parametrize("kwargs, words", [
    ({"a": [1.0]}, "a must be a real scalar"),
    ({"target": 1e200}, "target/a"),
    ({"c": 1e-320}, "c="),
])
def test_plan_labels_refuses_arrays_and_plans_beyond_float64(kwargs, words):
    args = {"a": 1.0, "b": 0.0, "c": 1.0, "price_m": 1.0, "price_k": 100.0, "target": 2.0,
            **kwargs}
    with pytest.raises((ValueError, TypeError), match=words):
        opt.plan_labels(args.pop("a"), args.pop("b"), args.pop("c"), **args)


def test_plan_labels_numeric_checks_m_max():
    with pytest.raises(TypeError, match="m_max"):
        opt.plan_labels_numeric(_sqrt_min, price_m=1.0, price_k=1.0, budget=10.0, m_max="1")


C = np.linspace(500.0, 50000.0, 30)
Y = ComputeSigmoid(asymptote=0.645, exponent=1.7, midpoint=8000.0, start=0.3)(C)


@pytest.mark.parametrize("call, words", [
    # an asymptote grid of 2e4 steps held 2e4 x 100 x 120 floats (GBs) before
    (lambda: opt.fit_sigmoid(C, Y, asymptote_max=100.0, bootstrap=0), "asymptote_max"),
    (lambda: opt.fit_power_law(C, Y, asymptote_max=1e6), "asymptote_max"),
    (lambda: opt.fit_sigmoid([], [], bootstrap=0), "compute"),            # IndexError before
    (lambda: opt.fit_sigmoid(C, Y, start=[0.3], bootstrap=0), "start"),
    (lambda: opt.fit_sigmoid(C, Y, bootstrap=10**9), "bootstrap"),
    (lambda: opt.fit_sigmoid(C, Y, bootstrap=2, rng=-1), "rng"),
    (lambda: opt.fit_sigmoid(C * 1e299, Y, bootstrap=0), "compute"),      # overflow before
    (lambda: opt.sigmoid_audit(C, Y, drop_fraction=[0.1], bootstrap=0), "drop_fraction"),
    (lambda: opt.fit_power_law(np.full(5, 3.0), np.linspace(0.1, 0.5, 5)), "distinct"),
])
def test_sigmoid_and_power_law_limits_are_named(call, words):
    with pytest.raises((ValueError, TypeError), match=words):
        call()


def test_gao_arguments_are_named():
    kl = np.linspace(0.1, 30.0, 20)
    gold = np.sqrt(kl) * (0.913 - 0.122 * np.sqrt(kl))
    with pytest.raises(ValueError, match="kind"):
        opt.fit_gao(kl, gold, np.array(["bon", "rl"]))   # ambiguous truth value before
    with pytest.raises(ValueError, match="kl needs two or more distinct positive"):
        opt.fit_gao(np.zeros(5), np.zeros(5), bootstrap=5)   # IndexError before
    with pytest.raises(ValueError, match="kl must be"):
        opt.fit_gao(kl * 1e60, gold)


def test_gao_peak_interval_is_inf_only_where_resamples_have_no_peak():
    # gold nearly linear in d: β is near 0, so a share of the resamples has β <= 0 (no peak).
    kl = np.linspace(0.5, 30.0, 12)
    d = np.sqrt(kl)
    gold = 0.5 * d - 0.006 * d * d + np.random.default_rng(1).normal(0.0, 0.05, kl.size)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)     # nan/overflow warnings before
        fit = opt.fit_gao(kl, gold, "bon", bootstrap=400, rng=0)
    assert fit.peak is not None
    lo, hi = fit.peak_kl_interval
    assert not math.isnan(lo) and not math.isnan(hi)
    # Independent: redo the resamples (same generator) and count peakless ones.
    gen = np.random.default_rng(0)
    idx = gen.integers(0, kl.size, (400, kl.size))
    peakless = 0
    for row in idx:
        X = np.column_stack([d[row], -d[row] ** 2])
        a, b = np.linalg.lstsq(X, gold[row], rcond=None)[0]
        peakless += not (a > 0 and b > 0)
    # The upper end interpolates the order statistics at 0.975·399 (numpy's linear rule);
    # it is inf exactly when the upper of the two falls among the peakless draws.
    assert 0 < peakless < 400 and hi == math.inf and math.isfinite(lo)
    assert (hi == math.inf) == (peakless >= 400 - math.ceil(0.975 * 399))


def test_coverage_counts_must_be_whole_and_rng_named():
    n, c = np.full(10, 16), np.arange(10)
    with pytest.raises(ValueError, match="samples must hold whole numbers"):
        opt.fit_coverage(n + 0.5, c, bootstrap=0)
    with pytest.raises(ValueError, match="rng"):
        opt.fit_coverage(n, c, bootstrap=5, rng=-1)
    with pytest.raises(ValueError, match="bootstrap"):
        opt.fit_coverage(n, c, bootstrap=10**9)


LAW = AdditiveLaw(0.1, {"E": 1.0, "k": 1.0}, {"E": 0.5, "k": 0.5})
BOUNDS = {"E": (1, 1e6), "k": (1, 1e6)}
CENTRE = {"E": 10.0, "k": 10.0}


@pytest.mark.parametrize("kwargs, error, words", [
    ({"bootstrap": 0}, ValueError, "bootstrap"),      # every data set failed: RuntimeError
    ({"n_datasets": 10**9}, ValueError, "n_datasets"),
    ({"noise": 1e300}, ValueError, "noise"),           # exp overflow warning before
    ({"design": [{"E": 1.0}]}, ValueError, "design[0]"),
    ({"design": "E"}, TypeError, "design"),
    ({"baseline": ["k only"]}, TypeError, "baseline"),  # unhashable list before
    ({"seed": -1}, ValueError, "seed"),
    ({"design": [{"E": 1.0, "k": 1.0}]}, ValueError, "n_datasets=1 data sets failed"),
])
def test_calibrate_eta_limits_are_named(kwargs, error, words):
    args = {"design": opt.star_design(CENTRE, {"E": [1.0, 10.0], "k": [1.0, 10.0]}),
            "noise": 0.01, "replicates": 1, "bounds": BOUNDS, "n_datasets": 1,
            "bootstrap": 4, "plan_laws": 2, **kwargs}
    with pytest.raises(error, match=words.replace("[", r"\[").replace("]", r"\]")):
        opt.calibrate_eta(LAW, "E + k", 200.0, CENTRE, **args)


def test_plan_labels_gain_beyond_float64_is_refused_naming_a():
    # Deep profile: a = 1e308 overflowed a·sqrt(...) with a RuntimeWarning (gain inf).
    with pytest.raises(ValueError, match="a=1e"):
        opt.plan_labels(1e308, 0.0, 1.0, price_m=1.0, price_k=100.0, budget=454.6)


def test_fit_law_names_target_when_the_data_lack_its_column():
    E = np.array([1.0, 2, 4, 8, 16, 32])
    with pytest.raises(ValueError, match="target"):
        opt.fit_law({"E": E, "loss": 0.2 + E**-0.4}, axes=["E"], target="1", starts=4,
                    n_jobs=1)
