"""Doctests of the public API and of the README's Python-session examples.

Modules are imported by their installed names (``rlscale.theory._x``), never
by path, so the card-folder mapping is exercised exactly as users see it.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import numpy as np
import pytest

import rlscale

REPO = Path(__file__).resolve().parents[1]
_SKIP = {"rlscale.__main__"}


def _modules() -> list[str]:
    names = ["rlscale"]
    for sub in ("rlscale", "rlscale.theory", "rlscale.simulate", "rlscale.optimize",
                "rlscale.proofs"):
        pkg = importlib.import_module(sub)
        names.append(sub)
        names.extend(info.name for info in pkgutil.walk_packages(pkg.__path__, sub + ".")
                     if info.name not in _SKIP)
    return sorted(set(names))


_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _run(test_or_tests) -> None:
    runner = doctest.DocTestRunner(optionflags=_FLAGS)
    with np.printoptions(legacy="1.25"):
        for test in test_or_tests:
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} doctest(s) failed (output above)"


@pytest.mark.parametrize("module", _modules())
def test_module_doctests(module: str) -> None:
    mod = importlib.import_module(module)
    tests = doctest.DocTestFinder(exclude_empty=True).find(mod, module)
    _run(tests)


def test_readme_python_examples() -> None:
    text = (REPO / "README.md").read_text()
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {"rlscale": rlscale}, "README.md", str(REPO / "README.md"), 0)
    assert test.examples, "README.md has no Python-session examples"
    _run([test])
