"""The reward-optimisation law: model gains, proved constants, symbolic forms (issue 3)."""

from __future__ import annotations

import math
import warnings

import mpmath as mp
import numpy as np
import pytest
import sympy as sp

from rlscale.theory import expected_max_normal, quantile_mean_normal, reward
from rlscale.theory.reward import K, M


def _dense_max(method: str, m: float, k: float, tau: float) -> float:
    """Brute-force optimiser: the pool gain on 20,001 log-spaced feasible n."""
    if method == "bon":
        # feasible n: log n - 1 + 1/n <= K, found by bisection with mpmath
        t_hi = float(mp.findroot(lambda t: t - 1 + mp.exp(-t) - k, (0, k + 2), solver="bisect"))
    else:
        t_hi = k
    n = np.exp(np.linspace(0.0, t_hi, 20001))
    noise = 1.0 + tau**2 * n / m
    if method == "bon":
        top = expected_max_normal(n)
    elif method == "quantile":
        top = quantile_mean_normal(n)
    else:
        top = np.sqrt(2 * np.minimum(k, np.log(n)))
    return float(np.max(top / np.sqrt(noise)))


@pytest.mark.parametrize("method", reward.METHODS)
@pytest.mark.parametrize(("m", "k", "tau"), [(10, 0.05, 2.0), (1e3, 3.0, 1.0), (1e6, 14.0, 0.5),
                                              (1e8, 50.0, 1.0), (1e4, 9.2, 2.0)])
def test_gain_is_the_maximum_over_pool_sizes(method, m, k, tau) -> None:
    ours = reward.gain(m, k, tau, method)
    dense = _dense_max(method, m, k, tau)
    assert ours >= dense - 1e-12  # never below a brute-force search
    assert ours == pytest.approx(dense, rel=2e-6)  # and the grid is that fine


def test_tilt_envelope_closed_form_via_lambert_w() -> None:
    # Saturated regime: U = sqrt(2 W(M/(e tau^2))), computed with mpmath's W.
    for m, tau in [(100.0, 1.0), (1e6, 0.5), (1e8, 2.0)]:
        w = float(mp.lambertw(mp.mpf(m) / (mp.e * tau**2)).real)
        assert reward.gain_upper(m, 60.0, tau) == pytest.approx(math.sqrt(2 * w), rel=1e-12)
    # KL-limited regime: U = sqrt(2K/(1 + tau^2 e^K/M)).
    assert reward.gain_upper(1e6, 2.0, 1.0) == pytest.approx(
        math.sqrt(4.0 / (1 + math.exp(2.0) / 1e6)), rel=1e-13)


@pytest.mark.parametrize("method", ["bon", "quantile"])
def test_every_method_is_below_the_envelope(method) -> None:
    rng = np.random.default_rng(3)
    m = 10 ** rng.uniform(1, 9, 300)
    k = 10 ** rng.uniform(-2, 2, 300)
    tau = rng.uniform(0.1, 3, 300)
    assert np.all(reward.gain(m, k, tau, method) <= reward.gain_upper(m, k, tau) + 1e-12)


def test_proved_constants_are_their_exact_values_rounded_outward() -> None:
    # The exact constants at 50 digits; the floats must lie on the safe side
    # (C_LO below, C_HI above) and be the nearest floats on that side.
    with mp.workdps(50):
        rho = (1 + mp.log(1 + mp.mpf(10) / (mp.e * mp.mpf("0.25")))) / mp.log(10)
        hi = mp.sqrt(2 * rho)
        theta = 1 - 2 * mp.log(2) / mp.log(10)
        lo = mp.sqrt(theta / (4 * mp.pi * mp.log(2)))
        assert mp.mpf(reward.C_HI) >= hi and mp.mpf(math.nextafter(reward.C_HI, 0.0)) < hi
        assert mp.mpf(reward.C_LO) <= lo and mp.mpf(math.nextafter(reward.C_LO, 1.0)) > lo
    assert round(reward.C_LO, 6) == 0.213743 and round(reward.C_HI, 6) == 1.805887
    # the symbolic bound expressions carry the same constants
    assert float(reward.upper_bound_expr().subs({M: 10, K: 1})) == pytest.approx(reward.C_HI)
    assert float(reward.lower_bound_expr().subs({M: 10, K: 1})) == pytest.approx(reward.C_LO)


def test_proof_lemmas_numerically() -> None:
    # (U2) W(z) <= log(1 + z)
    for z in [0.0, 0.1, 1.0, 10.0, 1e6, 1e300]:
        assert float(mp.lambertw(z).real) <= math.log1p(z) + 1e-15
    # (U4) g(M) decreasing on M >= 10
    ms = np.geomspace(10, 1e300, 1000)
    g = (1 + np.log1p(ms / (math.e * 0.25))) / np.log(ms)
    assert np.all(np.diff(g) < 0)
    # (L1) best-of-n KL <= (n-1)^2/2 on [1, 2] and the chord e(n) >= (n-1)/sqrt(pi)
    n = np.linspace(1, 2, 1001)
    assert np.all(np.log(n) - 1 + 1 / n <= (n - 1) ** 2 / 2 + 1e-16)
    assert np.all(expected_max_normal(n) >= (n - 1) / math.sqrt(math.pi) - 1e-14)
    # (L3) Kamath at integers; (L4) floor(x) >= sqrt(x) for x >= 4
    ints = np.arange(2, 5000)
    assert np.all(expected_max_normal(ints) >= np.sqrt(np.log(ints) / (np.pi * np.log(2))) - 1e-14)
    x = np.linspace(4, 1e4, 100001)
    assert np.all(np.floor(x) >= np.sqrt(x))
    # (Q) the quantilizer beats best-of-n at equal pool size (used for K >= 1/2) ...
    big = np.concatenate([np.linspace(1, 2, 101), np.geomspace(2, 1e300, 3000)])
    assert np.all(quantile_mean_normal(big) >= expected_max_normal(big) - 1e-15)
    # ... and where n = 2 would overspend its KL (1/2 <= K < log 2) the real pool
    # n = e^K keeps a margin over C_LO*sqrt(log 2) (q(e^{1/2})/sqrt 2, by mpmath).
    with mp.workdps(30):
        q_half = mp.exp(0.5) * mp.npdf(-mp.sqrt(2) * mp.erfinv(2 * mp.exp(-0.5) - 1))
    assert float(q_half) / math.sqrt(2) > 2 * reward.C_LO * math.sqrt(math.log(2))
    ks = np.linspace(0.5, math.log(2), 50)
    for tau in (0.5, 2.0):
        g = reward.gain(10.0, ks, tau, "quantile")
        assert np.all(g >= float(q_half) / math.sqrt(2) - 1e-12)


def test_band_holds_on_the_proved_domain() -> None:
    rng = np.random.default_rng(11)
    m = 10 ** rng.uniform(1, 300, 4000)
    k = 10 ** rng.uniform(-8, 3, 4000)
    tau = rng.uniform(0.5, 2.0, 4000)
    for method in reward.METHODS:
        kk = np.maximum(k, 0.5) if method == "quantile" else k
        r = np.sqrt(np.minimum(np.log(m), kk))
        ratio = reward.gain(m, kk, tau, method) / r
        assert ratio.min() >= reward.C_LO and ratio.max() <= reward.C_HI, method
    # The top of the measured band: the tilt reaches sqrt(2) (the DV bound) when
    # e^K << M; best-of-n stays below it (e(n) < sqrt(2 log n)).
    assert reward.gain(1e300, 1.0, 1.0, "tilt") == pytest.approx(math.sqrt(2), rel=1e-12)
    assert 1.0 < reward.gain(1e300, 1.0, 1.0, "bon") < math.sqrt(2)


def test_quantilizer_is_not_sqrt_k_at_small_budgets() -> None:
    ks = np.array([1e-2, 1e-4, 1e-6])
    ratio = reward.gain(1e6, ks, 1.0, "quantile") / np.sqrt(ks)
    assert np.all(np.diff(ratio) < 0) and ratio[-1] < 0.02
    # ~ K sqrt(2 log(1/K)): the documented limit
    assert reward.gain(1e6, 1e-6, 1.0, "quantile") == pytest.approx(
        1e-6 * math.sqrt(2 * math.log(1e6)), rel=0.2)
    # best-of-n keeps a sqrt(K) start
    assert reward.gain(1e6, 1e-6, 1.0, "bon") / 1e-3 > 0.5


def test_shape_of_the_law() -> None:
    # ~ sqrt(2K) while e^K << M; saturates near sqrt(2 log M) when e^K >> M.
    assert reward.gain(1e100, 2.0, 1.0, "tilt") == pytest.approx(2.0, rel=1e-12)
    for m in [1e4, 1e8]:
        sat = reward.gain(m, 200.0, 1.0, "bon")
        assert sat == pytest.approx(reward.gain(m, 100.0, 1.0, "bon"), rel=1e-9)
        assert 0.7 < sat / math.sqrt(2 * math.log(m)) < 1.0
    assert reward.gain(1e4, 0.0, 1.0) == 0.0
    np.testing.assert_array_equal(reward.gain(1e4, [0.0, 0.0], 1.0, "quantile"), [0.0, 0.0])


def test_optimal_pool_size() -> None:
    assert reward.optimal_pool_size(1e300, 3.0, 1.0, "tilt") == pytest.approx(math.exp(3.0))
    m, tau = 1e6, 1.0
    w = float(mp.lambertw(m / (math.e * tau**2)).real)
    assert reward.optimal_pool_size(m, 100.0, tau, "tilt") == pytest.approx(m / (tau**2 * w))
    n = reward.optimal_pool_size(1e4, 50.0, 1.0, "bon")
    assert reward.gain_at_pool(n, 1e4, 1.0, "bon") == pytest.approx(
        reward.gain(1e4, 50.0, 1.0, "bon"), rel=1e-12)


def test_no_overflow_or_warning_at_extremes() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for method in reward.METHODS:
            for m in (1.0, 1e300, np.finfo(float).max):
                for k in (1e-300, 700.0, 1e5, 1e16, np.finfo(float).max):
                    for tau in (0.0, 1e-200, 100.0, 1e300):
                        g = reward.gain(m, k, tau, method)
                        assert np.isfinite(g) and g <= math.sqrt(2) * math.sqrt(k) * (1 + 1e-12)
                        reward.optimal_pool_size(m, k, tau, method)
                        reward.gain_upper(m, k, tau)
                    assert reward.gain_at_pool(1e300, m, 1e300, method, K=k) >= 0.0
        # sqrt(2K) at K = float max is 1.9e154: finite, and reached without noise
        big = np.finfo(float).max
        assert reward.gain(1.0, big, 0.0, "tilt") == pytest.approx(math.sqrt(2) * math.sqrt(big))
        with pytest.raises(ValueError, match="noise variance overflows the float range"):
            reward.noise_variance(1e300, 1.0, 1e300)  # beyond float range: refused


@pytest.mark.parametrize(
    ("args", "message"),
    [((0.5, 1.0), "M must be >= 1; got M=0.5"), ((10.0, -1.0), "K must be >= 0; got K=-1"),
     ((10.0, 1.0, -0.5), "noise must be >= 0; got noise=-0.5"),
     ((np.nan, 1.0), "M must be >= 1; got M=nan"), ((10.0, np.inf), "K must be finite")],
)
def test_bad_input(args, message) -> None:
    with pytest.raises(ValueError, match=message):
        reward.gain(*args)


def test_bad_method() -> None:
    with pytest.raises(ValueError, match="method must be one of bon, quantile, tilt"):
        reward.gain(10, 1, method="ppo")


# ----------------------------------------------------------------------------- symbolic


def test_symbolic_law_piecewise_and_crossover() -> None:
    expr = reward.law()
    assert expr.subs({M: sp.E**5, K: 2}) == sp.sqrt(2)
    assert expr.subs({M: sp.E**2, K: 7}) == sp.sqrt(2)
    pw = reward.law_piecewise(3)
    assert pw.subs({M: sp.E**5, K: 2}) == 3 * sp.sqrt(2)
    assert reward.crossover() == sp.log(M)
    f = reward.to_numpy()
    np.testing.assert_allclose(f(np.array([1e4, 10.0]), np.array([2.0, 50.0])),
                               [math.sqrt(2), math.sqrt(math.log(10))])
    assert reward.latex() == sp.latex(sp.sqrt(sp.Min(K, sp.log(M))))


def test_elasticities_match_finite_differences() -> None:
    el = reward.elasticities()
    f = reward.to_numpy()
    for m, k in [(1e6, 2.0), (100.0, 30.0)]:
        h = 1e-6
        dm = (math.log(f(m * math.exp(h), k)) - math.log(f(m, k))) / h
        dk = (math.log(f(m, k * math.exp(h))) - math.log(f(m, k))) / h
        assert float(el["M"].subs({M: m, K: k})) == pytest.approx(dm, abs=1e-5)
        assert float(el["K"].subs({M: m, K: k})) == pytest.approx(dk, abs=1e-5)


def test_inverses_round_trip() -> None:
    c = math.sqrt(2)
    m_need = reward.comparisons_needed(3.0, 20.0, c)
    assert c * math.sqrt(min(math.log(m_need), 20.0)) == pytest.approx(3.0)
    k_need = reward.kl_needed(3.0, 1e6, c)
    assert c * math.sqrt(min(math.log(1e6), k_need)) == pytest.approx(3.0)
    assert reward.comparisons_needed(10.0, 1.0) == math.inf
    assert reward.kl_needed(10.0, 100.0) == math.inf
    # the symbolic inverses: the law at the needed M (or K) returns the target
    g = sp.Symbol("G", positive=True)
    inv = reward.inverses()
    m_sym = inv["M"].subs({g: 3, K: 20})
    assert sp.simplify(reward.law().subs({M: m_sym, K: 20}) * sp.sqrt(2) - 3) == 0
    assert float(m_sym) == pytest.approx(m_need, rel=1e-14)
    assert float(inv["K"].subs({g: 3, M: 10**6})) == pytest.approx(k_need, rel=1e-14)
    assert inv["M"].subs({g: 10, K: 1}) == sp.oo and inv["K"].subs({g: 10, M: 100}) == sp.oo


def test_asymptotic_regimes_match_the_exact_gain() -> None:
    reg = reward.asymptotic_regimes()
    tau = sp.Symbol("tau", positive=True)
    data = float(reg["data_limited"].subs({M: 1e6, tau: 1}))
    assert reward.gain(1e6, 50.0, 1.0, "tilt") == pytest.approx(data, rel=1e-12)
    kl = float(reg["kl_limited"].subs({K: 1.5}))
    assert reward.gain(1e200, 1.5, 1.0, "tilt") == pytest.approx(kl, rel=1e-12)


def test_gao_forms() -> None:
    assert reward.gao_bon(9.0, 2.0, 0.5) == pytest.approx(3 * (2 - 1.5))
    assert reward.gao_rl(9.0, 2.0, 0.5) == pytest.approx(3 * (2 - 0.5 * math.log(3)))
    assert reward.gao_rl(0.0, 1.0, 1.0) == 0.0
    for fn in (reward.gao_bon, reward.gao_rl):
        with pytest.raises(ValueError, match="beta must be finite; got beta=nan"):
            fn(1.0, 1.0, np.nan)


def test_proved_constants_other_domain_and_errors() -> None:
    pc = reward.proved_constants(m_min=100.0, tau_min=1.0, tau_max=1.0)
    assert pc.theta == 1.0 and pc.c_lo == pytest.approx(math.sqrt(1 / (4 * math.pi * math.log(2))))
    with pytest.raises(ValueError, match="m_min must be > 2"):
        reward.proved_constants(m_min=5.0, tau_max=2.0)
    assert set(pc.as_dict()) >= {"c_lo", "c_hi", "rho", "theta"}


def test_gao_expressions_match_numeric_forms() -> None:
    alpha, beta = sp.symbols("alpha beta", positive=True)
    for kind, fn in (("bon", reward.gao_bon), ("rl", reward.gao_rl)):
        value = reward.gao_expr(kind).subs({K: 7.0, alpha: 1.3, beta: 0.2})
        assert float(value) == pytest.approx(fn(7.0, 1.3, 0.2), rel=1e-12)
    with pytest.raises(ValueError, match="kind must be"):
        reward.gao_expr("ppo")


# -- issue 10 §4: huge KL budgets (the gain fell to 3.6e-237 at K = 1e15, 0 from 1e16) ---

def _mp_top(method: str, t: float) -> mp.mpf:
    """Independent mpmath gold gain of a pool ``n = e^t`` without noise (20 digits)."""
    n = mp.exp(t)
    if method == "quantile":  # n φ(Φ⁻¹(1 - 1/n))
        return n * mp.npdf(mp.sqrt(2) * mp.erfinv(1 - 2 / n))
    # e(n) = ∫_0^∞ (1 - Φ^n) dx - ∫_{-∞}^0 Φ^n dx, Φ^n = exp(n log Φ)
    up = mp.quad(lambda x: -mp.expm1(n * mp.log(mp.ncdf(x))), [0, mp.sqrt(2 * t), 12, mp.inf])
    down = mp.quad(lambda x: mp.exp(n * mp.log(mp.ncdf(x))), [-mp.inf, -4, 0])
    return up - down


def _mp_plateau(method: str, m: float, tau: float) -> float:
    """``sup_t top(t)/sqrt(1 + τ² e^t/M)``: the gain once the KL budget no longer binds."""
    from scipy.optimize import minimize_scalar

    with mp.workdps(20):
        def neg(t: float) -> float:
            return -float(_mp_top(method, t) / mp.sqrt(1 + tau**2 * mp.exp(t) / m))

        hi = math.log(m / tau**2) + 8.0
        res = minimize_scalar(neg, bounds=(0.5, hi), method="bounded",
                              options={"xatol": 1e-7})
        return -res.fun


@pytest.mark.parametrize("method", ["bon", "quantile"])
def test_gain_at_huge_kl_budgets_matches_mpmath(method: str) -> None:
    m, tau = 1e6, 1.0
    want = _mp_plateau(method, m, tau)
    got = reward.gain(m, np.array([1e3, 1e15, 1e16, 1e100, 1e300]), tau, method)
    np.testing.assert_allclose(got, want, rtol=1e-9)


@pytest.mark.parametrize("method", reward.METHODS)
def test_gain_is_monotone_in_k_and_in_the_band_up_to_1e300(method: str) -> None:
    ks = np.concatenate([np.geomspace(0.5 if method == "quantile" else 1e-6, 1e300, 100),
                         [1e15, 1e16]])
    ks.sort()
    for m in (10.0, 1e6, 1e300):
        for tau in (0.5, 2.0):
            g = reward.gain(m, ks, tau, method)
            # non-decreasing in K (to the golden-section refinement, 1e-10 relative)
            assert np.all(np.diff(g) >= -1e-10 * g[1:]), (method, m, tau)
            ratio = g / np.sqrt(np.minimum(np.log(m), ks))
            assert ratio.min() >= reward.C_LO and ratio.max() <= reward.C_HI, (method, m, tau)
