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
# The top package lives under src/ so that no folder named ``rlscale`` sits at the
# repository root: there it would shadow the installed package (which maps the card
# folders in through package-dir) for anything run from the root.
TOP = REPO / "src" / "rlscale"
FOLDERS = {"rlscale": TOP, **{card: REPO / card for card in CARDS}}
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
    mapping = {"rlscale": TOP, **{f"rlscale.{c}": REPO / c for c in CARDS}}
    found = set()
    for top_pkg, folder in mapping.items():
        for init in folder.rglob("__init__.py"):
            rel = init.parent.relative_to(folder).parts
            found.add(".".join((top_pkg, *rel)))
    assert found <= listed, f"packages missing from pyproject: {sorted(found - listed)}"


@pytest.mark.parametrize("folder", ["rlscale", *CARDS])
def test_py_typed_is_shipped(folder: str) -> None:
    assert (FOLDERS[folder] / "py.typed").is_file()


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


def test_builtin_fit_imports_neither_sympy_nor_scipy_stats(tmp_path: Path) -> None:
    # Issue 24: sympy (0.7 s) and scipy.stats (0.3 s) were most of a cold fit_law; a
    # built-in family needs neither (the expression front end imports sympy when used).
    code = (
        "import sys, json\nimport numpy as np\nimport rlscale.optimize as o\n"
        "N = np.array([1.0, 2, 4, 8, 16, 32, 1, 2, 4, 8, 16, 32])\n"
        "D = np.array([1.0, 1, 1, 1, 1, 1, 4, 4, 4, 4, 4, 4])\n"
        "o.fit_law({'N': N, 'D': D, 'loss': 1 + N ** -0.5 + 2 * D ** -0.3}, axes=['N', 'D'])\n"
        "print(json.dumps(sorted(m for m in ('sympy', 'scipy.stats', 'cvxpy', 'matplotlib')"
        " if m in sys.modules)))"
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


def test_no_top_package_folder_at_the_repository_root() -> None:
    # A root-level ``rlscale/`` would shadow the installed package for anything run from
    # the clone's root (``python -c``, ``python -m benchmarks``): issue 24.
    assert not (REPO / "rlscale").exists()


def test_installed_package_runs_from_the_repository_root() -> None:
    code = (
        "import json, rlscale, rlscale.theory, rlscale.optimize, rlscale.verification\n"
        "from rlscale.theory import check_real\n"
        "print(json.dumps(rlscale.theory.__name__))"
    )
    assert _run(code, REPO).strip() == '"rlscale.theory"'


# The rooms of the top package: what each holds (issue 25). A new top-level module has to
# be placed in a room, or this table extended with a reason.
ROOMS = {
    "commands": "the CLI verbs, one module each (rlscale.cli discovers them)",
    "report": "rlscale report: configuration, steps, figures, the document, the run",
    "verification": "experiments that check the theory against the simulators",
    "sweep": "rlscale sweep: specs, the resumable results CSV, the process pool",
    "files": "atomic writes and staged publishing of output directories",
    "properties": "the registry of named hypothesis properties",
}
TOP_MODULES = {"__init__", "__main__", "_errors", "_optional", "_document", "cli"}


def test_top_package_is_organised_in_rooms() -> None:
    rooms = {p.name for p in TOP.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in TOP.glob("*.py")}
    assert rooms == set(ROOMS), f"rooms: {sorted(rooms)}; stated: {sorted(ROOMS)}"
    assert modules == TOP_MODULES, f"top-level modules: {sorted(modules - TOP_MODULES)}"
    for room in ROOMS:
        doc = ast.get_docstring(ast.parse((TOP / room / "__init__.py").read_text()))
        assert doc, f"rlscale.{room} needs a docstring saying what the room holds"
