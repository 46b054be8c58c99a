"""The README's install, into a fresh venv, runs from the clone's root (issue 24).

The README installs with ``pip install ".[plot,proofs]"`` (not editable): the installed
package, which maps the card folders in through package-dir, must be what ``python``
imports from the repository root -- no folder there may shadow it.  Downloading every
dependency would take minutes and the network, so the fresh venv sees this
environment's third-party packages through a ``.pth`` line (no ``rlscale``: that is
installed here only as an editable finder, which a ``.pth`` path does not run) and pip
installs just rlscale with ``--no-deps``.  The build is the README's, in pip's isolated
build environment (pyproject's ``setuptools>=68`` and ``wheel``, fetched as the README's
command fetches them: the venv's own setuptools 65 cannot build it without isolation),
and so are the wheel, the package-dir mapping and the import; only the download of the
runtime dependencies is not.  ~9 s wall at load 7, so it runs by default; without a
package index it skips, saying so.  The main job's last command, ``rlscale report`` on its
defaults, then runs from that install's console script (the README's and docs/index.md's
first block, whose install and venv steps are the fixture's).
"""


from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README_INSTALL = 'pip install ".[plot,proofs]"'

OFFLINE = ("No matching distribution", "Could not find a version", "NewConnectionError",
           "Temporary failure in name resolution", "Network is unreachable")


def test_readme_still_installs_this_way() -> None:
    assert README_INSTALL in (REPO / "README.md").read_text()


@dataclass(frozen=True)
class Installed:
    """The fresh venv the README's install made: its interpreter and site-packages."""

    python: Path
    site: Path


@pytest.fixture(scope="module")
def readme_venv(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    if sys.prefix == sys.base_prefix:
        pytest.skip("needs to run inside a venv")
    tmp_path = tmp_path_factory.mktemp("readme-install")
    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env)
    py = env / "bin" / "python"
    site = Path(subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "_parent_env.pth").write_text(sysconfig.get_path("purelib") + "\n")
    build = subprocess.run(
        [py, "-m", "pip", "install", "-q", "--no-deps", f"{REPO}[plot,proofs]"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300)
    if build.returncode and any(m in build.stderr for m in OFFLINE):
        pytest.skip("no package index for pip's build environment (setuptools>=68, wheel): "
                    + build.stderr.strip().splitlines()[-1])
    assert build.returncode == 0, build.stderr[-3000:]
    return Installed(py, site)


def test_readme_install_imports_the_installed_package_from_the_root(
        readme_venv: Installed) -> None:
    code = ("import rlscale, rlscale.theory, rlscale.optimize\n"
            "from rlscale.theory import check_real\n"
            "print(rlscale.__file__); print(rlscale.theory.__file__)\n")
    run = subprocess.run([readme_venv.python, "-c", code], capture_output=True, text=True,
                         cwd=REPO, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    top, theory = (Path(p) for p in run.stdout.split())
    # Both come from the fresh venv's site-packages, not from the clone.
    site = readme_venv.site
    assert top.is_relative_to(site) and theory.is_relative_to(site), run.stdout
    assert theory.parent.name == "theory" and theory.parent.parent.name == "rlscale"


def test_readme_main_job_runs_from_the_install(readme_venv: Installed,
                                               tmp_path: Path) -> None:
    """The last command of README.md's (and docs/index.md's) main job, ``rlscale report``
    on its built-in defaults, by the console script the install wrote: the default
    report, figures and all, in a fresh folder (about 40 CPU s)."""
    script = readme_venv.python.parent / "rlscale"
    assert script.is_file(), "the install wrote no rlscale console script"
    run = subprocess.run([script, "report"], capture_output=True, text=True, cwd=tmp_path,
                         timeout=1800, env={**os.environ, "MPLBACKEND": "Agg"})
    assert run.returncode == 0, run.stderr[-3000:]
    out = tmp_path / "rlscale-report"
    assert (out / "index.html").is_file() and (out / "index.md").is_file()
    results = json.loads((out / "results.json").read_text())
    # The default, not --quick: the trainer's reward law at its default grid.
    assert results["config"]["reward_law_trainer"]["mode"] == "quick"
    assert results["efficiency"]["recommendation"]["choice"], results["efficiency"].keys()
    assert len(list(out.rglob("*.png"))) >= 10  # the report writes 13, some in subfolders
