"""Each package's docstring is an index of its public names by topic (issue 25).

The four card packages open with topics (a definition list: a topic, then its names);
every public name must appear in one, so a new name without a place in the index
fails here.  The top package names every room.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import rlscale

PACKAGES = ("rlscale.theory", "rlscale.optimize", "rlscale.simulate", "rlscale.proofs")
TOP = Path(rlscale.__file__).parent


def _indexed(doc: str) -> set[str]:
    return set(re.findall(r":obj:`([A-Za-z_][A-Za-z0-9_]*)`", doc)) | set(
        re.findall(r"``([A-Za-z_][A-Za-z0-9_]*)``", doc))


@pytest.mark.parametrize("name", PACKAGES)
def test_every_public_name_is_in_the_topic_index(name: str) -> None:
    pkg = importlib.import_module(name)
    doc = pkg.__doc__ or ""
    missing = sorted(set(pkg.__all__) - _indexed(doc))
    assert not missing, f"{name}'s docstring indexes no topic for {missing}"
    # a topic is a definition-list term: a line at the margin followed by indented names
    topics = re.findall(r"^([A-Z][^\n]*)\n    \S", doc, re.M)
    assert len(topics) >= 2, f"{name}: no topics found"


def test_the_index_names_only_public_names() -> None:
    for name in PACKAGES:
        pkg = importlib.import_module(name)
        linked = set(re.findall(r":obj:`([A-Za-z_][A-Za-z0-9_]*)`", pkg.__doc__))
        assert linked <= set(pkg.__all__), (name, sorted(linked - set(pkg.__all__)))


def test_the_top_package_names_every_room() -> None:
    rooms = sorted(p.name for p in TOP.iterdir() if (p / "__init__.py").is_file())
    missing = [r for r in rooms if f"``rlscale.{r}``" not in rlscale.__doc__]
    assert not missing, f"rlscale's docstring does not name the rooms {missing}"
