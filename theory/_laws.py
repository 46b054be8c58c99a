"""Per-axis data-scaling law families (sympy expressions, fast numpy evaluation).

Every law here has the form ``L(x) = L_inf + P(x)`` where ``P`` is a
posynomial whose terms carry only *negative* powers of the axes: more data
never hurts, and the reducible loss ``L - L_inf`` is log-log convex.  That is
what makes compute-optimal allocation a geometric program (Boyd et al. 2007)
and what the generic tests check for every class through
:attr:`Law.properties`.

Families
--------
:class:`AdditiveLaw`
    ``L = L_inf + sum_i a_i * x_i**(-alpha_i)`` -- the Chinchilla form
    (Hoffmann et al. 2022, arXiv 2203.15556, eq. 2) with user-named axes.
:class:`MultiplicativeLaw`
    ``L = L_inf + C * prod_i x_i**(-alpha_i)`` (``L_inf = 0`` by default), the
    Cobb-Douglas form.
:class:`PassRateLaw`
    A bounded success rate ``p = p_max / (1 + sum_i c_i * x_i**(-alpha_i))``
    in ``(0, p_max]``.  With one axis it is the sigmoidal ScaleRL curve
    ``A / (1 + (C_mid / C)**B)`` (arXiv 2510.13786, with ``R0 = 0``).  Its
    *loss* is the expected number of attempts per success, ``1 / p``, which is
    exactly an additive law with floor ``1 / p_max`` and coefficients
    ``c_i / p_max``; maximising ``p`` and minimising ``1/p`` are the same
    problem, so the pass rate inherits the additive law's fitter and solver.

Elasticities ``-d log(L - L_inf) / d log x_i`` order the axes by impact at a
point; for the additive law they are ``alpha_i * l_i / sum_j l_j`` with
``l_i = a_i x_i**(-alpha_i)``, so a small exponent on a large term can beat a
large exponent on a small one.

The base class :class:`Law` (evaluation, log space, elasticities) and
:class:`LawProperties` are defined in :mod:`rlscale.theory._law_base` and
re-exported here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from rlscale.theory._law_base import _POSITIVE_ORTHANT, Law, LawProperties, _check_axes, _check_map
from rlscale.theory._posynomial import Monomial, Posynomial
from rlscale.theory._validation import (
    check_bool,
    check_finite_result,
    check_mapping,
    check_scalar,
    return_like,
)

__all__ = ["AdditiveLaw", "Law", "LawProperties", "MultiplicativeLaw", "PassRateLaw",
           "law_from_dict"]


class AdditiveLaw(Law):
    """``L = floor + sum_i a_i * x_i**(-alpha_i)`` (Hoffmann et al. 2022, eq. 2).

    Parameters
    ----------
    floor : float
        Irreducible loss ``L_inf >= 0``.
    coefficients : mapping axis -> float
        ``a_i > 0``.  The axes are the mapping's keys, in order.
    exponents : mapping axis -> float
        ``alpha_i > 0``, one per axis.

    Examples
    --------
    >>> law = AdditiveLaw(1.82, coefficients={"N": 482.0, "D": 2085.0},
    ...                   exponents={"N": 0.348, "D": 0.366})
    >>> round(law(N=70e9, D=1.4e12), 4)
    1.9758
    >>> {a: round(e, 3) for a, e in law.elasticities(N=70e9, D=1.4e12).items()}
    {'N': 0.181, 'D': 0.176}
    >>> law.expression()
    2085.0/D**0.366 + 482.0/N**0.348 + 1.82
    """

    family: ClassVar[str] = "additive"
    properties: ClassVar[LawProperties] = LawProperties(
        monotone_decreasing=True, convex=True, log_log_convex=True, gp_compatible=True,
        bounded=False, domain=_POSITIVE_ORTHANT)

    def __init__(self, floor: float, coefficients: Mapping[str, float],
                 exponents: Mapping[str, float]) -> None:
        self.floor = check_scalar("floor", floor, low=0.0)
        self.axes = _check_axes(coefficients, "coefficients")
        self.coefficients = _check_map("coefficients", coefficients, self.axes)
        self.exponents = _check_map("exponents", exponents, self.axes)

    def reducible_posynomial(self) -> Posynomial:
        return Posynomial(tuple(Monomial(self.coefficients[a], ((a, -self.exponents[a]),))
                                for a in self.axes), str(self))

    def params(self) -> dict[str, Any]:
        return {"floor": self.floor, "coefficients": dict(self.coefficients),
                "exponents": dict(self.exponents)}

    def term_values(self, values: Mapping[str, Any] | None = None,
                    **kwargs: Any) -> dict[str, Any]:
        """Each axis' term ``l_i = a_i * x_i**(-alpha_i)``."""
        vals = self._values(values, kwargs)
        with np.errstate(over="ignore"):
            terms = {a: self.coefficients[a] * vals[a] ** -self.exponents[a] for a in self.axes}
        for a in self.axes:
            check_finite_result(terms[a], f"the term of axis {a!r}", **{a: vals[a]})
        return {a: return_like(terms[a], vals[a]) for a in self.axes}

    def expression(self, symbolic: bool = False) -> Any:
        import sympy as sp

        check_bool("symbolic", symbolic)
        x = self.symbols
        if symbolic:
            floor = sp.Symbol("L_inf", nonnegative=True)
            terms = [sp.Symbol(f"a_{a}", positive=True)
                     * x[a] ** -sp.Symbol(f"alpha_{a}", positive=True) for a in self.axes]
        else:
            floor = sp.Float(self.floor)
            terms = [sp.Float(self.coefficients[a]) * x[a] ** -sp.Float(self.exponents[a])
                     for a in self.axes]
        return floor + sp.Add(*terms)

    def fix(self, values: Mapping[str, Any] | None = None, **kwargs: Any) -> AdditiveLaw:
        """The law over the remaining axes with some axes held at given values.

        Each held axis' term ``a_i x_i^(-alpha_i)`` is a constant, so it joins the
        floor: ``L = (floor + sum_held l_i) + sum_free a_j x_j^(-alpha_j)``.  This is
        how a multi-axis plan is priced one axis at a time (e.g. synthetic
        environments at fixed tasks and trajectories per environment).

        Examples
        --------
        >>> law = AdditiveLaw(1.0, {"E": 2.0, "k": 4.0}, {"E": 0.5, "k": 1.0})
        >>> restricted = law.fix(k=8.0)      # 1 + 4/8 joins the floor
        >>> restricted.floor, restricted.axes
        (1.5, ('E',))
        >>> round(restricted(E=16.0), 12) == round(law(E=16.0, k=8.0), 12)
        True
        >>> law.fix(E=1.0, k=1.0)
        Traceback (most recent call last):
        ...
        ValueError: fix must leave at least one axis free; axes are ['E', 'k']
        """
        held = {**check_mapping("values", {} if values is None else values), **kwargs}
        unknown = [a for a in held if a not in self.axes]
        if unknown:
            raise ValueError(f"fix names {unknown[0]!r}, not an axis of the law "
                             f"(axes: {list(self.axes)})")
        free = [a for a in self.axes if a not in held]
        if not free:
            raise ValueError(f"fix must leave at least one axis free; axes are "
                             f"{list(self.axes)}")
        terms = self.term_values({a: check_scalar(f"fix[{a!r}]", v, low=0.0, low_open=True)
                                  for a, v in held.items()} | dict.fromkeys(free, 1.0))
        floor = check_finite_result(self.floor + sum(float(terms[a]) for a in held),
                                    "the fixed law's floor", **held)
        return AdditiveLaw(floor, {a: self.coefficients[a] for a in free},
                           {a: self.exponents[a] for a in free})

    def __str__(self) -> str:
        return f"{self.floor:g} + " + " + ".join(
            f"{self.coefficients[a]:g}*{a}**-{self.exponents[a]:g}" for a in self.axes)


class MultiplicativeLaw(Law):
    """``L = floor + C * prod_i x_i**(-alpha_i)`` (Cobb-Douglas; ``floor = 0`` default).

    Its elasticities are the exponents themselves, everywhere.

    Examples
    --------
    >>> law = MultiplicativeLaw(2.0, exponents={"E": 0.3, "K": 0.1})
    >>> round(law(E=100, K=1000), 6)
    0.251785
    >>> law.elasticities(E=100, K=1000)
    {'E': 0.3, 'K': 0.1}
    """

    family: ClassVar[str] = "multiplicative"
    properties: ClassVar[LawProperties] = LawProperties(
        monotone_decreasing=True, convex=True, log_log_convex=True, gp_compatible=True,
        bounded=False, domain=_POSITIVE_ORTHANT)

    def __init__(self, coefficient: float, exponents: Mapping[str, float],
                 floor: float = 0.0) -> None:
        self.coefficient = check_scalar("coefficient", coefficient, low=0.0, low_open=True)
        self.floor = check_scalar("floor", floor, low=0.0)
        self.axes = _check_axes(exponents, "exponents")
        self.exponents = _check_map("exponents", exponents, self.axes)

    def reducible_posynomial(self) -> Posynomial:
        key = tuple(sorted((a, -self.exponents[a]) for a in self.axes))
        return Posynomial((Monomial(self.coefficient, key),), str(self))

    def params(self) -> dict[str, Any]:
        return {"coefficient": self.coefficient, "exponents": dict(self.exponents),
                "floor": self.floor}

    def expression(self, symbolic: bool = False) -> Any:
        import sympy as sp

        check_bool("symbolic", symbolic)
        x = self.symbols
        if symbolic:
            c = sp.Symbol("C", positive=True)
            floor = sp.Symbol("L_inf", nonnegative=True)
            exps = {a: sp.Symbol(f"alpha_{a}", positive=True) for a in self.axes}
        else:
            c, floor = sp.Float(self.coefficient), sp.Float(self.floor)
            exps = {a: sp.Float(self.exponents[a]) for a in self.axes}
        return floor + c * sp.Mul(*[x[a] ** -exps[a] for a in self.axes])

    def __str__(self) -> str:
        return f"{self.floor:g} + {self.coefficient:g}*" + "*".join(
            f"{a}**-{self.exponents[a]:g}" for a in self.axes)


class PassRateLaw(Law):
    """Bounded success rate ``p = p_max / (1 + sum_i c_i * x_i**(-alpha_i))``.

    The loss is the expected number of attempts per success, ``L = 1 / p``
    (a geometric waiting time), which is the additive law
    ``1/p_max + sum_i (c_i/p_max) * x_i**(-alpha_i)`` -- see
    :meth:`to_additive`.  ``p`` rises monotonically from 0 (no data) to
    ``p_max``; with one axis it is ScaleRL's sigmoid in ``log x``.

    Parameters
    ----------
    p_max : float
        Asymptotic pass rate in ``(0, 1]``.
    coefficients, exponents : mapping axis -> float
        ``c_i > 0`` (``c_i = x_mid**alpha_i``, where ``x_mid`` halves ``p``
        with one axis) and ``alpha_i > 0``.

    Examples
    --------
    >>> law = PassRateLaw(0.8, coefficients={"E": 50.0}, exponents={"E": 1.0})
    >>> round(law.pass_rate(E=50), 6)
    0.4
    >>> round(law.loss(E=50), 6), round(1 / law.pass_rate(E=50), 6)
    (2.5, 2.5)
    >>> law.to_additive().floor
    1.25
    """

    family: ClassVar[str] = "pass_rate"
    properties: ClassVar[LawProperties] = LawProperties(
        monotone_decreasing=True, convex=True, log_log_convex=True, gp_compatible=True,
        bounded=True, domain=_POSITIVE_ORTHANT + "; pass rate in (0, p_max], loss = 1/p")

    def __init__(self, p_max: float, coefficients: Mapping[str, float],
                 exponents: Mapping[str, float]) -> None:
        self.p_max = check_scalar("p_max", p_max, low=0.0, high=1.0, low_open=True)
        self.axes = _check_axes(coefficients, "coefficients")
        self.coefficients = _check_map("coefficients", coefficients, self.axes)
        self.exponents = _check_map("exponents", exponents, self.axes)
        self.floor = check_finite_result(1.0 / self.p_max, "1/p_max", p_max=self.p_max)
        for a, c in self.coefficients.items():  # the loss 1/p has coefficients c/p_max
            check_finite_result(c / self.p_max, f"coefficients[{a!r}]/p_max", p_max=self.p_max,
                                **{f"coefficients[{a!r}]": c})

    def to_additive(self) -> AdditiveLaw:
        """The loss ``1/p`` as an :class:`AdditiveLaw` (same axes and exponents)."""
        return AdditiveLaw(self.floor, {a: c / self.p_max for a, c in self.coefficients.items()},
                           self.exponents)

    @classmethod
    def from_additive(cls, law: AdditiveLaw) -> PassRateLaw:
        """Inverse of :meth:`to_additive`; needs ``law.floor >= 1`` (``p_max <= 1``)."""
        if not isinstance(law, AdditiveLaw):
            raise TypeError(f"law must be an AdditiveLaw; got {type(law).__name__}")
        if not law.floor >= 1.0:
            raise ValueError(f"an attempts-per-success law needs floor >= 1 (p_max <= 1); "
                             f"got floor={law.floor:g}")
        p_max = 1.0 / law.floor
        return cls(p_max, {a: c * p_max for a, c in law.coefficients.items()}, law.exponents)

    def reducible_posynomial(self) -> Posynomial:
        return self.to_additive().reducible_posynomial()

    def pass_rate(self, values: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
        """The success probability ``p(x)`` in ``(0, p_max]``."""
        vals = self._values(values, kwargs)
        # p_max * (L - floor) = sum_i c_i x_i**-alpha_i, evaluated overflow-safely
        # (inf for tiny x, where p is 0).
        denom = 1.0 + self.p_max * self.reducible_posynomial().evaluate(vals)
        return return_like(self.p_max / denom, *vals.values())

    def params(self) -> dict[str, Any]:
        return {"p_max": self.p_max, "coefficients": dict(self.coefficients),
                "exponents": dict(self.exponents)}

    def expression(self, symbolic: bool = False) -> Any:
        """The loss ``1/p`` as a sympy expression (see :meth:`pass_rate_expression`)."""
        return 1 / self.pass_rate_expression(symbolic)

    def pass_rate_expression(self, symbolic: bool = False) -> Any:
        """The pass rate ``p`` as a sympy expression (parameters as symbols if ``symbolic``)."""
        import sympy as sp

        check_bool("symbolic", symbolic)
        x = self.symbols
        if symbolic:
            p = sp.Symbol("p_max", positive=True)
            terms = [sp.Symbol(f"c_{a}", positive=True)
                     * x[a] ** -sp.Symbol(f"alpha_{a}", positive=True) for a in self.axes]
        else:
            p = sp.Float(self.p_max)
            terms = [sp.Float(self.coefficients[a]) * x[a] ** -sp.Float(self.exponents[a])
                     for a in self.axes]
        return p / (1 + sp.Add(*terms))

    def __str__(self) -> str:
        return f"{self.p_max:g} / (1 + " + " + ".join(
            f"{self.coefficients[a]:g}*{a}**-{self.exponents[a]:g}" for a in self.axes) + ")"


def law_from_dict(spec: Mapping[str, Any]) -> Law:
    """Build a law from ``{"family": ..., parameters...}`` (as :meth:`Law.as_dict` writes).

    Examples
    --------
    >>> law = AdditiveLaw(0.2, {"E": 1.0}, {"E": 0.5})
    >>> law_from_dict(law.as_dict()) == law
    True
    """
    from rlscale.theory._expr import PosynomialLaw
    from rlscale.theory._mixture import MixtureLaw
    from rlscale.theory._nested import VarianceComponentsLaw

    if not isinstance(spec, Mapping):
        raise TypeError(f"law spec must be a mapping; got {type(spec).__name__}")
    family = spec.get("family")
    kinds: dict[str, type[Law]] = {
        "additive": AdditiveLaw, "multiplicative": MultiplicativeLaw,
        "pass_rate": PassRateLaw, "variance_components": VarianceComponentsLaw,
        "mixture": MixtureLaw, "posynomial": PosynomialLaw}
    if family not in kinds:
        raise ValueError(f"law family must be one of {sorted(kinds)}; got family={family!r}")
    kwargs = {k: v for k, v in spec.items() if k not in ("family", "axes", "properties")}
    try:
        return kinds[family](**kwargs)
    except TypeError as exc:
        raise TypeError(f"bad parameters for the {family} law: {exc}") from exc
