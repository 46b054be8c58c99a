"""The shared argument validators of ``rlscale.theory._validation`` (issue 10 §2, §4, §5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlscale.theory import check_positive_int


@pytest.mark.parametrize("value", [True, False, np.bool_(True)])
def test_check_positive_int_refuses_booleans(value):
    with pytest.raises(TypeError, match=r"^n must be an integer >= 0, not a boolean"):
        check_positive_int("n", value, minimum=0)


@pytest.mark.parametrize("value", [1e218, 7.7e165, 10**400, 2**64, 1001])
def test_check_positive_int_enforces_maximum(value):
    with pytest.raises(ValueError,
                       match=r"^trials must be an integer >= 1 and <= 1000; got trials="):
        check_positive_int("trials", value, maximum=1000)


def test_check_positive_int_maximum_is_inclusive_and_none_is_unbounded():
    assert check_positive_int("n", 1000.0, maximum=1000) == 1000
    assert check_positive_int("n", 2**64) == 2**64
    assert type(check_positive_int("n", np.float64(3.0))) is int
    assert check_positive_int("n", np.array(7)) == 7


@pytest.mark.parametrize("value", [np.array([3]), np.array(3.5), [3], "3", 2.5, math.nan,
                                   math.inf, None, 1 + 0j])
def test_check_positive_int_type_errors_name_the_argument(value):
    with pytest.raises(TypeError, match=r"^steps must be an integer"):
        check_positive_int("steps", value)
