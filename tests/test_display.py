"""Notebook display (``_repr_latex_``, ``_repr_html_``) and ``to_frame()`` of results.

Values are checked against closed forms computed here (the symmetric law of
tests/test_efficiency.py), and the LaTeX against sympy's rendering of an
expression built here by hand, not against the objects' own output.
"""

from __future__ import annotations

import html
import math
import sys

import numpy as np
import pytest
import sympy as sp

from rlscale.optimize import allocate, efficiency, efficiency_curve, fit_law
from rlscale.theory import AdditiveLaw, MultiplicativeLaw, PassRateLaw
from rlscale.theory._display import format_value, html_table

LAW = AdditiveLaw(0.5, {"environments": 4.0, "trajectories": 4.0},
                  {"environments": 0.5, "trajectories": 0.5})
COST = "environments + trajectories"


def test_law_latex_is_sympys_latex_of_its_expression() -> None:
    N, D = sp.symbols("N D", positive=True)
    law = AdditiveLaw(1.5, {"N": 400.0, "D": 2000.0}, {"N": 0.25, "D": 0.5})
    by_hand = sp.Float(1.5) + sp.Float(400.0) * N ** sp.Float(-0.25) \
        + sp.Float(2000.0) * D ** sp.Float(-0.5)
    assert law._repr_latex_() == f"${sp.latex(by_hand)}$"
    assert law._repr_latex_() == f"${sp.latex(law.expression())}$"
    assert law._repr_latex_().startswith("$") and law._repr_latex_().endswith("$")


@pytest.mark.parametrize("law", [
    MultiplicativeLaw(3.0, {"x": 0.5}),
    PassRateLaw(0.9, {"x": 2.0}, {"x": 0.5}),
])
def test_every_law_family_renders_its_expression(law) -> None:
    assert law._repr_latex_() == f"${sp.latex(law.expression())}$"


def test_allocation_html_and_frame_hold_the_closed_form_optimum() -> None:
    # Symmetric law and cost: at budget 800 the optimum is 400 each, loss 0.5 + 2·4/20 = 0.9.
    a = allocate(LAW, COST, 800.0)
    page = a._repr_html_()
    assert "<caption>Allocation</caption>" in page
    assert page.count("<td>400</td>") == 4  # value and rounding of each variable
    assert "loss 0.9," in page and "budget 800" in page
    frame = a.to_frame()
    assert list(frame.columns) == ["value", "rounded"]
    assert sorted(frame.index) == ["environments", "trajectories"]
    np.testing.assert_allclose(frame["value"].to_numpy(), [400.0, 400.0], rtol=1e-7)
    np.testing.assert_array_equal(frame["rounded"].to_numpy(), [400.0, 400.0])


def test_efficiency_html_and_frame_hold_the_hand_computed_eta() -> None:
    eff = efficiency(LAW, COST, 0.9, "trajectories", {"environments": 200})
    K = (4 / (0.4 - 4 / math.sqrt(200))) ** 2
    eta = (200 + K) / 800
    page = eff._repr_html_()
    assert f"<td>{eta:.6g}</td>" in page and "<td>800</td>" in page
    frame = eff.to_frame()
    assert list(frame.columns) == ["eta", "target", "baseline_budget", "optimal_budget",
                                   "scaled", "reason"]
    assert frame.loc[0, "eta"] == pytest.approx(eta, rel=1e-8)
    assert frame.loc[0, "baseline_budget"] == pytest.approx(200 + K, rel=1e-9)
    assert frame.loc[0, "scaled"] == "trajectories"


def test_unreachable_efficiency_shows_its_reason_escaped() -> None:
    eff = efficiency(LAW, COST, 0.6, "trajectories", {"environments": 400})
    page = eff._repr_html_()
    assert "<td>inf</td>" in page
    assert html.escape(eff.reason) in page and eff.reason


def test_efficiency_curve_frame_is_indexed_by_budget() -> None:
    curve = efficiency_curve(LAW, COST, [800.0, 1600.0], scaled="trajectories",
                             fixed={"environments": 200})
    frame = curve.to_frame()
    assert frame.index.name == "budget"
    assert list(frame.index) == [800.0, 1600.0]
    # Optimum at budget B splits evenly: loss 0.5 + 2·4/sqrt(B/2).
    np.testing.assert_allclose(frame["optimal_loss"].to_numpy(),
                               [0.5 + 8 / math.sqrt(400), 0.5 + 8 / math.sqrt(800)], rtol=1e-7)
    page = curve._repr_html_()
    assert page.count("<tr><td>") == 2 and "<td>800</td>" in page and "<td>1600</td>" in page


def test_fit_result_html_and_frame_recover_a_noiseless_law() -> None:
    x = np.geomspace(10, 1e5, 12)
    data = {"x": x, "loss": 2.0 + 30.0 * x ** -0.4}
    fit = fit_law(data, "additive", ["x"], starts=20, n_jobs=1, holdout=0.0)
    frame = fit.to_frame()
    assert list(frame.columns) == ["value", "low", "high"]
    assert frame.loc["floor", "value"] == pytest.approx(2.0, rel=1e-3)
    assert frame.loc["exponent[x]", "value"] == pytest.approx(0.4, rel=1e-3)
    assert frame["low"].isna().all()  # no bootstrap, no interval
    page = fit._repr_html_()
    assert "<td>exponent[x]</td>" in page and "no bootstrap" in page
    assert f"<td>{format_value(fit.params['exponent[x]'])}</td>" in page


def test_to_frame_without_pandas_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas -> ImportError
    with pytest.raises(ImportError, match=r"rlscale\[pandas\]"):
        allocate(LAW, COST, 800.0).to_frame()


def test_html_cells_are_escaped() -> None:
    page = html_table("<t>", ["a&b"], [["<script>"]])
    assert "<script>" not in page and "&lt;script&gt;" in page and "a&amp;b" in page


def test_expression_fit_and_allocation_render_and_convert() -> None:
    from rlscale.optimize import allocate_expression, fit_expression

    N = np.geomspace(10, 1e5, 12)
    fit = fit_expression("E + A/N**alpha", {"N": N, "loss": 2.0 + 30.0 * N ** -0.4},
                         axes=["N"], params={"E": (0.1, 10), "A": (1, 1e3), "alpha": (0.05, 2)})
    frame = fit.to_frame()
    assert frame.loc["alpha", "value"] == pytest.approx(0.4, rel=1e-4)
    assert frame.loc["E", "value"] == pytest.approx(2.0, rel=1e-4)
    assert "<td>alpha</td>" in fit._repr_html_()
    # Symmetric law and cost: x = y = 100 at budget 200.
    law = fit_expression("E + A/x**0.5 + A/y**0.5", {"x": N, "y": N, "loss": 1 + 2 / N ** 0.5},
                         axes=["x", "y"], params={"E": (0.1, 10), "A": (0.1, 10)}).bound
    plan = allocate_expression(law, "x + y", 200.0)
    np.testing.assert_allclose(plan.to_frame()["value"].to_numpy(), [100.0, 100.0], rtol=1e-6)
    assert "<caption>ExpressionAllocation</caption>" in plan._repr_html_()
