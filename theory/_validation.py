"""Argument checking shared by every numeric entry point.

Errors name the argument, the offending value and the valid range, e.g.
``ValueError: n must be >= 1; got n=0.5``.  NaN is always rejected; infinity
only where ``allow_inf=True``.  Booleans are rejected as numbers because
``True`` for a count is nearly always a bug.

Policy (issue 10), decided once for every function of rlscale:

* **Scalars.**  An argument documented as a scalar takes a 0-d value only
  (``check_scalar``).  A 1-element array or list is *refused* with a
  ``TypeError`` naming the argument and the shape, not squeezed: silently
  accepting ``[x]`` would hide shape bugs in the caller.  Arguments documented
  as ``array_like`` (``check_real``) broadcast as before.
* **Counts.**  ``check_positive_int`` takes integers only (``int``, numpy
  integers) and refuses booleans and every float, ``1e6`` and ``16.0``
  included (issue 22); every count that drives work or memory passes a
  documented ``maximum``, and the error states the range.  Work that is a
  product of counts (tasks × trajectories × steps) is bounded as a whole by
  ``check_work``, its limit calibrated in seconds.
* **Magnitudes.**  Python integers beyond the float range (``10**400``) are
  refused with a ``ValueError``; results that would leave the float range are
  refused by ``check_finite_result`` with a ``ValueError`` naming the inputs,
  never returned as ``inf``/NaN.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["MAX_COUNT", "MAX_JOBS", "check_bool", "check_choice", "check_finite_result",
           "check_jobs", "check_mapping", "check_path", "check_positive_int", "check_real",
           "check_scalar", "check_work", "return_like", "seed_from"]


def _range_text(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low:g}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high:g}")
    return " and ".join(parts) if parts else "finite"


_FLOAT_MAX_INT = int(np.finfo(np.float64).max)


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
    if isinstance(value, numbers.Integral) and abs(int(value)) > _FLOAT_MAX_INT:
        raise ValueError(f"{name} must be finite (within the float range); got an integer "
                         f"of {len(str(abs(int(value))))} digits")
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


#: The upper limit of a count that states none of its own: numpy's ``int64`` range
#: (a count ends up in int64 arrays and index arithmetic, where a larger one wraps).
MAX_COUNT = 2**63 - 1


def check_positive_int(name: str, value: Any, *, minimum: int = 1,
                       maximum: int | None = None) -> int:
    """Validate an integer count in ``[minimum, maximum]`` and return it as ``int``.

    The one count validator of rlscale (issue 22): **integers only** -- Python
    ``int`` and numpy integers (a 0-d integer array too).  Booleans are refused
    (``True`` for a count is nearly always a bug), and so is every float, even an
    integral one: ``1e6`` or ``16.0`` is a real number that happens to be whole,
    and accepting it let ``sample_trajectories(rw, 1e6)`` start work its caller
    never wrote as a count.  Strings, arrays, NaN and infinities are refused too.

    ``maximum`` bounds the work or memory the count can ask for; every error
    states the valid range, upper bound included.  ``maximum=None`` means
    :data:`MAX_COUNT` (the ``int64`` range), for counts that drive no work
    (seeds, indices).

    Parameters
    ----------
    name : str
        Argument name used in error messages.
    value : int
        The count to check.
    minimum : int
        Smallest valid value (default 1).
    maximum : int, optional
        Largest valid value (default :data:`MAX_COUNT`).

    Returns
    -------
    int

    Raises
    ------
    TypeError
        If ``value`` is not an integer (a bool, a float, a string, an array, ...).
    ValueError
        If it lies outside ``[minimum, maximum]``.

    Examples
    --------
    >>> check_positive_int("steps", 10)
    10
    >>> check_positive_int("steps", 0)
    Traceback (most recent call last):
    ...
    ValueError: steps must be an integer >= 1 and <= 9223372036854775807; got steps=0
    >>> check_positive_int("trials", 10**9, maximum=10**8)
    Traceback (most recent call last):
    ...
    ValueError: trials must be an integer >= 1 and <= 100000000; got trials=1000000000
    >>> check_positive_int("n", 1e6, maximum=10**7)
    Traceback (most recent call last):
    ...
    TypeError: n must be an integer >= 1 and <= 10000000, not a float; got n=1e+06 (write ...
    >>> check_positive_int("n", True)
    Traceback (most recent call last):
    ...
    TypeError: n must be an integer >= 1 and <= 9223372036854775807, not a boolean; got True
    """
    if maximum is None:
        maximum = MAX_COUNT
    valid = f"an integer >= {minimum} and <= {maximum}"
    if isinstance(value, np.ndarray):
        if value.ndim:
            raise TypeError(f"{name} must be {valid}, not an array; got an array of shape "
                            f"{value.shape}")
        value = value[()]  # a 0-d array: judged by its element
    if isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be {valid}, not a boolean; got {value!r}")
    if not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real):
            shown = f"{float(value):g}"
            hint = (f" (write int({shown}) if a count was meant)"
                    if math.isfinite(value) and float(value).is_integer() else "")
            raise TypeError(f"{name} must be {valid}, not a float; got {name}={shown}{hint}")
        raise TypeError(f"{name} must be {valid}; got {type(value).__name__} {value!r:.60}")
    value = int(value)
    if value < minimum or value > maximum:
        shown = str(value)
        if len(shown) > 30:
            shown = f"an integer of {len(shown.lstrip('-'))} digits"
        raise ValueError(f"{name} must be {valid}; got {name}={shown}")
    return value


#: Most worker processes a ``jobs``/``n_jobs`` argument may ask for.
MAX_JOBS = 1024


#: Largest seed drawn from a Generator passed as ``rng=`` (room for ``seed + i`` offsets).
SEED_DRAW = 2**62


def seed_from(seed: Any, rng: Any, default: int = 0) -> Any:
    """The seed of a verb that takes ``rng=`` (rlscale's one spelling) or ``seed=`` (kept).

    ``rng`` is an integer seed or a :class:`numpy.random.Generator`; a Generator
    is drawn from once (an integer below :data:`SEED_DRAW`), so the caller's
    stream advances and the same generator state gives the same result.  With
    ``rng`` left ``None`` the verb's ``seed`` is returned unchanged (it validates
    it); giving both is a ``TypeError``.

    Examples
    --------
    >>> seed_from(0, 7), seed_from(3, None)
    (7, 3)
    >>> seed_from(0, np.random.default_rng(1)) == seed_from(0, np.random.default_rng(1))
    True
    >>> seed_from(2, 5)
    Traceback (most recent call last):
    ...
    TypeError: pass rng= or seed=, not both; got seed=2, rng=5
    """
    if rng is None:
        return seed
    if not (isinstance(seed, numbers.Integral) and not isinstance(seed, bool)
            and seed == default):
        raise TypeError(f"pass rng= or seed=, not both; got seed={seed!r:.40}, rng={rng!r:.40}")
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(SEED_DRAW))
    if isinstance(rng, np.random.RandomState | np.random.SeedSequence | np.random.BitGenerator):
        raise TypeError(f"rng must be an integer seed or a numpy.random.Generator; got "
                        f"{type(rng).__name__} (wrap it: np.random.default_rng(...))")
    return check_positive_int("rng", rng, minimum=0, maximum=None)  # an integer seed


def check_jobs(name: str, value: Any) -> int:
    """Validate a worker count in joblib's convention: ``1..MAX_JOBS`` workers, or ``-1``
    for every core (``-k``: every core but ``k - 1``, down to ``-MAX_JOBS``).

    Examples
    --------
    >>> check_jobs("n_jobs", -1), check_jobs("n_jobs", 4)
    (-1, 4)
    >>> check_jobs("n_jobs", 10**30)
    Traceback (most recent call last):
    ...
    ValueError: n_jobs must be a non-zero integer from -1024 to 1024 (-1: every core); ...
    """
    valid = f"a non-zero integer from -{MAX_JOBS} to {MAX_JOBS} (-1: every core)"
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be {valid}; got {type(value).__name__} {value!r:.60}")
    value = int(value)
    if value == 0 or abs(value) > MAX_JOBS:
        shown = value if len(str(value)) <= 30 else f"an integer of {len(str(abs(value)))} digits"
        raise ValueError(f"{name} must be {valid}; got {name}={shown}")
    return value


def check_work(what: str, limit: int, seconds: float, **factors: int | float) -> int | float:
    """Refuse a request whose work -- the product of ``factors`` -- exceeds ``limit``.

    Every count a user controls is bounded on its own (:func:`check_positive_int`),
    but work is a product (tasks × trajectories × steps): each count can be within
    its limit and the request still run for hours.  This bounds the product, with
    ``limit`` calibrated so that the largest accepted request takes about
    ``seconds`` on one core (measured, and stated in the message), the way the
    cost parser predicts its expansion before doing it.  The error names every
    factor, so the caller sees which to lower.

    Parameters
    ----------
    what : str
        The work, as the message calls it ("sampled trajectory steps").
    limit : int
        Largest accepted product.
    seconds : float
        About how long a request at ``limit`` takes on one core.
    **factors : int or float
        The factors of the work, by the argument names a caller knows.

    Returns
    -------
    int or float
        The product (exact for integers).

    Examples
    --------
    >>> check_work("trajectory steps", 10**7, 10, n=1000, tasks=20, horizon=50)
    1000000
    >>> check_work("trajectory steps", 10**7, 10, n=10**6, tasks=20, horizon=50)
    Traceback (most recent call last):
    ...
    ValueError: trajectory steps n·tasks·horizon = 1e+06·20·50 = 1e+09 exceed the limit 1e+07 ...
    """
    total = math.prod(factors.values())
    if total > limit:
        names = list(factors)
        lower = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
        raise ValueError(f"{what} {'·'.join(names)} = "
                         f"{'·'.join(f'{v:g}' for v in factors.values())} = {float(total):.3g} "
                         f"exceed the limit {float(limit):.3g} (about {seconds:g} s on one "
                         f"core); lower {lower}")
    return total


def check_scalar(name: str, value: Any, **bounds: Any) -> float:
    """Validate a real *scalar* (see :func:`check_real` for ``bounds``) and return a float.

    A 0-d value only: arrays and lists, even with one element, are refused
    with a ``TypeError`` naming the argument (module docstring, "Scalars").

    Examples
    --------
    >>> check_scalar("budget", 1e3, low=0.0, low_open=True)
    1000.0
    >>> check_scalar("budget", [1e3])
    Traceback (most recent call last):
    ...
    TypeError: budget must be a real scalar, not an array of shape (1,)
    """
    if isinstance(value, list | tuple | np.ndarray) and np.ndim(value) != 0:
        shape = (len(value),) if isinstance(value, list | tuple) else value.shape
        raise TypeError(f"{name} must be a real scalar, not an array of shape {shape}")
    try:
        arr = check_real(name, value, **bounds)
    except TypeError as exc:
        raise TypeError(str(exc).replace("a real number or array", "a real scalar")) from None
    if arr.ndim:
        raise TypeError(f"{name} must be a real scalar, not an array of shape {arr.shape}")
    return float(arr)


def check_bool(name: str, value: Any) -> bool:
    """Validate a flag: ``True``/``False`` (or numpy booleans) only.

    Examples
    --------
    >>> check_bool("symbolic", "yes")
    Traceback (most recent call last):
    ...
    TypeError: symbolic must be True or False; got 'yes'
    """
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False; got {value!r:.60}")
    return bool(value)


def check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    """Validate a string option (``mode=``, ``how=``) against its choices.

    A non-string (an array, say) is a ``TypeError`` before any membership
    test: ``array in (...)`` would raise numpy's "truth value of an empty
    array is ambiguous", which names no argument.

    Examples
    --------
    >>> check_choice("mode", "quick", ("quick", "full"))
    'quick'
    >>> check_choice("mode", "fast", ("quick", "full"))
    Traceback (most recent call last):
    ...
    ValueError: mode must be one of quick, full; got mode='fast'
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {', '.join(choices)}; got {name}={value!r:.60}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}; got {name}={value!r:.60}")
    return value


def check_mapping(name: str, value: Any) -> Mapping:
    """Validate a mapping argument (``{axis: value}``) with string keys.

    Examples
    --------
    >>> check_mapping("values", [("E", 1.0)])
    Traceback (most recent call last):
    ...
    TypeError: values must be a mapping axis -> value; got list
    """
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping axis -> value; got {type(value).__name__}")
    for key in value:
        if not isinstance(key, str):
            raise TypeError(f"{name} keys must be axis names (str); got {key!r:.60}")
    return value


def check_path(name: str, value: Any) -> Any:
    """Validate a file-system path argument: a non-empty ``str`` or ``os.PathLike[str]``.

    Returns it as a :class:`pathlib.Path`.  Bytes, numbers and other objects are a
    ``TypeError`` naming the argument (``open(3.5)`` said "expected str, bytes or
    os.PathLike object, not float"); whether the path exists is the caller's
    business (an ``OSError`` naming it).

    Examples
    --------
    >>> check_path("out", "results.csv")
    PosixPath('results.csv')
    >>> check_path("out", 3.5)
    Traceback (most recent call last):
    ...
    TypeError: out must be a path (str or os.PathLike); got float 3.5
    """
    import os
    from pathlib import Path

    text = os.fspath(value) if isinstance(value, str | os.PathLike) else None
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a path (str or os.PathLike); got "
                        f"{type(value).__name__} {value!r:.60}")
    if not text or "\x00" in text:
        raise ValueError(f"{name} must be a non-empty path without NUL; got {name}={text!r:.60}")
    return Path(text)


def check_finite_result(result: Any, what: str, **inputs: Any) -> Any:
    """Refuse a result that left the float range (``inf``/NaN) with a ``ValueError``.

    The message names ``what`` was computed and the ``inputs`` that led there
    (scalars shown as numbers, arrays by their shape), so the caller knows
    which argument to shrink.  Returns ``result`` unchanged when it is finite.

    Examples
    --------
    >>> check_finite_result(2.0, "the loss", E=1.0)
    2.0
    >>> check_finite_result(np.inf, "the loss", E=5e-324)
    Traceback (most recent call last):
    ...
    ValueError: the loss overflows the float range at E=4.94066e-324
    """
    if np.all(np.isfinite(result)):
        return result
    shown = []
    for key, v in inputs.items():
        if np.ndim(v) == 0:
            try:
                shown.append(f"{key}={float(v):g}")
            except (TypeError, ValueError, OverflowError):
                shown.append(f"{key}={v!r:.40}")
        else:
            shown.append(f"{key} (an array of shape {np.shape(v)})")
    raise ValueError(f"{what} overflows the float range at {', '.join(shown)}")


def return_like(result: np.ndarray, *inputs: Any) -> float | np.ndarray:
    """Return a Python ``float`` when every input was a scalar, else the array."""
    if all(np.ndim(x) == 0 for x in inputs):
        return float(np.asarray(result)[()])
    return result
