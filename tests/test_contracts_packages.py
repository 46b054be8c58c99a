"""Input contracts of the public names outside theory/optimize/simulate (issue 22, item 3).

``rlscale.proofs``, ``rlscale.sweep``, ``rlscale.report``, ``rlscale.verification``,
``rlscale.properties`` (and its ``strategies``), ``rlscale.cli`` and ``rlscale``
itself: each callable of every ``__all__`` has an entry below, fuzzed one hostile
argument at a time like the other contract suites (:mod:`_contract_cases`), or is a
constant or result record.  Entry points that would run for minutes with valid
arguments (a report, a verification, every property) are fuzzed with their work
replaced by a sentinel: a hostile argument must be refused *before* the work
starts, and a valid one reaches the sentinel (counted as accepted).
"""

from __future__ import annotations

import contextlib
import math
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from _contract_cases import Case, make_test, public_methods
from contracts import assert_finite

import rlscale
import rlscale.proofs as pr
import rlscale.properties as props
import rlscale.properties.strategies as strat
import rlscale.report as rep
import rlscale.sweep as sw
import rlscale.verification as ver
from rlscale import cli

X = sp.Symbol("x", positive=True)
SPEC = sw.parse_spec({"design": "grid", "seeds": [0], "axes": {"environments": [1, 2]},
                      "train": {"epochs": 1, "grid_size": 4, "eval_environments": 2}})
ROWS = [{"environments": 1, "tasks_per_environment": 1, "trajectories_per_task": 2,
         "algorithm": "grpo", "policy": "linear", "frontier": "", "defect_rate": 0.0,
         "verify": 0, "context": 1, "env": "grid", "success": 0.5, "env_steps": 10}]
CONFIG = sw.expand(SPEC)[0]["config"]
IDENTITY = pr.Identity("id", X * 2, X + X)
RESULT = pr.Proof("p", "t", "s", steps=(IDENTITY,)).check()


class Sentinel(Exception):
    """Raised where the real work would start: the arguments were accepted."""


@contextlib.contextmanager
def _sentinel(monkeypatch_targets):
    with pytest.MonkeyPatch.context() as mp:
        for module, name in monkeypatch_targets:
            mp.setattr(module, name, _stop)
        yield


def _stop(*args, **kwargs):
    raise Sentinel


def _accepting(call, targets):
    """``call`` with its long work replaced by the sentinel; accepted input returns None."""
    def run(**kwargs):
        with _sentinel(targets):
            try:
                return call(**kwargs)
            except Sentinel:
                return None
    return run


def _reading(call):
    """``call(path)``: a file that cannot be read is an ``OSError`` naming it, as documented
    (a missing file is not a bad argument type); returns None then."""
    def run(path):
        try:
            return call(path)
        except OSError as exc:
            assert str(path) in str(exc) or getattr(exc, "filename", None) is not None, exc
            return None
    return run


def _results_csv(tmp: Path) -> Path:
    path = tmp / "results.csv"
    sw.run_sweep(SPEC, path, progress=False)
    return path


_TMP = Path(__import__("tempfile").mkdtemp(prefix="rlscale-contracts-"))
RESULTS = _results_csv(_TMP)
SPEC_FILE = _TMP / "spec.toml"
SPEC_FILE.write_text('design = "grid"\nseeds = [0]\n[axes]\nenvironments = [1]\n')

import rlscale.report._run as _report_run  # noqa: E402
import rlscale.simulate  # noqa: E402
import rlscale.verification._gaussian_reward_law as _gauss  # noqa: E402
import rlscale.verification._rm_testbed_law as _testbed_law  # noqa: E402
import rlscale.verification._trainer_reward_law as _trainer_law  # noqa: E402

CASES = [
    # -- rlscale.proofs
    Case("Cited", pr.Cited, {"name": "c", "fact": "a fact", "reference": "a book"}),
    Case("Identity", pr.Identity, {"name": "id", "lhs": X * 2, "rhs": X + X, "text": "",
                                   "log_compare": False}),
    Case("Sign", pr.Sign, {"name": "s", "expr": X, "relation": ">", "text": ""}),
    Case("Limit", pr.Limit, {"name": "l", "expr": 1 / X, "var": X, "point": sp.oo,
                             "value": 0, "direction": "+", "text": ""}),
    Case("Series", pr.Series, {"name": "s", "expr": sp.exp(X), "var": X, "point": 0,
                               "order": 3, "expansion": 1 + X + X**2 / 2, "text": ""},
         counts=("order",)),
    Case("PolynomialInequality", pr.PolynomialInequality,
         {"name": "p", "goal": X**2 + 1 > 0, "hypotheses": (), "text": "", "timeout_ms": 2000},
         counts=("timeout_ms",)),
    Case("IntervalInequality", pr.IntervalInequality,
         {"name": "i", "expr": X + 1, "var": X, "lo": 0, "hi": 1, "strict": True, "boxes": 8,
          "max_boxes": 64}, counts=("boxes", "max_boxes"),
         names={"boxes": ("max_boxes",), "max_boxes": ("boxes",)}),
    Case("IntervalCertificate", pr.IntervalCertificate,
         {"name": "c", "enclose": lambda: [("one", 1)], "text": "t", "strict": True}),
    Case("Step.check", lambda: IDENTITY.check(), {}),
    Case("Proof", pr.Proof, {"name": "p", "title": "t", "statement": "s",
                             "steps": (IDENTITY,), "assumptions": ("a",)}),
    Case("Proof.step", pr.Proof("p", "t", "s", steps=(IDENTITY,)).step, {"name": "id"}),
    Case("ProofResult.step", RESULT.step, {"name": "id"}),
    Case("ProofResult.count", RESULT.count, {"status": "passed"}),
    Case("Proof.replace_step", pr.Proof("p", "t", "s", steps=(IDENTITY,)).replace_step,
         {"new": pr.Identity("id", X, X)}),
    Case("build_proof", pr.build_proof, {"name": "bon-kl"}),
    Case("check_proof", pr.check_proof, {"name": "bon-kl"}, deadline=60.0, examples=10),
    Case("check_proofs", _accepting(pr.check_proofs, [(pr, "check_proof")]),
         {"names": ["bon-kl"]}),
    Case("interval_eval", pr.interval_eval, {"expr": X**2, "bindings": {X: 2}},
         names={"expr": ("bindings",)}),
    Case("latex_document", pr.latex_document, {"parts": ["a"], "title": "t"}),
    Case("proof_names", pr.proof_names, {}),
    Case("z3_available", pr.z3_available, {}),
    # -- rlscale.sweep
    Case("parse_spec", sw.parse_spec, {"data": {"seeds": [0]}},
         names={"data": ("spec", "seeds", "key", "table")}),
    Case("load_spec", _reading(sw.load_spec), {"path": SPEC_FILE}),
    Case("expand", sw.expand, {"spec": SPEC}),
    Case("run_id", sw.run_id, {"config": CONFIG}),
    Case("read_results", _reading(sw.read_results), {"path": RESULTS}),
    # RESULTS holds every run of SPEC: a valid call resumes with nothing to do.  (out is
    # not fuzzed: "1" is a valid file name, and the sweep would write it.)
    Case("run_sweep", lambda **kw: sw.run_sweep(out=RESULTS, **kw),
         {"spec": SPEC, "jobs": 1, "scheduler": None, "progress": False, "on_row": None},
         counts=("jobs",)),
    Case("summarise", sw.summarise, {"rows": ROWS, "confidence": 0.9}),
    # -- rlscale.report
    Case("load_config", lambda path, quick: _reading(lambda p: rep.load_config(p, quick))(path),
         {"path": None, "quick": True}),
    Case("run_report", _accepting(rep.run_report, [(_report_run, "open_staging")]),
         {"out": _TMP / "report", "config": None, "quick": True, "progress": False}),
    # -- rlscale.verification
    Case("GroundingConfig", ver.GroundingConfig, {"environments": 4, "epochs": 1, "seed": 0},
         counts=("environments", "epochs", "seed")),
    Case("ground_inference", _accepting(ver.ground_inference, [(rlscale.simulate, "train")]),
         {"config": None, "grid_points": 4}, counts=("grid_points",)),
    Case("reward_grid", ver.reward_grid, {"mode": "quick"}),
    Case("trainer_grid", ver.trainer_grid, {"mode": "quick"}),
    # (out is not fuzzed: a valid directory name would be created in the working directory)
    Case("verify_reward_law", _accepting(lambda **kw: ver.verify_reward_law(
        out=_TMP / "law", **kw), [(_gauss, "reward_grid")]),
         {"mode": "quick", "rng": 0, "figures": False, "progress": False},
         names={"rng": ("seed",)}),
    Case("verify_trainer_reward_law", _accepting(lambda **kw: ver.verify_trainer_reward_law(
        out=_TMP / "trainer-law", **kw), [(_trainer_law, "trainer_grid")]),
         {"mode": "quick", "rng": 0, "figures": False, "progress": False, "jobs": 1},
         counts=("jobs",), names={"rng": ("seed",)}),
    Case("verify_testbed_reward_law", _accepting(lambda **kw: ver.verify_testbed_reward_law(
        out=_TMP / "testbed-law", **kw), [(_testbed_law, "testbed_grid")]),
         {"mode": "quick", "rng": 0, "figures": False, "progress": False, "jobs": 1},
         counts=("jobs",), names={"rng": ("seed",)}),
    # -- rlscale.properties
    Case("Property", props.Property, {"name": "a.b", "description": "d",
                                      "factory": lambda: None}),
    Case("register", props.register, {"name": "contract.unused", "description": "d"}),
    Case("registry", props.registry, {}),
    Case("select", props.select, {"names": ["validation.check_real_roundtrip"]}),
    Case("run_property", props.run_property,
         {"prop": "validation.check_real_roundtrip", "profile": "dev"}, examples=20),
    Case("run_properties", _accepting(props.run_properties, [(props, "run_property")]),
         {"names": ["validation.check_real_roundtrip"], "profile": "ci"}),
    # -- rlscale.properties.strategies
    Case("additive_laws", strat.additive_laws, {"axes": ("E", "T")}),
    Case("kl_budgets", strat.kl_budgets, {"high": 10.0}),
    Case("linear_costs", strat.linear_costs, {"axes": ("E", "T")}),
    Case("log_uniform", strat.log_uniform, {"low": 1e-3, "high": 10.0},
         names={"low": ("high",), "high": ("low",)}),
    Case("noise_sds", strat.noise_sds, {"high": 5.0}),
    Case("pool_sizes", strat.pool_sizes, {"high": 1e6}),
    Case("positive_reals", strat.positive_reals, {"low": 1e-3, "high": 10.0},
         names={"low": ("high",), "high": ("low",)}),
    Case("seeds", strat.seeds, {}),
    # -- rlscale.cli
    Case("build_parser", cli.build_parser, {}),
    Case("main", lambda argv: _cli_main(argv), {"argv": ["prove", "--list"]}),
]

#: Constants, records (their producers have entries), exceptions and sub-modules.
RECORDS = {
    "rlscale.proofs": {"ProofResult", "StepResult", "Step"},
    "rlscale.sweep": {"SweepSpec"},
    "rlscale.report": {"DEFAULTS", "QUICK", "ReportResult"},
    "rlscale.verification": {"GroundingResult", "RewardLawReport", "TestbedLawReport",
                             "TrainerRewardLawReport",
                             "write_reward_figures"},
    # register_profiles takes no argument and runs in conftest.py at import (calling it
    # inside a hypothesis test is deprecated by hypothesis)
    "rlscale.properties": {"PROFILES", "PropertyResult", "register_profiles"},
    "rlscale": {"InfeasibleError", "RlscaleError", "SolverError", "__version__", "optimize",
                "proofs", "properties", "simulate", "theory"},
}


def _cli_main(argv):
    """rlscale.cli.main in-process: an exit status (argparse's SystemExit included)."""
    import io

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return cli.main(argv)
        except SystemExit as exc:
            return exc.code


test_contract = make_test(CASES)

MODULES = {"rlscale.proofs": pr, "rlscale.sweep": sw, "rlscale.report": rep,
           "rlscale.verification": ver, "rlscale.properties": props,
           "rlscale.properties.strategies": strat, "rlscale.cli": cli, "rlscale": rlscale}


def test_every_public_name_of_these_packages_has_a_contract():
    covered = {c.name for c in CASES}
    missing = [f"{m}.{n}" for m, mod in MODULES.items() for n in mod.__all__
               if n not in covered and n not in RECORDS.get(m, set())]
    assert not missing, f"public names without a contract entry: {missing}"
    methods = [m for n in pr.__all__ if isinstance(getattr(pr, n), type)
               for m in public_methods(getattr(pr, n))]
    unlisted = [m for m in methods if m not in covered and m.split(".")[1] not in
                {"claim", "latex", "checker_used", "as_dict", "check", "to_latex", "passed",
                 "checked", "cited", "failed", "summary", "skipped", "status_counts", "mark",
                 "counts_text", "success", "status", "message"}]  # the result convention
    assert not unlisted, unlisted


def test_write_reward_figures_refuses_a_wrong_report(tmp_path):
    for bad in (None, object(), "report", {"mode": "quick"}):
        with pytest.raises(TypeError, match="report must be a RewardLawReport"):
            ver.write_reward_figures(bad, tmp_path)


def test_records_are_finite():
    result = pr.check_proof("bon-kl")
    assert_finite(result.as_dict())
    assert math.isfinite(result.seconds) and np.isfinite(result.steps[0].seconds)
