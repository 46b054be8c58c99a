"""The CLI's input contract (issue 10 §6): bad specs, CSVs and flags for every verb exit
with status 2 and exactly one line on stderr, never a traceback.

Cases run in-process through ``rlscale.cli.main`` (with capsys) and fail before any
long work starts; ``report`` is covered for flag errors only.
"""

from __future__ import annotations

import pytest

from benchmarks._cli_fuzz import GOOD_ALLOC  # one good spec for the CLI suites
from rlscale.cli import main

ALLOC_SPECS = {
    "not toml": "[law\nfamily=",
    "law not a table": 'law = 3\n[cost]\nexpression = "E"',
    "coefficients int": GOOD_ALLOC.replace("coefficients = { E = 2.0, k = 1.2 }",
                                           "coefficients = 3"),
    "exponent string": GOOD_ALLOC.replace("E = 0.45", 'E = "0.45"'),
    "exponent 1e6": GOOD_ALLOC.replace("E = 0.45", "E = 1e6"),
    "axes for additive": GOOD_ALLOC.replace("[cost]", 'axes = ["E"]\n[cost]'),
    "unknown family": GOOD_ALLOC.replace('"additive"', '"cubic"'),
    "unknown table": GOOD_ALLOC + "[costs]\nx = 1\n",
    "cost not string": GOOD_ALLOC.replace('expression = "100*E + k"', "expression = 5"),
    "cost unknown axis": GOOD_ALLOC.replace("100*E + k", "100*E + k + Z"),
    "cost eval attempt": GOOD_ALLOC.replace("100*E + k", "__import__('os')"),
    "bounds not table": GOOD_ALLOC.replace("E = { min = 1, max = 500 }", "E = 5"),
    "bound string": GOOD_ALLOC.replace("max = 500", 'max = "500"'),
    "min above max": GOOD_ALLOC.replace("min = 1, max = 500", "min = 600, max = 500"),
    "baseline fixed string": GOOD_ALLOC.replace("fixed = { E = 20 }", 'fixed = "E"'),
    "baseline scaled unknown": GOOD_ALLOC.replace('scaled = "k"', 'scaled = "q"'),
    "synthesis not table": GOOD_ALLOC + "synthesis = 3\n",
    "variance_components extra key": ('[law]\nfamily = "variance_components"\nfloor = 0.1\n'
                                      'sigma2_env = 1.0\nsigma2_task = 1.0\n'
                                      'sigma2_traj = 1.0\nexponents = { E = 1.0 }\n'
                                      '[cost]\nexpression = "E + E*t + E*t*k"'),
}

SWEEP_SPECS = {
    "not toml": "seeds = [",
    "seeds int": "seeds = 3",
    "seeds strings": 'seeds = ["a"]',
    "unknown key": "colour = 1",
    "axes list": "axes = [1, 2]",
    "environments 1e9": "[axes]\nenvironments = [1000000000]",
    "grid_size 100000": "[train]\ngrid_size = 100000",
    "tasks_per_step string": '[train]\ntasks_per_step = "16"',
    "tasks_per_step 16.5": "[train]\ntasks_per_step = 16.5",
    "tasks_per_step bool": "[train]\ntasks_per_step = true",
    "epochs huge": "[train]\nepochs = 1000000000",
    "too many runs": "seeds = [" + ",".join(map(str, range(200_000))) + "]",
    "frontier string": '[train]\nfrontier = "0.1"',
    "unknown train field": "[train]\nbogus = 1",
}

ROWS = "environments,loss\n1,0.5\n2,0.4\n4,0.33\n8,0.3\n16,0.28\n"
CSVS = {
    "empty": "",
    "no data rows": "environments,loss\n",
    "missing column": "x,loss\n1,0.5\n",
    "text value": "environments,loss\n1,abc\n2,0.4\n4,0.3\n8,0.3\n",
    "negative axis": "environments,loss\n-1,0.5\n2,0.4\n4,0.3\n8,0.3\n",
    "nan loss": "environments,loss\n1,nan\n2,0.4\n4,0.3\n8,0.3\n",
    "huge field": "environments,loss\n1," + "9" * 2_000_000 + "\n",
    "too few rows": "environments,loss\n1,0.5\n",
    "binary": "\x00\x01\x02",
}


def _one_line_exit_2(argv, capsys):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, (code, err)
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("rlscale"), err
    assert "Traceback" not in err


def _raises_exit_2(argv, capsys):
    """argparse errors exit through SystemExit(2); the same one-line contract."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, (code, err)
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1 and "Traceback" not in err, err


@pytest.mark.parametrize("name", sorted(ALLOC_SPECS))
def test_bad_allocation_specs(name, tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(ALLOC_SPECS[name])
    _one_line_exit_2(["allocate", str(spec), "--budget", "1e6"], capsys)


@pytest.mark.parametrize("flags", [
    ["--budget", "1e308"], ["--budget", "-1"], ["--budget", "nan"], ["--budget", "inf"],
    ["--budget", "1"], ["--target", "0.1"], ["--target", "nan"], ["--sweep", "1e4:1e6:1e8"],
    ["--sweep", "1e6:1e4:5"], ["--sweep", "1e4:1e6"], ["--sweep", "a:b:c"],
    ["--sweep", "1e4:1e6:inf"], ["--sweep", "1e4:1e6:2.5"],
])
def test_bad_allocation_flags(flags, tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(GOOD_ALLOC)
    _one_line_exit_2(["allocate", str(spec), *flags], capsys)


def test_allocation_budget_1e30_succeeds(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(GOOD_ALLOC)
    assert main(["allocate", str(spec), "--budget", "1e30"]) == 0  # KeyError before


@pytest.mark.parametrize("name", sorted(SWEEP_SPECS))
def test_bad_sweep_specs(name, tmp_path, capsys):
    spec = tmp_path / "sweep.toml"
    spec.write_text(SWEEP_SPECS[name])
    _one_line_exit_2(["sweep", str(spec), "--out", str(tmp_path / "r.csv"), "--dry-run"],
                     capsys)


def test_sweep_refuses_a_duplicated_results_row(tmp_path, capsys):
    from rlscale.sweep._run import LEGACY_COLUMNS  # the row below: a file from before context

    row = ["1", "1", "2", "1", "2", "0", "grpo", "0.5", "0.5", "10", "3.0", "0.1", "0.7", "2",
           "1", "1", "0.0", "linear", "", "0.0", "0", "0.1", "0123456789abcdef"]
    out = tmp_path / "r.csv"
    out.write_text(",".join(LEGACY_COLUMNS) + "\n" + ",".join(row) + "\n" + ",".join(row)
                   + "\n")
    spec = tmp_path / "sweep.toml"
    spec.write_text("seeds = [0]\n[base]\nenvironments = 1\n[train]\nepochs = 1\n")
    assert main(["sweep", str(spec), "--out", str(out), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "line 3 repeats run_id 0123456789abcdef of line 2" in err


@pytest.mark.parametrize("name", sorted(CSVS))
def test_bad_csvs_for_fit(name, tmp_path, capsys):
    data = tmp_path / "data.csv"
    data.write_text(CSVS[name])
    _one_line_exit_2(["fit", str(data), "--axes", "environments", "--starts", "4"], capsys)


def test_fit_accepts_a_byte_order_mark(tmp_path, capsys):
    data = tmp_path / "data.csv"
    data.write_bytes(b"\xef\xbb\xbf" + ROWS.encode())
    assert main(["fit", str(data), "--axes", "environments", "--starts", "4",
                 "--jobs", "1"]) == 0


@pytest.mark.parametrize("flags", [
    ["--axes", ""], ["--axes", "environments", "--starts", "zero"],
    ["--axes", "environments", "--starts", "-3"], ["--axes", "environments", "--jobs", "0"],
    ["--axes", "environments", "--bootstrap", "-1"],
    ["--axes", "environments", "--confidence", "2"],
    ["--axes", "environments", "--holdout", "nan"],
    ["--axes", "environments", "--law", "cubic"], ["--axes", "environments", "--target", "x"],
    ["--axes", "environments", "--starts", "1000000000"],
])
def test_bad_fit_flags(flags, tmp_path, capsys):
    data = tmp_path / "data.csv"
    data.write_text(ROWS)
    _raises_exit_2(["fit", str(data), *flags], capsys)


def test_fit_on_a_missing_file(tmp_path, capsys):
    _one_line_exit_2(["fit", str(tmp_path / "none.csv"), "--axes", "environments"], capsys)


@pytest.mark.parametrize("flags", [
    ["--set", "grid_size=100000"], ["--set", "tasks_per_step=abc"], ["--set", "nonsense"],
    ["--set", "bogus=1"], ["--environments", "0"], ["--environments", "1000000000"],
    ["--trajectories-per-task", "1"], ["--algorithm", "ppo"], ["--frontier", "0.9", "0.1"],
    ["--defect-rate", "2"], ["--set", "lr=-1"], ["--set", "epochs=1e12"],
    ["--set", "max_steps=1e9"],
])
def test_bad_train_flags(flags, capsys):
    _raises_exit_2(["train", *flags], capsys)


@pytest.mark.parametrize("argv", [
    ["verify", "properties", "no.such.property"], ["verify", "properties", "--profile", "x"],
    ["verify", "reward-law", "--seed", "-1"], ["prove", "no-such-proof"],
    ["report", "--config", "/nonexistent/report.toml"], ["report", "--bogus"],
    ["sweep", "/nonexistent/sweep.toml"], ["allocate", "/nonexistent/spec.toml", "--budget",
                                               "1"],
    ["frobnicate"],
])
def test_bad_flags_for_the_other_verbs(argv, tmp_path, capsys):
    _raises_exit_2(argv, capsys)


@pytest.mark.parametrize(("spec", "match"), [
    ({"base": {"environments": 2.0}}, r"base\.environments must hold integers"),
    ({"seeds": [0, 1.0]}, r"seeds must hold integers"),
    ({"train": {"epochs": 1.0}}, r"epochs must be an integer .*not a float"),
    ({"train": {"tasks_per_step": 16.0}}, r"tasks_per_step must be an integer .*not a float"),
])
def test_a_count_written_as_a_float_is_refused_naming_the_key(spec, match):
    # Issue 22: one count validator, integers only; a spec so has one canonical form
    # (run_id is the same however it was read) without rounding anything.
    from rlscale.sweep._run import parse_spec

    with pytest.raises(TypeError, match=match):
        parse_spec({"seeds": [0], **spec})
