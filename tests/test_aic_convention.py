"""One AIC/BIC convention for both fitters (issue 24).

``FitResult.aic`` (fit_law) and ``ExpressionFit.aic`` (fit_expression) used two
conventions of the Gaussian likelihood (-644.8 against -406.4 for the same law on the
tutorial's pilot: the constant n(log 2π + 1)).  Both are now ``n log(RSS/n) + 2k`` and
``n log(RSS/n) + k log n`` (Burnham & Anderson 2002, §2.2 and §6.4), checked here
against the residuals recomputed with numpy from each fit's own parameters -- not from
the fitter's residual arrays.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from rlscale.optimize import fit_expression, fit_law

PILOT = Path(__file__).resolve().parents[1] / "examples" / "pilot.csv"
LAW = "E + A/environments**alpha + B/trajectories**beta"


def _data() -> dict[str, np.ndarray]:
    with PILOT.open() as fh:
        rows = list(csv.DictReader(fh))
    return {c: np.array([float(r[c]) for r in rows])
            for c in ("environments", "trajectories", "loss")}


def _criteria(pred: np.ndarray, y: np.ndarray, k: int) -> tuple[float, float]:
    r = np.log(pred) - np.log(y)
    n = r.size
    rss = float(r @ r)
    # -2 log L at the MLE variance is n(log 2π + 1) + n log(RSS/n); the constant is dropped.
    ll_term = n * math.log(rss / n)
    return ll_term + 2 * k, ll_term + k * math.log(n)


@pytest.fixture(scope="module")
def fits():
    d = _data()
    return d, fit_law(d, axes=["environments", "trajectories"], seed=0), \
        fit_expression(LAW, d, axes=["environments", "trajectories"], seed=0)


def test_fit_law_aic_is_the_documented_formula(fits) -> None:
    d, fl, _ = fits
    p = fl.params
    pred = (p["floor"]
            + p["coefficient[environments]"] * d["environments"] ** -p["exponent[environments]"]
            + p["coefficient[trajectories]"] * d["trajectories"] ** -p["exponent[trajectories]"])
    aic, bic = _criteria(pred, d["loss"], 5)
    assert fl.aic == pytest.approx(aic, rel=1e-9)
    assert fl.bic == pytest.approx(bic, rel=1e-9)


def test_fit_expression_aic_is_the_same_formula(fits) -> None:
    d, _, fe = fits
    p = fe.params
    pred = (p["E"] + p["A"] * d["environments"] ** -p["alpha"]
            + p["B"] * d["trajectories"] ** -p["beta"])
    aic, bic = _criteria(pred, d["loss"], 5)
    assert fe.aic == pytest.approx(aic, rel=1e-9)
    assert fe.bic == pytest.approx(bic, rel=1e-9)


def test_the_two_fitters_agree_on_the_same_law_and_data(fits) -> None:
    # Same law, same data, both near the same optimum: the criteria now differ only by
    # the optimisers' tolerance (they differed by n(log 2π + 1) = 238 before).
    _, fl, fe = fits
    assert fe.n_points == fl.n_points == 84
    assert abs(fe.aic - fl.aic) < 0.5
    assert abs(fe.bic - fl.bic) < 0.5
