"""The command-line half of docs/first-plan.md (issue 24): its three commands run as
written, and the numbers its prose quotes are what they print.

The page's Python half is a doctest (tests/test_docs_pages.py).  The commands are read
from the fenced block after ``<!-- tutorial:commands -->``, so the page and this test
cannot drift apart; they run in a temporary folder whose ``examples`` is the
repository's (they name ``examples/pilot.csv`` relative to the repository root and
write ``fit.json`` and ``fit.png`` beside it).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from rlscale.optimize import FitResult, load_fit

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "first-plan.md"


def _commands() -> list[str]:
    text = PAGE.read_text()
    block = text.split("<!-- tutorial:commands -->", 1)[1].split("```bash\n", 1)[1]
    return [line for line in block.split("```", 1)[0].splitlines() if line.strip()]


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> tuple[Path, list[str]]:
    work = tmp_path_factory.mktemp("first-plan")
    (work / "examples").symlink_to(REPO / "examples")
    rlscale = [sys.executable, "-m", "rlscale"]
    outs = []
    for line in _commands():
        argv = shlex.split(line)
        assert argv[0] == "rlscale", line
        done = subprocess.run([*rlscale, *argv[1:]], cwd=work, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, f"{line}\n{done.stderr}"
        outs.append(done.stdout)
    return work, outs


def test_three_commands(ran) -> None:
    assert len(_commands()) == 3


def test_fit_command_writes_a_loadable_fit_and_a_figure(ran) -> None:
    pytest.importorskip("matplotlib")
    work, _ = ran
    fit = load_fit(work / "fit.json")
    assert isinstance(fit, FitResult) and fit.n_bootstrap == 200 and fit.warnings == ()
    assert (work / "fit.png").read_bytes()[:4] == b"\x89PNG"


def _row(out: str, name: str) -> tuple[float, float, float]:
    m = re.search(rf"^\s*{name}\s+(\S+)\s+\[(\S+), (\S+)\]$", out, re.M)
    assert m, f"no {name} row in\n{out}"
    return tuple(float(g) for g in m.groups())


def test_prose_quotes_what_the_plan_command_prints(ran) -> None:
    _, outs = ran
    prose = " ".join(PAGE.read_text().split())
    for name in ("environments", "trajectories"):
        value, lo, hi = _row(outs[1], name)
        quoted = f"{name} {value:.1f} [{lo:.1f}, {hi:.1f}]"
        assert quoted in prose, f"the page should say {quoted!r}"


def test_prose_quotes_what_the_decision_prints(ran) -> None:
    _, outs = ran
    out, prose = outs[2], " ".join(PAGE.read_text().split())
    # The decision's first line: the recommendation and why the sequence stopped there.
    first = out.splitlines()[0]
    m = re.match(r"# use the baseline \((.+?)\): (.+?) beats (.+?) with probability only "
                 r"(\S+) < 0\.95", first)
    assert m, out
    choice, to, frm, p = m.groups()
    assert (f"{to} beats {frm} with probability only {p} < 0.95, so the recommendation is "
            f'"use the baseline ({choice})"') in prose
    # The best plan found, printed beside it, and quoted with its η against the baseline.
    m = re.search(r"best plan found \(not recommended\): environments=(\S+), "
                  r"trajectories=(\S+); against (.+?): eta (\S+) \[(\S+), (\S+)\], "
                  r"P\(beats\) (\S+)$", out, re.M)
    assert m, out
    env, traj, against, eta, lo, hi, pb = m.groups()
    assert (f"environments {env}, trajectories {traj}: η = {float(eta):.2f} "
            f"[{float(lo):.2f}, {float(hi):.2f}] against {against}, P(beats) {pb}") in prose
