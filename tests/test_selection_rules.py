"""The selection rules of the reward law, checked generically: one loop over every rule.

Each rule declares its KL, pool limit and pool gain; the tests check those
declarations against independent computations (mpmath at 30+ digits, closed
forms) and the generic optimiser against a brute-force maximum over pools.
"""

from __future__ import annotations

import math
import subprocess
import sys

import mpmath as mp
import numpy as np
import pytest

from rlscale.theory import reward
from rlscale.theory._selection_rules import RULES, SelectionRule, rule_for

ALL = sorted(RULES)


def _kl_exact(name: str, n: float, k: float) -> float:
    """The rule's KL on a pool of ``n``, from its definition (module docstring of reward)."""
    with mp.workdps(40):
        n = mp.mpf(n)
        if name == "bon":  # log n - (n-1)/n
            return float(mp.log(n) - (n - 1) / n)
        if name == "quantile":
            return float(mp.log(n))
        return float(min(mp.mpf(k), mp.log(n)))  # tilt


def _top_exact(name: str, n: float, k: float) -> float:
    """Noise-free gain on a pool of ``n``, by quadrature or closed form at 30 digits."""
    with mp.workdps(30):
        n = mp.mpf(n)
        if name == "bon":  # e(n) = ∫ z n Φ^{n-1} φ dz
            return float(mp.quad(lambda z: z * n * mp.ncdf(z) ** (n - 1) * mp.npdf(z),
                                 [-mp.inf, -5, 0, 5, mp.inf]))
        if name == "quantile":  # n φ(Φ⁻¹(1 - 1/n))
            x = -mp.sqrt(2) * mp.erfinv(2 / n - 1)
            return float(n * mp.npdf(x))
        return float(mp.sqrt(2 * min(mp.mpf(k), mp.log(n))))


def test_registry_matches_methods() -> None:
    assert reward.METHODS == ("bon", "quantile", "tilt")
    assert tuple(RULES) == reward.METHODS
    assert all(isinstance(r, SelectionRule) and RULES[r.name] is r for r in RULES.values())
    assert reward.RULES is RULES
    with pytest.raises(ValueError, match=r"method must be one of bon, quantile, tilt; got "
                                         r"method='pg'"):
        rule_for("pg")
    with pytest.raises(TypeError, match="method must be one of"):
        rule_for(3)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("k", [1e-6, 0.05, 0.7, 3.0, 40.0])
def test_pool_limit_spends_exactly_the_budget(name: str, k: float) -> None:
    rule = RULES[name]
    t = float(rule.log_pool_limit(np.float64(k)))
    assert _kl_exact(name, np.exp(t), k) == pytest.approx(k, rel=1e-9)
    assert float(rule.kl_log(np.float64(t))) == pytest.approx(
        _kl_exact(name, np.exp(t), np.inf), rel=1e-9)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("n", [1.5, 2.0, 7.0, 300.0])
def test_pool_gain_matches_mpmath(name: str, n: float) -> None:
    rule, k = RULES[name], 1.3
    want = _top_exact(name, n, k)
    assert float(rule.top(np.float64(n), np.float64(k))) == pytest.approx(want, rel=1e-9)
    assert float(rule.top_log(np.float64(np.log(n)), np.float64(k))) == pytest.approx(
        want, rel=1e-9)
    # gold gain: shrunk by 1/sqrt(1 + τ² n/M), here τ = 2, M = 50
    gold = reward.gain_at_pool(n, 50.0, noise=2.0, method=name, K=k)
    assert gold == pytest.approx(want / np.sqrt(1 + 4.0 * n / 50.0), rel=1e-9)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize(("m", "k", "tau"), [(30.0, 0.3, 1.0), (1e3, 2.0, 1.0),
                                             (1e4, 50.0, 0.5), (200.0, 6.0, 2.0)])
def test_gain_is_the_best_feasible_pool(name: str, m: float, k: float, tau: float) -> None:
    # brute force: every pool on a fine grid of log n whose KL fits the budget
    rule = RULES[name]
    t_max = float(rule.log_pool_limit(np.float64(k)))
    ts = np.linspace(0.0, t_max, 20001)
    brute = float(np.max(rule.top_log(ts, np.full_like(ts, k)) / np.sqrt(
        1 + tau**2 * np.exp(ts) / m)))
    g = reward.gain(m, k, noise=tau, method=name)
    assert g == pytest.approx(brute, rel=1e-6)
    assert g >= brute * (1 - 1e-12)  # never below a feasible pool
    n = reward.optimal_pool_size(m, k, noise=tau, method=name)
    assert _kl_exact(name, n, k) <= k * (1 + 1e-9)
    assert reward.gain_at_pool(n, m, noise=tau, method=name, K=k) == pytest.approx(g, rel=1e-9)
    assert g <= reward.gain_upper(m, k, noise=tau) * (1 + 1e-12)


def test_tilt_is_the_envelope_in_closed_form() -> None:
    # U = sqrt(2 W(z)) past K* = 1 + W(z), z = M/(e τ²)
    m, tau = 1e4, 1.5
    with mp.workdps(30):
        w = mp.lambertw(mp.mpf(m) / (mp.e * tau**2))
        want = float(mp.sqrt(2 * w))
        n_star = float(mp.e ** (1 + w))
    assert reward.gain(m, 100.0, noise=tau, method="tilt") == pytest.approx(want, rel=1e-12)
    assert reward.optimal_pool_size(m, 100.0, noise=tau, method="tilt") == pytest.approx(
        n_star, rel=1e-12)


def test_published_constants_are_the_proved_ones() -> None:
    pc = reward.proved_constants()
    assert pc.c_lo == reward.C_LO and pc.c_hi == reward.C_HI
    with mp.workdps(50):
        rho = (1 + mp.log1p(10 / (mp.e * mp.mpf(0.25)))) / mp.log(10)
        theta = 1 - 2 * mp.log(2) / mp.log(10)
        c_hi = mp.sqrt(2 * rho)
        c_lo = mp.sqrt(theta / (4 * mp.pi * mp.log(2)))
        assert reward.C_HI >= c_hi > mp.mpf(np.nextafter(reward.C_HI, 0))
        assert reward.C_LO <= c_lo < mp.mpf(np.nextafter(reward.C_LO, 1))


def test_importing_reward_loads_neither_sympy_nor_mpmath() -> None:
    code = ("import sys; from rlscale.theory import reward; reward.gain(1e4, 2.0); "
            "reward.lower_bound(1e4, 2.0); "
            "print(sorted(m for m in ('sympy', 'mpmath', 'cvxpy', 'matplotlib') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_symbolic_names_load_on_first_use() -> None:
    import sympy as sp

    assert reward.law() == sp.sqrt(sp.Min(reward.K, sp.log(reward.M)))
    assert "law" in dir(reward) and "gao_expr" in dir(reward)
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        reward.nope  # noqa: B018


@pytest.mark.parametrize("n", [7.5, 1e6, 1e300])
def test_each_rules_sampled_top_has_its_laws_support_and_mean(n: float) -> None:
    """``sample_top``: the quantilizer's draws lie above the 1 − 1/n quantile z_n and average
    E[Z | Z > z_n] = n φ(z_n) (the truncated normal's mean, mpmath); best of n's draws
    average E[max of n] (its top, checked against quadrature in test_seams); at n = 1e300
    the log-space inversion answers (z_n ≈ 37.1).  200,000 draws: 6 standard errors."""
    rng = np.random.default_rng(5)
    size = 200_000
    with mp.workdps(40):
        guess = math.sqrt(2 * math.log(n))
        # the upper 1/n quantile, solved in log space: log Φ(−z) = −log n
        zq = mp.findroot(lambda x: mp.log(mp.ncdf(-x)) + mp.log(n), guess)
        z, mean = float(zq), float(mp.mpf(n) * mp.npdf(zq))
    draws = RULES["quantile"].sample_top(rng, size, n, 0.0)
    assert np.all(np.isfinite(draws)) and draws.min() >= z * (1 - 1e-12)
    var = max(float(np.var(draws)), 1e-30)
    assert abs(draws.mean() - mean) <= 6 * math.sqrt(var / size), (draws.mean(), mean)
    top = float(RULES["bon"].top(np.float64(n), 0.0))
    best = RULES["bon"].sample_top(rng, size, n, 0.0)
    assert abs(best.mean() - top) <= 6 * float(np.std(best)) / math.sqrt(size)


@pytest.mark.parametrize("name", sorted(RULES))
@pytest.mark.parametrize("m", [1e20, 1e30, 1e100])
def test_the_best_pool_is_found_when_its_log_size_passes_40(name: str, m: float) -> None:
    """Pools of e^40 and more (K* = log(M/τ²)-ish beyond 40): the gain found is the
    maximum of the pool gain over a dense grid of 200,001 log sizes on [0, K* + 200]
    (to 1e-12 from below, 1e-7 above — the grid's own resolution), so the search's cap
    at K* + 40 and its ladder never cut the optimum off."""
    from rlscale.theory._selection_rules import _kstar, log_noise_factor

    rule = RULES[name]
    mm, k, tau = np.array([m]), np.array([1e6]), np.array([1.0])
    _, gain = rule.optimise(mm, k, tau)
    kstar = float(_kstar(log_noise_factor(mm, tau))[0])
    assert kstar > 40
    grid = np.linspace(0.0, min(float(rule.log_pool_limit(k)[0]), kstar + 200.0), 200_001)
    best = float(rule.pool_gain(grid, mm, tau, k).max())
    assert best * (1 - 1e-12) <= float(gain[0]) <= best * (1 + 1e-7)


@pytest.mark.parametrize("name", ["bon", "quantile"])
def test_the_best_pool_just_inside_the_kl_limit_is_found(name: str) -> None:
    """A KL budget whose largest pool is 1/0.97 of the unconstrained best (found on a
    dense grid): the maximiser sits in the last sixteenth of [0, t_max], between the
    search grid's last two points, and the gain found is the dense grid's maximum on
    [0, t_max] (400,001 log sizes; the grid's own resolution is ~1e-11 relative)."""
    rule = RULES[name]
    m, tau = np.array([1e6]), np.array([1.0])
    ts = np.linspace(1e-6, 60.0, 120_001)
    t_star = float(ts[np.argmax(rule.pool_gain(ts, m, tau, np.inf))])
    k = np.asarray(rule.kl_log(np.array([t_star / 0.97])), dtype=np.float64)
    t_max = float(rule.log_pool_limit(k)[0])
    assert 15 / 16 < t_star / t_max < 1
    dense = np.linspace(0.0, t_max, 400_001)
    best = float(rule.pool_gain(dense, m, tau, k).max())
    t, gain = rule.optimise(m, k, tau)
    assert float(gain[0]) == pytest.approx(best, rel=1e-9)
    assert float(gain[0]) >= best * (1 - 1e-12)
    assert float(t[0]) == pytest.approx(t_star, abs=1e-3)


@pytest.mark.parametrize(("n", "k"), [(7.5, 0.5), (7.5, 40.0), (1e300, 3.0), (1e300, 1e4)])
def test_the_tilts_sampled_top_is_the_tilted_normal(n: float, k: float) -> None:
    """Tilting N(0, 1) by e^{βs} gives N(β, 1); the budget spent is β²/2, so
    β = sqrt(2 min(K, log n)) (the rule's KL is min(K, log n)).  200,000 draws: mean
    within 6 standard errors of β, variance within 6 of 1 (its sd is sqrt(2/size))."""
    size = 200_000
    beta = math.sqrt(2.0 * min(k, math.log(n)))
    draws = RULES["tilt"].sample_top(np.random.default_rng(8), size, n, k)
    assert abs(draws.mean() - beta) <= 6 / math.sqrt(size)
    assert abs(draws.var() - 1.0) <= 6 * math.sqrt(2.0 / size)
