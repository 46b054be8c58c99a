"""A BLAS thread limit for rlscale's numeric hot loops (issue 13, goal 8).

The fitter's and the trainer's inner loops multiply small matrices thousands of
times.  A multi-threaded OpenBLAS splits each such product over its threads,
which on a shared, loaded machine makes every product wait for a busy core
(issue 13 measured scipy's L-BFGS-B 30-45x slower that way).
:func:`blas_threads` limits the BLAS pools for the duration of a ``with`` block
and restores them afterwards, so users need not set ``OPENBLAS_NUM_THREADS``.

It uses ``threadpoolctl`` (a runtime dependency).  Building its controller
inspects every loaded shared library (tens of milliseconds), so it is built once
and cached; entering a block then costs microseconds.  Nothing is imported at
module import time: ``import rlscale.theory`` stays light.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from rlscale.theory._validation import check_positive_int

__all__ = ["blas_threads"]


@lru_cache(maxsize=1)
def _controller() -> Any:
    # numpy's and scipy's OpenBLAS copies must be loaded before the controller
    # looks for them.
    import numpy  # noqa: F401
    import scipy.linalg  # noqa: F401
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextmanager
def blas_threads(limit: int = 1) -> Iterator[None]:
    """Run the block with at most ``limit`` BLAS threads; restore them afterwards.

    Parameters
    ----------
    limit : int
        Maximum number of BLAS threads inside the block, in ``[1, 1024]``.

    Raises
    ------
    ValueError, TypeError
        ``limit`` not an integer in ``[1, 1024]``.

    Examples
    --------
    >>> import numpy as np
    >>> with blas_threads(1):
    ...     float((np.ones((3, 3)) @ np.ones(3))[0])
    3.0
    >>> with blas_threads(0):
    ...     pass
    Traceback (most recent call last):
    ...
    ValueError: limit must be an integer >= 1 and <= 1024; got limit=0
    """
    limit = check_positive_int("limit", limit, minimum=1, maximum=1024)
    with _controller().limit(limits=limit, user_api="blas"):
        yield
