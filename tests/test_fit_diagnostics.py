"""Fit diagnostics and known limits in the fit (issue 11 §1, §2).

Each diagnostic is tested on both sides: a design or law built to trip it,
and a clean design with a well-posed law that must stay silent.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from rlscale.cli import main
from rlscale.optimize import fit_law
from rlscale.optimize._diagnostics import design_warnings, range_warnings

SWEEP_AXES = {"E": [1, 2, 4, 8, 16, 32, 64], "t": [1, 2, 4, 8, 16, 32], "k": [2, 4, 8, 16, 32]}


def _star_sweep(seed: int = 0, seeds: int = 3) -> dict[str, np.ndarray]:
    """The star design of examples/sweep.toml (base E, t, k = 16, 4, 8), loss from a known
    per-level law with 2 % multiplicative noise, in the columns rlscale sweep writes."""
    base = {"E": 16, "t": 4, "k": 8}
    pts = sorted({tuple({**base, a: v}[b] for b in "Etk")
                  for a, vals in SWEEP_AXES.items() for v in vals})
    E, t, k = np.repeat(np.array(pts, dtype=float), seeds, axis=0).T
    loss = 0.2 + 0.4 * E**-0.35 + 0.2 * t**-0.4 + 0.15 * k**-0.5
    loss *= np.exp(np.random.default_rng(seed).normal(0.0, 0.02, loss.size))
    return {"environments": E, "tasks_per_environment": t, "trajectories_per_task": k,
            "tasks": E * t, "trajectories": E * t * k, "loss": loss, "success": 1 - loss}


def _codes(fit) -> list[str]:
    return [w.code for w in fit.warnings]


def test_clean_design_and_well_posed_law_give_no_warning() -> None:
    data = _star_sweep()
    fit = fit_law(data, axes=["environments", "tasks_per_environment", "trajectories_per_task"],
                  starts=20, holdout=0, n_jobs=1)
    assert fit.warnings == (), [str(w) for w in fit.warnings]
    x = np.logspace(0, 2, 8)
    one = fit_law({"x": x, "loss": 0.3 + 0.5 * x**-0.4}, axes=["x"], holdout=0, n_jobs=1)
    assert one.warnings == ()


def test_star_design_in_totals_is_flagged_with_the_nested_fix() -> None:
    data = _star_sweep()
    x = np.column_stack([data["environments"], data["tasks"], data["trajectories"]])
    (w,) = design_warnings(x, ["environments", "tasks", "trajectories"])
    assert w.code == "collinear-axes" and set(w.axes) == {"tasks", "trajectories"}
    assert "tasks_per_environment" in w.fix and "trajectories_per_task" in w.fix
    # VIF by hand: regress log tasks on the other two log axes
    logs = np.log(x)
    design = np.column_stack([np.ones(len(x)), logs[:, 0], logs[:, 2]])
    resid = logs[:, 1] - design @ np.linalg.lstsq(design, logs[:, 1], rcond=None)[0]
    vif = 1 / (resid.var() / logs[:, 1].var())
    assert f"tasks {vif:.3g}" in w.message and vif > 5
    # independent axes of a factorial design are not collinear
    a, b = np.meshgrid([1.0, 2, 4, 8], [1.0, 3, 9])
    assert design_warnings(np.column_stack([a.ravel(), b.ravel()]), ["a", "b"]) == []


def test_readme_flow_sweep_then_fit_in_totals_prints_the_warning(tmp_path, capsys) -> None:
    data = _star_sweep()
    path = tmp_path / "results.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(list(data))
        writer.writerows(zip(*data.values()))
    out = tmp_path / "fit.json"
    assert main(["fit", str(path), "--axes", "environments,tasks,trajectories", "--target",
                 "loss", "--starts", "20", "--jobs", "1", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    line = next(ln for ln in err.splitlines() if "collinear-axes" in ln)
    assert line.startswith("warning [collinear-axes]") and "tasks, trajectories" in line
    assert "Fix:" in line and "--axes environments,tasks_per_environment" in line
    stored = json.loads(out.read_text())["warnings"]
    assert stored[0]["code"] == "collinear-axes" and stored[0]["fix"]


def test_a_rising_target_under_a_falling_law_is_refused(tmp_path, capsys) -> None:
    data = _star_sweep()
    axes = ["environments", "tasks_per_environment", "trajectories_per_task"]
    for law in ("multiplicative", "additive"):
        with pytest.raises(ValueError, match=r"--target loss.*--law pass_rate"):
            fit_law(data, law=law, axes=axes, target="success", starts=10)
    with pytest.raises(ValueError, match="--target success"):
        fit_law(data, law="pass_rate", axes=axes, target="loss", starts=10)
    path = tmp_path / "r.csv"
    rows = zip([1, 2, 4, 8, 16], [0.1, 0.2, 0.3, 0.4, 0.5])
    path.write_text("environments,success\n" + "".join(f"{e},{s}\n" for e, s in rows))
    assert main(["fit", str(path), "--axes", "environments", "--target", "success",
                 "--law", "multiplicative"]) == 2
    assert "--law pass_rate" in capsys.readouterr().err


def test_floor_at_zero_and_the_known_floor_bound() -> None:
    x = np.logspace(0, 2, 10)
    pure = {"x": x, "loss": 2.0 * x**-0.5}  # no floor at all: it must be reported as ~0
    fit = fit_law(pure, axes=["x"], holdout=0, n_jobs=1)
    (w,) = [w for w in fit.warnings if w.code == "floor-at-zero"]
    assert "floor=(low, high)" in w.fix and w.parameters == ("floor",)
    truth = {"x": x, "loss": 0.3 + 0.5 * x**-0.4}
    bounded = fit_law(truth, axes=["x"], holdout=0, n_jobs=1, floor=(0.25, 0.35))
    assert 0.25 <= bounded.params["floor"] <= 0.35
    assert bounded.params["floor"] == pytest.approx(0.3, rel=1e-4) and bounded.warnings == ()
    fixed = fit_law(truth, axes=["x"], holdout=0, n_jobs=1, floor=(0.2, 0.2))
    assert fixed.params["floor"] == pytest.approx(0.2, rel=1e-12)
    assert "floor-at-bound" in _codes(fixed)  # the data push past the stated limit


def test_p_max_bounds_a_pass_rate_law() -> None:
    x = np.logspace(0, 2, 10)
    rate = {"x": x, "success": 0.74 / (1 + 2.0 * x**-0.5)}
    fit = fit_law(rate, law="pass_rate", axes=["x"], target="success", holdout=0, n_jobs=1,
                  p_max=(0.7, 0.741))
    assert 0.7 <= fit.params["p_max"] <= 0.741 and fit.warnings == ()
    capped = fit_law(rate, law="pass_rate", axes=["x"], target="success", holdout=0, n_jobs=1,
                     p_max=(0.5, 0.6))
    assert capped.params["p_max"] == pytest.approx(0.6, rel=1e-9)
    assert "p_max-at-bound" in _codes(capped)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"floor": (0.3, 0.2)}, "low <= high"), ({"floor": (-1, 1)}, r"floor\[0\] must be >= 0"),
    ({"floor": 0.3}, "must be a pair"),
    ({"p_max": (0.5, 1.5), "law": "pass_rate"}, r"p_max\[1\] must be > 0 and <= 1"),
    ({"p_max": (0.5, 0.9)}, "bounds a pass-rate law"),
    ({"floor": (0.1, 0.2), "law": "multiplicative"}, "has no floor")])
def test_bad_limits_are_refused(kwargs, match) -> None:
    x = np.logspace(0, 2, 10)
    with pytest.raises(ValueError, match=match):
        fit_law({"x": x, "loss": 0.3 + x**-0.5}, axes=["x"], starts=5, **kwargs)


def test_a_step_is_flagged_as_an_unresolved_exponent() -> None:
    k = np.array([2.0, 4, 8, 16, 32])
    step = fit_law({"k": k, "loss": 0.4 + 1.0 * k**-3.0}, axes=["k"], holdout=0, n_jobs=1)
    (w,) = [w for w in step.warnings if w.code == "exponent-unresolved"]
    # share of the term's decline between k = 2 and 4, by hand: (1 - 2^-a)/(1 - 16^-a)
    a = step.params["exponent[k]"]
    assert f"{(1 - 2**-a) / (1 - 16**-a):.0%}" in w.message and "between 2 and 4" in w.fix
    gentle = fit_law({"k": k, "loss": 0.4 + 1.0 * k**-0.5}, axes=["k"], holdout=0, n_jobs=1)
    assert gentle.warnings == ()


def test_an_axis_without_effect_is_flagged() -> None:
    a, b = np.meshgrid(np.logspace(0, 2, 6), np.logspace(0, 2, 5))
    data = {"a": a.ravel(), "b": b.ravel(), "loss": 0.3 + 0.5 * a.ravel() ** -0.4}
    fit = fit_law(data, axes=["a", "b"], starts=60, holdout=0, n_jobs=1)
    flagged = {ax for w in fit.warnings for ax in w.axes}
    assert "b" in flagged and "a" not in flagged


@pytest.mark.slow
def test_bootstrap_intervals_that_touch_a_bound_are_not_identified() -> None:
    a, b = np.meshgrid(np.logspace(0, 2, 5), np.logspace(0, 2, 4))
    rng = np.random.default_rng(3)
    loss = (0.3 + 0.5 * a.ravel() ** -0.4) * np.exp(rng.normal(0, 0.01, a.size))
    fit = fit_law({"a": a.ravel(), "b": b.ravel(), "loss": loss}, axes=["a", "b"], starts=10,
                  holdout=0, bootstrap=20, n_jobs=1)
    lo = fit.intervals["exponent[b]"][0]
    hits = [w for w in fit.warnings if w.code == "not-identified"]
    assert lo < 1e-3 and any(w.parameters == ("exponent[b]",) for w in hits)


def test_extrapolation_beyond_the_data_range() -> None:
    fit = fit_law({"x": np.logspace(0, 2, 8), "loss": 0.3 + 0.5 * np.logspace(0, 2, 8) ** -0.4},
                  axes=["x"], holdout=0, n_jobs=1)
    assert fit.data_range == {"x": (1.0, 100.0)}
    assert fit.range_warnings({"x": 900.0}) == []
    (w,) = fit.range_warnings({"x": [50.0, 5000.0]})
    assert w.code == "extrapolation" and "50x the largest" in w.message
    assert range_warnings({"x": (1.0, 100.0)}, {"x": 0.05})[0].axes == ("x",)


# The report's --quick sweep (seed 0): a parameter column of the bootstrap constant up to
# a few ulps made np.corrcoef divide 0 by 0 inside the correlation diagnostic.
_REPORT_QUICK_ROWS = [
    (8, 4, 8, 0.7221298345108021), (8, 4, 8, 0.7582082952987552),
    (1, 4, 8, 0.8504280761801599), (1, 4, 8, 0.8692511891679343),
    (4, 4, 8, 0.7969907359047441), (4, 4, 8, 0.7993865089968673),
    (16, 4, 8, 0.6861827675271298), (16, 4, 8, 0.6384886511455871),
    (64, 4, 8, 0.4993370173081426), (64, 4, 8, 0.5153854605486223),
    (8, 1, 8, 0.8203835744449652), (8, 1, 8, 0.836123618142094),
    (8, 16, 8, 0.5595284029963492), (8, 16, 8, 0.513961897360351),
    (8, 4, 2, 0.8375149234428427), (8, 4, 2, 0.7822279823427624),
    (8, 4, 32, 0.6961470582039807), (8, 4, 32, 0.7115415600857014),
]


def test_a_floor_pinned_in_every_resample_raises_no_invalid_value_warning() -> None:
    import math
    import warnings

    from rlscale.optimize import fit_law

    arr = np.array(_REPORT_QUICK_ROWS, dtype=float)
    axes = ["environments", "tasks_per_environment", "trajectories_per_task"]
    data = {a: arr[:, i] for i, a in enumerate(axes)} | {"loss": arr[:, 3]}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        fit = fit_law(data, law="additive", axes=axes, target="loss", bootstrap=200,
                      floor=(0.25920415008765174, math.inf), seed=0, n_jobs=1)
    assert "floor-at-bound" in {w.code for w in fit.warnings}


def test_numpy_spearman_matches_scipy_with_ties() -> None:
    # The direction check's rank correlation is written with numpy (issue 24: importing
    # scipy.stats was a quarter of a cold fit_law); scipy's spearmanr is the reference.
    from scipy.stats import spearmanr

    from rlscale.optimize._diagnostics import _spearman

    rng = np.random.default_rng(24)
    for _ in range(50):
        a = rng.integers(0, 4, 15).astype(float)  # many ties
        b = np.round(rng.normal(size=15) + a, 1)
        if np.ptp(a) == 0 or np.ptp(b) == 0:
            continue
        assert _spearman(a, b) == pytest.approx(spearmanr(a, b).statistic, abs=1e-12)


def test_local_correlation_is_a_correlation_even_when_ill_conditioned() -> None:
    # Issue 24: pinv(JᵀJ) of an ill-conditioned fit was not positive semi-definite and the
    # documented fit printed "correlations" of +6.09 and +1.41.  Reference: (JᵀJ)⁻¹ in
    # 60-digit arithmetic (mpmath), where the float result is meaningful.
    import mpmath

    from rlscale.optimize._diagnostics import _local_correlation

    rng = np.random.default_rng(11)
    for _ in range(200):  # extreme: near-collinear columns on wildly different scales
        J = rng.normal(size=(30, 5))
        J[:, 4] = J[:, 3] + 10 ** rng.uniform(-9, 0) * rng.normal(size=30)
        J *= 10 ** rng.uniform(-6, 6, 5)
        c = _local_correlation(J)
        assert np.all(np.abs(c[np.isfinite(c)]) <= 1.0)
    J = rng.normal(size=(25, 4))
    J[:, 3] = J[:, 2] + 1e-4 * rng.normal(size=25)  # cond(J) ~ 1e4: float is accurate
    with mpmath.workdps(60):
        M = mpmath.matrix(J.tolist())
        cov = (M.T * M) ** -1
        ref = np.array([[float(cov[i, j] / mpmath.sqrt(cov[i, i] * cov[j, j]))
                         for j in range(4)] for i in range(4)])
    np.testing.assert_allclose(_local_correlation(J), ref, atol=1e-8)
