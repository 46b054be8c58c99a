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
"""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from rlscale.theory._posynomial import Monomial, Posynomial
from rlscale.theory._validation import (
    check_bool,
    check_finite_result,
    check_mapping,
    check_real,
    check_scalar,
    return_like,
)

__all__ = ["AdditiveLaw", "Law", "LawProperties", "MultiplicativeLaw", "PassRateLaw",
           "law_from_dict"]


@dataclass(frozen=True)
class LawProperties:
    """What a law family guarantees on its domain (checked by generic tests).

    Attributes
    ----------
    monotone_decreasing : bool
        The loss decreases in every axis.
    convex : bool
        The loss is convex in the axis values.
    log_log_convex : bool
        ``log(L - L_inf)`` is convex in ``log x`` (a posynomial reducible part).
    gp_compatible : bool
        Minimising the loss under a posynomial cost is a geometric program.
    bounded : bool
        The law's natural quantity is bounded (a pass rate in ``(0, p_max]``).
    domain : str
        Where the law is defined.
    """

    monotone_decreasing: bool
    convex: bool
    log_log_convex: bool
    gp_compatible: bool
    bounded: bool
    domain: str

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


_POSITIVE_ORTHANT = "every axis value finite and > 0"


def _check_axes(axes: Any, name: str = "axes") -> tuple[str, ...]:
    if isinstance(axes, Mapping):
        axes = tuple(axes.keys())
    if isinstance(axes, str | bytes):
        raise TypeError(f"{name} must be a mapping axis -> value, not the string {axes!r:.40}")
    try:
        axes = tuple(axes)
    except TypeError:
        raise TypeError(f"{name} must be a mapping axis -> value; got "
                        f"{type(axes).__name__}") from None
    if not axes:
        raise ValueError(f"a law needs at least one axis; got none in {name}")
    for a in axes:
        if not isinstance(a, str) or not a.isidentifier():
            raise ValueError(f"{name}: axis names must be identifiers such as 'environments'; "
                             f"got {a!r:.40}")
    if len(set(axes)) != len(axes):
        raise ValueError(f"axis names must be distinct; got {list(axes)}")
    return axes


def _check_map(name: str, mapping: Any, axes: tuple[str, ...] | None = None) -> dict[str, float]:
    if not isinstance(mapping, Mapping):
        raise TypeError(f"{name} must be a mapping axis -> value; got {type(mapping).__name__}")
    if axes is not None and set(mapping) != set(axes):
        missing = sorted(set(axes) - set(mapping))
        extra = sorted(set(mapping) - set(axes))
        raise ValueError(f"{name} must give one value per axis {list(axes)} (the axes of "
                         f"coefficients); missing {missing}, unknown {extra}")
    return {a: check_scalar(f"{name}[{a!r}]", v, low=0.0, low_open=True)
            for a, v in mapping.items()}


class Law(abc.ABC):
    """Base class: ``L(x) = floor + P(x)`` with ``P`` a decreasing posynomial.

    Subclasses set :attr:`family`, :attr:`properties`, :attr:`axes`,
    :attr:`floor` and implement :meth:`reducible_posynomial`,
    :meth:`expression` and :meth:`params`.
    """

    family: ClassVar[str] = "law"
    properties: ClassVar[LawProperties]
    axes: tuple[str, ...]
    floor: float

    # -- the one thing every law supplies --------------------------------
    @abc.abstractmethod
    def reducible_posynomial(self) -> Posynomial:
        """``L - floor`` as a posynomial in :attr:`axes` (negative powers only)."""

    @abc.abstractmethod
    def params(self) -> dict[str, Any]:
        """The law's parameters as plain Python values (JSON-ready)."""

    @abc.abstractmethod
    def expression(self, symbolic: bool = False) -> Any:
        """The loss as a sympy expression in positive axis symbols.

        With ``symbolic=True`` the parameters are sympy symbols too.
        """

    @staticmethod
    def from_expr(expr: Any, axes: Any, params: Mapping[str, Any] | None = None) -> Any:
        """A law written as an expression: :class:`~rlscale.theory.ExpressionLaw`.

        Examples
        --------
        >>> Law.from_expr("E + A/N**alpha", axes=["N"]).params
        ('A', 'E', 'alpha')
        """
        from rlscale.theory._expr import ExpressionLaw

        return ExpressionLaw(expr, axes, params)

    # -- generic machinery --------------------------------------------------
    @property
    def symbols(self) -> dict[str, Any]:
        """Positive sympy symbols of the axes, by axis name."""
        import sympy as sp

        return {a: sp.Symbol(a, positive=True) for a in self.axes}

    def _values(self, values: Mapping[str, Any] | None, kwargs: Mapping[str, Any]) -> dict:
        merged = dict(check_mapping("values", {} if values is None else values), **kwargs)
        missing = [a for a in self.axes if a not in merged]
        unknown = [a for a in merged if a not in self.axes]
        if missing or unknown:
            raise ValueError(f"{type(self).__name__} needs values for axes {list(self.axes)}; "
                             f"missing {missing}, unknown {unknown}")
        out = {a: check_real(a, merged[a], low=0.0, low_open=True) for a in self.axes}
        try:
            np.broadcast_shapes(*(v.shape for v in out.values()))
        except ValueError:
            shapes = ", ".join(f"{a} {v.shape}" for a, v in out.items())
            raise ValueError(f"axis values of shapes {shapes} do not broadcast together") from None
        return out

    def _finite(self, result: Any, what: str, vals: Mapping[str, Any]) -> Any:
        """Refuse a value that overflowed (e.g. ``E = 5e-324`` under a negative power)."""
        return check_finite_result(result, f"{what} of {type(self).__name__}", **vals)

    def reducible(self, values: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
        """``L(x) - floor`` (vectorised over broadcastable arrays)."""
        vals = self._values(values, kwargs)
        out = self._finite(self.reducible_posynomial().evaluate(vals), "the reducible loss", vals)
        return return_like(out, *vals.values())

    def loss(self, values: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
        """The loss ``L(x)`` at axis values given as a mapping or keywords.

        Axis values must be finite and ``> 0``; a loss beyond the float range
        (a tiny axis value under a negative power) is refused with a
        ``ValueError`` -- :meth:`log_loss` computes it in log space.
        """
        vals = self._values(values, kwargs)
        out = self.floor + self.reducible_posynomial().evaluate(vals)
        return return_like(self._finite(out, "the loss", vals), *vals.values())

    __call__ = loss

    def log_loss(self, values: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
        """``log L(x)`` computed in log space (no overflow for huge or tiny axes)."""
        from scipy.special import logsumexp

        vals = self._values(values, kwargs)
        logs = self.reducible_posynomial().log_terms(vals)
        if self.floor > 0:
            logs = np.concatenate([np.full((1, *logs.shape[1:]), math.log(self.floor)), logs])
        return return_like(logsumexp(logs, axis=0), *vals.values())

    def elasticities(self, values: Mapping[str, Any] | None = None,
                     **kwargs: Any) -> dict[str, Any]:
        """``-d log(L - floor) / d log x_i`` per axis: the impact of each axis there."""
        vals = self._values(values, kwargs)
        grad = self.reducible_posynomial().log_gradient(vals)
        return {a: return_like(-grad.get(a, np.zeros(())), *vals.values()) for a in self.axes}

    def impact_ordering(self, values: Mapping[str, Any] | None = None,
                        **kwargs: Any) -> list[str]:
        """Axes sorted by elasticity at a point, most impactful first."""
        vals = self._values(values, kwargs)
        empty = [a for a in self.axes if vals[a].size == 0]
        if empty:
            raise ValueError(f"{empty[0]} is an empty array; an ordering needs at least one point")
        el = self.elasticities(vals)
        return sorted(self.axes, key=lambda a: -float(np.max(el[a])))

    def floor_at_bounds(self, upper: Mapping[str, float]) -> float:
        """Infimum of the loss when each axis in ``upper`` is capped there.

        Terms involving an uncapped axis (absent, or ``inf``) can be driven to
        zero; terms whose axes are all capped are smallest at the caps.  Caps
        must be ``> 0`` and name axes of the law; each term is computed in log
        space, and a floor beyond the float range is refused.

        Examples
        --------
        >>> law = AdditiveLaw(1.0, {"E": 4.0, "k": 1.0}, {"E": 0.5, "k": 1.0})
        >>> law.floor_at_bounds({"E": 16.0})   # 1 + 4/sqrt(16); k uncapped
        2.0
        >>> law.floor_at_bounds({"E": 0.0})
        Traceback (most recent call last):
        ...
        ValueError: upper['E'] must be > 0; got upper['E']=0
        """
        check_mapping("upper", upper)
        unknown = [a for a in upper if a not in self.axes]
        if unknown:
            raise ValueError(f"upper names {unknown[0]!r}, not an axis of the law "
                             f"(axes: {list(self.axes)})")
        caps = {a: check_scalar(f"upper[{a!r}]", v, low=0.0, low_open=True, allow_inf=True)
                for a, v in upper.items()}
        total = self.floor
        for m in self.reducible_posynomial().terms:
            if all(a in caps and math.isfinite(caps[a]) for a in m.axes):
                log_term = math.log(m.coefficient) + sum(e * math.log(caps[a])
                                                         for a, e in m.exponents)
                if log_term > 709.0:
                    raise ValueError(f"the floor at upper={dict(upper)} overflows the float "
                                     f"range (term {m} is e^{log_term:.4g})")
                total += math.exp(log_term)
        return float(check_finite_result(total, "the floor at the bounds", **{
            f"upper[{a!r}]": v for a, v in caps.items()}))

    def as_dict(self) -> dict[str, Any]:
        """Family, axes, parameters and declared properties (JSON-ready)."""
        return {"family": self.family, "axes": list(self.axes), **self.params(),
                "properties": self.properties.as_dict()}

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({inner})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.params() == other.params()  # type: ignore

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(self.params())))

    # -- notebook display ----------------------------------------------------
    def _repr_latex_(self) -> str:
        """The loss as math in Jupyter: ``$`` + ``sympy.latex(self.expression())`` + ``$``."""
        from rlscale.theory._display import latex_math

        return latex_math(self.expression())


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
