"""Sweeps: spec expansion, atomic resumable results, refusal of foreign files, Dask."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlscale.cli import main
from rlscale.sweep._run import COLUMNS, expand, load_spec, parse_spec, read_results, run_sweep

REPO = Path(__file__).resolve().parents[1]
TINY = {"epochs": 1, "eval_environments": 4, "eval_tasks_per_environment": 2, "grid_size": 4,
        "tasks_per_step": 4}


def _spec(**over):
    data = {"design": "grid", "seeds": [0, 1], "base": {"environments": 2},
            "axes": {"environments": [1, 2], "tasks_per_environment": [1, 2],
                     "trajectories_per_task": [2]},
            "train": dict(TINY)}
    data.update(over)
    return parse_spec(data)


def test_designs_expand_to_the_expected_runs():
    assert len(expand(_spec())) == 2 * 2 * 1 * 2
    star = parse_spec({"design": "axes", "seeds": [0, 1, 2],
                       "base": {"environments": 4, "tasks_per_environment": 2,
                                "trajectories_per_task": 4},
                       "axes": {"environments": [1, 4, 16], "trajectories_per_task": [2, 4]},
                       "train": TINY})
    runs = expand(star)
    assert len(runs) == (3 + 1) * 3  # base, E=1, E=16, k=2
    assert len({r["run_id"] for r in runs}) == len(runs)


def test_default_example_spec_has_about_sixty_runs_spanning_a_decade_per_axis():
    spec = load_spec(REPO / "examples" / "sweep.toml")
    runs = expand(spec)
    assert 50 <= len(runs) <= 70
    for values in spec.axes.values():
        assert max(values) / min(values) >= 10


@pytest.mark.parametrize(
    ("over", "match"),
    [
        ({"design": "random"}, "design must be 'axes' or 'grid'"),
        ({"seeds": []}, "seeds must be a non-empty list"),
        ({"axes": {"environments": [0, 2]}}, "axes.environments must hold integers >= 1"),
        ({"axes": {"trajectories_per_task": [1]}}, "integers >= 2"),
        ({"axes": {"gpus": [1]}}, "unknown \\[axes\\] key"),
        ({"algorithms": ["ppo"]}, "algorithm must be one of reinforce"),
        ({"train": {"seed": 3}}, "must not set"),
        ({"train": {"bogus": 3}}, "unknown TrainConfig field"),
        ({"color": "red"}, "unknown sweep spec key"),
        ({"algorithms": 3}, "algorithms must be a non-empty list of algorithm names"),
        ({"algorithms": []}, "algorithms must be a non-empty list"),
        ({"base": 3}, "\\[base\\] must be a table"),
        ({"axes": [1, 2]}, "\\[axes\\] must be a table"),
        ({"train": 5}, "\\[train\\] must be a table"),
        ({"train": {"frontier": 0.5}}, "frontier must be"),
        # Repeated values would run (and record) the same configuration twice.
        ({"seeds": [0, 1, 0]}, "seeds must not repeat a value; got seeds=\\[0, 1, 0\\]"),
        ({"axes": {"environments": [1, 2, 2]}}, "axes.environments must not repeat"),
        ({"algorithms": ["grpo", "grpo"]}, "algorithms must not repeat"),
    ],
)
def test_bad_specs_are_refused_before_running(over, match):
    with pytest.raises((ValueError, TypeError), match=match):
        _spec(**over)


def test_sweep_writes_all_runs_and_resume_repeats_nothing(tmp_path):
    out = tmp_path / "results.csv"
    spec = _spec()
    rows = run_sweep(spec, out, progress=False)
    assert len(rows) == 8
    text = out.read_text()
    assert text.splitlines()[0] == ",".join(COLUMNS)
    back = read_results(out)
    assert [r["run_id"] for r in back] == [r["run_id"] for r in rows]
    for r in back:
        assert r["tasks"] == r["environments"] * r["tasks_per_environment"]
        assert r["trajectories"] == r["tasks"] * r["trajectories_per_task"]
        assert r["loss"] == pytest.approx(1 - r["success"])
    called = []
    run_sweep(spec, out, progress=False, on_row=called.append)
    assert called == [] and out.read_text() == text


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("name,score\nalice,3\n", "not an rlscale sweep results file"),
        ("", "is empty"),
        (",".join(COLUMNS) + "\n1,2,3\n", "corrupt: line 2 has 3 fields"),
    ],
)
def test_foreign_or_corrupt_results_are_refused_and_left_untouched(tmp_path, content, match):
    out = tmp_path / "results.csv"
    out.write_text(content)
    with pytest.raises(ValueError, match=match):
        run_sweep(_spec(), out, progress=False)
    assert out.read_text() == content


def test_cli_reports_a_foreign_file_in_one_line(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text('design = "grid"\nseeds = [0]\n[axes]\nenvironments = [1]\n'
                    "[train]\nepochs = 1\neval_environments = 2\n")
    out = tmp_path / "r.csv"
    out.write_text("a,b\n1,2\n")
    assert main(["sweep", str(spec), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "not an rlscale sweep results file" in err and len(err.strip().splitlines()) == 1
    assert out.read_text() == "a,b\n1,2\n"


def test_killed_sweep_resumes_without_losing_or_repeating_runs(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(
        'design = "grid"\nseeds = [0, 1, 2, 3, 4, 5]\n[axes]\nenvironments = [2, 3]\n'
        "[train]\nepochs = 2\neval_environments = 8\ngrid_size = 5\ntasks_per_step = 4\n")
    out = tmp_path / "results.csv"
    cmd = [sys.executable, "-m", "rlscale", "sweep", str(spec), "--out", str(out),
           "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if out.exists() and len(out.read_text().splitlines()) >= 3:  # header + 2 runs
                break
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    before = read_results(out)  # still a valid table after SIGKILL at a random moment
    assert 2 <= len(before) < 12, "the sweep finished before it could be killed"
    before_lines = out.read_text().splitlines()
    subprocess.run(cmd, check=True, capture_output=True)
    after = read_results(out)
    ids = [r["run_id"] for r in after]
    assert len(ids) == len(set(ids)) == 12
    assert out.read_text().splitlines()[: len(before_lines)] == before_lines


def test_dask_local_cluster_gives_the_same_rows_as_a_local_run(tmp_path):
    distributed = pytest.importorskip("distributed")
    spec = _spec(seeds=[0])
    local = {r["run_id"]: r for r in run_sweep(spec, tmp_path / "a.csv", progress=False)}
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=2,
                                  dashboard_address=None) as cluster:
        rows = run_sweep(spec, tmp_path / "b.csv", scheduler=cluster.scheduler_address,
                         progress=False)
    assert sorted(r["run_id"] for r in rows) == sorted(local)
    for r in rows:
        assert r["success"] == local[r["run_id"]]["success"]
        assert r["env_steps"] == local[r["run_id"]]["env_steps"]


def test_joblib_parallel_matches_serial(tmp_path):
    spec = _spec(seeds=[0])
    serial = {r["run_id"]: r["success"] for r in run_sweep(spec, tmp_path / "a.csv",
                                                            progress=False)}
    par = {r["run_id"]: r["success"] for r in run_sweep(spec, tmp_path / "b.csv", jobs=2,
                                                         progress=False)}
    assert par == serial


def test_train_cli_prints_held_out_success(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["train", "--environments", "2", "--tasks-per-environment", "2",
                 "--trajectories-per-task", "4", "--set", "eval_environments=4",
                 "--set", "grid_size=4", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "held-out success" in text and out.is_file()
    assert main(["train", "--algorithm", "ppo"]) == 2
    assert "reinforce, rloo, grpo, dr_grpo, rlds" in capsys.readouterr().err
    assert main(["train", "--set", "grid_size=big"]) == 2
    assert main(["train", "--environments", "0"]) == 2


def test_results_feed_rlscale_fit_directly(tmp_path, capsys):
    import json

    out = tmp_path / "results.csv"
    spec = parse_spec({"design": "grid", "seeds": [0],
                       "axes": {"environments": [1, 2, 4], "tasks_per_environment": [1, 2],
                                "trajectories_per_task": [2, 4]},
                       "train": TINY})
    run_sweep(spec, out, progress=False)
    fit_json = tmp_path / "fit.json"
    assert main(["fit", str(out), "--axes", "environments,tasks,trajectories",
                 "--target", "loss", "--starts", "20", "--out", str(fit_json)]) == 0
    capsys.readouterr()
    fit = json.loads(fit_json.read_text())
    assert fit["axes"] == ["environments", "tasks", "trajectories"]
    assert fit["n_points"] == 12


# -- how parallel sweeps are scheduled (issue 13, goal 5) ------------------------------------

def _config(E, t=1, k=2, **over):
    from rlscale.simulate import TrainConfig

    return TrainConfig(n_environments=E, tasks_per_environment=t, trajectories_per_task=k,
                       **{**TINY, **over}).as_dict()


def test_estimated_work_counts_training_steps_and_the_held_out_dp_by_hand():
    from rlscale.sweep._pool import estimated_work

    # E=3, t=2: 6 tasks, 4 per update, 1 epoch -> ceil(6/4) = 2 updates of 4 tasks x k=5
    # rollouts x horizon 4*4 = 16 steps; held out 4 x 2 tasks x 16 cells x 16 steps x 3 / 20.
    c = _config(3, 2, 5)
    assert estimated_work(c) == 2 * 4 * 5 * 16 + 4 * 2 * 16 * 16 * 3 / 20
    assert (estimated_work({**c, "steps": 7, "max_steps": 9})
            == 7 * 4 * 5 * 9 + 4 * 2 * 16 * 9 * 3 / 20)


def test_chunks_put_the_largest_runs_first_and_group_the_small_ones():
    from rlscale.sweep._pool import CHUNKS_PER_WORKER, chunks, estimated_work

    configs = [_config(E, t, k) for E in (1, 2, 8) for t in (1, 4) for k in (2, 16)]
    out = chunks(configs, 2)
    flat = [c for chunk in out for c in chunk]
    assert sorted(map(str, flat)) == sorted(map(str, configs))  # each run exactly once
    work = [estimated_work(c) for c in flat]
    assert work == sorted(work, reverse=True)  # largest first
    target = sum(work) / (CHUNKS_PER_WORKER * 2)
    sizes = [sum(estimated_work(c) for c in chunk) for chunk in out]
    assert all(s >= target for s in sizes[:-1])
    # a chunk closes as soon as it reaches the target: without its last run it was below
    assert all(s - estimated_work(chunk[-1]) < target for s, chunk in zip(sizes, out))
    assert len(out[-1]) > 1 and len(out[0]) == 1
    assert chunks(configs[:1], 4) == [configs[:1]]


def test_a_chunk_gives_the_rows_of_single_runs_even_under_a_fixed_malloc_threshold(monkeypatch):
    from rlscale.sweep._pool import run_chunk, run_one

    configs = [_config(1), _config(2, 2)]
    alone = [run_one(c) for c in configs]
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")  # as Dask's nanny sets it
    chunk = run_chunk(configs)
    for a, b in zip(alone, chunk.rows):
        assert {k: v for k, v in a.items() if k != "seconds"} == \
            {k: v for k, v in b.items() if k != "seconds"}
    # Thread and process CPU clocks are accounted separately by the kernel: even with the
    # process interval enclosing the thread's, they can disagree by a clock tick (seen:
    # 2e-5 s at load 15), so the ordering is checked to within a millisecond.
    assert chunk.worker == os.getpid() and chunk.cpu_seconds > 0
    assert chunk.cpu_seconds <= chunk.process_cpu_seconds + 1e-3


@pytest.mark.slow
def test_killed_parallel_sweep_resumes_without_losing_or_repeating_runs(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(
        'design = "grid"\nseeds = [0, 1, 2, 3, 4, 5, 6, 7]\n[axes]\nenvironments = [2, 3, 4]\n'
        "[train]\nepochs = 2\neval_environments = 8\ngrid_size = 5\ntasks_per_step = 4\n")
    out = tmp_path / "results.csv"
    cmd = [sys.executable, "-m", "rlscale", "sweep", str(spec), "--out", str(out),
           "--no-progress", "--jobs", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            if out.exists() and len(out.read_text().splitlines()) >= 2:
                break
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGKILL)  # the parent and its workers
    finally:
        proc.wait()
    before = read_results(out)
    assert 1 <= len(before) < 24, "the sweep finished before it could be killed"
    subprocess.run(cmd, check=True, capture_output=True)
    ids = [r["run_id"] for r in read_results(out)]
    assert len(ids) == len(set(ids)) == 24
