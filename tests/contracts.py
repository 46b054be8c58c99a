"""The input contract every public entry point keeps (issue 10, §6).

For any argument — NaN, ±inf, 0, negatives, ±1e308, booleans, strings, None,
empty or oddly shaped arrays — a public function either

* raises a documented ``ValueError`` or ``TypeError`` whose message names the
  offending argument, or
* returns a finite result (no NaN, no ±inf, no complex number anywhere in it),

within a deadline, without any other exception and without a RuntimeWarning.

Contract tests (``tests/test_contracts_*.py``) draw hostile arguments from
:func:`hostile`, call the function through :func:`check_contract`, and add an
independent oracle where one exists.  The number of examples follows the
hypothesis profile (200 in ``ci``, 5,000 in ``deep``).
"""

from __future__ import annotations

import dataclasses
import math
import os
import signal
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np
from hypothesis import strategies as st

__all__ = ["HOSTILE", "assert_finite", "check_contract", "hostile", "hostile_counts",
           "time_limit"]

#: Values a careless or hostile caller passes where a number is expected.
HOSTILE: tuple[Any, ...] = (
    math.nan, math.inf, -math.inf, 0, 0.0, -0.0, -1, -1.0, 1e308, -1e308, 5e-324, 1e-308,
    True, False, None, "1", "", b"1", 1 + 1j, complex(math.nan, 0), [], [1.0], [[1.0]],
    np.array([]), np.array([1.0]), np.array([[1.0, 2.0]]), np.array([math.nan]),
    np.float32(1.0), np.int64(2), np.bool_(True), object(), {"a": 1}, (1.0, 2.0),
    2**64, -(2**64), 10**400,
)


def hostile(*extra: Any) -> st.SearchStrategy[Any]:
    """Hostile values mixed with ordinary floats and integers of every magnitude.

    ``extra`` adds values that are valid for the function under test, so the
    search also reaches the code behind the validation.
    """
    return st.one_of(
        st.sampled_from(HOSTILE + extra),
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(-(10**30), 10**30),
        st.floats(-1e6, 1e6),
    )


def hostile_counts(*extra: Any) -> st.SearchStrategy[Any]:
    """Hostile values for an integer count: integer-valued floats of any size, bools, ..."""
    return st.one_of(
        hostile(*extra),
        st.integers(0, 2**70).map(float),
        st.sampled_from([2.0, 2.5, 1e218, 7.7e165, 1e308]),
    )


#: Contract checks run per test (pytest node id): the examples a run really executed,
#: replays of shrinking included; ``RLSCALE_CONTRACT_LOG`` writes them (tests/conftest.py).
CALLS: Counter[str] = Counter()


class DeadlineExceeded(AssertionError):
    """The call ran past its deadline: a hang or unbounded work."""


#: Wall-clock allowance per second of CPU deadline: a call that waits without computing
#: (a lock, a socket) is caught by the wall clock, one that computes by the CPU clock.
WALL_FACTOR, WALL_MINIMUM = 6.0, 60.0


@contextmanager
def time_limit(seconds: float):
    """Fail with :class:`DeadlineExceeded` when the block uses more than ``seconds`` of CPU
    (``ITIMER_PROF``), or waits past ``max(6·seconds, 60)`` s of wall time (``ITIMER_REAL``).

    CPU time, not wall time, bounds the work (issue 22): on a host at load 29 a call that
    takes 1.4 CPU s took over 10 s of wall time and was counted as a hang.  Main thread,
    POSIX; elsewhere the block runs unbounded.
    """
    if not hasattr(signal, "setitimer"):
        yield
        return
    wall = max(WALL_FACTOR * seconds, WALL_MINIMUM)

    def _cpu(signum, frame):
        raise DeadlineExceeded(f"call exceeded its {seconds:g} s CPU deadline")

    def _wall(signum, frame):
        raise DeadlineExceeded(f"call waited past its {wall:g} s wall-clock deadline")

    previous = signal.signal(signal.SIGPROF, _cpu), signal.signal(signal.SIGALRM, _wall)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, wall)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, previous[0])
        signal.signal(signal.SIGALRM, previous[1])


def assert_finite(value: Any, where: str = "result") -> None:
    """Assert that ``value`` holds no NaN, ±inf or complex number anywhere.

    Walks numbers, numpy arrays, mappings, sequences and dataclasses; other
    objects (strings, laws, ...) pass.
    """
    if isinstance(value, bool | np.bool_ | str | bytes) or value is None:
        return
    if isinstance(value, complex | np.complexfloating):
        raise AssertionError(f"{where} is complex: {value!r}")
    if isinstance(value, int | np.integer):
        return
    if isinstance(value, float | np.floating):
        if not math.isfinite(float(value)):
            raise AssertionError(f"{where} is not finite: {value!r}")
        return
    if isinstance(value, np.ndarray):
        if np.iscomplexobj(value):
            raise AssertionError(f"{where} is a complex array")
        if value.dtype.kind in "fiu" and not np.all(np.isfinite(value)):
            raise AssertionError(f"{where} has non-finite entries: {value!r:.200}")
        if value.dtype == object:
            for i, item in enumerate(value.flat):
                assert_finite(item, f"{where}[{i}]")
        return
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            assert_finite(getattr(value, f.name), f"{where}.{f.name}")
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            assert_finite(v, f"{where}[{k!r}]")
        return
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            assert_finite(item, f"{where}[{i}]")


def check_contract(call: Callable[[], Any], names: Iterable[str], *,
                   deadline: float = 10.0,
                   oracle: Callable[[Any], None] | None = None) -> Any:
    """Call ``call()`` and assert the input contract; return its result or ``None``.

    Parameters
    ----------
    call : callable
        The call under test, with its arguments bound.
    names : iterable of str
        The argument names a ``ValueError``/``TypeError`` may name; its
        message must contain at least one of them.
    deadline : float
        Seconds the call may take (a hang fails the contract).
    oracle : callable, optional
        Run on a returned result: an independent check of its value.

    Returns
    -------
    The call's result, or ``None`` when it refused the input as documented.
    """
    names = tuple(names)
    CALLS[os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]] += 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with time_limit(deadline):
            try:
                result = call()
            except (ValueError, TypeError) as exc:
                message = str(exc)
                assert message, f"{type(exc).__name__} with an empty message"
                assert "\n" not in message.strip() or len(message) < 2000, message
                assert any(n in message for n in names), (
                    f"{type(exc).__name__} does not name any of {names}: {message}")
                return None
    assert_finite(result)
    if oracle is not None:
        oracle(result)
    return result
