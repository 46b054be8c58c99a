"""What ``law=`` can name: one registry of the fitter's front ends (issue 25, item 2).

``fit_law(data, law=...)`` asks :func:`front_end` once and hands the fit to the
front end it returns; the CLI (``rlscale fit --law``) lists, describes and
dispatches through the same table.  No caller compares a law name with a string:

- the built-in families (:data:`rlscale.optimize._fit_family.FAMILIES`:
  ``additive``, ``multiplicative``, ``pass_rate``) -> the approach-3 fitter of
  :mod:`rlscale.optimize._fit`; each family declares its properties (limit,
  direction, linearity; :class:`~rlscale.optimize._fit_family.Family`);
- ``sigmoid`` -> :func:`~rlscale.optimize.fit_sigmoid` (one axis: compute;
  the target a success rate), ``gao_bon`` / ``gao_rl`` ->
  :func:`~rlscale.optimize.fit_gao` (one axis: KL; the target a gold score):
  curve fits of one column against another;
- anything written as an expression (a string that is not a name, an
  :class:`~rlscale.theory.ExpressionLaw`, a list of them) ->
  :func:`~rlscale.optimize.fit_expression`.

A new front end is one entry here; a new family is one class in ``_fit_family``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rlscale.optimize._fit_family import FAMILIES, Family

__all__: list[str] = []

#: ``law=``'s default and the CLI's.
DEFAULT_LAW = "additive"

#: The ``starts=`` choices in one sentence: ``fit_law``'s docstring says the same at
#: length, and ``rlscale fit --starts``'s help is this text.
STARTS_HELP = ("'auto' (default): the grid-safe multistart, one start per exponent tuple of "
               "Hoffmann et al.'s grid refined together; 'grid': L-BFGS from every grid point; "
               "N: from the N grid points with the lowest objective (built-in families and "
               "expressions; the sigmoid and Gao fits have their own starts)")


@dataclass(frozen=True)
class FrontEnd:
    """One name ``law=`` accepts and the fitter that serves it.

    ``family`` is the built-in family (``None`` for the other front ends),
    ``fitter`` the ``"module:function"`` fitting a curve of one axis (imported when
    used), ``fixed`` the keywords it is called with, ``audit`` an optional
    ``"module:function"`` the CLI also runs (the sigmoid's extrapolation audit) and
    ``curve`` the ``"module:function"`` of the fitted law drawn in the CLI's figure.
    """

    name: str
    summary: str
    family: Family | None = None
    fitter: str | None = None
    fixed: Mapping[str, Any] = field(default_factory=dict)
    audit: str | None = None
    curve: str | None = None

    @property
    def takes_starts(self) -> bool:
        """``starts=`` applies (the approach-3 and expression fitters)."""
        return self.fitter is None

    @property
    def one_axis(self) -> bool:
        """A curve of one axis (compute or KL) against the target."""
        return self.fitter is not None

    def function(self, which: str = "fitter") -> Callable[..., Any]:
        """The named callable (``fitter``, ``audit`` or ``curve``), imported now."""
        path = getattr(self, which)
        if path is None:
            raise ValueError(f"law {self.name!r} has no {which}")
        module, _, name = path.partition(":")
        return getattr(importlib.import_module(module), name)


_FAMILY_SUMMARY = {
    "additive": "L = floor + sum_i A_i x_i^-alpha_i (default)",
    "multiplicative": "L = C prod_i x_i^-alpha_i",
    "pass_rate": "p = p_max / (1 + sum_i B_i x_i^-alpha_i), for a success column",
}

FRONT_ENDS: dict[str, FrontEnd] = {
    **{name: FrontEnd(name, _FAMILY_SUMMARY.get(name, fam.__doc__ or name), family=fam)
       for name, fam in FAMILIES.items()},
    "sigmoid": FrontEnd(
        "sigmoid", "compute curve R(C) = R0 + (A - R0)/(1 + (C_mid/C)^B), one axis = compute, "
        "with the extrapolation audit", fitter="rlscale.optimize._rl_fit:fit_sigmoid",
        audit="rlscale.optimize._rl_fit:sigmoid_audit"),
    "gao_bon": FrontEnd(
        "gao_bon", "Gao et al.'s best-of-n form d(alpha - beta d), d = sqrt(KL); one axis = KL",
        fitter="rlscale.optimize._gao_fit:fit_gao", fixed={"kind": "bon"},
        curve="rlscale.theory.reward:gao_bon"),
    "gao_rl": FrontEnd(
        "gao_rl", "Gao et al.'s RL form d(alpha - beta log d), d = sqrt(KL); one axis = KL",
        fitter="rlscale.optimize._gao_fit:fit_gao", fixed={"kind": "rl"},
        curve="rlscale.theory.reward:gao_rl"),
}

#: Laws written as expressions: not a name in :data:`FRONT_ENDS`.
EXPRESSION = FrontEnd("expression", "any law written as an expression (fit_expression)")


def is_expression(law: Any) -> bool:
    """An ExpressionLaw, a string that is not a name but an expression, or a list of them
    (one per target).

    Imports nothing: an ExpressionLaw can exist only once its module (and sympy) is
    loaded, so a built-in family's fit does not pay sympy's import (issue 24).
    """
    if isinstance(law, list | tuple) and law:
        return all(is_expression(item) for item in law)
    if isinstance(law, str):
        return law not in FRONT_ENDS and not law.isidentifier()
    module = sys.modules.get("rlscale.theory._expr")
    return module is not None and isinstance(law, module.ExpressionLaw)


def front_end(law: Any) -> FrontEnd:
    """The front end serving ``law`` (a registered name or an expression).

    Examples
    --------
    >>> front_end("pass_rate").family.limit, front_end("gao_rl").fixed
    ('ceiling', {'kind': 'rl'})
    >>> front_end("E + A/N**alpha").name
    'expression'
    >>> front_end("logistic")
    Traceback (most recent call last):
    ...
    ValueError: law must be one of ('additive', 'multiplicative', 'pass_rate', 'sigmoid', \
'gao_bon', 'gao_rl') or an expression law; got law='logistic'
    """
    if isinstance(law, str) and law in FRONT_ENDS:
        return FRONT_ENDS[law]
    if is_expression(law):
        return EXPRESSION
    raise ValueError(f"law must be one of {tuple(FRONT_ENDS)} or an expression law; "
                     f"got law={law!r:.80}")
