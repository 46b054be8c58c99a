"""Properties of argument checking (foundation)."""

from __future__ import annotations

from rlscale.properties import register


@register(
    "validation.check_real_roundtrip",
    "check_real returns finite in-range values unchanged and rejects any value below the range "
    "with a ValueError naming the argument, the range and the value",
)
def _check_real_roundtrip():
    from hypothesis import given
    from hypothesis import strategies as st

    from rlscale.theory import check_real

    finite = st.floats(allow_nan=False, allow_infinity=False, width=64)

    @given(value=finite, low=finite)
    def test(value: float, low: float) -> None:
        if value >= low:
            assert float(check_real("x", value, low=low)) == value
        else:
            try:
                check_real("x", value, low=low)
            except ValueError as exc:
                # The message names the argument, the valid range and the value.
                assert str(exc) == f"x must be >= {low:g}; got x={value:g}", str(exc)
            else:
                raise AssertionError("value below the range was accepted")

    return test
