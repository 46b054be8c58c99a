"""Re-export of the toolkit's exception types (defined in ``rlscale.theory._errors``)."""

from rlscale.theory._errors import InfeasibleError, RlscaleError, SolverError

__all__ = ["InfeasibleError", "RlscaleError", "SolverError"]
