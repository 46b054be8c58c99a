"""Per-step verdict and checker of every proof (the expected table for test_proofs.py).

Kept apart from the tests so that tests/test_proofs.py stays under the house
limit of ~500 lines; ``test_every_step_keeps_its_verdict_and_checker`` compares
``check_proofs()`` against this table.
"""

from __future__ import annotations

# Per-step verdict and checker of every proof, written from main before the speed-up
# of issue 13 (item 6): a faster checker must decide exactly the same steps, by the same
# engine -- no step may move from sympy/z3/interval to cited, skipped or failed.
EXPECTED_VERDICTS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "bon-kl": (
        ("max-density", "passed", "sympy"), ("max-of-uniforms", "cited", "cited"),
        ("chain-rule", "passed", "sympy"), ("normalised", "passed", "sympy"),
        ("log-density", "passed", "sympy"), ("kl-integral", "passed", "sympy"),
        ("change-of-variables", "cited", "cited"), ("kl-at-one", "passed", "sympy"),
        ("kl-derivative", "passed", "sympy"), ("kl-increasing", "passed", "z3"),
        ("monotone", "cited", "cited"), ("log-n-gap", "passed", "sympy"),
    ),
    "tilting": (
        ("gaussian-mgf", "passed", "sympy"), ("tilted-law", "passed", "sympy"),
        ("log-ratio", "passed", "sympy"), ("kl-of-tilt", "passed", "sympy"),
        ("gain-of-tilt", "passed", "sympy"), ("gain-of-budget", "passed", "sympy"),
        ("gibbs-identity", "passed", "sympy"), ("donsker-varadhan", "cited", "cited"),
        ("dv-objective", "passed", "sympy"), ("dv-stationary", "passed", "sympy"),
        ("dv-value", "passed", "sympy"), ("dv-square", "passed", "sympy"),
        ("dv-minimum", "passed", "z3"),
    ),
    "emax-upper": (
        ("gaussian-mgf", "passed", "sympy"), ("log-of-union", "passed", "sympy"),
        ("jensen-union", "cited", "cited"), ("stationary", "passed", "sympy"),
        ("optimal-value", "passed", "sympy"), ("global-minimum", "passed", "z3"),
    ),
    "emax-lower": (
        ("two-samples", "passed", "sympy"), ("tight-at-two", "passed", "sympy"),
        ("one-sample", "passed", "sympy"), ("concavity", "cited", "cited"),
        ("bound-concave", "passed", "sympy"), ("two-to-three", "passed", "interval"),
        ("finite-range", "passed", "interval"), ("layer-cake", "cited", "cited"),
        ("gordon-derivative", "passed", "sympy"), ("gordon-decreasing", "passed", "sympy"),
        ("gordon-limit", "passed", "sympy"), ("negative-part", "passed", "sympy"),
        ("union-at-threshold", "passed", "sympy"), ("tail-argument", "cited", "cited"),
        ("growth-rate", "passed", "sympy"), ("growth-positive", "passed", "z3"),
        ("tail-threshold", "passed", "interval"),
    ),
    "reward-theta": (
        ("proxy-variance", "passed", "sympy"), ("model-facts", "cited", "cited"),
        ("regression-factor", "passed", "sympy"), ("envelope-derivative", "passed", "sympy"),
        ("envelope-unimodal", "passed", "sympy"), ("envelope-lambert", "passed", "sympy"),
        ("envelope-root", "passed", "sympy"), ("envelope-value", "passed", "sympy"),
        ("per-pool-upper", "cited", "cited"), ("gain-squared", "passed", "z3"),
        ("lambert-log", "passed", "sympy"), ("calculus", "cited", "cited"),
        ("slack-derivative", "passed", "sympy"), ("tau-min-small", "passed", "sympy"),
        ("slack-decreasing", "passed", "z3"), ("c-hi-covers", "passed", "interval"),
        ("upper-band", "passed", "z3"), ("c-hi-formula", "passed", "interval"),
        ("small-k-kl-slope", "passed", "sympy"), ("small-k-kl", "passed", "z3"),
        ("small-k-budget", "passed", "sympy"), ("small-k-noise", "passed", "z3"),
        ("small-k-regime", "passed", "sympy"), ("small-k-constant", "passed", "sympy"),
        ("emax-lower-bounds", "cited", "cited"), ("two-is-feasible", "passed", "sympy"),
        ("pool-noise", "passed", "z3"), ("pool-size", "passed", "z3"), ("theta", "passed", "z3"),
        ("theta-positive", "passed", "sympy"), ("theta-min", "passed", "z3"),
        ("large-k-constant", "passed", "sympy"), ("c-lo-covers", "passed", "interval"),
        ("c-lo-formula", "passed", "interval"),
    ),
    "chinchilla": (
        ("budget", "passed", "sympy"), ("first-order", "passed", "sympy"),
        ("factorised-derivative", "passed", "sympy"), ("root-of-factor", "passed", "sympy"),
        ("sign-change", "cited", "cited"), ("exponents-sum", "passed", "sympy"),
        ("convex-1", "passed", "sympy"), ("convex-2", "passed", "sympy"),
        ("convex-3", "passed", "sympy"), ("kkt-1", "passed", "sympy"),
        ("kkt-2", "passed", "sympy"), ("kkt-3", "passed", "sympy"),
        ("kkt-sufficient", "cited", "cited"), ("shares", "passed", "sympy"),
        ("shares-sum", "passed", "sympy"),
    ),
    "nested-allocation": (
        ("e-cancels", "passed", "sympy"), ("lagrange-identity", "passed", "sympy"),
        ("bound-is-constant", "passed", "sympy"), ("squares-nonnegative", "passed", "sympy"),
        ("attains-bound", "passed", "sympy"), ("budget-spent", "passed", "sympy"),
        ("optimal-variance", "passed", "sympy"),
    ),
    "synthetic-ratio": (
        ("marginal", "passed", "sympy"), ("concave", "passed", "sympy"),
        ("concave-maximum", "cited", "cited"), ("stationary", "passed", "sympy"),
        ("equal-marginal-value", "passed", "sympy"), ("positive-iff", "passed", "sympy"),
        ("corner", "passed", "z3"), ("critical-price-ratio", "passed", "z3"),
        ("ratio", "passed", "sympy"), ("budget", "passed", "sympy"),
        ("relative-foc", "passed", "sympy"), ("relative-lambert", "passed", "sympy"),
        ("lambert-branch", "cited", "cited"),
    ),
    "inference-concavity": (
        ("coverage-second-derivative", "passed", "sympy"), ("coverage-concave", "passed", "z3"),
        ("verifier-second-derivative", "passed", "sympy"), ("verifier-concave", "passed", "sympy"),
        ("verifier-gap", "passed", "sympy"), ("precision-above-fallback", "passed", "z3"),
        ("verifier-one-candidate", "passed", "sympy"),
        ("empirical-second-derivative", "passed", "sympy"),
        ("empirical-concave", "passed", "sympy"), ("log-of-function", "passed", "sympy"),
        ("log-of-concave", "passed", "z3"), ("decreasing-increments", "passed", "z3"),
        ("greedy-optimal", "cited", "cited"),
    ),
}
