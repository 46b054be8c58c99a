"""The expression tape (theory/_expr_tape.py): values and reverse-mode derivatives
against sympy's symbolic derivatives at 30 digits, finite differences at kinks'
neighbours, and time bounds on the probes of issue 30."""

from __future__ import annotations

import time

import numpy as np
import pytest
import sympy as sp

from rlscale.theory import ExpressionLaw, parse_expression
from rlscale.theory._expr_tape import Tape

LAWS = [
    ("E + A/N**alpha + B/D**beta", {"N": 3e8, "D": 2e10},
     {"E": 1.8, "A": 480.0, "B": 2100.0, "alpha": 0.35, "beta": 0.37}),
    ("E + A/(U_N + U_N*R_N*(1 - exp(-R/R_N)))**alpha + B/(U + U*R_D*(1 - exp(-S/R_D)))**beta",
     {"U_N": 1e8, "R": 2.0, "U": 1e9, "S": 4.0},
     {"E": 1.9, "A": 520.0, "B": 1500.0, "alpha": 0.35, "beta": 0.35, "R_N": 5.3, "R_D": 15.4}),
    ("(A/(N*(k*log(P) + 1)))**alpha + E", {"N": 1e9, "P": 4.0},
     {"A": 1.4e8, "k": 0.39, "alpha": 0.18, "E": 1.2}),
    ("c + k*exp(t1*r1 + t2*r2)", {"r1": 0.3, "r2": 0.0},
     {"c": 1.5, "k": 0.8, "t1": -1.2, "t2": 0.7}),
    ("sigmoid(a*log(C) - b)*(A - R0) + R0", {"C": 5e3},
     {"a": 1.7, "b": 14.0, "A": 0.65, "R0": 0.3}),
    ("abs(N - a)*b + sqrt(N)*log(1 + c*N)", {"N": 7.0}, {"a": 2.5, "b": -0.3, "c": 0.2}),
]


@pytest.mark.parametrize("text, axes, params", LAWS)
def test_values_and_gradients_match_sympy_at_high_precision(text, axes, params) -> None:
    law = ExpressionLaw(text, axes=list(axes))
    subs = {law.symbol(k): sp.Float(v, 30) for k, v in {**axes, **params}.items()}
    f = law.evaluate(axes, params)
    assert float(f) == pytest.approx(float(law.expr.evalf(30, subs=subs)), rel=1e-13)
    grad = law.gradient(axes, params)
    for j, p in enumerate(law.params):
        exact = float(sp.diff(law.expr, law.symbol(p)).evalf(30, subs=subs))
        assert grad[j] == pytest.approx(exact, rel=1e-10, abs=1e-14 * abs(float(f))), p


def test_min_and_max_pass_their_adjoint_to_the_argument_they_select() -> None:
    law = ExpressionLaw("min(max(N, a, b), c) * d", axes=["N"])
    N = np.array([0.5, 1.5, 2.5, 3.5])
    p = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 2.0}
    # max(N, 1, 2) = 2, 2, 2.5, 3.5 -> min(., 3) = 2, 2, 2.5, 3: times 2.
    np.testing.assert_array_equal(law.evaluate({"N": N}, p), [4.0, 4.0, 5.0, 6.0])
    g = law.gradient({"N": N}, p)  # columns a, b, c, d
    h = 1e-6
    for j, name in enumerate(law.params):  # away from the kinks: central differences
        up, down = dict(p), dict(p)
        up[name] += h
        down[name] -= h
        fd = (law.evaluate({"N": N}, up) - law.evaluate({"N": N}, down)) / (2 * h)
        np.testing.assert_allclose(g[:, j], fd, atol=1e-8)


def test_broadcasting_gives_pointwise_derivatives_for_many_parameter_rows() -> None:
    law = ExpressionLaw("E + A/N**alpha", axes=["N"])
    N = np.geomspace(1e2, 1e6, 7)[None, :]
    params = {"A": np.array([[10.0], [20.0]]), "E": np.array([[1.0], [2.0]]),
              "alpha": np.array([[0.3], [0.5]])}
    g = law.gradient({"N": N}, params)
    assert g.shape == (2, 7, 3)
    np.testing.assert_allclose(g[1, :, 0], N[0] ** -0.5)              # ∂/∂A
    np.testing.assert_allclose(g[1, :, 1], 1.0)                        # ∂/∂E
    np.testing.assert_allclose(g[0, :, 2], -10.0 * np.log(N[0]) * N[0] ** -0.3)  # ∂/∂α


def test_outside_the_domain_the_tape_gives_nan_and_the_law_an_error() -> None:
    law = ExpressionLaw("log(N - a) + sqrt(b)", axes=["N"])
    v = law._tape.value([np.array([1.0, 3.0]), np.array(2.0), np.array(-1.0)])
    assert np.isnan(v).all()  # the fitter's view: outside the domain, no exception
    with pytest.raises(ValueError, match=r"is not finite .* at N=1, a=2, b=-1: outside its "):
        law.evaluate({"N": np.array([1.0, 3.0])}, {"a": 2.0, "b": -1.0})
    with pytest.raises(ValueError, match=r"not finite"):
        law.bind(a=2.0, b=4.0).loss(N=1.5)
    assert np.isfinite(law.evaluate({"N": 3.0}, {"a": 2.0, "b": 4.0}))


def test_axes_may_be_zero_where_the_law_is_defined_there() -> None:
    law = ExpressionLaw("c + k*exp(t*p)", axes=["p"])
    assert float(law.evaluate({"p": 0.0}, {"c": 1.0, "k": 2.0, "t": 5.0})) == 3.0
    with pytest.raises(ValueError, match="p must be >= 0"):
        law.evaluate({"p": -0.1}, {"c": 1.0, "k": 2.0, "t": 5.0})


@pytest.mark.parametrize("text", ["min(max(N,a,b),c)", "min(max(N,a,b),max(N,c,d))",
                                  "max(min(N, a), min(max(N, b), c), min(N, d, e))"])
def test_nested_min_and_max_evaluate_with_derivatives_within_two_seconds(text) -> None:
    start = time.perf_counter()
    law = ExpressionLaw(text, axes=["N"])
    params = {p: float(i + 1) for i, p in enumerate(law.params)}
    N = np.geomspace(0.1, 100, 1000)
    law.evaluate({"N": N}, params)
    law.gradient({"N": N}, params)
    law.bind(params).elasticities({"N": 2.5})
    assert time.perf_counter() - start < 2.0


def test_a_thousand_node_law_with_thirty_parameters_is_fast() -> None:
    terms = [f"a{i}*exp(-b{i}*x) / (1 + c{i}*log(1 + x)**2)" for i in range(10)]
    text = " + ".join(terms)
    start = time.perf_counter()
    law = ExpressionLaw(text, axes=["x"])
    assert len(law.params) == 30
    x = np.geomspace(0.1, 10, 500)[None, :]
    params = {p: np.full((64, 1), 0.5) for p in law.params}
    g = law.gradient({"x": x}, params)
    assert g.shape == (64, 500, 30) and np.isfinite(g).all()
    assert time.perf_counter() - start < 2.0


def test_structurally_equal_subexpressions_are_computed_once() -> None:
    expr = parse_expression("sqrt(1 + a*x) + (1 + a*x)**3")
    tape = Tape(expr, sorted(expr.free_symbols, key=str))
    codes = [op for op, _ in tape.ops]
    assert codes.count(2) == 2  # the outer sum and 1 + a*x, used twice


def test_symbolic_work_reads_undeclared_parameters_as_positive_numbers_do_not() -> None:
    law = ExpressionLaw("E + sqrt(A**2)/N**alpha", axes=["N"])
    assert law.asymptote("N") == law.symbol("E")        # alpha read as positive
    assert str(law.expr) == "A**1.0/N**alpha + E"      # sqrt(A**2) = A when A > 0 ...
    # ... but a value at A < 0 is the expression's own, |A|:
    assert float(law.evaluate({"N": 4.0}, {"A": -3.0, "E": 1.0, "alpha": 0.5})) == 2.5
    signed = ExpressionLaw("E + c*log(N)", axes=["N"], params={"c": (-1.0, 1.0)})
    assert signed.symbol("c").is_positive is None and signed.symbol("E").is_positive
