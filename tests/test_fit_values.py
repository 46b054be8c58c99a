"""``fit_law``'s statistics and bootstrap (``optimize/_fit.py``, ``_bootstrap.py``) by hand.

The search path is not pinned (another module's business): every number here
is one that any correct search must reach.  A multiplicative law with the
Huber threshold ``delta = 1e3`` far above every log residual is ordinary least
squares in log space, so its optimum -- on the data, on the training part of
the hold-out split and on each bootstrap resample -- is ``numpy.linalg.lstsq``;
``R²``, RMSE, AIC, BIC and the extrapolation errors follow from those
residuals by their definitions (Burnham & Anderson 2002, §2.2 and §6.4).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from rlscale.optimize import fit_law
from rlscale.optimize._bootstrap import (
    batched_bootstrap,
    per_resample_bootstrap,
    resample_counts,
    resample_indices,
)
from rlscale.optimize._fit import _extrapolate, _is_expression, _summarise, huber
from rlscale.optimize._fit_data import prepare
from rlscale.optimize._fit_family import family

X = np.array([1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 21.0, 34.0, 55.0, 89.0])
NOISE = np.random.default_rng(7).normal(0.0, 0.05, X.size)
Y = np.exp(1.2 - 0.4 * np.log(X) + NOISE)
DATA = {"N": X, "loss": Y}


def _huber_fit(x: np.ndarray, y: np.ndarray, delta: float) -> np.ndarray:
    """(log C, alpha) minimising the summed Huber loss, by iteratively reweighted least
    squares run to convergence (the loss is convex in (log C, alpha): one optimum)."""
    a = np.column_stack([np.ones_like(x), -np.log(x)])
    b = np.log(y)
    th = np.linalg.lstsq(a, b, rcond=None)[0]
    for _ in range(300):
        r = a @ th - b
        sw = np.sqrt(np.minimum(1.0, delta / np.maximum(np.abs(r), 1e-300)))
        th = np.linalg.lstsq(a * sw[:, None], b * sw, rcond=None)[0]
    return th


def _ols(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(log C, alpha) minimising sum (log C - alpha log x - log y)^2."""
    a = np.column_stack([np.ones_like(x), -np.log(x)])
    return np.linalg.lstsq(a, np.log(y), rcond=None)[0]


@pytest.fixture(scope="module")
def fit():
    return fit_law(DATA, law="multiplicative", axes=["N"], delta=1e3, holdout=0.2,
                   bootstrap=40, confidence=0.8, seed=3, n_jobs=1)


def test_fit_is_least_squares_with_its_statistics(fit) -> None:
    c, alpha = _ols(X, Y)
    assert fit.params["coefficient"] == pytest.approx(math.exp(c), rel=1e-7)
    assert fit.params["exponent[N]"] == pytest.approx(alpha, rel=1e-7)
    resid = c - alpha * np.log(X) - np.log(Y)
    rss = float(resid @ resid)
    tss = float(np.sum((np.log(Y) - np.log(Y).mean()) ** 2))
    n, k = 10, 2
    np.testing.assert_allclose(fit.residuals, resid, atol=1e-8)
    assert fit.objective == pytest.approx(rss / 2, rel=1e-7)  # Huber inside delta: r²/2
    assert fit.r2 == pytest.approx(1 - rss / tss, rel=1e-9)
    assert fit.rmse_log == pytest.approx(math.sqrt(rss / n), rel=1e-7)
    assert fit.aic == pytest.approx(n * math.log(rss / n) + 2 * k, rel=1e-7)
    assert fit.bic == pytest.approx(n * math.log(rss / n) + k * math.log(n), rel=1e-7)
    assert (fit.n_points, fit.n_params, fit.n_bootstrap, fit.confidence) == (10, 2, 40, 0.8)
    assert (fit.axes, fit.target, fit.reduction, fit.delta, fit.replicates) == (
        ("N",), "loss", "sum", 1e3, "keep")
    assert fit.data_range == {"N": (1.0, 89.0)} and fit.floor_bounds is None
    assert float(fit.predict(N=4.0)) == pytest.approx(math.exp(c) * 4.0 ** -alpha, rel=1e-7)
    assert fit.seconds > 0


def test_defaults_of_fit_law() -> None:
    fit = fit_law(DATA, law="multiplicative", axes=["N"])
    assert (fit.delta, fit.confidence, fit.n_bootstrap, fit.intervals) == (1e-3, 0.9, 0, {})
    assert fit.extrapolation["n_holdout"] == 1  # holdout 0.1 of 10 points
    assert fit.reduction == "sum" and fit.replicates == "keep"
    assert fit.bootstrap_samples is None
    assert "bootstrap_samples" not in repr(fit)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fit.r2 = 0.0  # type: ignore[misc]
    assert 0 < fit.seconds < 600


def test_huber_fit_refit_and_bootstrap_reach_the_convex_optimum() -> None:
    # delta = 0.02 puts some residuals (noise sd 0.05) on each side of the threshold: not
    # least squares.  The optimum, by IRLS, is reached by the hold-out refit (summed loss,
    # L-BFGS-B) to ~1e-6 and by every bootstrap resample (default seed 0, level 0.9)
    fit = fit_law(DATA, law="multiplicative", axes=["N"], delta=0.02, holdout=0.2,
                  bootstrap=8, n_jobs=1)
    c, alpha = _huber_fit(X[:8], Y[:8], 0.02)
    err = c - alpha * np.log(X[8:]) - np.log(Y[8:])
    assert fit.extrapolation["rmse_log"] == pytest.approx(math.sqrt(np.mean(err ** 2)),
                                                          rel=2e-5)
    want = np.array([_huber_fit(X[i], Y[i], 0.02) for i in resample_indices(10, 8, seed=0)])
    natural = np.column_stack([np.exp(want[:, 0]), want[:, 1]])
    np.testing.assert_allclose(fit.bootstrap_samples, natural, rtol=1e-7)
    for j, name in enumerate(["coefficient", "exponent[N]"]):
        assert fit.intervals[name] == pytest.approx(
            tuple(np.quantile(natural[:, j], [0.05, 0.95])), rel=1e-7)


def test_extrapolation_refits_without_the_largest_points(fit) -> None:
    # holdout 0.2 of 10 points: the two largest scales (55, 89) are held out
    c, alpha = _ols(X[:8], Y[:8])
    pred = c - alpha * np.log(X[8:])
    err = pred - np.log(Y[8:])
    rel = np.abs(np.expm1(err))
    e = fit.extrapolation
    assert e["n_holdout"] == 2
    assert e["mean_abs_rel_error"] == pytest.approx(rel.mean(), rel=1e-5)
    assert e["max_abs_rel_error"] == pytest.approx(rel.max(), rel=1e-5)
    assert e["rmse_log"] == pytest.approx(math.sqrt(np.mean(err ** 2)), rel=1e-5)
    assert e["min_heldout_scale"] == pytest.approx(55.0, rel=1e-12)


def test_bootstrap_is_least_squares_on_each_resample(fit) -> None:
    want = np.array([_ols(X[i], Y[i]) for i in resample_indices(10, 40, seed=3)])
    natural = np.column_stack([np.exp(want[:, 0]), want[:, 1]])
    np.testing.assert_allclose(fit.bootstrap_samples, natural, rtol=1e-6)
    for j, name in enumerate(["coefficient", "exponent[N]"]):
        lo, hi = np.quantile(natural[:, j], [0.1, 0.9])
        assert fit.intervals[name] == pytest.approx((lo, hi), rel=1e-6)


def _prep(data, law="multiplicative", holdout=0.2, reduction="sum", **kw):
    return prepare(data, law, ["N"], "loss", 1e3, reduction, "keep", 0.9, holdout, 0, 1,
                   kw.get("floor"), None)


@pytest.mark.parametrize(("n", "holdout", "n_out"), [
    (10, 0.01, 1), (10, 0.26, 3), (5, 0.5, 2), (4, 0.5, 0), (4, 0.25, 1), (10, 0.0, 0)])
def test_extrapolation_hold_out_sizes(n: int, holdout: float, n_out: int) -> None:
    # max(1, round(holdout n)) points, none when disabled or when the rest cannot fit the
    # law's 2 parameters (4 points, 2 held out); round(2.5) = 2
    prep = _prep({"N": X[:n], "loss": Y[:n]}, holdout=holdout)
    out = _extrapolate(prep, np.array([[1.0, 0.5]]), holdout)
    assert out["n_holdout"] == n_out
    if n_out == 0:
        assert out["note"] == "no hold-out (disabled or too few points)"
    else:
        c, alpha = _ols(X[:n - n_out], Y[:n - n_out])
        err = c - alpha * np.log(X[n - n_out:n]) - np.log(Y[n - n_out:n])
        assert out["max_abs_rel_error"] == pytest.approx(np.abs(np.expm1(err)).max(), rel=1e-5)


def test_extrapolation_orders_points_by_scale_not_by_row() -> None:
    order = np.array([9, 0, 5, 2, 8, 1, 7, 3, 6, 4])
    prep = _prep({"N": X[order], "loss": Y[order]})
    out = _extrapolate(prep, np.array([[1.0, 0.5]]), 0.2)
    assert out["min_heldout_scale"] == pytest.approx(55.0, rel=1e-12)
    c, alpha = _ols(X[:8], Y[:8])
    err = c - alpha * np.log(X[8:]) - np.log(Y[8:])
    assert out["rmse_log"] == pytest.approx(math.sqrt(np.mean(err ** 2)), rel=1e-5)


def test_extrapolation_with_mean_reduction_refits_the_mean_objective() -> None:
    # the refit keeps the data's reduction: same optimum (least squares), found either way
    prep = _prep(DATA, reduction="mean")
    out = _extrapolate(prep, np.array([[1.0, 0.5]]), 0.2)
    c, alpha = _ols(X[:8], Y[:8])
    err = c - alpha * np.log(X[8:]) - np.log(Y[8:])
    assert out["rmse_log"] == pytest.approx(math.sqrt(np.mean(err ** 2)), rel=1e-3)


def test_summarise_exact_fit_of_constant_data() -> None:
    # y = 2 everywhere and theta = (log 2, 0): every residual is exactly 0 and TSS = 0
    prep = _prep({"N": X[:4], "loss": np.full(4, 2.0)})
    s = _summarise(prep, {"theta": np.array([math.log(2.0), 0.0]), "objective": 0.0})
    assert s["r2"] == 1.0 and s["rmse_log"] == 0.0
    np.testing.assert_array_equal(s["residuals"], np.zeros(4))
    # RSS = 0: the likelihood term uses RSS/n floored at 1e-300
    assert s["aic"] == pytest.approx(4 * math.log(1e-300) + 4, rel=1e-15)
    assert s["bic"] == pytest.approx(4 * math.log(1e-300) + 2 * math.log(4), rel=1e-15)
    assert (s["n_points"], s["n_params"], s["objective"]) == (4, 2, 0.0)


def test_summarise_constant_data_missed_has_no_r2() -> None:
    prep = _prep({"N": X[:4], "loss": np.full(4, 2.0)})
    s = _summarise(prep, {"theta": np.array([math.log(3.0), 0.0]), "objective": 1.0})
    assert math.isnan(s["r2"])
    r = math.log(3.0 / 2.0)
    assert s["rmse_log"] == pytest.approx(r, rel=1e-15)
    assert s["aic"] == pytest.approx(4 * math.log(r * r) + 4, rel=1e-14)


def test_summarise_statistics_at_a_given_theta() -> None:
    prep = _prep(DATA)
    theta = np.array([1.0, 0.3])
    resid = 1.0 - 0.3 * np.log(X) - np.log(Y)
    rss = float(resid @ resid)
    tss = float(np.sum((np.log(Y) - np.log(Y).mean()) ** 2))
    s = _summarise(prep, {"theta": theta, "objective": 0.5})
    assert s["r2"] == pytest.approx(1 - rss / tss, rel=1e-13)
    assert s["rmse_log"] == pytest.approx(math.sqrt(rss / 10), rel=1e-13)
    assert s["aic"] == pytest.approx(10 * math.log(rss / 10) + 4, rel=1e-13)
    assert s["bic"] == pytest.approx(10 * math.log(rss / 10) + 2 * math.log(10), rel=1e-13)
    assert s["params"] == pytest.approx({"coefficient": math.e, "exponent[N]": 0.3})
    assert s["law"].coefficient == pytest.approx(math.e, rel=1e-15)


def test_fit_with_a_floor_above_constant_data_has_nan_r2() -> None:
    data = {"N": X[:6], "loss": np.full(6, 1.0)}
    fit = fit_law(data, axes=["N"], floor=(2.0, 3.0), starts=20, holdout=0.0)
    assert math.isnan(fit.r2)
    assert fit.params["floor"] == pytest.approx(2.0, rel=1e-6)
    assert fit.floor_bounds == (2.0, 3.0)
    assert fit.extrapolation["n_holdout"] == 0 and fit.intervals == {}
    assert fit.bootstrap_samples is None and fit.bootstrap_laws() == []


def test_mean_reduction_bootstrap_runs_per_resample(capsys) -> None:
    fit = fit_law(DATA, law="multiplicative", axes=["N"], delta=1e3, reduction="mean",
                  holdout=0.0, bootstrap=3, seed=5, n_jobs=1)
    assert capsys.readouterr().err == ""  # no progress bar unless asked
    want = np.array([_ols(X[i], Y[i]) for i in resample_indices(10, 3, seed=5)])
    np.testing.assert_allclose(fit.bootstrap_samples[:, 1], want[:, 1], rtol=1e-3)
    assert fit.reduction == "mean"


def test_huber_values_by_hand() -> None:
    r = np.array([0.0005, -0.01, 0.001, 2.0, 0.0])
    want = [0.0005**2 / 2, 1e-3 * (0.01 - 0.0005), 0.001**2 / 2, 1e-3 * (2.0 - 0.0005), 0.0]
    np.testing.assert_allclose(huber(r), want, rtol=1e-15)
    assert float(huber(3.0, delta=2.0)) == 2.0 * (3.0 - 1.0)
    assert float(huber(-1.5, delta=2.0)) == 1.125
    with pytest.raises(ValueError, match="delta must be > 0"):
        huber(1.0, delta=0.0)
    with pytest.raises(ValueError, match="r must be finite"):
        huber(np.nan)


def test_is_expression() -> None:
    from rlscale.theory import ExpressionLaw

    assert not _is_expression("additive") and not _is_expression("pass_rate")
    assert not _is_expression("logistic")  # an identifier: a (bad) family name
    assert _is_expression("E + A/N**alpha")
    assert _is_expression(ExpressionLaw("E + A/N**alpha", axes=["N"]))
    assert not _is_expression(3)
    with pytest.raises(ValueError, match="law must be one of"):
        fit_law(DATA, law="logistic", axes=["N"])


# -- the bootstrap module -------------------------------------------------------------

def test_resample_indices_and_counts_from_the_seed_sequence() -> None:
    idx = resample_indices(6, 4, seed=11)
    kids = np.random.SeedSequence(11).spawn(4)
    for j in range(4):
        np.testing.assert_array_equal(idx[j], np.random.default_rng(kids[j]).integers(0, 6, 6))
    counts = resample_counts(6, 4, seed=11)
    want = np.zeros((4, 6))
    for j in range(4):
        for i in idx[j]:
            want[j, i] += 1
    np.testing.assert_array_equal(counts, want)


def test_batched_bootstrap_in_batches_is_least_squares() -> None:
    logx, logy = np.log(X)[:, None], np.log(Y)
    # the first start is a poor one: each resample keeps its lowest end point
    starts = np.array([[-3.0, 2.5], [1.0, 0.5]])
    est = batched_bootstrap(family("multiplicative"), logx, logy, 1e3, 7, 2, starts,
                            np.array([-np.inf, 0.0]), np.full(2, np.inf), batch=3)
    want = np.array([_ols(X[i], Y[i]) for i in resample_indices(10, 7, seed=2)])
    np.testing.assert_allclose(est, want, rtol=1e-7)


def test_per_resample_bootstrap_interleaves_chunks() -> None:
    # 65 resamples in 64 chunks: chunk 0 holds resamples 0 and 64
    logx, logy = np.log(X)[:, None], np.log(Y)
    # two warm starts, the first far off: each resample keeps the lower end point
    est = per_resample_bootstrap(("multiplicative", logx, logy, 1e3, "sum"), 65, 4,
                                 np.array([[-3.0, 2.5], [1.0, 0.5]]),
                                 [(None, None), (0.0, None)], 1, False)
    want = np.array([_ols(X[i], Y[i]) for i in resample_indices(10, 65, seed=4)])
    np.testing.assert_allclose(est, want, rtol=1e-4)


def test_per_resample_bootstrap_progress_bar(capsys) -> None:
    logx, logy = np.log(X)[:, None], np.log(Y)
    est = per_resample_bootstrap(("multiplicative", logx, logy, 1e3, "sum"), 2, 4,
                                 np.array([[1.0, 0.5]]), [(None, None), (0.0, None)], 1, True)
    assert est.shape == (2, 2)
    assert "bootstrap" in capsys.readouterr().err


# -- FitResult's bootstrap laws and band ------------------------------------------------

def _with_samples(fit, samples):
    return dataclasses.replace(fit, bootstrap_samples=np.asarray(samples, dtype=np.float64))


def test_bootstrap_laws_skip_flat_resamples_and_band_by_hand(fit) -> None:
    rows = [[2.0 + 0.05 * j, 0.3 + 0.01 * j] for j in range(21)] + [[2.0, 0.0]]
    res = _with_samples(fit, rows)
    laws = res.bootstrap_laws()
    assert len(laws) == 21  # exponent 0 is not a valid law: left out
    assert [law.coefficient for law in laws] == pytest.approx([r[0] for r in rows[:21]])
    points = [{"N": 4.0}, {"N": 50.0}]
    preds = np.array([[c * p["N"] ** -a for p in points] for c, a in rows[:21]])
    lo, hi = res.predict_band(points, confidence=0.5)
    np.testing.assert_allclose(lo, np.percentile(preds, 25, axis=0), rtol=1e-13)
    np.testing.assert_allclose(hi, np.percentile(preds, 75, axis=0), rtol=1e-13)
    lo8, hi8 = res.predict_band(points)  # the fit's own level, 0.8
    np.testing.assert_allclose(lo8, np.percentile(preds, 10, axis=0), rtol=1e-13)
    np.testing.assert_allclose(hi8, np.percentile(preds, 90, axis=0), rtol=1e-13)


def test_predict_band_refusals(fit) -> None:
    few = _with_samples(fit, [[2.0, 0.3]] * 19)
    with pytest.raises(ValueError, match=r"needs at least 20 usable bootstrap laws; this fit "
                                         r"has 19 \(fit with bootstrap >= 20\)"):
        few.predict_band([{"N": 2.0}])
    assert len(_with_samples(fit, [[2.0, 0.3]] * 20).predict_band([{"N": 2.0}])[0]) == 1
    for bad in ["N", {"N": 2.0}, 5, [{"N": 2.0}, 3]]:
        with pytest.raises(TypeError, match="points must be a sequence of mappings"):
            fit.predict_band(bad)
    for level in (1.0, 0.0):
        with pytest.raises(ValueError, match="confidence must be > 0 and < 1"):
            fit.predict_band([{"N": 2.0}], confidence=level)


def test_pass_rate_result_predicts_rates() -> None:
    rates = {"N": X, "loss": 0.9 / (1.0 + 3.0 * X ** -0.5)}
    fit = fit_law(rates, law="pass_rate", axes=["N"], holdout=0.0, starts=30, bootstrap=20)
    assert float(fit.predict(N=16.0)) == pytest.approx(0.9 / 1.75, rel=1e-4)
    lo, hi = fit.predict_band([{"N": 16.0}])
    assert lo[0] <= 0.9 / 1.75 * (1 + 1e-3) and hi[0] >= 0.9 / 1.75 * (1 - 1e-3)
    assert hi[0] < 0.9  # a rate, not a loss (1/p >= 1)


def test_as_dict_and_html(fit) -> None:
    d = fit.as_dict()
    assert "bootstrap_samples" not in d
    assert d["law"] == fit.law.as_dict() and d["axes"] == ["N"]
    assert d["residuals"] == fit.residuals.tolist() and d["floor_bounds"] is None
    assert d["intervals"] == {k: list(v) for k, v in fit.intervals.items()}
    assert d["data_range"] == {"N": [1.0, 89.0]} and d["r2"] == fit.r2
    bounded = dataclasses.replace(fit, floor_bounds=(1.0, 2.0))
    assert bounded.as_dict()["floor_bounds"] == [1.0, 2.0]
    html = fit._repr_html_()
    assert "80% interval" in html and "10 points" in html
    assert f"extrapolation error = {fit.extrapolation['mean_abs_rel_error']:.3g}" in html
    bare = dataclasses.replace(fit, intervals={}, extrapolation={"n_holdout": 0})
    assert "no bootstrap" in bare._repr_html_()
    assert "extrapolation error" not in bare._repr_html_()
