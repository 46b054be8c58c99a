"""The installed layout, import isolation, lazy imports and import direction."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CARDS = ("theory", "optimize", "simulate", "proofs")
# Which rlscale packages each folder may import (the one-way dependency rule).
ALLOWED = {
    "theory": set(),
    "simulate": {"theory"},
    "optimize": {"theory"},
    "proofs": {"theory"},
}


def _run(code: str, cwd: Path) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=True
    )
    return out.stdout


@pytest.mark.parametrize("card", CARDS)
def test_card_folders_install_inside_rlscale(card: str, tmp_path: Path) -> None:
    code = (
        "import importlib, json, pathlib\n"
        f"m = importlib.import_module('rlscale.{card}')\n"
        "ok = True\n"
        f"try:\n    importlib.import_module('{card}')\nexcept ImportError:\n    ok = False\n"
        "print(json.dumps([str(pathlib.Path(m.__file__).parent.name), ok]))"
    )
    folder, bare_importable = json.loads(_run(code, tmp_path))
    assert folder == card
    assert not bare_importable, f"`import {card}` must fail outside the repository"


def test_every_package_directory_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"])
    mapping = {"rlscale": "rlscale", **{f"rlscale.{c}": c for c in CARDS}}
    found = set()
    for top_pkg, folder in mapping.items():
        for init in (REPO / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO / folder).parts
            found.add(".".join((top_pkg, *rel)))
    assert found <= listed, f"packages missing from pyproject: {sorted(found - listed)}"


@pytest.mark.parametrize("folder", ["rlscale", *CARDS])
def test_py_typed_is_shipped(folder: str) -> None:
    assert (REPO / folder / "py.typed").is_file()


@pytest.mark.parametrize("statement", [
    "import rlscale, rlscale.theory, rlscale.simulate, rlscale.optimize, rlscale.proofs",
    "import rlscale.theory as t; [getattr(t, name) for name in t.__all__]",
])
def test_light_imports_do_not_pull_cvxpy_or_matplotlib(statement: str, tmp_path: Path) -> None:
    code = (
        f"import sys, json\n{statement}\n"
        "print(json.dumps(sorted(m for m in ('cvxpy', 'matplotlib') if m in sys.modules)))"
    )
    assert json.loads(_run(code, tmp_path)) == []


def _imported_rlscale_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "rlscale":
                found.add(parts[1] if len(parts) > 1 else "rlscale")
            elif parts[0] in CARDS:
                found.add(f"bare {parts[0]}")
    return found


@pytest.mark.parametrize("card", CARDS)
def test_imports_go_one_way(card: str) -> None:
    for path in sorted((REPO / card).rglob("*.py")):
        imported = _imported_rlscale_packages(path) - {card}
        illegal = imported - ALLOWED[card]
        assert not illegal, f"{path.relative_to(REPO)} imports {sorted(illegal)}"


def test_lazy_attribute_errors_are_clear() -> None:
    import rlscale
    import rlscale.theory

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        rlscale.theory.nope  # noqa: B018
    assert "theory" in dir(rlscale)
    for name in rlscale.theory.__all__:
        assert getattr(rlscale.theory, name) is not None
