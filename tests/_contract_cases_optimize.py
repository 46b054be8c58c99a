"""Contract entries for the ``rlscale.optimize`` names added by issues 11, 12, 14 and 15.

Imported by ``tests/test_contracts_optimize.py``, which runs them with the rest
of the optimize entries and checks that every public name and method has one.
Each oracle is an independent computation from the inputs (the formula
written out again, pass@1 = c/n, normal equations by Cramer's rule, ...), never
the function's own output.
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
from pathlib import Path

import numpy as np
from _contract_cases import Case

import rlscale.optimize as opt
from rlscale.theory import AdditiveLaw, ComputeSigmoid, Turn

# -- baselines shared by the entries -------------------------------------------------------

SIG_C = np.linspace(500.0, 50000.0, 30)
SIG_Y = ComputeSigmoid(asymptote=0.645, exponent=1.7, midpoint=8000.0, start=0.3)(SIG_C)
PL_C = np.geomspace(10.0, 1e4, 20)
PL_Y = 0.9 - 2.0 * PL_C**-0.5
KL = np.linspace(0.1, 30.0, 20)
GOLD = np.sqrt(KL) * (0.913 - 0.122 * np.sqrt(KL))
COV_N = np.full(40, 64)
COV_C = np.random.default_rng(0).binomial(64, np.random.default_rng(1).beta(0.3, 3.0, 40))

CAL_LAW = AdditiveLaw(0.1, {"E": 1.0, "k": 1.0}, {"E": 0.5, "k": 0.5})
CAL_BOUNDS = {"E": (1, 1e6), "k": (1, 1e6)}
CAL_CENTRE = {"E": 10.0, "k": 10.0}
CAL_DESIGN = opt.star_design(CAL_CENTRE, {"E": [1.0, 3.0, 10.0, 30.0, 100.0],
                                         "k": [1.0, 3.0, 10.0, 30.0, 100.0]})


def _sigmoid(c, r0, a, m, b):
    # R(C) = R0 + (A − R0)/(1 + (C_mid/C)^B) = R0 + (A − R0)·expit(B·(log C − log C_mid))
    # (Khatri et al. 2025), written out again with scipy's logistic function.
    from scipy.special import expit

    return r0 + (a - r0) * expit(b * (np.log(np.asarray(c, dtype=float)) - math.log(m)))


def _sigmoid_oracle(fit):
    law = fit.law
    assert law.start < law.asymptote, (law.start, law.asymptote)
    pred = _sigmoid(fit.compute, law.start, law.asymptote, law.midpoint, law.exponent)
    rmse = math.sqrt(float(np.mean((pred - fit.observed) ** 2)))
    assert math.isclose(fit.rmse, rmse, rel_tol=1e-9, abs_tol=1e-12), (fit.rmse, rmse)
    for lo_hi in (fit.asymptote_interval, fit.exponent_interval, fit.midpoint_interval):
        assert lo_hi is None or lo_hi[0] <= lo_hi[1]


def _power_oracle(fit):
    assert fit.scale > 0 and fit.exponent >= 0


def _audit_oracle(audit):
    law = audit.sigmoid.law
    want = _sigmoid(audit.tail_compute, law.start, law.asymptote, law.midpoint, law.exponent)
    np.testing.assert_allclose(audit.sigmoid_tail, want, rtol=1e-9, atol=1e-12)
    p = audit.power_law
    np.testing.assert_allclose(audit.power_law_tail,
                               p.asymptote - p.scale * audit.tail_compute ** -p.exponent,
                               rtol=1e-9, atol=1e-12)
    assert np.all(audit.tail_compute > audit.split)
    assert np.all(audit.sigmoid.compute <= audit.split)


def _gao_checked(kl, gold, kind, bootstrap, confidence, rng):
    fit = opt.fit_gao(kl, gold, kind, bootstrap=bootstrap, confidence=confidence, rng=rng)
    # Least squares without intercept, by the 2x2 normal equations and Cramer's rule.
    d = np.sqrt(np.asarray(kl, dtype=float).ravel())
    y = np.asarray(gold, dtype=float).ravel()
    x2 = -d * d if kind == "bon" else -d * np.log(np.where(d > 0, d, 1.0))
    s11, s12, s22 = d @ d, d @ x2, x2 @ x2
    det = s11 * s22 - s12 * s12
    if abs(det) > 1e-6 * s11 * s22:
        alpha = (s22 * (d @ y) - s12 * (x2 @ y)) / det
        beta = (s11 * (x2 @ y) - s12 * (d @ y)) / det
        scale = 1e-6 * (1.0 + abs(alpha) + abs(beta))
        assert abs(fit.alpha - alpha) <= scale and abs(fit.beta - beta) <= scale
    # Documented: a peak interval's end is inf where the resamples have no finite peak.
    ends = {}
    for name in ("peak_kl_interval", "peak_gain_interval"):
        lo_hi = getattr(fit, name)
        if lo_hi is not None and not math.isfinite(lo_hi[1]):
            assert lo_hi[0] <= lo_hi[1]
            ends[name] = None
    return dataclasses.replace(fit, **ends) if ends else fit


def _coverage_checked(samples, correct, bootstrap, confidence, rng):
    fit = opt.fit_coverage(samples, correct, bootstrap=bootstrap, confidence=confidence, rng=rng)
    # pass@1 is c/n per problem (Chen et al. eq. 1 at k = 1): the mean is the coverage at k = 1.
    n = np.asarray(samples, dtype=float).ravel()
    c = np.asarray(correct, dtype=float).ravel()
    assert fit.k[0] == 1
    assert math.isclose(fit.observed[0], float(np.mean(c / n)), rel_tol=1e-9, abs_tol=1e-12)
    np.testing.assert_allclose(fit.predicted, np.exp(fit.a * fit.k.astype(float) ** fit.b),
                               rtol=1e-12)
    return fit


def _label_law(a, b, c, M, K):
    return a * math.sqrt(max(min(math.log(M) + b, c * K), 0.0))


def _labels_checked(a, b, c, price_m, price_k, target=None, budget=None):
    p = opt.plan_labels(a, b, c, price_m=price_m, price_k=price_k, target=target, budget=budget)
    assert p.M >= 1.0 and p.K >= 0.0
    # float(): a numpy float32 price would round the product to single precision
    assert math.isclose(p.cost, float(price_m) * p.M + float(price_k) * p.K, rel_tol=1e-12)
    a, b, c = float(a), float(b), float(c)
    assert math.isclose(p.gain, _label_law(a, b, c, p.M, p.K), rel_tol=1e-9, abs_tol=1e-300)
    if target is not None:
        assert p.gain >= target * (1 - 1e-9)
    else:
        assert p.cost <= budget * (1 + 1e-9)
    return p


def _sqrt_min(M, K):
    return np.sqrt(np.maximum(np.minimum(np.log(M), np.asarray(K, dtype=float)), 0.0))


def _labels_numeric_checked(price_m, price_k, budget, m_max):
    p = opt.plan_labels_numeric(_sqrt_min, price_m=price_m, price_k=price_k, budget=budget,
                                m_max=m_max)
    assert p.cost <= budget * (1 + 1e-9)
    assert math.isclose(p.gain, float(_sqrt_min(p.M, p.K)), rel_tol=1e-12, abs_tol=1e-300)
    return p


def _calibration_oracle(cal):
    assert 0.0 <= cal.coverage <= 1.0
    assert cal.coverage_interval[0] <= cal.coverage <= cal.coverage_interval[1]
    assert len(cal.intervals) == cal.n_datasets
    hits = sum(lo <= cal.truth <= hi for lo, hi in cal.intervals)
    assert math.isclose(cal.coverage, hits / cal.n_datasets)


CASES = [
    Case("fit_sigmoid", opt.fit_sigmoid,
         {"compute": SIG_C, "success": SIG_Y, "start": 0.3, "drop_fraction": 0.03,
          "min_compute": None, "asymptote_max": 1.0, "bootstrap": 3, "confidence": 0.95,
          "rng": 0}, counts=("bootstrap",), skip_midsize=("bootstrap",), midsize=(100, 1e10),
         oracle=_sigmoid_oracle, examples=60, deadline=20.0,
         names={"compute": ("compute", "success"), "success": ("success", "compute"),
                "start": ("start", "asymptote_max"), "asymptote_max": ("asymptote_max",),
                "min_compute": ("min_compute",), "rng": ("rng", "seed")},
         valid={"asymptote_max": (0.8, 2.0), "start": (0.0, 0.5),
                "min_compute": (1000.0, 40000.0)}),
    Case("fit_power_law", opt.fit_power_law,
         {"compute": PL_C, "success": PL_Y, "asymptote_max": 1.0}, oracle=_power_oracle,
         names={"compute": ("compute", "success"), "success": ("success", "compute"),
                "asymptote_max": ("asymptote_max",)},
         valid={"asymptote_max": (0.95, 2.0)}),
    Case("sigmoid_audit", opt.sigmoid_audit,
         {"compute": SIG_C, "success": SIG_Y, "fit_fraction": 0.5, "drop_fraction": 0.03,
          "start": 0.3, "asymptote_max": 1.0, "bootstrap": 0, "confidence": 0.95, "rng": 0},
         counts=("bootstrap",), skip_midsize=("bootstrap",), midsize=(100, 1e10),
         oracle=_audit_oracle,
         examples=60, deadline=20.0,
         names={"compute": ("compute", "success"), "success": ("success", "compute"),
                "start": ("start", "asymptote_max"), "fit_fraction": ("fit_fraction",),
                "drop_fraction": ("drop_fraction",), "rng": ("rng", "seed")},
         valid={"fit_fraction": (0.3, 0.9)}),
    Case("fit_gao", _gao_checked,
         {"kl": KL, "gold": GOLD, "kind": "bon", "bootstrap": 5, "confidence": 0.95, "rng": 0},
         counts=("bootstrap",), skip_midsize=("bootstrap",),
         names={"kl": ("kl", "gold"), "gold": ("gold", "kl"), "rng": ("rng", "seed")},
         valid={"kind": ("rl",)}),
    Case("fit_coverage", _coverage_checked,
         {"samples": COV_N, "correct": COV_C, "bootstrap": 5, "confidence": 0.95, "rng": 0},
         counts=("bootstrap",), skip_midsize=("bootstrap",),
         names={"samples": ("samples", "correct"), "correct": ("correct", "samples"),
                "rng": ("rng", "seed")}),
    Case("plan_labels", _labels_checked,
         {"a": 1.0, "b": 0.0, "c": 1.0, "price_m": 1.0, "price_k": 100.0, "target": 2.0},
         names={"target": ("target",), "a": ("a", "target"), "b": ("b", "target"),
                "c": ("c", "target")},
         valid={"target": (0.5, 10.0), "b": (-3.0, 3.0)}),
    Case("plan_labels(budget)",
         lambda **kw: _labels_checked(**kw),
         {"a": 1.0, "b": 0.0, "c": 1.0, "price_m": 1.0, "price_k": 100.0, "budget": 454.6},
         names={"budget": ("budget",), "price_m": ("price_m", "budget"),
                "price_k": ("price_k", "budget"), "a": ("a", "budget"), "b": ("b", "budget"),
                "c": ("c", "budget")},
         valid={"budget": (10.0, 1e6, 1e300)}),
    Case("plan_labels_numeric", _labels_numeric_checked,
         {"price_m": 1.0, "price_k": 100.0, "budget": 454.6, "m_max": 1e12},
         names={"price_m": ("price_m", "budget"), "m_max": ("m_max",)},
         valid={"budget": (10.0, 1e6)}),
    Case("calibrate_eta", opt.calibrate_eta,
         {"law": CAL_LAW, "cost": "E + k", "budget": 200.0, "centre": CAL_CENTRE,
          "design": CAL_DESIGN, "noise": 0.01, "replicates": 1, "bounds": CAL_BOUNDS,
          "baseline": "k only", "n_datasets": 1, "bootstrap": 4, "plan_laws": 2,
          "confidence": 0.9, "seed": 0, "method": "bc", "jackknife": False},
         counts=("replicates", "n_datasets", "bootstrap", "plan_laws", "seed"),
         # A study costs n_datasets x (a fit with bootstrap refits + a plan): seconds each,
         # so past 8 data sets, resamples, replicates or laws it runs for minutes by design
         # (the documented limits bound it at 1e6 refits; benchmarks/calibration_eta.py).
         skip_midsize=("replicates", "n_datasets", "bootstrap", "plan_laws"), midsize=(8, 1e10),
         oracle=_calibration_oracle, examples=12, deadline=60.0,
         names={"centre": ("centre",), "design": ("design",), "law": ("law",),
                "cost": ("cost",), "budget": ("budget", "baseline"),
                "bounds": ("bounds",), "noise": ("noise",),
                "baseline": ("baseline",), "n_datasets": ("n_datasets",),
                "bootstrap": ("bootstrap",), "method": ("method",),
                "jackknife": ("jackknife",)},
         valid={"baseline": ("proportional", "E only"), "method": ("percentile", "basic")}),
]

# -- methods of the result records -----------------------------------------------------------

SIG_FIT = opt.fit_sigmoid(SIG_C, SIG_Y, start=0.3, bootstrap=0)
POWER_FIT = opt.fit_power_law(PL_C, PL_Y)
AUDIT = opt.sigmoid_audit(SIG_C, SIG_Y, start=0.3, bootstrap=0)
COV_FIT = opt.fit_coverage(COV_N, COV_C, bootstrap=5)
PROB = opt.AllocationProblem(CAL_LAW, "E + k", CAL_BOUNDS)
UNC = opt.plan_uncertainty(CAL_LAW, [AdditiveLaw(0.1, {"E": 1.0, "k": c}, {"E": 0.5, "k": 0.5})
                                     for c in (0.8, 1.0, 1.25)],
                           "E + k", 200.0, CAL_CENTRE, CAL_BOUNDS)
REALISED = opt.realised_efficiency([100.0, 400.0, 1600.0],
                                   [[0.10, 0.12, 0.11], [0.30, 0.29, 0.31], [0.50, 0.51, 0.49]],
                                   1600.0, [0.40, 0.41, 0.39], n_boot=50, rng=1)
_E = np.array([1.0, 2, 4, 8, 16, 32, 64, 128])
EXPR_FIT = opt.fit_expression("E0 + A/E**a", {"E": _E, "loss": 0.2 + 1.5 * _E**-0.4},
                              axes=["E"], grid=3, refine=2, holdout=0,
                              params={"E0": (0.01, 1), "A": (0.1, 10), "a": (0.1, 1)})
TURNS = [Turn.with_coverage(0.5), Turn.with_verifier(0.3, fpr=0.1, fnr=0.2)]


def _sigmoid_predict_checked(compute):
    out = SIG_FIT.predict(compute)
    law = SIG_FIT.law
    np.testing.assert_allclose(out, _sigmoid(compute, law.start, law.asymptote, law.midpoint,
                                             law.exponent), rtol=1e-9, atol=1e-12)
    return out


def _power_predict_checked(compute):
    out = POWER_FIT.predict(compute)
    p = POWER_FIT
    np.testing.assert_allclose(out, p.asymptote - p.scale * np.asarray(compute, float)
                               ** -p.exponent, rtol=1e-9, atol=1e-12)
    return out


def _coverage_predict_checked(k):
    out = COV_FIT.predict(k)
    assert np.all((out > 0) & (out <= 1)), out   # a < 0: c(k) is a probability
    return out


def _covers_checked(eta, baseline):
    out = UNC.covers(eta, baseline)
    lo, hi = UNC.eta_intervals[baseline or UNC.strongest]
    assert out == (lo <= eta <= hi)
    return out


def _eta_interval_checked(baseline, method):
    out = UNC.eta_interval(baseline, method)
    name = baseline or UNC.strongest
    if method == "percentile":  # the quantiles of the stored bootstrap η
        assert out == tuple(float(q) for q in np.quantile(UNC.eta_samples[name], [0.05, 0.95]))
    if method is None:  # the method plan_uncertainty used
        assert out == UNC.eta_intervals[name]
    assert out[0] <= out[1] and out[0] >= 1.0 - 1e-7
    return out


def _overlaps_checked(low, high):
    out = REALISED.overlaps(low, high)
    lo, hi = REALISED.interval
    assert out == (max(lo, low) <= min(hi, high))
    return out


_E_REPS = np.repeat(_E, 2)
PLOT_DATA = {"E": _E_REPS, "loss": (0.2 + 1.5 * _E_REPS**-0.4)
             * np.exp(np.random.default_rng(0).normal(0.0, 0.01, _E_REPS.size))}
PLOT_FIT = opt.fit_law(PLOT_DATA, axes=["E"], starts=4, n_jobs=1, bootstrap=20)


def _plot_checked(data, at, confidence):
    fig = PLOT_FIT.plot(data, at=at, confidence=confidence)
    # One column per axis: the law above, the residuals below; every residual drawn.
    assert len(fig.axes) == 2
    resid = next(ln for ln in fig.axes[1].get_lines() if ln.get_marker() == "o")
    assert len(resid.get_xdata()) == len(np.asarray(data["E"]).ravel())
    return None


CASES += [
    Case("FitResult.plot", _plot_checked, {"data": PLOT_DATA, "at": None, "confidence": 0.9},
         names={"data": ("data", "column"), "at": ("at",), "confidence": ("confidence",)},
         valid={"at": ({"E": 3.0},), "confidence": (0.5, 0.99)}, examples=40),
    Case("SigmoidFit.predict", _sigmoid_predict_checked, {"compute": 1e4},
         names={"compute": ("compute",)}, valid={"compute": (1.0, 1e9)}),
    Case("PowerLawFit.predict", _power_predict_checked, {"compute": 1e4},
         names={"compute": ("compute",)}, valid={"compute": (1.0, 1e9)}),
    Case("CoverageFit.predict", _coverage_predict_checked, {"k": 8.0},
         names={"k": ("k",)}, valid={"k": (1.0, 1e6)}),
    Case("PlanUncertainty.covers", _covers_checked, {"eta": 1.5, "baseline": None},
         names={"eta": ("eta",), "baseline": ("baseline",)},
         valid={"baseline": ("k only", "E only", "proportional")}),
    Case("PlanUncertainty.eta_interval", _eta_interval_checked,
         {"baseline": None, "method": "percentile"},
         names={"baseline": ("baseline",), "method": ("method",)},
         valid={"baseline": ("k only", "E only", "proportional"),
                "method": ("basic", "bc", "basic-log", "symmetric")}),
    Case("RealisedEfficiency.overlaps", _overlaps_checked, {"low": 1.0, "high": 3.0},
         names={"low": ("low",), "high": ("high",)}),
    Case("ExpressionFit.predict", lambda E: EXPR_FIT.predict({"E": E}), {"E": 10.0},
         names={"E": ("E", "values")}),
    Case("ExpressionFit.range_warnings", lambda E: EXPR_FIT.range_warnings({"E": E}),
         {"E": 10.0}, names={"E": ("E", "values")}),
]

# -- saving and loading fits (issue 24) --------------------------------------------------
# Saves go to a private temporary folder: a hostile path "1" is a valid file name.
_SAVES = Path(tempfile.mkdtemp(prefix="rlscale-contract-saves-"))
_SAVED = EXPR_FIT.save(_SAVES / "expr.json")
_FIT_SAVED = opt.fit_law({"E": _E, "loss": 0.2 + 1.5 * _E**-0.4}, axes=["E"], starts=4,
                         n_jobs=1).save(_SAVES / "fit.json")


def _under_saves(call):
    """``call(path)`` with a string path taken inside the private folder; a file that
    cannot be read is an ``OSError`` naming it (not a bad argument)."""
    def run(path):
        if isinstance(path, str) and path:
            path = _SAVES / path.replace("/", "_")
        try:
            return call(path)
        except OSError as exc:
            assert getattr(exc, "filename", None) is not None, exc
            return None
    return run


def _round_trips(fit):
    if fit is None:  # an unreadable file (OSError naming it), see _under_saves
        return
    assert fit.params == opt.load_fit(_SAVED if type(fit).__name__ == "ExpressionFit"
                                      else _FIT_SAVED).params


CASES += [
    Case("load_fit", _under_saves(opt.load_fit), {"path": _SAVED}, oracle=_round_trips),
    Case("FitResult.load", _under_saves(opt.FitResult.load), {"path": _FIT_SAVED},
         oracle=_round_trips),
    Case("ExpressionFit.load", _under_saves(opt.ExpressionFit.load), {"path": _SAVED},
         oracle=_round_trips),
    Case("FitResult.save", _under_saves(opt.FitResult.load(_FIT_SAVED).save),
         {"path": _SAVES / "again.json"}),
    Case("ExpressionFit.save", _under_saves(EXPR_FIT.save), {"path": _SAVES / "e2.json"}),
]

#: Result records: fields only, built by the functions above (their producers have entries).
RECORDS = {"AdaptivePlan", "BaselineComparison", "CoverageFit", "EtaCalibration",
           "ExpressionAllocation", "ExpressionFit", "GaoFit", "InferenceComparison",
           "InferencePlan", "LabelPlan", "PlanUncertainty", "PowerLawFit",
           "RealisedEfficiency", "SigmoidAudit", "SigmoidFit",
           # a constant: the baseline kinds, fuzzed through baseline_plan's ``kind``
           "BASELINES"}

#: Methods and properties that take no argument: called once on a valid object.
NO_ARGUMENTS = {
    "AdaptivePlan.as_dict", "BaselineComparison.as_dict", "BaselineComparison.eta",
    "CoverageFit.as_dict", "CoverageFit.extrapolation_error", "EtaCalibration.as_dict",
    "ExpressionAllocation.as_dict", "ExpressionAllocation.to_frame", "ExpressionFit.as_dict",
    "ExpressionFit.bound", "ExpressionFit.bound_laws", "ExpressionFit.status",
    "ExpressionFit.to_frame", "GaoFit.as_dict",
    "InferenceComparison.adaptivity_gain", "InferenceComparison.as_dict",
    "InferenceComparison.best_baseline", "InferenceComparison.success_ratio",
    "InferencePlan.as_dict", "InferencePlan.message", "LabelPlan.as_dict",
    "PlanUncertainty.as_dict",
    "PlanUncertainty.strongest", "PowerLawFit.as_dict", "RealisedEfficiency.as_dict",
    "SigmoidAudit.as_dict", "SigmoidAudit.power_law_final_error",
    "SigmoidAudit.power_law_tail_rmse", "SigmoidAudit.sigmoid_final_error",
    "SigmoidAudit.sigmoid_tail_rmse", "SigmoidFit.as_dict",
}


def no_argument_objects() -> list:
    """One valid object of each record class above (for the NO_ARGUMENTS check)."""
    cal = opt.calibrate_eta(CAL_LAW, "E + k", 200.0, CAL_CENTRE, CAL_DESIGN, noise=0.01,
                            replicates=1, bounds=CAL_BOUNDS, n_datasets=1, bootstrap=4,
                            plan_laws=2)
    return [SIG_FIT, POWER_FIT, AUDIT, COV_FIT, UNC, UNC.point, REALISED, EXPR_FIT,
            opt.allocate_expression(EXPR_FIT, "E", 100.0, starts=2),
            opt.fit_gao(KL, GOLD, "bon", bootstrap=20),
            opt.integer_plan(TURNS, 12), opt.adaptive_plan(TURNS, 12),
            opt.compare_inference_plans(TURNS, 12),
            opt.plan_labels(1.0, 0.0, 1.0, price_m=1.0, price_k=100.0, target=2.0), cal]
