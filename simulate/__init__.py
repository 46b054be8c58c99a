"""rlscale.simulate: simulators that ground the theory in data.

The Gaussian selection simulator (exact, fast Monte Carlo, brute force) and a
numpy RL trainer on procedurally generated agent environments.  Builds on
``rlscale.theory`` only; names load lazily on first use.
"""

from __future__ import annotations

from rlscale.theory._lazy import attach

# Public name -> private module defining it.  Each capability adds its own block.
_EXPORTS: dict[str, str] = {
    # -- Gaussian selection simulator (issue 3) --
    # -- environments, policies, algorithms, trainer (issue 5) --
    "BANDIT_ALGORITHMS": "_bandit",
    "BanditResult": "_bandit",
    "kl_bandit_optimum": "_bandit",
    "kl_bandit_pg": "_bandit",
}

# Public sub-modules reachable as attributes.
_SUBMODULES: tuple[str, ...] = ()

__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS, _SUBMODULES)
