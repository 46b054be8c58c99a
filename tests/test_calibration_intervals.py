"""Interval methods for predicted η (optimize/_eta_interval.py), checked by hand and by scipy."""

from __future__ import annotations

import math
import warnings
from statistics import NormalDist

import numpy as np
import pytest

from rlscale.optimize._eta_interval import (
    INTERVAL_METHODS,
    acceleration,
    bias_z0,
    bootstrap_interval,
)

ONE_TO_100 = np.arange(1.0, 101.0)


def _lin_quantile(sorted_x, p):
    """numpy's default ("linear") quantile, written out: position p·(n − 1)."""
    pos = p * (len(sorted_x) - 1)
    i = math.floor(pos)
    return sorted_x[i] + (pos - i) * (sorted_x[min(i + 1, len(sorted_x) - 1)] - sorted_x[i])


def test_percentile_interval_is_the_hand_quantiles() -> None:
    # 1..100 at 90 %: positions 0.05·99 = 4.95 and 0.95·99 = 94.05 -> 5.95 and 95.05.
    lo, hi = bootstrap_interval(ONE_TO_100, 50.0, 0.9, "percentile")
    assert lo == pytest.approx(5.95, abs=1e-12) and hi == pytest.approx(95.05, abs=1e-12)


def test_basic_interval_reflects_the_quantiles_and_clips_at_the_floor() -> None:
    # [2·50 − 95.05, 2·50 − 5.95]; with a floor of 10 the low end is clipped.
    assert bootstrap_interval(ONE_TO_100, 50.0, 0.9, "basic") == pytest.approx((4.95, 94.05))
    assert bootstrap_interval(ONE_TO_100, 50.0, 0.9, "basic", floor=10.0) == pytest.approx(
        (10.0, 94.05))
    # Samples all above the estimate move the basic interval below it.
    lo, hi = bootstrap_interval(ONE_TO_100 + 100.0, 100.0, 0.9, "basic")
    assert (lo, hi) == pytest.approx((200.0 - 195.05, 200.0 - 105.95)) and hi < 100.0


def test_basic_log_interval_by_hand() -> None:
    # floor 1, estimate 2 (excess 1): [1 + 1/(q_hi − 1), 1 + 1/(q_lo − 1)].
    s = 1.0 + ONE_TO_100 / 50.0          # excess 0.02..2
    q_lo, q_hi = 1 + 5.95 / 50, 1 + 95.05 / 50
    lo, hi = bootstrap_interval(s, 2.0, 0.9, "basic-log", floor=1.0)
    assert lo == pytest.approx(1 + 1 / (q_hi - 1), rel=1e-12)
    assert hi == pytest.approx(1 + 1 / (q_lo - 1), rel=1e-12)
    assert lo > 1.0
    with pytest.raises(ValueError, match="needs a floor"):
        bootstrap_interval(s, 2.0, 0.9, "basic-log")
    with pytest.raises(ValueError, match="above floor"):
        bootstrap_interval(s, 1.0, 0.9, "basic-log", floor=1.0)


def test_symmetric_interval_by_hand() -> None:
    # |θ* − 50| for 1..100 is 49, 48, ..., 0, 1, ..., 50: sorted 0,1,1,2,2,...,49,49,50
    # (k at indices 2k − 1 and 2k).  Its 0.9-quantile sits at position 0.9·99 = 89.1,
    # between indices 89 and 90, both 45.  With 50.5 the deviations are 0.5, 0.5, 1.5, ...:
    # index 89 is 44.5 and 90 is 45.5, so the quantile interpolates to 44.6.
    d = np.sort(np.abs(ONE_TO_100 - 50.0))
    assert (d[89], d[90]) == (45.0, 45.0)
    t = 45.0
    assert bootstrap_interval(ONE_TO_100, 50.5, 0.9, "symmetric") == pytest.approx(
        (50.5 - 44.6, 50.5 + 44.6), abs=1e-12)
    assert bootstrap_interval(ONE_TO_100, 50.0, 0.9, "symmetric") == pytest.approx(
        (50.0 - t, 50.0 + t), abs=1e-12)
    # |θ* − 20|: 0 once, 1..19 twice, then 20..80 at indices 39..99, so position 89.1
    # gives 70.1; the low end 20 − 70.1 is clipped at the floor.
    assert bootstrap_interval(ONE_TO_100, 20.0, 0.9, "symmetric", floor=1.0) == pytest.approx(
        (1.0, 90.1), abs=1e-12)


def test_bias_corrected_interval_by_hand() -> None:
    # 30 of 100 samples below 30.5: p0 = 0.3, z0 = Φ⁻¹(0.3); the ends are the
    # Φ(2 z0 ± 1.645) quantiles, with the normal from the standard library.
    nd = NormalDist()
    z0 = nd.inv_cdf(0.3)
    assert bias_z0(ONE_TO_100, 30.5) == pytest.approx(z0, abs=1e-12)
    a1, a2 = nd.cdf(2 * z0 + nd.inv_cdf(0.05)), nd.cdf(2 * z0 + nd.inv_cdf(0.95))
    lo, hi = bootstrap_interval(ONE_TO_100, 30.5, 0.9, "bc")
    assert lo == pytest.approx(_lin_quantile(ONE_TO_100, a1), abs=1e-9)
    assert hi == pytest.approx(_lin_quantile(ONE_TO_100, a2), abs=1e-9)
    # Ties count one half: 30 below and 1 equal to 31 -> p0 = 0.305.
    assert bias_z0(ONE_TO_100, 31.0) == pytest.approx(nd.inv_cdf(0.305), abs=1e-12)
    # At the median the correction vanishes: bc = percentile.
    assert bootstrap_interval(ONE_TO_100, 50.5, 0.9, "bc") == pytest.approx(
        bootstrap_interval(ONE_TO_100, 50.5, 0.9, "percentile"))


def test_bias_z0_stays_finite_when_every_sample_is_on_one_side() -> None:
    nd = NormalDist()
    assert bias_z0(ONE_TO_100, 0.0) == pytest.approx(nd.inv_cdf(0.005), abs=1e-12)
    assert bias_z0(ONE_TO_100, 1e9) == pytest.approx(nd.inv_cdf(0.995), abs=1e-12)
    lo, hi = bootstrap_interval(ONE_TO_100, 0.0, 0.9, "bc")
    assert 1.0 <= lo <= hi <= 100.0


def test_acceleration_by_hand() -> None:
    # d = mean − θ_(i) = (1, 1, −2): Σd³ = −6, Σd² = 6 -> a = −6 / (6·6^1.5).
    assert acceleration([1.0, 1.0, 4.0]) == pytest.approx(-6 / (6 * 6**1.5), rel=1e-12)
    assert acceleration([2.0, 2.0, 2.0]) == 0.0
    # One outlier among 100: d = 0.01 (99 times) and −0.99, a = −0.9702/(6·0.99^1.5).
    jack = [0.0] * 99 + [1.0]
    assert acceleration(jack) == pytest.approx((99e-6 - 0.99**3) / (6 * 0.99**1.5), rel=1e-12)
    # |a| <= 1/6 always, so 1 − a(z0 + z) <= 0 needs |z0 + z| >= 6: an estimate below all
    # of 10^4 samples (z0 = Φ⁻¹(1/20000) = −3.89) at 99.99 % (z = −3.89).  Refused, not
    # turned into a quantile level outside [0, 1].
    with pytest.raises(ValueError, match="acceleration"):
        bootstrap_interval(np.arange(1.0, 10001.0), 0.0, 0.9999, "BCa", jackknife=jack)


@pytest.mark.parametrize("method", ["percentile", "basic", "BCa"])
def test_intervals_match_scipy_stats_bootstrap(method: str) -> None:
    # scipy.stats.bootstrap on the mean of a skewed sample, its own resamples given to
    # ours; its BCa uses the leave-one-out means, which we pass as the jackknife.
    from scipy import stats

    x = np.random.default_rng(1).exponential(size=30)
    res = stats.bootstrap((x,), np.mean, confidence_level=0.9, method=method,
                          n_resamples=999, rng=np.random.default_rng(2))
    jack = [(x.sum() - xi) / (x.size - 1) for xi in x]
    ours = bootstrap_interval(res.bootstrap_distribution, float(x.mean()), 0.9, method,
                              jackknife=jack if method == "BCa" else None)
    assert ours == pytest.approx(tuple(res.confidence_interval), rel=1e-10)


def test_bc_is_bca_without_acceleration() -> None:
    s = np.random.default_rng(4).gamma(2.0, size=400)
    assert bootstrap_interval(s, 1.5, 0.9, "bc") == pytest.approx(
        bootstrap_interval(s, 1.5, 0.9, "BCa", jackknife=[3.0] * 10), rel=1e-14)


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="method must be one of"):
        bootstrap_interval(ONE_TO_100, 1.0, 0.9, "student")
    with pytest.raises(TypeError, match="method must be one of"):
        bootstrap_interval(ONE_TO_100, 1.0, 0.9, None)
    with pytest.raises(ValueError, match="finite"):
        bootstrap_interval([1.0, np.inf, 2.0], 1.0, 0.9)
    with pytest.raises(ValueError, match="at least 2"):
        bootstrap_interval([1.0], 1.0, 0.9)
    with pytest.raises(ValueError, match="flat"):
        bootstrap_interval(np.ones((3, 3)), 1.0, 0.9)
    assert bootstrap_interval([1.0, 3.0], 2.0, 0.5) == (1.5, 2.5)   # two samples are enough
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_interval(ONE_TO_100, 1.0, 1.0)
    with pytest.raises(ValueError, match="jackknife"):
        bootstrap_interval(ONE_TO_100, 1.0, 0.9, "BCa")
    assert set(INTERVAL_METHODS) == {"percentile", "basic", "basic-log", "symmetric", "bc",
                                     "BCa"}


@pytest.mark.slow
def test_a_resample_with_an_overflowing_coefficient_leaves_no_nan_in_the_diagnostics() -> None:
    # Data set 44 of the seed-0 calibration study: one bootstrap resample's
    # log-coefficient passes 709, so its coefficient is inf in bootstrap_samples
    # (and the resample has no law).  The fit's correlation diagnostic took std()
    # over that column: numpy's "invalid value encountered in subtract" (inf − inf).
    from benchmarks.calibration_eta import LAW
    from rlscale.optimize import fit_law, star_design
    from rlscale.report import DEFAULTS
    from rlscale.theory import AdditiveLaw

    law = AdditiveLaw(LAW["floor"], LAW["coefficients"], LAW["exponents"])
    design = star_design(DEFAULTS["sweep"]["base"], DEFAULTS["sweep"]["axes"])
    x = {a: np.repeat([float(p[a]) for p in design], 3) for a in law.axes}
    clean = np.asarray(law.loss(x), dtype=float)
    rng = np.random.default_rng(0)
    for _ in range(45):
        data = {**x, "loss": clean * np.exp(0.065 * rng.standard_normal(clean.size))}
    with warnings.catch_warnings():
        warnings.filterwarnings("error", "invalid value", RuntimeWarning)
        warnings.filterwarnings("ignore", "overflow encountered in exp", RuntimeWarning)
        fit = fit_law(data, axes=list(law.axes), target="loss", bootstrap=200, seed=44,
                      n_jobs=1)
    bad = ~np.all(np.isfinite(fit.bootstrap_samples), axis=1)
    assert bad.sum() == 1                       # the case this test is about is present
    assert len(fit.bootstrap_laws()) <= 200 - 1  # and that resample gives no law
    assert all(np.isfinite(v) for iv in fit.intervals.values() for v in iv if v != np.inf)


def test_fit_diagnostics_ignore_a_resample_with_an_inf_coefficient(monkeypatch) -> None:
    # The fast form of the test above: one bootstrap row is given an inf coefficient
    # (as exp() overflow makes it); the diagnostics must raise no RuntimeWarning and
    # equal those of the same fit with that row removed.
    import rlscale.optimize._fit as fit_mod
    from rlscale.optimize import fit_law

    a, b = np.meshgrid(np.logspace(0, 2, 5), np.logspace(0, 2, 4))
    noise = np.exp(np.random.default_rng(7).normal(0, 0.02, a.size))
    data = {"a": a.ravel(), "b": b.ravel(),
            "loss": (0.3 + 0.5 * a.ravel() ** -0.4 + 0.4 * b.ravel() ** -0.6) * noise}
    real = fit_mod._bootstrap

    def patched(edit):
        def run(*args, **kwargs):
            samples, intervals = real(*args, **kwargs)
            return edit(samples.copy()), intervals
        return run

    def set_inf(s):
        s[3, 1] = np.inf
        return s

    fits = []
    for edit in (set_inf, lambda s: np.delete(s, 3, axis=0)):
        monkeypatch.setattr(fit_mod, "_bootstrap", patched(edit))
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            fits.append(fit_law(data, axes=["a", "b"], starts=4, holdout=0, bootstrap=30,
                                seed=1, n_jobs=1))
    assert np.isinf(fits[0].bootstrap_samples).sum() == 1
    assert [w.as_dict() for w in fits[0].warnings] == [w.as_dict() for w in fits[1].warnings]
