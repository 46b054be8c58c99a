"""Properties of the proof framework's rigorous interval arithmetic (issue 6)."""

from __future__ import annotations

from rlscale.properties import register


@register(
    "proofs.interval_eval_encloses",
    "interval_eval's outward-rounded enclosure of an expression on a box contains the "
    "expression's 50-digit value at every point of the box",
)
def _interval_eval_encloses():
    import mpmath
    import sympy as sp
    from hypothesis import given
    from hypothesis import strategies as st

    from rlscale.proofs import interval_eval

    x = sp.Symbol("x", real=True)
    exprs = (
        sp.exp(-x**2 / 2) / sp.sqrt(2 * sp.pi),
        sp.log(1 + x**2) - sp.sqrt(3) * x**3 + sp.Rational(1, 7),
        sp.exp(x / 3) * sp.Abs(x - 1) / (2 + x**2),
        (1 + x**2) ** sp.Rational(5, 2) - sp.pi * sp.E * x,
    )
    funcs = [sp.lambdify(x, e, modules="mpmath") for e in exprs]
    finite = st.floats(min_value=-30.0, max_value=30.0, allow_nan=False)

    @given(index=st.integers(0, len(exprs) - 1), a=finite, width=st.floats(0.0, 2.0),
           frac=st.floats(0.0, 1.0))
    def test(index: int, a: float, width: float, frac: float) -> None:
        hi = a + width  # a double: the box's exact upper end
        enc = interval_eval(exprs[index], {x: mpmath.iv.mpf([a, hi])})
        with mpmath.workdps(50):
            point = mpmath.mpf(a) + (mpmath.mpf(hi) - a) * frac
            point = min(max(point, mpmath.mpf(a)), mpmath.mpf(hi))
            value = funcs[index](point)
        assert enc.a <= value <= enc.b, (exprs[index], a, width, frac, enc, value)

    return test
