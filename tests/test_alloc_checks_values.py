"""optimize/_alloc_checks.py: every branch of the bounds parser, ``method`` and the exponent cap,
each with its exact message, and the values the parser returns."""

from __future__ import annotations

import math
import re

import pytest

from rlscale.optimize._alloc_checks import (
    MAX_EXPONENT,
    METHODS,
    check_exponents,
    check_mapping_arg,
    check_method,
    parse_bounds,
)
from rlscale.theory._posynomial import Monomial, Posynomial

VARS = ["E", "K"]


def test_no_bounds_leave_every_variable_open() -> None:
    assert parse_bounds(None, VARS, {}) == {"E": (0.0, math.inf), "K": (0.0, math.inf)}
    assert parse_bounds({}, VARS, {}) == {"E": (0.0, math.inf), "K": (0.0, math.inf)}


def test_pairs_mappings_and_open_sides_parse_to_floats() -> None:
    out = parse_bounds({"E": (2, 5), "K": {"max": 7}}, VARS, {})
    assert out == {"E": (2.0, 5.0), "K": (0.0, 7.0)}
    assert all(type(x) is float for pair in out.values() for x in pair)
    assert parse_bounds({"E": (None, 3.5), "K": {"min": 0.25}}, VARS, {}) == {
        "E": (0.0, 3.5), "K": (0.25, math.inf)}
    assert parse_bounds({"E": (0.1, 0.5)}, VARS, {})["E"] == (0.1, 0.5)   # a max below 1
    # min == max pins the variable; min 0 is allowed.
    assert parse_bounds({"E": (4, 4), "K": (0, None)}, VARS, {}) == {
        "E": (4.0, 4.0), "K": (0.0, math.inf)}


def test_user_bounds_replace_the_laws_defaults_entry_by_entry() -> None:
    defaults = {"E": (0.5, None), "K": (1, None)}
    assert parse_bounds({"E": (1, 2)}, VARS, defaults) == {"E": (1.0, 2.0), "K": (1.0, math.inf)}
    assert parse_bounds(None, VARS, defaults) == {"E": (0.5, math.inf), "K": (1.0, math.inf)}


@pytest.mark.parametrize(("bounds", "err", "match"), [
    ({"Z": (1, 2)}, ValueError,
     r"^bounds name unknown axis 'Z'; the decision variables are \['E', 'K'\]$"),
    ({"E": {"lo": 1}}, ValueError, r"^bounds\['E'\] takes keys 'min' and 'max'; got \['lo'\]$"),
    ({"E": 3}, TypeError, r"^bounds\['E'\] must be \(min, max\) or \{'min':, 'max':\}; got 3$"),
    ({"E": (1, 2, 3)}, TypeError, r"got \(1, 2, 3\)$"),
    ({"E": (-0.5, 2)}, ValueError, r"bounds\['E'\] min"),
    ({"E": (1, 0)}, ValueError, r"bounds\['E'\] max"),
    ({"E": ("a", 2)}, TypeError, r"bounds\['E'\] min"),
    ({"E": (2.5, 2)}, ValueError, r"^bounds\['E'\]: min 2.5 exceeds max 2$"),
    (["E"], TypeError, r"^bounds must be a mapping \(dict\); got bounds=\['E'\]$"),
])
def test_each_bad_bound_is_refused_by_name(bounds, err, match) -> None:
    with pytest.raises(err, match=match):
        parse_bounds(bounds, VARS, {})


def test_a_bad_default_is_refused_like_a_users_bound() -> None:
    with pytest.raises(ValueError, match="bounds name unknown axis 'k'"):
        parse_bounds(None, VARS, {"k": (1, None)})


def test_method_accepts_its_four_names_only() -> None:
    assert METHODS == ("auto", "closed_form", "gp", "dcp")
    for m in METHODS:
        assert check_method(m) == m
    with pytest.raises(ValueError, match=r"^method must be one of \['auto', 'closed_form', "
                                         r"'gp', 'dcp'\]; got method='GP'$"):
        check_method("GP")
    with pytest.raises(TypeError, match=r"got method=None$"):
        check_method(None)


def test_mapping_arguments() -> None:
    check_mapping_arg("substitute", None)
    check_mapping_arg("values", {}, required=True)
    with pytest.raises(TypeError, match=r"^values must be a mapping \(dict\); got values=None$"):
        check_mapping_arg("values", None, required=True)
    with pytest.raises(TypeError, match=r"^substitute must be a mapping \(dict\); got "
                                        r"substitute='E\*t'$"):
        check_mapping_arg("substitute", "E*t")


def _poly(e: float) -> Posynomial:
    return Posynomial((Monomial(2.0, (("N", 1.0),)), Monomial(3.0, (("D", e),))))


def test_exponents_up_to_1000_in_magnitude_pass() -> None:
    assert MAX_EXPONENT == 1000.0
    check_exponents("the cost", _poly(1000.0))
    check_exponents("the cost", _poly(-1000.0))
    for e in (1000.5, -1000.5, 1e6):
        with pytest.raises(ValueError, match="^the cost has exponent "
                                             + re.escape(f"{e:g} on 'D' in term 3*D**")):
            check_exponents("the cost", _poly(e))
    with pytest.raises(ValueError, match="solver handles exponents up to 1000 in magnitude"):
        check_exponents("the law", _poly(1001.0))
