"""The reward-optimisation experiment on gridworlds: RM from M comparisons, optimised within KL K.

One step of the experiment (issue 12), as library functions:

1. :func:`make_rm_setup` draws the environments the policies are optimised in
   and, separately, those whose reference trajectories are compared to train
   reward models (the RM must generalise to new environments), and scales the
   gold weights so that gains are in units of the gold reward's standard
   deviation under the reference: ``sd² = mean over environments of
   Var_ref(R)``, computed exactly (second-moment DP).
2. :func:`comparison_pool` samples ``2·M_max`` reference trajectories and
   pairs them, :func:`comparison_labels` labels them with noise ``s``, and
   :func:`train_proxy` fits a Bradley–Terry proxy on the first ``M`` pairs
   (prefixes: the ``M`` axis is nested, as a team adding labels sees it).
3. :func:`gold_gains` optimises the proxy in every optimisation environment
   with each optimiser, each measuring its own KL to the reference, and
   returns the gold gain per environment at every budget ``K``.

**Optimisers.**  ``soft_vi`` — the exact KL-regularised optimum over a grid of
``β`` (:func:`rlscale.simulate._soft_vi.soft_optimum`), KL exact; ``bon`` —
best-of-n over a pool of ``N`` reference trajectories per environment: with
the pool sorted by proxy and ties (equal proxies) grouped, group ``j`` is
chosen with probability ``F_j^n − F_{j−1}^n`` (``F`` the pool's proxy CDF;
real ``n``), gold is the group's mean, and KL is computed exactly on the pool's
empirical law (for untied continuous rewards it is ``log n − (n−1)/n``, but
trajectories tie, which lowers it; the pool caps it at ``log N``); ``pg`` —
KL-penalised RLOO (:func:`rlscale.simulate._mdp_policy_gradient.kl_policy_gradient`)
over a ``β`` grid, KL exact.

**Within KL ≤ K.**  Each optimiser yields points ``(KL, proxy, gold)`` per
environment, plus the reference ``(0, ·, ·)``.  The optimiser sees only the
proxy: on the points that improve the proxy over every point of smaller KL
(its Pareto frontier), ``gold(K)`` is linearly interpolated in KL, which a
mixture of the two neighbouring policies (one drawn per episode) achieves
with KL at most the interpolated value (KL is convex).  Beyond the largest KL
reached the last point is kept.  Nothing is chosen by the gold reward.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.simulate._chain_optimisers import bon_pool
from rlscale.simulate._gold_reward import (
    GOLD_WEIGHTS,
    RewardWorld,
    make_reward_world,
    sample_trajectories,
)
from rlscale.simulate._gridworld import as_generator
from rlscale.simulate._kl_frontier import frontier_gold
from rlscale.simulate._mdp_policy_gradient import kl_policy_gradient
from rlscale.simulate._reward_model import bt_labels, fit_bradley_terry
from rlscale.simulate._soft_vi import check_betas, soft_optimum
from rlscale.theory._repr import compact_repr
from rlscale.theory._validation import check_positive_int, check_real

__all__ = ["CAPACITIES", "OPTIMISERS", "RmSetup", "comparison_labels", "comparison_pool",
           "gold_gains",
           "make_rm_setup", "train_proxy"]

#: Reward-model feature columns: all of the gold's (``linear``, well specified)
#: or only the task events goal, subgoal, hole and step (``partial``: blind to
#: the per-cell terrain costs, so misspecified whatever M).
CAPACITIES = {"linear": tuple(range(10)), "partial": (0, 1, 2, 3)}
OPTIMISERS = ("soft_vi", "bon", "pg")


@dataclass(frozen=True, eq=False)
class RmSetup:
    """Environments, gold reward in reference-sd units, and reference statistics.

    Attributes
    ----------
    opt, rm : RewardWorld
        Optimisation environments; environments whose trajectories are compared.
    gold_weights : ndarray
        :data:`GOLD_WEIGHTS` divided by ``sd``.
    sd : float
        Pooled within-environment sd of the raw gold return under the reference.
    ref_gold : ndarray, shape (T,)
        Exact reference gold return (scaled) per optimisation environment.
    """

    opt: RewardWorld
    rm: RewardWorld
    gold_weights: np.ndarray
    sd: float
    ref_gold: np.ndarray

    def __repr__(self) -> str:  # one screen, not both worlds' arrays in full (issue 24)
        return compact_repr(self, title=f"{self.opt.n_tasks} optimisation and "
                            f"{self.rm.n_tasks} comparison environments")


def make_rm_setup(n_opt: int, n_rm: int, rng: Any = 0) -> RmSetup:
    """Draw optimisation and comparison environments; scale the gold to reference-sd units.

    Examples
    --------
    >>> s = make_rm_setup(4, 4, rng=0)
    >>> ev = s.opt.evaluate(None, s.opt.landing_reward(s.gold_weights), second_moment=True)
    >>> round(float(np.mean(ev["second"] - ev["value"] ** 2)), 12)
    1.0
    """
    n_opt = check_positive_int("n_opt", n_opt, maximum=10**4)
    n_rm = check_positive_int("n_rm", n_rm, maximum=10**4)
    gen = as_generator(rng)
    opt = make_reward_world(n_opt, gen)
    rm = make_reward_world(n_rm, gen)
    ev = opt.evaluate(None, opt.landing_reward(GOLD_WEIGHTS), second_moment=True)
    sd = float(np.sqrt(np.mean(ev["second"][0] - ev["value"][0] ** 2)))
    return RmSetup(opt, rm, GOLD_WEIGHTS / sd, sd, ev["value"][0] / sd)


def comparison_pool(setup: RmSetup, m_max: int, rng: Any) -> tuple[np.ndarray, np.ndarray]:
    """``m_max`` pairs of reference trajectories from the comparison environments.

    Returns ``Δ = Φ_A − Φ_B`` (m_max, d) and the gold margins ``R_A − R_B`` (m_max,).
    """
    _check_setup(setup)
    m_max = check_positive_int("m_max", m_max, maximum=10**6)
    gen = as_generator(rng)
    per_env = -(-2 * m_max // setup.rm.n_tasks)
    phi = sample_trajectories(setup.rm, per_env, gen)[0].reshape(-1, setup.rm.features.shape[-1])
    phi = phi[gen.permutation(phi.shape[0])[: 2 * m_max]]
    delta = phi[0::2] - phi[1::2]
    return delta, delta @ setup.gold_weights


def comparison_labels(margin: np.ndarray, s: float, rng: Any) -> np.ndarray:
    """Bradley–Terry labels of noise ``s`` for every pair (prefixes give smaller ``M``)."""
    return bt_labels(check_real("margin", margin), 0.0, s, rng)


def train_proxy(delta: np.ndarray, labels: np.ndarray, M: int, capacity: str) -> np.ndarray:
    """Bradley–Terry proxy weights on ``CAPACITIES[capacity]`` from the first ``M`` pairs."""
    cols = _capacity_columns(capacity)
    x = check_real("delta", delta)
    y = check_real("labels", labels)
    if x.ndim != 2 or x.shape[1] <= max(cols) or y.shape != x.shape[:1]:
        raise ValueError(f"delta must be (pairs, >= {max(cols) + 1} features) and labels "
                         f"(pairs,); got shapes {x.shape} and {y.shape}")
    M = check_positive_int("M", M, maximum=x.shape[0])
    return fit_bradley_terry(x[:M][:, cols], y[:M])


def _capacity_columns(capacity: Any) -> tuple[int, ...]:
    if not isinstance(capacity, str) or capacity not in CAPACITIES:
        raise ValueError(f"capacity must be one of {', '.join(CAPACITIES)}; got "
                         f"{capacity!r:.80}")
    return CAPACITIES[capacity]


def _check_setup(setup: Any) -> RmSetup:
    if not isinstance(setup, RmSetup):
        raise TypeError(f"setup must be an RmSetup; got setup={setup!r:.80}")
    return setup


def _proxy_units(setup: RmSetup, theta: np.ndarray, cols) -> tuple[np.ndarray, np.ndarray]:
    """Proxy landing rewards in reference-sd units (one β grid fits every RM), and the
    reference's proxy value per environment in the same units."""
    rw = setup.opt
    proxy = rw.landing_reward(theta, cols)
    ref_p = rw.evaluate(None, proxy, second_moment=True)
    psd = float(np.sqrt(np.mean(ref_p["second"][0] - ref_p["value"][0] ** 2)))
    if psd > 0:
        proxy = proxy / psd
    return proxy, ref_p["value"][0] / (psd if psd > 0 else 1.0)


def proxy_landing(setup: RmSetup, theta: Any, capacity: str) -> np.ndarray:
    """The proxy's landing rewards on the optimisation environments, in reference-sd units,
    as :func:`gold_gains` optimises them (flat, ``T·3·S²``)."""
    _check_setup(setup)
    cols = _capacity_columns(capacity)
    theta = check_real("theta", theta, low=-1e100, high=1e100)
    if theta.shape != (len(cols),):
        raise ValueError(f"theta must have shape ({len(cols)},) for capacity {capacity!r}; "
                         f"got {theta.shape}")
    return _proxy_units(setup, theta, cols)[0]


def _frontier_gold(kl: np.ndarray, proxy: np.ndarray, gold: np.ndarray,
                   K: np.ndarray) -> np.ndarray:
    """Gold at each budget along the proxy's Pareto frontier (per row = environment), the
    last frontier point beyond the largest KL (:mod:`rlscale.simulate._kl_frontier`)."""
    return np.stack([frontier_gold(kl[i], proxy[i], gold[i], K, beyond="last")
                     for i in range(kl.shape[0])])


def _bon_points(scores: np.ndarray, gold: np.ndarray, ns: np.ndarray):
    """Exact best-of-n on each environment's empirical pool: (KL, proxy, gold) per n
    (:func:`rlscale.simulate._chain_optimisers.bon_pool`, one environment at a time)."""
    paths = [bon_pool(scores[i], gold[i], ns) for i in range(scores.shape[0])]
    return tuple(np.stack([getattr(p, f) for p in paths]) for f in ("kl", "proxy", "gold"))


def gold_gains(setup: RmSetup, theta: np.ndarray, capacity: str, K: Any, *,
               optimisers: tuple[str, ...] = OPTIMISERS, betas: Any = None,
               ref_features: np.ndarray | None = None, bon_ns: Any = None,
               pg_betas: Any = None, pg_steps: int = 100, rng: Any = None,
               ) -> dict[str, np.ndarray]:
    """Gold gain (reference-sd units) per optimisation environment at every budget ``K``.

    Parameters
    ----------
    theta : ndarray
        Proxy weights on ``CAPACITIES[capacity]``.
    ref_features : ndarray, shape (T, N, d)
        Reference trajectories of the optimisation environments (for ``bon``).

    Returns
    -------
    dict optimiser -> ndarray (T, len(K)).

    Examples
    --------
    >>> s = make_rm_setup(3, 3, rng=0)
    >>> g = gold_gains(s, s.gold_weights, "linear", [0.1, 1.0, 10.0], optimisers=("soft_vi",))
    >>> bool(np.all(np.diff(g["soft_vi"], axis=1) > 0))   # the gold itself: more KL, more gain
    True
    """
    _check_setup(setup)
    cols = _capacity_columns(capacity)
    theta = check_real("theta", theta, low=-1e100, high=1e100)
    if theta.shape != (len(cols),):
        raise ValueError(f"theta must have shape ({len(cols)},) for capacity {capacity!r}; "
                         f"got {theta.shape}")
    K = np.atleast_1d(check_real("K", K, low=0.0))
    if K.ndim != 1 or K.size > 10**6:
        raise ValueError(f"K must be a 1-D grid of <= 1e6 budgets; got shape {K.shape}")
    if not isinstance(optimisers, tuple | list) or not all(
            isinstance(o, str) and o in OPTIMISERS for o in optimisers):
        raise ValueError(f"optimisers must be a tuple of {', '.join(OPTIMISERS)}; got "
                         f"{optimisers!r:.80}")
    pg_steps = check_positive_int("pg_steps", pg_steps, maximum=10**6)
    for name, value in (("ref_features", ref_features), ("bon_ns", bon_ns),
                        ("pg_betas", pg_betas)):
        if value is not None:  # checked even when its optimiser is not asked for (issue 22)
            check_real(name, value)
    gen = as_generator(rng)
    rw = setup.opt
    proxy, ref_proxy = _proxy_units(setup, theta, cols)
    gold = rw.landing_reward(setup.gold_weights)
    ref_gold = setup.ref_gold
    out = {}
    betas = np.geomspace(0.003, 30.0, 24) if betas is None else check_betas("betas", betas)

    def with_ref(kl, px, gd, rp, rg):
        T = kl.shape[0]
        return (np.column_stack([np.zeros(T), kl]), np.column_stack([rp, px]),
                np.column_stack([rg, gd]))

    if "soft_vi" in optimisers:
        so = soft_optimum(rw, proxy, gold, betas)
        pts = with_ref(so.kl.T, so.proxy.T, so.gold.T, ref_proxy, ref_gold)
        out["soft_vi"] = _frontier_gold(*pts, K) - ref_gold[:, None]
    if "bon" in optimisers:
        if ref_features is None:
            raise ValueError("ref_features (reference trajectories) are needed for 'bon'")
        ref_features = check_real("ref_features", ref_features, low=-1e100, high=1e100)
        d = rw.features.shape[-1]
        if ref_features.ndim != 3 or ref_features.shape[::2] != (rw.n_tasks, d) or \
                ref_features.shape[1] < 1:
            raise ValueError(f"ref_features must have shape ({rw.n_tasks}, N, {d}); got "
                             f"{ref_features.shape}")
        sc = ref_features[..., cols] @ theta
        gd = ref_features @ setup.gold_weights
        ns = np.geomspace(1.0, ref_features.shape[1], 48) if bon_ns is None else \
            np.atleast_1d(check_real("bon_ns", bon_ns, low=1.0, high=1e15))
        kl, px, gg = _bon_points(sc, gd, np.asarray(ns, float))
        # Gain against the pool's own mean (n = 1): the sampling error of the
        # reference level cancels.
        out["bon"] = _frontier_gold(kl, px, gg, K) - gg[:, :1]
    if "pg" in optimisers:
        pb = np.geomspace(0.02, 3.0, 8) if pg_betas is None else check_betas("pg_betas",
                                                                                 pg_betas)
        res = kl_policy_gradient(rw, proxy, gold, pb, steps=pg_steps, rng=gen)
        pts = with_ref(res.kl.T, res.proxy.T, res.gold.T, ref_proxy, ref_gold)
        out["pg"] = _frontier_gold(*pts, K) - ref_gold[:, None]
    return out
