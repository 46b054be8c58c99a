"""Shared pytest configuration.

Hypothesis profiles (``ci``, ``dev``, ``deep``) come from
:data:`rlscale.properties.PROFILES`, the same ones ``rlscale verify
properties`` uses; ``HYPOTHESIS_PROFILE`` selects one (default ``dev``).
Tests marked ``slow`` are excluded unless ``-m slow`` is given.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from rlscale.properties import register_profiles

register_profiles()
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture
def rng():
    """A fresh, seeded generator for each test."""
    import numpy as np

    return np.random.default_rng(20261202)


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` beside the repository; skip where it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent on this machine")
    return SHARED_DATA
