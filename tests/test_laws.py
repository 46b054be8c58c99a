"""Law families: declared properties checked generically, sympy vs numpy, elasticities."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from rlscale.theory import (
    AdditiveLaw,
    LawProperties,
    MixtureLaw,
    MultiplicativeLaw,
    PassRateLaw,
    VarianceComponentsLaw,
    law_from_dict,
)

LAWS = [
    AdditiveLaw(0.2, {"environments": 3.0, "tasks": 2.0, "trajectories": 4.0},
                {"environments": 0.45, "tasks": 0.3, "trajectories": 0.2}),
    MultiplicativeLaw(2.0, {"E": 0.3, "K": 0.1}, floor=0.05),
    PassRateLaw(0.8, {"E": 50.0, "K": 5.0}, {"E": 1.0, "K": 0.5}),
    VarianceComponentsLaw(0.1, 4.0, 1.0, 0.25),
    MixtureLaw([AdditiveLaw(0.1, {"E": 3.0, "K": 2.0}, {"E": 0.45, "K": 0.3}),
                AdditiveLaw(0.3, {"E": 1.0, "K": 5.0}, {"E": 0.6, "K": 0.3})], [1.0, 3.0]),
]
IDS = [type(law).__name__ for law in LAWS]


def _points(law, rng, n=200):
    return {a: np.exp(rng.uniform(0.0, 12.0, n)) for a in law.axes}


@pytest.mark.parametrize("law", LAWS, ids=IDS)
def test_every_law_declares_its_properties(law) -> None:
    assert isinstance(type(law).properties, LawProperties)
    assert law.properties.domain
    assert law.as_dict()["properties"] == law.properties.as_dict()


@pytest.mark.parametrize("law", LAWS, ids=IDS)
def test_declared_monotonicity_and_convexity_hold(law, rng) -> None:
    x = _points(law, rng)
    base = law(x)
    for a in law.axes:
        bigger = dict(x, **{a: x[a] * 1.5})
        if law.properties.monotone_decreasing:
            assert np.all(law(bigger) < base)
    y = _points(law, rng)
    mid = {a: (x[a] + y[a]) / 2 for a in law.axes}
    if law.properties.convex:
        assert np.all(law(mid) <= (law(x) + law(y)) / 2 * (1 + 1e-12))
    if law.properties.log_log_convex:
        gmid = {a: np.sqrt(x[a] * y[a]) for a in law.axes}
        lhs = np.log(law.reducible(gmid))
        rhs = (np.log(law.reducible(x)) + np.log(law.reducible(y))) / 2
        assert np.all(lhs <= rhs + 1e-12)


@pytest.mark.parametrize("law", LAWS, ids=IDS)
def test_gp_compatible_laws_are_dgp_in_cvxpy(law) -> None:
    import cvxpy as cp

    assert law.properties.gp_compatible
    x = {a: cp.Variable(pos=True) for a in law.axes}
    expr = 0
    for m in law.reducible_posynomial().terms:
        term = m.coefficient
        for a, e in m.exponents:
            term = term * x[a] ** e
        expr = expr + term
    assert expr.is_dgp()
    assert all(e < 0 for m in law.reducible_posynomial().terms for _, e in m.exponents)


@pytest.mark.parametrize("law", LAWS, ids=IDS)
def test_sympy_expression_matches_numpy(law, rng) -> None:
    expr = law.expression()
    syms = law.symbols
    f = sp.lambdify([syms[a] for a in law.axes], expr, "mpmath")
    x = _points(law, rng, 20)
    got = law(x)
    for i in range(20):
        want = float(f(*(float(x[a][i]) for a in law.axes)))
        assert math.isclose(got[i], want, rel_tol=1e-12)
    sym = law.expression(symbolic=True)
    assert sym.free_symbols >= set(syms.values())


@pytest.mark.parametrize("law", LAWS, ids=IDS)
def test_elasticities_match_sympy_derivatives(law, rng) -> None:
    syms = law.symbols
    red = law.expression() - law.floor
    x = {a: float(v[0]) for a, v in _points(law, rng, 1).items()}
    subs = {syms[a]: x[a] for a in law.axes}
    el = law.elasticities(x)
    for a in law.axes:
        want = float((-sp.diff(sp.log(red), syms[a]) * syms[a]).evalf(30, subs=subs))
        assert math.isclose(el[a], want, rel_tol=1e-10, abs_tol=1e-14)


def test_additive_elasticity_formula_and_impact_ordering() -> None:
    law = LAWS[0]
    x = {"environments": 50.0, "tasks": 500.0, "trajectories": 5000.0}
    terms = law.term_values(x)
    total = sum(terms.values())
    el = law.elasticities(x)
    for a in law.axes:
        assert math.isclose(el[a], law.exponents[a] * terms[a] / total, rel_tol=1e-13)
    # By hand: 0.45*3*50**-0.45 = 0.232 > 0.2*4*5000**-0.2 = 0.146 > 0.3*2*500**-0.3 = 0.093
    # (as shares of the same total): trajectories outrank tasks despite the smaller exponent.
    assert law.impact_ordering(x) == ["environments", "trajectories", "tasks"]
    # A small exponent on a large term can beat a large exponent on a small term.
    law2 = AdditiveLaw(0.0, {"E": 0.01, "K": 10.0}, {"E": 1.0, "K": 0.2})
    assert law2.impact_ordering(E=10.0, K=10.0) == ["K", "E"]


def test_pass_rate_law_is_the_additive_law_of_attempts_per_success(rng) -> None:
    law = LAWS[2]
    x = _points(law, rng)
    p = law.pass_rate(x)
    assert np.all((p > 0) & (p <= law.p_max))
    np.testing.assert_allclose(law.loss(x), 1.0 / p, rtol=1e-13)
    np.testing.assert_allclose(law.to_additive()(x), 1.0 / p, rtol=1e-13)
    assert PassRateLaw.from_additive(law.to_additive()) == law
    # One axis: the ScaleRL sigmoid A / (1 + (C_mid / C)**B) with R0 = 0.
    one = PassRateLaw(0.9, {"C": 100.0 ** 1.5}, {"C": 1.5})
    C = np.logspace(0, 4, 9)
    np.testing.assert_allclose(one.pass_rate(C=C), 0.9 / (1 + (100.0 / C) ** 1.5), rtol=1e-13)


def test_log_loss_does_not_overflow() -> None:
    law = AdditiveLaw(0.0, {"N": 1.0}, {"N": 2.0})
    assert math.isclose(law.log_loss(N=1e-200), 400 * math.log(10), rel_tol=1e-12)
    assert law.log_loss(N=1e300) == pytest.approx(-600 * math.log(10))


@pytest.mark.parametrize("law", LAWS, ids=IDS)
def test_extreme_axis_values_give_the_limits_without_warnings(law) -> None:
    # pytest turns RuntimeWarnings from rlscale into errors; x**-alpha overflowed at 1e-300.
    # Reference: sympy's arbitrary-precision evaluation of the law's expression.
    expr = law.expression()
    for value in (1e-300, 1e-30, 1e300):
        point = dict.fromkeys(law.axes, value)
        exact = sp.N(expr.subs({law.symbols[a]: sp.Float(value, 50) for a in law.axes}), 40)
        want = math.inf if exact > sp.Float("1.7976931348623157e308") else float(exact)
        if want == math.inf:  # a loss beyond the float range is refused (issue 10 §4)
            with pytest.raises(ValueError, match=r"loss of \w+ overflows the float range"):
                law.loss(point)
            assert law.log_loss(point) == pytest.approx(float(sp.log(exact)), rel=1e-12)
        else:
            assert law.loss(point) == pytest.approx(want, rel=1e-12)
        if isinstance(law, PassRateLaw):
            assert law.pass_rate(point) == pytest.approx(1 / want if want else 0, rel=1e-12)


def test_loss_is_finite_where_only_intermediate_powers_overflow() -> None:
    # 3 * (1e-200)**-2 * (1e300)**-0.5 = 3e400 * 1e-150 = 3e250, but the factor
    # 1e400 alone overflows (the product of powers gave inf).
    law = MultiplicativeLaw(3.0, {"N": 2.0, "D": 0.5})
    assert law.loss(N=1e-200, D=1e300) == pytest.approx(3e250, rel=1e-12)
    assert law.loss(N=np.array([1e-200, 1.0]), D=np.array([1e300, 4.0])) == \
        pytest.approx([3e250, 1.5], rel=1e-12)


@pytest.mark.parametrize("law", LAWS, ids=IDS)
def test_as_dict_roundtrip(law) -> None:
    assert law_from_dict(law.as_dict()) == law


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: AdditiveLaw(0.2, {"E": -1.0}, {"E": 0.5}), r"coefficients\['E'\] must be > 0"),
        (lambda: AdditiveLaw(0.2, {"E": 1.0}, {"E": 0.0}), r"exponents\['E'\] must be > 0"),
        (lambda: AdditiveLaw(0.2, {"E": 1.0}, {"K": 0.5}), "missing \\['E'\\]"),
        (lambda: AdditiveLaw(-0.1, {"E": 1.0}, {"E": 0.5}), "floor must be >= 0"),
        (lambda: AdditiveLaw(0.1, {"E": math.nan}, {"E": 0.5}), "coefficients"),
        (lambda: AdditiveLaw(0.1, {}, {}), "at least one axis"),
        (lambda: PassRateLaw(1.5, {"E": 1.0}, {"E": 1.0}), "p_max must be"),
        (lambda: VarianceComponentsLaw(0.1, 0.0, 1.0, 1.0), "sigma2_env must be > 0"),
        (lambda: law_from_dict({"family": "quadratic"}), "law family must be one of"),
    ],
)
def test_bad_parameters_are_rejected_with_names(make, match) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        make()


def test_bad_axis_values_are_rejected() -> None:
    law = LAWS[0]
    good = {"environments": 1.0, "tasks": 1.0, "trajectories": 1.0}
    with pytest.raises(ValueError, match="environments must be > 0"):
        law(dict(good, environments=0.0))
    with pytest.raises(ValueError, match="tasks must be"):
        law(dict(good, tasks=math.inf))
    with pytest.raises(ValueError, match="missing \\['trajectories'\\]"):
        law(environments=1.0, tasks=1.0)
    with pytest.raises(ValueError, match="unknown \\['steps'\\]"):
        law(dict(good, steps=3.0))


def test_additive_fix_moves_held_terms_into_the_floor() -> None:
    law = AdditiveLaw(0.5, {"E": 3.0, "t": 2.0, "k": 1.0}, {"E": 0.5, "t": 1.0, "k": 2.0})
    fixed = law.fix(t=4.0, k=2.0)
    assert fixed.axes == ("E",)
    assert fixed.floor == pytest.approx(0.5 + 2.0 / 4.0 + 1.0 / 4.0, rel=1e-15)
    for e in (1.0, 9.0, 1e6):  # 3/sqrt(E) + 1.25 by hand
        assert fixed.loss(E=e) == pytest.approx(1.25 + 3.0 / math.sqrt(e), rel=1e-14)
    with pytest.raises(ValueError, match="not an axis"):
        law.fix(N=1.0)
    with pytest.raises(ValueError, match="must be > 0"):
        law.fix(t=0.0)
