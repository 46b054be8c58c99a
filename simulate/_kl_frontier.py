"""Gold at a KL budget along the proxy's Pareto frontier (shared by the reward-model experiments).

An optimiser yields points ``(KL, proxy, gold)`` (a ``β`` grid, pool sizes, …).
It sees only the proxy: the points that raise the proxy above every point of
smaller KL are its Pareto frontier, and ``gold(K)`` is interpolated linearly in
KL between them, which a mixture of the two neighbouring policies (one drawn
per episode) achieves with KL at most the interpolated value (KL is convex).
Nothing is chosen by the gold reward.
"""

from __future__ import annotations

import numpy as np

__all__ = ["frontier_gold"]


def frontier_gold(kl: np.ndarray, proxy: np.ndarray, gold: np.ndarray, K: np.ndarray, *,
                  beyond: str = "nan") -> np.ndarray:
    """Gold at each budget ``K`` along the proxy's frontier of the points ``(kl, proxy, gold)``.

    ``beyond``: what a budget past the largest KL reached gets — ``"nan"`` (not
    reached) or ``"last"`` (the last frontier point: a budget need not be spent).

    Examples
    --------
    >>> kl, proxy = np.array([0.0, 1.0, 2.0]), np.array([0.0, 1.0, 0.5])
    >>> gold = np.array([0.0, 2.0, 9.0])
    >>> frontier_gold(kl, proxy, gold, np.array([0.5, 1.0, 3.0])).tolist()
    [1.0, 2.0, nan]
    >>> frontier_gold(kl, proxy, gold, np.array([3.0]), beyond="last").tolist()
    [2.0]
    """
    if beyond not in ("nan", "last"):
        raise ValueError(f"beyond must be 'nan' or 'last'; got {beyond!r:.80}")
    order = np.argsort(kl, kind="stable")
    k, p, g = kl[order], proxy[order], gold[order]
    keep = p > np.maximum.accumulate(np.concatenate([[-np.inf], p[:-1]])) + 1e-12
    out = np.interp(K, k[keep], g[keep])
    if beyond == "nan":
        out[k[keep][-1] * (1.0 + 1e-9) + 1e-12 < K] = np.nan
    return out
