"""Typed hypothesis strategies for rlscale's domains.

Shared by the shipped property registry and the test suite
(``tests/strategies.py`` re-exports these).  Magnitudes that span many decades
(pool sizes, comparison counts) are drawn log-uniformly so that huge values
are exercised as often as small ones.
"""

from __future__ import annotations

import math

from hypothesis import strategies as st

__all__ = [
    "additive_laws",
    "kl_budgets",
    "linear_costs",
    "log_uniform",
    "noise_sds",
    "pool_sizes",
    "positive_reals",
    "seeds",
]


def log_uniform(low: float, high: float) -> st.SearchStrategy[float]:
    """Floats in ``[low, high]`` (both > 0), uniform in ``log``, endpoints included."""
    from rlscale.theory._validation import check_scalar

    low = check_scalar("low", low, low=0.0, low_open=True)  # issue 22: named, not a '<' error
    high = check_scalar("high", high, low=low)
    lo, hi = math.log(low), math.log(high)
    return st.one_of(
        st.sampled_from([low, high]),
        st.floats(lo, hi).map(lambda t: min(max(math.exp(t), low), high)),
    )


def positive_reals(low: float = 1e-6, high: float = 1e6) -> st.SearchStrategy[float]:
    """Strictly positive finite floats spanning several decades."""
    return log_uniform(low, high)


def pool_sizes(high: float = 1e300) -> st.SearchStrategy[float]:
    """Real pool sizes ``n >= 1`` (best-of-n), up to ``high``."""
    return log_uniform(1.0, high)


def kl_budgets(high: float = 50.0) -> st.SearchStrategy[float]:
    """KL budgets ``K >= 0``, including exactly 0."""
    return st.one_of(st.just(0.0), log_uniform(1e-4, high))


def noise_sds(high: float = 10.0) -> st.SearchStrategy[float]:
    """Proxy-noise standard deviations ``sigma >= 0``, including exactly 0."""
    return st.one_of(st.just(0.0), log_uniform(1e-3, high))


def seeds() -> st.SearchStrategy[int]:
    """Seeds for ``numpy.random.default_rng``."""
    return st.integers(0, 2**32 - 1)


# -- data-scaling laws and costs (issue 4) ---------------------------------------

def additive_laws(axes: tuple[str, ...] = ("E", "T", "K")) -> st.SearchStrategy:
    """:class:`rlscale.theory.AdditiveLaw` over ``axes`` with exponents in [0.05, 1.5]."""
    from rlscale.theory import AdditiveLaw

    n = len(_check_axes(axes))
    return st.builds(
        lambda floor, coefs, exps: AdditiveLaw(floor, dict(zip(axes, coefs)),
                                               dict(zip(axes, exps))),
        st.floats(0.0, 2.0),
        st.lists(log_uniform(1e-2, 1e3), min_size=n, max_size=n),
        st.lists(st.floats(0.05, 1.5), min_size=n, max_size=n),
    )


def linear_costs(axes: tuple[str, ...] = ("E", "T", "K")) -> st.SearchStrategy[str]:
    """Cost strings ``"c1*E + c2*T + ..."`` with unit prices spanning six decades."""
    _check_axes(axes)
    return st.lists(log_uniform(1e-2, 1e4), min_size=len(axes), max_size=len(axes)).map(
        lambda cs: " + ".join(f"{c!r}*{a}" for c, a in zip(cs, axes)))


def _check_axes(axes: object) -> tuple[str, ...]:
    if isinstance(axes, str | bytes) or not isinstance(axes, tuple | list) or not axes or not all(
            isinstance(a, str) and a.isidentifier() for a in axes):
        raise TypeError(f"axes must be a non-empty tuple of axis names; got {axes!r:.60}")
    return tuple(axes)
