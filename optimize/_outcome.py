"""One result convention for the verbs that fit or solve: ``success``, ``status``, ``message``.

Every result of a fitting or solving verb in :mod:`rlscale.optimize` answers
the same three questions, whatever ran underneath (scipy's ``OptimizeResult``
and cvxpy's ``Problem.status`` are the models):

``success`` : bool
    Whether the method that produced the numbers finished by its own stopping
    rule (an optimiser met its tolerance; a closed form or a linear least-squares
    solve of full rank applied).  Diagnostics about *what* was found -- an
    unidentified exponent, an extrapolation -- are not failures of the solve:
    they live in the result's ``warnings`` (see
    :mod:`rlscale.optimize._diagnostics`) and are summarised in ``message``.
``status`` : str
    The producing method's own word: cvxpy's ``"optimal"`` /
    ``"optimal_inaccurate"``; ``"converged"`` or ``"max_evaluations"`` for scipy
    optimisers; ``"closed_form"``; ``"exact"`` for a linear least-squares fit of
    full rank, ``"rank_deficient"`` otherwise.
``message`` : str
    The same in words, for a person: what ran and how it ended.

A verb that cannot produce a usable answer raises (``ValueError`` naming the
argument, or the solver's status and reason) rather than returning
``success=False``; ``success=False`` flags a result that exists but is not
certified, so a script can test it.

One exception, by name: where a result already reports a *task* success --
:class:`~rlscale.optimize.InferencePlan` (the plan's success probability) and
:class:`~rlscale.simulate.TrainResult` (held-out success rate) -- ``success``
keeps that meaning; they solve nothing iteratively (an exact integer plan, a
training run).
"""

from __future__ import annotations

from typing import Any

__all__: list[str] = []

#: The statuses that count as success.
SOLVED = frozenset({"optimal", "converged", "closed_form", "exact"})


def from_scipy(sol: Any, what: str) -> tuple[bool, str, str]:
    """``(success, status, message)`` of a scipy ``OptimizeResult`` for ``what`` ran.

    ``least_squares`` reports status 0 for "the maximum number of function
    evaluations is exceeded" and -1 for improper input; ``minimize_scalar``'s
    bounded method reports 1 for the same budget exhaustion.  Anything scipy
    calls unsuccessful maps to ``"max_evaluations"`` when its message says so
    and to ``"failed"`` otherwise.
    """
    if bool(sol.success):
        return True, "converged", f"{what}: {sol.message}"
    text = str(sol.message)
    status = "max_evaluations" if "aximum number" in text else "failed"
    return False, status, f"{what} did not converge: {text}"


def from_lstsq(rank: int, n_params: int, what: str) -> tuple[bool, str, str]:
    """``(success, status, message)`` of a linear least-squares solve of ``rank``."""
    if rank == n_params:
        return True, "exact", f"{what}: linear least squares of full rank {rank}"
    return False, "rank_deficient", (f"{what}: linear least squares of rank {rank} < "
                                     f"{n_params} parameters (not identified)")
