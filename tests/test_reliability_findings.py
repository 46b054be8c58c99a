"""The reproducers of issue 22, each a regression test that failed before its fix.

Unbounded work (a float accepted as a count, work that is a product of counts),
crashes on wrong types (``AttributeError`` instead of a ``TypeError`` naming the
argument), unclear errors (``math domain error``, ``values['D']=inf``,
``target=1``), and text evaluated as code (``sympify`` of a binding key).
"""

from __future__ import annotations

import math
import os
import time

import numpy as np
import pytest
import sympy as sp

import rlscale.optimize as opt
import rlscale.proofs as pr
import rlscale.simulate as sim
import rlscale.theory as th
from benchmarks._cli_fuzz import GOOD_ALLOC
from rlscale.theory._validation import check_jobs, check_work

COVERAGE = [th.Turn.with_coverage(q) for q in (0.9, 0.5, 0.1)]
SELECTION = [th.Turn.with_selection(q, noise=0.5) for q in (0.9, 0.5, 0.1)]


# -- unbounded work ------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: opt.compare_inference_plans(COVERAGE, 1e6),
    lambda: opt.integer_plan(COVERAGE, 1e6),
    lambda: sim.sample_trajectories(sim.make_reward_world(1, rng=0), 1e6, 0),
])
def test_a_float_is_never_a_count(call):
    # Each took 1e6 as a count and ran past 10 s.
    with pytest.raises(TypeError, match=r"must be an integer .* not a float; got \w+=1e\+06 "
                                        r"\(write int\(1e\+06\)"):
        call()


def test_comparing_inference_plans_is_time_bounded():
    # Selection turns integrate a quadrature per candidate count: 1e6 would take hours.
    start = time.process_time()
    with pytest.raises(ValueError, match=r"budget=1000000 with 3 turns needs \d+ exact plan.*"
                                         r"predicted to take about .* s on one core"):
        opt.compare_inference_plans(SELECTION, 10**6)
    assert time.process_time() - start < 1.0  # refused before any work
    opt.compare_inference_plans(SELECTION, 30)  # a small one runs


def test_a_saturated_baseline_gives_a_finite_eta():
    # Every baseline reaches success 1.0 in float64 at this budget: budget_to_reach was
    # asked for target=1 and refused it ("target must be >= 0 and < 1; got target=1").
    cmp = opt.compare_inference_plans(COVERAGE, 2000)
    assert cmp.optimal.success == 1.0
    assert all(math.isfinite(e) and e >= 1.0 for e in cmp.eta.values()), cmp.eta


def test_sampling_is_bounded_by_its_steps_naming_every_factor():
    rw = sim.make_reward_world(1, rng=0)
    with pytest.raises(ValueError, match=r"sampled trajectory steps n·tasks·horizon = "
                                         r"5e\+06·1·24 .* lower n, tasks or horizon"):
        sim.sample_trajectories(rw, 5 * 10**6, 0)


def test_check_work_and_check_jobs():
    assert check_work("steps", 100, 1, a=10, b=10) == 100
    with pytest.raises(ValueError, match=r"^steps a·b = 10·11 = 110 exceed the limit 100 "
                                         r"\(about 1 s on one core\); lower a or b$"):
        check_work("steps", 100, 1, a=10, b=11)
    assert check_jobs("jobs", -1) == -1 and check_jobs("jobs", np.int64(8)) == 8
    for bad, error in ((0, ValueError), (1025, ValueError), (10**30, ValueError),
                       (2.0, TypeError), (True, TypeError), ("2", TypeError)):
        with pytest.raises(error, match="jobs must be a non-zero integer from -1024 to 1024"):
            check_jobs("jobs", bad)


def test_fit_refuses_an_unbounded_worker_count():
    # rlscale fit --jobs 1e30 was accepted (found by the CLI fuzz).
    with pytest.raises(ValueError, match="n_jobs must be a non-zero integer"):
        opt.fit_law({"N": [1, 2, 4, 8, 16], "loss": [1, 0.8, 0.7, 0.65, 0.6]}, axes=["N"],
                    n_jobs=10**30)


# -- wrong types: a TypeError naming the argument, not an AttributeError ---------------

WORLD = sim.GridFamily(size=4).sample(2, 1, rng=0)


@pytest.mark.parametrize(("call", "match"), [
    (lambda: sim.GridWorld(0, 0, 0, 0, 0, 0, 0), r"^tiles must be a 3-d integer array"),
    (lambda: sim.GridWorld(WORLD.tiles, WORLD.slippery, WORLD.leak, WORLD.task_env + 5,
                           WORLD.start, WORLD.targets, 4), r"^task_env must lie in \[0, 2\)"),
    (lambda: sim.GridWorld(WORLD.tiles, WORLD.slippery, WORLD.leak, WORLD.task_env,
                           WORLD.start, WORLD.targets, 4.0), r"^max_steps must be an integer"),
    (lambda: sim.GridWorld(WORLD.tiles * 7, WORLD.slippery, WORLD.leak, WORLD.task_env,
                           WORLD.start, WORLD.targets, 4), r"^tiles must hold FREE, HOLE"),
    (lambda: sim.RewardWorld(0, 0, 0), r"^world must be a GridWorld"),
    (lambda: sim.RewardWorld(WORLD, np.zeros((2, 3, 15, 4)), 5), r"^features must be"),
    (lambda: sim.RewardWorld(WORLD, np.zeros((2, 3, 16, 4)), "5"), r"^horizon must be"),
    (lambda: sim.train(config=""), r"^config must be a TrainConfig or None; got str"),
    (lambda: pr.Proof("a", "b", "c", steps="x"), r"^steps must be a tuple of Steps"),
    (lambda: pr.Proof("a", "b", "c", steps=["x"]), r"^steps\[0\] must be a Step"),
    (lambda: pr.Proof("a", 2, "c", steps=()), r"^title must be a string"),
    (lambda: pr.interval_eval(sp.Symbol("x"), [1.0]), r"^bindings must be a mapping"),
    (lambda: th.Turn(np.array([])), r"^kind must be one of coverage"),
    (lambda: th.Turn("coverage", 0.5, failures=3), r"^failures must be one of"),
])
def test_wrong_types_raise_a_type_error_naming_the_argument(call, match):
    with pytest.raises((TypeError, ValueError), match=match):
        call()


def test_hand_built_worlds_still_work():
    rebuilt = sim.GridWorld(WORLD.tiles.astype(np.int64), WORLD.slippery, WORLD.leak,
                            WORLD.task_env, WORLD.start, WORLD.targets, WORLD.max_steps)
    assert rebuilt.tiles.dtype == np.int8
    np.testing.assert_array_equal(rebuilt.moves, WORLD.moves)
    rw = sim.make_reward_world(1, rng=0)
    assert sim.RewardWorld(rw.world, rw.features, rw.horizon).n_states == rw.n_states


# -- text is never evaluated ------------------------------------------------------------

def test_a_binding_key_is_never_evaluated(tmp_path):
    marker = tmp_path / "ran"
    key = f"__import__('os').system('touch {marker}')"
    with pytest.raises(TypeError, match=r"bindings keys must be a sympy expression, not text"):
        pr.interval_eval(sp.Symbol("x"), {key: 1.0})
    assert not marker.exists()  # sympify(key) ran the command before
    with pytest.raises(TypeError, match="not text"):
        pr.interval_eval("__import__('os').getcwd()", {})
    x = sp.Symbol("x")
    assert pr.interval_eval(x**2, {x: 2}).a == 4  # numbers and symbols as before


def test_proof_steps_refuse_text(tmp_path):
    marker = tmp_path / "ran"
    with pytest.raises(TypeError, match=r"^lhs must be a sympy expression, not text"):
        pr.Identity("id", f"__import__('os').system('touch {marker}')", 0)
    assert not os.path.exists(marker)


# -- clear errors -------------------------------------------------------------------------

LAW = th.AdditiveLaw(0.1, {"E": 1.0, "k": 1.0}, {"E": 0.5, "k": 0.5})


def test_baselines_without_bounds_are_computed_not_a_math_domain_error():
    cmp = opt.compare_baselines(opt.AllocationProblem(LAW, "E + k"), 200.0,
                                {"E": 10.0, "k": 10.0})
    bounded = opt.compare_baselines(
        opt.AllocationProblem(LAW, "E + k", {"E": (1e-300, 1e300), "k": (1e-300, 1e300)}),
        200.0, {"E": 10.0, "k": 10.0})
    assert cmp.strongest == bounded.strongest == "proportional"
    assert cmp.eta == pytest.approx(1.0, rel=1e-9)  # equal terms: proportional is optimal


def test_plan_uncertainty_with_open_upper_bounds_and_a_large_centre():
    # exp(700) times a centre of 1e5 overflowed: "values['D'] must be finite; got inf".
    laws = [th.AdditiveLaw(0.1, {"N": 1.0 + 0.1 * i, "D": 1.0}, {"N": 0.5, "D": 0.1 + 0.2 * i})
            for i in range(3)]
    u = opt.plan_uncertainty(laws[1], laws, "N + D", 1e7, {"N": 1e5, "D": 1e5},
                             {"N": (1, None), "D": (1, None)})
    assert u.n_skipped == 0
    for lo, hi in u.eta_intervals.values():
        assert 1.0 <= lo <= hi < math.inf


# -- issue 27's context axis, found by the final reliability run ---------------------------

CONTEXT_LEVELS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def test_comparing_context_plans_is_time_bounded():
    # Unit costs make every count 1..B an option over a table of B cells: time grows as B².
    # `infer-plan --q 0.9,0.5 --q-full 0.95,0.9 --budget 100000 --context-levels 1,...,1024`
    # ran past the CLI fuzz's 10 s (minutes: 4 DPs plus a bisection of ~50 more).
    turns = [th.ContextTurn(0.9, 0.95, 0.5, levels=CONTEXT_LEVELS),
             th.ContextTurn(0.5, 0.9, 0.5, levels=CONTEXT_LEVELS)]
    start = time.process_time()
    with pytest.raises(ValueError, match=r"budget=100000 with 2 turns and 11 context levels "
                                         r"needs 4 exact plan\(s\) predicted to take about "
                                         r".* s on one core \(> 10 s\)"):
        opt.compare_context_plans(turns, 100_000)
    with pytest.raises(ValueError, match=r"needs 1 exact plan\(s\) predicted"):
        opt.context_plan(turns, 100_000)
    assert time.process_time() - start < 1.0  # refused before any work
    # A comparison is now about two DPs, not 4 + 3·log2(B): this one took ~1.2 s.
    start = time.process_time()
    opt.compare_context_plans(turns, 4000)
    assert time.process_time() - start < 5.0


def test_context_eta_from_the_joint_table_matches_a_scan_of_fresh_plans():
    # η is now read off the joint DP's table instead of a bisection of fresh plans: check it
    # against the least budget found by solving every budget afresh.
    turns = [th.ContextTurn(0.1, 0.9, 0.7, context_cost=0.5, levels=(1, 4, 16)),
             th.ContextTurn(0.5, 0.6, 0.7, context_cost=0.5, levels=(1, 4, 16)),
             th.ContextTurn(0.3, 0.8, 1.2, base_cost=2, context_cost=0.3, levels=(1, 2, 16))]
    for B in (9, 17, 40):
        cmp = opt.compare_context_plans(turns, B)
        for m, eta in cmp.eta.items():
            need = next(b for b in range(7, B + 1)
                        if opt.context_plan(turns, b).success
                        >= cmp.plans[m].success * (1 - 1e-12))
            assert eta == B / need, (B, m)


@pytest.mark.parametrize(("argv", "message"), [
    # int(inf) in the level parser: an OverflowError traceback.
    (["--context-levels", "1,inf"], "--context-levels must be whole numbers; got inf"),
    (["--context-levels", "1e400"], "--context-levels must be whole numbers; got inf"),
    (["--context-levels", "nan"], "--context-levels must be whole numbers; got nan"),
    # A context option without --context-levels was ignored (exit 0): +inf was "accepted".
    (["--context-exponent", "+inf"], "--context-exponent applies with --context-levels only"),
    (["--context-cost", "1"], "--context-cost applies with --context-levels only"),
])
def test_infer_plan_context_options_are_checked(argv, message, capsys):
    from rlscale.cli import main

    base = ["infer-plan", "--q", "0.9,0.5", "--budget", "20"]
    if argv[0] == "--context-levels":
        base += ["--q-full", "0.95,0.9"]
    assert main([*base, *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_infer_plan_ground_refuses_context_options(capsys):
    from rlscale.cli import main

    # --ground trains a policy (~15 s) and ignored the context axis altogether.
    assert main(["infer-plan", "--ground", "--quick", "--context-levels", "1,4"]) == 2
    assert "--context-levels plans context per turn at a budget: not with --ground" in (
        capsys.readouterr().err)


COVERAGE_CSV = "samples,correct\n10,3\n10,0\n10,9\n10,5\n"


@pytest.mark.parametrize(("use", "extra", "flag"), [
    # Each was ignored without a word (exit 0): the user believed the verifier, the budget or
    # the turns had been taken into account.
    ("fit", ["--fpr", "0.1"], "--fpr"), ("fit", ["--fnr", "0.2"], "--fnr"),
    ("fit", ["--failures", "retried"], "--failures"), ("fit", ["--budget", "20"], "--budget"),
    ("fit", ["--q", "0.5"], "--q"), ("fit", ["--sweep", "2:9:3"], "--sweep"),
    ("ground", ["--q", "0.5"], "--q"), ("ground", ["--budget", "20"], "--budget"),
    ("ground", ["--fpr", "0.1"], "--fpr"), ("ground", ["--costs", "1"], "--costs"),
    ("plan", ["--out", "x"], "--out"), ("plan", ["--quick"], "--quick"),
    ("context", ["--quick"], "--quick"),
])
def test_infer_plan_refuses_an_option_its_use_does_not_read(use, extra, flag, tmp_path,
                                                            capsys, monkeypatch):
    from rlscale.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "cov.csv").write_text(COVERAGE_CSV)
    base = {"fit": ["--fit-coverage", "cov.csv", "--bootstrap", "20"],
            "ground": ["--ground", "--quick"],  # refused before any training
            "plan": ["--q", "0.9,0.5", "--budget", "20"],
            "context": ["--q", "0.9,0.5", "--q-full", "0.95,0.9", "--budget", "20",
                        "--context-levels", "1,4"]}[use]
    started = time.process_time()
    assert main(["infer-plan", *base, *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"rlscale infer-plan: error: {flag} is "
                                                    "not read with "), err
    assert time.process_time() - started < 5.0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cov.csv"]


def test_every_infer_plan_option_is_read_by_some_use_and_the_plan_defaults_hold(capsys):
    from rlscale.cli import build_parser, main
    from rlscale.commands.infer_plan import USES

    parser = build_parser()
    leaf = parser._subparsers._group_actions[0].choices["infer-plan"]
    dests = {a.dest for a in leaf._actions if a.option_strings and a.dest != "help"}
    assert dests - {"debug"} <= set().union(*USES.values())
    # --fpr/--fnr/--failures are None by default now (to tell "given" apart); the plan still
    # gets 0, 0 and "terminal": the same table as with them written out.
    assert main(["infer-plan", "--q", "0.9,0.5", "--budget", "20"]) == 0
    implicit = capsys.readouterr().out
    assert main(["infer-plan", "--q", "0.9,0.5", "--budget", "20", "--fpr", "0", "--fnr", "0",
                 "--failures", "terminal"]) == 0
    assert capsys.readouterr().out == implicit


@pytest.mark.parametrize(("verb", "header"), [
    ("fit", "E,E,loss"), ("allocate", "E,E,loss"), ("infer-plan", "samples,samples,correct"),
])
def test_a_repeated_header_column_is_named(verb, header, tmp_path, capsys):
    from rlscale.cli import main

    # csv.DictReader keeps the last of two same-named columns: a pilot E,E,loss was read as
    # one E and reported as "no column 'k'", true but beside the point.
    data = tmp_path / "data.csv"
    data.write_text(header + "\n" + "".join(f"{i},{2 * i},{1 / i:.3f}\n" for i in (1, 2, 4)))
    argv = {"fit": ["fit", str(data), "--axes", "E"],
            "allocate": [*_pilot(tmp_path)[:-4], "--data", str(data), "--bootstrap", "20",
                         "--centre", "E=10,k=10"],
            "infer-plan": ["infer-plan", "--fit-coverage", str(data)]}[verb]
    assert main(argv) == 2
    err = capsys.readouterr().err
    column = header.split(",")[0]
    assert err.count("\n") == 1 and (f"column {column!r} appears 2 times in the header"
                                     in err), err


# -- issue 29's decision from a pilot, found by probing the new CLI flags -------------------

# GOOD_ALLOC of the CLI fuzz without its [baseline] table
ALLOC_SPEC = GOOD_ALLOC[:GOOD_ALLOC.index("[baseline]")]


def _pilot(tmp_path, edit=lambda rows: rows):
    rows = [f"{e},{k},{0.15 + 2 * e**-0.45 + 1.2 * k**-0.2:.6f}"
            for e in (1, 4, 16, 64) for k in (1, 4, 16, 64)]
    (tmp_path / "spec.toml").write_text(ALLOC_SPEC)
    (tmp_path / "pilot.csv").write_text("E,k,loss\n" + "\n".join(edit(rows)) + "\n")
    return ["allocate", str(tmp_path / "spec.toml"), "--budget", "200", "--data",
            str(tmp_path / "pilot.csv"), "--bootstrap", "20"]


def test_a_ragged_pilot_row_names_its_line(tmp_path, capsys):
    from rlscale.cli import main

    # Was "'<' not supported between instances of 'NoneType' and 'str'".
    argv = _pilot(tmp_path, lambda rows: [rows[0], "4,1", *rows[2:]])
    assert main([*argv, "--centre", "E=10,k=10"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pilot.csv, line 3: column 'loss' is not a number: ''" in err


def test_a_centre_naming_no_decision_variable_is_refused(tmp_path, capsys):
    from rlscale.cli import main

    # K=2 (a typo of k, or a variable of another spec) was dropped without a word.
    assert main([*_pilot(tmp_path), "--centre", "E=10,k=10,K=2"]) == 2
    assert ("centre names ['K'], not decision variables of the cost (variables: ['E', 'k'])"
            in capsys.readouterr().err)


def test_a_loss_near_float64s_end_is_named_not_a_fallback_on_a_zero(tmp_path, capsys):
    from rlscale.cli import main

    # A pilot loss of 1e308 overflowed the fission copy (a RuntimeWarning on stderr) and the
    # recommendation fell back to the baseline "because data['loss']=0", a value never given.
    argv = _pilot(tmp_path, lambda rows: [rows[0], "4,1,1e308", *rows[2:]])
    assert main([*argv, "--centre", "E=10,k=10"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("data['loss'] has 1e+308 at index 1: its fission copies "
                                     "y·exp(τZ) and y·exp(−Z/τ)") in err, err


@pytest.mark.parametrize("scale", [1e-250, 1e-160, 1e200, 1e250])
def test_a_law_fit_does_not_depend_on_the_loss_units(scale):
    # The start's normal equations square 1/y: losses ~1e-160 overflowed (RuntimeWarnings)
    # and ~1e200 underflowed to LinAlgError "Singular matrix" (a traceback), though the law
    # is the same in any unit.  (Issue 30's engine boxes the log floor and coefficients in
    # ±690 so the fitted law always exists: a floor of 0.15e±300 lies outside the box.)
    E, k = np.repeat([1.0, 4, 16, 64], 4), np.tile([1.0, 4, 16, 64], 4)
    loss = 0.15 + 2 * E**-0.45 + 1.2 * k**-0.2
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        fit = opt.fit_law({"E": E, "k": k, "loss": loss * scale}, axes=["E", "k"])
    assert fit.success
    assert fit.law.exponents == pytest.approx({"E": 0.45, "k": 0.2}, rel=1e-4)
    assert fit.law.floor == pytest.approx(0.15 * scale, rel=1e-3)


def test_a_subnormal_point_leaves_no_warning_on_the_terminal():
    # One loss of 5e-324 among losses ~1: log(0) of an underflowed start (RuntimeWarnings,
    # then "the Huber objective is not finite"); now the robust fit sets it aside.
    E, k = np.repeat([1.0, 4, 16, 64], 4), np.tile([1.0, 4, 16, 64], 4)
    loss = 0.15 + 2 * E**-0.45 + 1.2 * k**-0.2
    loss[3] = 5e-324
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        fit = opt.fit_law({"E": E, "k": k, "loss": loss}, axes=["E", "k"])
    assert fit.law.exponents == pytest.approx({"E": 0.45, "k": 0.2}, rel=1e-2)


@pytest.mark.parametrize(("extra", "message"), [
    # Each was ignored (exit 0): the pilot's options without --data, --hold with it.
    (["--probability", "nan"], "--probability belongs with --data"),
    (["--seed", "3"], "--seed belongs with --data"),
    (["--method", "plug-in"], "--method belongs with --data"),
    (["--bootstrap", "50"], "--bootstrap belongs with --data"),
    (["--data", "PILOT", "--centre", "E=10,k=10", "--hold", "E=1"],
     "--hold compares plans of the spec's law at one budget; not with --data"),
])
def test_allocate_options_are_never_silently_ignored(extra, message, tmp_path, capsys):
    from rlscale.cli import main

    argv = _pilot(tmp_path)[:4]
    extra = [str(tmp_path / "pilot.csv") if e == "PILOT" else e for e in extra]
    assert main([*argv, *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_infer_plan_bootstrap_applies_to_the_coverage_fit_only(capsys):
    from rlscale.cli import main

    # `infer-plan --q 0.9,0.5 --budget 20 --bootstrap -1` exited 0 (a case of the CLI fuzz).
    assert main(["infer-plan", "--q", "0.9,0.5", "--budget", "20", "--bootstrap", "-1"]) == 2
    assert "--bootstrap applies with --fit-coverage only" in capsys.readouterr().err


# -- issue 29's deployed efficiency and robust plans, found by probing their entries --------

_B = np.geomspace(10.0, 400.0, 50)
EVEN = opt.PlanPath("even", _B, {"E": _B / 2, "k": _B / 2}, {"E": _B / 2, "k": _B / 2}, _B)


@pytest.mark.parametrize(("generating", "error", "match"), [
    # A scalar was an IndexError; a wrong length was taken as is (eta=20, "at least").
    (lambda v: 0.5, ValueError, r"one loss per allocation \(shape \(50,\)\); got shape \(\)"),
    (lambda v: np.ones(3), ValueError, r"got shape \(3,\)"),
    (lambda v: "x", TypeError, "the judging loss must return numbers; got str"),
])
def test_a_generating_callable_must_return_one_loss_per_allocation(generating, error, match):
    with pytest.raises(error, match=match):
        opt.deployed_efficiency(EVEN, generating, {"E": 10.0, "k": 190.0}, 200.0)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"costs": 1}, ValueError, r"needs one value per budget \(50\)"),  # AttributeError
    ({"name": 3}, TypeError, "name must be a string"),
    ({"budgets": list(_B)}, None, None),  # a list is an array of budgets, as documented
    ({"values": [1.0]}, TypeError, "values must be a mapping"),
    ({"effective": {"E": _B, "k": -_B}}, ValueError, r"effective\['k'\] must be > 0"),
])
def test_a_plan_path_checks_its_fields(kwargs, error, match):
    fields = {"name": "even", "budgets": _B, "values": EVEN.values,
              "effective": EVEN.effective, "costs": _B, **kwargs}
    if error is None:
        assert opt.PlanPath(**fields).budgets.dtype == np.float64
        return
    with pytest.raises(error, match=match):
        opt.PlanPath(**fields)


def test_robust_plan_refuses_laws_over_different_axes():
    # A KeyError 't' from the law bank.
    laws = [th.AdditiveLaw(0.1, {"E": 1.0, "k": 1.0}, {"E": 0.5, "k": 0.5}),
            th.AdditiveLaw(0.1, {"E": 1.0, "t": 1.0}, {"E": 0.5, "t": 0.5})]
    with pytest.raises(ValueError, match=r"laws must share their axes: laws\[0\] has \['E', "
                                         r"'k'\], laws\[1\] \['E', 't'\]"):
        opt.robust_plan(laws, "E + k", 200.0)


def test_infer_plan_context_budget_inf_is_one_line(capsys):
    from rlscale.cli import main

    # The CLI fuzz's new context skeleton: int(inf) in the context path, a traceback.
    assert main(["infer-plan", "--q", "0.9,0.5", "--q-full", "0.95,0.9", "--budget", "inf",
                 "--context-levels", "1,4,16"]) == 2
    assert "--budget must be finite and >= 0; got --budget=inf" in capsys.readouterr().err


def test_memory_length_is_named_as_the_user_wrote_it():
    # A sweep's `memory_length = 0` was refused as "length must be an integer ...".
    with pytest.raises(ValueError, match=r"^memory_length must be an integer >= 1 and <= "
                                         r"10000; got memory_length=0"):
        sim.TrainConfig(env="memory", memory_length=0)


# -- found once the wrong-type pass covered every optimize entry ------------------------------

FIT_DATA = {"E": [1, 2, 4, 8, 16, 32.0], "loss": [1, 0.8, 0.7, 0.65, 0.62, 0.6]}


@pytest.mark.parametrize(("call", "error", "match"), [
    # The pass imported only _contract_cases_optimize, leaving test_contracts_optimize's own
    # entries (allocate, fit_law, the context and decision names) out; once in, it found:
    (lambda: opt.fit_law(FIT_DATA, axes=["E"], seed=object()), TypeError, "^seed must be"),
    (lambda: opt.budget_to_reach(COVERAGE, 0.7, max_budget=b"\x00"), TypeError,
     "^max_budget must be"),
    (lambda: opt.kkt_residual(np.array([-1.0, -1.0]), [(0.0, np.array([1.0, 1.0]))],
                              [object()]), TypeError, "^names must be a sequence of 1 labels"),
    (lambda: opt.recommend([object()], "E + k", 100.0, {"E": 8.0, "k": 8.0}), TypeError,
     "^data must be a mapping of column name -> values; got list"),
    # And the hypothesis suite, drawing starts=np.array([]): "The truth value of an empty
    # array is ambiguous" from `starts == "auto"`.
    (lambda: opt.fit_law(FIT_DATA, axes=["E"], starts=np.array([])), TypeError,
     "^starts must be an integer"),
    (lambda: opt.fit_law(FIT_DATA, axes=["E"], starts="best"), ValueError,
     "^starts must be 'auto', 'grid' or a positive integer; got starts='best'"),
])
def test_optimize_entries_refuse_wrong_types_naming_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- recommend's contract case: rare draws, pinned as explicit examples ---------------------

def _recommend_case():
    from _contract_cases_decision import CASES

    return next(c for c in CASES if c.name == "recommend")


@pytest.mark.parametrize(("arg", "value", "error", "match"), [
    # A plain array or a numpy scalar has __getitem__: data["E"] raised IndexError
    # ("invalid index to scalar variable", "only integers, slices ...") from deep inside.
    ("data", np.array([1.0]), TypeError, "^data must be a mapping .*; got ndarray"),
    ("data", np.array([[1.0, 2.0]]), TypeError, "^data must be a mapping .*; got ndarray"),
    ("data", np.array([]), TypeError, "^data must be a mapping .*; got ndarray"),
    ("data", np.float32(1.0), TypeError, "^data must be a mapping .*; got float32"),
    ("data", np.True_, TypeError, "^data must be a mapping .*; got bool"),
    # A constant cost: every baseline ran to the bounds and the refusal blamed the budget.
    ("cost", "1", ValueError, r"^cost='1' depends on no decision variable"),
    # The shared interval check says `method`, which is recommend's chooser argument.
    ("interval", 1.0, TypeError, "^interval: method must be one of"),
    ("interval", "BC", ValueError, "^interval: method must be one of"),
    # fission's overflow named the data and τ, not the argument that set τ.
    ("split", 1e308, ValueError, r"split τ = 1e\+308, leave float64"),
])
def test_recommend_names_the_argument_on_the_contract_suites_rare_draws(arg, value, error,
                                                                        match):
    case = _recommend_case()
    with pytest.raises(error, match=match):
        case.call(**{**case.base, arg: value})


def test_ctrl_c_while_the_cli_loads_is_one_line_not_a_traceback():
    import subprocess
    import sys

    # The reliability run's SIGINTs at 0.1 s of `python -m rlscale sweep` landed while
    # rlscale.cli was being imported, before main() catches KeyboardInterrupt: 3 of 20
    # printed an importlib traceback.  Here the import itself raises it.
    code = ("import builtins, runpy, sys\n"
            "real = builtins.__import__\n"
            "def imp(name, *a, **k):\n"
            "    if name == 'rlscale.cli':\n"
            "        raise KeyboardInterrupt\n"
            "    return real(name, *a, **k)\n"
            "builtins.__import__ = imp\n"
            "sys.argv = ['rlscale', 'prove', '--list']\n"
            "runpy.run_module('rlscale', run_name='__main__', alter_sys=True)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr == "rlscale: interrupted\n"


# -- the fault harness itself ---------------------------------------------------------------

def test_sigint_faults_reach_a_child_of_a_process_that_ignores_sigint():
    # Started from `nohup ... &`, the reliability benchmark ignored SIGINT, every command it
    # ran inherited that, and the SIGINT faults measured nothing: reports "took inf s to
    # stop", sweeps ran to the end and counted as resumed.
    import signal
    import sys

    from benchmarks._faults import run

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        out = run([sys.executable, "-c", "import time; time.sleep(30)"], fault="SIGINT",
                  at=1.0, timeout=60)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert out.returncode != 0 and out.stop_seconds is not None and out.stop_seconds < 10
    assert "KeyboardInterrupt" in out.stderr


def test_the_kill_study_draws_again_until_each_signal_lands(tmp_path):
    # Moments drawn over a reference run's 131 s while the reruns took 60-90 s: 9 of 20
    # SIGINTs of the report came after it had finished and measured nothing.  The study now
    # counts those, shortens its estimate to the run it saw and draws again.
    import sys

    from benchmarks.reliability import _kills

    report: dict = {}
    cmd = [sys.executable, "-c", "import time; time.sleep(1.0)"]
    # An estimate 20 times too long: nearly every first draw comes after the end.
    _kills(report, "sleep", cmd, tmp_path / "out", {}, 20.0, 2, 0, None, ("SIGKILL",))
    entry = report["sleep SIGKILL"]
    assert entry["kills"] == entry["signalled"] == 2
    assert entry["not_landed"] >= 1 and entry["run_seconds"] < 20.0
