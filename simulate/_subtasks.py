"""Subtasks as turns: sampling a policy turn by turn under an inference budget.

A key → door → goal task is a three-turn agent task: turn 1 starts at the
task's start and must reach the key, turn 2 starts at the key and must reach
the door, turn 3 starts at the door and must reach the goal.  A *candidate*
for a turn is one rollout of the policy from the turn's start cell (a
checkpoint) for at most ``horizon`` actions; it is correct when it reaches
the turn's target before a hole or the time limit.  A *verifier* labels each
candidate: perfectly, or with known false-positive rate ``fpr`` (accepts an
incorrect candidate) and false-negative rate ``fnr`` (rejects a correct one).

Exact per-turn success.  The rollouts of one turn are iid, so the per-candidate
success q of a turn is the finite-horizon reach probability of the policy's
Markov chain on the stage's cells, by backward induction (Puterman 1994, §4.5):
V_h(x) = Σ_a π(a|x) Σ_{x'} P(x'|x, a)·[1 if x' is the target, 0 if x' ends the
episode, V_{h−1}(x') else], V_0 = 0, q = V_H(start).  The door blocks moves
while the key is not held, exactly as in :mod:`rlscale.simulate._value_iteration`.

Monte Carlo execution (:func:`run_turn_episodes`) draws real rollouts of the
policy one candidate at a time for many episodes at once, applies the
verifier's noise, and follows either a static plan (at most ``caps[t]``
candidates at turn t; unused budget is lost) or the adaptive policy (the
remaining budget carries over; a ``commit`` table says when to commit a held
rejected candidate).  Failure models as in ``rlscale.theory._turns``:
``terminal`` (commit the first accepted candidate, or at the cap a held
rejected one; a wrong commit ends the episode) and ``retried`` (only accepted
candidates are committed; a wrong one is observed and the turn continues).

A turn's rollouts are simulated in batches of at least 4,096 on lookup tables of
its (task, stage) — the policy's partial sums, the landing cell per action and
slip turn, each cell's outcome — carrying only the walkers still running.
Measured here: the report's inference step (``ground_inference``, 37 calls)
spends 1.2–1.5 s of CPU in total, against 2.8–3.8 s with the per-walker loop it
replaced, whose random stream and results it keeps bit for bit
(``python -m benchmarks sim_loops``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import norm

from rlscale.simulate._gridworld import MAX_STEPS, N_STAGES, GridWorld, as_generator
from rlscale.simulate._value_iteration import MAX_DP_WORK, _landing_parts
from rlscale.theory._result import Result
from rlscale.theory._validation import check_positive_int, check_real, check_scalar

#: Largest count of successes/trials (exact in float64) and of Monte Carlo episodes.
MAX_TRIALS = 2**53
MAX_EPISODES = 10**7


def _check_world(world: Any) -> GridWorld:
    if not isinstance(world, GridWorld):
        raise TypeError(f"world must be a GridWorld; got world={world!r:.80}")
    return world


def _check_horizon(world: GridWorld, horizon: Any) -> int:
    """Actions per rollout, default ``world.max_steps``, bounded so one sweep stays ~10 s."""
    H = world.max_steps if horizon is None else check_positive_int(
        "horizon", horizon, maximum=MAX_STEPS)
    work = H * world.n_tasks * world.size**2
    if work > MAX_DP_WORK:
        raise ValueError(f"horizon·tasks·cells must be <= {MAX_DP_WORK:.0e}; got horizon={H} "
                         f"x {world.n_tasks} tasks x {world.size**2} cells")
    return H


def _check_policy(world: GridWorld, policy: Any) -> np.ndarray:
    shape = (world.n_tasks, N_STAGES, world.size**2, 4)
    pol = check_real("policy", policy, low=0.0, high=1.0)
    if pol.shape != shape:
        raise ValueError(f"policy must have shape {shape}; got {pol.shape}")
    total = pol.sum(axis=-1)
    if np.any(np.abs(total - 1.0) > 1e-9):
        raise ValueError(f"rows of policy must sum to 1 (within 1e-9); got sums from "
                         f"{total.min()} to {total.max()}")
    return pol

__all__ = ["EpisodeOutcome", "run_turn_episodes", "subtask_starts", "subtask_success",
           "trained_policy_table", "wilson_interval"]


def trained_policy_table(result: Any, world: GridWorld) -> np.ndarray:
    """Action probabilities (T, 3, S², 4) of a :class:`TrainResult`'s policy on ``world``."""
    from rlscale.simulate._policies import make_policy
    from rlscale.simulate._train import TrainResult, _policy_table

    if not isinstance(result, TrainResult):
        raise TypeError(f"result must be a TrainResult; got result={result!r:.80}")
    if result.config.windowed:
        raise ValueError(f"result's policy reads a window of observations (env="
                         f"{result.config.env!r}, context={result.config.context}): it acts on "
                         "histories and has no table over gridworld states")
    _check_world(world)
    policy = make_policy(result.config.policy, np.random.default_rng(0), result.config.hidden)
    policy.params = {k: np.array(v, dtype=np.float64) for k, v in result.params.items()}
    return _policy_table(policy, world)


def subtask_starts(world: GridWorld) -> np.ndarray:
    """Start cell of each (task, stage): the task's start, then the previous target.

    Stages a task does not have are ``-1``.

    Examples
    --------
    >>> from rlscale.simulate import world_from_text
    >>> w = world_from_text(["SKW", "FHD", "FFG"])
    >>> subtask_starts(w).tolist()      # start 0, key at 1, door at 5
    [[0, 1, 5]]
    """
    _check_world(world)
    starts = np.full((world.n_tasks, N_STAGES), -1, dtype=np.int64)
    first = world.start_stage
    for s in range(N_STAGES):
        at_start = first == s
        later = first < s
        starts[at_start, s] = world.start[at_start]
        starts[later, s] = world.targets[later, s - 1]
    return starts


def _parts(world: GridWorld):
    nxt, _, terminal, reach = _landing_parts(world, "success")
    return nxt, terminal & ~reach, reach


def subtask_success(world: GridWorld, policy: Any, *, horizon: int | None = None) -> np.ndarray:
    """Exact probability q[task, stage] that one rollout from the stage's start reaches its
    target within ``horizon`` actions (default ``world.max_steps``); 1 for absent stages.

    Examples
    --------
    >>> import numpy as np
    >>> from rlscale.simulate import world_from_text
    >>> w = world_from_text(["SKF", "FFD", "FFG"], slippery=False, max_steps=4)
    >>> right = np.zeros((1, 3, 9, 4)); right[..., 2] = 1.0   # always move right
    >>> subtask_success(w, right).tolist()                    # key yes, door no, goal no
    [[1.0, 0.0, 0.0]]
    """
    H = _check_horizon(_check_world(world), horizon)
    T, S2 = world.n_tasks, world.size**2
    pol = _check_policy(world, policy)
    nxt, dead, reach = _parts(world)
    slip = world.slippery[world.task_env][:, None, None, None]
    opposite = np.array([2, 3, 0, 1])
    V = np.zeros((T, N_STAGES, S2))
    t_idx = np.arange(T)[:, None, None, None]
    s_idx = np.arange(N_STAGES)[None, :, None, None]
    for _ in range(H):
        land = np.where(reach, 1.0, np.where(dead, 0.0, V))
        d = land[t_idx, s_idx, nxt]  # (T, 3, S², 4)
        total = d.sum(axis=-1, keepdims=True)
        Q = np.where(slip, (total - d[..., opposite]) / 3.0, d)
        V = np.sum(pol * Q, axis=-1)
    starts = subtask_starts(world)
    out = np.ones((T, N_STAGES))
    for s in range(N_STAGES):
        have = starts[:, s] >= 0
        out[have, s] = V[np.flatnonzero(have), s, starts[have, s]]
    return out


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (Wilson 1927).

    Examples
    --------
    >>> [round(v, 4) for v in wilson_interval(50, 100)]
    [0.4038, 0.5962]
    """
    n = check_positive_int("trials", trials, maximum=MAX_TRIALS)
    k = check_positive_int("successes", successes, minimum=0, maximum=MAX_TRIALS)
    if k > n:
        raise ValueError(f"successes must be <= trials ({n}); got successes={k}")
    z = float(norm.ppf(0.5 + check_scalar("confidence", confidence, low=0.0, high=1.0,
                                          low_open=True, high_open=True) / 2))
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


@dataclass(frozen=True)
class EpisodeOutcome(Result):
    """Monte Carlo outcome of many episodes: success and budget used per episode."""

    success: np.ndarray
    used: np.ndarray

    @property
    def rate(self) -> float:
        return float(self.success.mean())

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        return wilson_interval(int(self.success.sum()), int(self.success.size), confidence)


def _rollout_reaches(cdf, moves, status, start, m, horizon, rng):
    """``m`` rollouts of one (task, stage) from cell ``start``: did each reach the target?

    ``cdf`` (3, S²) holds the first three partial sums of the policy per cell, ``moves`` the
    landing cell per ``cell·12 + action·3 + turn + 1`` (turn −1, 0, +1: slipping to either
    perpendicular move; without slipping every turn lands as the intended move), and
    ``status`` per cell 0 (continue), 1 (target reached) or 2 (the episode ends).  Only the
    walkers still running are carried; each step draws ``u`` for the action (inverse CDF)
    and then the slip turn for every one of them, in that order, so the random stream is
    the one the earlier per-walker loop consumed.
    """
    hit = np.zeros(m, dtype=bool)
    who = np.arange(m)
    cell = np.full(m, start, dtype=np.int64)
    c0, c1, c2 = cdf
    for _ in range(horizon):
        k = who.size
        if k == 0:
            break
        u = rng.random(k)
        # Inverse CDF column by column (numpy reduces a length-4 axis far slower).
        a = (u > c0[cell]).astype(np.int64)
        a += u > c1[cell]
        a += u > c2[cell]
        turn = rng.integers(-1, 2, k)
        new = moves[cell * 12 + a * 3 + turn + 1]
        st = status[new]
        hit[who[st == 1]] = True
        keep = st == 0
        who, cell = who[keep], new[keep]
    return hit


def _rollout_tables(world, pol, nxt, dead, reach, task, stage):
    """The lookup tables :func:`_rollout_reaches` walks for one (task, stage)."""
    S2 = world.size**2
    cdf = np.cumsum(pol[task, stage], axis=-1)[:, :3].T.copy()  # (3, S²)
    a = np.arange(4)
    turned = (a[:, None] + np.arange(-1, 2)[None, :]) % 4  # (4, 3): intended + turn
    if not world.slippery[world.task_env[task]]:
        turned = np.repeat(a[:, None], 3, axis=1)
    moves = nxt[task, stage][:, turned].reshape(S2 * 12)
    status = np.where(reach[task, stage], 1, np.where(dead[task, stage], 2, 0))
    return cdf, moves, status


def _check_turn_index(name: str, values: Any, n: int) -> np.ndarray:
    arr = check_real(name, values, low=0.0, high=float(n - 1)).ravel()
    if np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must hold integers in [0, {n}); got {values!r:.80}")
    return arr.astype(np.int64)


def run_turn_episodes(world: GridWorld, policy: Any, turn_tasks: Any, turn_stages: Any, *,
                      budget: int, caps: Any = None, commit: Any = None, fpr: float = 0.0,
                      fnr: float = 0.0, failures: str = "terminal", horizon: int | None = None,
                      episodes: int = 2000, rng: Any = None) -> EpisodeOutcome:
    """Play ``episodes`` multi-turn episodes with real rollouts of ``policy``.

    Turn t is stage ``turn_stages[t]`` of task ``turn_tasks[t]``; each candidate
    costs one unit.  Give ``caps`` (candidates per turn, a static plan) or
    ``commit`` (shape (T, budget + 1), the adaptive policy's fallback rule;
    without either the adaptive rule "never commit a rejected candidate while
    budget remains" is used).  Same seed, same outcome.

    Examples
    --------
    >>> import numpy as np
    >>> from rlscale.simulate import world_from_text
    >>> w = world_from_text(["SKF", "FFD", "FFG"], slippery=False, max_steps=4)
    >>> right = np.zeros((1, 3, 9, 4)); right[..., 2] = 1.0
    >>> out = run_turn_episodes(w, right, [0], [0], budget=3, caps=[3], episodes=10, rng=0)
    >>> out.rate, out.used.tolist() == [1] * 10      # stops at the first verified success
    (1.0, True)
    """
    H = _check_horizon(_check_world(world), horizon)
    B = check_positive_int("budget", budget, maximum=MAX_EPISODES)
    N = check_positive_int("episodes", episodes, maximum=MAX_EPISODES)
    if N * B > MAX_EPISODES * 10:
        raise ValueError(f"episodes·budget must be <= {MAX_EPISODES * 10:.0e} candidates; got "
                         f"episodes={N} x budget={B}")
    tasks = _check_turn_index("turn_tasks", turn_tasks, world.n_tasks)
    stages = _check_turn_index("turn_stages", turn_stages, N_STAGES)
    if tasks.shape != stages.shape or tasks.size == 0:
        raise ValueError("turn_tasks and turn_stages must be equal-length, non-empty")
    if np.any(stages < world.start_stage[tasks]):
        raise ValueError("turn_stages must be stages their task has (>= the task's first "
                         "stage)")
    if not isinstance(failures, str) or failures not in ("terminal", "retried"):
        raise ValueError(f"failures must be 'terminal' or 'retried'; got failures={failures!r}")
    fp = check_scalar("fpr", fpr, low=0.0, high=1.0)
    fn = check_scalar("fnr", fnr, low=0.0, high=1.0)
    gen = as_generator(rng)
    T = tasks.size
    cap = None
    if caps is not None:
        cap = check_real("caps", caps, low=0.0, high=float(B)).ravel()
        if cap.shape != (T,) or np.any(cap != np.round(cap)):
            raise ValueError(f"caps must be {T} integers (one per turn) in [0, budget={B}]; "
                             f"got {caps!r:.80}")
        cap = cap.astype(np.int64)
    if commit is not None:
        if not isinstance(commit, np.ndarray | list | tuple):
            raise TypeError(f"commit must be a boolean array; got commit={commit!r:.80}")
        commit = np.asarray(commit)
        if commit.dtype.kind != "b":
            raise TypeError(f"commit must be a boolean array; got dtype {commit.dtype}")
        if commit.shape != (T, B + 1):
            raise ValueError(f"commit must have shape {(T, B + 1)} (turns, budget + 1); got "
                             f"{commit.shape}")
    pol = _check_policy(world, policy)
    nxt, dead, reach = _parts(world)
    starts = subtask_starts(world)
    turn = np.zeros(N, dtype=np.int64)
    left = np.full(N, B, dtype=np.int64)     # remaining budget (adaptive)
    drawn = np.zeros(N, dtype=np.int64)      # candidates drawn at the current turn
    used = np.zeros(N, dtype=np.int64)
    hold = np.zeros(N, dtype=bool)           # holding a rejected candidate
    hold_ok = np.zeros(N, dtype=bool)        # ... which is in fact correct
    active = np.ones(N, dtype=bool)
    success = np.zeros(N, dtype=bool)

    # Candidates of one turn are iid rollouts, so each turn keeps a buffer of real rollout
    # outcomes simulated in large batches and hands them out in order.
    buffers: list[np.ndarray] = [np.empty(0, dtype=bool) for _ in range(T)]
    tables: list[Any] = [None] * T

    def draw(u: int, count: int) -> np.ndarray:
        if buffers[u].size < count:
            m = max(count - buffers[u].size, 4096)
            if tables[u] is None:
                tables[u] = _rollout_tables(world, pol, nxt, dead, reach, tasks[u], stages[u])
            fresh = _rollout_reaches(*tables[u], starts[tasks[u], stages[u]], m, H, gen)
            buffers[u] = np.concatenate([buffers[u], fresh])
        out, buffers[u] = buffers[u][:count], buffers[u][count:]
        return out

    def finish_turn(idx: np.ndarray, ok: np.ndarray) -> None:
        win, lose = idx[ok], idx[~ok]
        active[lose] = False
        turn[win] += 1
        drawn[win] = 0
        hold[win] = False
        done = win[turn[win] >= T]
        success[done] = True
        active[done] = False

    while active.any():
        # Resolve turns that cannot (or should not) draw: commit a held candidate or fail.
        for _ in range(T + 1):
            idx = np.flatnonzero(active)
            t = turn[idx]
            can = drawn[idx] < cap[t] if cap is not None else left[idx] >= 1
            stop = ~can
            if commit is not None:
                stop |= hold[idx] & commit[t, left[idx]]
            if failures == "retried":
                stop &= ~can  # retried turns never commit a rejected candidate
            idx = idx[stop]
            if idx.size == 0:
                break
            ok = hold[idx] & hold_ok[idx] if failures == "terminal" else np.zeros(idx.size, bool)
            finish_turn(idx, ok)
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        t = turn[idx]
        correct = np.empty(idx.size, dtype=bool)
        for u in np.unique(t):
            sel = np.flatnonzero(t == u)
            correct[sel] = draw(int(u), sel.size)
        u = gen.random(idx.size)
        accepted = np.where(correct, u >= fn, u < fp)
        drawn[idx] += 1
        left[idx] -= 1
        used[idx] += 1
        if failures == "terminal":
            acc = accepted
            finish_turn(idx[acc], correct[acc])
            rej = idx[~accepted]
            hold[rej] = True
            hold_ok[rej] = correct[~accepted]
        else:
            good = accepted & correct
            finish_turn(idx[good], np.ones(int(good.sum()), bool))
    return EpisodeOutcome(success=success, used=used)
