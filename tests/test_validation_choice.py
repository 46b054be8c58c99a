"""check_choice: string options refuse non-strings by name (an array used to reach ``in``)."""

from __future__ import annotations

import numpy as np
import pytest

from rlscale.theory._validation import check_choice


@pytest.mark.parametrize("bad", [np.array([]), np.array(["quick"]), ["quick"], 1, None, b"quick"])
def test_non_strings_are_a_type_error_naming_the_argument(bad) -> None:
    with pytest.raises(TypeError, match=r"^mode must be one of quick, full; got mode="):
        check_choice("mode", bad, ("quick", "full"))


def test_unknown_strings_are_a_value_error_and_known_ones_pass_through() -> None:
    assert check_choice("how", "uniform", ("optimal", "uniform")) == "uniform"
    with pytest.raises(ValueError, match=r"how must be one of optimal, uniform; got how='Uniform'"):
        check_choice("how", "Uniform", ("optimal", "uniform"))


def test_the_public_entry_points_use_it() -> None:
    from rlscale.optimize import budget_to_reach
    from rlscale.theory import Turn
    from rlscale.verification._gaussian_reward_law import verify_reward_law

    with pytest.raises(TypeError, match="how must be one of"):
        budget_to_reach([Turn.with_coverage(0.5)], 0.5, np.array([]))
    with pytest.raises(TypeError, match="mode must be one of glance, quick, full"):
        verify_reward_law(np.array([]))
