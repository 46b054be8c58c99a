"""A procedurally generated family of FrozenLake-like gridworld agent tasks.

Vocabulary (the three data axes of agentic RL):

environment
    A generated ``S×S`` layout of free cells, holes (terminal, no reward) and
    walls (moving into one leaves the agent in place), plus its dynamics: a
    slippery environment moves in the intended direction or either
    perpendicular one with probability 1/3 each (Gymnasium's FrozenLake rule).
task
    A start and a goal in an environment, optionally with the ordered
    subgoals key → door → goal: the door blocks the agent until it has the
    key, and reaching the goal pays only after the door.
trajectory
    One rollout of at most ``max_steps`` actions; reward 1 on completing the
    task, else 0.

Cells are numbered row-major, ``c = row·S + col``; actions follow Gymnasium:
0 left, 1 down, 2 right, 3 up.  A task's progress is its *stage*: stage 0
seeks the key, 1 the door, 2 the goal; a task without subgoals starts in
stage 2.  Tasks store their three stage targets ``(key, door, goal)`` with
``-1`` for absent subgoals.

No-path rule (documented, like ``gymnasium``'s ``generate_random_map``): a
generated task is kept only if its subgoals and goal can be reached in order
within ``max_steps`` moves (breadth-first search over intended moves, which is
exact for "optimal success > 0" because every intended move has probability
≥ 1/3).  Otherwise the task's cells are redrawn, up to 50 times; an
environment in which no task can be drawn is replaced by a fresh layout, up
to 100 times, after which generation raises ``ValueError``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from rlscale.simulate._random import as_generator
from rlscale.theory._validation import check_positive_int, check_scalar

__all__ = ["FREE", "HOLE", "WALL", "GridFamily", "GridWorld", "as_generator"]

FREE, HOLE, WALL = 0, 1, 2
#: Row and column change of actions 0 left, 1 down, 2 right, 3 up.
DROW = np.array([0, 1, 0, -1])
DCOL = np.array([-1, 0, 1, 0])
N_STAGES = 3  # key, door, goal
_TASK_TRIES = 50
_LAYOUT_TRIES = 100

#: Documented limits of the environment family, so that drawing a world finishes
#: in seconds and its arrays fit in memory: the grid side, the time limit, and
#: ``tasks·S²`` (tasks times cells) of one drawn world (about 5 s to draw).
MAX_SIZE = 256
MAX_STEPS = 100_000
MAX_TASK_CELLS = 5 * 10**6


def check_world_size(n_tasks: int, size: int, what: str = "the world") -> None:
    """Refuse a world of more than :data:`MAX_TASK_CELLS` task cells, naming its size."""
    cells = n_tasks * size * size
    if cells > MAX_TASK_CELLS:
        raise ValueError(
            f"{what} would hold {n_tasks} tasks x {size}x{size} cells = {cells:.3g} task cells "
            f"(about {cells * 200 / 2**30:.2g} GiB of work arrays); the limit is "
            f"{MAX_TASK_CELLS:.0e}: use fewer environments or tasks, or a smaller grid_size")


def move_table(tiles: np.ndarray) -> np.ndarray:
    """Next cell for each (environment, cell, action) of ``tiles`` (E, S, S).

    Moving off the grid or into a wall leaves the agent where it is; holes
    are absorbing (they are terminal anyway).
    """
    E, S, _ = tiles.shape
    rows, cols = np.divmod(np.arange(S * S), S)
    nr = np.clip(rows[:, None] + DROW[None, :], 0, S - 1)
    nc = np.clip(cols[:, None] + DCOL[None, :], 0, S - 1)
    target = (nr * S + nc)[None, :, :].repeat(E, axis=0)  # (E, S², 4)
    flat = tiles.reshape(E, S * S)
    blocked = np.take_along_axis(flat, target.reshape(E, -1), axis=1).reshape(target.shape) == WALL
    here = np.broadcast_to(np.arange(S * S)[None, :, None], target.shape)
    out = np.where(blocked, here, target)
    stuck = (flat == HOLE) | (flat == WALL)
    out = np.where(stuck[:, :, None], here, out)
    return out.astype(np.int32)


@dataclass(frozen=True, eq=False)
class GridWorld:
    """A batch of environments and the tasks posed in them (structure of arrays).

    Attributes
    ----------
    tiles : ndarray, shape (E, S, S), int8
        ``FREE``, ``HOLE`` or ``WALL``.
    slippery : ndarray, shape (E,), bool
        Whether moves split 1/3 intended, 1/3 each perpendicular.
    leak : ndarray, shape (E,), int
        A *defect*: a cell paying reward 1 (and ending the episode) without
        the task being done; ``-1`` for a clean environment.
    task_env : ndarray, shape (T,), int
        Environment of each task.
    start : ndarray, shape (T,), int
        Start cell of each task.
    targets : ndarray, shape (T, 3), int
        Key, door and goal cells (``-1`` where the task has no subgoals).
    max_steps : int
        Time limit (truncation after this many actions).
    """

    tiles: np.ndarray
    slippery: np.ndarray
    leak: np.ndarray
    task_env: np.ndarray
    start: np.ndarray
    targets: np.ndarray
    max_steps: int
    moves: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        _check_world_arrays(self)  # a TypeError/ValueError naming the field (issue 22)
        object.__setattr__(self, "moves", move_table(self.tiles))

    @property
    def size(self) -> int:
        return int(self.tiles.shape[1])

    @property
    def n_environments(self) -> int:
        return int(self.tiles.shape[0])

    @property
    def n_tasks(self) -> int:
        return int(self.start.shape[0])

    @property
    def start_stage(self) -> np.ndarray:
        """Stage each task starts in: 0 with subgoals, 2 without."""
        return np.where(self.targets[:, 0] >= 0, 0, N_STAGES - 1)

    @property
    def n_subtasks(self) -> np.ndarray:
        """Number of subtasks (key, door, goal) each task has: 3 or 1.

        Examples
        --------
        >>> from rlscale.simulate import world_from_text
        >>> world_from_text(["SKW", "FHD", "FFG"]).n_subtasks.tolist()
        [3]
        """
        return N_STAGES - self.start_stage

    def select_tasks(self, ids: Any) -> GridWorld:
        """The same environments with only the tasks ``ids`` (in that order).

        Examples
        --------
        >>> world = GridFamily(size=5).sample(2, 3, rng=0)
        >>> sub = world.select_tasks([4, 0])
        >>> sub.n_tasks, sub.task_env.tolist(), bool(sub.start[0] == world.start[4])
        (2, [1, 0], True)
        """
        ids = np.asarray(ids)
        if ids.ndim != 1:
            raise ValueError(f"ids must be a 1-D array of task indices; got shape {ids.shape}")
        if ids.size or ids.dtype.kind not in "iu":
            _check_indices("ids", ids, self.n_tasks)
        return replace(self, task_env=self.task_env[ids], start=self.start[ids],
                       targets=self.targets[ids])

    def as_text(self, task: int = 0) -> str:
        """The task's map in FrozenLake letters (S start, G goal, H hole, W wall,
        K key, D door, L leak, F free).

        Examples
        --------
        >>> from rlscale.simulate import frozen_lake
        >>> print(frozen_lake("4x4").as_text())
        SFFF
        FHFH
        FFFH
        HFFG
        """
        task = check_positive_int("task", task, minimum=0, maximum=self.n_tasks - 1)
        e = int(self.task_env[task])
        letters = np.array(["F", "H", "W"])[self.tiles[e]].ravel()
        for cell, ch in ((self.leak[e], "L"), (self.targets[task, 0], "K"),
                         (self.targets[task, 1], "D"), (self.targets[task, 2], "G"),
                         (self.start[task], "S")):
            if cell >= 0:
                letters[cell] = ch
        S = self.size
        return "\n".join("".join(letters[r * S:(r + 1) * S]) for r in range(S))

    def shortest_path(self) -> np.ndarray:
        """Fewest moves completing each task (``-1`` if impossible), ignoring slips.

        Breadth-first search over intended moves, stage by stage (before the
        key the door blocks; holes and leak cells end the episode).  A task has
        optimal success > 0 exactly when this is in ``[1, max_steps]``.
        """
        T, S = self.n_tasks, self.size
        tiles = self.tiles[self.task_env]  # (T, S, S)
        wall = tiles == WALL
        stop = (tiles == HOLE).reshape(T, S * S)
        leak = self.leak[self.task_env]
        has_leak = leak >= 0
        stop[np.nonzero(has_leak)[0], leak[has_leak]] = True
        total = np.zeros(T, dtype=np.int64)
        ok = np.ones(T, dtype=bool)
        pos = self.start.astype(np.int64).copy()
        for stage in range(N_STAGES):
            active = self.start_stage <= stage
            target = self.targets[:, stage]
            door = self.targets[:, 1] if stage == 0 else np.full(T, -1)
            dist = _bfs(wall, stop, door, pos, target)
            found = dist >= 0
            ok &= ~active | found
            total += np.where(active & found, dist, 0)
            pos = np.where(active, np.maximum(target, 0), pos)
        return np.where(ok & (total <= self.max_steps), total, -1)


def _bfs(wall, stop, door, source, target):
    """Shortest intended-move distance source → target per task (``-1``: none).

    ``wall`` (T, S, S) blocks moves (the agent stays), as does ``door`` (a
    cell per task, ``-1`` for none); ``stop`` (T, S²) cells are reached but
    end the episode, so the search does not continue from them.  Frontiers
    expand by whole-grid shifts, one breadth-first layer per iteration.
    """
    T, S, _ = wall.shape
    rows = np.arange(T)
    open_ = ~wall.reshape(T, S * S)
    has_door = door >= 0
    open_[rows[has_door], door[has_door]] = False
    open_ = open_.reshape(T, S, S)
    tgt = np.maximum(target, 0)
    dist = np.full(T, -1, dtype=np.int64)
    done = target < 0
    dist[done] = 0
    reach = np.zeros((T, S * S), dtype=bool)
    reach[rows, source] = True
    hit = ~done & (source == target)
    dist[hit] = 0
    done |= hit
    frontier = reach.reshape(T, S, S).copy()
    reach = reach.reshape(T, S, S)
    stop = stop.reshape(T, S, S)
    for d in range(1, S * S + 1):
        if done.all():
            break
        grow = frontier & ~stop
        new = np.zeros_like(grow)
        new[:, 1:, :] |= grow[:, :-1, :]
        new[:, :-1, :] |= grow[:, 1:, :]
        new[:, :, 1:] |= grow[:, :, :-1]
        new[:, :, :-1] |= grow[:, :, 1:]
        new &= open_
        new &= ~reach
        if not new.any():
            break
        reach |= new
        frontier = new
        hit = ~done & reach.reshape(T, S * S)[rows, tgt]
        dist[hit] = d
        done |= hit
    # Stepping onto a target that is a hole (or the leak cell) ends the episode there.
    lands_blocked = stop.reshape(T, S * S)[rows, tgt] & (target >= 0) & (target != source)
    return np.where(lands_blocked, -1, dist)


@dataclass(frozen=True)
class GridFamily:
    """A distribution over environments and tasks, with a diversity knob.

    Parameters
    ----------
    size : int
        Grid side ``S`` (``>= 3``).
    hole_rate, wall_rate : float
        Probability that a cell is a hole / a wall.
    slippery : float
        Probability that an environment is slippery (1/3 split).
    subgoal_rate : float
        Probability that a task has the key → door → goal subgoals.
    max_steps : int, optional
        Time limit; default ``4·S``.
    diversity : float
        In ``[0, 1]``.  A base layout is drawn once from ``base_seed``; each
        environment redraws every cell (and its slipperiness) independently
        with probability ``diversity``.  At 0 all environments are one layout
        and more environments add no variety; at 1 they are independent.
    base_seed : int
        Seed of the base layout (shared by training and held-out draws, so
        both come from one family).

    Examples
    --------
    >>> fam = GridFamily(size=5, hole_rate=0.1, wall_rate=0.1, subgoal_rate=0.0)
    >>> world = fam.sample(2, 3, rng=0)
    >>> world.n_environments, world.n_tasks
    (2, 6)
    >>> bool((world.shortest_path() > 0).all())
    True
    """

    size: int = 6
    hole_rate: float = 0.12
    wall_rate: float = 0.08
    slippery: float = 0.5
    subgoal_rate: float = 0.3
    max_steps: int | None = None
    diversity: float = 1.0
    base_seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "size",
                           check_positive_int("size", self.size, minimum=3, maximum=MAX_SIZE))
        for name in ("hole_rate", "wall_rate", "slippery", "subgoal_rate", "diversity"):
            high = 0.5 if name.endswith("_rate") and name != "subgoal_rate" else 1.0
            object.__setattr__(self, name,
                               check_scalar(name, getattr(self, name), low=0.0, high=high))
        if self.max_steps is not None:
            object.__setattr__(self, "max_steps", check_positive_int(
                "max_steps", self.max_steps, maximum=MAX_STEPS))
        object.__setattr__(self, "base_seed",
                           check_positive_int("base_seed", self.base_seed, minimum=0))

    @property
    def horizon(self) -> int:
        return self.max_steps if self.max_steps is not None else 4 * self.size

    def _layouts(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        S = self.size
        base_rng = np.random.default_rng(self.base_seed)
        base = _draw_tiles(base_rng, (1, S, S), self.hole_rate, self.wall_rate)
        base_slip = base_rng.random() < self.slippery
        fresh = _draw_tiles(rng, (n, S, S), self.hole_rate, self.wall_rate)
        redraw = rng.random((n, S, S)) < self.diversity
        tiles = np.where(redraw, fresh, base)
        slip = np.where(rng.random(n) < self.diversity, rng.random(n) < self.slippery,
                        base_slip)
        return tiles.astype(np.int8), slip

    def sample(
        self,
        n_environments: int,
        tasks_per_environment: int,
        rng: np.random.Generator | int | None = None,
    ) -> GridWorld:
        """Draw ``n_environments`` layouts with ``tasks_per_environment`` solvable tasks each.

        Follows the module's no-path rule.  The same ``rng`` seed gives
        bit-identical worlds.  ``E·t·size²`` is limited to :data:`MAX_TASK_CELLS`.
        """
        E = check_positive_int("n_environments", n_environments, maximum=MAX_TASK_CELLS)
        t = check_positive_int("tasks_per_environment", tasks_per_environment,
                               maximum=MAX_TASK_CELLS)
        check_world_size(E * t, self.size, "the world (n_environments·tasks_per_environment·"
                         "size²)")
        rng = as_generator(rng)
        tiles, slip = self._layouts(E, rng)
        todo = np.arange(E)
        start = np.zeros((E, t), np.int64)
        targets = np.full((E, t, N_STAGES), -1, np.int64)
        for _ in range(_LAYOUT_TRIES):
            st, tg, ok = self._tasks(tiles[todo], slip[todo], t, rng)
            start[todo], targets[todo] = st, tg
            todo = todo[~ok]
            if todo.size == 0:
                break
            tiles[todo], slip[todo] = self._layouts(todo.size, rng)
        else:
            raise ValueError(
                f"could not draw solvable tasks in {_LAYOUT_TRIES} layouts; the family "
                f"(size={self.size}, hole_rate={self.hole_rate}, wall_rate={self.wall_rate}, "
                f"max_steps={self.horizon}) is too hard"
            )
        return GridWorld(
            tiles=tiles, slippery=slip, leak=np.full(E, -1, np.int64),
            task_env=np.repeat(np.arange(E), t), start=start.ravel(),
            targets=targets.reshape(E * t, N_STAGES), max_steps=self.horizon,
        )

    def _tasks(self, tiles, slip, t, rng):
        """Draw ``t`` tasks per layout; redraw unsolvable ones (no-path rule)."""
        E, S, _ = tiles.shape
        n = E * t
        start = np.zeros(n, np.int64)
        targets = np.full((n, N_STAGES), -1, np.int64)
        pending = np.arange(n)
        env_of = np.repeat(np.arange(E), t)
        free = (tiles.reshape(E, S * S) == FREE)
        for _ in range(_TASK_TRIES):
            if pending.size == 0:
                break
            envs = env_of[pending]
            # Four distinct free cells per task: start, key, door, goal.
            scores = rng.random((pending.size, S * S)) + np.where(free[envs], 0.0, 2.0)
            cells = np.argsort(scores, axis=1)[:, :4]
            enough = np.take_along_axis(free[envs], cells, axis=1).all(axis=1)
            sub = rng.random(pending.size) < self.subgoal_rate
            start[pending] = cells[:, 0]
            targets[pending, 2] = cells[:, 3]
            targets[pending, 0] = np.where(sub, cells[:, 1], -1)
            targets[pending, 1] = np.where(sub, cells[:, 2], -1)
            world = GridWorld(tiles=tiles, slippery=slip, leak=np.full(E, -1, np.int64),
                              task_env=envs, start=start[pending], targets=targets[pending],
                              max_steps=self.horizon)
            ok = enough & (world.shortest_path() > 0)
            pending = pending[~ok]
        ok_env = np.ones(E, bool)
        ok_env[env_of[pending]] = False
        return start.reshape(E, t), targets.reshape(E, t, N_STAGES), ok_env


def _draw_tiles(rng, shape, hole_rate, wall_rate):
    u = rng.random(shape)
    return np.where(u < hole_rate, HOLE, np.where(u < hole_rate + wall_rate, WALL, FREE))


def _check_indices(name: str, values: np.ndarray, n: int) -> None:
    """Integers in ``[0, n)``: a negative index would silently wrap around in numpy."""
    if values.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integers in [0, {n}); got dtype {values.dtype}")
    low, high = values.min(), values.max()
    if low < 0 or high >= n:
        raise ValueError(f"{name} must hold integers in [0, {n}); got {low if low < 0 else high}")


def _check_world_arrays(w: GridWorld) -> None:
    """Refuse fields of a hand-built :class:`GridWorld` that its methods cannot use, naming
    the field (``GridWorld(0, ...)`` raised ``AttributeError: 'int' object has no attribute
    'shape'``).  Normalises them to the documented dtypes; cost O(the arrays)."""

    def array(name: str, kinds: str, ndim: int) -> np.ndarray:
        value = getattr(w, name)
        arr = np.asarray(value) if isinstance(value, np.ndarray | list | tuple) else None
        if arr is None or arr.dtype.kind not in kinds or arr.ndim != ndim:
            kind = "boolean" if kinds == "b" else "integer"
            raise TypeError(f"{name} must be a {ndim}-d {kind} array; got "
                            f"{type(value).__name__} {value!r:.60}")
        return arr

    tiles = array("tiles", "iu", 3)
    E, S, S2 = tiles.shape
    if not (E >= 1 and 2 <= S <= MAX_SIZE and S == S2):
        raise ValueError(f"tiles must have shape (E, S, S) with E >= 1 and 2 <= S <= "
                         f"{MAX_SIZE}; got shape {tiles.shape}")
    if not np.isin(tiles, (FREE, HOLE, WALL)).all():
        raise ValueError("tiles must hold FREE, HOLE or WALL (0, 1, 2) only")
    fields = {"tiles": tiles.astype(np.int8, copy=False),
              "slippery": array("slippery", "b", 1), "leak": array("leak", "iu", 1),
              "task_env": array("task_env", "iu", 1), "start": array("start", "iu", 1),
              "targets": array("targets", "iu", 2)}
    T = fields["task_env"].shape[0]
    cells = S * S
    for name, shape, low, high in (("slippery", (E,), None, None), ("leak", (E,), -1, cells),
                                   ("task_env", (T,), 0, E), ("start", (T,), 0, cells),
                                   ("targets", (T, N_STAGES), -1, cells)):
        arr = fields[name]
        if arr.shape != shape:
            raise ValueError(f"{name} must have shape {shape}; got {arr.shape}")
        if low is not None and arr.size and not (low <= arr.min() and arr.max() < high):
            raise ValueError(f"{name} must lie in [{low}, {high}); got values from "
                             f"{arr.min()} to {arr.max()}")
    if T < 1 or T * cells > MAX_TASK_CELLS:
        raise ValueError(f"task_env must name 1 to {MAX_TASK_CELLS // cells} tasks (tasks·S² "
                         f"<= {MAX_TASK_CELLS:.0e}); got {T}")
    for name, arr in fields.items():
        object.__setattr__(w, name, arr)
    object.__setattr__(w, "max_steps", check_positive_int("max_steps", w.max_steps,
                                                          maximum=MAX_STEPS))
