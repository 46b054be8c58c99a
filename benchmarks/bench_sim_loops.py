"""Simulator hot loops of the report: ours against the loops as they were (bit-identical outputs).

Three steps of ``rlscale report --quick`` spend their time in simulator loops
(issue 13, item 6).  Each case times the loop as it is now (ours) against a
faithful copy of the loop as it was before the sim-hot-loops change (kept in
this file and swapped into rlscale while it runs: an *ablation*, ours against
ours, not an independent peer), alternated in one run, and checks that both give the same
output bit for bit (``identical``).  Wall medians come from the harness; the
``cpu`` line gives the medians of CPU seconds (``time.process_time``, all
threads) of the same calls, which a machine shared with other jobs distorts
less.

- **inference step**: :func:`rlscale.verification._inference_grounding.ground_inference` on
  the report's configuration; the peer rolls out the policy with the old
  per-walker loop (4-D fancy indexing and a cumulative sum of the policy at
  every step, all walkers' arrays every step).
- **gold_gains**: the 30 :func:`gold_gains` calls of one seed of
  ``verify reward-law --trainer --quick`` (soft VI, best-of-n and, for 4 of
  them, policy gradient); the peer runs the old dense programs over all
  ``T·3·S²`` states with four separate ``_q`` per step and the old best-of-n.
- **_pg_rows**: the policy-gradient rows of ``verify reward-law --quick``
  (RLOO on 10 pools × 14 β, 400 steps, two threads); the peer is the old
  :func:`kl_bandit_pg` loop.
"""

from __future__ import annotations

import contextlib
import json
import statistics
import time
from types import SimpleNamespace

import numpy as np

from benchmarks._harness import Case

# --------------------------------------------------------------------------- peers (old loops)


def _old_rollout_reaches(world, pol, nxt, dead, reach, task, stage, start, horizon, rng):
    """One rollout per walker (arrays task, stage, start): did it reach the stage target?"""
    m = task.size
    cell = start.copy()
    alive = np.ones(m, dtype=bool)
    hit = np.zeros(m, dtype=bool)
    slip = world.slippery[world.task_env[task]]
    for _ in range(horizon):
        idx = np.flatnonzero(alive)
        if idx.size == 0:
            break
        tk, sg, c = task[idx], stage[idx], cell[idx]
        cdf = np.cumsum(pol[tk, sg, c], axis=-1)
        a = np.minimum((rng.random(idx.size)[:, None] > cdf).sum(axis=-1), 3)
        turn = rng.integers(-1, 2, idx.size)  # slippery: intended or either perpendicular
        a = np.where(slip[idx], (a + turn) % 4, a)
        new = nxt[tk, sg, c, a]
        cell[idx] = new
        got = reach[tk, sg, new]
        hit[idx] = got
        alive[idx] = ~(got | dead[tk, sg, new])
    return hit


def _old_q(rw, land_val):
    """Expected landing value per (batch, task, stage, cell, action)."""
    t = rw._tables
    B = land_val.shape[0]
    d = land_val[:, t["move_idx"]].reshape(B, *rw.features.shape[:3], 4)
    total = d[..., 0] + d[..., 1] + d[..., 2] + d[..., 3]
    slip = t["slip"][None, :, None, None, None]
    return np.where(slip, (total[..., None] - d[..., t["opp"]]) / 3.0, d)


def _pi_avg(x, pi):
    xp = x * pi
    return xp[..., 0] + xp[..., 1] + xp[..., 2] + xp[..., 3]


def _old_evaluate(self, policy, r_land, *, kl=False, second_moment=False):
    """The old RewardWorld.evaluate (validation as today, then the dense program)."""
    H = self.horizon
    if policy is not None:
        policy = self._check_policy(policy, batch=True)
    B = 1 if policy is None else policy.shape[0]
    r = np.asarray(r_land, dtype=float)
    r = np.broadcast_to(np.atleast_2d(r), (B, r.shape[-1]))
    n = self.n_states
    t = self._tables
    V, K, W = np.zeros((B, n)), np.zeros((B, n)), np.zeros((B, n))
    for h in range(1, H + 1):
        pi = np.full((1, *self.features.shape[:3], 4), 0.25) if policy is None \
            else policy[:, h - 1]
        if second_moment:
            ev = np.where(t["cont"], V[:, t["cont_idx"]], 0.0)
            ew = np.where(t["cont"], W[:, t["cont_idx"]], 0.0)
            W = _pi_avg(_old_q(self, r * r + 2.0 * r * ev + ew), pi).reshape(B, n)
        if kl:
            logr = np.log(np.maximum(pi, 1e-300) * 4.0)
            K = (_pi_avg(_old_q(self, np.where(t["cont"], K[:, t["cont_idx"]], 0.0)), pi)
                 + _pi_avg(logr, pi)).reshape(B, n)
        V = _pi_avg(_old_q(self, r + np.where(t["cont"], V[:, t["cont_idx"]], 0.0)),
                    pi).reshape(B, n)
    s = t["start"]
    out = {"value": V[:, s]}
    if kl:
        out["kl"] = K[:, s]
    if second_moment:
        out["second"] = W[:, s]
    return out


def _old_soft_optimum(rw, proxy_land, gold_land, betas):
    """The old soft value iteration: every state, four separate programs per step."""
    from rlscale.simulate._soft_vi import SoftOptimum

    b = np.asarray(betas, dtype=float)
    r, g = np.asarray(proxy_land)[None], np.asarray(gold_land)[None]
    t = rw._tables
    n, B = rw.n_states, b.size
    beta = b.reshape(B, 1, 1, 1, 1)
    V = np.zeros((B, n))
    Vp, Vg, Vk = np.zeros((B, n)), np.zeros((B, n)), np.zeros((B, n))

    def cont(x):
        return np.where(t["cont"], x[:, t["cont_idx"]], 0.0)

    for _ in range(1, rw.horizon + 1):
        Q = _old_q(rw, r + cont(V))
        z = Q / beta
        zmax = np.max(z, axis=-1, keepdims=True)
        e = np.exp(z - zmax)
        tot = (e[..., 0] + e[..., 1] + e[..., 2] + e[..., 3])[..., None]
        pi = e / tot
        logr = np.log(4.0) + (z - zmax) - np.log(tot)  # log(π/π_ref)
        V_new = (beta * (zmax + np.log(tot) - np.log(4.0))).reshape(B, n)
        Vp = _pi_avg(_old_q(rw, r + cont(Vp)), pi).reshape(B, n)
        Vg = _pi_avg(_old_q(rw, g + cont(Vg)), pi).reshape(B, n)
        Vk = (_pi_avg(_old_q(rw, cont(Vk)), pi) + _pi_avg(logr, pi)).reshape(B, n)
        V = V_new
    s = t["start"]
    return SoftOptimum(b, Vk[:, s], Vp[:, s], Vg[:, s], V[:, s], None)


def _old_soft_optimum_api(rw, proxy_land, gold_land, betas, *, keep_policy=False):
    return _old_soft_optimum(rw, proxy_land, gold_land, betas)


def _old_bon_points(scores, gold, ns):
    """Exact best-of-n on each environment's empirical pool: (KL, proxy, gold) per n."""
    T = scores.shape[0]
    kl, px, gd = (np.empty((T, ns.size)) for _ in range(3))
    for i in range(T):
        uniq, inv, counts = np.unique(scores[i], return_inverse=True, return_counts=True)
        gmean = np.bincount(inv, weights=gold[i]) / counts
        q = counts / counts.sum()
        F = np.cumsum(q)
        F[-1] = 1.0
        Fprev = np.concatenate([[0.0], F[:-1]])
        p = F[None, :] ** ns[:, None] - Fprev[None, :] ** ns[:, None]  # (n, groups)
        kl[i] = np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0) / q), 0.0), axis=1)
        px[i] = p @ uniq
        gd[i] = p @ gmean
    return kl, px, gd


def _old_log_softmax(theta):
    top = theta.max(axis=-1, keepdims=True)
    at_top = theta == top
    count = at_top.sum(axis=-1, keepdims=True, dtype=theta.dtype)
    rest = np.exp(np.where(at_top, -np.inf, theta) - top).sum(axis=-1, keepdims=True)
    rest = np.where(rest == 0, rest, rest / count)
    return theta - (np.log1p(rest) + np.log(count) + top)


def _old_sample(probs, m, rng):
    B = probs.shape[0]
    cdf = np.cumsum(probs, axis=1)
    cdf[:, -1] = 1.0  # guard the rounding of the last partial sum
    offsets = np.arange(B, dtype=np.float64)[:, None]
    u = rng.random((B, m)) + offsets
    flat = (cdf + offsets).ravel()
    idx = np.searchsorted(flat, u.ravel(), side="right").reshape(B, m)
    n = probs.shape[1]
    return np.minimum(idx - np.arange(B)[:, None] * n, n - 1)


def _old_kl_bandit_pg(rewards, beta, *, steps, batch_size, algorithm="rloo", rng=None,
                      history=True):
    """The old sampled-method loop of kl_bandit_pg (inputs prepared as today)."""
    from rlscale.simulate._bandit import _GRPO_EPS, _prepare

    r, b, log_ref, _ = _prepare(rewards, beta, None)
    step = 1.0 / b
    rng = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    B, n = r.shape
    r_top = r.max(axis=1)
    r = r - r_top[:, None]
    m = batch_size
    rows = np.arange(B)[:, None]
    decay = max(steps / 20.0, 1.0)
    tail = steps // 2
    theta_sum = np.zeros_like(log_ref)
    theta = log_ref.copy()
    kl_hist = np.empty((steps + 1, B))
    rew_hist = np.empty((steps + 1, B))

    def record(t, logp):
        p = np.exp(logp)
        kl_hist[t] = np.sum(p * (logp - log_ref), axis=1)
        rew_hist[t] = np.sum(p * r, axis=1) + r_top
        return p

    logp = _old_log_softmax(theta)
    p = record(0, logp)
    for t in range(steps):
        f = r - b[:, None] * (logp - log_ref)
        acts = _old_sample(p, m, rng)
        fa = f[rows, acts]
        mean = fa.mean(axis=1, keepdims=True)
        if algorithm in ("reinforce", "dr_grpo"):
            adv = fa - mean
        elif algorithm == "rloo":
            adv = (fa.sum(axis=1, keepdims=True) - fa) / (m - 1)
            adv = fa - adv
        else:  # grpo
            adv = (fa - mean) / (fa.std(axis=1, keepdims=True) + _GRPO_EPS)
        weighted = np.bincount((acts + rows * n).ravel(), weights=adv.ravel(),
                               minlength=B * n).reshape(B, n)
        grad = (weighted - adv.sum(axis=1, keepdims=True) * p) / m
        theta = theta + (step / np.sqrt(1.0 + t / decay))[:, None] * grad
        theta = theta - theta.max(axis=1, keepdims=True)
        if t >= tail:
            theta_sum += theta
            if t == steps - 1:
                theta = theta_sum / (steps - tail)
        logp = _old_log_softmax(theta)
        p = record(t + 1, logp)
    return SimpleNamespace(probs=p, kl=kl_hist[-1], kl_history=kl_hist)


@contextlib.contextmanager
def _peer(kind: str):
    """Swap today's loops for the old copies above while the peer runs."""
    import rlscale.simulate as sim
    from rlscale.simulate import _rm_experiment, _subtasks
    from rlscale.simulate._gold_reward import RewardWorld

    if kind == "rollouts":
        # The old draw: np.full arrays of the turn's task, stage and start per refill.
        saved = [(_subtasks, "_rollout_tables", _subtasks._rollout_tables),
                 (_subtasks, "_rollout_reaches", _subtasks._rollout_reaches)]
        _subtasks._rollout_tables = lambda *args: args
        _subtasks._rollout_reaches = lambda world, pol, nxt, dead, reach, task, stage, start, m, \
            H, gen: _old_rollout_reaches(world, pol, nxt, dead, reach, np.full(m, task),
                                         np.full(m, stage), np.full(m, start), H, gen)
    elif kind == "gold":
        saved = [(_rm_experiment, "soft_optimum", _rm_experiment.soft_optimum),
                 (_rm_experiment, "_bon_points", _rm_experiment._bon_points),
                 (RewardWorld, "evaluate", RewardWorld.evaluate)]
        _rm_experiment.soft_optimum = _old_soft_optimum_api
        _rm_experiment._bon_points = _old_bon_points
        RewardWorld.evaluate = _old_evaluate
    else:
        saved = [(sim, "kl_bandit_pg", sim.kl_bandit_pg)]
        sim.kl_bandit_pg = _old_kl_bandit_pg
    try:
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


# --------------------------------------------------------------------------- workloads


def _inference(smoke: bool):
    from rlscale.verification._inference_grounding import GroundingConfig, ground_inference

    cfg = GroundingConfig(environments=8, epochs=2, job_tasks=1, q_min=0.01,
                          budget_factors=(1.5,), episodes=300) if smoke else \
        GroundingConfig(environments=16, epochs=4, job_tasks=2, episodes=2000)

    def run():
        d = ground_inference(cfg).as_dict()
        d.pop("seconds")
        return json.dumps(d, sort_keys=True)
    return run


def _gold(smoke: bool):
    import rlscale.verification._trainer_reward_law as trl
    from rlscale.simulate._gold_reward import sample_trajectories
    from rlscale.simulate._rm_experiment import (
        CAPACITIES,
        comparison_labels,
        comparison_pool,
        gold_gains,
        make_rm_setup,
        train_proxy,
    )

    st = trl._SETTINGS["quick"]
    ms, ks = trl.trainer_grid("quick")
    n_opt = 3 if smoke else st["n_opt"]
    root = np.random.SeedSequence(0)
    setup_ss, seed_ss = root.spawn(2)
    setup = make_rm_setup(n_opt, st["n_rm"], np.random.default_rng(setup_ss))
    betas = np.geomspace(0.003, 30.0, st["betas"])
    pg_betas = np.geomspace(0.02, 3.0, st["pg_betas"])
    pool_ss, *noise_ss = seed_ss.spawn(4)
    gen = np.random.default_rng(pool_ss)
    delta, margin = comparison_pool(setup, int(ms.max()), gen)
    ref = sample_trajectories(setup.opt, 200 if smoke else st["bon_pool"], gen)[0]
    calls = []
    for s, nss in list(zip(trl.NOISES, noise_ss))[: 1 if smoke else 3]:
        labels = comparison_labels(margin, s, np.random.default_rng(nss))
        for cap in CAPACITIES:
            for m in ms[:2] if smoke else ms:
                opts = ("soft_vi", "bon")
                if s in st["pg_noises"] and m in st["pg_m"]:
                    opts += ("pg",)
                calls.append((train_proxy(delta, labels, int(m), cap), cap, opts, int(m)))

    def run():
        return [gold_gains(setup, th, cap, ks, optimisers=opts, betas=betas, ref_features=ref,
                           pg_betas=pg_betas, pg_steps=st["pg_steps"], rng=seed)
                for th, cap, opts, seed in calls]
    return run, len(calls)


def _pg(smoke: bool):
    import rlscale.verification._gaussian_reward_law as rv

    st = dict(rv._SETTINGS["quick"])
    if smoke:
        st.update(sub_ns=(2, 8), pg_pools=4, pg_steps=40)
    sm = np.repeat(np.array(st["sub_m"]), 4)
    sk = np.tile(np.geomspace(0.01, 10.0, 4), len(st["sub_m"]))

    def run():
        return rv._pg_rows(sm, sk, st, np.random.default_rng(11))
    return run


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.tobytes() == b.tobytes()
    return a == b


def _case(name: str, run, kind: str, peer_label: str, repeats: int) -> Case:
    cpu: dict[str, list[float]] = {"ours": [], "peer": []}
    out: dict[str, object] = {}

    def timed(who: str):
        def call():
            start = time.process_time()
            if who == "ours":
                out[who] = run()
            else:
                with _peer(kind):
                    out[who] = run()
            cpu[who].append(time.process_time() - start)
        return call

    def extra():
        # The harness's untimed warm-up call is the first entry: left out.
        o, p = statistics.median(cpu["ours"][1:]), statistics.median(cpu["peer"][1:])
        return {"cpu": f"ours {o:.3f} s, peer {p:.3f} s, ratio {p / o:.2f}x (CPU seconds, "
                       f"median of {len(cpu['ours']) - 1})",
                "identical": _same(out["ours"], out["peer"])}

    return Case(name, timed("ours"), timed("peer"), peer_label=peer_label, extra=extra,
                repeats=repeats, independent=False)


def cases(smoke: bool) -> list[Case]:
    reps = 1 if smoke else 3
    gold, n_calls = _gold(smoke)
    return [
        _case("inference step (ground_inference)", _inference(smoke), "rollouts",
              "ours before: the per-walker rollout loop", reps),
        _case(f"gold_gains x{n_calls} (trainer --quick seed)", gold, "gold",
              "ours before: dense soft VI / evaluate / best-of-n", reps),
        _case("_pg_rows (reward law --quick)", _pg(smoke), "pg",
              "ours before: the kl_bandit_pg loop", reps),
    ]
