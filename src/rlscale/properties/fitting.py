"""Properties of the cost parser and the law fitter (issue 4)."""

from __future__ import annotations

import contextlib

from rlscale.properties import register


@register(
    "fitting.parser_roundtrip",
    "a random posynomial written as text parses back to the same terms, and its value "
    "matches direct arithmetic",
)
def _parser_roundtrip():
    import math

    from hypothesis import given
    from hypothesis import strategies as st

    from rlscale.properties.strategies import log_uniform
    from rlscale.theory import parse_posynomial

    names = st.sampled_from(["E", "t", "k", "N", "D"])
    monomial = st.tuples(log_uniform(1e-3, 1e6),
                         st.dictionaries(names, st.integers(-3, 3).filter(bool), max_size=3))

    @given(st.lists(monomial, min_size=1, max_size=5))
    def test(terms) -> None:
        text = " + ".join(f"{c!r}" + "".join(f"*{n}**({e})" for n, e in exps.items())
                          for c, exps in terms)
        p = parse_posynomial(text)
        point = {"E": 1.3, "t": 2.1, "k": 0.7, "N": 3.3, "D": 0.45}
        want = sum(c * math.prod(point[n] ** e for n, e in exps.items()) for c, exps in terms)
        assert math.isclose(float(p.evaluate(point)), want, rel_tol=1e-12)

    return test


@register(
    "fitting.parser_refuses_or_parses",
    "any text made of the cost alphabet and stray characters either parses or raises "
    "PosynomialError (a ValueError) -- never another exception",
)
def _parser_fuzz():
    from hypothesis import given
    from hypothesis import strategies as st

    from rlscale.theory import PosynomialError, parse_posynomial

    # Besides the cost alphabet: Unicode digits and spaces, deep parentheses and
    # exponent towers (stack and overflow limits), huge and tiny numbers.
    alphabet = st.sampled_from([*list("Etk0123456789.e+-*/() ^;_x"), "**", "E*t", "1e9",
                                "\u0663", "\xa0", "(" * 20, "**-", "1e308", "1e-300"])

    @given(st.lists(alphabet, max_size=30).map("".join))
    def test(text) -> None:
        with contextlib.suppress(PosynomialError):
            parse_posynomial(text)

    return test


@register(
    "fitting.recovers_noise_free_laws",
    "fit_law recovers the floor and exponent of a random one-axis additive law from "
    "noise-free points to 1e-3 relative",
)
def _recovers_noise_free():
    import numpy as np
    from hypothesis import given
    from hypothesis import strategies as st

    from rlscale.optimize import fit_law
    from rlscale.properties.strategies import log_uniform
    from rlscale.theory import AdditiveLaw

    # Ranges keep the law identifiable: the reducible term spans from well above
    # the floor (x = 1) to well below it (x = 1e10).
    @given(floor=st.floats(0.5, 3.0), a=log_uniform(1.0, 10.0), alpha=st.floats(0.3, 0.8))
    def test(floor, a, alpha) -> None:
        law = AdditiveLaw(floor, {"x": a}, {"x": alpha})
        x = np.logspace(0, 10, 12)
        fit = fit_law({"x": x, "loss": law(x=x)}, axes=["x"], starts=5, holdout=0,
                      n_jobs=1)
        assert abs(fit.params["exponent[x]"] / alpha - 1) <= 1e-3, fit.params
        assert abs(fit.params["floor"] / floor - 1) <= 1e-3, fit.params

    return test
