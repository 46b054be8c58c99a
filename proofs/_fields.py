"""The fields of a proof step, checked by their declared types, and the one conversion of
rlscale.proofs to sympy (issue 22).

``sympy.sympify`` of a string is ``eval``, so :func:`as_sympy` (never text) is the only
way values enter sympy here; :func:`check_step_fields` refuses, at construction, a
step field of the wrong type, naming it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy as sp

from rlscale.theory._validation import check_bool, check_positive_int

__all__ = ["STEP_LIMITS", "as_sympy", "check_step_fields"]


def as_sympy(value: Any, what: str = "expr") -> sp.Basic:
    """``value`` as a sympy object, never parsing text (issue 22).

    ``sympy.sympify`` of a string is ``eval``: a binding key or a goal written
    ``"__import__('os').system(...)"`` ran the command.  A string is refused;
    numbers and sympy objects convert as before (``strict=True``).
    """
    if isinstance(value, str | bytes):
        raise TypeError(f"{what} must be a sympy expression, not text (text is never "
                        "evaluated: build it with sympy.Symbol, or parse it with "
                        f"rlscale.theory.parse_expression); got {value!r:.60}")
    try:
        return sp.sympify(value, strict=True)
    except sp.SympifyError:
        raise TypeError(f"{what} must be a sympy expression or a number; got "
                        f"{type(value).__name__} {value!r:.60}") from None


#: Largest value of each integer field of a step: the work it asks for stays bounded
#: (a series to order 10**6 would not finish).
STEP_LIMITS = {"order": 100, "timeout_ms": 10**7, "boxes": 10**6, "max_boxes": 10**7}


def check_step_fields(step: Any, step_type: type) -> None:
    """Validate a step's fields by their declared types (issue 22): text fields are
    strings, flags booleans, counts bounded integers, expressions sympy objects or finite
    numbers (never text: :func:`as_sympy`), tuples of expressions tuples; a field of
    another type (a callable, a fallback step) is checked by its own class."""

    def expression(name: str, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, complex | np.complexfloating):
            raise TypeError(f"{name} must be a real expression or number; got {value!r}")
        if isinstance(value, float | np.floating) and not math.isfinite(value):
            raise ValueError(f"{name} must be finite (write sympy.oo for infinity); got "
                             f"{name}={value!r}")
        if as_sympy(value, name).has(sp.nan):
            raise ValueError(f"{name} must not be NaN; got {name}={value!r:.60}")

    for f in dataclasses.fields(step):
        value, kind = getattr(step, f.name), str(f.type)
        if kind == "str":
            if not isinstance(value, str) or (f.name == "name" and not value):
                raise TypeError(f"{f.name} must be a{' non-empty' if f.name == 'name' else ''}"
                                f" string; got {type(value).__name__} {value!r:.60}")
        elif kind == "bool":
            check_bool(f.name, value)
        elif kind == "int":
            check_positive_int(f.name, value, maximum=STEP_LIMITS.get(f.name))
        elif kind == "Any":
            expression(f.name, value)
        elif kind.startswith("tuple["):
            if not isinstance(value, tuple | list):
                raise TypeError(f"{f.name} must be a tuple; got {type(value).__name__} "
                                f"{value!r:.60}")
            for i, item in enumerate(value):
                for j, part in enumerate(item if isinstance(item, tuple | list) else (item,)):
                    expression(f"{f.name}[{i}]" + (f"[{j}]" if isinstance(item, tuple | list)
                                                    else ""), part)
        elif kind.startswith("Mapping["):
            if not isinstance(value, Mapping):
                raise TypeError(f"{f.name} must be a mapping; got {type(value).__name__}")
            for key, item in value.items():
                expression(f"{f.name} keys", key)
                expression(f"{f.name}[{key!r}]", item)
        elif kind.startswith("Callable"):
            if value is not None and not callable(value):
                raise TypeError(f"{f.name} must be callable; got {type(value).__name__} "
                                f"{value!r:.60}")
        elif kind.endswith("| None") and value is not None and not isinstance(value, step_type):
            raise TypeError(f"{f.name} must be a step ({kind}); got {type(value).__name__} "
                            f"{value!r:.60}")
