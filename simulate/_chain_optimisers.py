r"""Optimisers of a proxy reward on a chain world, evaluated exactly.

Each returns, per point of its path (a KL penalty ``β``, a pool size ``n``), the
exact trajectory KL to the uniform reference and the expected proxy and gold
rewards of the policy it found; the gold is never seen by the optimiser.

**KL-regularised optimum** (:func:`soft_chain`).  ``π_β(τ) ∝ π_ref(τ)
e^{R̂(τ)/β}``, the maximiser of ``E_π R̂ − β KL(π ‖ π_ref)`` (Gibbs' variational
principle; the RLHF objective's optimum, Korbak et al. 2022).  With the order-``k``
state it is Markov: a backward pass of soft values
``V_h(s) = β log E_a exp((r_h(s,a) + V_{h+1}(s'))/β)`` and a forward pass of
the filtered masses ``α_{h+1}(s') = Σ_{(s,a)→s'} α_h(s)·e^{r_h(s,a)/β}/A``, in
log space; the step marginals are ``μ_h(s, a) = α_h(s) e^{(r_h(s,a) +
V_{h+1}(s'))/β} / (A e^{V_0/β})`` (the forward–backward algorithm; Rabiner
1989) and ``KL = Σ_h E_μ[(Q_h − V_h)/β]``.  The ``β → 0`` end (the proxy's
argmax, KL ``H log A``) is the max-plus pass of :func:`chain_max`.

**Best-of-n** (:func:`bon_pool`).  On a pool of ``P`` reference trajectories
with exact proxy and gold values: sorted by proxy, ties grouped, group ``j`` is
chosen with probability ``F_j^n − F_{j−1}^n``, KL exact on the pool's empirical
law (``log n − (n−1)/n`` without ties, at most ``log P``).

**Policy gradient** (:func:`pg_chain`).  Tabular softmax policies on the
order-``k`` state, ``π_h(a|s) ∝ e^{θ[h,s,a]}``, from the reference (``θ = 0``),
ascending ``E_π R̂ − β KL`` with the RLHF recipe of
:func:`rlscale.simulate._mdp_policy_gradient.kl_policy_gradient`: the sampled log
ratio enters the sequence reward and the REINFORCE leave-one-out advantage
(RLOO; Ahmadian et al. 2024) over a batch of ``n`` trajectories weighs
``∇ log π = e_a − π(·|s)``; step ``lr/max(1, β)``.  The trained policies are
then evaluated exactly (:func:`evaluate_policy`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import logsumexp

from rlscale.simulate._chain_world import ChainReward, chain_max, next_state, step_tables
from rlscale.simulate._gridworld import as_generator
from rlscale.simulate._soft_vi import check_betas
from rlscale.theory._validation import check_positive_int, check_real, check_scalar

__all__ = ["ChainPath", "bon_pool", "evaluate_policy", "pg_chain", "soft_chain"]

#: Most sampled actions one policy-gradient call may ask for (steps·β·n·H).
MAX_PG_WORK = 10**9


@dataclass(frozen=True)
class ChainPath:
    """An optimiser's path: exact KL, expected proxy and gold per point (``(P,)`` each)."""

    kl: np.ndarray
    proxy: np.ndarray
    gold: np.ndarray


def _pair(proxy: ChainReward, gold: ChainReward) -> tuple[np.ndarray, np.ndarray, int]:
    for name, r in (("proxy", proxy), ("gold", gold)):
        if not isinstance(r, ChainReward):
            raise TypeError(f"{name} must be a ChainReward; got {r!r:.80}")
    if (proxy.horizon, proxy.actions) != (gold.horizon, gold.actions):
        raise ValueError(f"proxy and gold must share horizon and actions; got "
                         f"{(proxy.horizon, proxy.actions)} and {(gold.horizon, gold.actions)}")
    k = max(r.order if r.windows is not None else 1 for r in (proxy, gold))
    if proxy.windows is not None and gold.windows is not None and proxy.order != gold.order:
        raise ValueError(f"proxy and gold windows must have one order; got {proxy.order} and "
                         f"{gold.order}")
    return step_tables(proxy, k), step_tables(gold, k), k


def soft_chain(proxy: ChainReward, gold: ChainReward, betas: Any, *,
               argmax: bool = True) -> ChainPath:
    """The exact KL-regularised optimum of ``proxy`` for each ``β``, evaluated exactly.

    ``argmax``: append the ``β → 0`` point (the proxy's best trajectory).

    Examples
    --------
    >>> from rlscale.simulate._chain_world import make_chain_world
    >>> w = make_chain_world(4, 3, 2, 0.5, rng=0)
    >>> p = soft_chain(w.gold, w.gold, [100.0, 1.0, 0.01])
    >>> bool(np.all(np.diff(p.kl) > 0)), bool(np.all(np.diff(p.gold) > 0))
    (True, True)
    >>> round(float(p.kl[-1]), 9) == round(4 * np.log(3), 9)  # the argmax: deterministic
    True
    """
    r, g, k = _pair(proxy, gold)
    b = check_betas("betas", betas)
    H, S, A = r.shape
    nxt = next_state(k, A).reshape(-1)
    B = b.size
    inv = (1.0 / b)[:, None, None]
    logA = math.log(A)
    V = np.zeros((H + 1, B, S))
    for h in range(H - 1, -1, -1):
        Q = r[h][None] + V[h + 1][:, nxt].reshape(B, S, A)
        V[h] = b[:, None] * (logsumexp(Q * inv, axis=2) - logA)
    log_alpha = np.full((B, S), -np.inf)
    log_alpha[:, 0] = 0.0
    logZ = V[0][:, 0] / b
    kl, px, gd = np.zeros(B), np.zeros(B), np.zeros(B)
    with np.errstate(invalid="ignore"):  # -inf masses of unreachable states
        for h in range(H):
            Q = r[h][None] + V[h + 1][:, nxt].reshape(B, S, A)
            log_mu = log_alpha[:, :, None] - logA + Q * inv - logZ[:, None, None]
            mu = np.exp(log_mu)
            px += np.einsum("bsa,sa->b", mu, r[h])
            gd += np.einsum("bsa,sa->b", mu, g[h])
            lp = (Q - V[h][:, :, None]) * inv  # log(π/π_ref), finite everywhere
            kl += np.einsum("bsa,bsa->b", mu, lp)
            step = log_alpha[:, :, None] - logA + r[h][None] * inv
            # (s, a) -> s' = (s·A + a) mod S: flat code c = s·A + a, s' = c mod S, so the
            # preimage of s' is the column s' of the (A, S) reshape of the flat codes.
            log_alpha = logsumexp(step.reshape(B, A, S), axis=1)
    kl = np.maximum(kl, 0.0)
    if argmax:
        best, path = chain_max(proxy, k)
        gold_best = _path_value(g, path, k, A)
        kl = np.append(kl, H * logA)
        px, gd = np.append(px, best), np.append(gd, gold_best)
    return ChainPath(kl, px, gd)


def _path_value(tables: np.ndarray, path: np.ndarray, k: int, A: int) -> float:
    S = A ** (k - 1)
    s, total = 0, 0.0
    for h, a in enumerate(path):
        total += tables[h, s, a]
        s = (s * A + int(a)) % S
    return float(total)


def evaluate_policy(policy: Any, proxy: ChainReward, gold: ChainReward) -> ChainPath:
    """Exact KL, proxy and gold of Markov policies ``(B, H, S, A)`` on the joint state space.

    Forward pass of the state occupancy ``d_{h+1}(s') = Σ_{(s,a)→s'} d_h(s) π_h(a|s)``.
    """
    r, g, _k = _pair(proxy, gold)
    H, S, A = r.shape
    pol = check_real("policy", policy, low=0.0, high=1.0)
    if pol.ndim != 4 or pol.shape[1:] != (H, S, A):
        raise ValueError(f"policy must have shape (B, {H}, {S}, {A}); got {pol.shape}")
    if not np.allclose(pol.sum(axis=-1), 1.0, atol=1e-9):
        raise ValueError("policy rows must sum to 1")
    B = pol.shape[0]
    d = np.zeros((B, S))
    d[:, 0] = 1.0
    kl, px, gd = np.zeros(B), np.zeros(B), np.zeros(B)
    for h in range(H):
        p = pol[:, h]
        joint = d[:, :, None] * p
        px += np.einsum("bsa,sa->b", joint, r[h])
        gd += np.einsum("bsa,sa->b", joint, g[h])
        with np.errstate(divide="ignore", invalid="ignore"):
            lr = np.where(p > 0, np.log(np.where(p > 0, p, 1.0) * A), 0.0)
        kl += np.einsum("bsa,bsa->b", joint, lr)
        d = joint.reshape(B, A, S).sum(axis=1)
    return ChainPath(np.maximum(kl, 0.0), px, gd)


def bon_pool(proxy_values: Any, gold_values: Any, ns: Any) -> ChainPath:
    """Exact best-of-``n`` on a pool's empirical law, for each ``n`` (module docstring).

    Examples
    --------
    >>> p = bon_pool([0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0], [1.0, 2.0])
    >>> p.gold.tolist()                      # n = 2: E max of two uniform draws of 0..3
    [1.5, 2.125]
    """
    sc = check_real("proxy_values", proxy_values, low=-1e100, high=1e100)
    gv = check_real("gold_values", gold_values, low=-1e100, high=1e100)
    if sc.ndim != 1 or sc.shape != gv.shape or sc.size < 1:
        raise ValueError(f"proxy_values and gold_values must be 1-D of one length >= 1; got "
                         f"shapes {sc.shape} and {gv.shape}")
    n = np.atleast_1d(check_real("ns", ns, low=1.0, high=1e15)).astype(float)
    if n.ndim != 1:
        raise ValueError(f"ns must be 1-D; got shape {n.shape}")
    uniq, inv, counts = np.unique(sc, return_inverse=True, return_counts=True)
    gmean = np.bincount(inv, weights=gv) / counts
    q = counts / counts.sum()
    F = np.cumsum(q)
    F[-1] = 1.0
    Fn = F[None, :] ** n[:, None]
    p = Fn - np.concatenate([np.zeros((n.size, 1)), Fn[:, :-1]], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0) / q), 0.0), axis=1)
    return ChainPath(np.maximum(kl, 0.0), p @ uniq, p @ gmean)


def pg_chain(proxy: ChainReward, gold: ChainReward, betas: Any, *, steps: int = 150,
             n: int = 32, lr: float = 2.0, rng: Any = None) -> ChainPath:
    """Tabular KL-penalised RLOO from the reference, one policy per ``β``; exact evaluation.

    Examples
    --------
    >>> from rlscale.simulate._chain_world import make_chain_world
    >>> w = make_chain_world(4, 3, 2, 0.5, rng=0)
    >>> p = pg_chain(w.gold, w.gold, [3.0, 0.1], steps=60, rng=0)
    >>> bool(p.kl[1] > p.kl[0]) and bool(p.gold[1] > p.gold[0] > 0)
    True
    """
    r, _g, k = _pair(proxy, gold)
    b = check_betas("betas", betas)
    steps = check_positive_int("steps", steps, maximum=MAX_PG_WORK)
    n = check_positive_int("n", n, minimum=2, maximum=MAX_PG_WORK)
    H, S, A = r.shape
    if steps * b.size * n * H > MAX_PG_WORK:
        raise ValueError(f"steps·betas·n·horizon must be <= {MAX_PG_WORK:.0e}; got "
                         f"{steps}·{b.size}·{n}·{H}")
    lr = check_scalar("lr", lr, low=0.0, high=1e6, low_open=True)
    gen = as_generator(rng)
    B = b.size
    theta = np.zeros((B, H, S, A))
    flat = theta.reshape(-1)
    nxt = next_state(k, A)
    who = np.repeat(np.arange(B), n)
    beta_w = b[who]
    step_w = (lr / n) / np.maximum(1.0, beta_w)
    rows = np.arange(B * n)
    for _ in range(steps):
        s = np.zeros(B * n, dtype=np.intp)
        ret, logr = np.zeros(B * n), np.zeros(B * n)
        idx = np.empty((H, B * n), dtype=np.intp)
        act = np.empty((H, B * n), dtype=np.intp)
        probs = np.empty((H, B * n, A))
        for h in range(H):
            z = theta[who, h, s]
            z = np.exp(z - z.max(axis=1, keepdims=True))
            p = z / z.sum(axis=1, keepdims=True)
            a = (gen.random(B * n)[:, None] > np.cumsum(p, axis=1)[:, :-1]).sum(axis=1)
            ret += r[h, s, a]
            logr += np.log(A * p[rows, a])
            idx[h] = ((who * H + h) * S + s)
            act[h], probs[h] = a, p
            s = nxt[s, a]
        R = (ret - beta_w * logr).reshape(B, n)
        adv = ((R - (R.sum(axis=1, keepdims=True) - R) / (n - 1)).reshape(-1)) * step_w
        grad = -adv[None, :, None] * probs
        grad[np.arange(H)[:, None], rows[None, :], act] += adv[None, :]
        np.add.at(flat, (idx[:, :, None] * A + np.arange(A)).reshape(-1), grad.reshape(-1))
    z = theta - theta.max(axis=-1, keepdims=True)
    pol = np.exp(z)
    pol /= pol.sum(axis=-1, keepdims=True)
    return evaluate_policy(pol, proxy, gold)
