"""rlscale.proofs: every proof holds, and every proof can fail.

For each proof a mutation perturbs one constant (a wrong exponent, a wrong
coefficient, a dropped term) and the checker must report ✗ for the step that
depends on it.  The framework tests check that skipped z3 steps never pass,
that vacuous hypotheses are refused and that the CLI's exit status follows
the steps.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
import sympy as sp
from _proof_verdicts import EXPECTED_VERDICTS

from rlscale.cli import main
from rlscale.proofs import (
    Identity,
    IntervalCertificate,
    IntervalInequality,
    PolynomialInequality,
    Proof,
    Sign,
    _certified,
    build_proof,
    check_proof,
    check_proofs,
    interval_eval,
    proof_names,
)

REQUIRED = {"bon-kl", "tilting", "emax-upper", "emax-lower", "reward-theta", "chinchilla",
            "nested-allocation", "synthetic-ratio", "inference-concavity"}


@pytest.fixture(scope="module")
def all_results():
    # CPU seconds of this process, not wall time: on a shared machine the wall clock
    # measures the other jobs (77 s at load 20 for 30 s of work).
    start = time.process_time()
    results = {r.name: r for r in check_proofs()}
    return results, time.process_time() - start


def test_all_required_proofs_are_registered() -> None:
    assert set(proof_names()) == REQUIRED


def test_every_proof_holds_well_within_a_minute(all_results) -> None:
    results, seconds = all_results
    failed = {name: [(s.name, s.status, s.reason) for s in r.steps if not s.passed]
              for name, r in results.items() if not r.passed}
    assert not failed, failed
    assert seconds < 60, f"rlscale prove must run in under a CPU minute; took {seconds:.1f} s"


# EXPECTED_VERDICTS (tests/_proof_verdicts.py) was written from main before the speed-up of
# issue 13: a faster checker must decide exactly the same steps, by the same engine.
def test_every_step_keeps_its_verdict_and_checker(all_results) -> None:
    results, _ = all_results
    got = {name: tuple((s.name, s.status, s.checker) for s in r.steps)
           for name, r in results.items()}
    assert got == EXPECTED_VERDICTS

def test_every_step_is_machine_checked_or_cited(all_results) -> None:
    results, _ = all_results
    for result in results.values():
        assert result.checked >= 4, result.name
        for step in result.steps:
            if step.status == "cited":
                assert step.checker == "cited" and step.mark == "†", (result.name, step.name)
                assert "[cited: " in step.claim and step.reason, (result.name, step.name)
            else:
                assert step.status == "passed" and step.reason, (result.name, step.name)
                assert step.checker in ("sympy", "z3", "interval"), (result.name, step.name)


def _nested_symbols():
    return sp.symbols("c_E c_T c_tau sigma_E sigma_T sigma_tau", positive=True)


def _mutations():
    alpha, beta = sp.symbols("alpha beta", positive=True)
    cE, cT, ct, sE, sT, st = _nested_symbols()
    S, rho, cr, cs = sp.symbols("S rho c_real c_syn", positive=True)
    c = 1 / sp.sqrt(sp.pi * sp.log(2))
    return [
        ("bon-kl", {"kl_offset": 0}, "kl-integral"),  # dropped the −1 of (n−1)/n
        ("bon-kl", {"density_exponent_shift": 1}, "max-density"),  # wrong exponent
        ("tilting", {"gain_coefficient": 1}, "dv-value"),  # √K instead of √(2K)
        ("tilting", {"kl_coefficient": 1}, "kl-of-tilt"),  # β² instead of β²/2
        ("tilting", {"subgaussian_coefficient": 1}, "dv-stationary"),
        ("emax-upper", {"bound_coefficient": 1}, "optimal-value"),
        ("emax-upper", {"bound_coefficient": 3}, "global-minimum"),  # z3 refutes
        ("emax-upper", {"mgf_coefficient": 1}, "gaussian-mgf"),
        ("emax-lower", {"constant": c * sp.Rational(101, 100)}, "tight-at-two"),
        ("emax-lower", {"constant": sp.Rational(17, 20)}, "finite-range"),
        ("emax-lower", {"tail_start": 20}, "tail-threshold"),
        ("emax-lower", {"constant": sp.Rational(19, 20)}, "two-to-three"),
        ("reward-theta", {"c_hi": 1.3}, "c-hi-covers"),
        ("reward-theta", {"c_lo": 0.3}, "c-lo-covers"),
        ("reward-theta", {"theta_factor": 1}, "theta"),  # dropped the square of τ
        ("reward-theta", {"pool_exponents": (4, 3)}, "pool-size"),
        # the module's own step log n >= (log x)/2 leaves no room for the float C_LO:
        ("reward-theta", {"pool_exponents": (2, 1)}, "c-lo-covers"),
        ("chinchilla", {"n_exponent": alpha / (alpha + beta)}, "first-order"),
        ("chinchilla", {"share_weights": "ell"}, "shares"),  # dropped α_i
        ("nested-allocation", {"t_star": sp.sqrt(cT * sT**2 / (cE * sE**2))}, "attains-bound"),
        ("nested-allocation", {"k_star": cT * st**2 / (ct * sT**2)}, "attains-bound"),
        ("synthetic-ratio", {"x_syn_star": S * sp.log(rho * cs / cr)}, "stationary"),
        ("synthetic-ratio", {"relative_z": lambda rho, s, cr, cs: -((1 + rho * s) / (rho * s))
                             * sp.exp(-cr / (cs * s))}, "relative-lambert"),
        ("inference-concavity", {"coverage_power": 1}, "coverage-second-derivative"),
        ("inference-concavity", {"empirical_shift": 1}, "empirical-second-derivative"),
        # without fpr + fnr < 1 the precision can fall below the fallback (z3 finds one):
        ("inference-concavity", {"informative": False}, "precision-above-fallback"),
    ]


@pytest.mark.parametrize(("name", "constants", "step"), _mutations(),
                         ids=lambda v: v if isinstance(v, str) else None)
def test_mutation_is_caught_by_its_step(name: str, constants: dict, step: str,
                                        all_results) -> None:
    results, _ = all_results  # the unmutated proofs, checked once for the module
    original = {s.name: s for s in results[name].steps}[step]
    assert original.passed, "the unmutated step must hold"
    mutant = build_proof(name, **constants)
    result = mutant.step(step).check()
    assert result.status == "failed", (name, step, result.reason)
    assert result.mark == "✗"


def test_every_proof_has_a_mutation_test() -> None:
    assert {m[0] for m in _mutations()} == REQUIRED


# ---------------------------------------------------------------- the framework
x = sp.Symbol("x", real=True)
p = sp.Symbol("p", positive=True)


def test_identity_fails_fast_on_a_false_identity_with_a_witness() -> None:
    a, b = sp.symbols("a b", positive=True)
    lhs = (a ** (1 / (a + b)) * b ** (a / (a + b))) ** (a + b)
    start = time.perf_counter()
    result = Identity("false", lhs, a * b**a * (1 + 1 / a**7)).check()
    assert result.status == "failed"
    assert "differ numerically" in result.reason
    assert time.perf_counter() - start < 5


def test_identity_is_never_passed_on_numbers_alone() -> None:
    # Agrees with the rhs to 1e-40 at every sample point, but is not identical.
    result = Identity("near", p + sp.Rational(1, 10**60), p).check()
    assert result.status == "failed"



# The cheaper checker of issue 13 (item 6): exact rewrites before simplify, integrals
# term by term with a memo.  Each closed form below is the textbook value, written by
# hand, not the checker's output.
def test_integrals_by_terms_are_right_under_each_symbol_name_and_sign() -> None:
    z = sp.Symbol("z", real=True)
    for b in (sp.Symbol("b", positive=True), sp.Symbol("c", real=True),
              sp.Symbol("lambda", negative=True)):
        mgf = sp.Integral(sp.exp(-z**2 / 2) * sp.exp(b * z) / sp.sqrt(2 * sp.pi),
                          (z, -sp.oo, sp.oo))
        mean = sp.Integral(z * sp.exp(-z**2 / 2 + b * z - b**2 / 2) / sp.sqrt(2 * sp.pi),
                           (z, -sp.oo, sp.oo))
        assert Identity("mgf", mgf, sp.exp(b**2 / 2)).check().passed, b  # E e^(bZ)
        assert Identity("mean", mean, b).check().passed, b  # the tilted law N(b, 1)
        # the memo never hands back a wrong value: a wrong closed form still fails
        assert Identity("wrong", mgf, sp.exp(b**2)).check().status == "failed", b
        assert Identity("wrong", mean, 2 * b).check().status == "failed", b


def test_an_integral_of_divergent_terms_is_evaluated_whole() -> None:
    from rlscale.proofs._steps import _integrate_by_terms

    s = sp.Symbol("s", real=True)
    # ½ − erf(s/√2)/2 splits into two divergent integrals on [0, ∞): never added up
    # (∞ − ∞); with erf written as 1 − erfc the integrand is one convergent term.
    tail = sp.Integral(sp.Rational(1, 2) - sp.erf(s / sp.sqrt(2)) / 2, (s, 0, sp.oo))
    assert sp.simplify(_integrate_by_terms(tail) - 1 / sp.sqrt(2 * sp.pi)) == 0
    # 1/s on [1, ∞) diverges: no sum, and the step fails instead of passing
    assert _integrate_by_terms(sp.Integral(1 / s - 1 / (s + 1), (s, 1, sp.oo))) is None
    assert Identity("log-2", sp.Integral(1 / s - 1 / (s + 1), (s, 1, sp.oo)),
                    sp.log(2)).check().passed
    assert Identity("wrong", sp.Integral(1 / s, (s, 1, sp.oo)), 1).check().status == "failed"


def test_sign_still_simplifies_when_the_expression_as_written_is_undecided() -> None:
    # (x − 1)² − x² + 2x = 1 for real x: the assumptions cannot tell as written
    expr = (x - 1) ** 2 - x**2 + 2 * x
    assert expr.is_positive is None
    assert Sign("one", expr, ">").check().passed
    assert Sign("one", expr, "<").check().status == "failed"


def test_a_power_identity_needing_the_costly_forms_still_passes_and_fails() -> None:
    a, b = sp.symbols("a b", positive=True)
    g = (a / b) ** (1 / (a + b))
    lhs = g ** a * g ** b  # = a/b: exponents a/(a+b) + b/(a+b) add up to 1
    assert Identity("powers", lhs, a / b).check().passed
    assert Identity("powers", lhs, a / b + sp.Rational(1, 10**40)).check().status == "failed"


def test_limits_by_terms_only_when_every_term_has_a_finite_limit() -> None:
    from rlscale.proofs import Limit

    t = sp.Symbol("t", positive=True)
    # x − √(x² + x) → −½ although both terms diverge: taken whole, not as ∞ − ∞
    assert Limit("whole", t - sp.sqrt(t**2 + t), t, sp.oo, -sp.Rational(1, 2)).check().passed
    assert Limit("wrong", t - sp.sqrt(t**2 + t), t, sp.oo, 0).check().status == "failed"
    # sin t has no limit (a range): no sum; 1/t + e^(−t) → 0 term by term
    assert Limit("none", sp.sin(t) + 1 / t, t, sp.oo, 0).check().status == "failed"
    assert Limit("terms", 1 / t + sp.exp(-t), t, sp.oo, 0).check().passed
    assert Limit("terms", 1 / t + sp.exp(-t) + 1, t, sp.oo, 0).check().status == "failed"

def test_sign_undecidable_is_a_failure() -> None:
    result = Sign("unknown", x, ">").check()
    assert result.status == "failed" and "cannot decide" in result.reason


def test_checker_crash_is_a_failure_not_a_pass() -> None:
    def boom():
        raise ZeroDivisionError("boom")

    result = IntervalCertificate("crash", enclose=boom, text="c").check()
    assert result.status == "failed" and "ZeroDivisionError" in result.reason


def test_z3_refutes_with_a_counterexample_and_proves_true_claims() -> None:
    good = PolynomialInequality("amgm", p**2 + 1 >= 2 * p).check()
    bad = PolynomialInequality("wrong", p**2 + 1 >= 3 * p).check()
    assert good.passed, good.reason
    assert bad.status == "failed" and "counterexample" in bad.reason


def test_z3_sees_the_declared_signs_of_symbols() -> None:
    # For a real x the claim is false; for a positive p it is true.
    assert PolynomialInequality("real", x**3 >= 0).check().status == "failed"
    assert PolynomialInequality("positive", p**3 >= 0).check().passed


@pytest.mark.parametrize("hypotheses", [(2 * p == p**2,), (x > 1, x < 0)])
def test_vacuous_hypotheses_are_refused(hypotheses) -> None:
    # `2*p == p**2` is Python's structural equality, i.e. False; x > 1 ∧ x < 0 is empty.
    result = PolynomialInequality("vacuous", x >= 100, hypotheses).check()
    assert result.status == "failed" and "vacuous" in result.reason


def test_missing_z3_skips_and_never_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_certified, "_import_z3", lambda: None)
    step = PolynomialInequality("amgm", p**2 + 1 >= 2 * p)
    result = step.check()
    assert result.status == "skipped" and "z3-solver" in result.reason
    proof = Proof("demo", "demo", "demo", (step, Identity("one", p / p, 1)))
    assert not proof.check().passed


def test_missing_z3_uses_the_interval_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_certified, "_import_z3", lambda: None)
    fallback = IntervalInequality("amgm", (x - 1) ** 2 + 1, x, 0, 10, strict=True)
    result = PolynomialInequality("amgm", x**2 + 2 >= 2 * x, (x >= 0, x <= 10),
                                  fallback=fallback).check()
    assert result.passed and "interval fallback" in result.reason


def test_interval_inequality_proves_refutes_and_gives_up() -> None:
    assert IntervalInequality("exp", sp.exp(x) - x, x, -5, 5, strict=True).check().passed
    bad = IntervalInequality("sq", x**2 - 2, x, 0, 2).check()
    assert bad.status == "failed" and "counterexample" in bad.reason
    # A tangent zero cannot be certified by intervals: fails as undecided, never passes.
    tangent = IntervalInequality("tan", (x - 1) ** 2, x, 0, 3, strict=True,
                                 max_boxes=200).check()
    assert tangent.status == "failed"


def test_interval_eval_encloses_the_true_value() -> None:
    from mpmath import iv, mp, mpf

    expr = sp.exp(-x**2 / 2) * sp.log(1 + x) / sp.sqrt(2 * sp.pi) + sp.pi * x**3
    for value in (0.1, 0.5, 2.0, 7.25):
        enc = interval_eval(expr, {x: iv.mpf(value)})
        with mp.workdps(40):
            truth = sp.N(expr.subs(x, sp.Float(value, 40)), 40)
            assert enc.a <= mpf(str(truth)) <= enc.b


def test_duplicate_step_names_are_rejected() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        Proof("d", "d", "d", (Identity("s", 1, 1), Identity("s", 2, 2)))


def test_latex_rendering_carries_steps_and_verdicts() -> None:
    proof = build_proof("synthetic-ratio")
    tex = proof.to_latex(proof.check())
    assert tex.startswith(r"\section*{Critical synthetic-to-real ratio")
    assert tex.count(r"\item \textbf") == len(proof.steps)
    assert r"\checkmark" in tex and r"\begin{enumerate}" in tex


# ---------------------------------------------------------------- the CLI
def test_cli_prove_prints_marks_and_writes_latex_and_json(tmp_path, capsys) -> None:
    out_json = tmp_path / "proofs.json"
    status = main(["prove", "nested-allocation", "synthetic-ratio", "--latex",
                   str(tmp_path / "tex") + "/", "--json", str(out_json)])
    captured = capsys.readouterr()
    assert status == 0
    assert "✓ attains-bound" in captured.out and "PROVED (" in captured.out
    assert re.search(r"PROVED \(\d+ checked, \d+ cited, ", captured.out)
    assert "2 of 2 proofs hold" in captured.err
    assert (tmp_path / "tex" / "nested-allocation.tex").is_file()
    data = json.loads(out_json.read_text())
    assert data["passed"] is True and len(data["proofs"]) == 2
    assert all(s["status"] in ("passed", "cited") for p in data["proofs"] for s in p["steps"])
    assert all(p["checked"] == p["counts"]["passed"] for p in data["proofs"])

    assert main(["prove", "synthetic-ratio", "--quiet", "--latex",
                 str(tmp_path / "all.tex")]) == 0
    document = (tmp_path / "all.tex").read_text()
    assert r"\documentclass" in document and document.rstrip().endswith(
        r"\end{document}")


def test_cli_prove_exit_status_is_nonzero_when_a_step_is_skipped(monkeypatch, capsys) -> None:
    monkeypatch.setattr(_certified, "_import_z3", lambda: None)
    assert main(["prove", "emax-upper"]) == 1  # its z3 step has no interval fallback
    captured = capsys.readouterr()
    assert "– global-minimum" in captured.out and "NOT PROVED" in captured.out
    assert "z3-solver is not installed" in captured.err


def test_cli_prove_unknown_name_is_a_one_line_error(capsys) -> None:
    assert main(["prove", "no-such-proof"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no-such-proof" in err[0]


def test_cli_prove_list(capsys) -> None:
    assert main(["prove", "--list"]) == 0
    out = capsys.readouterr().out
    for name in REQUIRED:
        assert name in out


def test_unknown_constant_names_the_valid_ones() -> None:
    with pytest.raises(TypeError,
                       match="proof tilting has no constant 'foo'; valid: gain_coefficient"):
        build_proof("tilting", foo=1)
    with pytest.raises(ValueError, match="name must be one of bon-kl"):
        check_proofs(["tilting", "no-such"])


def test_check_proof_accepts_constants() -> None:
    assert check_proof("emax-upper").passed
    assert not check_proof("emax-upper", bound_coefficient=1).passed


# ---------------------------------------------------------------- cited steps (issue 11 §8)
def test_cited_steps_are_counted_apart_never_checked_nor_failed() -> None:
    from rlscale.proofs import Cited

    step = Cited("gibbs", "KL(p || q) >= 0", "Cover & Thomas, Thm 2.6.3")
    result = step.check()
    assert (result.status, result.mark, result.checker) == ("cited", "†", "cited")
    assert not result.passed and "Cover & Thomas" in result.reason
    proof = Proof("demo", "demo", "demo", (Identity("one", p / p, 1), step))
    checked = proof.check()
    assert checked.passed and (checked.checked, checked.cited) == (1, 1)
    assert checked.counts_text() == "1 checked, 1 cited"
    data = checked.as_dict()
    assert data["checked"] == 1 and data["cited"] == 1 and data["counts"]["cited"] == 1
    assert [s["checker"] for s in data["steps"]] == ["sympy", "cited"]
    # a cited step never rescues a failed check
    bad = Proof("demo", "demo", "demo", (Identity("one", p / p, 2), step)).check()
    assert not bad.passed and bad.counts_text() == "0 checked, 1 cited, 1 failed"
    for fact, ref in (("", "a book"), ("a fact", " ")):
        with pytest.raises(ValueError, match="a cited step needs a"):
            Cited("empty", fact, ref)


def test_each_step_names_its_checker(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Sign("s", p, ">").check().checker == "sympy"
    assert PolynomialInequality("z", p**2 + 1 >= 2 * p).check().checker == "z3"
    fallback = IntervalInequality("amgm", (x - 1) ** 2 + 1, x, 0, 10, strict=True)
    assert fallback.check().checker == "interval"
    monkeypatch.setattr(_certified, "_import_z3", lambda: None)
    step = PolynomialInequality("amgm", x**2 + 2 >= 2 * x, (x >= 0, x <= 10), fallback=fallback)
    assert step.check().checker == "interval"  # the fallback decided it, not z3


@pytest.mark.parametrize(("name", "cited"), [
    ("tilting", "donsker-varadhan"), ("emax-lower", "concavity"), ("emax-lower", "layer-cake"),
    ("reward-theta", "model-facts"), ("reward-theta", "calculus"), ("emax-upper", "jensen-union"),
    ("bon-kl", "change-of-variables"), ("chinchilla", "kkt-sufficient"),
    ("synthetic-ratio", "lambert-branch")])
def test_classical_facts_are_cited_not_claimed_by_checked_steps(name, cited) -> None:
    from rlscale.proofs import Cited

    proof = build_proof(name)
    assert isinstance(proof.step(cited), Cited)
    words = ("Gibbs", "Jensen", "concavity", "layer-cake", "unimodal", "E[X | Ŷ]",
             "rises then falls", "Gordon's inequality", "unique minimiser")
    for step in proof.steps:
        if not isinstance(step, Cited):
            assert not any(w in step.claim for w in words), (name, step.name, step.claim)


def test_reward_theta_does_not_claim_the_quantilizer() -> None:
    proof = build_proof("reward-theta")
    assert "quantil" not in proof.statement
    assert "quantilizer is not covered" in proof.notes
    # The proved band is documented in the derive tutorial (moved there from the README).
    page = (Path(__file__).resolve().parents[1] / "docs" / "derive.md").read_text()
    band = page[page.index("**Proved band.**"):page.index("A documented limit")]
    assert "(the quantilizer for K ≥ ½)" not in band and "best-of-n and the tilted" in band


def test_former_guarantees_keyword_still_builds_a_proof() -> None:
    proof = Proof("d", "d", "d", (Identity("s", 1, 1),), concerns=("a",), guarantees=("b",))
    assert proof.concerns == ("a", "b") and proof.check().concerns == ("a", "b")
