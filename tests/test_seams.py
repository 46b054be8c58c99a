"""The seams of issue 25, item 5: simulators ask the rule and algorithm objects.

Each selection rule of :data:`rlscale.theory.reward.RULES` declares the law of its
selected candidate's standardised score (``sample_top``) and its gain at a KL
budget (``top_at_kl``); the simulators use those instead of branching on the
method's name.  The checks here hold for every rule, against independent
computations (scipy quadrature, closed forms), so a new rule is tested by being
registered.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import log_ndtr

from rlscale.simulate import generalising_proxy_gain
from rlscale.theory.reward import RULES


def _top_by_quadrature(name: str, n: float, k: float) -> float:
    """Mean standardised score of the selected candidate, from its density (scipy.quad)."""
    if name == "bon":  # max of n normals: density n φ Φ^{n−1}, in log space
        def f(x: float) -> float:
            return x * math.exp(math.log(n) + stats.norm.logpdf(x)
                                + (n - 1) * float(log_ndtr(x)))

        c = math.sqrt(2 * math.log(n)) if n > 2 else 0.0
        return integrate.quad(f, c - 12, c + 8, points=[c - 1, c, c + 1], limit=400)[0]
    if name == "quantile":  # N(0, 1) above its 1 − 1/n quantile
        z = stats.norm.isf(1.0 / n)
        return n * integrate.quad(lambda x: x * stats.norm.pdf(x), z, np.inf)[0]
    return math.sqrt(2.0 * min(k, math.log(n)))  # tilt: N(β, 1)


@pytest.mark.parametrize("name", list(RULES))
@pytest.mark.parametrize(("n", "k"), [(1.5, 10.0), (50.0, 2.0), (1e6, 30.0)])
def test_sample_top_has_the_rules_mean(name: str, n: float, k: float) -> None:
    rule = RULES[name]
    s = rule.sample_top(np.random.default_rng(7), 200_000, n, k)
    want = _top_by_quadrature(name, n, k)
    se = s.std(ddof=1) / math.sqrt(s.size)
    assert abs(s.mean() - want) < 4 * se
    assert math.isclose(float(rule.top(np.float64(n), np.float64(k))), want, rel_tol=1e-7)


@pytest.mark.parametrize("name", list(RULES))
def test_sample_top_is_finite_beyond_the_float_range_of_n(name: str) -> None:
    s = RULES[name].sample_top(np.random.default_rng(0), 50_000, 1e300, 1e4)
    assert np.isfinite(s).all()
    # the selected score of any rule is at most sqrt(2 log n) plus a few units
    assert 30 < s.mean() < math.sqrt(2 * math.log(1e300)) + 1


@pytest.mark.parametrize("name", list(RULES))
def test_generalising_proxy_gain_is_rho_times_the_rules_gain(name: str) -> None:
    K = np.array([0.5, 3.0, 30.0])
    r = generalising_proxy_gain(1e4, K, d=4, method=name, trials=50, rng=1)
    if name == "bon":  # e(n) at the n whose KL log n − (n−1)/n is K
        from scipy.optimize import brentq

        ns = [math.exp(brentq(lambda t, k=k: t - 1 + math.exp(-t) - k, 0, 100)) for k in K]
        std = [_top_by_quadrature("bon", n, 0.0) for n in ns]
    elif name == "quantile":  # KL log n: n = e^K
        std = [_top_by_quadrature("quantile", math.exp(k), 0.0) for k in K]
    else:
        std = np.sqrt(2 * K)
    np.testing.assert_allclose(r.gain, r.rho * np.asarray(std), rtol=1e-7)


def test_generalising_proxy_gain_takes_best_of_n_past_float_pools() -> None:
    # KL 800 needs n ≈ e^801 for best-of-n: computed through log n, below the envelope.
    r = generalising_proxy_gain(1e4, [800.0], d=4, method="bon", trials=50, rng=1)
    assert 0.99 * r.rho * math.sqrt(2 * 800) < r.gain[0] < r.rho * math.sqrt(2 * 800)
