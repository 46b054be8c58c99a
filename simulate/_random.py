"""One random-state convention for everything in ``rlscale.simulate``.

* A function or method that draws random numbers takes ``rng``: a
  :class:`numpy.random.Generator` (used as is, advanced in place), a
  non-negative int seed (a fresh ``np.random.default_rng(seed)``) or ``None``
  (fresh entropy from the OS: not reproducible).  Booleans, negative ints and
  anything else are refused, naming ``rng``.  :func:`as_generator` is the one
  place that reads it.
* A *configuration* — a record that identifies a run, like
  :class:`~rlscale.simulate.TrainConfig` — holds int seeds (``seed``,
  ``eval_seed``, ``base_seed``), never a Generator, so that it is plain data
  (hashable, written to JSON, hashed into the sweep's ``run_id``).  One seed
  feeds every random stream of the run through
  ``np.random.SeedSequence(seed).spawn(n)``: the streams are independent, and
  adding a stream at the end does not change the earlier ones.
* :class:`~rlscale.simulate.VecGridEnv` names its argument ``seed`` (as
  Gymnasium's ``reset(seed=...)`` does) and reads it like ``rng``.
* Same seed, same result, bit for bit; no global ``np.random`` state is read
  or written anywhere in the package.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_generator"]


def as_generator(rng: Any) -> np.random.Generator:
    """``rng`` as a Generator: a Generator, a non-negative int seed or None.

    Examples
    --------
    >>> a, b = as_generator(7), as_generator(7)
    >>> bool(a.random() == b.random())   # same seed, same stream
    True
    >>> g = np.random.default_rng(0)
    >>> as_generator(g) is g
    True
    >>> as_generator(True)
    Traceback (most recent call last):
    ...
    TypeError: rng must be a numpy Generator, an int seed or None; got rng=True
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, int | np.integer) and not isinstance(rng, bool | np.bool_):
        if rng < 0:
            raise ValueError(f"rng must be a non-negative int seed; got rng={rng}")
        return np.random.default_rng(rng)
    raise TypeError(f"rng must be a numpy Generator, an int seed or None; got rng={rng!r}")
