"""A policy with a shared backbone: inputs → backbone → action head (+ forecast heads).

The tabular-feature policies of :mod:`rlscale.simulate._policies` map features
straight to logits, so nothing but the policy-gradient loss shapes what they
compute.  A :class:`BackbonePolicy` separates the two:

* **backbone** ``h = σ(xᵀW₁ + b₁)`` with ``H`` hidden units, ``σ = tanh``
  (``policy="backbone"``) or the identity (``policy="linear_backbone"``, a
  rank-``H`` linear projection);
* **action head** ``z = hᵀW₂ + b₂``, ``π(·|x) = softmax(z)`` — the only part
  used to act;
* optional **forecast heads** ``u_j = hᵀV_j + c_j`` (``j = 1..h``), read by
  auxiliary losses such as CoPE's (:mod:`rlscale.simulate._cope`) and never
  when acting, so they add no cost at inference.

Inputs come in two forms.  A dense feature matrix ``x`` (rows × ``F``): the
gridworld's tabulated state features.  Or a :class:`Window` — the agent's
context: for each step, the ids of the last ``c`` observations (``-1`` before
the episode began) into a table of observation features.  The first layer of
a window is ``Σ_{j<c} φ(o_{t−j})ᵀ W₁[j]`` (``W₁`` holds one ``F × H`` block per
slot, i.e. the stacked window ``[φ(o_t), …, φ(o_{t−c+1})]`` times ``W₁``),
computed as a sum of ``c`` rows of the per-slot embedding tables
``E_j = Φ W₁[j]``: the compute per step grows linearly with the context ``c``,
and the gradient ``∂J/∂W₁[j] = Φᵀ (P_jᵀ ∂J/∂pre)`` (``P_j`` the one-hot
selection of slot ``j``'s ids) costs one sparse product per update.

Initialisation: ``W₁`` Glorot-normal from ``rng`` (variance ``2/(d_in + H)``),
everything else zero, so the initial policy is uniform (the trainer's KL
reference) and the forecast heads start with no opinion.  Gradients are
analytic (``tanh' = 1 − h²``); the tests check them against finite
differences.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlscale.theory._validation import check_positive_int

__all__ = ["BACKBONES", "MAX_CONTEXT", "BackbonePolicy", "Window"]

#: Backbone kinds: the policy names the trainer accepts and their nonlinearity.
BACKBONES = ("backbone", "linear_backbone")
#: Longest context window (observations kept per step).
MAX_CONTEXT = 4096


@dataclass(frozen=True, eq=False)
class Window:
    """The context of each step: ids of its last ``c`` observations in ``table``.

    Attributes
    ----------
    ids : ndarray, shape (n, c), int
        ``ids[i, j]`` is the row of ``table`` observed ``j`` steps before step
        ``i`` (``j = 0``: the current observation); ``-1`` for slots before the
        episode began (they contribute nothing).
    table : ndarray, shape (n_obs, F)
        Observation features.
    """

    ids: np.ndarray
    table: np.ndarray
    _select: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        ids = np.asarray(self.ids)
        if ids.ndim != 2 or self.table.ndim != 2:
            raise ValueError(f"a Window needs ids of shape (n, c) and a table of shape (n_obs, "
                             f"F); got {ids.shape} and {self.table.shape}")
        object.__setattr__(self, "ids", ids)

    @property
    def context(self) -> int:
        return int(self.ids.shape[1])

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def selection(self) -> Any:
        """Sparse one-hot ``(n, c·n_obs)``: row ``i`` picks ``(j, ids[i, j])`` for each slot.

        Built once and cached (the update's epochs reuse it).
        """
        if self._select is None:
            from scipy.sparse import csr_matrix

            n, c = self.ids.shape
            n_obs = self.table.shape[0]
            valid = self.ids >= 0
            cols = (np.arange(c)[None, :] * n_obs + self.ids)[valid]
            indptr = np.concatenate([[0], np.cumsum(valid.sum(axis=1))])
            data = np.ones(cols.size)
            object.__setattr__(self, "_select",
                               csr_matrix((data, cols, indptr), shape=(n, c * n_obs)))
        return self._select


class BackbonePolicy:
    """Backbone (tanh MLP or linear) → action head, with optional forecast heads.

    Parameters
    ----------
    rng : Generator
        Draws ``W₁`` (Glorot normal).
    n_features : int
        Features per observation ``F``.
    hidden : int
        Backbone width ``H``.
    context : int
        Observations per input (``1`` for a dense feature matrix).
    heads : int
        Number of forecast heads (0: none).
    linear : bool
        Identity instead of ``tanh`` in the backbone.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> pol = BackbonePolicy(rng, n_features=3, hidden=4, heads=2)
    >>> z, _ = pol.logits(np.ones((5, 3)))
    >>> z.shape, float(np.abs(z).max())      # starts uniform
    ((5, 4), 0.0)
    >>> sorted(pol.params)
    ['V', 'W1', 'W2', 'b1', 'b2', 'c']
    """

    def __init__(self, rng: np.random.Generator, n_features: int, hidden: int = 32,
                 context: int = 1, heads: int = 0, linear: bool = False) -> None:
        self.n_features = check_positive_int("n_features", n_features, maximum=10**6)
        self.hidden = check_positive_int("hidden", hidden, maximum=10**5)
        self.context = check_positive_int("context", context, maximum=MAX_CONTEXT)
        self.heads = check_positive_int("heads", heads, minimum=0, maximum=1000)
        self.linear = bool(linear)
        self.kind = BACKBONES[1] if self.linear else BACKBONES[0]
        d_in = self.n_features * self.context
        scale = np.sqrt(2.0 / (d_in + self.hidden))
        self.params: dict[str, np.ndarray] = {
            "W1": rng.normal(0.0, scale, (d_in, self.hidden)),
            "b1": np.zeros(self.hidden),
            "W2": np.zeros((self.hidden, 4)),
            "b2": np.zeros(4),
        }
        if self.heads:
            self.params["V"] = np.zeros((self.heads, self.hidden, 4))
            self.params["c"] = np.zeros((self.heads, 4))

    # ------------------------------------------------------------------ first layer
    def _check_input(self, x: Any) -> None:
        if isinstance(x, Window):
            if x.context != self.context or x.table.shape[1] != self.n_features:
                raise ValueError(f"the policy reads windows of {self.context} observations of "
                                 f"{self.n_features} features; got a window of {x.context} "
                                 f"observations of {x.table.shape[1]}")
        elif x.ndim != 2 or x.shape[1] != self.n_features * self.context:
            raise ValueError(f"the policy reads rows of {self.n_features * self.context} "
                             f"features; got shape {x.shape}")

    def embeddings(self, table: np.ndarray) -> np.ndarray:
        """Per-slot embedding tables ``E_j = Φ W₁[j]``, shape ``(c, n_obs, H)``."""
        W1 = self.params["W1"].reshape(self.context, self.n_features, self.hidden)
        return np.matmul(table[None], W1)

    def _pre(self, x: Any) -> np.ndarray:
        if isinstance(x, Window):
            flat = self.embeddings(x.table).reshape(-1, self.hidden)
            return np.asarray(x.selection() @ flat) + self.params["b1"]
        return x @ self.params["W1"] + self.params["b1"]

    # ------------------------------------------------------------------ forward
    def represent(self, x: Any) -> tuple[np.ndarray, Any]:
        """The backbone's output ``h`` (rows × ``H``) and the cache for :meth:`backward`."""
        self._check_input(x)
        pre = self._pre(x)
        h = pre if self.linear else np.tanh(pre)
        return h, (x, h)

    def head(self, h: np.ndarray) -> np.ndarray:
        """Action logits ``z = hᵀW₂ + b₂``."""
        return h @ self.params["W2"] + self.params["b2"]

    def forecast(self, h: np.ndarray) -> np.ndarray:
        """Forecast-head logits ``u_j = hᵀV_j + c_j``, shape ``(rows, heads, 4)``."""
        if not self.heads:
            raise ValueError("this policy has no forecast heads (built with heads=0)")
        # All heads in one product: V as (H, heads·4).
        V = self.params["V"].transpose(1, 0, 2).reshape(self.hidden, -1)
        return (h @ V).reshape(h.shape[0], self.heads, 4) + self.params["c"]

    def logits(self, x: Any) -> tuple[np.ndarray, Any]:
        h, cache = self.represent(x)
        return self.head(h), cache

    # ------------------------------------------------------------------ backward
    def backward(self, cache: Any, dlogits: np.ndarray, dforecast: np.ndarray | None = None
                 ) -> dict[str, np.ndarray]:
        """Gradients of ``Σ dlogits·z (+ Σ dforecast·u)`` with respect to every parameter.

        ``dforecast`` (``(rows, heads, 4)``, optional) is the gradient with
        respect to the forecast logits; without it the heads get no gradient
        (and are not returned, so an optimiser leaves them alone).
        """
        x, h = cache
        p = self.params
        grads = {"W2": h.T @ dlogits, "b2": dlogits.sum(axis=0)}
        dh = dlogits @ p["W2"].T
        if dforecast is not None:
            du = dforecast.reshape(h.shape[0], -1)  # (rows, heads·4)
            grads["V"] = (h.T @ du).reshape(self.hidden, self.heads, 4).transpose(1, 0, 2)
            grads["c"] = du.sum(axis=0).reshape(self.heads, 4)
            dh = dh + du @ p["V"].transpose(1, 0, 2).reshape(self.hidden, -1).T
        dpre = dh if self.linear else dh * (1.0 - h * h)
        grads["b1"] = dpre.sum(axis=0)
        if isinstance(x, Window):
            per_slot = np.asarray(x.selection().T @ dpre).reshape(
                self.context, -1, self.hidden)  # (c, n_obs, H)
            grads["W1"] = np.matmul(x.table.T[None], per_slot).reshape(-1, self.hidden)
        else:
            grads["W1"] = x.T @ dpre
        return grads
