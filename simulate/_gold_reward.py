"""A continuous gold reward on gridworld trajectories, and exact dynamic programming for it.

The reward-law experiment (issue 12) needs rewards that are *not* binary and
have a spread under the reference policy.  A :class:`RewardWorld` is a batch
of generated gridworld tasks (one per environment, :class:`GridFamily`) plus
a random *terrain type* for every cell, and every transition carries a feature
vector of the **landing**: with ``m`` terrain types the ``d = 4 + m`` features
are

``goal``      1 when the landing completes the task (goal in the last stage);
``subgoal``   1 when it reaches the current stage's key or door;
``hole``      1 when it falls into a hole (the episode ends);
``step``      1 for every action taken (a per-step cost when weighted < 0);
``terrain_j`` 1 when the landing cell has terrain type ``j`` (per-cell costs).

A trajectory's features ``Φ`` are the sums over its transitions, and the gold
reward is the hidden linear function ``R = w·Φ`` (:data:`GOLD_WEIGHTS`,
fixed).  Because ``R`` is additive over transitions, expectations under any
Markov (time-dependent) policy are exact finite-horizon dynamic programs over
``(actions left, stage, cell)`` (Puterman 1994, §4.2): with landing reward
``r(ℓ)`` and continuation value ``V_{h-1}``,

    V_h(s) = Σ_a π_h(a|s) Σ_{s'} P(s'|s,a) [r(ℓ) + 1{ℓ not terminal} V_{h-1}(s')] + c_h(s),

``V_0 = 0``, with an optional per-state cost ``c_h``.  The per-state cost
``c_h(s) = KL(π_h(·|s) ‖ π_ref(·|s))`` gives the trajectory KL: for Markov
policies on the same dynamics the log density ratio of a trajectory is the sum
of the per-step log ratios of the actions (the transition terms cancel), and
its expectation is the occupancy-weighted sum of per-state KLs.  The second
moment ``W_h = E[(Σ r)²]`` follows from
``E[(r + R')²] = r² + 2 r E[R'] + E[R'²]``, which gives the exact standard
deviation of the gold reward under the reference policy, the unit gains are
reported in.

All tasks and a leading batch axis (policies, temperatures) are processed at
once; a sweep costs ``O(B·T·3·S²·4)`` and has no Python loop over states.  The
programs run only on the states reachable from the tasks' starts (about two
thirds of ``T·3·S²`` on the default family; :meth:`RewardWorld._compact`), the
slip average only on the slippery tasks' block: the same arithmetic per state,
so the values are bit-identical to a sweep over every state, at a quarter of
its cost (``python -m benchmarks sim_loops``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlscale.simulate._gridworld import (
    HOLE,
    MAX_STEPS,
    N_STAGES,
    GridFamily,
    GridWorld,
    as_generator,
)
from rlscale.simulate._value_iteration import MAX_DP_WORK, _landing_parts
from rlscale.theory._repr import compact_repr
from rlscale.theory._validation import check_bool, check_positive_int, check_real, check_work

#: Landing rewards are bounded so that sums over a horizon and their squares stay finite.
MAX_REWARD = 1e100
#: Most environments a reward world is drawn with, and most trajectories sampled at once.
MAX_ENVIRONMENTS = 10**5
MAX_TRAJECTORIES = 10**7
#: Trajectory steps (n·tasks·horizon) one call of sample_trajectories may sample.
MAX_SAMPLE_STEPS = 5 * 10**7

__all__ = ["GOLD_WEIGHTS", "RewardWorld", "make_reward_world", "sample_trajectories"]

#: Number of terrain types (per-cell cost classes).
N_TERRAIN = 6
#: Hidden gold weights on (goal, subgoal, hole, step, terrain_0..5); fixed.
GOLD_WEIGHTS = np.array([3.0, 1.0, -1.5, -0.05, 0.35, -0.30, 0.20, -0.40, 0.25, -0.15])
FEATURE_NAMES = ("goal", "subgoal", "hole", "step",
                 *(f"terrain_{j}" for j in range(N_TERRAIN)))
#: Default family: 6×6 grids, 24-step limit, a third of the tasks with key → door.
DEFAULT_FAMILY = GridFamily(size=6, hole_rate=0.12, wall_rate=0.08, slippery=0.5,
                            subgoal_rate=0.3)


@dataclass(frozen=True, eq=False)
class RewardWorld:
    """Tasks (one per environment) with landing features and the DP index tables.

    Attributes
    ----------
    world : GridWorld
    features : ndarray, shape (T, 3, S², d)
        Feature vector of landing on each cell while in each stage.
    horizon : int
        Actions per episode (the world's time limit).
    """

    world: GridWorld
    features: np.ndarray
    horizon: int
    _tables: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:  # one screen, not the feature tensor in full (issue 24)
        return compact_repr(self, title=f"{self.n_tasks} tasks, horizon {self.horizon}")

    def __post_init__(self) -> None:
        _check_reward_fields(self)  # a TypeError/ValueError naming the field (issue 22)
        w = self.world
        nxt, _, terminal, reach = _landing_parts(w, "success")
        T, _, S2, _ = nxt.shape
        block = (np.arange(T)[:, None] * N_STAGES + np.arange(N_STAGES)[None, :]) * S2
        adv = np.minimum(np.arange(N_STAGES) + 1, N_STAGES - 1)[None, :, None]
        stage_after = np.where(reach, adv, np.arange(N_STAGES)[None, :, None])
        opp = np.array([2, 3, 0, 1])
        # Landing slots per (task, stage, cell, action): intended, and the two
        # perpendicular moves (a ± 1 mod 4) when slippery.
        dirs = np.stack([np.arange(4), (np.arange(4) + 1) % 4, (np.arange(4) + 3) % 4], -1)
        land = block[:, :, None, None, None] + nxt[..., dirs]  # (T, 3, S², 4, 3)
        slip = w.slippery[w.task_env]
        prob = np.where(slip[:, None], 1.0 / 3.0, np.array([1.0, 0.0, 0.0]))  # (T, 3)
        self._tables.update(
            land=land.reshape(-1, 3), prob=np.broadcast_to(
                prob[:, None, None, None, :], land.shape).reshape(-1, 3),
            cont=(~terminal).reshape(-1),
            cont_idx=((np.arange(T)[:, None, None] * N_STAGES + stage_after) * S2
                      + np.arange(S2)[None, None, :]).reshape(-1),
            start=(np.arange(T) * N_STAGES + w.start_stage) * S2 + w.start,
            move_idx=(block[:, :, None, None] + nxt).reshape(-1), opp=opp,
            slip=slip, nxt=nxt)

    @property
    def n_tasks(self) -> int:
        return self.world.n_tasks

    @property
    def n_states(self) -> int:
        """Number of (task, stage, cell) states, ``T·3·S²``."""
        return self.features.shape[0] * N_STAGES * self.features.shape[2]

    def landing_reward(self, weights: Any, columns: Any = None) -> np.ndarray:
        """Reward of every landing, ``features[..., columns] @ weights``, flat (T·3·S²,)."""
        d = self.features.shape[-1]
        cols = np.arange(d) if columns is None else _check_columns(columns, d)
        w = check_real("weights", weights, low=-MAX_REWARD / d, high=MAX_REWARD / d)
        if w.shape != cols.shape:
            raise ValueError(f"weights must have shape {cols.shape} (one per entry of columns); "
                             f"got {w.shape}")
        return (self.features[..., cols] @ w).reshape(-1)

    def _check_policy(self, policy: Any, batch: bool) -> np.ndarray:
        """A time-dependent policy of shape ([B,] H, T, 3, S², 4), rows summing to 1."""
        shape = (self.horizon, *self.features.shape[:3], 4)
        pol = check_real("policy", policy, low=0.0, high=1.0)
        if (pol.shape[1:] if batch else pol.shape) != shape or (batch and pol.ndim != 6):
            want = ("B", *shape) if batch else shape
            raise ValueError(f"policy must have shape {want}; got {pol.shape}")
        if batch and not 1 <= pol.shape[0] <= 10**4:
            raise ValueError(f"policy must hold 1 to 10000 policies; got {pol.shape[0]}")
        total = pol.sum(axis=-1)
        if np.any(np.abs(total - 1.0) > 1e-9):
            raise ValueError("rows of policy must sum to 1 (within 1e-9)")
        return pol

    def _check_landing(self, name: str, values: Any) -> np.ndarray:
        """Landing rewards, flat (T·3·S²,) and bounded by ``MAX_REWARD``."""
        r = check_real(name, values, low=-MAX_REWARD, high=MAX_REWARD)
        if r.shape != (self.n_states,):
            raise ValueError(f"{name} must have shape ({self.n_states},) (one per landing); "
                             f"got {r.shape}")
        return r

    # ------------------------------------------------------------------ dynamic programs

    def _compact(self, everywhere: bool = False) -> dict[str, Any]:
        """Index tables of the dynamic programs on the states they need (cached).

        A start state's value depends only on the states reachable from it, so
        the programs run on those (about two thirds of ``T·3·S²`` on the default
        family: stages a task does not have, walls, holes and the cells a stage
        leaves at once are never occupied) — the same arithmetic on each state
        that remains, so the values are bit-identical to a sweep over all
        states.  ``everywhere=True`` keeps every state (for returning whole
        policies).  States are ordered with the non-slippery tasks' first, so
        the slip average is computed on the slippery block only.
        """
        key = "compact_all" if everywhere else "compact"
        if key not in self._tables:
            self._tables[key] = _compact_tables(self._tables, self.n_states,
                                                N_STAGES * self.features.shape[2], everywhere)
        return self._tables[key]

    def evaluate(self, policy: Any, r_land: Any, *, kl: bool = False,
                 second_moment: bool = False) -> dict[str, np.ndarray]:
        """Exact expected return (and KL to uniform, second moment) at each task's start.

        Parameters
        ----------
        policy : array, shape (B, H, T, 3, S², 4) or None
            ``policy[b, h-1]`` is the action distribution with ``h`` actions
            left; ``None`` is the uniform reference (``B = 1``).
        r_land : array, shape (T·3·S²,) or (B, T·3·S²)
            Landing rewards (:meth:`landing_reward`).
        kl : bool
            Also the trajectory KL to the uniform reference.
        second_moment : bool
            Also ``E[R²]``.

        Returns
        -------
        dict with ``"value"`` (B, T) and optionally ``"kl"``, ``"second"``.
        """
        H = self.horizon
        kl, second_moment = check_bool("kl", kl), check_bool("second_moment", second_moment)
        if policy is not None:
            policy = self._check_policy(policy, batch=True)
        B = 1 if policy is None else policy.shape[0]
        r = check_real("r_land", r_land, low=-MAX_REWARD, high=MAX_REWARD)
        if r.shape not in ((self.n_states,), (B, self.n_states)):
            raise ValueError(f"r_land must have shape ({self.n_states},) or "
                             f"({B}, {self.n_states}); got {r.shape}")
        c = self._compact()
        r = np.broadcast_to(np.atleast_2d(r), (B, r.shape[-1]))[:, c["slots"]]
        n = c["states"].size
        V, K, W = np.zeros((B, n)), np.zeros((B, n)), np.zeros((B, n))
        if policy is not None:  # the policy on the states the program visits, all h at once
            pis = policy.reshape(B, H, self.n_states, 4)[:, :, c["states"]]
        for h in range(1, H + 1):
            pi = np.full((1, n, 4), 0.25) if policy is None else pis[:, h - 1]
            if second_moment:
                ev, ew = _cont(c, V), _cont(c, W)
                W = _pi_avg(_q(c, r * r + 2.0 * r * ev + ew), pi)
            if kl:
                logr = np.log(np.maximum(pi, 1e-300) * 4.0)
                K = _pi_avg(_q(c, _cont(c, K)), pi) + _pi_avg(logr, pi)
            V = _pi_avg(_q(c, r + _cont(c, V)), pi)
        s = c["start"]
        out = {"value": V[:, s]}
        if kl:
            out["kl"] = K[:, s]
        if second_moment:
            out["second"] = W[:, s]
        return out


def check_reward_world(rw: Any) -> RewardWorld:
    if not isinstance(rw, RewardWorld):
        raise TypeError(f"rw must be a RewardWorld; got rw={rw!r:.80}")
    return rw


def _check_columns(columns: Any, d: int) -> np.ndarray:
    c = check_real("columns", columns, low=0.0, high=float(d - 1))
    if c.ndim != 1 or c.size == 0 or np.any(c != np.round(c)):
        raise ValueError(f"columns must be a 1-D list of integers in [0, {d}); got "
                         f"{columns!r:.80}")
    return c.astype(np.int64)


def _pi_avg(x: np.ndarray, pi: np.ndarray) -> np.ndarray:
    xp = x * pi
    return xp[..., 0] + xp[..., 1] + xp[..., 2] + xp[..., 3]


def _compact_tables(t: dict[str, Any], n: int, block: int, everywhere: bool) -> dict[str, Any]:
    """States reachable from the starts (or all), their landing slots and gather indices.

    ``block = 3·S²`` states per task.  Returns ``states`` (full indices, non-slippery
    tasks first; ``n_plain`` of them), ``slots`` (landing indices the states move to),
    ``move`` (per state and action, the position of its landing slot), ``cont`` and
    ``cont_pos`` (whether a slot continues, and at which compact state), ``start``.
    """
    mv = t["move_idx"].reshape(n, 4)
    occ = np.ones(n, bool)
    if not everywhere:  # closure of the starts under "land, then continue"
        occ = np.zeros(n, bool)
        occ[t["start"]] = True
        while True:
            land = mv[occ].ravel()
            grown = occ.copy()
            grown[t["cont_idx"][land[t["cont"][land]]]] = True
            if np.array_equal(grown, occ):
                break
            occ = grown
    states = np.flatnonzero(occ)
    slips = t["slip"][states // block]
    states = np.concatenate([states[~slips], states[slips]])
    pos = np.zeros(n, np.int64)
    pos[states] = np.arange(states.size)
    slots = np.unique(mv[states])
    spos = np.zeros(n, np.int64)
    spos[slots] = np.arange(slots.size)
    cont = t["cont"][slots]
    return {"states": states, "n_plain": int(np.count_nonzero(~slips)), "slots": slots,
            "move": spos[mv[states]], "cont": cont,
            "cont_pos": np.where(cont, pos[t["cont_idx"][slots]], 0), "start": pos[t["start"]]}


def _cont(c: dict[str, Any], V: np.ndarray) -> np.ndarray:
    """Continuation value of every landing slot: ``V`` at the state it continues in, or 0."""
    return np.where(c["cont"], V[..., c["cont_pos"]], 0.0)


def _q(c: dict[str, Any], land_val: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Expected landing value per (..., state, action) from values per landing slot.

    Slipping lands on the intended or either perpendicular move, each with
    probability 1/3: every move but the opposite one, ``(Σ_a d_a − d_opp)/3``.
    """
    d = np.take(land_val, c["move"], axis=-1, out=out)
    n0 = c["n_plain"]
    if n0 < d.shape[-2]:
        sl = d[..., n0:, :]
        total = sl[..., 0] + sl[..., 1] + sl[..., 2] + sl[..., 3]
        d[..., n0:, :] = (total[..., None] - sl[..., _OPPOSITE]) / 3.0
    return d


_OPPOSITE = np.array([2, 3, 0, 1])


def make_reward_world(n_environments: int, rng: Any = None, *,
                      family: GridFamily = DEFAULT_FAMILY) -> RewardWorld:
    """Draw ``n_environments`` tasks (one each) with random terrain and landing features.

    Examples
    --------
    >>> rw = make_reward_world(3, rng=0)
    >>> rw.features.shape, rw.horizon
    ((3, 3, 36, 10), 24)
    >>> ref = rw.evaluate(None, rw.landing_reward(GOLD_WEIGHTS), second_moment=True)
    >>> bool((ref["second"] > ref["value"] ** 2).all())   # a genuine spread
    True
    """
    E = check_positive_int("n_environments", n_environments, maximum=MAX_ENVIRONMENTS)
    if not isinstance(family, GridFamily):
        raise TypeError(f"family must be a GridFamily; got family={family!r:.80}")
    if E * family.size**2 * family.horizon > 20 * MAX_DP_WORK:
        raise ValueError(f"n_environments·cells·max_steps must be <= {20 * MAX_DP_WORK:.0e}; "
                         f"got n_environments={E}")
    gen = as_generator(rng)
    world = family.sample(E, 1, rng=gen)
    S2 = world.size ** 2
    terrain = gen.integers(0, N_TERRAIN, size=(E, S2))
    T = world.n_tasks
    reach = _landing_parts(world, "success")[3]
    hole = world.tiles.reshape(E, S2)[world.task_env] == HOLE
    f = np.zeros((T, N_STAGES, S2, 4 + N_TERRAIN))
    f[:, N_STAGES - 1, :, 0] = reach[:, N_STAGES - 1]
    f[:, : N_STAGES - 1, :, 1] = reach[:, : N_STAGES - 1]
    f[:, :, :, 2] = hole[:, None, :]
    f[:, :, :, 3] = 1.0
    onehot = np.eye(N_TERRAIN)[terrain[world.task_env]]  # (T, S², m)
    f[:, :, :, 4:] = np.where(hole[:, :, None], 0.0, onehot)[:, None]
    return RewardWorld(world, f, world.max_steps)


def sample_trajectories(rw: RewardWorld, n: int, rng: Any, policy: Any = None,
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Sample ``n`` trajectories per task; their feature sums and log density ratios.

    Parameters
    ----------
    policy : array, shape (H, T, 3, S², 4), optional
        Time-dependent policy (index ``h-1`` with ``h`` actions left); default
        the uniform reference.

    Returns
    -------
    features : ndarray, shape (T, n, d)
        Summed landing features of each trajectory.
    log_ratio : ndarray, shape (T, n)
        ``Σ_t log(π(a_t|s_t)/π_ref(a_t|s_t))`` (zero for the reference):
        its mean is a Monte Carlo estimate of the trajectory KL.
    """
    check_reward_world(rw)
    n = check_positive_int("n", n, maximum=MAX_TRAJECTORIES)
    # Time-bounded (issue 22): 1e6 trajectories of 24 steps took 3 s; the limit ~6 s idle.
    check_work("sampled trajectory steps", MAX_SAMPLE_STEPS, 6, n=n, tasks=rw.n_tasks,
               horizon=rw.horizon)
    gen = as_generator(rng)
    if policy is not None:
        policy = rw._check_policy(policy, batch=False)
    t = rw._tables
    T, d = rw.features.shape[0], rw.features.shape[-1]
    feats = rw.features.reshape(-1, d)
    state = np.repeat(t["start"], n)  # flat (task, stage, cell) index
    task = np.repeat(np.arange(T), n)
    alive = np.ones(T * n, bool)
    phi = np.zeros((T * n, d))
    logr = np.zeros(T * n)
    slip = t["slip"][task]
    for step in range(rw.horizon):
        h = rw.horizon - step
        if policy is None:
            a = gen.integers(0, 4, size=T * n)
        else:
            p = policy[h - 1].reshape(-1, 4)[state]
            a = (gen.random(T * n)[:, None] > np.cumsum(p, axis=1)[:, :3]).sum(axis=1)
            logr += np.where(alive, np.log(np.maximum(p[np.arange(T * n), a], 1e-300) * 4), 0)
        k = np.where(slip, gen.integers(0, 3, size=T * n), 0)
        land = t["land"][state * 4 + a, k]
        phi[alive] += feats[land[alive]]
        alive &= t["cont"][land]
        state = np.where(alive, t["cont_idx"][land], state)
        if not alive.any():
            break
    return phi.reshape(T, n, d), logr.reshape(T, n)


def _check_reward_fields(rw: RewardWorld) -> None:
    """Refuse fields of a hand-built :class:`RewardWorld` its methods cannot use, naming
    the field (``RewardWorld(0, 0, 0)`` raised ``AttributeError``)."""
    if not isinstance(rw.world, GridWorld):
        raise TypeError(f"world must be a GridWorld; got {type(rw.world).__name__} "
                        f"{rw.world!r:.60}")
    f = check_real("features", rw.features) if isinstance(rw.features, np.ndarray) else None
    shape = (rw.world.n_tasks, N_STAGES, rw.world.size**2)
    if f is None or f.ndim != 4 or f.shape[:3] != shape or f.shape[3] < 1:
        raise TypeError(f"features must be a float array of shape {(*shape, 'd')}; got "
                        f"{type(rw.features).__name__} of shape {np.shape(rw.features)}")
    object.__setattr__(rw, "features", f)
    object.__setattr__(rw, "horizon", check_positive_int("horizon", rw.horizon,
                                                         maximum=MAX_STEPS))
