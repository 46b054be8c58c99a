"""The weighted mean of several laws: the objective of a robust plan.

A plan chosen for one fitted law is only as good as that law.  Averaging the
loss over the bootstrap laws of a fit, ``L̄(x) = Σ_b w_b L_b(x)``, and
minimising ``L̄`` picks the allocation that is best *in expectation* over the
fit's uncertainty.  Each ``L_b - floor_b`` is a posynomial and a positive
combination of posynomials is a posynomial, so ``L̄`` stays a geometric
program (Boyd, Kim, Vandenberghe & Hassibi 2007, "A tutorial on geometric
programming", §2.1: posynomials are closed under sums and positive scaling).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from rlscale.theory._laws import Law, LawProperties
from rlscale.theory._posynomial import Monomial, Posynomial
from rlscale.theory._validation import check_real

__all__ = ["MixtureLaw"]


class MixtureLaw(Law):
    """``L̄(x) = Σ_b w_b·L_b(x)`` over laws on the same axes (weights sum to 1).

    Parameters
    ----------
    laws : sequence of Law (or their ``as_dict()`` mappings)
        GP-compatible laws over the same axes.
    weights : sequence of float, optional
        Non-negative weights (normalised to sum 1); equal by default.

    Examples
    --------
    >>> from rlscale.theory import AdditiveLaw
    >>> a = AdditiveLaw(0.1, {"E": 1.0}, {"E": 0.5})
    >>> b = AdditiveLaw(0.3, {"E": 2.0}, {"E": 1.0})
    >>> mix = MixtureLaw([a, b])
    >>> round(mix.loss(E=4.0), 12) == round((a.loss(E=4.0) + b.loss(E=4.0)) / 2, 12)
    True
    >>> str(mix.reducible_posynomial())
    '0.5*E**-0.5 + E**-1'
    """

    family: ClassVar[str] = "mixture"
    properties: ClassVar[LawProperties] = LawProperties(
        monotone_decreasing=True,
        convex=True,  # a positive combination of convex functions
        log_log_convex=True,  # a posynomial reducible part
        gp_compatible=True,
        bounded=False,
        domain="every axis value finite and > 0",
    )

    def __init__(self, laws: Sequence[Law], weights: Sequence[float] | None = None) -> None:
        from rlscale.theory._laws import law_from_dict

        if isinstance(laws, Law):
            laws = [laws]
        elif isinstance(laws, str | bytes) or not isinstance(laws, Sequence):
            raise TypeError(f"laws must be a sequence of laws; got {type(laws).__name__}")
        laws = [law_from_dict(x) if isinstance(x, Mapping) else x for x in laws]
        if not laws:
            raise ValueError("laws must hold at least one law; got an empty sequence")
        for i, law in enumerate(laws):
            if not isinstance(law, Law):
                raise TypeError(f"laws[{i}] must be a rlscale.theory law; got "
                                f"{type(law).__name__}")
            if not law.properties.gp_compatible:
                raise ValueError(f"laws[{i}] ({type(law).__name__}) is not GP-compatible")
            if set(law.axes) != set(laws[0].axes):
                raise ValueError(f"laws[{i}] has axes {list(law.axes)}; every law must have "
                                 f"the axes of laws[0], {list(laws[0].axes)}")
        if weights is None:
            w = [1.0] * len(laws)
        else:
            arr = check_real("weights", weights, low=0.0)
            if arr.shape != (len(laws),):
                raise ValueError(f"weights must give one value per law ({len(laws)}); got "
                                 f"shape {arr.shape}")
            w = [float(v) for v in arr]
        total = math.fsum(w)
        if not total > 0:
            raise ValueError(f"weights must not all be 0; got weights={w}")
        self.laws = tuple(laws)
        self.weights = tuple(v / total for v in w)
        self.axes = laws[0].axes
        self.floor = math.fsum(v * law.floor for v, law in zip(self.weights, laws))
        merged: dict[tuple[tuple[str, float], ...], float] = {}
        for v, law in zip(self.weights, laws):
            if v == 0:
                continue
            for m in law.reducible_posynomial().terms:
                merged[m.exponents] = merged.get(m.exponents, 0.0) + v * m.coefficient
        self._poly = Posynomial(tuple(Monomial(c, e) for e, c in merged.items()))

    def reducible_posynomial(self) -> Posynomial:
        return self._poly

    def params(self) -> dict[str, Any]:
        return {"laws": [law.as_dict() for law in self.laws], "weights": list(self.weights)}

    def expression(self, symbolic: bool = False) -> Any:
        import sympy as sp

        return sp.Add(*(sp.Float(v) * law.expression(symbolic)
                        for v, law in zip(self.weights, self.laws)))

    def __str__(self) -> str:
        return f"mean of {len(self.laws)} laws over {', '.join(self.axes)}"
