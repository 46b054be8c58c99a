"""Argument checking shared by every numeric entry point.

Errors name the argument, the offending value and the valid range, e.g.
``ValueError: n must be >= 1; got n=0.5``.  NaN is always rejected; infinity
only where ``allow_inf=True``.  Booleans are rejected as numbers because
``True`` for a count is nearly always a bug.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

__all__ = ["check_positive_int", "check_real", "check_scalar", "return_like"]


def _range_text(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low:g}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high:g}")
    return " and ".join(parts) if parts else "finite"


def check_real(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    allow_inf: bool = False,
) -> np.ndarray:
    """Validate a real scalar or array and return it as a float64 array.

    Parameters
    ----------
    name : str
        Argument name used in error messages.
    value : array_like
        Real number(s) to check.
    low, high : float, optional
        Bounds of the valid range; ``low_open``/``high_open`` make them strict.
    allow_inf : bool
        Whether ``+inf``/``-inf`` are acceptable (if inside the bounds).

    Returns
    -------
    numpy.ndarray
        ``float64`` array of the same shape (0-d for scalars).

    Raises
    ------
    TypeError
        If ``value`` is not real-valued (strings, complex, booleans, objects).
    ValueError
        If any element is NaN, infinite (unless allowed) or outside the range.

    Examples
    --------
    >>> check_real("K", [0.0, 2.5], low=0.0)
    array([0. , 2.5])
    >>> check_real("n", 0.5, low=1.0)
    Traceback (most recent call last):
    ...
    ValueError: n must be >= 1; got n=0.5
    """
    if isinstance(value, bool | np.bool_ | str | bytes):
        raise TypeError(f"{name} must be a real number or array; got {type(value).__name__}")
    try:
        arr = np.asarray(value)
    except Exception as exc:  # ragged input and the like
        raise TypeError(f"{name} must be a real number or array; got {value!r}") from exc
    if arr.dtype == np.bool_ or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise TypeError(
            f"{name} must be a real number or array; got dtype {arr.dtype} ({value!r:.60})"
        )
    arr = arr.astype(np.float64, copy=False)
    valid_text = _range_text(low, high, low_open, high_open)

    def fail(bad: np.ndarray, why: str) -> None:
        idx = np.argwhere(bad)[0]
        shown = arr[tuple(idx)] if arr.ndim else arr[()]
        where = f" at index {tuple(int(i) for i in idx)}" if arr.ndim else ""
        raise ValueError(f"{name} must be {why}; got {name}={shown:g}{where}")

    nan = np.isnan(arr)
    if nan.any():
        fail(nan, valid_text)
    if not allow_inf:
        inf = np.isinf(arr)
        if inf.any():
            fail(inf, "finite" if valid_text == "finite" else f"finite and {valid_text}")
    if low is not None:
        bad = arr <= low if low_open else arr < low
        if bad.any():
            fail(bad, valid_text)
    if high is not None:
        bad = arr >= high if high_open else arr > high
        if bad.any():
            fail(bad, valid_text)
    return arr


def check_positive_int(name: str, value: Any, *, minimum: int = 1,
                       maximum: int | None = None) -> int:
    """Validate an integer count ``minimum <= value <= maximum`` and return it as ``int``.

    Integer-valued floats (``16.0``) are accepted and returned as ``int``;
    booleans are rejected.  ``maximum`` is the documented upper limit of the
    count (``None``: unbounded).

    Examples
    --------
    >>> check_positive_int("steps", 10)
    10
    >>> check_positive_int("steps", 0)
    Traceback (most recent call last):
    ...
    ValueError: steps must be an integer >= 1; got steps=0
    >>> check_positive_int("trials", 1e12, maximum=10**9)
    Traceback (most recent call last):
    ...
    ValueError: trials must be an integer >= 1 and <= 1000000000; got trials=1000000000000
    """
    limits = f">= {minimum}" + ("" if maximum is None else f" and <= {maximum}")
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        if (not isinstance(value, bool | np.bool_) and isinstance(value, numbers.Real)
                and math.isfinite(float(value)) and float(value).is_integer()):
            value = int(value)
        else:
            raise TypeError(f"{name} must be an integer {limits}; got {name}={value!r}")
    if value < minimum or (maximum is not None and value > maximum):
        try:
            shown = f"{float(value):.4g}" if abs(value) > 10**15 else str(value)
        except OverflowError:
            shown = f"a {len(str(abs(value)))}-digit integer"
        raise ValueError(f"{name} must be an integer {limits}; got {name}={shown}")
    return int(value)


def return_like(result: np.ndarray, *inputs: Any) -> float | np.ndarray:
    """Return a Python ``float`` when every input was a scalar, else the array."""
    if all(np.ndim(x) == 0 for x in inputs):
        return float(np.asarray(result)[()])
    return result


def check_scalar(name: str, value: Any, **bounds: Any) -> float:
    """:func:`check_real` for a single number: returns a ``float``; arrays are refused.

    Examples
    --------
    >>> check_scalar("budget", 2)
    2.0
    >>> check_scalar("budget", [2.0])
    Traceback (most recent call last):
    ...
    TypeError: budget must be a single number, not an array; got shape (1,)
    """
    arr = check_real(name, value, **bounds)
    if arr.ndim != 0:
        raise TypeError(f"{name} must be a single number, not an array; got shape {arr.shape}")
    return float(arr)
