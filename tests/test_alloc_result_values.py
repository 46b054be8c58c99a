"""optimize/_alloc_result.py: the summary of a solver's point (loss, cost, effective axes, cost
shares) written out by hand on both of its paths, and the result records' dict and HTML forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlscale.optimize import Allocation, AllocationFrontier, AllocationProblem
from rlscale.theory import AdditiveLaw, SynthesisMethod

NESTED = AdditiveLaw(0.15, {"environments": 2.0, "tasks": 1.5},
                     {"environments": 0.45, "tasks": 0.3})


def _nested():
    return AllocationProblem(NESTED, "100*E + 10*E*t", {"t": (1, None)},
                             substitute={"environments": "E", "tasks": "3*E*t"})


def test_summary_of_a_geometric_program_in_log_space() -> None:
    prob = _nested()
    loss, cost, eff, shares = prob.state.summary({"E": 4.0, "t": 5.0})
    # environments = E = 4, tasks = 3 E t = 60.
    assert loss == pytest.approx(0.15 + 2.0 * 4.0 ** -0.45 + 1.5 * 60.0 ** -0.3, rel=1e-14)
    assert cost == pytest.approx(600.0, rel=1e-14)
    assert eff == pytest.approx({"environments": 4.0, "tasks": 60.0}, rel=1e-14)
    assert list(eff) == ["environments", "tasks"]
    assert shares == pytest.approx({"E": 400 / 600, "E*t": 200 / 600}, rel=1e-14)
    # The effective-axis matrix is built once and kept.
    A, b = prob.state.effective_terms
    assert A.tolist() == [[1.0, 0.0], [1.0, 1.0]]
    assert b.tolist() == pytest.approx([0.0, math.log(3.0)], abs=1e-15)
    assert prob.state.summary({"E": 1.0, "t": 1.0})[2] == pytest.approx(
        {"environments": 1.0, "tasks": 3.0}, rel=1e-14)


def test_summary_with_synthetic_data_evaluates_the_law() -> None:
    law = AdditiveLaw(0.1, {"E": 2.0, "K": 1.0}, {"E": 0.5, "K": 0.3})
    syn = [SynthesisMethod("E", unit_cost=1.5, rho=0.8, name="gen")]
    prob = AllocationProblem(law, "10*E + K + 7", synthesis=syn)
    loss, cost, eff, shares = prob.state.summary({"E": 30.0, "K": 200.0, "gen": 45.0})
    assert loss == pytest.approx(0.1 + 2.0 * 66.0 ** -0.5 + 200.0 ** -0.3, rel=1e-14)
    total = 300.0 + 200.0 + 7.0 + 67.5
    assert cost == pytest.approx(total, rel=1e-15)
    assert eff == pytest.approx({"E": 66.0, "K": 200.0}, rel=1e-15)
    assert shares == pytest.approx({"E": 300 / total, "K": 200 / total, "1": 7 / total,
                                    "gen": 67.5 / total}, rel=1e-14)


def test_shares_of_a_constant_cost() -> None:
    law = AdditiveLaw(0.1, {"E": 2.0, "K": 1.0}, {"E": 0.5, "K": 0.3})
    syn = [SynthesisMethod("E", unit_cost=2.0, rho=0.8, name="gen")]
    prob = AllocationProblem(law, "6", {"E": (None, 10), "K": (None, 20)}, synthesis=syn)
    loss, cost, _, shares = prob.state.summary({"E": 10.0, "K": 20.0, "gen": 2.0})
    assert cost == 10.0 and shares == pytest.approx({"1": 0.6, "gen": 0.4}, rel=1e-15)
    assert loss == pytest.approx(0.1 + 2.0 * 11.6 ** -0.5 + 20.0 ** -0.3, rel=1e-14)


def _alloc(**kw):
    base = {"values": {"E": 2.5}, "effective": {"E": 2.5}, "loss": 0.25, "cost": 10.0,
            "budget": 10.0, "target": None, "shares": {"E": 1.0}, "status": "optimal",
            "duals": {"budget": 0.5}, "kkt_residual": 3e-14}
    return Allocation(**{**base, **kw})


def test_allocation_as_dict_merges_its_extra_fields() -> None:
    a = _alloc(extra={"note": "x"}, rounded={"E": 3})
    d = a.as_dict()
    assert "extra" not in d and d["note"] == "x" and d["rounded"] == {"E": 3}
    assert (d["success"], d["message"], d["method"], d["rounding_note"]) == (True, "", "", "")
    assert (d["seconds"], d["solver"], d["rounded_loss"], d["rounded_cost"]) == (0.0, "", None,
                                                                                None)
    assert a.extra == {"note": "x"}                      # the record itself is untouched
    with pytest.raises(AttributeError):
        a.loss = 1.0  # type: ignore[misc]


def test_allocation_html_names_its_constraint() -> None:
    html = _alloc(rounded={"E": 3}, rounding_note="a note")._repr_html_()
    assert "<caption>Allocation</caption>" in html
    assert "<tr><td>E</td><td>2.5</td><td>3</td></tr>" in html
    assert ("<p>budget 10: loss 0.25, cost 10, status optimal, KKT residual 3e-14</p>"
            in html)
    assert "<p>cost shares: E 1</p>" in html and "a note" in html
    html = _alloc(budget=None, target=0.75)._repr_html_()
    assert "<p>target loss 0.75: loss 0.25" in html


def test_allocation_to_frame_or_import_error() -> None:
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError):
            _alloc().to_frame()
    else:
        frame = _alloc(rounded={"E": 3}).to_frame()
        assert frame.loc["E", "value"] == 2.5 and frame.loc["E", "rounded"] == 3.0


def test_summary_of_axes_decided_directly() -> None:
    # No substitution: each law axis is its decision variable (a unit row of the matrix).
    law = AdditiveLaw(0.2, {"E": 1.0, "K": 2.0}, {"E": 0.5, "K": 0.25})
    prob = AllocationProblem(law, "E + 3*K")
    loss, cost, eff, shares = prob.state.summary({"E": 4.0, "K": 16.0})
    assert eff == {"E": pytest.approx(4.0, rel=1e-15), "K": pytest.approx(16.0, rel=1e-15)}
    assert loss == pytest.approx(0.2 + 0.5 + 1.0, rel=1e-15) and cost == pytest.approx(52.0)
    assert shares == pytest.approx({"E": 4 / 52, "K": 48 / 52}, rel=1e-14)
    assert prob.state.effective_terms[0].tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_frontier_as_dict_is_plain_lists() -> None:
    f = AllocationFrontier(np.array([1.0, 2.0]), {"E": np.array([0.5, 1.0])},
                           np.array([0.3, 0.2]), np.array([1.0, 2.0]), np.array([0.0, 1e-15]),
                           ("closed_form", "gp"))
    assert f.as_dict() == {"budgets": [1.0, 2.0], "values": {"E": [0.5, 1.0]},
                           "loss": [0.3, 0.2], "cost": [1.0, 2.0], "kkt_residual": [0.0, 1e-15],
                           "method": ["closed_form", "gp"], "success": True,
                           "status": "optimal",
                           "message": "2 budgets (1 closed_form, 1 gp); worst KKT residual 1e-15"}
    with pytest.raises(AttributeError):
        f.method = ()  # type: ignore[misc]
