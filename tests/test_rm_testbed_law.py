"""The testbed verification end to end on a toy grid: deterministic across jobs, resumable
from its checkpoints, files a script can read back, the CLI; the design's rules."""

from __future__ import annotations

import contextlib
import csv
import io
import json

import numpy as np
import pytest

from rlscale.cli import main

_TOY = {"cells": ("additive", "pool"), "seeds": 2, "m_decades": (1, 3), "m_per_decade": 1,
        "n_k": 6, "betas": 8, "pool": 2**9, "bon_ns": 10, "noises": (1.0,), "side_rms": (),
        "pg_noises": (1.0,), "pg_m": (10.0, 100.0, 1e3), "pg_steps": 30, "pg_batch": 8,
        "pg_betas": 2, "n_boot": 9}


@pytest.fixture
def toy(monkeypatch):
    import rlscale.verification._rm_testbed_design as design

    monkeypatch.setitem(design._SETTINGS, "quick", _TOY)
    from rlscale.verification._rm_testbed_law import verify_testbed_reward_law

    return verify_testbed_reward_law


@pytest.mark.slow  # about 30 s on a loaded machine: four toy runs
def test_testbed_is_deterministic_resumable_and_writes_its_files(toy, tmp_path):
    a = toy("quick", out=tmp_path / "a", rng=1, jobs=2, figures=True)
    b = toy("quick", rng=1, jobs=1, figures=False)
    ga = np.array([p["G"] if p["reached"] else np.nan for p in a.points])
    gb = np.array([p["G"] if p["reached"] else np.nan for p in b.points])
    assert np.array_equal(ga, gb, equal_nan=True) and np.nanmax(ga) > 0.1
    assert {(g["cell"], g["optimiser"]) for g in a.groups} == {
        (c, o) for c in ("additive", "pool") for o in ("soft", "bon", "pg")}
    # Resume: every task comes from its checkpoint, the results are the same.
    again = toy("quick", out=tmp_path / "a", rng=1, jobs=2, figures=False)
    assert again.resumed_tasks == 4
    assert json.dumps(again.groups) == json.dumps(a.groups)
    # A torn checkpoint is recomputed, not trusted.
    ck = sorted((tmp_path / "a" / "checkpoints").glob("*.json"))
    assert len(ck) == 4
    ck[0].write_bytes(b"torn")
    third = toy("quick", out=tmp_path / "a", rng=1, jobs=1, figures=False)
    assert third.resumed_tasks == 3 and json.dumps(third.groups) == json.dumps(a.groups)
    res = json.loads((tmp_path / "a" / "results.json").read_text())
    assert res["mode"] == "quick" and len(res["groups"]) == 6 and res["cpu_seconds"] > 0
    for name in ("phase.png", "local_gamma.png", "gain_vs_m.png"):
        assert (tmp_path / "a" / name).stat().st_size > 1000
    with open(tmp_path / "a" / "groups.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 6 and {"lomo_law", "lomo_plateau_m_free", "gamma"} <= set(rows[0])
    text = a.summary()
    assert "leave-one-M-out" in text and "pool" in text
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["verify", "reward-law", "--testbed", "--seed", "1", "--out",
                     str(tmp_path / "cli"), "--no-figures", "--jobs", "1"])
    assert code == 0
    cli = json.loads((tmp_path / "cli" / "results.json").read_text())
    assert cli["groups"] == json.loads(json.dumps(a.groups))


def test_testbed_rows_carry_the_scores_and_the_regime(toy):
    rep = toy("quick", rng=2, jobs=1, figures=False)
    assert sum(g["regime"] != "not scored" for g in rep.groups) >= 4
    for g in rep.groups:
        if g["regime"] == "not scored":  # pg on the toy grid may not reach K = 0.05
            assert g["lomo_winner"] is None and "not scored" in g["identification"]
            continue
        assert set(g["lomo_rmse"]) == {"law", "plateau_m_free", "plateau_per_m", "gao_bon_per_m",
                                       "gao_rl_per_m", "saturating", "saturating_md"}
        best = min((v, m) for m, v in g["lomo_rmse"].items() if v is not None)[1]
        assert g["lomo_winner"] == best
        assert g["regime"] in {"law", "saturating", "no M law", "interpolation"}
        assert g["law_beats_named_lomo"] == all(
            g["lomo_rmse"]["law"] < g["lomo_rmse"][m] for m in
            ("plateau_m_free", "plateau_per_m", "gao_bon_per_m", "gao_rl_per_m"))
        if not g["identified"]["b"]:
            assert g["law"]["b"] is None and g["law_ci"]["b"] is None
    for c in rep.cells:
        sel = [g for g in rep.groups if g["cell"] == c["cell"]]
        assert c["law_beats_named_lomo"] == pytest.approx(
            np.mean([g["law_beats_named_lomo"] for g in sel]))
        assert c["supports_law"] == (c["law_beats_named_lomo"] >= 0.8)


def test_testbed_bad_input(tmp_path):
    from rlscale.verification._rm_testbed_law import verify_testbed_reward_law

    with pytest.raises(ValueError, match="mode must be one of quick, full"):
        verify_testbed_reward_law("medium")
    with pytest.raises(TypeError, match="rng must be an int seed"):
        verify_testbed_reward_law("quick", rng=1.5)
    with pytest.raises(ValueError, match="jobs must be"):
        verify_testbed_reward_law("quick", jobs=0)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["verify", "reward-law", "--testbed", "--trainer"]) == 2
    assert "separate experiments" in err.getvalue()


def test_design_grid_and_bands():
    from rlscale.verification._rm_testbed_analysis import gamma_band, jackknife_interval
    from rlscale.verification._rm_testbed_design import CELLS, rm_grid, testbed_grid

    assert [c.name for c in CELLS] == ["additive", "mixed_k2", "mixed_k3", "rough_k3",
                                       "rough_k4", "short_k3", "pool"]
    m, k = testbed_grid("full", "rough_k3")
    assert m.tolist() == [10.0, 32.0, 100.0, 316.0, 1000.0, 3162.0, 10000.0, 31623.0, 1e5]
    assert k.size == 16 and k[-1] == pytest.approx(0.9 * 12 * np.log(8.0))
    mixed = next(c for c in CELLS if c.name == "mixed_k3")
    assert rm_grid("full", mixed) == [("bayes", 0.5), ("bayes", 1.0), ("bayes", 2.0),
                                      ("weak", 1.0), ("additive", 1.0)]
    assert ("additive", 1.0) not in rm_grid("full", CELLS[0])
    assert [gamma_band(g) for g in (0.19, 0.2, 0.99, 1.0)] == [
        "saturating", "log-like", "log-like", "power-like"]
    # Jackknife of a mean: the t-interval of the mean (t_{0.975, 3} = 3.182).
    x = np.array([1.0, 2.0, 4.0, 7.0])
    loo = np.array([np.delete(x, i).mean() for i in range(4)])
    se, lo, hi = jackknife_interval(np.array(x.mean()), loo)
    assert (lo, hi) == pytest.approx((3.5 - 3.182446 * se, 3.5 + 3.182446 * se))
