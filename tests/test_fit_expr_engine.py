"""Expression laws as trustworthy as the built-ins (issue 30): the optimum without
ranges, bounds that hold, signed parameters, raw residuals, multi-output laws, priors,
limits and validation -- pinned against independent computations (scipy from the same
problem written by hand, exact data, hand-computed objectives)."""

from __future__ import annotations

import csv
import math
import time

import numpy as np
import pytest
from scipy.optimize import least_squares

from benchmarks.bench_published_laws import CHINCHILLA as CHINCHILLA_FILE
from benchmarks.bench_published_laws import LAWS, peer_search
from benchmarks.bench_published_laws import ours as fit_published
from rlscale.optimize import fit_expression, fit_law
from rlscale.theory import Law


def _chinchilla(shared_data) -> dict[str, np.ndarray]:
    with open(shared_data / "chinchilla_fig4_points.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    N = np.array([float(r["Model Size"]) for r in rows])
    C = np.array([float(r["Training FLOP"]) for r in rows])
    L = np.array([float(r["loss"]) for r in rows])
    keep = np.argsort(L, kind="stable")[:-5]
    return {"N": N[keep], "D": (C / (6 * N))[keep], "loss": L[keep]}


def _huber_sum(r: np.ndarray, delta: float = 1e-3) -> float:
    return float(sum(0.5 * v * v if abs(v) <= delta else delta * (abs(v) - 0.5 * delta)
                     for v in r))


def test_the_obvious_chinchilla_call_reaches_the_built_in_optimum(shared_data) -> None:
    data = _chinchilla(shared_data)
    builtin = fit_law(data, axes=["N", "D"], holdout=0)
    fit = fit_law(data, Law.from_expr("E + A/N**alpha + B/D**beta", axes=["N", "D"]),
                  holdout=0)  # no params=: before issue 30, alpha = 1004 and 11x the loss
    assert fit.objective == pytest.approx(builtin.objective, rel=1e-9)
    assert fit.objective == pytest.approx(1.01827402e-3, rel=3e-9)  # the figure
    for ours, theirs in (("E", "floor"), ("A", "coefficient[N]"), ("B", "coefficient[D]"),
                         ("alpha", "exponent[N]"), ("beta", "exponent[D]")):
        assert fit.params[ours] == pytest.approx(builtin.params[theirs], rel=1e-5), ours
    # The objective is the summed Huber loss of the log residuals, by hand:
    p = fit.params
    pred = p["E"] + p["A"] * data["N"] ** -p["alpha"] + p["B"] * data["D"] ** -p["beta"]
    assert fit.objective == pytest.approx(_huber_sum(np.log(pred) - np.log(data["loss"])),
                                          rel=1e-12)
    assert fit.warnings == () and fit.success and fit.status == "converged"


def test_scipy_from_our_optimum_finds_nothing_lower(shared_data) -> None:
    data = _chinchilla(shared_data)
    fit = fit_expression("E + A/N**alpha + B/D**beta", data, axes=["N", "D"], holdout=0)
    lN, lD, ly = np.log(data["N"]), np.log(data["D"]), np.log(data["loss"])

    def resid(t):  # written from the problem: log space for E, A, B
        return np.log(np.exp(t[0]) + np.exp(t[1] - t[3] * lN) + np.exp(t[2] - t[4] * lD)) - ly

    p = fit.params
    x0 = [math.log(p["E"]), math.log(p["A"]), math.log(p["B"]), p["alpha"], p["beta"]]
    ref = least_squares(resid, x0, loss="huber", f_scale=1e-3, xtol=1e-15, ftol=1e-15,
                        gtol=1e-15, max_nfev=5000)
    assert fit.objective <= ref.cost * (1 + 1e-12)


def test_declared_ranges_are_bounds_that_hold_and_say_so() -> None:
    N = np.geomspace(1e2, 1e6, 25)
    y = 0.8 + 20.0 * N ** -0.4
    # A newcomer declared the floor as (0.259, 0.9) and got 0.0002 (issue 30).
    fit = fit_expression("E + A/N**alpha", {"N": N, "loss": y}, axes=["N"],
                         params={"E": (0.85, 0.9)}, holdout=0)
    assert fit.params["E"] == 0.85 and fit.status == "converged" and fit.success
    assert [w.code for w in fit.warnings] == ["at-bound"]
    assert fit.bounds == {"E": (0.85, 0.9)}
    inside = fit_expression("E + A/N**alpha", {"N": N, "loss": y}, axes=["N"],
                            params={"E": (0.259, 0.9)}, holdout=0)
    assert inside.params["E"] == pytest.approx(0.8, rel=1e-9)
    # Search-only ranges place starts and bound nothing; the result says it left them.
    loose = fit_expression("E + A/N**alpha", {"N": N, "loss": y}, axes=["N"],
                           params={"E": (0.85, 0.9)}, ranges="search", holdout=0)
    assert loose.params["E"] == pytest.approx(0.8, rel=1e-9)
    assert [w.code for w in loose.warnings] == ["outside-range"]


def test_a_negative_coefficient_is_fitted_not_forced_positive() -> None:
    # Default positive ranges converged to a wrong optimum reported as success (issue 30).
    N = np.geomspace(1e2, 1e6, 30)
    y = 3.0 + 5.0 * N ** -0.4 - 0.05 * np.log(N)
    fit = fit_expression("E + A/N**a + c*log(N)", {"N": N, "loss": y}, axes=["N"],
                         holdout=0)
    assert fit.params["c"] == pytest.approx(-0.05, rel=1e-8)
    assert fit.params["a"] == pytest.approx(0.4, rel=1e-8)
    assert fit.objective < 1e-20


def test_raw_residuals_fit_a_target_that_is_negative_by_construction() -> None:
    # A loss normalised by a unigram baseline is negative (the vocabulary law's form).
    N = np.repeat(np.geomspace(3e7, 3e9, 6), 5)
    D = np.tile(np.geomspace(1e9, 1e11, 5), 6)
    truth = {"E": 5.6, "A": 150.0, "a": 0.25, "B": 800.0, "b": 0.3}
    y = -truth["E"] + truth["A"] * N ** -truth["a"] + truth["B"] * D ** -truth["b"]
    assert y.max() < 0
    with pytest.raises(ValueError, match=r"data\['Lu'\] must be > 0 for residuals='log'.*"
                                         r"residuals='raw'"):
        fit_expression("-E + A/N**a + B/D**b", {"N": N, "D": D, "Lu": y}, axes=["N", "D"],
                       target="Lu")
    fit = fit_expression("-E + A/N**a + B/D**b", {"N": N, "D": D, "Lu": y}, axes=["N", "D"],
                         target="Lu", residuals="raw", loss="squared", holdout=0)
    for name, value in truth.items():
        assert fit.params[name] == pytest.approx(value, rel=1e-6), name
    assert fit.residual_kind == "raw" and fit.loss == "squared"
    # The squared objective is half the sum of squares of f - y, by hand:
    p = fit.params
    r = -p["E"] + p["A"] * N ** -p["a"] + p["B"] * D ** -p["b"] - y
    assert fit.objective == pytest.approx(0.5 * float(r @ r), abs=1e-24)


def test_a_law_shared_across_outputs_fits_one_exponent_to_all_columns() -> None:
    N = np.geomspace(1e3, 1e7, 20)
    data = {"N": N, "L1": 1.5 + 40.0 * N ** -0.3, "L2": 0.7 + 9.0 * N ** -0.3}
    fit = fit_expression(["c1 + k1*N**-a", "c2 + k2*N**-a"], data, axes=["N"],
                         target=["L1", "L2"], holdout=0)
    assert fit.params["a"] == pytest.approx(0.3, rel=1e-9)
    assert fit.params["k2"] == pytest.approx(9.0, rel=1e-8)
    pred = fit.predict({"N": np.array([1e8])})
    assert set(pred) == {"L1", "L2"}
    assert float(pred["L2"][0]) == pytest.approx(0.7 + 9.0 * 1e8 ** -0.3, rel=1e-9)
    # A 2-d target column is refused with what to do instead.
    with pytest.raises(ValueError, match=r"must be 1-d .* target=\[\.\.\.\]"):
        fit_expression("c1 + k1*N**-a", {"N": N, "L": np.column_stack([N, N])}, axes=["N"],
                       target="L")


def test_mixture_proportions_may_be_zero() -> None:
    rng = np.random.default_rng(3)
    R = rng.dirichlet(np.ones(3), 30)
    R[:3] = np.eye(3)  # pure domains: two proportions exactly 0
    y = 1.5 + 0.8 * np.exp(-1.2 * R[:, 0] + 0.3 * R[:, 1])
    fit = fit_expression("c + k*exp(t1*r1 + t2*r2)", {"r1": R[:, 0], "r2": R[:, 1], "L": y},
                         axes=["r1", "r2"], target="L", holdout=0)
    assert fit.params["t1"] == pytest.approx(-1.2, rel=1e-7)
    assert fit.params["c"] == pytest.approx(1.5, rel=1e-7)


def test_a_law_undefined_at_every_start_is_an_error_not_a_fit() -> None:
    N = np.array([0.0, 1.0, 2.0, 4.0, 8.0, 16.0])
    with pytest.raises(ValueError, match=r"undefined .* at some data point for every start"):
        fit_expression("E + A*log(N)", {"N": N, "loss": 1.0 + 1.0 / (N + 1)}, axes=["N"])


def test_fewer_runs_than_parameters_need_a_prior_and_get_honest_intervals() -> None:
    N = np.array([1e8, 3e8, 1e9, 3e9])
    D = 20.0 * N
    truth = {"E": 1.82, "A": 482.0, "B": 2085.0, "alpha": 0.348, "beta": 0.366}
    y = truth["E"] + truth["A"] * N ** -truth["alpha"] + truth["B"] * D ** -truth["beta"]
    with pytest.raises(ValueError, match=r"4 runs \(4 targets\) cannot determine 5 parameters:"
                                         r" pass prior="):
        fit_expression("E + A/N**alpha + B/D**beta", {"N": N, "D": D, "loss": y},
                       axes=["N", "D"])
    prior = {"E": (1.7, 0.3, "log"), "A": (400.0, 1.0, "log"), "B": (2000.0, 1.0, "log"),
             "alpha": (0.34, 0.05), "beta": (0.34, 0.05)}
    fit = fit_expression("E + A/N**alpha + B/D**beta", {"N": N, "D": D, "loss": y},
                         axes=["N", "D"], prior=prior, noise=0.01, loss="squared", holdout=0)
    assert fit.interval_method == "posterior" and fit.prior["A"] == (400.0, 1.0, "log")
    for name, value in truth.items():  # the intervals are wide enough to hold the truth
        lo, hi = fit.intervals[name]
        assert lo < value < hi, (name, lo, value, hi)
    assert fit.intervals["A"][1] / fit.intervals["A"][0] > 10  # not false precision
    # A log-normal prior is a statement of sign: A stays positive (log|A| alone would
    # make -A as likely, a spurious mode the search once found)
    assert fit.params["A"] > 0 and fit.intervals["A"][0] > 0
    assert "prior-dominated" in {w.code for w in fit.warnings}
    # The posterior of a linear law by hand (Bayesian linear regression, Gelman et al.
    # 2013 §14.8): precision XᵀX/σ² + diag(1/s²), mean its inverse times Xᵀy/σ² + m/s².
    x = np.array([1.0, 2.0, 4.0])
    yy = np.array([1.0, 1.2, 0.9])
    one = fit_expression("c + b*x", {"x": x, "y": yy}, axes=["x"], target="y",
                         residuals="raw", loss="squared", prior={"c": (0.5, 0.2),
                                                                 "b": (0.0, 0.3)},
                         noise=0.1, holdout=0, confidence=0.9)
    X = np.column_stack([x, np.ones(3)])  # columns in the fit's order: b, c
    prec = X.T @ X / 0.1 ** 2 + np.diag([1 / 0.3 ** 2, 1 / 0.2 ** 2])
    mean = np.linalg.solve(prec, X.T @ yy / 0.1 ** 2 + np.array([0.0, 0.5 / 0.2 ** 2]))
    half = 1.6448536269514722 * np.sqrt(np.diag(np.linalg.inv(prec)))
    for j, name in enumerate(("b", "c")):
        assert one.params[name] == pytest.approx(mean[j], rel=1e-9, abs=1e-12)
        assert one.intervals[name] == pytest.approx((mean[j] - half[j], mean[j] + half[j]),
                                                    rel=1e-8)


def test_an_iteration_limit_that_is_hit_is_stated() -> None:
    N = np.geomspace(1e2, 1e6, 30)
    y = (0.8 + 20.0 * N ** -0.4) * np.exp(0.01 * np.random.default_rng(0).normal(size=30))
    # Four parameters in 10 evaluations: the limit is hit (the three-parameter law met
    # xtol in exactly 10, which left this check conditional and never run).
    fit = fit_expression("E + A/N**alpha + B*log(N)", {"N": N, "loss": y}, axes=["N"],
                         max_nfev=10, refine=1, starts=8, holdout=0)
    assert fit.status == "max_evaluations" and fit.nfev == 10
    assert not fit.success and "iteration-limit" in {w.code for w in fit.warnings}
    assert "evaluation limit reached" in fit.message
    full = fit_expression("E + A/N**alpha", {"N": N, "loss": y}, axes=["N"], holdout=0)
    assert full.success and full.nfev < max(500, 200 * 3)


def test_data_are_validated_before_the_search() -> None:
    N = np.geomspace(1e2, 1e6, 8)
    seven = "E + A/N**a + B/D**b + c*log(N) + d*log(D)"
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"data\['loss'\] must be > 0"):
        fit_law({"N": N, "D": N, "loss": -np.ones(8)}, seven, axes=["N", "D"])
    with pytest.raises(ValueError, match="data has no column 'D'"):
        fit_law({"N": N, "loss": np.ones(8)}, seven, axes=["N", "D"])
    with pytest.raises(ValueError, match=r"data\['N'\] must be >= 0"):
        fit_law({"N": -N, "D": N, "loss": np.ones(8)}, seven, axes=["N", "D"])
    assert time.perf_counter() - start < 1.0  # no search ran
    with pytest.raises(ValueError, match="loss must be one of"):
        fit_expression("E + A/N**a", {"N": N, "loss": np.ones(8)}, axes=["N"], loss="l1")
    with pytest.raises(ValueError, match="ranges must be one of"):
        fit_expression("E + A/N**a", {"N": N, "loss": np.ones(8)}, axes=["N"], ranges="x")
    with pytest.raises(ValueError, match="a prior needs noise="):
        fit_expression("E + A/N**a", {"N": N, "loss": np.ones(8)}, axes=["N"],
                       prior={"E": (1.0, 0.1)})
    with pytest.raises(TypeError, match=r"unknown options \['gird'\]"):
        fit_law({"N": N, "loss": np.ones(8)}, "E + A/N**a", axes=["N"], gird=3)
    with pytest.raises(TypeError, match="only expression laws take"):
        fit_law({"N": N, "loss": np.ones(8)}, "additive", axes=["N"], residuals="raw")
    with pytest.raises(ValueError, match="declare the parameter's range"):
        fit_law({"N": N, "loss": np.ones(8)}, "E + A/N**a", axes=["N"], floor=(0.1, 0.2))


def test_fit_law_forwards_every_option_of_fit_expression() -> None:
    N = np.geomspace(1e2, 1e6, 20)
    y = 0.8 + 20.0 * N ** -0.4
    fit = fit_law({"N": N, "loss": y}, "E + A/N**alpha", axes=["N"], params={"E": (0.9, 2)},
                  grid=3, refine=2, loss="squared", residuals="raw", ranges="bounds",
                  max_nfev=300, starts=64, holdout=0)
    assert fit.params["E"] == 0.9 and fit.loss == "squared" and fit.residual_kind == "raw"
    assert fit.n_starts <= 64 + 200  # the candidates asked for, plus the profiles


def test_bootstrap_intervals_cover_a_smooth_law_and_are_not_collapsed() -> None:
    rng = np.random.default_rng(5)
    N = np.repeat(np.geomspace(1e2, 1e6, 12), 3)
    y = (0.8 + 20.0 * N ** -0.4) * np.exp(0.02 * rng.standard_normal(N.size))
    fit = fit_expression("E + A/N**alpha", {"N": N, "loss": y}, axes=["N"], bootstrap=200,
                         confidence=0.95, seed=2, holdout=0)
    for name, value in {"E": 0.8, "A": 20.0, "alpha": 0.4}.items():
        lo, hi = fit.intervals[name]
        assert lo < value < hi, (name, lo, value, hi)
    assert "collapsed-interval" not in {w.code for w in fit.warnings}
    again = fit_expression("E + A/N**alpha", {"N": N, "loss": y}, axes=["N"], bootstrap=200,
                           confidence=0.95, seed=2, holdout=0)
    assert np.array_equal(fit.bootstrap_samples, again.bootstrap_samples)  # same seed


def test_a_bootstrap_that_collapses_onto_a_bound_is_flagged() -> None:
    # The floor the data want (0.8) is below the declared bound: every resample puts it
    # on the bound, so its percentile interval is a point -- false precision.
    rng = np.random.default_rng(1)
    N = np.repeat(np.geomspace(1e2, 1e6, 10), 3)
    y = (0.8 + 20.0 * N ** -0.4) * np.exp(0.01 * rng.standard_normal(N.size))
    fit = fit_expression("E + A/N**alpha", {"N": N, "loss": y}, axes=["N"],
                         params={"E": (0.95, 2.0)}, bootstrap=100, holdout=0)
    codes = {(w.code, w.parameters) for w in fit.warnings}
    assert ("at-bound", ("E",)) in codes
    assert ("not-identified", ("E",)) in codes  # its interval touches the bound


# --------------------------------------------------------------------------- the suite
# The published laws of benchmarks/bench_published_laws.py (the benchmark runs the
# 1,000-start search; here a 12-start one, and the clean/weak verdicts).

FAST = [i for i, law in enumerate(LAWS)
        if not law.weak and not law.hard and len(law.box) <= 7]


@pytest.mark.parametrize("index", FAST, ids=[LAWS[i].name for i in FAST])
def test_published_laws_reach_a_multistart_optimum_without_warnings(index) -> None:
    if LAWS[index].data is LAWS[0].data and not CHINCHILLA_FILE.is_file():
        pytest.skip(f"{CHINCHILLA_FILE} is absent (the Chinchilla points are read in place)")
    law = LAWS[index]
    data = law.data()
    fit = fit_published(law, data)
    best, _, _ = peer_search(law, data, 12, n_jobs=1)
    assert fit.objective <= best * (1 + 1e-6)
    assert fit.success and fit.warnings == ()


@pytest.mark.slow
@pytest.mark.parametrize("index", [i for i, law in enumerate(LAWS)
                                   if not law.weak and not law.hard and len(law.box) > 7])
def test_large_published_laws_reach_a_multistart_optimum(index) -> None:
    law = LAWS[index]
    data = law.data()
    fit = fit_published(law, data)
    best, _, _ = peer_search(law, data, 20, n_jobs=1)
    assert fit.objective <= best * (1 + 1e-6)
    assert fit.success and fit.warnings == ()


@pytest.mark.parametrize("index", [i for i, law in enumerate(LAWS) if law.weak],
                         ids=[law.name for law in LAWS if law.weak])
def test_weakly_identified_published_sets_are_flagged(index) -> None:
    law = LAWS[index]
    fit = fit_published(law, law.data())
    codes = {w.code for w in fit.warnings}
    assert "not-identified" in codes
    # The status is the returned point's: a polish that creeps along the flat ridge
    # until the evaluation limit is not "converged" (it once inherited the status of
    # the search before it, with nfev at the limit).
    limit = max(500, 200 * len(fit.params))
    assert fit.nfev <= limit
    if fit.nfev == limit:
        assert fit.status == "max_evaluations" and "iteration-limit" in codes
    else:
        assert fit.success


def test_the_cli_fits_an_expression_with_its_options(tmp_path, capsys) -> None:
    import json

    from rlscale.cli import main

    N = np.geomspace(1e3, 1e7, 20)
    path = tmp_path / "runs.csv"
    rows = ["N,L1,L2"] + [f"{n},{1.5 + 40 * n ** -0.3},{0.7 + 9 * n ** -0.3}" for n in N]
    path.write_text("\n".join(rows) + "\n")
    out = tmp_path / "fit.json"
    assert main(["fit", str(path), "--axes", "N", "--target", "L1,L2", "--expr",
                 "c1 + k1*N**-a", "--expr", "c2 + k2*N**-a", "--param", "a=0,1",
                 "--holdout", "0", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    saved = json.loads(out.read_text())  # what is printed, plus the loadable state (issue 24)
    assert {k: saved[k] for k in printed} == printed and saved["format"].startswith("rlscale.")
    assert printed["params"]["a"] == pytest.approx(0.3, rel=1e-8)
    assert printed["targets"] == ["L1", "L2"] and printed["bounds"] == {"a": [0.0, 1.0]}
    assert main(["fit", str(path), "--axes", "N", "--target", "L1", "--expr",
                 "c + k*N**-a", "--param", "c=1.6,2", "--holdout", "0"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["params"]["c"] == 1.6
    assert "warning [at-bound] c = 1.6 sits on its declared lower bound" in captured.err
    for flags, message in ((["--expr", "c + k*N^-a"], "'^' is not a power here"),
                           (["--expr", "c + k*N**-a", "--param", "c"], "--param must be "
                                                                       "NAME=LOW,HIGH"),
                           (["--param", "c=1,2"], "--param is for expression laws"),
                           (["--expr", "c + k*N**-a", "--prior", "c=1,0.1"],
                            "a prior needs noise=")):
        assert main(["fit", str(path), "--axes", "N", "--target", "L1", *flags]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1


def test_a_law_of_hundreds_of_syntax_nodes_fits() -> None:
    # A learning-rate/batch-size law of issue 30 was 662 syntax nodes against a limit of
    # 400.  Here a Chinchilla-type law written out over 36 data-mixture weights (an
    # expression of about 670 nodes, five parameters) is fitted to exact data.
    import ast

    weights = np.linspace(0.5, 1.5, 36) / 36
    terms = " + ".join(f"{w:.6f}*A/(N*{1 + k / 10:.2f})**alpha" for k, w in enumerate(weights))
    text = f"E + {terms} + B/D**beta"
    assert sum(1 for _ in ast.walk(ast.parse(text, mode="eval"))) > 600
    N, D = np.meshgrid(np.geomspace(1e7, 1e10, 6), np.geomspace(1e9, 1e12, 6))
    N, D = N.ravel(), D.ravel()
    scale = sum(w * (1 + k / 10) ** -0.34 for k, w in enumerate(weights))
    y = 1.7 + 400.0 * scale * N ** -0.34 + 410.0 * D ** -0.28
    fit = fit_expression(text, {"N": N, "D": D, "loss": y}, axes=["N", "D"], holdout=0)
    for name, value in {"E": 1.7, "A": 400.0, "alpha": 0.34, "B": 410.0, "beta": 0.28}.items():
        assert fit.params[name] == pytest.approx(value, rel=1e-6), name
