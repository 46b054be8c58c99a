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


if os.environ.get("RLSCALE_CONTRACT_LOG"):
    def pytest_runtest_logreport(report):
        """Append ``node id, outcome, contract checks run, seconds`` per test to the file
        named by ``RLSCALE_CONTRACT_LOG`` (how deep-profile runs count their examples)."""
        if report.when != "call":
            return
        from contracts import CALLS

        kind = ""
        if report.failed:  # what broke the contract (benchmarks/reliability.py counts them)
            text = str(report.longrepr)
            kind = ("hang" if "DeadlineExceeded" in text else
                    "non-finite" if ("is not finite" in text or "non-finite" in text
                                     or "is complex" in text) else
                    "unnamed" if "does not name any of" in text else "traceback")
        with open(os.environ["RLSCALE_CONTRACT_LOG"], "a") as fh:
            fh.write(f"{report.nodeid}\t{report.outcome}\t{CALLS.pop(report.nodeid, 0)}"
                     f"\t{report.duration:.1f}\t{kind}\n")
