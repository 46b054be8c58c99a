"""``rlscale verify reward-law``: grid, fits, band, model comparison and files (issue 3)."""

from __future__ import annotations

import contextlib
import csv
import io
import json

import numpy as np
import pytest

from rlscale.cli import main
from rlscale.theory import reward
from rlscale.verification._gaussian_reward_law import EXACT_METHODS, reward_grid, verify_reward_law


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("reward-law")
    buf, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
        code = main(["verify", "reward-law", "--quick", "--out", str(out), "--seed", "3"])
    return code, buf.getvalue(), out


def test_cli_exit_code_summary_and_files(quick_run) -> None:
    code, stdout, out = quick_run
    assert code == 0
    assert "held-out R^2" in stdout and "band" in stdout and "model comparison" in stdout
    for name in ("results.json", "grid.csv", "heatmap.png", "collapse.png"):
        assert (out / name).is_file(), name
    for png in ("heatmap.png", "collapse.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_grid_covers_the_issue_ranges() -> None:
    m, k = reward_grid("quick")
    decades = np.log10(np.unique(m))
    assert decades.min() == 1 and decades.max() == 8
    assert np.all(np.diff(decades) <= 1 / 3 + 1e-12)  # >= 3 points a decade
    assert k.min() == pytest.approx(0.05) and k.max() == pytest.approx(50.0)
    # dense around the crossover: at least 5 points with K/log M in [0.5, 2] for every M
    for mm in np.unique(m):
        ratio = k[m == mm] / np.log(mm)
        assert np.sum((ratio >= 0.5) & (ratio <= 2.0)) >= 5
    assert len(reward_grid("full")[0]) > 2 * len(m)


def test_results_json_fits_band_and_comparison(quick_run) -> None:
    _, _, out = quick_run
    res = json.loads((out / "results.json").read_text())
    assert res["mode"] == "quick" and res["seed"] == 3
    methods = {row["method"] for row in res["r2"]}
    assert set(EXACT_METHODS) <= methods and "soft_bon" in methods and "pg" in methods
    assert {row["noise"] for row in res["r2"]} == {0.5, 1.0, 2.0}
    for row in res["r2"]:
        assert row["r2_min"] >= 0.95, row  # the goal is 0.97; the MC methods are noisier
        if row["method"] in EXACT_METHODS:
            assert row["r2_min"] >= 0.97, row
    band = res["band"]
    assert band["inside_proved"]
    assert reward.C_LO <= band["c_lo"] <= band["c_hi"] <= reward.C_HI
    assert band["c_hi"] == pytest.approx(np.sqrt(2), abs=1e-6)  # tilt with e^K << M
    comp = {row["model"]: row for row in res["comparison"]}
    law = comp["law_min"]
    for name, row in comp.items():
        if name not in ("law_min", "law_smooth_min"):
            assert law["aic"] < row["aic"] and law["bic"] < row["bic"], name
            assert law["loro_rmse"] < row["loro_rmse"], name
    mc = res["mc_check"]
    assert mc["points"] >= 20 and mc["max_abs_z"] < 4.5


def test_csv_reads_back(quick_run) -> None:
    _, _, out = quick_run
    res = json.loads((out / "results.json").read_text())
    with (out / "grid.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == res["n_points"]
    row = next(r for r in rows if r["method"] == "tilt" and float(r["noise"]) == 1.0)
    assert float(row["G"]) == pytest.approx(
        reward.gain(float(row["M"]), float(row["K"]), 1.0, "tilt"), rel=1e-12)
    assert {r["split"] for r in rows} == {"train", "test"}


# The --quick code path at toy sizes: enough for determinism and CLI = API,
# which do not depend on the sizes (the full quick run is checked above).
_TINY = {"per_decade": 1, "k_log": 6, "mc_points": 4, "mc_trials": 2000, "sub_m": (100.0,),
         "sub_ns": (2, 8), "soft_trials": 40, "pg_pools": 4, "pg_steps": 20}


def test_same_seed_same_report_and_the_cli_matches_the_api(tmp_path, monkeypatch) -> None:
    import rlscale.verification._gaussian_reward_law as rv

    monkeypatch.setitem(rv._SETTINGS, "quick", _TINY)

    def run(seed):
        rep = verify_reward_law("quick", rng=seed, figures=False)
        assert rep.files == {}
        return {k: v for k, v in rep.as_dict().items() if k != "seconds"}

    first = run(3)  # the CLI run below with the same seed is the determinism check
    assert run(4)["mc_check"] != first["mc_check"]
    # R² is undefined (None, JSON null) where the held-out gains are all equal.
    assert rv._r2(np.ones(3), np.array([1.0, 2.0, 3.0])) is None
    assert rv._r2(np.array([1.0, 3.0]), np.array([1.0, 3.0])) == 1.0
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["verify", "reward-law", "--seed", "3", "--out", str(tmp_path),
                     "--no-figures"])
    assert code == 0 and not (tmp_path / "heatmap.png").exists()
    cli = json.loads((tmp_path / "results.json").read_text())
    for key in ("r2", "band", "comparison", "mc_check", "seed", "n_points"):
        assert cli[key] == json.loads(json.dumps(first[key])), key


def test_bad_mode_and_cli_flags(tmp_path, monkeypatch) -> None:
    with pytest.raises(ValueError, match="mode must be one of glance, quick, full"):
        verify_reward_law("medium")
    with pytest.raises(ValueError, match="seed must be an integer >= 0 and <= 9223372036854775807; "
                                         "got seed=-1"):
        verify_reward_law("quick", rng=-1)
    with pytest.raises(TypeError, match="rng must be"):
        verify_reward_law("quick", rng="0")
    # User errors are one line on stderr, exit 2, and come before any computing:
    # the grid must not be evaluated when --out cannot be a directory.
    import rlscale.verification._gaussian_reward_law as rv

    def boom(*args, **kwargs):
        raise AssertionError("computed before checking --out")

    monkeypatch.setattr(rv, "reward_grid", boom)
    (tmp_path / "file").write_text("x")
    for argv, text in ((["--out", str(tmp_path / "file" / "sub")], "Not a directory"),
                       (["--seed", "-1", "--out", str(tmp_path / "o")],
                        "seed must be an integer >= 0 and <=")):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            assert main(["verify", "reward-law", *argv]) == 2
        lines = err.getvalue().strip().splitlines()
        assert len(lines) == 1 and text in lines[0], lines
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exc:
        main(["verify", "reward-law", "--quick", "--full"])
    assert exc.value.code == 2
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["verify", "reward-law", "--testbed", "--glance"]) == 2
    assert err.getvalue().count("\n") == 1 and "--glance is for the Gaussian" in err.getvalue()


def test_glance_flag_runs_the_glance_mode(tmp_path, monkeypatch, capsys) -> None:
    """``--glance`` reaches the library as ``mode="glance"`` (what ``rlscale report --quick``
    runs), for the Gaussian and the trainer experiments alike."""
    import rlscale.verification._gaussian_reward_law as rv
    import rlscale.verification._trainer_reward_law as tr

    seen = []

    class Done:
        def __init__(self) -> None:
            self.files: dict[str, str] = {}

        def summary(self) -> str:
            return "stub"

    def stub(mode, **kwargs):
        seen.append(mode)
        return Done()

    monkeypatch.setattr(rv, "verify_reward_law", stub)
    monkeypatch.setattr(tr, "verify_trainer_reward_law", stub)
    assert main(["verify", "reward-law", "--glance", "--out", str(tmp_path / "a")]) == 0
    assert main(["verify", "reward-law", "--trainer", "--glance", "--out",
                 str(tmp_path / "b")]) == 0
    assert seen == ["glance", "glance"]


@pytest.mark.slow
def test_full_mode(tmp_path) -> None:
    rep = verify_reward_law("full", out=tmp_path, rng=0)
    assert all(r["r2_min"] >= 0.97 for r in rep.r2 if r["method"] in EXACT_METHODS)
    assert rep.band["inside_proved"]
    assert rep.mc_check["max_abs_z"] < 5.0
