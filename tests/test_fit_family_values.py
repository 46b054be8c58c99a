"""The fitter's law families (``optimize/_fit_family.py``): values computed by hand.

Predictions, Jacobians, Huber losses and gradients are checked against
scalar Python arithmetic written out from the formulas in the module docstring
(``L = E + sum A_i x_i^-alpha_i``, ``L = C prod x_i^-alpha_i``), grids against
``itertools.product`` of Hoffmann et al.'s values, and every accessor against
the numbers it must return (issue 16: tests that pin values).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rlscale.optimize._fit_family import FAMILIES, GRID, _product, family
from rlscale.theory import AdditiveLaw, MultiplicativeLaw, PassRateLaw

# two axes, four points, three parameter vectors with terms of very different sizes
X = np.array([[1.0, 2.0], [3.0, 0.5], [10.0, 7.0], [0.2, 40.0]])
LOGX = np.log(X)
THETA_ADD = np.array([[0.3, 1.2, -0.4, 0.7, 0.25],
                      [-1.0, 3.0, 2.5, 1.5, 0.0],
                      [2.0, -2.0, 0.5, 0.1, 2.0]])
THETA_MUL = np.array([[0.5, 0.3, 0.7], [2.0, 1.5, 0.0], [-1.0, 0.0, 0.25]])


def _additive_loss(th: np.ndarray, x: np.ndarray) -> float:
    # E + A_1 x_1^-alpha_1 + A_2 x_2^-alpha_2, theta = (log E, log A_1, log A_2, alpha_1, alpha_2)
    return math.exp(th[0]) + sum(math.exp(th[1 + i]) * x[i] ** -th[3 + i] for i in range(2))


def _huber(r: float, d: float) -> float:
    return r * r / 2 if abs(r) <= d else d * (abs(r) - d / 2)


def test_additive_prediction_and_jacobian_by_hand() -> None:
    pred, jac = family("additive").predict(THETA_ADD, LOGX, jac=True)
    assert pred.shape == (3, 4) and jac.shape == (3, 4, 5)
    for b, th in enumerate(THETA_ADD):
        for j, x in enumerate(X):
            L = _additive_loss(th, x)
            assert pred[b, j] == pytest.approx(math.log(L), rel=1e-14, abs=1e-14)
            # d log L / d log E = E/L; d/d log A_i = A_i x_i^-a_i / L; d/d a_i = -that * log x_i
            terms = [math.exp(th[1 + i]) * x[i] ** -th[3 + i] for i in range(2)]
            want = [math.exp(th[0]) / L, terms[0] / L, terms[1] / L,
                    -terms[0] / L * math.log(x[0]), -terms[1] / L * math.log(x[1])]
            np.testing.assert_allclose(jac[b, j], want, rtol=1e-13, atol=1e-15)
    again, none = family("additive").predict(THETA_ADD, LOGX)
    assert none is None
    np.testing.assert_array_equal(again, pred)


def test_additive_prediction_without_overflow() -> None:
    # log(e^800 + e^(790 - 0)) = 800 + log(1 + e^-10): a naive sum overflows
    th = np.array([[800.0, 790.0, 0.5], [800.0, 0.0, 0.5], [0.0, 800.0, 0.5]])
    pred, jac = family("additive").predict(th, np.array([[0.0]]), jac=True)
    assert pred[0, 0] == pytest.approx(800.0 + math.log1p(math.exp(-10.0)), rel=1e-15)
    # either term may dominate by more than the float range: e^800 + 1
    assert pred[1, 0] == 800.0 and pred[2, 0] == 800.0
    np.testing.assert_array_equal(jac[1, 0], [1.0, math.exp(-800.0), -0.0])
    loss, grad = family("additive").huber_gradient(th, np.array([[0.0]]), np.array([799.0]),
                                                   1e-3)
    r0 = 1.0 + math.log1p(math.exp(-10.0))
    np.testing.assert_allclose(loss, [1e-3 * (r0 - 5e-4)] + [1e-3 * (1 - 5e-4)] * 2, rtol=1e-12)
    np.testing.assert_allclose(grad[1], [1e-3, 0.0, 0.0], atol=1e-300)


@pytest.mark.parametrize("delta", [1e-3, 0.3, 50.0])
def test_additive_huber_loss_and_gradient_by_hand(delta: float) -> None:
    logy = np.log(np.array([2.0, 3.5, 1.1, 9.0]))
    loss, grad = family("additive").huber_gradient(THETA_ADD, LOGX, logy, delta)
    for b, th in enumerate(THETA_ADD):
        want_loss, want_grad = 0.0, np.zeros(5)
        for j, x in enumerate(X):
            L = _additive_loss(th, x)
            r = math.log(L) - logy[j]
            want_loss += _huber(r, delta)
            c = max(-delta, min(delta, r))  # Huber derivative
            terms = [math.exp(th[1 + i]) * x[i] ** -th[3 + i] for i in range(2)]
            d = [math.exp(th[0]) / L, terms[0] / L, terms[1] / L,
                 -terms[0] / L * math.log(x[0]), -terms[1] / L * math.log(x[1])]
            want_grad += c * np.array(d)
        assert loss[b] == pytest.approx(want_loss, rel=1e-12)
        np.testing.assert_allclose(grad[b], want_grad, rtol=1e-11, atol=1e-15)


def test_multiplicative_prediction_jacobian_and_gradient_by_hand() -> None:
    fam = family("multiplicative")
    pred, jac = fam.predict(THETA_MUL, LOGX, jac=True)
    logy = np.log(np.array([2.0, 3.5, 1.1, 9.0]))
    delta = 0.4
    loss, grad = fam.huber_gradient(THETA_MUL, LOGX, logy, delta)
    for b, th in enumerate(THETA_MUL):
        want_loss, want_grad = 0.0, np.zeros(3)
        for j, x in enumerate(X):
            # log(C x_1^-a_1 x_2^-a_2)
            lp = math.log(math.exp(th[0]) * x[0] ** -th[1] * x[1] ** -th[2])
            assert pred[b, j] == pytest.approx(lp, rel=1e-13, abs=1e-14)
            np.testing.assert_array_equal(jac[b, j], [1.0, -math.log(x[0]), -math.log(x[1])])
            r = lp - logy[j]
            want_loss += _huber(r, delta)
            want_grad += max(-delta, min(delta, r)) * np.array(
                [1.0, -math.log(x[0]), -math.log(x[1])])
        assert loss[b] == pytest.approx(want_loss, rel=1e-12)
        np.testing.assert_allclose(grad[b], want_grad, rtol=1e-12, atol=1e-15)
    assert fam.predict(THETA_MUL, LOGX)[1] is None


def test_grids_are_the_products_of_hoffmanns_values() -> None:
    e, a, al = GRID["log_floor"], GRID["log_coefficient"], GRID["exponent"]
    assert e == (-1.0, -0.5, 0.0, 0.5, 1.0) and a == (0.0, 5.0, 10.0, 15.0, 20.0, 25.0)
    assert al == (0.0, 0.5, 1.0, 1.5, 2.0)
    np.testing.assert_array_equal(family("additive").grid(2),
                                  list(itertools.product(e, a, a, al, al)))
    np.testing.assert_array_equal(family("multiplicative").grid(2),
                                  list(itertools.product(a, al, al)))
    np.testing.assert_array_equal(family("pass_rate").grid(1),
                                  list(itertools.product((0.0, 0.5, 1.0), a, al)))
    np.testing.assert_array_equal(_product([[1, 2], [3, 4, 5]]),
                                  [[1, 3], [1, 4], [1, 5], [2, 3], [2, 4], [2, 5]])


def test_bounds_names_and_slices() -> None:
    add, mul, pr = family("additive"), family("multiplicative"), family("pass_rate")
    assert add.bounds(2) == [(None, None), (None, None), (None, None), (0.0, None), (0.0, None)]
    assert pr.bounds(1) == [(0.0, None), (None, None), (0.0, None)]
    assert mul.bounds(2) == [(None, None), (0.0, None), (0.0, None)]
    assert add.names(["N", "D"]) == ["floor", "coefficient[N]", "coefficient[D]",
                                     "exponent[N]", "exponent[D]"]
    assert pr.names(["K"]) == ["p_max", "coefficient[K]", "exponent[K]"]
    assert mul.names(["N", "D"]) == ["coefficient", "exponent[N]", "exponent[D]"]
    assert (add.n_params(3), pr.n_params(2), mul.n_params(3)) == (7, 5, 4)
    assert add.exponent_slice(3) == slice(4, 7) and mul.exponent_slice(3) == slice(1, 4)
    assert (add.name, pr.name, mul.name) == ("additive", "pass_rate", "multiplicative")
    assert (add.law_name, pr.law_name, mul.law_name) == ("additive", "additive",
                                                         "multiplicative")
    assert set(FAMILIES) == {"additive", "multiplicative", "pass_rate"}


def test_natural_parameters_by_hand() -> None:
    th = np.array([0.4, 1.0, -2.0, 0.3, 0.6])
    assert family("additive").natural(th, ["N", "D"]) == pytest.approx({
        "floor": math.exp(0.4), "coefficient[N]": math.e, "coefficient[D]": math.exp(-2.0),
        "exponent[N]": 0.3, "exponent[D]": 0.6}, rel=1e-15)
    # pass rate: 1/p = F + A x^-a with F = 1/p_max and A = B/p_max
    pr = family("pass_rate").natural(np.array([0.4, 1.0, 0.3]), ["K"])
    assert pr == pytest.approx({"p_max": math.exp(-0.4), "coefficient[K]": math.exp(0.6),
                                "exponent[K]": 0.3}, rel=1e-14)
    assert family("multiplicative").natural(np.array([1.5, 0.2, 0.9]), ["N", "D"]) == \
        pytest.approx({"coefficient": math.exp(1.5), "exponent[N]": 0.2,
                       "exponent[D]": 0.9}, rel=1e-15)


def test_to_law_values_and_zero_exponents_floored() -> None:
    law = family("additive").to_law(np.array([0.4, 1.0, -2.0, 0.3, 0.0]), ["N", "D"])
    assert isinstance(law, AdditiveLaw)
    assert law.floor == pytest.approx(math.exp(0.4), rel=1e-15)
    assert law.coefficients == pytest.approx({"N": math.e, "D": math.exp(-2.0)}, rel=1e-15)
    assert law.exponents == {"N": 0.3, "D": 1e-12}
    mul = family("multiplicative").to_law(np.array([1.5, 0.0, 0.9]), ["N", "D"])
    assert isinstance(mul, MultiplicativeLaw)
    assert mul.coefficient == pytest.approx(math.exp(1.5), rel=1e-15)
    assert mul.exponents == {"N": 1e-12, "D": 0.9}
    # pass rate: 1/p = 2 + 3 x^-0.5, so p(4) = 1/(2 + 1.5)
    pr = family("pass_rate").to_law(np.array([math.log(2.0), math.log(3.0), 0.5]), ["K"])
    assert isinstance(pr, PassRateLaw)
    assert pr.p_max == pytest.approx(0.5, rel=1e-15)
    assert float(pr.pass_rate(K=4.0)) == pytest.approx(1 / 3.5, rel=1e-14)


def test_law_from_natural_round_trip_values() -> None:
    p = {"floor": 1.5, "coefficient[N]": 4.0, "exponent[N]": 0.5}
    law = family("additive").law_from_natural(p, ["N"])
    assert float(law.loss(N=16.0)) == pytest.approx(1.5 + 4.0 / 4.0, rel=1e-15)
    q = {"p_max": 0.8, "coefficient[K]": 2.0, "exponent[K]": 1.0}
    pr = family("pass_rate").law_from_natural(q, ["K"])
    assert float(pr.pass_rate(K=4.0)) == pytest.approx(0.8 / (1 + 0.5), rel=1e-15)
    m = {"coefficient": 3.0, "exponent[N]": 0.5}
    assert float(family("multiplicative").law_from_natural(m, ["N"]).loss(N=9.0)) == \
        pytest.approx(1.0, rel=1e-15)


@pytest.mark.parametrize("name", ["Additive", "logistic", ["additive"], None])
def test_family_refuses_unknown_names(name: object) -> None:
    with pytest.raises(ValueError, match=r"law must be one of \('additive', 'multiplicative', "
                                         r"'pass_rate'\); got law="):
        family(name)  # type: ignore[arg-type]
