"""Posynomial values and every validation branch, checked against direct arithmetic.

Each test computes the expected number by hand (or by evaluating the
defining identity at a point), never from the function under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from rlscale.theory import Monomial, Posynomial, PosynomialError, parse_posynomial


def test_substitute_mixing_substituted_and_free_axes() -> None:
    # 3 E t² k^-½ with t -> 2 E t^½:  3·2² · E^(1+2) t^(2·½) k^-½ = 12 E³ t k^-½
    p = parse_posynomial("3*E*t**2*k**-0.5")
    out = p.substitute({"t": parse_posynomial("2*E*t**0.5")})
    assert out.terms == (Monomial(12.0, (("E", 3.0), ("k", -0.5), ("t", 1.0))),)
    # and the defining identity p_sub(E, t, k) = p(E, 2 E t^½, k) at a point
    E, t, k = 1.7, 3.1, 0.4
    direct = 3 * E * (2 * E * t**0.5) ** 2 * k**-0.5
    assert float(out.evaluate({"E": E, "t": t, "k": k})) == pytest.approx(direct, rel=1e-14)


def test_substitute_free_axis_with_negative_power_and_merging() -> None:
    # free axis k keeps its negative exponent; E*t and E² merge once t -> E
    p = parse_posynomial("E*t + 5*E**2 + k**-2")
    out = p.substitute({"t": parse_posynomial("E")})
    assert sorted(str(m) for m in out.terms) == ["6*E**2", "k**-2"]
    # a substitution whose exponent is divided, not multiplied, would differ here
    q = parse_posynomial("t**3").substitute({"t": parse_posynomial("E**2")})
    assert q.terms == (Monomial(1.0, (("E", 6.0),)),)


@pytest.mark.parametrize(("sub", "match"), [
    ("E + t", "must be a single monomial such as 'E\\*t'; got E \\+ t"),
    ("1e200*E", "makes the coefficient of t\\*\\*2 leave the float range"),
])
def test_substitute_refusals(sub: str, match: str) -> None:
    with pytest.raises(PosynomialError, match=match):
        parse_posynomial("t**2").substitute({"t": parse_posynomial(sub)})


def test_substitute_underflow_and_non_posynomial() -> None:
    with pytest.raises(PosynomialError, match="t\\*\\*-2 leave the float range"):
        parse_posynomial("t**-2").substitute({"t": parse_posynomial("1e200*E")})
    with pytest.raises(PosynomialError, match="got E"):
        parse_posynomial("t").substitute({"t": "E"})
    with pytest.raises(TypeError, match="mapping"):
        parse_posynomial("t").substitute([("t", parse_posynomial("E"))])


@pytest.mark.parametrize("text", ["N**", "N**-", "2**", "N**("])
def test_power_with_nothing_after_it(text: str) -> None:
    with pytest.raises(PosynomialError, match=f"position {len(text)}: expression ends early"):
        parse_posynomial(text)


def test_monomial_fields_are_validated() -> None:
    m = Monomial(2.0, (("t", 0.0), ("E", 1.5)))
    assert m.exponents == (("E", 1.5),) and m.axes == ("E",)  # zero exponents dropped
    assert m.power_of("E") == 1.5 and m.power_of("t") == 0.0
    assert str(m) == "2*E**1.5" and m.label() == "E**1.5"
    assert str(Monomial(1.0, (("E", 1.0),))) == "E"
    assert str(Monomial(0.25, ())) == "0.25" and Monomial(0.25, ()).label() == "1"
    with pytest.raises(TypeError, match="axis must be an axis name"):
        m.power_of(1)
    with pytest.raises(TypeError, match="exponents must be \\(axis name, exponent\\) pairs"):
        Monomial(1.0, (("E", 1.0, 2.0),))
    with pytest.raises(TypeError, match="pairs"):
        Monomial(1.0, (("not an axis", 1.0),))
    with pytest.raises(ValueError, match="exponents name an axis twice"):
        Monomial(1.0, (("E", 1.0), ("E", 2.0)))
    with pytest.raises(ValueError, match="coefficient"):
        Monomial(0.0, (("E", 1.0),))


def test_monomial_log_evaluate() -> None:
    m = Monomial(3.0, (("E", 2.0), ("k", -1.0)))
    got = m.log_evaluate({"E": math.log(5.0), "k": math.log(2.0)})
    assert float(got) == pytest.approx(math.log(3 * 25 / 2), rel=1e-15)
    # log x = -inf under a positive exponent is the limit x -> 0
    assert float(Monomial(1.0, (("E", 2.0),)).log_evaluate({"E": -np.inf})) == -np.inf
    assert float(Monomial(1.0, (("E", 0.5),)).log_evaluate({"E": -np.inf})) == -np.inf
    with pytest.raises(ValueError, match="log_values has no value for axis 'k'"):
        m.log_evaluate({"E": 0.0})
    with pytest.raises(ValueError, match="exponent -1"):
        m.log_evaluate({"E": 0.0, "k": -np.inf})
    with pytest.raises(ValueError, match="must be finite"):
        m.log_evaluate({"E": np.inf, "k": 0.0})
    with pytest.raises(ValueError, match="overflows the float range"):
        m.log_evaluate({"E": 1e308, "k": 0.0})


def test_posynomial_fields_and_shapes() -> None:
    with pytest.raises(TypeError, match="terms must be a non-empty tuple of Monomial"):
        Posynomial(())
    with pytest.raises(TypeError, match="terms must be"):
        Posynomial(("E",))
    with pytest.raises(TypeError, match="source must be a str"):
        Posynomial((Monomial(1.0, (("E", 1.0),)),), source=3)
    p = Posynomial([Monomial(1.0, (("E", 1.0),)), Monomial(2.0, (("t", 1.0),))])
    assert isinstance(p.terms, tuple) and p.is_linear() and not p.is_monomial
    assert not parse_posynomial("E*t").is_linear() and not parse_posynomial("E**2").is_linear()
    assert parse_posynomial("E*t").is_monomial
    with pytest.raises(ValueError, match="values has no value for axis 't'"):
        p.evaluate({"E": 1.0})
    with pytest.raises(ValueError, match="do not broadcast"):
        p.evaluate({"E": np.ones(2), "t": np.ones(3)})


def test_values_logs_and_gradient_by_hand() -> None:
    p = parse_posynomial("2*x**2 + 3*x**-1*y")
    x, y = np.array([0.5, 4.0]), np.array([2.0, 0.25])
    t1, t2 = 2 * x**2, 3 * y / x
    np.testing.assert_allclose(p.term_values({"x": x, "y": y}), [t1, t2], rtol=1e-15)
    np.testing.assert_allclose(p.evaluate({"x": x, "y": y}), t1 + t2, rtol=1e-15)
    np.testing.assert_allclose(p.log_terms({"x": x, "y": y}), np.log([t1, t2]), rtol=1e-14)
    g = p.log_gradient({"x": x, "y": y})
    np.testing.assert_allclose(g["x"], (2 * t1 - t2) / (t1 + t2), rtol=1e-14)
    np.testing.assert_allclose(g["y"], t2 / (t1 + t2), rtol=1e-14)
    with pytest.raises(ValueError, match="x"):
        p.log_terms({"x": 0.0, "y": 1.0})  # logs need x > 0


def test_zero_and_overflowing_powers_take_their_limits() -> None:
    p = parse_posynomial("x**2*y**2 + x**-1")
    # x**2 overflows and y**2 underflows, but the term is exactly 1: recomputed in log space
    vals = p.term_values({"x": 1e200, "y": 1e-200})
    assert vals[0] == pytest.approx(1.0, rel=1e-13) and vals[1] == pytest.approx(1e-200)
    # at x = 0: x² y² -> 0, x^-1 -> inf
    np.testing.assert_array_equal(p.term_values({"x": 0.0, "y": 1.0}), [0.0, np.inf])
    assert parse_posynomial("x**3").evaluate({"x": 1e200}) == np.inf  # a true overflow
    assert parse_posynomial("x**-1*y").evaluate({"x": 0.0, "y": 2.0}) == np.inf
    with pytest.raises(ValueError, match="undefined \\(0 \\* inf\\)"):
        parse_posynomial("x*y**-1").evaluate({"x": 0.0, "y": 0.0})


def test_sympy_round_trip_and_refusals() -> None:
    p = parse_posynomial("2*E*t**0.5 + 7*k**-1")
    e = p.to_sympy()
    E, t, k = (sp.Symbol(a, positive=True) for a in ("E", "t", "k"))
    assert sp.simplify(e - (2 * E * sp.sqrt(t) + 7 / k)) == 0
    assert sorted(Posynomial.from_sympy(e).terms, key=str) == sorted(p.terms, key=str)
    s = sp.Symbol("s")
    assert p.to_sympy({"E": s}).has(s)
    x = sp.Symbol("x", positive=True)
    assert sorted(Posynomial.from_sympy((x + 2) ** 2).terms, key=str) == sorted(
        parse_posynomial("x**2 + 4*x + 4").terms, key=str)
    with pytest.raises(TypeError, match="cost must be a string or a sympy expression"):
        Posynomial.from_sympy("x")
    with pytest.raises(PosynomialError, match="variable exponent"):
        Posynomial.from_sympy(x**x)
    with pytest.raises(PosynomialError, match="not a power of an axis"):
        Posynomial.from_sympy(sp.sin(x))
    with pytest.raises(PosynomialError, match="not a finite real number"):
        Posynomial.from_sympy(x * sp.zoo)


@pytest.mark.parametrize(("text", "match"), [
    ("N*1e-300*1e-300", "term N of 'N\\*1e-300\\*1e-300' has coefficient 0 \\(it underflows\\)"),
    ("N*1e308*10", "term N of 'N\\*1e308\\*10' has a non-finite coefficient inf"),
    ("1e308*N + 1e308*N", "non-finite coefficient inf"),
    ("", "cost is empty"),
])
def test_built_terms_are_checked(text: str, match: str) -> None:
    with pytest.raises(PosynomialError, match=match):
        parse_posynomial(text)


def test_exponents_adding_up_past_the_float_range() -> None:
    with pytest.raises(PosynomialError, match=r"the exponents of 'N' in 'N\*\*1e308\*N\*\*1e308' "
                                              r"add up to exponent inf; exponents must be finite"):
        parse_posynomial("N**1e308*N**1e308")


def test_sympy_refusals_without_terms_or_with_non_symbol_atoms() -> None:
    with pytest.raises(PosynomialError, match="cost '0' has no terms"):
        Posynomial.from_sympy(sp.Integer(0))
    a = sp.IndexedBase("a")
    with pytest.raises(PosynomialError, match=r"has non-symbol atoms \[a\[1\]\]"):
        Posynomial.from_sympy(a[1] + 1)


def test_monomials_and_posynomials_are_immutable_values() -> None:
    import dataclasses

    p = parse_posynomial("2*E*t + k")
    m = p.terms[0]
    for obj, field in ((p, "source"), (m, "coefficient")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, field, 1.0)
    # equal values hash alike, so they can key dicts and caches
    assert hash(parse_posynomial("k + 2*E*t")) == hash(parse_posynomial("k + 2*E*t"))
    assert {m: 1}[Monomial(2.0, (("t", 1.0), ("E", 1.0)))] == 1


def test_underflowing_powers_are_recomputed_and_exact_products_kept() -> None:
    # x² underflows to 0 at x = 1e-200, but x² y = 1e-200 is a float: recomputed from logs;
    # 3x² = 3e-400 is a true underflow and stays 0
    vals = parse_posynomial("x**2*y + 3*x**2").term_values({"x": 1e-200, "y": 1e200})
    assert vals[0] == pytest.approx(1e-200, rel=1e-13) and vals[1] == 0.0
    # where the plain product is finite and non-zero it is kept bit for bit (exp∘log is not)
    assert float(parse_posynomial("3*x**2").evaluate({"x": 7.0})) == 147.0


@pytest.mark.parametrize(("text", "match"), [
    ("E**(1e200**2)", "'\\*\\*' at position 9: exponent overflows"),
    ("E**((-8)**(1/3))", "'\\*\\*' at position 8: exponent is not real"),
    ("E**(1/0)", "'/' at position 5: division by zero in an exponent"),
    ("(E+1)**101", "power of a sum 101 is above 100"),
    ("1e999", "'1e999' at position 0: number is not finite"),
])
def test_exponent_and_number_refusals(text: str, match: str) -> None:
    with pytest.raises(PosynomialError, match=match):
        parse_posynomial(text)


def test_sympy_powers_of_sums_and_bad_axes_are_refused() -> None:
    x = sp.Symbol("x", positive=True)
    with pytest.raises(PosynomialError, match=r"a sum raised to 2\.5 is not a posynomial"):
        Posynomial.from_sympy((x + 1) ** sp.Rational(5, 2))
    with pytest.raises(PosynomialError, match="a sum raised to -1 is not a posynomial"):
        Posynomial.from_sympy(1 / (x + 1))
    with pytest.raises(PosynomialError, match="power of a sum 101 is above 100"):
        Posynomial.from_sympy((x + 1) ** 101)
    for axes in (["E", "not id"], ["E", 1]):
        with pytest.raises(ValueError, match=r"axes must be identifiers such as .E.; got axes"):
            parse_posynomial("E", axes=axes)
    with pytest.raises(PosynomialError, match="longer than 10000 characters"):
        parse_posynomial("E" * 10001)


# --- parser values and limits, each pinned against a hand computation ---------------------


def test_division_by_a_monomial_divides_its_coefficient() -> None:
    # E/(2·T) at E = T = 1 is 1/2 (a mutant multiplying by the coefficient gives 2).
    assert parse_posynomial("E/(2*T)").evaluate({"E": 1.0, "T": 1.0}) == 0.5


def test_a_sum_to_the_first_power_is_the_sum() -> None:
    # (E + T)^1 is a posynomial; only non-integer or sub-unit powers of sums are refused.
    assert parse_posynomial("(E+T)**1").evaluate({"E": 1.0, "T": 2.0}) == 3.0
    with pytest.raises(PosynomialError, match=r"raised to 0\.5"):
        parse_posynomial("(E+T)**0.5")


def test_constant_sums_in_exponents_add() -> None:
    assert parse_posynomial("E**(1+1)").evaluate({"E": 3.0}) == 9.0
    assert parse_posynomial("E**(3-1)").evaluate({"E": 3.0}) == 9.0


def test_nesting_depth_is_counted_back_after_each_constant() -> None:
    # 200 constants side by side do not use up (or free) nesting depth: 101 levels of
    # parentheses after them are still refused, 90 still accepted.
    flat = "1*" * 200
    with pytest.raises(PosynomialError, match="nested deeper than 100 levels"):
        parse_posynomial("E**(" + flat + "(" * 101 + "1" + ")" * 101 + ")")
    ok = parse_posynomial("E**(" + flat + "(" * 90 + "1" + ")" * 90 + ")")
    assert ok.evaluate({"E": 2.0}) == 2.0


def test_a_stray_token_is_named() -> None:
    with pytest.raises(PosynomialError, match=r"'\)' at position 4: expected a number, an "
                                              r"axis name or '\('"):
        parse_posynomial("E + )")


def test_the_length_limit_is_inclusive() -> None:
    # Exactly 10,000 characters is accepted; one more is refused.
    assert parse_posynomial("E" + " " * 9_999).evaluate({"E": 2.0}) == 2.0
    with pytest.raises(PosynomialError, match="longer than 10000 characters"):
        parse_posynomial("E" + " " * 10_000)


def test_the_predicted_term_count_of_a_power_is_exact_on_hand_cases() -> None:
    # _power_terms_bound predicts the size of base**j before expanding (the work limit
    # rests on it). By hand: (1 + E)^99 has 100 terms, E^0..E^99; (E + E² + E³)² has
    # exponents 2..6, 5 terms, under the
    # C(4, 2) = 6 multisets; (E^½ + E^½·T + T + 1)² takes E in {0, ½, 1} and T in
    # {0, 1, 2}: at most 3·3 = 9 terms, under C(5, 2) = 10 multisets.
    from rlscale.theory._posynomial import _key
    from rlscale.theory._posynomial_expand import _power_terms_bound

    one_e = {_key({}): 1.0, _key({"E": 1.0}): 1.0}
    assert _power_terms_bound(one_e, 99) == 100
    cubic = {_key({"E": e}): 1.0 for e in (1.0, 2.0, 3.0)}
    assert _power_terms_bound(cubic, 2) == 5
    mixed = {_key({"E": 0.5}): 1.0, _key({"E": 0.5, "T": 1.0}): 1.0, _key({"T": 1.0}): 1.0,
             _key({}): 1.0}
    assert _power_terms_bound(mixed, 2) == 9
    assert len(parse_posynomial("(E**0.5 + E**0.5*T + T + 1)**2").terms) <= 9


def test_a_monomial_to_a_real_power() -> None:
    # (0.5·E)^0.5 = √0.5·E^0.5: a coefficient below 1 is fine; only negative ones are not.
    p = parse_posynomial("(0.5*E)**0.5")
    assert p.evaluate({"E": 4.0}) == pytest.approx(math.sqrt(0.5) * 2.0, rel=1e-15)
    with pytest.raises(PosynomialError, match="makes an exponent infinite"):
        parse_posynomial("(E**1e200)**1e200")
