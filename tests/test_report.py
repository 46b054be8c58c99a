"""``rlscale report``: configuration, output directory rules, and one --quick run."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlscale._document import format_value as _fmt
from rlscale.files._staging import LOCK, MARKER, STAGING_MARKER, open_staging, publish
from rlscale.report import DEFAULTS, load_config
from rlscale.report._steps import Shared, prune_results, run_spec

REPO = Path(__file__).resolve().parents[1]


def test_example_config_is_the_defaults() -> None:
    assert load_config(REPO / "examples" / "report.toml") == load_config()
    assert load_config() == DEFAULTS


def test_config_rejects_unknown_keys_and_bad_types(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[costs]\nenvironmnet = 3.0\n")
    with pytest.raises(ValueError, match=r"unknown report config key 'costs\.environmnet'"):
        load_config(bad)
    bad.write_text("[allocation]\nbudget = 'lots'\n")
    with pytest.raises(ValueError, match=r"allocation\.budget must be float"):
        load_config(bad)
    bad.write_text("[allocation]\nbudget = -5\n")
    with pytest.raises(ValueError, match=r"allocation\.budget must be >= 230\.4; got "
                                         r"allocation\.budget=-5"):
        load_config(bad)


def test_config_file_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(OSError, match=r"report config .*missing\.toml: No such file"):
        load_config(tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("x = \n")
    with pytest.raises(ValueError, match=r"report config .*broken\.toml is not valid TOML"):
        load_config(broken)


def test_config_override_and_sweep_tables(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[costs]\ntrajectory = 1\n[sweep.axes]\nenvironments = [1, 2]\n"
                   "tasks_per_environment = [2, 4]\ntrajectories_per_task = [4]\n"
                   "[sweep.train]\nepochs = 2\n")
    config = load_config(cfg, quick=True)
    trajectory = config["costs"]["trajectory"]  # an integer where a float is due
    assert trajectory == 1.0 and type(trajectory) is float
    assert config["sweep"]["axes"] == {"environments": [1, 2], "tasks_per_environment": [2, 4],
                                       "trajectories_per_task": [4]}
    assert config["sweep"]["train"] == {"epochs": 2}
    assert config["fit"]["bootstrap"] == 200  # from --quick


@pytest.mark.parametrize(("text", "match"), [
    # The baseline (E=8, t=4 fixed, k >= 2) costs 20*8 + 2*32 + 0.1*64 = 230.4 at least.
    ("[allocation]\nbudget = 100.0\n", r"allocation\.budget must be >= 230\.4"),
    ("[allocation]\nbudgets = [1.0, 100.0, 4]\n", r"allocation\.budgets\[0\] must be >= 22\.2"),
    ("[allocation]\nbudgets = [200.0, 2000.0]\n", r"allocation\.budgets must be \[low, high, "),
    ("[efficiency]\nseeds = ['a']\n", r"efficiency\.seeds"),
    ("[efficiency]\nladder = [true]\n", r"efficiency\.ladder"),
    ("[efficiency]\nseeds = [3, 3]\n", r"efficiency\.seeds must list at least two distinct"),
    ("[fit]\nconfidence = 1.5\n", r"fit\.confidence must be > 0 and < 1"),
    ("[fit]\nbootstrap = -1\n", r"fit\.bootstrap"),
    ("[fit]\nlaw = 'multiplicative'\n", r"fit\.law must be 'additive'"),
    ("[sweep]\nseeds = [-1]\n", r"seeds"),
    ("[synthesis]\nrho = 0.0\n", r"synthesis\.rho must be > 0"),
    ("seed = -3\n", r"seed must be an integer >= 0"),
    ("[sweep.axes]\nenvironments = [1, 2]\n", r"must vary each; tasks_per_environment takes "
                                                r"only \[4\]"),
])
def test_bad_config_is_refused_before_any_work(tmp_path: Path, text: str, match: str) -> None:
    # Every check runs in load_config, not minutes later in the step that uses the value.
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    with pytest.raises((ValueError, TypeError), match=match):
        load_config(bad)


def test_fmt_signs_infinities_and_marks_missing_values() -> None:
    assert (_fmt(math.inf), _fmt(-math.inf), _fmt(None), _fmt(0.123456)) == (
        "∞", "−∞", "—", "0.1235")


def test_interrupted_staging_keeps_only_resumable_runs(tmp_path: Path) -> None:
    staging = open_staging(tmp_path / "out")  # creates it, with its marker
    (staging / "reward-law").mkdir(parents=True)
    (staging / "reward-law" / "heatmap.png").write_text("stale")
    (staging / "index.md").write_text("stale")
    (staging / MARKER).write_text("{}")
    (staging / "sweep.csv").write_text("runs")
    (staging / ".index.md.123.ab.tmp").write_text("a write a kill interrupted")
    open_staging(tmp_path / "out")  # the same process resumes it
    assert sorted(p.name for p in staging.iterdir()) == [LOCK, STAGING_MARKER, "sweep.csv"]
    assert (staging / "sweep.csv").read_text() == "runs"


def test_runs_come_back_in_spec_order_and_foreign_runs_are_pruned(tmp_path: Path) -> None:
    from rlscale.sweep._run import _render, parse_spec, read_results, run_sweep

    train = {"epochs": 1, "grid_size": 4, "eval_environments": 2}
    old = parse_spec({"design": "grid", "seeds": [0], "axes": {"environments": [4]},
                      "train": train})
    new = parse_spec({"design": "grid", "seeds": [0], "axes": {"environments": [1, 2]},
                      "train": train})
    path = tmp_path / "sweep.csv"
    run_sweep(old, path, progress=False)  # an earlier, interrupted report's run
    run_sweep(new, path, progress=False)
    # Parallel workers finish in any order: the file may hold the runs reversed.
    path.write_text(_render(read_results(path)[::-1]))
    shared = Shared()
    rows = run_spec(new, path, False, shared)
    assert [r["environments"] for r in rows] == [1, 2]
    prune_results(path, shared.run_ids[path])
    assert [r["environments"] for r in read_results(path)] == [1, 2]


def test_refuses_to_overwrite_a_foreign_directory(tmp_path: Path) -> None:
    foreign = tmp_path / "thesis"
    foreign.mkdir()
    (foreign / "chapter1.tex").write_text("precious")
    out = subprocess.run([sys.executable, "-m", "rlscale", "report", "--out", str(foreign)],
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert "not an rlscale report" in out.stderr
    assert (foreign / "chapter1.tex").read_text() == "precious"


def test_a_second_report_into_the_same_directory_is_refused(tmp_path: Path) -> None:
    from rlscale.report import run_report

    staging = open_staging(tmp_path / "out")
    (staging / "sweep.csv").write_text("a live run's results")
    (staging / LOCK).write_text(f"{os.getppid()}\n")  # a live process holds it
    with pytest.raises(ValueError, match=r"another rlscale report \(pid \d+\) is writing"):
        run_report(tmp_path / "out", quick=True, progress=False)
    assert (staging / "sweep.csv").read_text() == "a live run's results"


def test_a_dead_runs_lock_is_taken_over(tmp_path: Path) -> None:
    from rlscale.files._staging import close_staging

    staging = open_staging(tmp_path / "out")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (staging / LOCK).write_text(dead + "\n")
    open_staging(tmp_path / "out")
    assert (staging / LOCK).read_text().strip() == str(os.getpid())
    close_staging(staging)
    assert not (staging / LOCK).exists()


def test_publish_replaces_an_old_report(tmp_path: Path) -> None:
    old = tmp_path / "report"
    old.mkdir()
    (old / MARKER).write_text("{}")  # a report from before manifests
    (old / "stale.png").write_text("old")
    new = open_staging(old)
    (new / "index.md").write_text("new")
    outcome = publish(new, old)
    assert (old / "index.md").read_text() == "new"
    assert not (old / "stale.png").exists()
    assert not new.exists()
    assert sorted(p.name for p in old.iterdir()) == [MARKER, "index.md"]
    assert json.loads((old / MARKER).read_text())["files"] == [MARKER, "index.md"]
    assert (outcome.kept, outcome.left) == ([], None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]


_TINY_TRAINER = {"n_opt": 3, "n_rm": 3, "m_per_decade": 1, "n_k": 4, "seeds": 1, "betas": 8,
                 "bon_pool": 200, "pg_noises": (1.0,), "pg_m": (100.0,), "pg_betas": 2,
                 "pg_steps": 5, "boot": 3, "max_nfev": 50, "ident_boot": 19}


@pytest.mark.slow  # ~5 s of CPU on a toy grid, but 15-30 s wall here (worker start-up, load)
def test_reward_law_trainer_section(tmp_path: Path, monkeypatch) -> None:
    # The step only calls the library; its section and document say what the library says.
    import rlscale.verification._trainer_reward_law as tr
    from rlscale._document import Document
    from rlscale.report._document_trainer_law import trainer_law_section
    from rlscale.report._steps import reward_law_trainer_step

    monkeypatch.setitem(tr._SETTINGS, "glance", _TINY_TRAINER)  # --quick's trainer mode
    monkeypatch.setattr(tr, "NOISES", (1.0,))
    reports = []
    library = tr.verify_trainer_reward_law

    def spy(*args, **kwargs):
        reports.append((args, kwargs, library(*args, **kwargs)))
        return reports[-1][2]

    monkeypatch.setattr(tr, "verify_trainer_reward_law", spy)
    from dataclasses import replace

    from rlscale.report._config_tree import ReportConfig
    from rlscale.report._outcomes import Inputs

    config = ReportConfig.load(quick=True)
    outcome = reward_law_trainer_step(config, Inputs(tmp_path))
    sec = outcome.as_dict()
    (args, kwargs, rep), = reports  # one library call, with the report's seed and mode
    assert args == ("glance",) and kwargs["rng"] == config.seed
    direct = json.loads(json.dumps(rep.as_dict()))
    assert sec["enabled"] and all(sec[k] == direct[k] for k in ("r2", "plan", "breaks"))
    for rel in sec["files"].values():  # relative to the report, inside its reward-law/
        assert rel.startswith("reward-law/trainer/") and (tmp_path / rel).is_file()
    from rlscale.files._atomic import to_jsonable

    json.dumps(to_jsonable(sec), allow_nan=False)  # results.json holds it as strict JSON
    doc = Document("t")
    trainer_law_section(doc, outcome)
    md = doc.to_markdown()
    assert "1b. Reward optimisation in the RL trainer" in md
    for row in sec["r2"]:
        assert f"| {row['optimiser']} | {row['capacity']} |" in md
    assert "optimisation_only" in md and "KL per RL step" in md
    config = replace(config, reward_law_trainer=replace(config.reward_law_trainer,
                                                        enabled=False))
    off = reward_law_trainer_step(config, Inputs(tmp_path))
    assert off.as_dict() == {"enabled": False}
    doc = Document("t")
    trainer_law_section(doc, off)
    assert "disabled in the configuration" in doc.to_markdown()


def test_reward_law_trainer_config_is_checked(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[reward_law_trainer]\nmode = 'medium'\n")
    with pytest.raises(ValueError,
                       match=r"reward_law_trainer\.mode must be 'glance', 'quick' or 'full'"):
        load_config(bad)
    bad.write_text("[reward_law_trainer]\nenabled = 1\n")
    with pytest.raises(ValueError, match=r"reward_law_trainer\.enabled must be bool"):
        load_config(bad)


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "rlscale", "report", "--quick", "--no-progress", "--out",
         str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "recommendation: " in proc.stdout and "realised η" in proc.stdout
    return out


def test_quick_report_writes_every_file(quick_report: Path) -> None:
    for name in ("index.md", "index.html", "results.json", "config.toml", MARKER,
                 "sweep.csv", "fits.png", "allocation.png", "efficiency.png", "realised.png",
                 "reward-law/heatmap.png", "reward-law/collapse.png",
                 "reward-law/trainer/results.json", "reward-law/trainer/gold_vs_kl.png"):
        assert (quick_report / name).is_file(), name
    assert not list(quick_report.parent.glob(".*partial*"))
    # Every name the report writes is one that resuming may remove (and no other).
    from rlscale.files._staging import _is_output

    assert all(_is_output(p.name) for p in quick_report.iterdir())
    listed = json.loads((quick_report / MARKER).read_text())["files"]
    written = sorted(str(p.relative_to(quick_report)) for p in quick_report.rglob("*")
                     if p.is_file())
    assert listed == written
    html = (quick_report / "index.html").read_text()
    assert "data:image/png;base64," in html
    assert 'src="fits.png"' not in html  # self-contained
    md = (quick_report / "index.md").read_text()
    for heading in ("Summary of findings", "1. Reward", "1b. Reward optimisation in the RL",
                    "2. Trainer sweep", "3. Per-axis",
                    "4. Compute-optimal", "5. The recommendation", "6. Inference budget",
                    "7. Machine-checked", "Caveats"):
        assert heading in md


def test_quick_report_numbers(quick_report: Path) -> None:
    def strict(token: str) -> None:
        raise AssertionError(f"results.json holds the non-JSON constant {token}")

    res = json.loads((quick_report / "results.json").read_text(), parse_constant=strict)
    band = res["reward_law"]["band"]
    assert 0 < band["c_lo"] <= band["c_hi"]
    assert band["proved_c_lo"] <= band["c_lo"] and band["c_hi"] <= band["proved_c_hi"]
    assert res["sweep"]["runs"] == len(res["sweep"]["rows"]) > 0
    fit = res["fit"]["result"]
    assert set(res["fit"]["impact_ordering"]) == {
        "environments", "tasks_per_environment", "trajectories_per_task"}
    assert fit["intervals"], "bootstrap intervals missing"
    plan = res["allocation"]["plan"]
    assert plan["kkt_residual"] < 1e-6
    assert plan["cost"] <= res["allocation"]["budget"] * (1 + 1e-9)
    pred, real = res["efficiency"]["predicted"], res["efficiency"]["realised"]
    assert pred["eta"] >= 1.0 - 1e-9  # the optimum is never worse than the baseline
    assert real["eta_bound"] in ("exact", "at most", "at least", "not estimable")
    assert (real["eta"] is None) == (real["eta_bound"] == "not estimable")
    # η is what its definition says, recomputed from the reported costs.
    assert pred["eta"] == pytest.approx(pred["baseline_cost"] / pred["optimal_budget"],
                                        rel=1e-12)
    assert pred["baseline_cost"] <= pred["budget"] * (1 + 1e-9)
    # The headline is the recommendation against the strongest baseline (issue 29).
    eff = res["efficiency"]
    rec = eff["recommendation"]
    assert eff["strongest"] == rec["strongest"] and rec["default"] == "proportional"
    assert set(eff["comparisons"]) == {"k only", eff["strongest"]}
    assert rec["status"] in ("plan", "baseline", "fallback")
    taken = [st for st in rec["steps"] if st["taken"]]
    assert all(st["p_beats"] >= rec["probability"] for st in taken)
    assert (rec["choice"] == "plan") == (bool(rec["steps"]) and rec["steps"][-1]["to"] == "plan"
                                         and rec["steps"][-1]["taken"])
    assert rec["reason"].startswith("use the baseline") == (rec["choice"] != "plan")
    md = (quick_report / "index.md").read_text()
    first = md.split("## Summary of findings", 1)[1].split("(2)", 1)[0]
    assert ("Recommendation: the plan" in first) == (rec["choice"] == "plan")
    for c in eff["candidate"]["comparisons"].values():  # P and η of one judgement
        lo, hi = c["eta_interval"]
        assert 0 <= c["p_beats"] <= 1 and lo <= hi
        assert -1.0 <= c["gain_interval"][0] <= c["gain"] <= c["gain_interval"][1] <= 1.0
    for comp in eff["comparisons"].values():
        if comp["realised"]["eta"] is None:
            assert not comp["intervals_overlap"]
            continue
        lo, hi = comp["realised"]["interval"]
        assert lo <= hi and lo > 0
        assert comp["intervals_overlap"] == (
            comp["predicted"]["interval"][0] <= hi and lo <= comp["predicted"]["interval"][1])
        assert comp["realised"]["eta"] == pytest.approx(
            comp["baseline"]["cost"] / comp["realised"]["iso_cost"], rel=1e-12)
    # The robust plan's expected loss lies in the loss's range (issue 29, item 6).
    assert 0.0 <= eff["plan"]["robust"]["expected_loss"] <= 1.0
    assert abs(eff["plan"]["robust_gain"]) <= 1.0
    # Equal updates: the baseline really was retrained with the plan's number of updates.
    from rlscale.sweep._run import read_results

    runs = read_results(quick_report / "efficiency-baseline.csv")
    for comp in eff["comparisons"].values():
        b, n = comp["baseline"], comp["equal_updates"]["updates"]
        same = [r for r in runs if (r["environments"], r["tasks_per_environment"],
                                    r["trajectories_per_task"], r["updates"]) ==
                (b["E"], b["t"], b["k"], n)]
        assert len(same) == len(res["config"]["efficiency"]["seeds"])
        steps = comp["by_env_steps"]
        if steps["eta"] is not None:
            assert steps["eta"] == pytest.approx(steps["baseline_cost"] / steps["iso_cost"],
                                                 rel=1e-12)
    bounds = res["config"]["allocation"]["bounds"]
    assert all(row["values"][v] <= bounds[v] * (1 + 1e-9)
               for row in eff["baselines"].values() for v in ("E", "t", "k"))
    if real["eta"] is not None:
        assert real["eta"] == pytest.approx(real["baseline"]["cost"] / real["iso_loss_cost"],
                                            rel=1e-12)
    # The equal-cost comparison really is at (nearly) equal cost.
    assert abs(math.log(real["equal_cost"]["cost"] / real["baseline"]["cost"])) < 0.1
    assert res["proofs"]["all_hold"] is True
    # The config used is written back and reads as the quick configuration.
    assert load_config(quick_report / "config.toml") == load_config(quick=True)


def test_document_tables_escape_pipes_and_align_numbers() -> None:
    from rlscale._document import Document

    doc = Document("t")
    doc.table(["claim", "value"], [["|x| ≤ 1", 0.25]])
    assert "| \\|x\\| ≤ 1 | 0.25 |" in doc.to_markdown()
    html = doc.to_html()
    assert '<td>|x| ≤ 1</td><td class="num">0.25</td>' in html


def test_fits_figure_band_is_the_per_point_percentile_band() -> None:
    # The figure's band is computed with one vectorised loss call per law; it must
    # equal the per-law, per-point percentiles (FitResult.predict_band's definition).
    import numpy as np

    from rlscale.report._figures import _band
    from rlscale.theory import AdditiveLaw

    rng = np.random.default_rng(5)
    axes = ("environments", "tasks_per_environment", "trajectories_per_task")
    laws = [AdditiveLaw(0.1 + 0.05 * rng.random(),
                        coefficients={a: 0.5 + rng.random() for a in axes},
                        exponents={a: 0.2 + 0.5 * rng.random() for a in axes})
            for _ in range(25)]
    grid = np.geomspace(1.0, 64.0, 7)
    points = {"environments": grid, "tasks_per_environment": np.full(7, 4.0),
              "trajectories_per_task": np.full(7, 8.0)}
    low, high = _band(laws, points, 0.9)
    per_point = np.array([[law.loss(environments=float(g), tasks_per_environment=4.0,
                                    trajectories_per_task=8.0) for g in grid] for law in laws])
    assert np.allclose(low, np.percentile(per_point, 5, axis=0), rtol=1e-13)
    assert np.allclose(high, np.percentile(per_point, 95, axis=0), rtol=1e-13)
    assert np.all(low < high)
    assert _band(laws[:19], points, 0.9) is None  # predict_band's 20-law minimum


def test_efficiency_training_batches_points_resumes_and_matches_the_sweep(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The efficiency step's one sweep for many points: each point's rows are what a sweep
    of that point alone gives, a repeated point is trained once, a second call trains
    nothing, and the run ids are recorded in point order."""
    import rlscale.sweep._pool as pool
    from rlscale.report._config import load_config
    from rlscale.report._config_tree import as_tree
    from rlscale.report._outcomes import Inputs
    from rlscale.report._steps import _train_points
    from rlscale.sweep._run import expand, parse_spec

    config = load_config(quick=True)
    config["sweep"]["train"] = {"epochs": 1, "grid_size": 4, "eval_environments": 2}
    cfg = as_tree(config)
    trained: list[int] = []
    real = pool.execute

    def counting(configs, jobs, scheduler=None):
        trained.append(len(configs))
        return real(configs, jobs, scheduler)

    monkeypatch.setattr(pool, "execute", counting)
    shared = Shared()
    shared.jobs = 1
    from rlscale.report._steps import TrainPoint

    # A point is a TrainPoint or its plain table (the efficiency step's).
    points = [{"E": 1, "t": 2, "k": 2}, TrainPoint(E=1, t=2, k=2, steps=1),
              {"E": 1, "t": 2, "k": 2}]
    inputs = Inputs(tmp_path, False, shared)
    rows = _train_points(cfg, inputs, "eff", points, (0, 1))
    assert trained == [4]  # 3 points x 2 seeds, one of them twice
    assert [[r["seed"] for r in g] for g in rows] == [[0, 1]] * 3
    assert rows[0] == rows[2] and rows[1][0]["updates"] == 1
    # Independently: each configuration of a sweep of that point alone, trained by itself.
    alone = [pool.run_one(r["config"]) for r in expand(parse_spec({
        "design": "grid", "seeds": [0, 1], "algorithms": config["sweep"]["algorithms"][:1],
        "axes": {"environments": [1], "tasks_per_environment": [2],
                 "trajectories_per_task": [2]},
        "train": {**config["sweep"]["train"], "unit_cost_environment": config["costs"][
            "environment"], "unit_cost_task": config["costs"]["task"],
            "unit_cost_trajectory": config["costs"]["trajectory"]}}))]
    assert [r["success"] for r in alone] == [r["success"] for r in rows[0]]
    assert [r["run_id"] for r in alone] == [r["run_id"] for r in rows[0]]
    again = _train_points(cfg, inputs, "eff", points, (0, 1))
    assert trained[-1] == 0 and again == rows
    assert list(shared.run_ids[tmp_path / "eff.csv"]) == [
        r["run_id"] for g in rows[:2] for r in g]


def test_quick_report_without_figures_needs_no_matplotlib(tmp_path: Path) -> None:
    # Issue 24: --no-figures skips the report's figures, and with them matplotlib (blocked
    # here as if the `plot` extra were not installed); the numbers are all still there.
    block = ("import sys\nclass _B:\n    def find_spec(self, name, path=None, target=None):\n"
             "        if name.split('.')[0] == 'matplotlib':\n"
             "            raise ModuleNotFoundError(name, name=name)\n"
             "sys.meta_path.insert(0, _B())\nfrom rlscale.cli import main\n"
             f"raise SystemExit(main(['report', '--quick', '--no-figures', '--no-progress', "
             f"'--out', {str(tmp_path / 'out')!r}]))\n")
    proc = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = tmp_path / "out"
    assert not list(out.rglob("*.png"))
    md = (out / "index.md").read_text()
    assert ".png" not in md
    assert "Figures were not drawn (rlscale report --no-figures)." in md
    assert json.loads((out / "results.json").read_text())["config"]["figures"] is False
    assert "recommendation: " in proc.stdout


def test_quick_report_values_are_those_of_main_before_the_typed_report(
        quick_report: Path) -> None:
    # Issue 25: the report's steps and document moved to typed outcomes; results.json
    # holds the same values, section by section (tests/_report_reference.py; timings aside).
    from _report_reference import REFERENCE, digests

    got = digests(json.loads((quick_report / "results.json").read_text()))
    want = json.loads(REFERENCE.read_text())
    assert list(got) == list(want)
    changed = [k for k in want if got[k] != want[k]]
    assert not changed, (f"results.json sections {changed} changed; "
                         "python tests/_report_reference.py OLD NEW lists where")
