"""Training speed with the shared-backbone policy: gridworld and memory family, GRPO and CoPE.

Four cases, each in environment steps of training per second (world
generation and held-out evaluation included; one BLAS thread, as the
trainer runs):

* GRPO and CoPE with the backbone policy (32 tanh units) on the 8x8
  generated gridworld (the state-table collector), against a Python loop
  over Gymnasium's ``FrozenLake-v1`` doing the same number of steps with
  no learning at all;
* GRPO and CoPE with the backbone on the memory family at context 4 (the
  windowed collector), against a plain numpy GRPO written here from the
  problem — its own corridor generator, frame-stacked dense features
  ``(steps × c·F) @ W₁``, one input row per step, the same MLP, batch and
  epochs — run until it has taken as many environment steps as ours.

The small configuration of issue 27's speed goal (≥ 1e6 env steps/s on two
cores) is the gridworld GRPO case; ``extra`` reports the CPU seconds and the
load, since the machine is shared.
"""

from __future__ import annotations

import os
import resource

import numpy as np

from benchmarks._harness import Case
from benchmarks.bench_env_steps import _gym_loop


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


# ---------------------------------------------------------------------------- the peer
class DenseCorridorGRPO:
    """GRPO on cue corridors with a frame-stacked dense MLP: the straightforward numpy
    implementation (no observation table, no shared windows), written from the problem.

    Corridor of ``length`` cells, a sign per cell (the action that moves on), a cue shown at
    the first step and answered at the junction (reward 1 if the action equals the cue);
    lags ``P(ℓ) ∝ ℓ^(−1.5)``; 4 texture bits per cell.  Features per observation: sign (4),
    junction (1), cue (4), texture (4), bias (1).
    """

    def __init__(self, n_env: int, tasks: int, k: int, per_update: int, context: int,
                 length: int = 16, hidden: int = 32, lr: float = 0.02, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.rng, self.L, self.c, self.k, self.B = rng, length, context, k, per_update
        self.signs = rng.integers(0, 4, (n_env, length))
        self.tex = rng.random((n_env, length + 1, 4)) < 0.5
        T = n_env * tasks
        self.env = np.repeat(np.arange(n_env), tasks)
        self.cue = rng.integers(0, 4, T)
        p = np.arange(1, length + 1, dtype=float) ** -1.5
        self.lag = 1 + rng.choice(length, T, p=p / p.sum())
        self.F = 14
        d = self.F * context
        self.W1 = rng.normal(0, np.sqrt(2 / (d + hidden)), (d, hidden))
        self.b1, self.W2, self.b2 = np.zeros(hidden), np.zeros((hidden, 4)), np.zeros(4)
        self.params = [self.W1, self.b1, self.W2, self.b2]
        self.m = [np.zeros_like(x) for x in self.params]
        self.v = [np.zeros_like(x) for x in self.params]
        self.t, self.lr, self.max_steps, self.T = 0, lr, 4 * length, T

    def _obs(self, env, pos, cue, first):
        n = env.size
        o = np.zeros((n, self.F))
        corr = pos < self.L
        o[np.flatnonzero(corr), self.signs[env[corr], pos[corr]]] = 1.0
        o[~corr, 4] = 1.0
        o[np.flatnonzero(first), 5 + cue[first]] = 1.0
        o[:, 9:13] = self.tex[env, pos]
        o[:, 13] = 1.0
        return o

    def _forward(self, x):
        h = np.tanh(x @ self.W1 + self.b1)
        z = h @ self.W2 + self.b2
        z -= z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        return h, logp

    def update(self) -> int:
        tasks = self.rng.choice(self.T, self.B, replace=False)
        task = np.repeat(tasks, self.k)
        env, cue = self.env[task], self.cue[task]
        pos = self.L - self.lag[task]
        N = task.size
        live = np.arange(N)
        stack = np.zeros((N, self.c, self.F))
        xs, acts, trajs = [], [], []
        reward = np.zeros(N)
        for step in range(self.max_steps):
            stack[:, 1:] = stack[:, :-1]
            stack[:, 0] = self._obs(env, pos, cue, np.full(live.size, step == 0))
            x = stack.reshape(live.size, -1)
            _, logp = self._forward(x)
            u = self.rng.random(live.size)[:, None]
            a = (u > np.cumsum(np.exp(logp), axis=1)[:, :3]).sum(axis=1)
            xs.append(x.copy())
            acts.append(a)
            trajs.append(live)
            at_j = pos == self.L
            reward[live[at_j & (a == cue)]] = 1.0
            fwd = ~at_j & (a == self.signs[env, np.minimum(pos, self.L - 1)])
            pos = pos + fwd
            keep = ~at_j
            live, env, cue, pos, stack = live[keep], env[keep], cue[keep], pos[keep], stack[keep]
            if live.size == 0:
                break
        X, A, J = np.concatenate(xs), np.concatenate(acts), np.concatenate(trajs)
        r = reward.reshape(self.B, self.k)
        adv = ((r - r.mean(1, keepdims=True)) / (r.std(1, keepdims=True) + 1e-6)).ravel()
        length = np.bincount(J, minlength=N)
        w = adv[J] / (N * length[J])
        _, logp_old = self._forward(X)
        onehot = np.eye(4)[A]
        for _ in range(2):  # GRPO's two epochs of the clipped surrogate
            h, logp = self._forward(X)
            rho = np.exp(logp[np.arange(A.size), A] - logp_old[np.arange(A.size), A])
            live_grad = np.where(w > 0, rho < 1.2, rho > 0.8)
            g = (w * rho * live_grad)[:, None] * (onehot - np.exp(logp))
            dh = (g @ self.W2.T) * (1 - h * h)
            grads = [X.T @ dh, dh.sum(0), h.T @ g, g.sum(0)]
            self.t += 1
            for p, m, v, gr in zip(self.params, self.m, self.v, grads):
                m *= 0.9
                m += 0.1 * gr
                v *= 0.999
                v += 0.001 * gr * gr
                p += self.lr * (m / (1 - 0.9**self.t)) / (np.sqrt(v / (1 - 0.999**self.t))
                                                          + 1e-8)
        return int(A.size)


def _peer(steps: int, **kw):
    def run() -> None:
        from threadpoolctl import threadpool_limits

        agent = DenseCorridorGRPO(**kw)
        done = 0
        with threadpool_limits(limits=1, user_api="blas"):  # one BLAS thread, as ours
            while done < steps:
                done += agent.update()

    return run


def _timed(cfg):
    """A call of ``train(cfg)`` and a record of its CPU seconds per env step."""
    from rlscale.simulate import train

    record: dict[str, float] = {}

    def run() -> None:
        start = _cpu()
        res = train(cfg)
        record["cpu_env_steps_per_s"] = res.env_steps / (_cpu() - start)

    return run, record


def cases(smoke: bool) -> list[Case]:
    from rlscale.simulate import TrainConfig, train

    big = ({"n_environments": 8, "tasks_per_environment": 4, "trajectories_per_task": 8,
            "tasks_per_step": 16, "epochs": 1} if smoke else
           {"n_environments": 128, "tasks_per_environment": 8, "trajectories_per_task": 32,
            "tasks_per_step": 256, "epochs": 2})
    grid = {**big, "policy": "backbone", "grid_size": 8, "eval_environments": 16}
    memory = {**big, "env": "memory", "memory_length": 16, "lag_exponent": 0.5,
              "slippery": 0.0, "context": 4, "lr": 0.02, "eval_environments": 8,
              "eval_episodes": 8}
    out = []
    for label, fields in (("grid 8x8 GRPO", grid), ("grid 8x8 CoPE", {**grid, "algorithm": "cope"}),
                          ("memory c=4 GRPO", memory),
                          ("memory c=4 CoPE", {**memory, "algorithm": "cope"})):
        cfg = TrainConfig.from_dict(fields)
        steps = train(cfg).env_steps
        ours, record = _timed(cfg)
        if fields.get("env") == "memory":
            peer = _peer(steps, n_env=cfg.n_environments, tasks=cfg.tasks_per_environment,
                         k=cfg.trajectories_per_task, per_update=min(cfg.tasks_per_step,
                                                                     cfg.tasks),
                         context=cfg.context)
            peer_label = "dense frame-stacked numpy GRPO, same batch, same env steps"
        else:
            peer, peer_label = _gym_loop(steps), "gymnasium loop, same steps, no learning"

        def extra(record=record) -> dict[str, str]:
            return {"CPU": f"{record.get('cpu_env_steps_per_s', float('nan')):.3g} env steps "
                           f"per CPU second (ours, last repeat); load {os.getloadavg()[0]:.1f}"}

        out.append(Case(f"backbone {label} [{steps}]", ours, peer, peer_label, work=steps,
                        work_unit="env steps", extra=extra, repeats=1 if smoke else 3))
    return out
