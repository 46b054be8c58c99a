"""Domain strategies for the test suite.

The shipped ones live in :mod:`rlscale.properties.strategies` (users' property
runs need them too); test-only strategies are added here.
"""

from rlscale.properties.strategies import (
    kl_budgets,
    log_uniform,
    noise_sds,
    pool_sizes,
    positive_reals,
    seeds,
)

__all__ = ["kl_budgets", "log_uniform", "noise_sds", "pool_sizes", "positive_reals", "seeds"]
