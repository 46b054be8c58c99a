"""Rollouts of a policy that reads a window of its last ``c`` observations.

The gridworld trainer tabulates a Markov policy once per update (one row per
state, :mod:`rlscale.simulate._rollout`).  A policy with a context of ``c > 1``
observations, or one on the partially observed memory family
(:mod:`rlscale.simulate._memory`), acts on histories, which cannot be
tabulated; here the policy is evaluated at every step for every live
trajectory at once:

* each copy keeps the rows of its last ``c`` observations (``-1``, read as a
  zero embedding, before the episode began) — the *context*;
* the backbone's first layer is the sum of ``c`` rows of the per-slot
  embedding tables ``E_j = Φ W₁[j]``, computed once per rollout (the policy is
  fixed while it collects), so one step costs ``c·H`` additions plus the
  action head: compute grows linearly with the context;
* the recorded batch has one input row per *distinct* window (the
  :class:`~rlscale.simulate._backbone.Window`; ``Batch.row`` maps each step to
  its window), which is all the algorithms need: their losses are sums over
  (row, action) pairs, so GRPO, RLOO, RLDS and CoPE run unchanged on it, at a
  cost that follows the distinct windows rather than the steps.

Steppers (what moves the copies) report each live copy's observation row:
:class:`~rlscale.simulate._memory.MemoryStepper` for the memory family and
:class:`GridStepper` for gridworld tasks read through a window (the grid's
state-feature table is the observation table).  Steps are recorded one time
step at a time, so each trajectory's steps appear in time order (what
:func:`~rlscale.simulate._cope.forecast_targets` relies on).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from rlscale.simulate._backbone import BackbonePolicy, Window
from rlscale.simulate._gridworld import N_STAGES, GridWorld
from rlscale.simulate._policies import log_probs
from rlscale.simulate._rollout import Batch
from rlscale.simulate._vec_env import Walkers

__all__ = ["GridStepper", "Stepper", "windowed_rollout", "windowed_success"]


class Stepper(Protocol):
    """Moves many copies at once: their observation rows, a step, dropping finished ones."""

    stage: np.ndarray

    def obs(self) -> np.ndarray: ...

    def step(self, action: np.ndarray, rng: np.random.Generator
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Apply one action per live copy; return ``(reward, success, terminated)``."""

    def keep(self, mask: np.ndarray) -> None: ...


class GridStepper:
    """Gridworld copies (:class:`~rlscale.simulate.VecGridEnv`'s walkers) reporting state rows.

    ``row_base[i] + stage·S² + cell`` is copy ``i``'s row in the batch's
    state-feature table (:func:`~rlscale.simulate._rollout.state_rows`).
    Completed subtasks are recorded in ``completed`` (copy × stage) for RLDS.
    """

    def __init__(self, world: GridWorld, task_ids: Any, row_base: Any) -> None:
        self.walkers = Walkers(world, task_ids)
        self.S2 = world.size ** 2
        self.rbase = np.asarray(row_base, dtype=np.int64)
        self.copy = np.arange(self.rbase.size)
        self.completed = np.zeros((self.rbase.size, N_STAGES), bool)

    @property
    def stage(self) -> np.ndarray:
        return self.walkers.stage

    def obs(self) -> np.ndarray:
        return self.rbase + self.walkers.stage * self.S2 + self.walkers.cell

    def step(self, action: np.ndarray, rng: np.random.Generator
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        success, term, advanced, leaked = self.walkers.step(action, rng)
        if advanced.size:
            self.completed[self.copy[advanced], self.walkers.stage[advanced] - 1] = True
        self.completed[self.copy[success], N_STAGES - 1] = True
        reward = success if leaked is None else success | leaked
        return reward, success, term

    def keep(self, mask: np.ndarray) -> None:
        self.walkers.keep(mask)
        self.rbase, self.copy = self.rbase[mask], self.copy[mask]


def _embedding_rows(policy: BackbonePolicy, table: np.ndarray) -> np.ndarray:
    """Per-slot embeddings with a zero row for padding: ``((c·(n_obs+1)), H)``."""
    E = policy.embeddings(table)
    c, n_obs, H = E.shape
    padded = np.zeros((c, n_obs + 1, H))
    padded[:, :n_obs] = E
    return padded.reshape(c * (n_obs + 1), H)


def _act(policy: BackbonePolicy, emb: np.ndarray, window: np.ndarray, offsets: np.ndarray,
         radix: int | None, rng: np.random.Generator) -> np.ndarray:
    """Sample one action per row from the policy on the padded window ids.

    Copies of a task that share a window share its action probabilities, so
    the backbone runs once per distinct window of the step (found by one sort
    of integer keys when a window fits in 63 bits in base ``radix``).
    """
    inverse = None
    if radix is not None and window.shape[0] > 64:
        _, first, inverse = np.unique(_keys(window, radix), return_index=True,
                                      return_inverse=True)
        window = window[first]
    flat = window + offsets
    p = policy.params
    pre = emb[flat[:, 0]]
    for j in range(1, flat.shape[1]):
        pre += emb[flat[:, j]]
    pre += p["b1"]
    h = pre if policy.linear else np.tanh(pre)
    z = h @ p["W2"] + p["b2"]
    z -= np.maximum(np.maximum(z[:, 0], z[:, 1]), np.maximum(z[:, 2], z[:, 3]))[:, None]
    e = np.exp(z)
    c0 = e[:, 0]
    c1 = c0 + e[:, 1]
    c2 = c1 + e[:, 2]
    c3 = c2 + e[:, 3]
    if inverse is not None:
        inverse = inverse.ravel()
        c0, c1, c2, c3 = c0[inverse], c1[inverse], c2[inverse], c3[inverse]
    # Inverse-CDF sampling: a = #{j < 3 : u > P(a <= j)}.
    u = rng.random(c3.size) * c3
    action = (u > c0).astype(np.int64)
    action += u > c1
    action += u > c2
    return action


def windowed_rollout(stepper: Stepper, n_tasks: int, k: int, policy: BackbonePolicy,
                     table: np.ndarray, max_steps: int, rng: np.random.Generator,
                     record: bool = True) -> tuple[Window, np.ndarray, Batch]:
    """Run the ``n_tasks·k`` copies of ``stepper`` to the end with ``policy``'s window.

    Copy ``i`` belongs to task ``i // k``.  Returns the distinct windows of the
    recorded steps (``record=False``: an empty one, for evaluation), the
    log-probabilities of the policy on those windows (computed as the update
    will recompute them) and the :class:`Batch` (one input row per distinct
    window; ``Batch.row`` maps each step to its window).
    """
    N = n_tasks * k
    c = policy.context
    n_obs = table.shape[0]
    emb = _embedding_rows(policy, table)
    offsets = np.arange(c) * (n_obs + 1)
    hist = np.full((N, c), n_obs, np.int64)  # n_obs: the zero padding row
    radix = _radix(c, n_obs)
    tid = np.arange(N)
    ids_l, acts_l, tids_l, stages_l = [], [], [], []
    reward = np.zeros(N)
    done = np.zeros(N, bool)
    for _ in range(max_steps):
        hist[:, 1:] = hist[:, :-1]
        hist[:, 0] = stepper.obs()
        action = _act(policy, emb, hist, offsets, radix, rng)
        if record:
            ids_l.append(hist.copy())
            acts_l.append(action)
            tids_l.append(tid)
            stages_l.append(stepper.stage.copy())
        paid, success, term = stepper.step(action, rng)
        if paid.any():
            reward[tid[paid]] = 1.0
            done[tid[success]] = True
        if term.any():
            keep = ~term
            stepper.keep(keep)
            tid, hist = tid[keep], hist[keep]
            if tid.size == 0:
                break
    if not record:
        empty = Window(np.zeros((0, c), np.int64), table)
        return empty, np.zeros((0, 4)), _batch(np.zeros(0, np.int64), np.zeros(0, np.int64),
                                               np.zeros(0, np.int64), reward, done, n_tasks, k,
                                               None)
    unique, row = _distinct_rows(np.concatenate(ids_l), n_obs)
    window = Window(np.where(unique == n_obs, -1, unique), table)
    logp_old, _ = log_probs(policy, window)
    batch = _batch(np.concatenate(acts_l), np.concatenate(tids_l), np.concatenate(stages_l),
                   reward, done, n_tasks, k, getattr(stepper, "completed", None), row)
    return window, logp_old, batch


def _distinct_rows(ids: np.ndarray, n_obs: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct windows of ``ids`` (rows) and each step's index among them.

    Steps whose windows are equal have equal inputs, so the algorithms' sums over
    (row, action) pairs are unchanged when they share one input row — the state
    table's economy, for histories: the update's cost follows the distinct windows,
    not the steps.  A window is one integer in base ``n_obs + 1`` when that fits
    in 63 bits, else rows are compared by ``np.unique(axis=0)``.
    """
    radix = _radix(ids.shape[1], n_obs)
    if radix is not None:
        _, first, row = np.unique(_keys(ids, radix), return_index=True, return_inverse=True)
        return ids[first], row.ravel()
    unique, row = np.unique(ids, axis=0, return_inverse=True)
    return unique, row.ravel()


def _radix(context: int, n_obs: int) -> int | None:
    """Base ``n_obs + 1`` (the ids and the padding) if a window fits one int64, else None."""
    return n_obs + 1 if context * np.log2(n_obs + 1.0) < 62 else None


def _keys(ids: np.ndarray, radix: int) -> np.ndarray:
    """Each window (a row of padded ids) as one integer in base ``radix``."""
    key = ids[:, 0].copy()
    for j in range(1, ids.shape[1]):
        key *= radix
        key += ids[:, j]
    return key


def _batch(action: np.ndarray, traj: np.ndarray, stage: np.ndarray, reward: np.ndarray,
           success: np.ndarray, n_tasks: int, k: int, completed: np.ndarray | None,
           row: np.ndarray | None = None) -> Batch:
    """The recorded steps as a :class:`Batch`; ``row``: each step's input row (default:
    one per step)."""
    N = n_tasks * k
    reached = np.zeros((N, N_STAGES), bool)
    reached[traj, stage] = True
    if completed is None:  # one subtask (the memory family): completed on success
        completed = np.zeros((N, N_STAGES), bool)
        completed[:, N_STAGES - 1] = success
    if row is None:
        row = np.arange(action.size)
    n_rows = int(row.max()) + 1 if row.size else 0
    return Batch(row=row, action=action, traj=traj, stage=stage, reward=reward,
                 success=success, length=np.bincount(traj, minlength=N), reached=reached,
                 completed=completed, n_tasks=n_tasks, k=k, n_rows=n_rows, S2=1)


def windowed_success(stepper: Stepper, n_tasks: int, episodes: int, policy: BackbonePolicy,
                     table: np.ndarray, max_steps: int, rng: np.random.Generator
                     ) -> np.ndarray:
    """Monte Carlo success of each task over ``episodes`` rollouts (the stepper's copies)."""
    _, _, batch = windowed_rollout(stepper, n_tasks, episodes, policy, table, max_steps, rng,
                                   record=False)
    return batch.group(batch.reward).mean(axis=1)
