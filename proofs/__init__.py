"""rlscale.proofs: machine-checked derivations of rlscale's laws and bounds.

Each proof is a statement, its assumptions and steps checked by sympy,
interval arithmetic or z3, or cited with a reference (``†``, never counted
as checked).  Imports ``rlscale.theory`` only.  The public names, by topic:

Running the proofs
    :obj:`proof_names`, :obj:`build_proof`, :obj:`check_proof` and
    :obj:`check_proofs` (a :obj:`ProofResult` each, one :obj:`StepResult` per step);
    :obj:`latex_document` typesets them; :obj:`z3_available` says whether the
    optional z3 solver is there.
Writing a proof
    A :obj:`Proof` holds :obj:`Step` objects: :obj:`Identity`, :obj:`Sign`,
    :obj:`Limit`, :obj:`Series` (sympy), :obj:`PolynomialInequality` (z3),
    :obj:`IntervalInequality` and :obj:`IntervalCertificate` (interval arithmetic;
    :obj:`interval_eval` encloses an expression), and :obj:`Cited` facts.
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
