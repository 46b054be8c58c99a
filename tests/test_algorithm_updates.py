"""Each algorithm's update against a hand computation on a tiny batch (issue 16).

The policy is a bare logit table (its "features" are ignored) and the
optimiser records the gradient it is asked to ascend, so each test compares
the algorithm's gradient of the logits with one computed here, step by step
from the algorithm's objective in its docstring — a Python loop over the
recorded steps, not the vectorised aggregation the trainer uses.
"""

from __future__ import annotations

import numpy as np
import pytest

from rlscale.simulate import _grpo, _rloo
from rlscale.simulate._rollout import LOG_REF, Batch


class _Table:
    """A policy whose logits are a free table (n_rows × 4)."""

    def __init__(self, z: np.ndarray) -> None:
        self.params = {"z": z.copy()}

    def logits(self, phi):
        return self.params["z"], None

    def backward(self, cache, g):
        return {"z": g}


class _Spy:
    """Records each ascended gradient; moves nothing (every epoch sees the old policy)."""

    def __init__(self) -> None:
        self.grads: list[np.ndarray] = []

    def ascend(self, params, grads) -> None:
        self.grads.append(grads["z"].copy())


def _batch() -> Batch:
    # 2 tasks × k = 2 trajectories; rows 0..3; trajectory lengths 2, 1, 3, 1.
    traj = np.array([0, 0, 1, 2, 2, 2, 3])
    row = np.array([0, 1, 0, 2, 3, 2, 3])
    action = np.array([1, 2, 1, 0, 3, 0, 2])
    reward = np.array([1.0, 0.0, 1.0, 1.0])  # group 0 = (1, 0), group 1 = (1, 1)
    return Batch(row=row, action=action, traj=traj, stage=np.zeros(7, int), reward=reward,
                 success=reward.astype(bool), length=np.bincount(traj, minlength=4),
                 reached=np.zeros((4, 3), bool), completed=np.zeros((4, 3), bool),
                 n_tasks=2, k=2, n_rows=4, S2=4)


def _logp(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


Z = np.array([[0.2, -0.1, 0.4, 0.0], [0.0, 0.3, -0.2, 0.1], [0.5, 0.0, 0.0, -0.5],
              [0.1, 0.1, -0.3, 0.2]])


def test_grpo_gradient_is_the_length_normalised_group_advantage() -> None:
    batch, logp = _batch(), _logp(Z)
    spy = _Spy()
    cfg = _grpo.GRPOConfig(clip=0.2, kl_coef=0.05, update_epochs=1)
    _grpo.update(_Table(Z), spy, None, logp, batch, cfg, max_steps=10)
    # By hand: group (1, 0) has mean 0.5, population std 0.5, so A = ±1/(0.5 + 1e-6);
    # group (1, 1) has A = 0.  Step weight A_i / (N · |o_i|), N = 4 trajectories.
    a0 = 0.5 / (0.5 + 1e-6)
    adv = [a0, -a0, 0.0, 0.0]
    lengths = [2, 1, 3, 1]
    pi = np.exp(logp)
    expected = np.zeros((4, 4))
    for t in range(7):
        i, r, a = batch.traj[t], batch.row[t], batch.action[t]
        onehot = np.eye(4)[a]
        w = adv[i] / (4 * lengths[i])
        expected[r] += w * (onehot - pi[r])  # ρ = 1 inside the clip: d min(ρA, ..)/dz
        # KL term −β·k3 with k3 = π_ref/π − 1 − log(π_ref/π), weight 1/(N·|o_i|):
        # ∂k3/∂z = (1 − π_ref/π_a)(e_a − π).
        kl_w = 1 / (4 * lengths[i])
        expected[r] -= 0.05 * kl_w * (1 - np.exp(LOG_REF - logp[r, a])) * (onehot - pi[r])
    (got,) = spy.grads
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)


def test_grpo_clips_a_ratio_beyond_one_plus_epsilon() -> None:
    batch = _batch()
    logp_old = _logp(Z)
    z_new = Z.copy()
    z_new[0, 1] += 1.0  # row 0, action 1 is now much likelier: ρ > 1.2 there
    spy = _Spy()
    _grpo.update(_Table(z_new), spy, None, logp_old, batch,
                 _grpo.GRPOConfig(clip=0.2, kl_coef=0.0, update_epochs=1), max_steps=10)
    rho = np.exp(_logp(z_new) - logp_old)
    assert rho[0, 1] > 1.2
    # Row 0 is visited twice, both times with action 1: by trajectory 0 (A = +a0) and
    # trajectory 1 (A = −a0).  With ρ > 1 + ε the positive term min(ρA, (1+ε)A) is
    # clipped (no gradient); the negative one, max(ρ, 1 − ε)·A = ρA, is not.
    a0 = 0.5 / (0.5 + 1e-6)
    pi = np.exp(_logp(z_new))
    expected_row0 = (-a0 / (4 * 1)) * rho[0, 1] * (np.eye(4)[1] - pi[0])
    np.testing.assert_allclose(spy.grads[0][0], expected_row0, rtol=1e-12, atol=1e-15)


def test_rloo_gradient_folds_the_kl_into_the_reward() -> None:
    batch, logp = _batch(), _logp(Z)
    spy = _Spy()
    beta = 0.3
    stats = _rloo.update(_Table(Z), spy, None, logp, batch, _rloo.RLOOConfig(kl_coef=beta),
                         max_steps=10)
    # By hand: shaped reward r̃_i = r_i − β·Σ_t (log π − log π_ref) over trajectory i;
    # A_i = r̃_i − mean of the other trajectory's r̃ in the group (k = 2);
    # gradient Σ_t (A_i / N)(e_a − π).
    kl = np.zeros(4)
    for t in range(7):
        kl[batch.traj[t]] += logp[batch.row[t], batch.action[t]] - LOG_REF
    shaped = batch.reward - beta * kl
    adv = np.array([shaped[0] - shaped[1], shaped[1] - shaped[0],
                    shaped[2] - shaped[3], shaped[3] - shaped[2]])
    pi = np.exp(logp)
    expected = np.zeros((4, 4))
    for t in range(7):
        i, r, a = batch.traj[t], batch.row[t], batch.action[t]
        expected[r] += adv[i] / 4 * (np.eye(4)[a] - pi[r])
    (got,) = spy.grads
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
    assert abs(kl).max() > 0.1  # the KL term matters in this batch
    # Its log: the mean sequence KL, and no clipping (RLOO takes one plain step).
    assert stats == {"kl": pytest.approx(kl.mean(), rel=1e-12), "clip_fraction": 0.0}


def test_advantage_helpers_against_their_definitions() -> None:
    r = np.array([[3.0, 1.0, 2.0], [0.0, 0.0, 0.0]])
    std = np.sqrt(((r[0] - 2.0) ** 2).mean())  # population std, ddof 0
    assert _grpo.grpo_advantages(r)[0] == pytest.approx((r[0] - 2.0) / (std + 1e-6),
                                                        rel=1e-15)
    assert _grpo.grpo_advantages(r)[1].tolist() == [0.0, 0.0, 0.0]
    # RLOO = k/(k − 1) × (r − mean): (3 − 1.5, 1 − 2.5, 2 − 2).
    assert _rloo.rloo_advantages(r)[0].tolist() == [1.5, -1.5, 0.0]


def test_documented_defaults_are_the_configs() -> None:
    import dataclasses

    # README / module docstrings: clip ε = 0.2, k3 KL β = 0.001, 2 epochs per batch (GRPO);
    # no KL shaping by default (RLOO).
    assert dataclasses.astuple(_grpo.GRPOConfig()) == (0.2, 0.001, 2)
    assert dataclasses.astuple(_rloo.RLOOConfig()) == (0.0,)
    with pytest.raises(dataclasses.FrozenInstanceError):
        _grpo.GRPOConfig().clip = 0.3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        _rloo.RLOOConfig().kl_coef = 0.3  # type: ignore[misc]
    with pytest.raises(ValueError, match=r"RLOO needs trajectories_per_task >= 2; got k=1"):
        _rloo.rloo_advantages(np.ones((3, 1)))


def test_an_option_the_algorithm_does_not_take_is_refused() -> None:
    from rlscale.simulate import TrainConfig

    with pytest.raises(ValueError, match=r"algorithm 'reinforce' takes no option clip "
                                         r"\(its options: .*\); got clip=0.1"):
        TrainConfig(algorithm="reinforce", clip=0.1)
    assert TrainConfig(algorithm="grpo", clip=0.1).algorithm_config().clip == 0.1
