"""Tests that pin values where earlier tests only checked directions (issue 16).

Each test is aimed at a mutant that survived the suite: an exponent's sign
in ``Posynomial.substitute``, the ``r2`` formula, the sign of the
extrapolation residual, and validation branches no test reached.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlscale.optimize import fit_law
from rlscale.theory import AdditiveLaw, PosynomialError, parse_posynomial


def test_substitute_mixes_substituted_and_free_axes_with_the_right_exponents() -> None:
    p = parse_posynomial("3*tasks**-0.5*k**-1 + 2*E**-0.25")
    sub = p.substitute({"tasks": parse_posynomial("4*E*t")})
    # 3·(4Et)^-0.5·k^-1 = 1.5·E^-0.5·t^-0.5·k^-1; the E^-0.25 term is untouched.
    terms = {m.exponents: m.coefficient for m in sub.terms}
    assert terms == {(("E", -0.5), ("k", -1.0), ("t", -0.5)): pytest.approx(1.5),
                     (("E", -0.25),): pytest.approx(2.0)}
    values = {"E": 3.0, "t": 5.0, "k": 7.0}
    assert float(sub.evaluate(values)) == pytest.approx(
        3 * (4 * 3 * 5) ** -0.5 / 7 + 2 * 3 ** -0.25, rel=1e-14)


def test_r2_is_one_minus_rss_over_tss_of_the_log_residuals() -> None:
    rng = np.random.default_rng(4)
    n = np.geomspace(1.0, 1e4, 15)
    y = (0.3 + 2.0 * n ** -0.4) * np.exp(0.05 * rng.standard_normal(15))
    fit = fit_law({"N": n, "loss": y}, axes=["N"], starts=20, holdout=0)
    pred = fit.law.loss(N=n)
    r = np.log(y) - np.log(pred)
    tss = ((np.log(y) - np.log(y).mean()) ** 2).sum()
    assert fit.r2 == pytest.approx(1 - (r @ r) / tss, rel=1e-9)
    assert 0.5 < fit.r2 < 1.0


def test_extrapolation_error_is_the_prediction_relative_to_the_observation() -> None:
    # Exact data from a law, except the largest point, observed at twice its value:
    # the law fitted on the rest predicts L, so |L/(2L) − 1| = 0.5 (not |2L/L − 1| = 1).
    law = AdditiveLaw(0.5, {"N": 2.0}, {"N": 0.5})
    n = np.geomspace(1.0, 1e6, 20)
    y = law.loss(N=n)
    y[-1] *= 2.0
    fit = fit_law({"N": n, "loss": y}, axes=["N"], starts=50, holdout=0.05)
    ext = fit.extrapolation
    assert ext["n_holdout"] == 1
    assert ext["mean_abs_rel_error"] == pytest.approx(0.5, abs=1e-4)
    assert ext["rmse_log"] == pytest.approx(math.log(2.0), abs=1e-4)


@pytest.mark.parametrize("kwargs, match", [
    ({"reduction": "median"}, r"reduction must be 'sum' or 'mean'; got reduction='median'"),
    ({"replicates": "max"}, r"replicates must be 'keep' or 'mean'; got replicates='max'"),
])
def test_fit_validation_branches(kwargs, match) -> None:
    data = {"N": np.geomspace(1, 100, 8), "loss": np.linspace(2.0, 1.0, 8)}
    with pytest.raises(ValueError, match=match):
        fit_law(data, axes=["N"], starts=5, **kwargs)


@pytest.mark.parametrize("text", ["N**", "N**(", "*N", "N N"])
def test_posynomial_parser_refuses_truncated_input(text: str) -> None:
    with pytest.raises(PosynomialError):
        parse_posynomial(text)
