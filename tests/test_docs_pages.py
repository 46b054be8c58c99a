"""Doctests of the Python-session examples in the documentation's pages (docs/*.md).

The tutorials carry the examples that used to live in the README; they run the
same way as the README's (tests/test_doctests.py), so a page cannot drift from
the code it documents.
"""

from __future__ import annotations

import doctest
from pathlib import Path

import numpy as np
import pytest

import rlscale

DOCS = Path(__file__).resolve().parents[1] / "docs"
_PAGES = sorted(DOCS.glob("*.md"))
_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def test_the_tutorials_are_there() -> None:
    names = {p.stem for p in _PAGES}
    assert {"derive", "verify", "solve", "ground", "prove"} <= names


@pytest.mark.parametrize("page", _PAGES, ids=[p.stem for p in _PAGES])
def test_page_python_examples(page: Path) -> None:
    test = doctest.DocTestParser().get_doctest(page.read_text(), {"rlscale": rlscale},
                                               page.name, str(page), 0)
    runner = doctest.DocTestRunner(optionflags=_FLAGS)
    with np.printoptions(legacy="1.25"):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0, "doctest(s) failed (output above)"
