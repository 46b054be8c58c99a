"""KL-penalised policy gradient over a finite candidate pool (a softmax bandit).

The policy is ``π = softmax(θ)`` over ``n`` candidates with rewards ``r`` and
a reference policy ``π_ref``.  The objective is the KL-regularised reward

    J(π) = E_π[r] − β·KL(π ‖ π_ref),

whose exact maximiser is the tilted reference ``π*(a) ∝ π_ref(a)·exp(r(a)/β)``
(Gibbs variational principle; e.g. Rafailov et al. 2023, arXiv 2305.18290,
eq. 4).  Its gradient in the logits is

    ∂J/∂θ_a = π_a·(f_a − E_π f),   f = r − β·log(π/π_ref),

the "KL folded into the reward" form that RLOO uses (Ahmadian et al. 2024,
arXiv 2402.14740).  At ``π*`` the shaped reward ``f`` equals ``β·log Z`` for
every candidate, so every advantage below is exactly zero there: ``π*`` is the
fixed point of each method, and the tests check that they reach it.

Methods (``algorithm=``):

``"exact"``
    Full-information gradient ascent ``θ ← θ + lr·π⊙(f − E_π f)``.
``"npg"``
    Natural policy gradient / mirror descent ``θ ← θ + lr·(f − E_π f)``;
    with ``lr·β = 1`` it lands on ``π*`` in one step.
``"reinforce"``, ``"rloo"``, ``"grpo"``, ``"dr_grpo"``
    Score-function estimates from ``batch_size`` sampled candidates per step:
    ``g = (1/m)·Σ_i A_i·(e_{a_i} − π)`` with advantages
    ``A_i = f_i − mean(f)`` (REINFORCE with the batch-mean baseline and
    Dr. GRPO, identical for one group), ``f_i − mean_{j≠i} f_j``
    (RLOO, ``= m/(m−1)`` times Dr. GRPO's) and
    ``(f_i − mean f)/(std f + 1e-6)`` with the population std (``ddof=0``;
    GRPO).  The KL enters through ``f`` with its exact per-sample value
    ``log π(a)/π_ref(a)``: GRPO's k3 term placed in the loss is an unbiased
    gradient of ``KL(π_ref ‖ π)``, not of ``KL(π ‖ π_ref)`` (Tang & Munos
    2025, arXiv 2506.09477), and would converge elsewhere.  Sampled methods
    use the decaying step ``lr/√(1 + t/c)`` with ``c = steps/20`` and return
    the policy of the logits averaged over the second half of the run
    (Polyak–Ruppert averaging), so that the sampling noise averages out.

Sampled methods see only the candidates they draw: they need
``steps·batch_size`` well above ``n`` and, for small ``β`` (a sharp
optimum), enough steps not to collapse early onto one candidate.  For pools
of thousands of candidates ``"npg"`` (exact, geometric convergence) is the
reliable choice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import rel_entr

from rlscale.simulate._dr_grpo import dr_grpo_advantages
from rlscale.simulate._gridworld import as_generator
from rlscale.simulate._grpo import grpo_advantages
from rlscale.simulate._reinforce import reinforce_advantages
from rlscale.simulate._rloo import rloo_advantages
from rlscale.theory._result import Result
from rlscale.theory._validation import check_bool, check_positive_int, check_real, check_scalar

__all__ = ["BANDIT_ALGORITHMS", "BanditResult", "kl_bandit_optimum", "kl_bandit_pg"]

#: The full-information methods: the logit step from the exact advantage ``f − E_π f``
#: (``π⊙adv`` is the gradient, ``adv`` itself the natural gradient).
_FULL_STEPS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "exact": lambda p, adv: p * adv,
    "npg": lambda p, adv: adv,
}
#: The sampled methods' advantages of shaped rewards ``(problems, batch)``: the trainer's
#: own functions, so the bandit and the trainer cannot drift apart.  Each problem's batch
#: is one group, so REINFORCE's batch-mean baseline is taken per problem (``axis=1``:
#: problems are independent) and equals Dr. GRPO's group mean.
_ADVANTAGES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "reinforce": lambda f: reinforce_advantages(f, axis=1),
    "rloo": rloo_advantages,
    "grpo": grpo_advantages,
    "dr_grpo": dr_grpo_advantages,
}
BANDIT_ALGORITHMS = (*_FULL_STEPS, *_ADVANTAGES)
_MAX_SPREAD = 1e300
#: Upper limit on the work ``steps · problems · (pool size + batch_size)`` of one
#: :func:`kl_bandit_pg` call.  Measured at the limit (load 3, with and without
#: ``history``) for problems × arms 1 × 1000, 10 × 100, 100 × 50 and 1000 × 20 (batches
#: 8–50): 0.3–1.7 CPU s ("exact"), 1.7–4.1 CPU s ("rloo", "grpo").  A single 10-arm
#: problem with batch 8 (2.8e6 steps) is bound by the per-step overhead instead:
#: 51–73 CPU s ("exact"), 184 s ("rloo", with history).
MAX_BANDIT_WORK = 5 * 10**7


@dataclass(frozen=True)
class BanditResult(Result):
    """Outcome of :func:`kl_bandit_pg`.

    Arrays carry the leading batch dimension ``B`` when the input had one and
    drop it otherwise (then scalars are Python floats).

    Attributes
    ----------
    probs : ndarray, shape (n,) or (B, n)
        Final policy.
    kl : float or ndarray
        Exact ``KL(probs ‖ π_ref)`` in nats.
    expected_reward : float or ndarray
        Exact ``E_probs[r]``.
    objective : float or ndarray
        ``expected_reward − β·kl``.
    optimum_probs : ndarray
        The exact optimum ``π* ∝ π_ref·exp(r/β)``.
    optimum_kl, optimum_reward, optimum_objective : float or ndarray
        The same quantities at ``π*``.
    kl_history, reward_history, objective_history : ndarray, shape (steps+1,) or (steps+1, B)
        Exact values along the run, starting from ``π_ref`` (with ``history=False``
        only the first and the last: 2 rows).
    algorithm : str
    beta : float or ndarray
    steps, batch_size : int
    lr : float or ndarray
        The step size; per problem (shape ``(B,)``) when it defaulted to
        ``1/β`` on batched input.
    """

    probs: np.ndarray
    kl: Any
    expected_reward: Any
    objective: Any
    optimum_probs: np.ndarray
    optimum_kl: Any
    optimum_reward: Any
    optimum_objective: Any
    kl_history: np.ndarray
    reward_history: np.ndarray
    objective_history: np.ndarray
    algorithm: str
    beta: Any
    steps: int
    batch_size: int
    lr: Any


def _log_softmax(theta: np.ndarray, centred: bool = False, out: np.ndarray | None = None,
                 work: np.ndarray | None = None) -> np.ndarray:
    """``theta − logsumexp(theta)`` per row, for finite real ``theta`` of shape ``(B, n)``.

    The arithmetic of ``scipy.special.logsumexp`` (scipy 1.15+, Blanchard, Higham &
    Higham 2021, "Accurately computing the log-sum-exp and softmax functions"): with
    ``a* = max a`` attained ``m`` times, ``log Σ e^a = a* + log m + log1p(s/m)``, ``s`` the
    sum of ``e^(a − a*)`` over the other entries — written in plain numpy, which is 4×
    cheaper per call than scipy's array-API version (half the time of a bandit run went
    there).  Inputs are finite (the logits are re-centred every step), so scipy's
    infinite-value branch is not needed.  ``centred=True`` says every row's maximum is
    exactly 0 (logits just re-centred by ``θ − max θ``): the maximum is not searched again
    and the shifts by 0 are dropped, bit-identically.  ``out`` receives the result and
    ``work`` (the shape of ``theta``) holds the exponentials, if given.
    """
    top = 0.0 if centred else theta.max(axis=-1, keepdims=True)
    at_top = theta == top
    count = at_top.sum(axis=-1, keepdims=True, dtype=theta.dtype)
    # e^(a − a*) over the entries below the top: the top's e^0 = 1 is replaced by
    # 0 = e^(−∞) afterwards (numpy's vectorised exp is ten times slower on −∞ entries).
    e = np.exp(theta if centred else theta - top, out=work)
    np.copyto(e, 0.0, where=at_top)
    rest = e.sum(axis=-1, keepdims=True)
    rest = np.where(rest == 0, rest, rest / count)
    shift = np.log1p(rest) + np.log(count)
    return np.subtract(theta, shift if centred else shift + top, out=out)


_MAX_LR_BETA = 1e3
#: Pools of at most this many candidates are searched by counting (a binary search per
#: key costs more there); tables (problems × candidates) from _SORTED_SEARCH on sort the
#: keys first.
_COUNT_SEARCH = 16
_SORTED_SEARCH = 2**15


def kl_bandit_optimum(rewards: Any, beta: Any, ref_probs: Any = None) -> np.ndarray:
    """The exact KL-regularised optimum ``π* ∝ π_ref·exp(r/β)``.

    Computed in log space, so huge ``r/β`` do not overflow.

    Examples
    --------
    >>> p = kl_bandit_optimum([0.0, 1.0], beta=1.0)
    >>> [round(x, 6) for x in p]
    [0.268941, 0.731059]
    """
    r, b, log_ref, batched = _prepare(rewards, beta, ref_probs)
    out = np.exp(_log_softmax(log_ref + _scaled(r, b)))
    return out if batched else out[0]


def _scaled(r: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(r − max r)/β`` per row: the optimum's logits up to a constant, finite even where
    ``r/β`` itself overflows (rewards near 1e308); ``_prepare`` bounds the spread."""
    return (r - r.max(axis=1, keepdims=True)) / b[:, None]


def _prepare(rewards: Any, beta: Any, ref_probs: Any) -> tuple[np.ndarray, ...]:
    r = check_real("rewards", rewards)
    if r.ndim not in (1, 2) or r.shape[-1] < 1:
        raise ValueError(f"rewards must have shape (n,) or (B, n) with n >= 1; got {r.shape}")
    batched = r.ndim == 2
    r2 = r if batched else r[None, :]
    B, n = r2.shape
    b = check_real("beta", beta, low=0.0, low_open=True)
    if b.ndim > 1 or (b.ndim == 1 and (not batched or b.shape[0] != B)):
        raise ValueError(f"beta must be a scalar or have shape ({B},); got shape {b.shape}")
    b = np.broadcast_to(b, (B,)).astype(np.float64)
    # Logits move by up to (max r − min r)/β; past ~1e300 they overflow float64 (NaN policy).
    with np.errstate(over="ignore"):
        spread = np.ptp(r2, axis=1) / b
    if not np.all(spread <= _MAX_SPREAD):
        worst = int(np.argmax(np.where(np.isfinite(spread), spread, np.inf)))
        raise ValueError(f"reward range / beta must be <= {_MAX_SPREAD:g} (float64 logits); "
                         f"got {spread[worst]:g} for beta={b[worst]:g}")
    with np.errstate(over="ignore"):
        span = np.ptp(r2, axis=1)
    if not np.all(span <= _MAX_SPREAD):
        raise ValueError(f"rewards must span at most {_MAX_SPREAD:g} (max − min per problem); "
                         f"got rewards spanning {np.max(span):g}")
    if ref_probs is None:
        log_ref = np.full((B, n), -np.log(n))
    else:
        ref = check_real("ref_probs", ref_probs, low=0.0, low_open=True)
        if ref.shape not in ((n,), (B, n)) or (ref.ndim == 2 and not batched):
            raise ValueError(
                f"ref_probs must have shape ({n},){f' or ({B}, {n})' if batched else ''}; "
                f"got {ref.shape}"
            )
        total = ref.sum(axis=-1)
        if np.any(np.abs(total - 1.0) > 1e-9):
            raise ValueError(f"ref_probs must sum to 1 (within 1e-9); got sums {total}")
        log_ref = np.broadcast_to(np.log(ref / total[..., None]), (B, n)).copy()
    return r2, b, log_ref, batched


def _sample(probs: np.ndarray, m: int, rng: np.random.Generator,
            work: np.ndarray | None = None) -> np.ndarray:
    """Inverse-CDF sampling of ``m`` candidates per row, vectorised over rows (``work``: an
    optional array of the shape of ``probs`` to hold the CDF)."""
    B = probs.shape[0]
    cdf = np.cumsum(probs, axis=1, out=work)
    cdf[:, -1] = 1.0  # guard the rounding of the last partial sum
    # Offsetting row b by b makes the flattened CDF monotone: one searchsorted.
    offsets = np.arange(B, dtype=np.float64)[:, None]
    u = rng.random((B, m)) + offsets
    flat = np.add(cdf, offsets, out=cdf).ravel()
    n = probs.shape[1]
    if n <= _COUNT_SEARCH:
        # Few candidates: count, per key, the entries of its row at or below it.  That is
        # searchsorted's answer minus b·n: every earlier row lies at or below b <= key and
        # every later row above it (a key rounded up to b + 1 can only add entries of
        # probability 0, which the cap at n − 1 removes as before).  The one case that can
        # differ: such a rounded key (u within ~1e-14 of 1) in a row whose partial sums
        # passed 1 by rounding before its last entry, where the binary search may stop one
        # candidate early; both are then draws from the row's last candidates.
        cnt = np.zeros((B, m), dtype=np.int64)
        for j in range(n):
            cnt += flat[j::n, None] <= u
        return np.minimum(cnt, n - 1)
    if B * n < _SORTED_SEARCH:
        idx = np.searchsorted(flat, u.ravel(), side="right").reshape(B, m)
        return np.minimum(idx - np.arange(B)[:, None] * n, n - 1)
    # On a large table, the same search with the keys in increasing order (row b's lie in
    # [b, b + 1), so sorting within rows sorts them all): searchsorted then starts each
    # search where the previous one ended, which halves its cost (measured at 224 x 512);
    # the results go back in draw order.
    order = np.argsort(u, axis=1)
    found = np.searchsorted(flat, np.take_along_axis(u, order, axis=1).ravel(),
                            side="right").reshape(B, m)
    idx = np.empty_like(found)
    np.put_along_axis(idx, order, found, axis=1)
    return np.minimum(idx - np.arange(B)[:, None] * n, n - 1)


def kl_bandit_pg(
    rewards: Any,
    beta: Any,
    *,
    ref_probs: Any = None,
    steps: int = 2000,
    lr: float | None = None,
    batch_size: int = 64,
    algorithm: str = "rloo",
    rng: np.random.Generator | int | None = None,
    history: bool = True,
) -> BanditResult:
    """Maximise ``E_π[r] − β·KL(π‖π_ref)`` over a softmax policy by policy gradient.

    Parameters
    ----------
    rewards : array_like, shape (n,) or (B, n)
        Reward of each candidate; a leading dimension runs ``B`` independent
        problems at once (vectorised, no Python loop over ``B``).
    beta : float or array_like, shape (B,)
        KL coefficient, ``> 0``.
    ref_probs : array_like, shape (n,) or (B, n), optional
        Reference policy (strictly positive, sums to 1); uniform by default.
        Training starts from it.
    steps : int
        Number of updates; ``steps·B·(n + batch_size)`` is limited to
        ``MAX_BANDIT_WORK`` (5e7: a few CPU seconds for large pools or many
        problems, minutes for one tiny problem, where the per-step overhead
        dominates).
    lr : float, optional
        Step size on the logits; default ``1/β`` (per problem), which makes
        the step scale-free: ``lr·β`` is the contraction of the NPG update.
    batch_size : int
        Samples per step for the sampled methods (``>= 2``).
    algorithm : {"exact", "npg", "reinforce", "rloo", "grpo", "dr_grpo"}
        See the module docstring.
    rng : numpy.random.Generator or int, optional
        Randomness for the sampled methods; same seed, bit-identical result.
    history : bool
        Record the exact KL, reward and objective after every step (default).
        With ``False`` only the start and the end are recorded (the
        ``*_history`` arrays have two rows), which saves about a fifth of a
        sampled run; the dynamics, the final policy and its values are
        bit-identical either way.

    Returns
    -------
    BanditResult

    Examples
    --------
    >>> import numpy as np
    >>> res = kl_bandit_pg([0.0, 0.5, 1.0], beta=0.5, algorithm="exact", steps=500)
    >>> bool(np.allclose(res.probs, res.optimum_probs, atol=1e-6))
    True
    >>> res = kl_bandit_pg([[0.0, 1.0], [1.0, 0.0]], beta=[1.0, 2.0], rng=0, steps=3000)
    >>> np.round(res.probs, 1)
    array([[0.3, 0.7],
           [0.6, 0.4]])
    """
    if not isinstance(algorithm, str) or algorithm not in BANDIT_ALGORITHMS:
        raise ValueError(
            f"algorithm must be one of {', '.join(BANDIT_ALGORITHMS)}; got algorithm={algorithm!r}"
        )
    r, b, log_ref, batched = _prepare(rewards, beta, ref_probs)
    history = check_bool("history", history)
    steps = check_positive_int("steps", steps, maximum=MAX_BANDIT_WORK)
    batch_size = check_positive_int("batch_size", batch_size, minimum=2,
                                    maximum=MAX_BANDIT_WORK)
    work = steps * r.shape[0] * (r.shape[1] + batch_size)
    if work > MAX_BANDIT_WORK:
        raise ValueError(f"steps·problems·(pool + batch_size) must be <= {MAX_BANDIT_WORK:.0e}"
                         f"; got steps={steps} x {r.shape[0]} problems x "
                         f"({r.shape[1]} + {batch_size}) = {work:.3g}")
    if lr is None:
        step = 1.0 / b
        lr_out = step if batched else float(step[0])
    else:
        lr_out = check_scalar("lr", lr, low=0.0, low_open=True)
        step = np.full_like(b, lr_out)
        # The KL term's curvature is beta: a step lr past ~1e3/beta makes the logits grow
        # geometrically and overflow float64 within a few steps (lr = None uses 1/beta).
        if float(np.max(step * b)) > _MAX_LR_BETA:
            raise ValueError(f"lr·beta must be <= {_MAX_LR_BETA:g} (a stable step); got "
                             f"lr={lr_out:g} with beta up to {float(np.max(b)):g}")
    rng = as_generator(rng)
    B, n = r.shape
    # Every update is invariant to a per-row shift of the rewards (each advantage subtracts
    # a baseline or the policy's mean), so the dynamics run on r − max r, which keeps the
    # sums finite for rewards near ±1e308; the shift is added back to the reported rewards.
    r_top = r.max(axis=1)
    r = r - r_top[:, None]
    m = batch_size
    rows = np.arange(B)[:, None]
    sampled = algorithm in _ADVANTAGES
    decay = max(steps / 20.0, 1.0)
    tail = steps // 2  # Polyak–Ruppert: average the logits over the second half
    theta_sum = np.zeros_like(log_ref)

    full_step, advantages = _FULL_STEPS.get(algorithm), _ADVANTAGES.get(algorithm)

    theta = log_ref.copy()
    kl_hist = np.empty((steps + 1 if history else 2, B))
    rew_hist = np.empty_like(kl_hist)
    # (B, n) work arrays written in place every step: fresh arrays of this size each step
    # cost more in page faults (malloc hands them back to the kernel) than in arithmetic.
    logp, p, scratch, grad = (np.empty_like(theta) for _ in range(4))

    def record(t: int) -> None:
        np.exp(logp, out=p)
        # KL(p‖π_ref) = Σ p·(log p − log π_ref) from the log-policy already at hand: the
        # same value as Σ rel_entr(p, π_ref) to rounding (both logs are finite here; p = 0
        # contributes 0 either way) at a fifth of its cost, which dominated long runs.
        # The history is only reported: the dynamics never read it.
        if history or t in (0, steps):
            row = t if history else min(t, 1)
            kl_hist[row] = np.sum(np.multiply(p, np.subtract(logp, log_ref, out=scratch),
                                              out=scratch), axis=1)
            rew_hist[row] = np.sum(np.multiply(p, r, out=scratch), axis=1) + r_top

    _log_softmax(theta, out=logp)
    record(0)
    flat_r, flat_ref, flat_grad = r.ravel(), log_ref.ravel(), grad.ravel()
    for t in range(steps):
        if not sampled:
            f = r - b[:, None] * (logp - log_ref)
            adv = f - np.sum(p * f, axis=1, keepdims=True)
            np.add(theta, step[:, None] * full_step(p, adv), out=theta)
        else:
            acts = _sample(p, m, rng, work=scratch)
            # The shaped reward f = r − β·(log π − log π_ref) only where it is read, at the
            # sampled candidates (the same arithmetic per entry as on the whole array).
            at = (acts + rows * n).ravel()
            fa = (flat_r[at].reshape(B, m) - b[:, None]
                  * (logp.ravel()[at].reshape(B, m) - flat_ref[at].reshape(B, m)))
            adv = advantages(fa)
            # Σ_i A_i e_{a_i}: added in sample order into zeros over the flattened (row,
            # action) index, as a weighted bincount would; then
            # grad = (Σ_i A_i e_{a_i} − (Σ_i A_i)·π)/m and θ += lr_t·grad.
            grad.fill(0.0)
            np.add.at(flat_grad, at, adv.ravel())
            np.subtract(grad, np.multiply(adv.sum(axis=1, keepdims=True), p, out=scratch),
                        out=grad)
            np.divide(grad, m, out=grad)
            np.multiply(grad, (step / np.sqrt(1.0 + t / decay))[:, None], out=grad)
            np.add(theta, grad, out=theta)
        # Re-centre the logits: softmax is shift-invariant and this keeps them bounded.
        np.subtract(theta, theta.max(axis=1, keepdims=True), out=theta)
        if sampled and t >= tail:
            theta_sum += theta
            if t == steps - 1:
                theta = theta_sum / (steps - tail)
        # Just re-centred, each row's maximum is exactly 0 (not so the averaged last one).
        _log_softmax(theta, centred=not (sampled and t == steps - 1), out=logp, work=scratch)
        record(t + 1)

    opt_logp = _log_softmax(log_ref + _scaled(r, b))
    opt = np.exp(opt_logp)
    opt_kl = np.sum(rel_entr(opt, np.exp(log_ref)), axis=1)
    opt_rew = np.sum(opt * r, axis=1) + r_top
    obj_hist = rew_hist - b[None, :] * kl_hist

    def out(x: np.ndarray) -> Any:
        if batched:
            return x
        return float(x[0]) if x.ndim == 1 else x[0]

    def hist(x: np.ndarray) -> np.ndarray:
        return x if batched else x[:, 0]

    return BanditResult(
        probs=out(p), kl=out(kl_hist[-1]), expected_reward=out(rew_hist[-1]),
        objective=out(obj_hist[-1]), optimum_probs=out(opt), optimum_kl=out(opt_kl),
        optimum_reward=out(opt_rew), optimum_objective=out(opt_rew - b * opt_kl),
        kl_history=hist(kl_hist), reward_history=hist(rew_hist),
        objective_history=hist(obj_hist), algorithm=algorithm,
        beta=b if batched else float(b[0]), steps=steps, batch_size=batch_size, lr=lr_out,
    )
