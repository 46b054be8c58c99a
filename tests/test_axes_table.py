"""One spelling per axis (issue 25): the axis table lives in rlscale.theory._axes and
every room reads it; no module keeps its own name -> symbol or name -> field table."""

from __future__ import annotations

import ast
from pathlib import Path

import rlscale.simulate as sim
import rlscale.theory as th
from rlscale.report import _config
from rlscale.theory import _axes

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("theory", "optimize", "simulate", "proofs", "src/rlscale")
HOME = REPO / "theory" / "_axes.py"


def _pairs() -> set[frozenset[str]]:
    """Every (canonical name, other spelling) pair of the table, either way round."""
    return {frozenset((a.name, s)) for a in _axes.SWEEP_AXES for s in a.spellings[1:]}


def _tables(tree: ast.AST) -> list[int]:
    """Lines of dict literals with two or more entries that translate axis spellings."""
    pairs, lines = _pairs(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            hits = sum(isinstance(k, ast.Constant) and isinstance(v, ast.Constant)
                       and frozenset((k.value, v.value)) in pairs
                       for k, v in zip(node.keys, node.values))
            if hits >= 2:
                lines.append(node.lineno)
    return lines


def test_the_detector_finds_a_copied_table() -> None:
    copied = ast.parse('SUB = {"environments": "E", "tasks_per_environment": "t"}\n'
                       'FIELD = {"n_environments": "environments", "context": "c"}\n'
                       'OK = {"environments": 8, "E": "environments"}\n')
    assert _tables(copied) == [1, 2]


def test_no_module_keeps_its_own_axis_table() -> None:
    found = {}
    for root in ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            if path == HOME:
                continue
            lines = _tables(ast.parse(path.read_text(encoding="utf-8")))
            if lines:
                found[str(path.relative_to(REPO))] = lines
    assert not found, f"axis translation tables outside rlscale.theory._axes: {found}"


def test_the_public_names_are_the_tables() -> None:
    # public through rlscale.simulate (as before issue 25); theory holds the table but
    # does not export it twice (the API reference would describe Axis twice)
    names = set(_axes.__all__) & set(sim.__all__)
    assert names == {"AXES", "CONTEXT", "SWEEP_AXES", "Axis", "axis"}
    assert all(getattr(sim, n) is getattr(_axes, n) for n in names)
    assert not names & set(th.__all__)


def test_the_report_reads_the_table() -> None:
    assert _config.AXES == tuple(a.name for a in _axes.AXES) == _axes.NAMES
    assert _config.SUBSTITUTE == {"environments": "E", "tasks_per_environment": "t",
                                  "trajectories_per_task": "k"} == _axes.SYMBOLS
    assert list(_config.SUBSTITUTE) == list(_config.AXES)  # the report's column order
