"""Run every registered property through the same runner the CLI uses."""

from __future__ import annotations

import os

import pytest

from rlscale.properties import Property, register, registry, run_property

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")


@pytest.mark.parametrize("name", list(registry()))
def test_registered_property_holds(name: str) -> None:
    result = run_property(name, PROFILE)
    assert result.passed, f"{result.error}\n{result.falsifying}"
    assert result.examples > 0


def test_runner_reports_a_falsifying_example() -> None:
    def factory():
        from hypothesis import given
        from hypothesis import strategies as st

        @given(st.integers(0, 100))
        def test(x: int) -> None:
            assert x < 50

        return test

    prop = Property("meta.always_fails", "integers are below 50", factory)
    result = run_property(prop, "ci")
    assert not result.passed
    assert result.falsifying is not None and "50" in result.falsifying
    assert result.examples >= 1


def test_registry_rejects_duplicate_names() -> None:
    name = next(iter(registry()))
    with pytest.raises(ValueError, match="registered twice"):
        register(name, "dup")(lambda: None)


def test_unknown_property_and_profile_are_rejected() -> None:
    with pytest.raises(ValueError, match="unknown property 'nope'"):
        run_property("nope")
    with pytest.raises(ValueError, match="profile='fast'"):
        run_property(next(iter(registry())), "fast")
