"""A newcomer's first hour (issue 24): one confidence level everywhere, and prose numbers
that cannot go stale."""

from __future__ import annotations

import inspect

import pytest

import rlscale.optimize as opt
from rlscale.theory._levels import CONFIDENCE


@pytest.mark.parametrize("fn", [opt.fit_law, opt.fit_expression, opt.plan_uncertainty,
                                opt.recommend], ids=lambda f: f.__name__)
def test_every_interval_defaults_to_the_one_level(fn) -> None:
    assert inspect.signature(fn).parameters["confidence"].default == CONFIDENCE


def test_sweep_and_report_default_to_the_one_level() -> None:
    from rlscale.report import DEFAULTS
    from rlscale.sweep._run import summarise

    assert inspect.signature(summarise).parameters["confidence"].default == CONFIDENCE
    assert DEFAULTS["fit"]["confidence"] == CONFIDENCE


def test_cli_defaults_to_the_one_level() -> None:
    import argparse

    from rlscale.commands import fit, sweep

    for module, argv in ((fit, ["fit", "x.csv", "--axes", "E"]), (sweep, ["sweep", "s.toml"])):
        parser = argparse.ArgumentParser()
        module.register(parser.add_subparsers())
        level = parser.parse_args(argv).confidence
        assert level in (CONFIDENCE, None)  # None: the command takes CONFIDENCE
