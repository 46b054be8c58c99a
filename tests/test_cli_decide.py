"""``rlscale allocate --data``: the decision from the command line (issue 29)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from rlscale.cli import main
from rlscale.optimize import star_design
from rlscale.theory import AdditiveLaw

SPEC = """
[law]
family = "additive"
floor = 0.2
coefficients = { E = 1.0, k = 1.0 }
exponents = { E = 0.5, k = 0.5 }
[cost]
expression = "E + k"
[bounds]
E = { min = 1, max = 10000 }
k = { min = 1, max = 10000 }
"""


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    # A pilot from a law whose optimum (E/k ≈ 2.5) is far from proportional (E = k).
    root = tmp_path_factory.mktemp("decide")
    truth = AdditiveLaw(0.2, {"E": 2.0, "k": 0.5}, {"E": 0.5, "k": 0.5})
    rng = np.random.default_rng(0)
    with open(root / "pilot.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["E", "k", "seed", "loss"])
        for p in star_design({"E": 8, "k": 8}, {"E": [1, 2, 4, 8, 16, 32, 64],
                                                "k": [1, 2, 4, 8, 16, 32, 64]}):
            for s in range(3):
                w.writerow([p["E"], p["k"], s,
                            float(truth.loss(p)) * np.exp(0.03 * rng.standard_normal())])
    (root / "spec.toml").write_text(SPEC)
    return root / "spec.toml", root / "pilot.csv"


def test_allocate_with_data_recommends_and_writes_json(pilot, tmp_path, capsys) -> None:
    spec, data = pilot
    assert main(["allocate", str(spec), "--budget", "100", "--data", str(data), "--centre",
                 "E=8,k=8", "--bootstrap", "30", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "recommended" in out and "P(beats)" in out and "proportional" in out
    saved = json.loads((tmp_path / "recommendation.json").read_text())
    rec = saved["recommendation"]
    assert rec["choice"] == "plan" and rec["comparisons"]["proportional"]["p_beats"] >= 0.95


def test_allocate_without_data_says_it_is_the_plug_in(pilot, capsys) -> None:
    spec, _ = pilot
    assert main(["allocate", str(spec), "--budget", "100"]) == 0
    assert "plug-in plan" in capsys.readouterr().out


@pytest.mark.parametrize("extra, message", [
    (["--data", "{data}"], "--data needs --centre"),
    (["--centre", "E=8,k=8"], "--centre belongs with --data"),
    (["--data", "{data}", "--centre", "E:8"], "VAR=VALUE pairs"),
    (["--data", "{data}", "--centre", "E=8,k=8", "--loss-range", "0"], "LOW,HIGH"),
])
def test_decision_arguments_are_refused_in_one_line(pilot, capsys, extra, message) -> None:
    spec, data = pilot
    argv = ["allocate", str(spec), "--budget", "100", *(a.format(data=data) for a in extra)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
