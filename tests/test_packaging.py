"""A regular (non-editable) build ships the card folders inside ``rlscale``."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(REPO)],
        check=True, capture_output=True, text=True, timeout=600,
    )
    (path,) = out.glob("rlscale-*.whl")
    return zipfile.ZipFile(path)


def test_wheel_maps_card_folders_into_rlscale(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    for card in ("theory", "optimize", "simulate", "proofs"):
        assert f"rlscale/{card}/__init__.py" in names
        assert f"rlscale/{card}/py.typed" in names
    assert "rlscale/py.typed" in names
    tops = {name.split("/")[0] for name in names}
    assert tops <= {"rlscale", "rlscale-0.1.0.dist-info"}, tops


def test_wheel_imports_outside_the_repository(
    wheel: zipfile.ZipFile, tmp_path: Path
) -> None:
    target = tmp_path / "site"
    wheel.extractall(target)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); sys.meta_path[:] = "
        "[f for f in sys.meta_path if 'editable' not in type(f).__module__]\n"
        "import rlscale.theory, importlib.util\n"
        "assert rlscale.theory.__file__.startswith(sys.argv[1]), rlscale.theory.__file__\n"
        "assert importlib.util.find_spec('theory') is None\n"
        "print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code, str(target)], cwd=tmp_path,
                         capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr
