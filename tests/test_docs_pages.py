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


def _slug(heading: str) -> str:
    """GitHub's (and MyST's) anchor of a heading: lower case, punctuation dropped, '-' for ' '."""
    kept = "".join(c for c in heading.strip().lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


@pytest.mark.parametrize("source", ["README.md", *(f"docs/{p.name}" for p in _PAGES)])
def test_relative_links_reach_a_file_and_heading(source: str) -> None:
    import re

    path = DOCS.parent / source
    for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text()):
        if "://" in target or target.startswith("mailto:"):
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        assert dest.exists(), f"{source}: link to {target!r} reaches no file"
        if anchor and dest.suffix == ".md":
            slugs = {_slug(h) for h in re.findall(r"(?m)^#+ (.+)$", dest.read_text())}
            assert anchor in slugs, f"{source}: link to {target!r}: no heading #{anchor}"
