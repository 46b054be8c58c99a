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


_BLOCK = """
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == {missing!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, _Block())
"""


@pytest.mark.parametrize(("missing", "code", "extra"), [
    ("matplotlib", "import numpy as np\nfrom rlscale.optimize import fit_law\n"
     "N = np.array([1.0, 2, 4, 8, 16, 32, 64]); d = {'N': N, 'loss': 0.5 + N ** -0.5}\n"
     "fit_law(d, axes=['N']).plot(d)", "plot"),
    ("hypothesis", "from rlscale.properties import registry\nregistry()", "verify"),
    ("hypothesis", "from rlscale.properties import run_property\n"
     "run_property('validation.check_real_roundtrip', 'dev')", "verify"),
])
def test_a_missing_extra_is_named(missing: str, code: str, extra: str, tmp_path) -> None:
    # Issue 24: after the README's main install these raised a bare ModuleNotFoundError.
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _BLOCK.format(missing=missing) + code],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert f"pip install 'rlscale[{extra}]'" in last and repr(missing) in last, last
