"""The shared argument validators of ``rlscale.theory._validation`` (issue 10 §2, §4, §5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlscale.theory import check_positive_int


@pytest.mark.parametrize("value", [True, False, np.bool_(True)])
def test_check_positive_int_refuses_booleans(value):
    with pytest.raises(TypeError, match=r"^n must be an integer >= 0 and <= 9223372036854775807, "
                                        r"not a boolean"):
        check_positive_int("n", value, minimum=0)


@pytest.mark.parametrize("value", [10**400, 2**64, 1001, np.int64(1001)])
def test_check_positive_int_enforces_maximum(value):
    with pytest.raises(ValueError,
                       match=r"^trials must be an integer >= 1 and <= 1000; got trials="):
        check_positive_int("trials", value, maximum=1000)


@pytest.mark.parametrize(("value", "shown"), [
    (1e6, r"1e\+06 \(write int\(1e\+06\)"), (1000.0, r"1000 \(write int\(1000\)"),
    (np.float64(3.0), r"3 \(write"), (1e218, r"1e\+218 \(write"), (2.5, r"2\.5$"),
    (math.inf, r"inf$"), (np.float32(4.0), r"4 \(write")])
def test_check_positive_int_refuses_every_float_even_integral_ones(value, shown):
    # Issue 22: compare_inference_plans(turns, 1e6) and sample_trajectories(rw, 1e6) took
    # a float for a count and ran for minutes; a count is an integer.
    with pytest.raises(TypeError, match=r"^trials must be an integer >= 1 and <= 1000, not a "
                                        r"float; got trials=" + shown):
        check_positive_int("trials", value, maximum=1000)


def test_check_positive_int_maximum_is_inclusive_and_defaults_to_int64():
    assert check_positive_int("n", 1000, maximum=1000) == 1000
    assert check_positive_int("n", 2**63 - 1) == 2**63 - 1
    with pytest.raises(ValueError, match=r"<= 9223372036854775807; got n=9223372036854775808"):
        check_positive_int("n", 2**63)
    assert type(check_positive_int("n", np.int32(3))) is int
    assert check_positive_int("n", np.array(7)) == 7
    with pytest.raises(TypeError, match="not a float"):
        check_positive_int("n", np.array(7.0))


@pytest.mark.parametrize("value", [np.array([3]), np.array(3.5), [3], "3", 2.5, math.nan,
                                   math.inf, None, 1 + 0j, np.array(True), b"3"])
def test_check_positive_int_type_errors_name_the_argument(value):
    with pytest.raises(TypeError, match=r"^steps must be an integer"):
        check_positive_int("steps", value)
