"""A memory family: cue corridors whose solution needs an observation seen ``lag`` steps earlier.

The gridworld family is fully observed: its best policy is Markov, so what an
agent keeps in context cannot matter there.  This family is the opposite, a
procedurally generated T-maze (Bakker 2002, "Reinforcement learning with long
short-term memory"; the classic test of memory in RL):

environment
    A corridor of ``length`` cells ending in a junction with four exits.  Each
    corridor cell shows a *sign* (which of the four actions moves forward from
    it; the other three leave the agent in place) and ``distractors`` random
    *texture* bits (fixed per environment, uninformative: what a policy trained
    on few environments can overfit to).  In a slippery environment a forward
    move fails (the agent stays) with probability 1/3.
task
    A *cue* (one of four) and a *lag*: the task starts ``lag`` cells before
    the junction, the cue is shown in the first observation only, and at the
    junction action ``cue`` pays 1, any other action 0; either ends the
    episode.  Lags follow a truncated discrete power law,
    ``P(lag = ℓ) ∝ ℓ^(−1−β)`` on ``[min_lag, length]`` (``β = lag_exponent``),
    so how often the cue lies beyond a window of ``c`` observations falls as a
    power of ``c`` (:mod:`rlscale.theory._context` derives the law).
trajectory
    At most ``max_steps`` actions (default ``4·length``); reward 1 on success.

An agent that keeps a **context** of its last ``c`` observations sees the cue
at the junction if it arrives within ``c − 1`` steps of the start.  Advancing
at every step and answering the cue when it is in view (guessing uniformly
otherwise) succeeds with probability :func:`reference_success`, exact by the
negative binomial law of the slips; the uniform policy's success is
:func:`uniform_success`.  The reference is not an upper bound: a policy may
also write the cue into its own trajectory (waiting a cue-dependent number of
steps, say) and read it back later — the environment as external memory.

Observations (``F = 11 + distractors`` features, :func:`observation_table`):
sign one-hot (4, zero at the junction), junction flag, cue one-hot (4, only
in the first observation), slippery flag, texture bits, bias.  Rows of a
batch's table: task-major blocks of ``length + 2`` rows — positions
``0..length`` (``length`` is the junction) without the cue, then the start
cell with its cue.

Diversity (as in :class:`~rlscale.simulate.GridFamily`): a base environment
is drawn from ``base_seed``; each drawn environment redraws each cell's sign
and texture, and its slipperiness, independently with probability
``diversity``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rlscale.simulate._backbone import MAX_CONTEXT
from rlscale.simulate._random import as_generator
from rlscale.theory._validation import check_positive_int, check_scalar

__all__ = ["MAX_LENGTH", "MemoryFamily", "MemoryStepper", "MemoryWorld", "observation_table",
           "reference_success", "uniform_success"]

#: Longest corridor (cells before the junction) and most distractor bits per cell.
MAX_LENGTH = 10_000
MAX_DISTRACTORS = 256
#: Most ``environments·(length + 1)`` cells of one drawn world.
MAX_WORLD_CELLS = 5 * 10**6
N_CUES = 4
SLIP = 1.0 / 3.0


@dataclass(frozen=True, eq=False)
class MemoryWorld:
    """Drawn cue-corridor environments and the tasks posed in them (structure of arrays).

    Attributes
    ----------
    signs : ndarray (E, L), int
        The forward action at each corridor cell.
    texture : ndarray (E, L + 1, D), bool
        Distractor bits of each cell (the junction included).
    slippery : ndarray (E,), bool
    task_env, cue, lag : ndarray (T,), int
        Environment, cue (0–3) and lag (start ``L − lag`` cells in) of each task.
    max_steps : int
    """

    signs: np.ndarray
    texture: np.ndarray
    slippery: np.ndarray
    task_env: np.ndarray
    cue: np.ndarray
    lag: np.ndarray
    max_steps: int

    @property
    def length(self) -> int:
        return int(self.signs.shape[1])

    @property
    def n_environments(self) -> int:
        return int(self.signs.shape[0])

    @property
    def n_tasks(self) -> int:
        return int(self.cue.shape[0])

    @property
    def n_features(self) -> int:
        return 11 + int(self.texture.shape[2])

    @property
    def rows_per_task(self) -> int:
        """Rows of one task's block in :func:`observation_table`."""
        return self.length + 2

    def select_tasks(self, ids: Any) -> MemoryWorld:
        """The same environments with only the tasks ``ids`` (in that order).

        Examples
        --------
        >>> world = MemoryFamily(length=3).sample(2, 2, rng=0)
        >>> sub = world.select_tasks([3, 0])
        >>> sub.n_tasks, sub.task_env.tolist()
        (2, [1, 0])
        """
        from rlscale.simulate._gridworld import _check_indices

        ids = np.asarray(ids)
        if ids.ndim != 1:
            raise ValueError(f"ids must be a 1-D array of task indices; got shape {ids.shape}")
        if ids.size or ids.dtype.kind not in "iu":
            _check_indices("ids", ids, self.n_tasks)
        return replace(self, task_env=self.task_env[ids], cue=self.cue[ids], lag=self.lag[ids])


def observation_table(world: MemoryWorld, task_ids: Any = None) -> np.ndarray:
    """Observation features of the tasks ``task_ids``: ``(len(ids)·(L+2), F)`` (float64).

    Examples
    --------
    >>> world = MemoryFamily(length=3, distractors=0).sample(1, 1, rng=0)
    >>> table = observation_table(world)
    >>> table.shape
    (5, 11)
    >>> int(table[3, 4]), table[4, 5:9].tolist() == np.eye(4)[world.cue[0]].tolist()
    (1, True)
    """
    ids = np.arange(world.n_tasks) if task_ids is None else np.asarray(task_ids, np.int64)
    L, D = world.length, world.texture.shape[2]
    env = world.task_env[ids]
    n = ids.size
    out = np.zeros((n, L + 2, 11 + D))
    out[:, :L, :4] = np.eye(4)[world.signs[env]]                 # sign one-hot
    out[:, L, 4] = 1.0                                          # junction flag
    start = L - world.lag[ids]
    out[:, L + 1, :4] = np.eye(4)[world.signs[env, start]]      # the start cell, with its cue
    out[:, L + 1, 5:9] = np.eye(4)[world.cue[ids]]
    out[:, :, 9] = world.slippery[env][:, None]
    out[:, :L + 1, 10:10 + D] = world.texture[env]
    out[:, L + 1, 10:10 + D] = world.texture[env, start]
    out[:, :, 10 + D] = 1.0
    return out.reshape(n * (L + 2), 11 + D)


@dataclass(frozen=True)
class MemoryFamily:
    """A distribution over cue corridors (see the module docstring).

    Parameters
    ----------
    length : int
        Corridor cells before the junction: the longest lag (``>= 1``).
    min_lag : int
        Shortest lag (``1 <= min_lag <= length``; ``min_lag = length`` gives
        every task the full corridor).
    lag_exponent : float
        ``β >= 0`` of ``P(lag = ℓ) ∝ ℓ^(−1−β)``.
    slippery : float
        Probability that an environment is slippery.
    distractors : int
        Random texture bits per cell.
    max_steps : int, optional
        Time limit; default ``4·length``.
    diversity : float
        In ``[0, 1]``: probability that each cell (and the slipperiness) is
        redrawn from the base environment.
    base_seed : int

    Examples
    --------
    >>> fam = MemoryFamily(length=6, lag_exponent=1.0)
    >>> world = fam.sample(3, 4, rng=0)
    >>> world.n_environments, world.n_tasks, fam.horizon
    (3, 12, 24)
    >>> bool(((world.lag >= 1) & (world.lag <= 6)).all())
    True
    """

    length: int = 8
    min_lag: int = 1
    lag_exponent: float = 1.0
    slippery: float = 0.5
    distractors: int = 4
    max_steps: int | None = None
    diversity: float = 1.0
    base_seed: int = 0

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        put("length", check_positive_int("length", self.length, maximum=MAX_LENGTH))
        put("min_lag", check_positive_int("min_lag", self.min_lag, maximum=self.length))
        put("lag_exponent", check_scalar("lag_exponent", self.lag_exponent, low=0.0,
                                         high=100.0))
        put("slippery", check_scalar("slippery", self.slippery, low=0.0, high=1.0))
        put("distractors", check_positive_int("distractors", self.distractors, minimum=0,
                                              maximum=MAX_DISTRACTORS))
        if self.max_steps is not None:
            put("max_steps", check_positive_int("max_steps", self.max_steps,
                                                maximum=100 * MAX_LENGTH))
        put("diversity", check_scalar("diversity", self.diversity, low=0.0, high=1.0))
        put("base_seed", check_positive_int("base_seed", self.base_seed, minimum=0))

    @property
    def horizon(self) -> int:
        return self.max_steps if self.max_steps is not None else 4 * self.length

    def check_size(self, n_environments: int, tasks_per_environment: int,
                   what: str = "the world") -> None:
        """Refuse a world of more than :data:`MAX_WORLD_CELLS` tasks or cells·bits."""
        if not isinstance(what, str):
            raise TypeError(f"what must be a str naming the world in the message, "
                            f"not {type(what).__name__}")
        E = check_positive_int("n_environments", n_environments)
        t = check_positive_int("tasks_per_environment", tasks_per_environment)
        if E * t > MAX_WORLD_CELLS or E * (self.length + 1) * max(self.distractors, 1) \
                > MAX_WORLD_CELLS:
            raise ValueError(f"{what} would hold {E} environments x {t} tasks of a "
                             f"{self.length}-cell corridor with {self.distractors} distractor "
                             f"bits; the limit is {MAX_WORLD_CELLS:.0e} tasks and cells·bits: "
                             "use fewer environments or tasks, or a shorter corridor")

    def lag_pmf(self) -> np.ndarray:
        """``P(lag = ℓ)`` for ``ℓ = 1..length`` (zero below ``min_lag``).

        Examples
        --------
        >>> MemoryFamily(length=3, lag_exponent=1.0).lag_pmf().round(4).tolist()
        [0.7347, 0.1837, 0.0816]
        """
        lags = np.arange(1, self.length + 1, dtype=np.float64)
        # In log space from the shortest allowed lag: ℓ^(−1−β) underflows for long lags.
        log_w = (-1.0 - self.lag_exponent) * (np.log(lags) - np.log(self.min_lag))
        w = np.where(lags >= self.min_lag, np.exp(log_w), 0.0)
        return w / w.sum()

    def _environments(self, n: int, rng: np.random.Generator):
        L, D = self.length, self.distractors
        base_rng = np.random.default_rng([self.base_seed, 0x3E3])
        base_signs = base_rng.integers(0, 4, L)
        base_tex = base_rng.random((L + 1, D)) < 0.5
        base_slip = base_rng.random() < self.slippery
        signs = np.where(rng.random((n, L)) < self.diversity, rng.integers(0, 4, (n, L)),
                         base_signs)
        texture = np.where(rng.random((n, L + 1, D)) < self.diversity,
                           rng.random((n, L + 1, D)) < 0.5, base_tex)
        slip = np.where(rng.random(n) < self.diversity, rng.random(n) < self.slippery,
                        base_slip)
        return signs.astype(np.int64), texture, slip

    def sample(self, n_environments: int, tasks_per_environment: int,
               rng: np.random.Generator | int | None = None) -> MemoryWorld:
        """Draw ``n_environments`` corridors with ``tasks_per_environment`` tasks each.

        The same ``rng`` seed gives bit-identical worlds.
        """
        E = check_positive_int("n_environments", n_environments, maximum=MAX_WORLD_CELLS)
        t = check_positive_int("tasks_per_environment", tasks_per_environment,
                               maximum=MAX_WORLD_CELLS)
        self.check_size(E, t)
        rng = as_generator(rng)
        signs, texture, slip = self._environments(E, rng)
        cue = rng.integers(0, N_CUES, E * t)
        lag = 1 + rng.choice(self.length, size=E * t, p=self.lag_pmf())
        return MemoryWorld(signs=signs, texture=texture, slippery=slip,
                           task_env=np.repeat(np.arange(E), t), cue=cue.astype(np.int64),
                           lag=lag.astype(np.int64), max_steps=self.horizon)


class MemoryStepper:
    """Many copies of a world's tasks stepped together, reporting observation rows.

    ``obs()`` is each live copy's row in the batch table of
    :func:`observation_table` for the tasks ``task_ids`` (block ``block[i]``
    of copy ``i``).  Copies that finish are dropped with :meth:`keep`.
    """

    def __init__(self, world: MemoryWorld, task_ids: Any, block: Any) -> None:
        task = np.asarray(task_ids, dtype=np.int64)
        env = world.task_env[task]
        L = world.length
        self.L = L
        self.signs = world.signs[env]                   # (n, L)
        self.slip = world.slippery[env]
        self.any_slip = bool(self.slip.any())
        self.cue = world.cue[task]
        self.base = np.asarray(block, dtype=np.int64) * (L + 2)
        self.pos = L - world.lag[task]
        self.first = True
        self.stage = np.full(task.size, 2, np.int64)    # one subtask: the answer

    def obs(self) -> np.ndarray:
        if self.first:
            return self.base + self.L + 1
        return self.base + self.pos

    def step(self, action: np.ndarray, rng: np.random.Generator
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Apply one action per copy; return ``(reward, success, terminated)``."""
        self.first = False
        at_junction = self.pos == self.L
        here = np.minimum(self.pos, self.L - 1)
        forward = ~at_junction & (action == self.signs[np.arange(action.size), here])
        if self.any_slip:
            forward &= ~(self.slip & (rng.random(action.size) < SLIP))
        self.pos = self.pos + forward
        success = at_junction & (action == self.cue)
        return success, success, at_junction

    def keep(self, mask: np.ndarray) -> None:
        for name in ("signs", "slip", "cue", "base", "pos", "stage"):
            setattr(self, name, getattr(self, name)[mask])


def _check_world(world: Any) -> None:
    if not isinstance(world, MemoryWorld):
        raise TypeError(f"world must be a MemoryWorld (MemoryFamily.sample); got "
                        f"world={world!r:.80}")


def _junction_times(world: MemoryWorld, advance: np.ndarray) -> np.ndarray:
    """``P(T = s)`` for ``s = 0..max_steps−1``, per task: the step at which the junction is
    first observed when each forward attempt succeeds with probability ``advance[task]``.

    ``T − lag`` is the number of failed attempts before ``lag`` successes, negative
    binomial: ``P(T = lag + f) = C(lag + f − 1, f)·p^lag·(1 − p)^f``, evaluated in log
    space (``gammaln``) so long corridors neither overflow nor underflow early.
    """
    from scipy.special import gammaln

    s = np.arange(world.max_steps, dtype=np.float64)[None, :]
    lag = world.lag[:, None].astype(np.float64)
    p = advance[:, None]
    f = s - lag
    ok = f >= 0
    f = np.maximum(f, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_pmf = (gammaln(lag + f) - gammaln(lag) - gammaln(f + 1.0) + lag * np.log(p)
                   + np.where(f > 0, f * np.log1p(-np.minimum(p, 1.0)), 0.0))
    return np.where(ok, np.exp(log_pmf), 0.0)


def reference_success(world: MemoryWorld, context: int) -> np.ndarray:
    """Per-task success of advancing at once and answering the cue when it is in the window.

    With window ``c`` the cue (observation 0) is in view at step ``T`` iff
    ``T <= c − 1``; otherwise the answer is a uniform guess (1/4).  The
    junction must be reached by step ``max_steps − 1`` to answer at all.

    Examples
    --------
    >>> world = MemoryFamily(length=4, min_lag=4, slippery=0.0).sample(1, 2, rng=0)
    >>> reference_success(world, 5).tolist(), reference_success(world, 4).tolist()
    ([1.0, 1.0], [0.25, 0.25])
    """
    _check_world(world)
    c = check_positive_int("context", context, maximum=MAX_CONTEXT)
    advance = np.where(world.slippery[world.task_env], 1.0 - SLIP, 1.0)
    pT = _junction_times(world, advance)
    s = np.arange(world.max_steps)[None, :]
    return np.sum(pT * np.where(s <= c - 1, 1.0, 1.0 / N_CUES), axis=1)


def uniform_success(world: MemoryWorld) -> np.ndarray:
    """Per-task success of the uniform policy (exact: forward w.p. 1/4 per step, times
    the slip, then a 1/4 guess at the junction).

    Examples
    --------
    >>> world = MemoryFamily(length=1, slippery=0.0, max_steps=2).sample(1, 1, rng=0)
    >>> round(float(uniform_success(world)[0]), 6)   # forward at step 0 (1/4), then 1/4
    0.0625
    """
    _check_world(world)
    advance = np.where(world.slippery[world.task_env], 1.0 - SLIP, 1.0) / N_CUES
    return _junction_times(world, advance).sum(axis=1) / N_CUES
