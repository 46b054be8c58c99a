"""Named RL laws (issue 15, section 2): ScaleRL compute sigmoid, its audit, Gao et al. fits.

Oracles: the closed forms written out by hand here, mpmath differentiation,
scipy's scalar maximiser on the published forms, and synthetic data with
known parameters (never the fitter's own output).
"""

from __future__ import annotations

import json
import math

import mpmath
import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar

from rlscale.cli import main
from rlscale.optimize import fit_gao, fit_power_law, fit_sigmoid, sigmoid_audit
from rlscale.simulate import train
from rlscale.theory import ComputeSigmoid, gao_peak
from rlscale.theory.reward import gao_bon, gao_rl

# Their 8B run's asymptote and exponent; midpoint and start chosen in GPU-hours.
TRUTH = ComputeSigmoid(asymptote=0.645, exponent=1.7, midpoint=8000.0, start=0.3)


def _by_hand(c: float, r0=0.3, a=0.645, m=8000.0, b=1.7) -> float:
    return r0 + (a - r0) / (1 + (m / c) ** b)


def test_sigmoid_values_derivative_elasticity_inverse() -> None:
    for c in (10.0, 8000.0, 3e4, 1e7):
        assert TRUTH(c) == pytest.approx(_by_hand(c), rel=1e-13)
        d = mpmath.diff(lambda x: 0.3 + 0.345 / (1 + (8000 / x) ** mpmath.mpf(1.7)), c)
        assert TRUTH.derivative(c) == pytest.approx(float(d), rel=1e-9)
        el = mpmath.diff(lambda t: mpmath.log(0.345 / (1 + (8000 / mpmath.e**t) ** 1.7)),
                         math.log(c))
        assert TRUTH.elasticity(c) == pytest.approx(float(el), rel=1e-9, abs=1e-15)
    # inverse: C(R) solves R(C) = R for R strictly inside (R0, A), by Brent's root finder
    for r in (0.31, 0.4725, 0.64):
        log_root = brentq(lambda t, r=r: _by_hand(math.exp(t)) - r, math.log(1e-3),
                          math.log(1e12), xtol=1e-14, rtol=1e-15)
        assert TRUTH.inverse(r) == pytest.approx(math.exp(log_root), rel=1e-8)
    assert TRUTH(np.inf) == 0.645
    assert TRUTH(8000.0) == pytest.approx(0.3 + 0.345 / 2)


def test_sigmoid_tail_is_the_bounded_power_law() -> None:
    a, d, b = TRUTH.tail_power_law()
    assert d == pytest.approx(0.345 * 8000**1.7)
    for c in (1e6, 1e8):
        u = (8000 / c) ** 1.7
        # R − (A − D C^−B) = (A − R0)·u²/(1 + u): second order in u
        assert TRUTH(c) - (a - d * c**-b) == pytest.approx(0.345 * u * u / (1 + u), rel=1e-6)


def test_sigmoid_validation_and_latex() -> None:
    with pytest.raises(ValueError, match="asymptote must be > start"):
        ComputeSigmoid(asymptote=0.2, exponent=1.0, midpoint=1.0, start=0.3)
    with pytest.raises(ValueError, match="exponent"):
        ComputeSigmoid(asymptote=0.6, exponent=0.0, midpoint=1.0)
    with pytest.raises(ValueError, match="success"):
        TRUTH.inverse(0.7)  # above the asymptote: no compute reaches it
    with pytest.raises(ValueError, match="compute"):
        TRUTH(0.0)
    assert "\\frac{0.345}" in TRUTH.latex() and TRUTH._repr_latex_().startswith("$")


@pytest.mark.parametrize("kind, fn", [("bon", gao_bon), ("rl", gao_rl)])
@pytest.mark.parametrize("alpha, beta", [(0.913, 0.122), (0.386, 0.136), (1.2, 0.5)])
def test_gao_peak_matches_numeric_maximum(kind, fn, alpha, beta) -> None:
    peak = gao_peak(kind, alpha, beta)
    hi = 10 * peak.kl + 1
    best = minimize_scalar(lambda k: -fn(k, alpha, beta), bounds=(1e-9, hi), method="bounded",
                           options={"xatol": 1e-10})
    assert peak.kl == pytest.approx(best.x, rel=1e-4)
    assert peak.gain == pytest.approx(-best.fun, rel=1e-8)
    assert peak.d == pytest.approx(math.sqrt(peak.kl))


def test_gao_peak_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="beta"):
        gao_peak("bon", 1.0, 0.0)
    with pytest.raises(ValueError, match="kind"):
        gao_peak("ppo", 1.0, 0.5)
    with pytest.raises(ValueError, match="overflows"):
        gao_peak("rl", 1000.0, 1.0)


def test_fit_sigmoid_exact_data_recovers_parameters() -> None:
    c = np.geomspace(300, 60000, 40)
    fit = fit_sigmoid(c, TRUTH(c), start=0.3, bootstrap=0)
    assert fit.law.asymptote == pytest.approx(0.645, abs=1e-5)
    assert fit.law.exponent == pytest.approx(1.7, rel=1e-4)
    assert fit.law.midpoint == pytest.approx(8000.0, rel=1e-4)
    assert fit.dropped == int(np.sum(c < 0.03 * 60000))  # early compute left out
    assert fit.asymptote_interval is None


@pytest.mark.slow
def test_fit_sigmoid_interval_covers_known_asymptote() -> None:
    c = np.linspace(500, 50000, 60)
    covered = 0
    for seed in range(5):
        y = TRUTH(c) + np.random.default_rng(seed).normal(0, 0.01, c.size)
        fit = fit_sigmoid(c, y, start=0.3, bootstrap=100, rng=seed)
        lo, hi = fit.asymptote_interval
        covered += lo <= 0.645 <= hi
        assert hi - lo < 0.05
    assert covered >= 4  # 95 % intervals: 5 of 5 expected, allow one miss


def test_fit_sigmoid_is_seeded_and_validates() -> None:
    c = np.linspace(500, 50000, 30)
    y = TRUTH(c) + np.random.default_rng(0).normal(0, 0.01, c.size)
    a = fit_sigmoid(c, y, bootstrap=20, rng=3)
    b = fit_sigmoid(c, y, bootstrap=20, rng=np.random.default_rng(3))
    assert a.asymptote_interval == b.asymptote_interval
    with pytest.raises(ValueError, match="at least 4 points"):
        fit_sigmoid(c[:3], y[:3])
    with pytest.raises(ValueError, match="equal lengths"):
        fit_sigmoid(c, y[:-1])
    with pytest.raises(ValueError, match="compute"):
        fit_sigmoid(-c, y)


def test_power_law_exact_recovery() -> None:
    c = np.geomspace(5, 5e4, 25)
    fit = fit_power_law(c, 0.8 - 1.5 * c**-0.4)
    assert (fit.asymptote, fit.scale, fit.exponent) == pytest.approx((0.8, 1.5, 0.4), rel=1e-5)


def test_audit_on_synthetic_sigmoid_prefers_the_sigmoid() -> None:
    # The ScaleRL phenomenon: fitted on the first half, the power law overshoots the
    # asymptote while the sigmoid's interval holds it.
    c = np.linspace(500, 50000, 60)
    y = TRUTH(c) + np.random.default_rng(1).normal(0, 0.005, c.size)
    audit = sigmoid_audit(c, y, start=0.3, bootstrap=100)
    lo, hi = audit.sigmoid.asymptote_interval
    assert lo <= 0.645 <= hi
    assert audit.power_law.asymptote > hi
    assert audit.sigmoid_tail_rmse < audit.power_law_tail_rmse
    truth_tail = TRUTH(audit.tail_compute)
    assert np.all(audit.tail_compute > audit.split) and audit.split == pytest.approx(25000)
    assert np.sqrt(np.mean((audit.sigmoid_tail - truth_tail) ** 2)) < 0.01


@pytest.mark.parametrize("kind, fn, alpha, beta", [("bon", gao_bon, 0.913, 0.122),
                                                   ("rl", gao_rl, 1.0, 0.3)])
def test_fit_gao_recovers_coefficients_and_peak(kind, fn, alpha, beta) -> None:
    kl = np.linspace(0.05, 40, 50)
    exact = fit_gao(kl, fn(kl, alpha, beta), kind, bootstrap=0)
    assert (exact.alpha, exact.beta) == pytest.approx((alpha, beta), rel=1e-10)
    true_kl = (alpha / (2 * beta)) ** 2 if kind == "bon" else math.exp(2 * (alpha / beta - 1))
    assert exact.peak.kl == pytest.approx(true_kl, rel=1e-8)
    noisy = fn(kl, alpha, beta) + np.random.default_rng(2).normal(0, 0.02, kl.size)
    fit = fit_gao(kl, noisy, kind, bootstrap=300, rng=2)
    for (lo, hi), value in ((fit.alpha_interval, alpha), (fit.beta_interval, beta),
                            (fit.peak_kl_interval, true_kl)):
        assert lo <= value <= hi


def test_fit_gao_without_a_peak_and_bad_input() -> None:
    kl = np.linspace(0.1, 4, 10)
    fit = fit_gao(kl, np.sqrt(kl), "bon", bootstrap=10)  # β = 0: still rising, no peak
    assert fit.peak is None and fit.peak_kl_interval is None
    with pytest.raises(ValueError, match="kind"):
        fit_gao(kl, kl, "ppo")
    with pytest.raises(ValueError, match="kl"):
        fit_gao(-kl, kl)


def test_trainer_curve_is_opt_in_and_changes_nothing_else() -> None:
    cfg = {"n_environments": 4, "tasks_per_environment": 2, "trajectories_per_task": 4,
           "epochs": 5, "tasks_per_step": 2, "eval_environments": 8}
    plain = train(**cfg)
    logged = train(**cfg, eval_every=7)
    assert plain.curve.shape == (0, 4)
    assert logged.success == plain.success and logged.env_steps == plain.env_steps
    updates = plain.updates  # 20
    assert logged.curve[:, 0].tolist() == [7, 14, updates]
    assert logged.curve[-1, 1] == plain.env_steps and logged.curve[-1, 3] == plain.success
    assert logged.curve[-1, 2] == plain.rollouts
    with pytest.raises(ValueError, match="eval_every"):
        train(**cfg, eval_every=0)


def test_cli_train_curve_then_fit_sigmoid(tmp_path, capsys) -> None:
    curve = tmp_path / "curve.csv"
    assert main(["train", "--environments", "4", "--tasks-per-environment", "2",
                 "--trajectories-per-task", "4", "--epochs", "12", "--set", "tasks_per_step=2",
                 "--set", "eval_environments=8", "--curve", str(curve), "--eval-every", "2",
                 "--no-progress"]) == 0
    lines = curve.read_text().splitlines()
    assert lines[0] == "update,env_steps,rollouts,success" and len(lines) == 1 + 24
    capsys.readouterr()
    synth = tmp_path / "synth.csv"
    c = np.linspace(500, 50000, 40)
    synth.write_text("compute,success\n" + "".join(f"{x},{TRUTH(x)}\n" for x in c))
    fig = tmp_path / "fit.png"
    assert main(["fit", str(synth), "--law", "sigmoid", "--axes", "compute", "--target",
                 "success", "--holdout", "0.5", "--figure", str(fig)]) == 0
    out = json.loads(capsys.readouterr().out)
    # R0 defaults to the first point's success, R(500) = 0.3016 rather than 0.3: A is close
    assert out["fit"]["asymptote"] == pytest.approx(0.645, abs=2e-3)
    assert out["audit"]["sigmoid_tail_rmse"] < out["audit"]["power_law_tail_rmse"]
    assert fig.stat().st_size > 1000
    assert main(["fit", str(curve), "--law", "sigmoid", "--axes", "env_steps", "--target",
                 "success", "--holdout", "0.3"]) == 0
    assert "audit" in json.loads(capsys.readouterr().out)


def test_cli_gao_and_errors(tmp_path, capsys) -> None:
    data = tmp_path / "gold.csv"
    kl = np.linspace(0.1, 30, 20)
    data.write_text("kl,gold\n" + "".join(f"{k},{gao_bon(k, 0.913, 0.122)}\n" for k in kl))
    fig = tmp_path / "gao.png"
    assert main(["fit", str(data), "--law", "gao_bon", "--axes", "kl", "--target", "gold",
                 "--bootstrap", "50", "--figure", str(fig)]) == 0
    assert fig.stat().st_size > 1000
    out = json.loads(capsys.readouterr().out)
    assert out["fit"]["peak"]["d"] == pytest.approx(0.913 / 0.244, rel=1e-8)
    assert main(["fit", str(data), "--law", "gao_rl", "--axes", "kl,gold", "--target",
                 "gold"]) == 2
    assert "one --axes column" in capsys.readouterr().err
    assert main(["fit", str(data), "--law", "sigmoid", "--axes", "kl", "--target", "gold",
                 "--holdout", "0"]) == 2


def test_sympy_expression_agrees_with_the_numeric_law() -> None:
    import sympy as sp

    expr = ComputeSigmoid.expr()
    c_sym = next(s for s in expr.free_symbols if s.name == "C")
    values = {s: v for s in expr.free_symbols
              for name, v in (("R0", 0.3), ("A", 0.645), ("C_mid", 8000), ("B", 1.7))
              if s.name == name}
    for c in (100.0, 8000.0, 1e6):
        assert float(expr.subs(values).subs(c_sym, c)) == pytest.approx(TRUTH(c), rel=1e-12)
        slope = sp.diff(expr, c_sym).subs(values).subs(c_sym, c)
        assert float(slope) == pytest.approx(TRUTH.derivative(c), rel=1e-10)


def test_power_law_needs_room_above_the_data() -> None:
    c = np.geomspace(5, 5e4, 10)
    with pytest.raises(ValueError, match="asymptote_max must exceed"):
        fit_power_law(c, np.linspace(0.5, 1.0, 10))
