"""Posynomials: monomials with positive coefficients and real exponents, and their sums.

A *monomial* is ``c * x1**e1 * ... * xn**en`` with ``c > 0`` and real
exponents; a *posynomial* is a sum of monomials (Boyd, Kim, Vandenberghe &
Hassibi 2007, "A tutorial on geometric programming", §2).  Costs such as
``"100*E + 10*E*t + E*t*k"`` or ``"6*N*D"`` are posynomials; that is what
makes compute-optimal allocation a geometric program.

Cost strings and sympy expressions are read by the whitelisting parser in
:mod:`rlscale.theory._posynomial_parser` (:func:`parse_posynomial`,
:meth:`Posynomial.from_sympy`); ``parse_posynomial`` is also reachable here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.theory._validation import (
    check_mapping,
    check_real,
    check_scalar,
)

__all__ = ["Monomial", "Posynomial", "PosynomialError"]

class PosynomialError(ValueError):
    """A cost expression is malformed or not a posynomial."""


@dataclass(frozen=True)
class Monomial:
    """``coefficient * prod(axis**exponent)`` with a positive coefficient.

    ``exponents`` is a sorted tuple of ``(axis, exponent)`` pairs with
    non-zero exponents, so equal monomials compare equal.

    Examples
    --------
    >>> from rlscale.theory import parse_posynomial
    >>> m = parse_posynomial("10*E*t**2").terms[0]
    >>> m.coefficient, m.exponents, m.power_of("t"), m.power_of("k")
    (10.0, (('E', 1.0), ('t', 2.0)), 2.0, 0.0)
    >>> str(m), m.label()
    ('10*E*t**2', 'E*t**2')
    """

    coefficient: float
    exponents: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        c = self.coefficient
        if not (type(c) is float and 0.0 < c < math.inf):  # a plain positive float is valid
            c = check_scalar("coefficient", c, low=0.0, low_open=True)
        if not isinstance(self.exponents, tuple | list):
            raise TypeError(f"exponents must be a tuple of (axis, exponent) pairs; got "
                            f"{type(self.exponents).__name__}")
        pairs = []
        for pair in self.exponents:
            if (not isinstance(pair, tuple | list) or len(pair) != 2
                    or not isinstance(pair[0], str) or not pair[0].isidentifier()):
                raise TypeError(f"exponents must be (axis name, exponent) pairs; got {pair!r:.60}")
            e = pair[1]
            if not (type(e) is float and math.isfinite(e)):
                e = check_scalar(f"exponents[{pair[0]!r}]", e)
            pairs.append((pair[0], e))
        if len({a for a, _ in pairs}) != len(pairs):
            raise ValueError(f"exponents name an axis twice: {[a for a, _ in pairs]}")
        object.__setattr__(self, "coefficient", c)
        object.__setattr__(self, "exponents", tuple(sorted((a, e) for a, e in pairs if e != 0)))

    @property
    def axes(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.exponents)

    def power_of(self, axis: str) -> float:
        """Exponent of ``axis`` in this monomial (0 when absent)."""
        if not isinstance(axis, str):
            raise TypeError(f"axis must be an axis name (str); got {axis!r:.60}")
        return dict(self.exponents).get(axis, 0.0)

    def label(self) -> str:
        """The monomial without its coefficient, e.g. ``"E*t"`` (``"1"`` if constant)."""
        parts = [name if e == 1 else f"{name}**{_num(e)}" for name, e in self.exponents]
        return "*".join(parts) or "1"

    def __str__(self) -> str:
        lab = self.label()
        if lab == "1":
            return _num(self.coefficient)
        return lab if self.coefficient == 1 else f"{_num(self.coefficient)}*{lab}"

    def log_evaluate(self, log_values: Mapping[str, Any]) -> np.ndarray:
        """``log`` of the monomial from the logs of the axis values (no overflow).

        ``log_values`` maps each axis to ``log x`` (``-inf`` for ``x = 0``
        is allowed where the exponent is positive, giving ``-inf``).
        """
        check_mapping("log_values", log_values)
        out = np.asarray(math.log(self.coefficient), dtype=np.float64)
        for name, e in self.exponents:
            if name not in log_values:
                raise ValueError(f"log_values has no value for axis {name!r} of {self}")
            lv = check_real(f"log_values[{name!r}]", log_values[name], high=math.inf,
                            allow_inf=True)
            if np.any(np.isposinf(lv)) or (e < 0 and np.any(np.isneginf(lv))):
                raise ValueError(f"log_values[{name!r}] must be finite (or -inf where the "
                                 f"exponent is positive); got exponent {e:g}")
            with np.errstate(over="ignore", invalid="ignore"):
                out = out + e * lv
        if np.any(np.isnan(out) | np.isposinf(out)):
            raise ValueError(f"the log of the monomial {self} overflows the float range at "
                             f"these log_values")
        return out


def _num(x: float) -> str:
    return f"{x:.12g}"


def _key(exps: Mapping[str, float]) -> tuple[tuple[str, float], ...]:
    return tuple(sorted((k, float(v)) for k, v in exps.items() if v != 0))


@dataclass(frozen=True)
class Posynomial:
    """A sum of monomials, e.g. the parsed cost ``"100*E + 10*E*t + E*t*k"``.

    Examples
    --------
    >>> from rlscale.theory import parse_posynomial
    >>> p = parse_posynomial("100*E + 10*E*t + E*t*k")
    >>> p.axes
    ('E', 'k', 't')
    >>> float(p.evaluate({"E": 2, "t": 3, "k": 4}))
    284.0
    >>> [str(m) for m in p.terms]
    ['100*E', '10*E*t', 'E*k*t']
    """

    terms: tuple[Monomial, ...]
    source: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.terms, tuple | list) or not self.terms or not all(
                isinstance(m, Monomial) for m in self.terms):
            raise TypeError(f"terms must be a non-empty tuple of Monomial; got "
                            f"{self.terms!r:.80}")
        if not isinstance(self.source, str):
            raise TypeError(f"source must be a str; got {type(self.source).__name__}")
        object.__setattr__(self, "terms", tuple(self.terms))

    def _arrays(self, values: Mapping[str, Any], positive: bool) -> dict[str, np.ndarray]:
        """Checked axis values: real, finite, ``> 0`` (``>= 0`` unless ``positive``)."""
        check_mapping("values", values)
        arrays = {}
        for name in self.axes:
            if name not in values:
                raise ValueError(f"values has no value for axis {name!r} of {self}")
            arrays[name] = check_real(name, values[name], low=0.0, low_open=positive)
        try:
            np.broadcast_shapes(*(a.shape for a in arrays.values()))
        except ValueError:
            raise ValueError(f"values for axes {list(arrays)} have shapes "
                             f"{[a.shape for a in arrays.values()]} that do not "
                             "broadcast") from None
        return arrays

    @property
    def axes(self) -> tuple[str, ...]:
        return tuple(sorted({a for m in self.terms for a in m.axes}))

    @property
    def is_monomial(self) -> bool:
        return len(self.terms) == 1

    def is_linear(self) -> bool:
        """Whether every term is ``c * x`` for a single axis ``x`` (a linear cost)."""
        return all(len(m.exponents) == 1 and m.exponents[0][1] == 1 for m in self.terms)

    def __str__(self) -> str:
        return " + ".join(str(m) for m in self.terms)

    def log_terms(self, values: Mapping[str, Any]) -> np.ndarray:
        """Logs of each term, stacked on the first axis (shape ``(n_terms, ...)``).

        Axis values must be finite and ``> 0``; the logs never overflow.
        """
        logs = {n: np.log(a) for n, a in self._arrays(values, positive=True).items()}
        return np.stack([np.broadcast_to(m.log_evaluate(logs), np.broadcast_shapes(
            *(np.shape(v) for v in logs.values()))) for m in self.terms])

    def evaluate(self, values: Mapping[str, Any]) -> np.ndarray:
        """The posynomial's value at axis ``values`` (vectorised).

        Values must be finite and ``>= 0`` (``ValueError`` naming the axis
        otherwise).  A zero value gives the term's limit -- 0 for a positive
        exponent, ``+inf`` for a negative one (solvers probe slack synthetic
        counts at 0) -- and ``+inf`` is also returned where the true value
        exceeds the float range; use :meth:`log_terms` there.  These are the
        only non-finite results (documented limitation of the input contract).
        """
        with np.errstate(over="ignore"):
            return self.term_values(values).sum(axis=0)

    def term_values(self, values: Mapping[str, Any]) -> np.ndarray:
        """Value of each term (shape ``(n_terms, ...)``).

        Products of powers are exact to rounding; where one power overflows or
        underflows (``1e-200**-2``), the term is recomputed as ``exp`` of its
        log, so a finite value stays finite and only a true overflow is ``inf``.
        """
        arrays = self._arrays(values, positive=False)
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
        out = np.empty((len(self.terms), *shape))
        # A zero axis value (a slack synthetic count) has log -inf: same limit as x**e.
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            for i, m in enumerate(self.terms):
                term = np.full(shape, m.coefficient)
                for name, e in m.exponents:
                    term = term * arrays[name] ** e
                out[i] = term
            off = ~np.isfinite(out)
            off |= out == 0
            if off.any():
                # log of each term, log c + Σ e log x: -inf·e is +inf under a negative
                # exponent, so x = 0 gives the limit +inf (log_evaluate refuses it).
                logs = {n: np.log(a) for n, a in arrays.items()}
                exact = np.stack([np.broadcast_to(np.exp(sum(
                    (e * logs[name] for name, e in m.exponents), math.log(m.coefficient))),
                    shape) for m in self.terms])
                out = np.where(off, exact, out)
        if np.isnan(out).any():  # 0 under both a positive and a negative power
            raise ValueError(f"{self} is undefined (0 * inf) at values with an axis at 0 "
                             f"under a positive and another under a negative power")
        return out

    def log_gradient(self, values: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """``d log p / d log x`` per axis: the term-weighted average exponent."""
        from scipy.special import softmax

        w = softmax(self.log_terms(values), axis=0)
        return {a: np.tensordot(np.array([m.power_of(a) for m in self.terms]), w, axes=1)
                for a in self.axes}

    def substitute(self, mapping: Mapping[str, Posynomial]) -> Posynomial:
        """Replace axes by monomials (e.g. ``tasks -> E*t``); other axes stay."""
        check_mapping("mapping", mapping)
        for name, sub in mapping.items():
            if not isinstance(sub, Posynomial) or not sub.is_monomial:
                raise PosynomialError(
                    f"substitution for {name!r} must be a single monomial such as 'E*t'; "
                    f"got {sub}")
        out: dict[tuple[tuple[str, float], ...], float] = {}
        for m in self.terms:
            coef = m.coefficient
            exps: dict[str, float] = {}
            for name, e in m.exponents:
                if name in mapping:
                    sub = mapping[name].terms[0]
                    try:
                        coef *= sub.coefficient ** e
                    except OverflowError:
                        coef = math.inf
                    if not 0 < coef < math.inf:
                        raise PosynomialError(
                            f"substituting {name!r} -> {mapping[name]} makes the coefficient "
                            f"of {m} leave the float range")
                    for n2, e2 in sub.exponents:
                        exps[n2] = exps.get(n2, 0.0) + e * e2
                else:
                    exps[name] = exps.get(name, 0.0) + e
            key = _key(exps)
            out[key] = out.get(key, 0.0) + coef
        return _build(((dict(k), c) for k, c in out.items()), self.source or str(self))

    def to_sympy(self, symbols: Mapping[str, Any] | None = None) -> Any:
        """The posynomial as a sympy expression (positive symbols by default)."""
        import sympy as sp

        symbols = dict(check_mapping("symbols", {} if symbols is None else symbols))
        unknown = sorted(set(symbols) - set(self.axes))
        if unknown:  # a misspelt axis was silently ignored (issue 22)
            raise ValueError(f"symbols names {unknown}, not axes of the posynomial "
                             f"{list(self.axes)}")
        for a in self.axes:
            symbols.setdefault(a, sp.Symbol(a, positive=True))
        return sp.Add(*[sp.nsimplify(m.coefficient, rational=False) * sp.Mul(
            *[symbols[n] ** sp.nsimplify(e) for n, e in m.exponents]) for m in self.terms])

    @classmethod
    def from_sympy(cls, expr: Any) -> Posynomial:
        """Convert a sympy expression that is a posynomial (after expansion).

        The expression tree is walked structurally (no text is evaluated, and
        ``sympy.expand`` is not called): sums, products and constant powers
        are expanded by the same code and under the same work limits as a
        cost string (:func:`parse_posynomial`), so a sympy input cannot ask
        for more work than a string can.
        """
        import sympy as sp

        if not isinstance(expr, sp.Basic):
            raise TypeError(f"cost must be a string or a sympy expression; got {expr!r:.80}")
        bad = [s for s in expr.free_symbols if not isinstance(s, sp.Symbol)]
        if bad:
            raise PosynomialError(f"cost {expr} has non-symbol atoms {bad}")
        from rlscale.theory._posynomial_expand import SympyWalker

        source = str(expr)[:200]
        poly = SympyWalker(source).walk(expr)
        return _build(((dict(k), c) for k, c in poly.items() if c != 0), source)


def _build(terms: Iterable[tuple[Mapping[str, float], float]], source: str) -> Posynomial:
    out: dict[tuple[tuple[str, float], ...], float] = {}
    for exps, coef in terms:
        key = _key(exps)
        out[key] = out.get(key, 0.0) + coef
    if not out:
        raise PosynomialError(f"cost {source!r} has no terms")
    for key, c in out.items():
        if not math.isfinite(c):
            raise PosynomialError(f"term {Monomial(1.0, key).label()} of {source!r} has a "
                                  f"non-finite coefficient {c}")
        if not c > 0:
            raise PosynomialError(f"term {Monomial(1.0, key).label()} of {source!r} has "
                                  f"coefficient {c:g} (it underflows): a posynomial needs "
                                  "positive coefficients")
        bad = [(name, e) for name, e in key if not math.isfinite(e)]
        if bad:
            raise PosynomialError(f"the exponents of {bad[0][0]!r} in {source!r} add up to "
                                  f"exponent {bad[0][1]}; exponents must be finite")
    return Posynomial(tuple(Monomial(c, k) for k, c in out.items()), source)


def __getattr__(name: str) -> Any:
    # parse_posynomial lives in the parser module, which imports this one; loaded on use.
    if name == "parse_posynomial":
        from rlscale.theory._posynomial_parser import parse_posynomial

        return parse_posynomial
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
