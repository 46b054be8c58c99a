"""Gold-score forms of Gao, Schulman & Hilton (2022), "Scaling laws for reward model
overoptimization".

With ``d = sqrt(KL)`` the gold reward model score after optimising a proxy is
``d (α − β d)`` for best-of-n and ``d (α − β log d)`` for RL.
Their coefficients depend on the reward model (here: on ``M``); the forms have
no ``M`` term of their own, which is what the reward-law verification's model
comparison tests.  Reached as ``reward.gao_expr``, ``reward.gao_bon`` and
``reward.gao_rl``.
"""

from __future__ import annotations

import math  # noqa: F401  (the doctests use it)
from typing import TYPE_CHECKING, Any

import numpy as np

from rlscale.theory._validation import check_finite_result, check_real, return_like

if TYPE_CHECKING:
    import sympy as sp

__all__ = ["gao_bon", "gao_expr", "gao_rl"]


def _broadcast(**arrays: np.ndarray) -> None:
    """Check that the arrays broadcast, naming them if they do not."""
    try:
        np.broadcast_shapes(*(np.shape(v) for v in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(v)}" for k, v in arrays.items())
        raise ValueError(f"the shapes of {shapes} do not broadcast together") from None


def gao_expr(kind: str = "bon") -> sp.Expr:
    """Gao, Schulman & Hilton (2022) gold-score forms as sympy expressions in ``K``.

    ``kind="bon"``: ``d (α − β d)``; ``kind="rl"``: ``d (α − β log d)``; ``d = sqrt(K)``.
    Their coefficients depend on the reward model (here: on ``M``); they have
    no ``M`` term of their own, which is what the verification's model
    comparison tests.

    Examples
    --------
    >>> import sympy as sp
    >>> from rlscale.theory.reward import K
    >>> sp.expand(gao_expr("bon"))
    sqrt(K)*alpha - K*beta
    >>> gao_expr("rl").subs({K: sp.E**2})
    E*(alpha - beta)
    """
    import sympy as sp

    from rlscale.theory._reward_symbolic import K

    alpha, beta = sp.symbols("alpha beta", positive=True)
    d = sp.sqrt(K)
    if not isinstance(kind, str):
        raise TypeError(f"kind must be 'bon' or 'rl'; got {kind!r:.60}")
    if kind == "bon":
        return d * (alpha - beta * d)
    if kind == "rl":
        return d * (alpha - beta * sp.log(d))
    raise ValueError(f"kind must be 'bon' or 'rl'; got kind={kind!r}")


def gao_bon(kl: Any, alpha: float, beta: float) -> float | np.ndarray:
    """Gao, Schulman & Hilton (2022) best-of-n form ``d (α − β d)``, ``d = sqrt(KL)``.

    Examples
    --------
    >>> gao_bon(4.0, 1.0, 0.1)
    1.6
    """
    d = np.sqrt(check_real("kl", kl, low=0.0))
    a, b = check_real("alpha", alpha), check_real("beta", beta)
    _broadcast(kl=d, alpha=a, beta=b)
    with np.errstate(over="ignore", invalid="ignore"):
        out = d * (a - b * d)
    check_finite_result(out, "the Gao et al. best-of-n score", kl=kl, alpha=alpha, beta=beta)
    return return_like(out, kl, alpha, beta)


def gao_rl(kl: Any, alpha: float, beta: float) -> float | np.ndarray:
    """Gao, Schulman & Hilton (2022) RL form ``d (α − β log d)``, ``d = sqrt(KL)`` (0 at 0).

    Examples
    --------
    >>> round(gao_rl(math.e**2, 1.0, 0.5), 6)  # d = e
    1.359141
    """
    d = np.sqrt(check_real("kl", kl, low=0.0))
    a, b = check_real("alpha", alpha), check_real("beta", beta)
    _broadcast(kl=d, alpha=a, beta=b)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.where(d > 0, d * (a - b * np.log(np.where(d > 0, d, 1.0))), 0.0)
    check_finite_result(out, "the Gao et al. RL score", kl=kl, alpha=alpha, beta=beta)
    return return_like(out, kl, alpha, beta)


