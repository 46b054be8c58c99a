"""Properties of argument checking (foundation)."""

from __future__ import annotations

from rlscale.properties import register


@register(
    "validation.check_real_roundtrip",
    "check_real returns finite in-range values unchanged and rejects any value below the range "
    "with a ValueError naming the argument",
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
                assert str(exc).startswith("x must be >=")
            else:
                raise AssertionError("value below the range was accepted")

    return test
