r"""A combinatorial trajectory space with a gold reward a reward model must generalise to learn.

**Trajectories.**  ``τ = (a_0, …, a_{H−1})`` with ``a_h ∈ {0, …, A−1}``: ``N =
A^H`` candidates (``8^12 ≈ 6.9·10^10`` at the default size), far more than any
number of comparisons.  The reference policy is uniform and independent over
steps, so ``KL(π ‖ π_ref) <= H log A`` and a deterministic trajectory sits at
that bound.

**Gold reward** (in units of its own standard deviation under the reference):

.. math::  R(τ) = \sqrt{1 − ν}\; U(τ) + \sqrt{ν}\; V(τ),\qquad
           U(τ) = \sum_h u_h(a_h),\qquad V(τ) = \sum_{w=0}^{H−k} T_w(a_w, …, a_{w+k−1}),

an additive part ``U`` (``H·A`` table entries: learnable from few comparisons,
it generalises across all ``N`` trajectories) and an order-``k`` interaction
part ``V`` over the ``W = H − k + 1`` windows of ``k`` consecutive steps
(``W·A^k`` entries: a reward model must see a window's ``k``-gram to learn its
value; with ``k = H`` one window covers the whole trajectory and ``V`` is an
independent Gaussian value per candidate — the selection model of
:mod:`rlscale.theory.reward` embedded in a trajectory space).  The entries are
iid Gaussian, then projected onto the pure interactions of their order (``u_h``
centred; every one-axis mean of ``T_w`` zero: successive centring along each
axis, the ANOVA projection, Efron & Stein 1981), and scaled so that
``Var_ref(U) = Var_ref(V) = 1`` exactly.  Pure interactions on different sets
of steps are orthogonal under a product reference (average a term over a step
the other does not read: zero), so ``E_ref R = 0`` and ``Var_ref R = 1`` for
every draw, and gains are in reference-sd units like the trainer's.

**Dynamic programming.**  A reward of order ``k`` is a sum of per-step rewards
``r_h(s, a)`` of the state ``s`` = the last ``k − 1`` actions (``S = A^{k−1}``
states, ``s' = (s·A + a) mod S``; before step ``k − 1`` the state's missing
actions are padding no window reads).  :func:`step_tables` lays a reward out
as ``(H, S, A)`` tables; :func:`reference_moments` (mean and variance under the
reference) and :func:`chain_max` (the best trajectory, max-plus) are exact
backward passes; the optimisers are in :mod:`rlscale.simulate._chain_optimisers`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.simulate._gridworld import as_generator
from rlscale.theory._validation import check_positive_int, check_real, check_scalar

__all__ = ["BLOCKS", "ChainReward", "ChainWorld", "chain_max", "feature_index",
           "make_chain_world", "reference_moments", "reward_from_weights", "reward_values",
           "sample_reference", "step_tables"]

#: Feature blocks of a linear reward on one-hot trajectory features.
BLOCKS = ("additive", "windows")
#: Largest state table ``A^(k−1)`` and per-step table ``H·A^k`` the DPs accept.
MAX_STATES = 2**16
MAX_ENTRIES = 2**22


@dataclass(frozen=True, eq=False)
class ChainReward:
    """A reward on action sequences: per-step table plus order-``order`` window tables.

    Attributes
    ----------
    horizon, actions, order : int
        ``H``, ``A`` and the window length ``k`` (its DP state is the last ``k − 1`` actions).
    additive : ndarray, shape (H, A), or None
        ``u_h(a)``.
    windows : ndarray, shape (H − k + 1, A^k), or None
        ``T_w`` flattened big-endian: entry ``Σ_j a_{w+j} A^{k−1−j}``.
    """

    horizon: int
    actions: int
    order: int
    additive: np.ndarray | None
    windows: np.ndarray | None

    @property
    def n_windows(self) -> int:
        return self.horizon - self.order + 1


@dataclass(frozen=True, eq=False)
class ChainWorld:
    """A trajectory space and its gold reward (:func:`make_chain_world`).

    Attributes
    ----------
    horizon, actions, order : int
    interaction_share : float
        ``ν``: the share of the gold's reference variance in the order-``k`` interactions.
    gold : ChainReward
    """

    horizon: int
    actions: int
    order: int
    interaction_share: float
    gold: ChainReward

    @property
    def n_candidates(self) -> float:
        """``A^H`` (a float: it can exceed int64)."""
        return float(self.actions) ** self.horizon

    @property
    def max_kl(self) -> float:
        """``H log A``: the KL of a deterministic trajectory from the uniform reference."""
        return self.horizon * math.log(self.actions)

    def blocks(self) -> tuple[str, ...]:
        """The gold's own feature blocks (a reward model on them is well specified)."""
        nu = self.interaction_share
        return tuple(b for b, on in zip(BLOCKS, (nu < 1.0, nu > 0.0)) if on)

    def block_sizes(self, blocks: tuple[str, ...]) -> dict[str, int]:
        """One-hot features per block: ``H·A`` additive, ``W·A^k`` window features."""
        size = {"additive": self.horizon * self.actions,
                "windows": (self.horizon - self.order + 1) * self.actions ** self.order}
        return {b: size[b] for b in _check_blocks(blocks)}


def _pure_interaction(t: np.ndarray, axes: range) -> np.ndarray:
    """Project onto the pure interaction of ``axes``: every one-axis mean zero (ANOVA)."""
    for ax in axes:
        t = t - t.mean(axis=ax, keepdims=True)
    return t


def make_chain_world(horizon: int = 12, actions: int = 8, order: int = 3,
                     interaction_share: float = 0.5, rng: Any = None) -> ChainWorld:
    """Draw a gold reward on ``A^H`` trajectories (module docstring).

    Parameters
    ----------
    horizon, actions : int
        ``H >= 1`` steps, ``A >= 2`` actions.
    order : int
        ``k`` in ``2..H``, the interaction order (ignored, set to 1, when ``ν = 0``).
    interaction_share : float
        ``ν ∈ [0, 1]``.

    Examples
    --------
    >>> w = make_chain_world(6, 4, 3, 0.5, rng=0)
    >>> mean, var = reference_moments(w.gold)
    >>> round(mean, 12) + 0.0, round(var, 12)
    (0.0, 1.0)
    >>> w.block_sizes(w.blocks())
    {'additive': 24, 'windows': 256}
    """
    H = check_positive_int("horizon", horizon, maximum=64)
    A = check_positive_int("actions", actions, minimum=2, maximum=64)
    nu = check_scalar("interaction_share", interaction_share, low=0.0, high=1.0)
    k = 1 if nu == 0.0 else check_positive_int("order", order, minimum=2, maximum=H)
    if A ** max(k - 1, 0) > MAX_STATES or (H - k + 1) * A**k > MAX_ENTRIES:
        raise ValueError(f"actions^(order-1) must be <= {MAX_STATES} and the window tables "
                         f"<= {MAX_ENTRIES} entries; got actions={A}, order={k}, horizon={H}")
    gen = as_generator(rng)
    add = win = None
    if nu < 1.0:
        u = _pure_interaction(gen.standard_normal((H, A)), range(1, 2))
        add = u * math.sqrt((1.0 - nu) / float(np.sum(np.mean(u * u, axis=1))))
    if nu > 0.0:
        W = H - k + 1
        t = _pure_interaction(gen.standard_normal((W,) + (A,) * k), range(1, k + 1))
        t = t.reshape(W, A**k)
        win = t * math.sqrt(nu / float(np.sum(np.mean(t * t, axis=1))))
    return ChainWorld(H, A, k, nu, ChainReward(H, A, k, add, win))


def _check_blocks(blocks: Any) -> tuple[str, ...]:
    if not isinstance(blocks, tuple | list) or not blocks or len(set(blocks)) != len(blocks) \
            or not all(isinstance(b, str) and b in BLOCKS for b in blocks):
        raise ValueError(f"blocks must be a non-empty tuple of distinct names from "
                         f"{', '.join(BLOCKS)}; got {blocks!r:.80}")
    return tuple(b for b in BLOCKS if b in blocks)


def check_chain_world(world: Any) -> ChainWorld:
    if not isinstance(world, ChainWorld):
        raise TypeError(f"world must be a ChainWorld; got world={world!r:.80}")
    return world


def sample_reference(world: ChainWorld, n: int, rng: Any) -> np.ndarray:
    """``n`` trajectories of the uniform reference: ``(n, H)`` action indices."""
    check_chain_world(world)
    n = check_positive_int("n", n, maximum=10**8 // world.horizon)
    return as_generator(rng).integers(0, world.actions, size=(n, world.horizon))


def _check_actions(world_or_reward: Any, actions: Any) -> np.ndarray:
    a = np.asarray(actions)
    H, A = world_or_reward.horizon, world_or_reward.actions
    if a.ndim != 2 or a.shape[1] != H or not np.issubdtype(a.dtype, np.integer) or (
            a.size and (a.min() < 0 or a.max() >= A)):
        raise ValueError(f"actions must be an integer array of shape (n, {H}) with values in "
                         f"0..{A - 1}; got shape {a.shape}, dtype {a.dtype}")
    return a.astype(np.intp, copy=False)


def _window_codes(a: np.ndarray, k: int, A: int) -> np.ndarray:
    """``(n, W)`` big-endian codes of the ``k``-grams at every window."""
    W = a.shape[1] - k + 1
    code = np.zeros((a.shape[0], W), dtype=np.intp)
    for j in range(k):
        code = code * A + a[:, j:j + W]
    return code


def feature_index(world: ChainWorld, actions: Any, blocks: tuple[str, ...]) -> np.ndarray:
    """Indices of the one-hot features each trajectory switches on: ``(n, F)``.

    The feature vector is the blocks in :data:`BLOCKS` order: additive ``h·A + a_h``
    (``F += H``), then windows ``offset + w·A^k + code_w`` (``F += W``); a linear
    reward ``θ`` on them is ``θ[index].sum(axis=1)`` (:func:`reward_from_weights`).
    """
    check_chain_world(world)
    blocks = _check_blocks(blocks)
    a = _check_actions(world, actions)
    H, A, k = world.horizon, world.actions, world.order
    parts, offset = [], 0
    if "additive" in blocks:
        parts.append(np.arange(H) * A + a)
        offset = H * A
    if "windows" in blocks:
        if k < 2:
            raise ValueError("a world without interactions (interaction_share = 0) has no "
                             "window features")
        W = H - k + 1
        parts.append(offset + np.arange(W) * A**k + _window_codes(a, k, A))
    return np.concatenate(parts, axis=1)


def reward_from_weights(world: ChainWorld, theta: Any, blocks: tuple[str, ...]) -> ChainReward:
    """The :class:`ChainReward` of a linear reward ``θ`` on ``blocks``' one-hot features."""
    check_chain_world(world)
    blocks = _check_blocks(blocks)
    sizes = world.block_sizes(blocks)
    th = check_real("theta", theta, low=-1e100, high=1e100)
    if th.shape != (sum(sizes.values()),):
        raise ValueError(f"theta must have shape ({sum(sizes.values())},) for blocks "
                         f"{blocks}; got {th.shape}")
    H, A, k = world.horizon, world.actions, world.order
    add = th[:sizes["additive"]].reshape(H, A) if "additive" in blocks else None
    win = th[-sizes["windows"]:].reshape(H - k + 1, A**k) if "windows" in blocks else None
    return ChainReward(H, A, k, add, win)


def reward_values(reward: ChainReward, actions: Any) -> np.ndarray:
    """``R(τ)`` for each trajectory: ``(n,)``."""
    _check_reward(reward)
    a = _check_actions(reward, actions)
    out = np.zeros(a.shape[0])
    if reward.additive is not None:
        out += reward.additive[np.arange(reward.horizon), a].sum(axis=1)
    if reward.windows is not None:
        codes = _window_codes(a, reward.order, reward.actions)
        out += reward.windows[np.arange(reward.n_windows), codes].sum(axis=1)
    return out


def _check_reward(reward: Any) -> ChainReward:
    if not isinstance(reward, ChainReward):
        raise TypeError(f"reward must be a ChainReward; got {reward!r:.80}")
    return reward


def step_tables(reward: ChainReward, order: int | None = None) -> np.ndarray:
    """``r_h(s, a)`` as an ``(H, S, A)`` array, ``S = A^(order − 1)`` (default: the reward's).

    ``order`` may exceed the reward's own (several rewards evaluated on one state
    space); an additive-only reward is the same in every state.
    """
    _check_reward(reward)
    H, A = reward.horizon, reward.actions
    k = reward.order if order is None else order
    if reward.windows is not None and k != reward.order:
        raise ValueError(f"a reward with windows of order {reward.order} needs order "
                         f"{reward.order}; got {k}")
    S = A ** (k - 1)
    r = np.zeros((H, S, A))
    if reward.additive is not None:
        r += reward.additive[:, None, :]
    if reward.windows is not None:
        r[k - 1:] += reward.windows.reshape(H - k + 1, S, A)
    return r


def next_state(order: int, actions: int) -> np.ndarray:
    """``(S, A)`` table of ``s' = (s·A + a) mod S`` for the last-``(k−1)``-actions state."""
    S = actions ** (order - 1)
    return (np.arange(S * actions) % S).reshape(S, actions)


def reference_moments(reward: ChainReward) -> tuple[float, float]:
    """Exact mean and variance of ``R(τ)`` under the uniform reference.

    Backward pass of the first two moments of the reward to go:
    ``m1_h(s) = E_a[r + m1_{h+1}(s')]``, ``m2_h(s) = E_a[r² + 2r·m1_{h+1}(s') + m2_{h+1}(s')]``.
    """
    r = step_tables(reward)
    H, S, A = r.shape
    nxt = next_state(reward.order, A)
    m1, m2 = np.zeros(S), np.zeros(S)
    for h in range(H - 1, -1, -1):
        f1, f2 = m1[nxt], m2[nxt]
        m1, m2 = np.mean(r[h] + f1, axis=1), np.mean(r[h] ** 2 + 2.0 * r[h] * f1 + f2, axis=1)
    return float(m1[0]), float(max(m2[0] - m1[0] ** 2, 0.0))


def chain_max(reward: ChainReward, order: int | None = None) -> tuple[float, np.ndarray]:
    """The largest ``R(τ)`` over all ``A^H`` trajectories and one maximiser ``(H,)``
    (max-plus backward pass, forward argmax; ties to the lowest action)."""
    r = step_tables(reward, order)
    H, S, A = r.shape
    nxt = next_state(reward.order if order is None else order, A)
    V = np.zeros((H + 1, S))
    for h in range(H - 1, -1, -1):
        V[h] = np.max(r[h] + V[h + 1][nxt], axis=1)
    path, s = np.empty(H, dtype=np.intp), 0
    for h in range(H):
        a = int(np.argmax(r[h][s] + V[h + 1][nxt[s]]))
        path[h], s = a, int(nxt[s, a])
    return float(V[0][0]), path
