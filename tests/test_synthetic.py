"""Synthetic data: effective counts, critical ratios, filter thresholds, the solver's pick."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import minimize_scalar

from rlscale.optimize import allocate
from rlscale.theory import (
    AdditiveLaw,
    SynthesisMethod,
    critical_synthetic_ratio,
    filter_price,
    optimal_filter_threshold,
    uniform_filter_threshold,
)


def test_effective_counts_and_marginals() -> None:
    lin = SynthesisMethod("E", unit_cost=2.0, rho=0.5)
    sat = SynthesisMethod("E", unit_cost=2.0, rho=0.5, saturation=100.0)
    rel = SynthesisMethod("E", unit_cost=2.0, rho=0.5, saturation=2.0, kind="relative")
    assert lin.effective(10.0, 8.0) == 14.0
    assert sat.effective(10.0, 100.0) == pytest.approx(10 + 50 * (1 - math.exp(-1)), rel=1e-14)
    # Relative saturation is Muennighoff et al.'s D' = U + U R* (1 - exp(-R/R*)).
    U, R = 10.0, 3.0
    assert rel.effective(U, U * R) == pytest.approx(U + 0.5 * U * 2.0 * (1 - math.exp(-R / 2)))
    for m in (lin, sat, rel):
        h = 1e-6
        num = (m.effective(10.0, 8.0 + h) - m.effective(10.0, 8.0 - h)) / (2 * h)
        assert m.marginal(10.0, 8.0) == pytest.approx(num, rel=1e-7)
        num_r = (m.effective(10.0 + h, 8.0) - m.effective(10.0 - h, 8.0)) / (2 * h) - 1.0
        assert m.marginal_real(10.0, 8.0) == pytest.approx(num_r, abs=1e-7)
    assert sat.price(10.0, 0.0) == pytest.approx(0.25)


def test_absolute_saturation_critical_amount_is_where_prices_meet() -> None:
    m = SynthesisMethod("E", unit_cost=2.0, rho=0.8, saturation=300.0)
    crit = critical_synthetic_ratio(m, real_cost=10.0, real=1000.0)
    assert crit.amount == pytest.approx(300.0 * math.log(0.8 * 10.0 / 2.0), rel=1e-14)
    assert m.price(1000.0, crit.amount) == pytest.approx(1 / 10.0, rel=1e-12)
    assert crit.ratio == pytest.approx(crit.amount / 1000.0)


@pytest.mark.parametrize(("rho", "s", "c_r", "c_s"),
                         [(0.5, 2.0, 10.0, 1.0), (0.9, 0.5, 3.0, 1.0), (0.3, 5.0, 20.0, 2.0)])
def test_relative_saturation_lambert_w_ratio_maximises_value_per_cost(rho, s, c_r, c_s) -> None:
    m = SynthesisMethod("E", unit_cost=c_s, rho=rho, saturation=s, kind="relative")
    crit = critical_synthetic_ratio(m, real_cost=c_r)

    def value_per_cost(r: float) -> float:
        return (1 + rho * s * (1 - math.exp(-r / s))) / (c_r + c_s * r)

    brute = minimize_scalar(lambda r: -value_per_cost(r), bounds=(0, 1e3), method="bounded",
                            options={"xatol": 1e-12}).x
    assert crit.ratio == pytest.approx(brute, rel=1e-5)


def test_synthetic_that_never_pays_gets_zero() -> None:
    m = SynthesisMethod("E", unit_cost=10.0, rho=0.5, saturation=2.0, kind="relative")
    assert critical_synthetic_ratio(m, real_cost=10.0).ratio == 0.0
    assert critical_synthetic_ratio(SynthesisMethod("E", 10.0, 0.5), real_cost=10.0).ratio == 0
    assert math.isinf(critical_synthetic_ratio(SynthesisMethod("E", 1.0, 0.5), 10.0).ratio)


def test_the_solver_picks_the_closed_form_critical_ratio() -> None:
    # With unlimited real data and relative saturation, the optimum buys synthetic
    # at exactly the ratio that maximises effective units per cost.
    law = AdditiveLaw(0.1, {"environments": 5.0, "trajectories": 2.0},
                      {"environments": 0.5, "trajectories": 0.3})
    m = SynthesisMethod("environments", unit_cost=1.0, rho=0.5, saturation=2.0,
                        kind="relative")
    a = allocate(law, "10*environments + trajectories", 1e6, synthesis=[m])
    ratio = a.values["environments_synthetic"] / a.values["environments"]
    assert ratio == pytest.approx(critical_synthetic_ratio(m, 10.0).ratio, rel=1e-6)
    assert a.kkt_residual <= 1e-6


def test_the_solver_fills_capped_real_data_before_absolute_synthetic() -> None:
    law = AdditiveLaw(0.1, {"environments": 5.0, "trajectories": 2.0},
                      {"environments": 0.5, "trajectories": 0.3})
    m = SynthesisMethod("environments", unit_cost=20.0, rho=0.5, saturation=500.0)
    a = allocate(law, "100*environments + trajectories", 1e6, synthesis=[m],
                 bounds={"environments": (None, 300)})
    assert a.values["environments"] == pytest.approx(300, rel=1e-9)
    # Interior synthetic amount: its marginal value per cost equals trajectories'.
    x = a.effective
    d_env = 0.5 * 5.0 * x["environments"] ** -1.5 * m.marginal(300.0, a.values[m.name]) / 20.0
    d_traj = 0.3 * 2.0 * x["trajectories"] ** -1.3 / 1.0
    assert d_env == pytest.approx(d_traj, rel=1e-6)
    assert a.kkt_residual <= 1e-6


def test_synthesis_needs_a_linear_cost() -> None:
    law = AdditiveLaw(0.1, {"E": 5.0, "K": 2.0}, {"E": 0.5, "K": 0.3})
    with pytest.raises(ValueError, match="linear in the counts"):
        allocate(law, "E*K", 10.0, synthesis=[SynthesisMethod("E", 1.0, 0.5)])
    with pytest.raises(ValueError, match="targets axis 'Q'"):
        allocate(law, "E + K", 10.0, synthesis=[SynthesisMethod("Q", 1.0, 0.5)])


@pytest.mark.parametrize(("c_g", "c_t"), [(1.0, 1.0), (0.5, 2.0), (3.0, 0.5)])
def test_filter_threshold_uniform_closed_form_and_brute_force(c_g, c_t) -> None:
    q = stats.uniform(0, 1)
    f = optimal_filter_threshold(q, c_g, c_t)
    assert f.threshold == pytest.approx(uniform_filter_threshold(c_g, c_t), abs=1e-9)
    grid = np.linspace(0, 0.99, 991)
    brute = grid[np.argmax((1 - grid**2) / 2 / (c_g + c_t * (1 - grid)))]
    assert f.threshold == pytest.approx(brute, abs=2e-3)
    assert f.price == pytest.approx(float(filter_price(f.threshold, q, c_g, c_t)), rel=1e-8)
    assert f.threshold == pytest.approx(c_t * f.price, rel=1e-8)  # tau = c_train * price


def test_filter_threshold_from_samples_matches_the_distribution(rng) -> None:
    q = stats.beta(2, 5)
    samples = q.rvs(size=200_000, random_state=rng)
    f_dist = optimal_filter_threshold(q, 0.2, 1.0)
    f_samp = optimal_filter_threshold(samples, 0.2, 1.0)
    assert f_samp.threshold == pytest.approx(f_dist.threshold, abs=5e-3)
    assert f_samp.price == pytest.approx(f_dist.price, rel=5e-3)
    method = f_dist.method("environments")
    assert method.rho == pytest.approx(f_dist.mean_quality)
    assert method.unit_cost == pytest.approx(0.2 / f_dist.acceptance + 1.0)


def test_bad_synthesis_input_is_rejected() -> None:
    with pytest.raises(ValueError, match="rho must be > 0"):
        SynthesisMethod("E", 1.0, 0.0)
    with pytest.raises(ValueError, match="unit_cost must be > 0"):
        SynthesisMethod("E", -1.0, 0.5)
    with pytest.raises(ValueError, match="needs saturation"):
        SynthesisMethod("E", 1.0, 0.5, kind="relative")
    with pytest.raises(ValueError, match="kind must be one of"):
        SynthesisMethod("E", 1.0, 0.5, kind="quadratic")
    with pytest.raises(ValueError, match="real_cost must be > 0"):
        critical_synthetic_ratio(SynthesisMethod("E", 1.0, 0.5), 0.0)
    with pytest.raises(ValueError, match="no synthetic unit has positive quality"):
        optimal_filter_threshold(np.array([-1.0, -2.0]), 1.0, 1.0)


def test_the_solver_buys_from_the_optimally_filtered_source() -> None:
    # Three filtered versions of one generator (U(0, 1) quality): the solver spends
    # only on the one at the optimal threshold, which has the best price.
    q = stats.uniform(0, 1)
    best = optimal_filter_threshold(q, gen_cost=1.0, train_cost=1.0)
    methods = []
    for name, tau in (("loose", 0.0), ("best", best.threshold), ("strict", 0.7)):
        a = float(q.sf(tau))
        m = float(q.expect(lambda v: v, lb=tau, conditional=True))
        methods.append(SynthesisMethod("environments", unit_cost=1.0 / a + 1.0, rho=m,
                                       name=name))
    law = AdditiveLaw(0.1, {"environments": 5.0, "trajectories": 2.0},
                      {"environments": 0.5, "trajectories": 0.3})
    alloc = allocate(law, "10*environments + trajectories", 1e5, synthesis=methods,
                     bounds={"environments": (None, 50)})
    assert alloc.values["best"] > 100
    assert alloc.values["loose"] < 1e-6 * alloc.values["best"]
    assert alloc.values["strict"] < 1e-6 * alloc.values["best"]


def test_filter_price_on_samples_matches_a_direct_mean(rng) -> None:
    # Direct per-threshold means (independent of the sorted tail sums).
    q = rng.beta(2, 5, 501)
    taus = np.concatenate([[-1.0, 0.0, 2.0], q[:20], rng.uniform(0, 1, 20)])
    got = filter_price(taus, q, 0.3, 1.5)
    want = [np.mean(np.where(q >= t, q, 0.0)) / (0.3 + 1.5 * np.mean(q >= t)) for t in taus]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    scalar = filter_price(0.2, q, 0.3, 1.5)
    assert np.ndim(scalar) == 0
    assert scalar == pytest.approx(np.mean(np.where(q >= 0.2, q, 0.0))
                                   / (0.3 + 1.5 * np.mean(q >= 0.2)), rel=1e-12)
