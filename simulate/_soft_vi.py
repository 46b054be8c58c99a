"""Exact KL-regularised optimum of a proxy reward on a :class:`RewardWorld` (soft value iteration).

For a finite-horizon MDP with a uniform reference policy ``π_ref`` and the
objective ``E_π[R̂] − β·KL(π ‖ π_ref)`` over trajectory distributions, the
optimum is the Markov policy (Ziebart 2010, ch. 6; Levine 2018, "RL and
control as inference", §2.3)

    Q_h(s, a) = Σ_{s'} P(s'|s,a) [r̂(ℓ) + V_{h-1}(s')],
    V_h(s)    = β log Σ_a π_ref(a|s) exp(Q_h(s, a)/β),
    π_h(a|s)  = π_ref(a|s) exp((Q_h(s, a) − V_h(s))/β),

and ``V_H(s_0)`` is the optimal objective (backward induction: the per-state
problem ``max_π E_π[Q] − β KL(π ‖ π_ref)`` is solved by the Gibbs law above
with value ``β log E_{π_ref}[e^{Q/β}]``).  Under deterministic dynamics this
equals ``β log E_ref[exp(R̂/β)]`` over whole trajectories (Gibbs' variational
principle); under slippery dynamics the policy cannot steer the slips, so the
optimum is lower than that "optimistic" value — the tests check both.
:func:`soft_optimum` runs this for a whole grid of ``β`` at once and, in the
same backward pass, evaluates each optimal policy exactly: its proxy value,
its gold value and its trajectory KL (:mod:`rlscale.simulate._gold_reward`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.simulate._gold_reward import RewardWorld, _cont, _pi_avg, _q, check_reward_world
from rlscale.theory._validation import check_bool, check_real

#: KL penalties accepted: ``Q/β`` and ``β·KL`` stay finite for landing rewards <= 1e100.
BETA_RANGE = (1e-100, 1e100)
MAX_BETAS = 1000


def check_betas(name: str, betas: Any) -> np.ndarray:
    """A 1-D grid of KL penalties in :data:`BETA_RANGE`."""
    b = np.atleast_1d(check_real(name, betas, low=BETA_RANGE[0], high=BETA_RANGE[1]))
    if b.ndim != 1 or not 1 <= b.size <= MAX_BETAS:
        raise ValueError(f"{name} must be a 1-D grid of 1 to {MAX_BETAS} values; got shape "
                         f"{b.shape}")
    return b.astype(float)

__all__ = ["SoftOptimum", "soft_optimum"]


@dataclass(frozen=True)
class SoftOptimum:
    """Exact evaluation of ``π_β ∝ π_ref·exp(Q_soft/β)`` for each ``β`` and task.

    Attributes
    ----------
    betas : ndarray, shape (B,)
    kl, proxy, gold, soft_value : ndarray, shape (B, T)
        Trajectory KL to the reference, expected proxy and gold returns, and
        the optimal objective ``V_H = proxy − β·kl``.
    policy : ndarray, shape (B, H, T, 3, S², 4) or None
        The policies (only with ``keep_policy=True``).
    """

    betas: np.ndarray
    kl: np.ndarray
    proxy: np.ndarray
    gold: np.ndarray
    soft_value: np.ndarray
    policy: np.ndarray | None = None


def soft_optimum(rw: RewardWorld, proxy_land: Any, gold_land: Any, betas: Any, *,
                 keep_policy: bool = False) -> SoftOptimum:
    """KL-regularised optimum of ``proxy_land`` at every ``β``; exact KL, proxy and gold.

    Parameters
    ----------
    rw : RewardWorld
    proxy_land, gold_land : array, shape (T·3·S²,)
        Landing rewards (:meth:`RewardWorld.landing_reward`).
    betas : array_like, shape (B,)
        KL penalties, > 0.

    Examples
    --------
    >>> import numpy as np
    >>> from rlscale.simulate._gold_reward import GOLD_WEIGHTS, make_reward_world
    >>> rw = make_reward_world(2, rng=0)
    >>> g = rw.landing_reward(GOLD_WEIGHTS)
    >>> res = soft_optimum(rw, g, g, [100.0, 1.0, 0.01])
    >>> bool(np.all(np.diff(res.kl, axis=0) > 0))       # smaller beta, more KL
    True
    >>> bool(np.allclose(res.soft_value, res.proxy - res.betas[:, None] * res.kl))
    True
    """
    check_reward_world(rw)
    b = check_betas("betas", betas)
    r = rw._check_landing("proxy_land", proxy_land)[None]
    g = rw._check_landing("gold_land", gold_land)[None]
    keep_policy = check_bool("keep_policy", keep_policy)
    c = rw._compact(everywhere=keep_policy)
    n, B, H = c["states"].size, b.size, rw.horizon
    # The four programs (soft value, proxy, gold, KL) share the landing gathers: one
    # stacked array W = (V, Vp, Vg, Vk), each (B, states), and one _q per step.
    land_r, land_g = r[0, c["slots"]], g[0, c["slots"]]
    beta = b.reshape(B, 1, 1)
    log4 = np.log(4.0)
    W = np.zeros((4, B, n))
    pols = np.empty((B, H, *rw.features.shape[:3], 4)) if keep_policy else None
    for h in range(1, H + 1):
        C = _cont(c, W)
        C[0] += land_r
        C[1] += land_r
        C[2] += land_g
        D = _q(c, C)  # (4, B, states, 4)
        z = D[0] / beta
        zmax = np.maximum(np.maximum(z[..., 0], z[..., 1]),
                          np.maximum(z[..., 2], z[..., 3]))[..., None]
        zz = z - zmax
        e = np.exp(zz)
        tot = (e[..., 0] + e[..., 1] + e[..., 2] + e[..., 3])[..., None]
        pi = e / tot
        log_tot = np.log(tot)
        logr = log4 + zz - log_tot  # log(π/π_ref)
        new = np.empty_like(W)
        new[0] = (beta * (zmax + log_tot - log4))[..., 0]
        new[1:] = _pi_avg(D[1:], pi)
        new[3] += _pi_avg(logr, pi)
        W = new
        if pols is not None:
            pols.reshape(B, H, -1, 4)[:, h - 1, c["states"]] = pi
    s = c["start"]
    return SoftOptimum(b, W[3][:, s], W[1][:, s], W[2][:, s], W[0][:, s], pols)
