"""One step of the reward-model testbed: comparisons, a Bradley–Terry RM, its optimisation.

The world is a :class:`~rlscale.simulate._chain_world.ChainWorld` (``A^H``
trajectories, a gold reward with an additive and an order-``k`` interaction
part).  The step, as library functions:

1. :func:`comparison_pairs` draws ``m_max`` pairs of reference trajectories and
   their gold margins; :func:`rm_design` lays out their feature differences for
   a reward model's feature blocks (a sparse matrix shared by every noise level
   and ridge); labels are Bradley–Terry with noise ``s``
   (:func:`rlscale.simulate._reward_model.bt_labels`).
2. :func:`train_path` fits the RM on the first ``M`` pairs for each ``M`` of a
   nested grid (prefixes, as a team adding labels sees them), each fit warm
   started from the last (:func:`rlscale.simulate._reward_model.fit_bradley_terry_sparse`).
3. :func:`chain_gold_gains` optimises the fitted proxy with each optimiser
   (:mod:`rlscale.simulate._chain_optimisers`) and returns the gold gain at
   each KL budget, following the proxy's own Pareto frontier (the optimiser
   never sees the gold): :func:`rlscale.simulate._kl_frontier.frontier_gold`.

**Reward models** (:data:`RM_KINDS`): linear in one-hot features of a set of
blocks with a per-block ridge ``λ = r·s²/σ²`` — ``σ²`` the prior variance of
one gold entry of the block (``(1 − ν)/H`` additive, ``ν/W`` per window
entry: each trajectory reads ``H`` and ``W`` entries), ``s`` the label noise:

* ``bayes``: the gold's own blocks, ``r = 1``: the posterior mode under the
  generator's own prior — the best-tuned RM of its class, calibrated up to the
  logistic likelihood, so optimising it should not over-optimise;
* ``weak``: the same blocks, ``r = 10⁻²`` (it fits the label noise of rarely
  seen entries: the over-fitted RM);
* ``additive``: the additive block only (``r = 1``), blind to interactions —
  misspecified whenever ``ν > 0``.

The proxy is rescaled to unit standard deviation under the reference (exact,
:func:`rlscale.simulate._chain_world.reference_moments`) so that one ``β`` grid
serves every RM; the optimisers are scale-free.  A budget beyond the largest KL
an optimiser reached (best-of-n on a pool of ``P``: about ``log P − 1``) is
marked not reached (``NaN``) rather than filled with the last point.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.simulate._chain_optimisers import bon_pool, pg_chain, soft_chain
from rlscale.simulate._chain_world import (
    ChainReward,
    ChainWorld,
    check_chain_world,
    feature_index,
    reference_moments,
    reward_from_weights,
    reward_values,
    sample_reference,
)
from rlscale.simulate._gridworld import as_generator
from rlscale.simulate._kl_frontier import frontier_gold
from rlscale.simulate._reward_model import fit_bradley_terry_sparse, onehot_differences
from rlscale.theory._validation import check_positive_int, check_real, check_scalar

__all__ = [
    "OPTIMISERS",
    "RM_KINDS",
    "RmKind",
    "chain_gold_gains",
    "comparison_pairs",
    "prior_ridge",
    "rm_blocks",
    "rm_design",
    "train_path",
]

OPTIMISERS = ("soft", "bon", "pg")


@dataclass(frozen=True)
class RmKind:
    """A reward-model family: its feature blocks (``None``: the gold's own) and ridge factor."""

    blocks: tuple[str, ...] | None
    ridge_factor: float
    description: str


RM_KINDS = {
    "bayes": RmKind(None, 1.0, "the gold's blocks, ridge = the generator's prior (posterior "
                               "mode)"),
    "weak": RmKind(None, 1e-2, "the gold's blocks, ridge 1/100 of the prior's (over-fitted)"),
    "additive": RmKind(("additive",), 1.0, "additive block only, prior ridge (blind to "
                                           "interactions)"),
}


def _kind(rm: Any) -> RmKind:
    if not isinstance(rm, str) or rm not in RM_KINDS:
        raise ValueError(f"rm must be one of {', '.join(RM_KINDS)}; got {rm!r:.80}")
    return RM_KINDS[rm]


def rm_blocks(world: ChainWorld, rm: str) -> tuple[str, ...]:
    """The feature blocks of reward model ``rm`` in ``world``."""
    check_chain_world(world)
    kind = _kind(rm)
    blocks = world.blocks() if kind.blocks is None else kind.blocks
    if "additive" in blocks and world.interaction_share == 1.0:
        raise ValueError("the additive reward model sees nothing of a gold with "
                         "interaction_share = 1")
    return blocks


def prior_ridge(world: ChainWorld, rm: str, noise: float) -> np.ndarray:
    """Per-feature ridge ``λ = r·s²/σ²`` of ``rm`` (module docstring)."""
    blocks = rm_blocks(world, rm)
    s = check_scalar("noise", noise, low=0.0, high=1e6, low_open=True)
    nu, H = world.interaction_share, world.horizon
    W = H - world.order + 1
    var = {"additive": (1.0 - nu) / H, "windows": nu / W}
    sizes = world.block_sizes(blocks)
    r = _kind(rm).ridge_factor
    return np.concatenate([np.full(sizes[b], r * s * s / var[b]) for b in blocks])


def comparison_pairs(world: ChainWorld, m_max: int, rng: Any
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``m_max`` pairs of reference trajectories ``(A, B)`` and gold margins ``R_A − R_B``."""
    check_chain_world(world)
    m_max = check_positive_int("m_max", m_max, maximum=10**7)
    gen = as_generator(rng)
    a, b = sample_reference(world, m_max, gen), sample_reference(world, m_max, gen)
    return a, b, reward_values(world.gold, a) - reward_values(world.gold, b)


def rm_design(world: ChainWorld, traj_a: Any, traj_b: Any, rm: str):
    """Sparse ``Φ_A − Φ_B`` on ``rm``'s blocks (CSR, rows in pair order)."""
    blocks = rm_blocks(world, rm)
    d = sum(world.block_sizes(blocks).values())
    return onehot_differences(feature_index(world, traj_a, blocks),
                              feature_index(world, traj_b, blocks), d)


def train_path(delta: Any, labels: Any, ms: Any, ridge: Any) -> list[np.ndarray]:
    """Bradley–Terry RMs on the first ``M`` pairs for each ``M`` of ``ms`` (increasing),
    each warm started from the previous one's weights."""
    m = np.atleast_1d(check_real("ms", ms, low=1.0)).astype(int)
    if m.ndim != 1 or np.any(np.diff(m) <= 0) or m[-1] > delta.shape[0]:
        raise ValueError(f"ms must increase and be <= {delta.shape[0]} (the pairs); got "
                         f"{m.tolist()}")
    y = check_real("labels", labels, low=0.0, high=1.0)
    out, theta = [], None
    for M in m:
        # Strictly convex, so Newton converges; near-separable labels under a weak ridge
        # can take a few hundred steps (the default cap is 200).
        fit = fit_bradley_terry_sparse(delta[:M], y[:M], ridge=ridge, theta0=theta,
                                       max_iter=2000)
        if not fit.success:
            raise ValueError(f"the Bradley-Terry fit at M = {M} did not converge: "
                             f"{fit.message}")
        theta = fit.theta
        out.append(theta)
    return out


def _unit_proxy(world: ChainWorld, theta: np.ndarray, blocks) -> tuple[ChainReward, float]:
    """The proxy in reference-sd units, and its reference mean in those units."""
    proxy = reward_from_weights(world, theta, blocks)
    mean, var = reference_moments(proxy)
    if var <= 0.0:  # a constant proxy: nothing to optimise, every point is the reference
        return proxy, mean
    sd = float(np.sqrt(var))
    scaled = ChainReward(proxy.horizon, proxy.actions, proxy.order,
                         None if proxy.additive is None else proxy.additive / sd,
                         None if proxy.windows is None else proxy.windows / sd)
    return scaled, mean / sd


def chain_gold_gains(world: ChainWorld, theta: Any, rm: str, K: Any, *,
                  optimisers: tuple[str, ...] = OPTIMISERS, betas: Any = None,
                  pool: np.ndarray | None = None, bon_ns: Any = None, pg_betas: Any = None,
                  pg_steps: int = 150, pg_batch: int = 32, rng: Any = None,
                  ) -> dict[str, np.ndarray]:
    """Gold gain (reference-sd units) of each optimiser of ``rm``'s proxy at every budget.

    Parameters
    ----------
    theta : array
        The RM's weights on :func:`rm_blocks`.
    pool : array (P, H), optional
        Reference trajectories for best-of-n (needed for ``"bon"``).

    Returns
    -------
    dict optimiser -> ndarray (len(K),), ``NaN`` where the budget was not reached.

    Examples
    --------
    >>> from rlscale.simulate._chain_world import make_chain_world
    >>> w = make_chain_world(6, 4, 3, 0.5, rng=0)
    >>> theta = np.concatenate([w.gold.additive.ravel(), w.gold.windows.ravel()])
    >>> g = chain_gold_gains(w, theta, "bayes", [0.1, 1.0, 5.0], optimisers=("soft",))
    >>> bool(np.all(np.diff(g["soft"]) > 0))      # the gold itself: more KL, more gain
    True
    """
    check_chain_world(world)
    blocks = rm_blocks(world, rm)
    th = check_real("theta", theta, low=-1e100, high=1e100)
    K = np.atleast_1d(check_real("K", K, low=0.0, low_open=True)).astype(float)
    if K.ndim != 1 or K.size > 10**5:
        raise ValueError(f"K must be a 1-D grid of <= 1e5 budgets; got shape {K.shape}")
    if not isinstance(optimisers, tuple | list) or not all(
            isinstance(o, str) and o in OPTIMISERS for o in optimisers):
        raise ValueError(f"optimisers must be a tuple of {', '.join(OPTIMISERS)}; got "
                         f"{optimisers!r:.80}")
    gen = as_generator(rng)
    proxy, ref_p = _unit_proxy(world, th, blocks)
    out = {}
    if "soft" in optimisers:
        b = np.geomspace(0.003, 30.0, 24) if betas is None else betas
        path = soft_chain(proxy, world.gold, b)
        out["soft"] = frontier_gold(np.append(0.0, path.kl), np.append(ref_p, path.proxy),
                                    np.append(0.0, path.gold), K)
    if "bon" in optimisers:
        if pool is None:
            raise ValueError("pool (reference trajectories) is needed for 'bon'")
        pv, gv = reward_values(proxy, pool), reward_values(world.gold, pool)
        ns = np.geomspace(1.0, pool.shape[0], 40) if bon_ns is None else bon_ns
        path = bon_pool(pv, gv, ns)
        # Gain against the pool's own mean (n = 1): its sampling error cancels.
        out["bon"] = frontier_gold(path.kl, path.proxy, path.gold, K) - path.gold[0]
    if "pg" in optimisers:
        b = np.geomspace(0.03, 3.0, 6) if pg_betas is None else pg_betas
        path = pg_chain(proxy, world.gold, b, steps=pg_steps, n=pg_batch, rng=gen)
        out["pg"] = frontier_gold(np.append(0.0, path.kl), np.append(ref_p, path.proxy),
                                  np.append(0.0, path.gold), K)
    return out
