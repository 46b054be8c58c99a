"""The base class of every data-scaling law and what a law family declares about itself.

A law is ``L(x) = L_inf + P(x)`` with ``P`` a posynomial whose terms carry only
negative powers of the axes (Boyd et al. 2007 for posynomials): the loss, its
log-space evaluation (``log L = logsumexp`` of the log terms and the floor),
elasticities ``-d log(L - L_inf)/d log x_i`` (the term-weighted exponents of
``P``), the impact ordering and the floor at bounded axes are computed here
once, from :meth:`Law.reducible_posynomial`, for every family.  Each family
states its guarantees in :class:`LawProperties`, which the generic tests check.
The families themselves live in :mod:`rlscale.theory._laws`.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from rlscale.theory._posynomial import Posynomial
from rlscale.theory._validation import (
    check_finite_result,
    check_mapping,
    check_real,
    check_scalar,
    return_like,
)

__all__ = ["Law", "LawProperties"]


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
        >>> from rlscale.theory import AdditiveLaw
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
