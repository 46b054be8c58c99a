"""rlscale.proofs: machine-checked derivations of rlscale's laws and bounds.

Each proof is a statement, its assumptions and steps checked by sympy,
interval arithmetic or z3, or cited with a reference (``†``, never counted
as checked).  Imports ``rlscale.theory`` only.
"""

from __future__ import annotations

from rlscale.theory._lazy import attach

# Public name -> private module defining it.  Each capability adds its own block.
_EXPORTS: dict[str, str] = {
    # -- proof framework and the proofs (issue 6) --
    "Proof": "_core",
    "ProofResult": "_core",
    "StepResult": "_steps",
    "Step": "_steps",
    "Cited": "_steps",
    "Identity": "_steps",
    "Sign": "_steps",
    "Limit": "_steps",
    "Series": "_steps",
    "PolynomialInequality": "_certified",
    "IntervalInequality": "_certified",
    "IntervalCertificate": "_certified",
    "interval_eval": "_certified",
    "latex_document": "_core",
    "z3_available": "_certified",
    "proof_names": "_registry",
    "build_proof": "_registry",
    "check_proof": "_registry",
    "check_proofs": "_registry",
}

# Public sub-modules reachable as attributes.
_SUBMODULES: tuple[str, ...] = ()

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS, _SUBMODULES)
