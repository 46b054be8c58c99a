"""Policies shared across environments: observation features, linear softmax, MLP, Adam.

A policy never sees an environment's identity, only features of its
observation, so what it learns transfers (or fails to transfer) to unseen
environments.  Features of a state (task, stage, cell), ``F = 27`` in all:

* local view (16): for each of the 8 neighbours, "is a hole" and "is a wall
  or off the grid";
* goal direction (6): the current target (key, door or goal, by stage) is
  left / right / above / below, and the signed offsets ``dx/S``, ``dy/S``;
* subgoal state (3): one-hot stage (seeking key, door, goal);
* dynamics (1): the environment is slippery;
* bias (1).

Because the policy is fixed during a rollout, logits are computed once per
update for *every* state of the tasks in play (a table of ``tasks·3·S²``
rows) instead of per visit; gradients flow back through the same table
(``∂J/∂θ = Σ_rows φ_rowᵀ · ∂J/∂logits_row``), which is exact and costs
nothing per trajectory.

Gradients are analytic; :class:`Adam` follows Kingma & Ba 2015
(arXiv 1412.6980, Algorithm 1) as gradient *ascent*.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlscale.simulate._backbone import BACKBONES, BackbonePolicy
from rlscale.simulate._gridworld import HOLE, N_STAGES, WALL, GridWorld

__all__ = ["N_FEATURES", "Adam", "LinearPolicy", "MLPPolicy", "make_policy", "state_features"]

N_FEATURES = 27
_NEIGHBOURS = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0)]


def state_features(world: GridWorld, task_ids: Any = None) -> np.ndarray:
    """Feature table of shape ``(len(task_ids), 3, S², 27)`` (float64).

    Examples
    --------
    >>> from rlscale.simulate import frozen_lake
    >>> phi = state_features(frozen_lake("4x4"))
    >>> phi.shape
    (1, 3, 16, 27)
    >>> phi[0, 2, 0, 16:22].tolist()  # from the start the goal is right and below
    [0.0, 1.0, 0.0, 1.0, 0.75, 0.75]
    """
    ids = np.arange(world.n_tasks) if task_ids is None else np.asarray(task_ids, np.int64)
    S = world.size
    E = world.n_environments
    # Static local view per environment, from a wall-padded copy of the layout.
    padded = np.full((E, S + 2, S + 2), WALL, np.int8)
    padded[:, 1:-1, 1:-1] = world.tiles
    view = np.empty((E, S, S, 16))
    for j, (dr, dc) in enumerate(_NEIGHBOURS):
        shifted = padded[:, 1 + dr:S + 1 + dr, 1 + dc:S + 1 + dc]
        view[..., 2 * j] = shifted == HOLE
        view[..., 2 * j + 1] = shifted == WALL
    env = world.task_env[ids]
    n = ids.size
    out = np.zeros((n, N_STAGES, S * S, N_FEATURES))
    out[..., :16] = view.reshape(E, 1, S * S, 16)[env]
    rows, cols = np.divmod(np.arange(S * S), S)
    tgt = world.targets[ids]  # (n, 3)
    trow, tcol = np.divmod(np.maximum(tgt, 0), S)
    dx = (tcol[:, :, None] - cols[None, None, :]) / S  # (n, 3, S²)
    dy = (trow[:, :, None] - rows[None, None, :]) / S
    out[..., 16] = dx < 0
    out[..., 17] = dx > 0
    out[..., 18] = dy < 0
    out[..., 19] = dy > 0
    out[..., 20] = dx
    out[..., 21] = dy
    out[..., 22:25] = np.eye(N_STAGES)[None, :, None, :]
    out[..., 25] = world.slippery[env][:, None, None]
    out[..., 26] = 1.0
    unused = (tgt < 0)[:, :, None]  # stages a task never visits: zero direction
    out[..., 16:22] = np.where(unused[..., None], 0.0, out[..., 16:22])
    return out


_CHUNK = 1024


def _matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` in blocks of rows.

    Tall-skinny products are memory-bound; OpenBLAS splits large ones over
    threads, which on a busy machine is many times slower than one core.
    Blocks below its threading threshold keep each product on one core.
    """
    if a.shape[0] <= _CHUNK:
        return a @ b
    out = np.empty((a.shape[0], b.shape[1]))
    for i in range(0, a.shape[0], _CHUNK):
        np.matmul(a[i:i + _CHUNK], b, out=out[i:i + _CHUNK])
    return out


def _tmatmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a.T @ b`` accumulated over blocks of rows (see :func:`_matmul`)."""
    if a.shape[0] <= _CHUNK:
        return a.T @ b
    out = np.zeros((a.shape[1], b.shape[1]))
    for i in range(0, a.shape[0], _CHUNK):
        out += a[i:i + _CHUNK].T @ b[i:i + _CHUNK]
    return out


class LinearPolicy:
    """Linear softmax policy ``π(a|s) = softmax(φ(s)ᵀ W)_a``; starts uniform (``W = 0``)."""

    kind = "linear"

    def __init__(self, rng: np.random.Generator | None = None) -> None:
        self.params = {"W": np.zeros((N_FEATURES, 4))}

    def logits(self, phi: np.ndarray) -> tuple[np.ndarray, Any]:
        return _matmul(phi, self.params["W"]), phi

    def backward(self, cache: Any, dlogits: np.ndarray) -> dict[str, np.ndarray]:
        return {"W": _tmatmul(cache, dlogits)}


class MLPPolicy:
    """One hidden ``tanh`` layer: ``softmax(W2ᵀ tanh(W1ᵀ φ + b1) + b2)``.

    ``W1`` is Glorot-initialised from ``rng``; the output layer starts at zero
    so the initial policy is uniform, the same reference as the linear one.
    """

    kind = "mlp"

    def __init__(self, rng: np.random.Generator, hidden: int = 32) -> None:
        scale = np.sqrt(2.0 / (N_FEATURES + hidden))
        self.params = {
            "W1": rng.normal(0.0, scale, (N_FEATURES, hidden)),
            "b1": np.zeros(hidden),
            "W2": np.zeros((hidden, 4)),
            "b2": np.zeros(4),
        }

    def logits(self, phi: np.ndarray) -> tuple[np.ndarray, Any]:
        p = self.params
        h = np.tanh(_matmul(phi, p["W1"]) + p["b1"])
        return _matmul(h, p["W2"]) + p["b2"], (phi, h)

    def backward(self, cache: Any, dlogits: np.ndarray) -> dict[str, np.ndarray]:
        phi, h = cache
        p = self.params
        dh = _matmul(dlogits, p["W2"].T) * (1.0 - h * h)
        return {"W1": _tmatmul(phi, dh), "b1": dh.sum(axis=0), "W2": _tmatmul(h, dlogits),
                "b2": dlogits.sum(axis=0)}


def make_policy(kind: str, rng: np.random.Generator, hidden: int = 32, *,
                n_features: int = N_FEATURES, context: int = 1, heads: int = 0):
    """``"linear"`` or ``"mlp"`` on the 27 gridworld features, or a backbone policy
    (``"backbone"``, ``"linear_backbone"``: :mod:`rlscale.simulate._backbone`) on
    ``context`` observations of ``n_features`` features with ``heads`` forecast heads."""
    if kind in BACKBONES:
        return BackbonePolicy(rng, n_features, hidden, context=context, heads=heads,
                              linear=kind == "linear_backbone")
    if kind in ("linear", "mlp") and (n_features != N_FEATURES or context != 1 or heads):
        raise ValueError(f"policy {kind!r} reads the {N_FEATURES} gridworld state features "
                         "only (no context window, no forecast heads): use policy 'backbone' "
                         "or 'linear_backbone'")
    if kind == "linear":
        return LinearPolicy(rng)
    if kind == "mlp":
        return MLPPolicy(rng, hidden)
    raise ValueError(f"policy must be one of linear, mlp, {', '.join(BACKBONES)}; "
                     f"got policy={kind!r}")


def log_probs(policy, phi: np.ndarray) -> tuple[np.ndarray, Any]:
    """Log-probabilities of the 4 actions for each feature row, and the cache."""
    z, cache = policy.logits(phi)
    z = z - np.maximum(np.maximum(z[:, 0:1], z[:, 1:2]), np.maximum(z[:, 2:3], z[:, 3:4]))
    return z - np.log(sum4(np.exp(z))), cache


def sum4(x: np.ndarray) -> np.ndarray:
    """Row sums of an ``(n, 4)`` array, shape ``(n, 1)``.

    numpy's reductions over a short last axis are several times slower than
    adding the four columns.
    """
    return x[:, 0:1] + x[:, 1:2] + x[:, 2:3] + x[:, 3:4]


class Adam:
    """Adam for gradient ascent (Kingma & Ba 2015, Algorithm 1; β1 0.9, β2 0.999, ε 1e-8)."""

    def __init__(self, params: dict[str, np.ndarray], lr: float, b1: float = 0.9,
                 b2: float = 0.999, eps: float = 1e-8) -> None:
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.t = 0

    def ascend(self, params: dict[str, np.ndarray], grads: dict[str, np.ndarray]) -> None:
        self.t += 1
        c1 = 1.0 - self.b1**self.t
        c2 = 1.0 - self.b2**self.t
        for k, g in grads.items():
            self.m[k] = self.b1 * self.m[k] + (1 - self.b1) * g
            self.v[k] = self.b2 * self.v[k] + (1 - self.b2) * g * g
            params[k] += self.lr * (self.m[k] / c1) / (np.sqrt(self.v[k] / c2) + self.eps)
