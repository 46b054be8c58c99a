"""From a CSV to a plan on the command line (issue 24): ``rlscale fit --out/--plot`` and
``rlscale allocate --fit``."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from rlscale.cli import main
from rlscale.optimize import AllocationProblem, FitResult, load_fit

COST = "N + D"


@pytest.fixture(scope="module")
def pilot(tmp_path_factory) -> Path:
    """A 2-axis factorial with replicate noise (a well-identified additive law)."""
    rng = np.random.default_rng(240)
    path = tmp_path_factory.mktemp("cli") / "pilot.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["N", "D", "seed", "loss"])
        for n in (1, 2, 4, 8, 16, 32, 64):
            for d in (1, 4, 16, 64):
                for seed in range(2):
                    loss = (0.3 + 2 * n ** -0.5 + 1.5 * d ** -0.4) * np.exp(rng.normal(0, 0.01))
                    w.writerow([n, d, seed, loss])
    return path


@pytest.fixture(scope="module")
def saved(pilot: Path) -> Path:
    out = pilot.with_name("fit.json")
    assert main(["fit", str(pilot), "--axes", "N,D", "--bootstrap", "60", "--jobs", "1",
                 "--out", str(out)]) == 0
    return out


def test_fit_out_writes_a_loadable_fit(saved: Path, pilot: Path) -> None:
    fit = load_fit(saved)
    assert isinstance(fit, FitResult) and fit.n_bootstrap == 60
    assert len(fit.bootstrap_laws()) >= 50
    assert set(fit.params) == {"floor", "coefficient[N]", "coefficient[D]", "exponent[N]",
                               "exponent[D]"}
    assert fit.params["exponent[N]"] == pytest.approx(0.5, abs=0.1)


def test_fit_plot_writes_a_figure(pilot: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "fit.png"
    assert main(["fit", str(pilot), "--axes", "N,D", "--bootstrap", "20", "--jobs", "1",
                 "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_allocate_from_a_saved_fit_prints_the_plan_with_intervals(saved: Path, capsys) -> None:
    capsys.readouterr()
    assert main(["allocate", "--fit", str(saved), "--cost", COST, "--budget", "400",
                 "--bound", "N=1,inf", "--bound", "D=1,inf"]) == 0
    out = capsys.readouterr().out
    # The plan is the fitted law's optimum, recomputed here independently of the CLI.
    fit = load_fit(saved)
    want = AllocationProblem(fit.law, COST, {"N": (1, None), "D": (1, None)}).allocate(400.0)
    row = next(line for line in out.splitlines() if line.split()[:1] == ["N"])
    assert float(row.split()[1]) == pytest.approx(want.values["N"], rel=1e-5)
    assert "90% intervals" in out and "bootstrap laws of the fit" in out
    band = next(line for line in out.splitlines() if line.strip().startswith("loss at"))
    lo, hi = (float(v) for v in band.split("[")[1].rstrip("]").split(","))
    assert lo <= want.loss <= hi
    assert "proportional" in out and "robust plan" in out


def test_allocate_from_a_fit_writes_plan_json(saved: Path, tmp_path: Path) -> None:
    import json

    assert main(["allocate", "--fit", str(saved), "--cost", COST, "--budget", "400",
                 "--confidence", "0.8", "--out", str(tmp_path)]) == 0
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert plan["uncertainty"]["confidence"] == 0.8
    assert plan["allocation"]["budget"] == 400.0


@pytest.mark.parametrize(("argv", "message"), [
    (["allocate", "--fit", "{fit}", "--budget", "10"], "--fit needs --cost"),
    (["allocate", "--fit", "{fit}", "--cost", COST, "--target", "0.5"], "give --budget"),
    (["allocate", "--cost", COST, "--budget", "10"], "belongs with --fit"),
    (["allocate", "--budget", "10"], "give an allocation spec"),
    (["allocate", "--fit", "{fit}", "--cost", COST, "--budget", "10", "--bound", "N=1"],
     "VAR=LOW,HIGH"),
    (["allocate", "--fit", "{pilot}", "--cost", COST, "--budget", "10"], "not JSON"),
])
def test_allocate_fit_errors_are_one_line(argv, message, saved: Path, pilot: Path,
                                          capsys) -> None:
    argv = [a.format(fit=saved, pilot=pilot) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_plot_refused_for_expression_fits(pilot: Path, capsys) -> None:
    assert main(["fit", str(pilot), "--axes", "N,D", "--expr", "E + A/N**a + B/D**b",
                 "--plot", "x.png"]) == 2
    assert "--plot draws built-in law fits" in capsys.readouterr().err
