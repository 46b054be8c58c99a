"""rlscale.proofs: machine-checked derivations of rlscale's laws and bounds.

Each proof is a statement, its assumptions and steps checked by sympy,
interval arithmetic or z3.  Imports ``rlscale.theory`` only.
"""

from __future__ import annotations

from rlscale.theory._lazy import attach

# Public name -> private module defining it.  Each capability adds its own block.
_EXPORTS: dict[str, str] = {
    # -- proof framework and the proofs (issue 6) --
}

# Public sub-modules reachable as attributes.
_SUBMODULES: tuple[str, ...] = ()

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS, _SUBMODULES)
