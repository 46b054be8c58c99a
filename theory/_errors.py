"""Exception types shared by the whole toolkit.

They live in ``rlscale.theory`` because every package may import it; the
top-level ``rlscale`` re-exports them.  Bad input raises the built-in
``ValueError``/``TypeError`` (``InfeasibleError`` is a ``ValueError``, so
``except ValueError`` works as expected); a solver that fails on valid input
raises ``SolverError``, a ``RuntimeError``.  The CLI turns all of them into a
one-line message and exit status 2.

Examples
--------
>>> issubclass(InfeasibleError, ValueError), issubclass(SolverError, RuntimeError)
(True, True)
>>> raise InfeasibleError("target=0.1 is below the law's floor 0.2")
Traceback (most recent call last):
...
rlscale.InfeasibleError: target=0.1 is below the law's floor 0.2
"""

from __future__ import annotations

__all__ = ["InfeasibleError", "RlscaleError", "SolverError"]


class RlscaleError(Exception):
    """Base class of rlscale's own errors (never raised directly)."""


class SolverError(RlscaleError, RuntimeError):
    """A numerical solver failed; the message carries its status and reason."""


class InfeasibleError(RlscaleError, ValueError):
    """The problem has no solution, e.g. a target below a law's floor."""


# Shown as ``rlscale.InfeasibleError`` in tracebacks and docs: the public name.
for _cls in (RlscaleError, SolverError, InfeasibleError):
    _cls.__module__ = "rlscale"
del _cls
