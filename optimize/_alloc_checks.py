"""Argument checks of an allocation problem: bounds, mappings, exponents, ``method``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rlscale.theory._posynomial import Posynomial
from rlscale.theory._validation import check_scalar

__all__ = ["MAX_EXPONENT", "METHODS", "check_exponents", "check_mapping_arg", "check_method",
           "parse_bounds"]

#: The values ``method=`` accepts (see the module docstring).
METHODS = ("auto", "closed_form", "gp", "dcp")


def parse_bounds(bounds: Mapping[str, Any] | None, variables: Sequence[str],
            defaults: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    out = dict.fromkeys(variables, (0.0, math.inf))
    check_mapping_arg("bounds", bounds)
    merged = {**defaults, **(bounds or {})}
    for name, spec in merged.items():
        if name not in out:
            raise ValueError(f"bounds name unknown axis {name!r}; the decision variables are "
                             f"{list(variables)}")
        if isinstance(spec, Mapping):
            bad = set(spec) - {"min", "max"}
            if bad:
                raise ValueError(f"bounds[{name!r}] takes keys 'min' and 'max'; got {sorted(bad)}")
            lo, hi = spec.get("min"), spec.get("max")
        else:
            try:
                lo, hi = spec
            except (TypeError, ValueError) as exc:
                raise TypeError(f"bounds[{name!r}] must be (min, max) or {{'min':, 'max':}}; "
                                f"got {spec!r}") from exc
        lo = 0.0 if lo is None else check_scalar(f"bounds[{name!r}] min", lo, low=0.0)
        hi = math.inf if hi is None else check_scalar(f"bounds[{name!r}] max", hi, low=0.0,
                                                          low_open=True)
        if lo > hi:
            raise ValueError(f"bounds[{name!r}]: min {lo:g} exceeds max {hi:g}")
        out[name] = (lo, hi)
    return out




def check_method(method: Any) -> str:
    if not isinstance(method, str):
        raise TypeError(f"method must be one of {list(METHODS)}; got method={method!r:.60}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {list(METHODS)}; got method={method!r:.60}")
    return method


def check_mapping_arg(name: str, value: Any, required: bool = False) -> None:
    if (value is not None or required) and not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping (dict); got {name}={value!r:.60}")


#: Largest exponent magnitude the solver is given (cvxpy turns exponents into fractions,
#: and 1e4 already fails inside it with a ZeroDivisionError; 1000 solves exactly).
MAX_EXPONENT = 1000.0


def check_exponents(what: str, poly: Posynomial) -> None:
    for term in poly.terms:
        for axis, e in term.exponents:
            if not abs(e) <= MAX_EXPONENT:
                raise ValueError(f"{what} has exponent {e:g} on {axis!r} in term {term}; the "
                                 f"solver handles exponents up to {MAX_EXPONENT:g} in magnitude: "
                                 "rescale the axis (x -> x^p) or use a smaller exponent")
