"""Printing a result gives one screen, not thousands of characters (issue 24)."""

from __future__ import annotations

import numpy as np
import pytest

import rlscale.optimize as opt
from rlscale.optimize._summary import MAX_LINES
from rlscale.theory import AdditiveLaw


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    E = np.repeat(np.geomspace(1, 256, 9), 40)  # 360 rows: residuals no longer printed
    k = np.tile(np.geomspace(1, 64, 8), 45)
    loss = (0.2 + E ** -0.5 + 0.5 * k ** -0.3) * np.exp(rng.normal(0, 0.02, E.size))
    return {"E": E, "k": k, "loss": loss}


def _one_screen(text: str) -> None:
    lines = text.splitlines()
    assert len(lines) <= MAX_LINES and max(map(len, lines)) <= 200, text
    assert len(text) <= 3000


def test_fit_result_repr(data) -> None:
    fit = opt.fit_law(data, axes=["E", "k"], bootstrap=30, n_jobs=1)
    text = repr(fit)
    _one_screen(text)
    assert "90% bootstrap intervals (30 resamples)" in text
    lo, hi = fit.intervals["exponent[E]"]
    assert f"[{lo:.4g}, {hi:.4g}]" in text and "diagnostics" in text
    assert "no intervals" in repr(opt.fit_law(data, axes=["E", "k"]))


def test_expression_fit_repr(data) -> None:
    fit = opt.fit_law(data, "F + A/E**a + B/k**b", axes=["E", "k"], params={"F": (0, 1)})
    text = repr(fit)
    _one_screen(text)
    assert text.startswith("ExpressionFit: ") and "F" in text


def test_plan_uncertainty_repr() -> None:
    laws = [AdditiveLaw(0.1, {"E": c, "k": 1.0}, {"E": 0.5, "k": 0.5}) for c in (0.7, 1, 1.4)]
    u = opt.plan_uncertainty(laws[1], laws, "E + k", 200.0, {"E": 10.0, "k": 10.0},
                             {"E": (1, 1e6), "k": (1, 1e6)})
    text = repr(u)
    _one_screen(text)
    assert "90% intervals over 3 bootstrap laws" in text and "robust plan" in text
    for name, (lo, hi) in u.eta_intervals.items():
        assert f"[{lo:.4g}, {hi:.4g}]" in text, name


def test_warnings_are_listed_by_code(data) -> None:
    N = np.array([1.0, 2, 4, 8, 16, 32, 64, 128])
    fit = opt.fit_law({"N": N, "loss": N ** -1.0}, axes=["N"])  # floor at zero
    assert fit.warnings
    assert f"[{fit.warnings[0].code}]" in repr(fit)


def test_recommendation_repr() -> None:
    import csv
    from pathlib import Path

    with open(Path(__file__).parents[1] / "examples" / "pilot.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    pilot = {c: np.array([float(r[c]) for r in rows])
             for c in ("environments", "trajectories", "loss")}
    rec = opt.recommend(pilot, "50*environments + environments*trajectories", 5000.0,
                        {"environments": 16.0, "trajectories": 4.0},
                        axes=["environments", "trajectories"], bootstrap=20, seed=0)
    text = repr(rec)
    _one_screen(text)
    assert text.startswith(f"Recommendation: {rec.choice}") and rec.reason in text
    assert f"{rec.confidence:.0%} intervals" in text
