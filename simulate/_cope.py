"""CoPE-style action forecasting: GRPO plus auxiliary heads that forecast the next actions.

CoPE (the seed abstract: "multi-step action targets on the policy backbone …
each action forecasted from preceding histories, so acting and forecasting
co-evolve without extra inference cost") trains forecast heads on the
policy's shared backbone; only the abstract is public, so **this is our
reading of it, not the authors' code**:

* the policy is a :class:`~rlscale.simulate._backbone.BackbonePolicy` with
  ``h = forecast_horizon`` forecast heads; head ``j`` reads the backbone's
  representation ``h(x_t)`` of the history at step ``t`` and predicts the
  action the trajectory takes ``j`` steps later, ``a_{t+j}`` (``j = 1..h``);
* every recorded step of every trajectory of the batch is a source, and each
  ``(t, j)`` with ``t + j`` inside the trajectory a target (no weighting by
  return: the forecasts are self-supervised);
* the heads are trained jointly with the RL objective, through the shared
  backbone; acting reads only the action head, so the heads cost nothing at
  inference (``TrainResult`` and evaluation never touch them).

Objective (maximised, ``update_epochs`` Adam steps per batch as in GRPO):

    J(θ) = J_GRPO(θ) − λ · L_fc(θ),

    L_fc(θ) = (1/N_fc) Σ_{i,t} Σ_{j=1}^{h} [t + j < |o_i|] · (−log q_j(a_{i,t+j} | x_{i,t})),

with ``q_j = softmax(u_j)``, ``u_j = h(x)ᵀV_j + c_j``, ``N_fc`` the number of
targets (``L_fc = 0`` when there are none) and ``λ = forecast_weight``.
``J_GRPO`` is GRPO's clipped, length-normalised surrogate with the k3 KL
penalty (:mod:`rlscale.simulate._grpo`): with step weights
``w = A_i/(N·|o_i|)`` aggregated per (row, action) into ``W⁺`` and ``W⁻``
and KL weights ``κ = 1/(N·|o_i|)`` into ``K``,

    J_GRPO = Σ_{r,a} W⁺·min(ρ, 1+ε) + W⁻·max(ρ, 1−ε) − β·Σ_{r,a} K·k3,

``ρ = π/π_old``.  Gradient.  Write ``C_j[r, a]`` for the number of targets of
head ``j`` at input row ``r`` with action ``a`` and ``n_j[r] = Σ_a C_j[r, a]``.
With respect to the forecast logits,

    ∂J/∂u_j[r] = (λ/N_fc) · (C_j[r] − n_j[r]·q_j[r]),

(the softmax cross-entropy gradient, ``∂(−log q_a)/∂u = q − e_a``), with
respect to the action logits the GRPO terms
``∂J/∂z = g_clip − β·g_k3`` (:func:`~rlscale.simulate._rollout.clipped_grad`,
:func:`~rlscale.simulate._rollout.kl_k3_grad`), and through the heads into
the backbone ``∂J/∂h = (∂J/∂z)W₂ᵀ + Σ_j (∂J/∂u_j)V_jᵀ``
(:meth:`BackbonePolicy.backward`).  ``tests/test_cope.py`` checks the
gradient against central finite differences of :func:`surrogate` (to 1e-6)
and pins one update by hand.  With ``λ = 0`` the update is GRPO's, bit for
bit (the heads get zero gradients and Adam leaves them at zero).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlscale.simulate._grpo import grpo_advantages
from rlscale.simulate._policies import sum4
from rlscale.simulate._rollout import (
    LOG_REF,
    Batch,
    aggregate,
    clipped_grad,
    kl_k3_grad,
)

__all__ = ["CoPEConfig", "ForecastTargets", "Prepared", "forecast_targets", "gradient",
           "heads", "prepare", "surrogate", "update"]


@dataclass(frozen=True)
class CoPEConfig:
    clip: float = 0.2
    kl_coef: float = 0.001
    update_epochs: int = 2
    forecast_weight: float = 0.5
    forecast_horizon: int = 4


def heads(config: CoPEConfig) -> int:
    """Forecast heads the policy needs: one per step of the horizon."""
    return config.forecast_horizon


@dataclass(frozen=True)
class ForecastTargets:
    """The forecast targets of a batch, aggregated per input row.

    ``counts[r, j, a]`` is ``C_{j+1}[r, a]`` of the module docstring (targets
    of head ``j + 1`` at row ``r`` with action ``a``); ``n_targets`` is
    ``N_fc``.
    """

    counts: np.ndarray
    n_targets: int


def forecast_targets(batch: Batch, horizon: int) -> ForecastTargets:
    """Count, per head and input row, the actions taken ``j = 1..horizon`` steps later.

    The batch's steps are recorded one time step at a time (both rollouts
    append all live trajectories' steps per time step), so a stable sort by
    trajectory lists each trajectory's steps in time order, and positions
    ``p`` and ``p + j`` of the sorted list hold ``a_t`` and ``a_{t+j}`` of
    one trajectory exactly when they carry the same trajectory id.

    Examples
    --------
    >>> from rlscale.simulate._rollout import Batch
    >>> z = np.zeros(2, bool)
    >>> b = Batch(row=np.array([0, 1, 0, 1]), action=np.array([2, 3, 1, 0]),
    ...           traj=np.array([0, 1, 0, 1]), stage=np.zeros(4, int),
    ...           reward=np.zeros(2), success=z, length=np.array([2, 2]),
    ...           reached=np.zeros((2, 3), bool), completed=np.zeros((2, 3), bool),
    ...           n_tasks=1, k=2, n_rows=2, S2=1)
    >>> t = forecast_targets(b, 2)
    >>> t.n_targets, t.counts[:, 0].tolist()   # row 0 then takes 1; row 1 then takes 0
    (2, [[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    """
    order = np.argsort(batch.traj, kind="stable")
    traj = batch.traj[order]
    idx_l = []
    for j in range(1, horizon + 1):
        if traj.size <= j:
            break
        same = traj[:-j] == traj[j:]
        src, tgt = order[:-j][same], order[j:][same]
        idx_l.append((batch.row[src] * horizon + (j - 1)) * 4 + batch.action[tgt])
    idx = np.concatenate(idx_l) if idx_l else np.zeros(0, np.int64)
    counts = np.bincount(idx, minlength=batch.n_rows * horizon * 4).astype(np.float64)
    return ForecastTargets(counts.reshape(batch.n_rows, horizon, 4), int(idx.size))


def _log_softmax(z: np.ndarray) -> np.ndarray:
    """Log-softmax over a last axis of 4 (the forecast heads' ``log q_j``), by columns:
    numpy's reductions over a short last axis are several times slower."""
    top = np.maximum(np.maximum(z[..., 0:1], z[..., 1:2]), np.maximum(z[..., 2:3], z[..., 3:4]))
    z = z - top
    e = np.exp(z)
    return z - np.log(e[..., 0:1] + e[..., 1:2] + e[..., 2:3] + e[..., 3:4])


def _action_logp(z: np.ndarray) -> np.ndarray:
    """``log π`` from action logits with the very operations of
    :func:`~rlscale.simulate._policies.log_probs`, so that ``λ = 0`` is GRPO bit for bit."""
    z = z - np.maximum(np.maximum(z[:, 0:1], z[:, 1:2]), np.maximum(z[:, 2:3], z[:, 3:4]))
    return z - np.log(sum4(np.exp(z)))


@dataclass(frozen=True)
class Prepared:
    """What an update computes once per batch: the aggregated GRPO weights ``W⁺``, ``W⁻``,
    the KL weights ``K`` (``None`` without a KL term) and the forecast targets."""

    Wpos: np.ndarray
    Wneg: np.ndarray
    K: np.ndarray | None
    targets: ForecastTargets


def prepare(batch: Batch, config: CoPEConfig) -> Prepared:
    """GRPO's per-step weights ``A_i/(N·|o_i|)`` and ``1/(N·|o_i|)`` aggregated per (row,
    action), and the forecast targets of the batch."""
    adv = grpo_advantages(batch.group(batch.reward)).ravel()
    per_traj = 1.0 / (adv.size * np.maximum(batch.length, 1))
    step_w = (adv * per_traj)[batch.traj]
    K = aggregate(batch, per_traj[batch.traj]) if config.kl_coef > 0 else None
    return Prepared(aggregate(batch, np.maximum(step_w, 0.0)),
                    aggregate(batch, np.minimum(step_w, 0.0)), K,
                    forecast_targets(batch, config.forecast_horizon))


def surrogate(policy, inputs, logp_old: np.ndarray, batch: Batch, config: CoPEConfig,
              prepared: Prepared | None = None) -> float:
    """The value of ``J(θ)`` (module docstring) at the policy's current parameters.

    Used by the tests to check :func:`gradient` by finite differences.
    """
    pre = prepare(batch, config) if prepared is None else prepared
    h, _ = policy.represent(inputs)
    logp = _action_logp(policy.head(h))
    rho = np.exp(logp - logp_old)
    value = float(np.sum(pre.Wpos * np.minimum(rho, 1.0 + config.clip)
                         + pre.Wneg * np.maximum(rho, 1.0 - config.clip)))
    if pre.K is not None:
        d = LOG_REF - logp
        value -= config.kl_coef * float(np.sum(pre.K * (np.exp(d) - 1.0 - d)))
    if pre.targets.n_targets:
        logq = _log_softmax(policy.forecast(h))
        value -= config.forecast_weight * float(-np.sum(pre.targets.counts * logq)
                                                / pre.targets.n_targets)
    return value


def gradient(policy, inputs, logp_old: np.ndarray, batch: Batch, config: CoPEConfig,
             prepared: Prepared | None = None
             ) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """``∂J/∂θ`` for every parameter (module docstring) and the step's diagnostics."""
    pre = prepare(batch, config) if prepared is None else prepared
    h, cache = policy.represent(inputs)
    logp = _action_logp(policy.head(h))
    g = clipped_grad(pre.Wpos, pre.Wneg, logp, logp_old, config.clip)
    kl = 0.0
    if pre.K is not None:
        gk, kl = kl_k3_grad(pre.K, logp)
        g = g - config.kl_coef * gk
    dforecast = np.zeros((h.shape[0], policy.heads, 4))
    loss = 0.0
    targets = pre.targets
    if targets.n_targets:
        logq = _log_softmax(policy.forecast(h))
        C = targets.counts
        n = C[..., 0:1] + C[..., 1:2] + C[..., 2:3] + C[..., 3:4]
        scale = config.forecast_weight / targets.n_targets
        dforecast = scale * (C - n * np.exp(logq))
        loss = float(-np.sum(C * logq) / targets.n_targets)
    rho = np.exp(logp - logp_old)
    visited = (pre.Wpos != 0) | (pre.Wneg != 0)
    clipped = float(np.mean(np.abs(rho[visited] - 1.0) > config.clip)) if visited.any() else 0.0
    grads = policy.backward(cache, g, dforecast)
    return grads, {"kl": kl, "clip_fraction": clipped, "forecast_loss": loss}


def update(policy, optimizer, phi, logp_old, batch: Batch, config: CoPEConfig,
           max_steps: int) -> dict[str, float]:
    if getattr(policy, "heads", 0) < config.forecast_horizon:
        raise ValueError(f"cope needs a backbone policy with forecast_horizon="
                         f"{config.forecast_horizon} forecast heads (policy 'backbone' or "
                         f"'linear_backbone'); got a {getattr(policy, 'kind', 'policy')!r} "
                         f"policy with {getattr(policy, 'heads', 0)}")
    prepared = prepare(batch, config)
    stats: dict[str, float] = {}
    for _ in range(config.update_epochs):
        grads, stats = gradient(policy, phi, logp_old, batch, config, prepared)
        optimizer.ascend(policy.params, grads)
    return stats
