"""rlscale: analytic scaling theory for reinforcement-learning post-training.

The toolkit is organised in four sub-packages, imported on first use so that
``import rlscale`` stays cheap (it never imports cvxpy or matplotlib):

``rlscale.theory``
    Pure mathematics: symbolic (sympy) laws and their numeric evaluation.
``rlscale.simulate``
    Simulators: Gaussian selection and a numpy RL trainer.
``rlscale.optimize``
    Law fitting and compute-optimal allocation (cvxpy geometric programs).
``rlscale.proofs``
    Machine-checked derivations of the bounds the toolkit relies on.

Each of the four opens with an index of its public names by topic.  What composes
several of them lives in the top package's rooms:

``rlscale.verification``
    The experiments that check rlscale's claims against its own simulators (the
    reward-optimisation law in the Gaussian model, in the trainer and on the
    reward-model testbed; inference plans grounded in a trained agent).
``rlscale.report``
    ``rlscale report``: the toolkit end to end, written as one document and a
    ``results.json``.
``rlscale.sweep``
    Resumable scaling sweeps of the trainer (``rlscale sweep``).
``rlscale.properties``
    A registry of named property-based checks (``rlscale verify properties``).
``rlscale.commands`` and ``rlscale.cli``
    The command line: one module per verb.
``rlscale.files``
    Files a user may open, written atomically and published by rename.

The errors every room raises besides ``ValueError``/``TypeError`` are
:obj:`RlscaleError` and its subclasses :obj:`SolverError` and :obj:`InfeasibleError`.

Examples
--------
>>> import rlscale
>>> rlscale.__version__
'0.1.0'
>>> rlscale.theory.__name__
'rlscale.theory'
"""

from __future__ import annotations

from rlscale._errors import InfeasibleError, RlscaleError, SolverError
from rlscale.theory._lazy import attach

__version__ = "0.1.0"

# Not typing's: the ``rlscale`` command imports this package before it can catch a
# Ctrl-C, so it imports no more than it must (issue 22).  Type checkers read the name.
TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from rlscale import optimize, proofs, simulate, theory  # noqa: F401

# Sub-packages load on first attribute access, keeping ``import rlscale`` cheap.
__getattr__, __dir__, _lazy_names = attach(
    __name__, {}, ("theory", "simulate", "optimize", "proofs", "properties")
)
__all__ = ["InfeasibleError", "RlscaleError", "SolverError", "__version__", *_lazy_names]
