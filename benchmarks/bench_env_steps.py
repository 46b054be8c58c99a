"""Environment steps per second: the batched numpy gridworld vs a plain numpy loop and Gymnasium.

Cases:

* ``VecGridEnv.step`` on Gymnasium's 8x8 ``FrozenLake`` map (slippery, random actions
  drawn in advance, auto-reset, the 200-step limit) against a plain numpy loop of the
  same dynamics written from the map (:class:`PlainFrozenLake`: its own move table,
  holes and goal, one gather per step), which draws the slips from the same stream
  and so gives the same trajectories bit for bit (checked: ``identical``); the goal
  (issue 26) is a ratio >= 0.8;
* the same, and the procedurally generated family, against a Python loop over
  Gymnasium's ``FrozenLake-v1`` (8x8, slippery, reset on episode end) doing the
  *same number* of environment steps;
* full GRPO training (rollouts, policy tables, clipped updates over several
  epochs, k3 KL; world generation and the exact held-out evaluation
  included), steps counted as training environment steps, against the
  Gymnasium loop.

Everything runs on one core (the policy's products are blocked to stay
below OpenBLAS's threading threshold).
"""

from __future__ import annotations

import numpy as np

from benchmarks._harness import Case


def _gym_loop(n_steps: int):
    import gymnasium as gym

    env = gym.make("FrozenLake-v1", map_name="8x8", is_slippery=True)
    actions = np.random.default_rng(0).integers(0, 4, n_steps).tolist()

    def run() -> None:
        env.reset(seed=0)
        step = env.step
        for a in actions:
            _, _, term, trunc, _ = step(a)
            if term or trunc:
                env.reset()

    return run


class PlainFrozenLake:
    """The peer: FrozenLake's dynamics as a plain numpy loop over many copies.

    From the map alone: moves clipped at the edges (0 left, 1 down, 2 right, 3
    up), a slip of −1, 0 or +1 quarter turn with probability 1/3 each (drawn as
    ``integers(0, 3, int8) − 1`` per copy), reward and termination on the goal,
    termination on a hole, truncation at ``max_steps``, restart at the start.
    ``step`` returns the observation after the restart, the reward, and the
    terminated and truncated flags.
    """

    def __init__(self, rows: tuple[str, ...], copies: int, max_steps: int, seed: int) -> None:
        S = len(rows)
        grid = np.array(list("".join(rows)))
        r, c = np.divmod(np.arange(S * S), S)
        dr, dc = np.array([0, 1, 0, -1]), np.array([-1, 0, 1, 0])
        self.move = (np.clip(r[:, None] + dr, 0, S - 1) * S
                     + np.clip(c[:, None] + dc, 0, S - 1)).ravel()
        self.hole = grid == "H"
        self.goal = int(np.flatnonzero(grid == "G")[0])
        self.start = int(np.flatnonzero(grid == "S")[0])
        self.cell = np.full(copies, self.start)
        self.t = np.zeros(copies, np.int64)
        self.max_steps = max_steps
        self.rng = np.random.default_rng(seed)

    def step(self, actions: np.ndarray):
        turn = self.rng.integers(0, 3, size=actions.shape[0], dtype=np.int8) - 1
        nxt = self.move[self.cell * 4 + ((actions + turn) & 3)]
        success = nxt == self.goal
        term = self.hole[nxt] | success
        self.t += 1
        trunc = (self.t >= self.max_steps) & ~term
        done = term | trunc
        nxt[done] = self.start
        self.t[done] = 0
        self.cell = nxt
        return nxt.copy(), success.astype(np.float64), term, trunc


def _plain_pair(copies: int, steps: int):
    """``VecGridEnv`` and the plain loop on FrozenLake 8x8, the same actions and seed; the
    extra line says whether the trajectories were identical (checked after the timing)."""
    from rlscale.simulate import VecGridEnv, frozen_lake
    from rlscale.simulate._frozen_lake import FROZEN_LAKE_MAPS

    rows = tuple(FROZEN_LAKE_MAPS["8x8"])
    rng = np.random.default_rng(1)
    actions = [rng.integers(0, 4, copies) for _ in range(steps)]
    # Built once: the timed calls step on (episodes continue across calls).
    env = VecGridEnv(frozen_lake("8x8"), np.zeros(copies, np.int64), seed=0)
    loop = PlainFrozenLake(rows, copies, 200, seed=0)

    def ours() -> None:
        for a in actions:
            env.step(a)

    def peer() -> None:
        for a in actions:
            loop.step(a)

    def identical() -> dict[str, str]:
        env = VecGridEnv(frozen_lake("8x8"), np.zeros(copies, np.int64), seed=0)
        loop = PlainFrozenLake(rows, copies, 200, seed=0)
        same = True
        for a in actions * 3:  # past the first episodes' ends, resets included
            o, (cell, reward, term, trunc) = env.step(a), loop.step(a)
            same &= bool(np.array_equal(o.cell, cell) and np.array_equal(o.reward, reward)
                         and np.array_equal(o.terminated, term)
                         and np.array_equal(o.truncated, trunc))
        return {"identical trajectories (cell, reward, terminated, truncated)": str(same)}

    return ours, peer, identical


def _batched(world, copies: int, steps: int):
    from rlscale.simulate import VecGridEnv

    env = VecGridEnv(world, np.arange(copies) % world.n_tasks, seed=0)
    rng = np.random.default_rng(1)
    actions = [rng.integers(0, 4, copies) for _ in range(steps)]

    def run() -> None:
        for a in actions:
            env.step(a)

    return run


def cases(smoke: bool) -> list[Case]:
    from rlscale.simulate import GridFamily, TrainConfig, frozen_lake, train

    copies, steps = (2_000, 2) if smoke else (50_000, 10)
    n = copies * steps
    gym_n = _gym_loop(n)
    world = GridFamily(size=8, subgoal_rate=0.3).sample(256, 4, rng=0)
    cfg = TrainConfig(
        n_environments=8 if smoke else 128, tasks_per_environment=4 if smoke else 8,
        trajectories_per_task=8 if smoke else 64, tasks_per_step=16 if smoke else 256,
        epochs=1 if smoke else 2, grid_size=8, eval_environments=8 if smoke else 64,
        algorithm="grpo")
    steps_train = train(cfg).env_steps
    ours_plain, peer_plain, identical = _plain_pair(copies, 4 * steps)
    return [
        Case(f"VecGridEnv.step FrozenLake 8x8 [{copies}x{4 * steps}]", ours_plain, peer_plain,
             "plain numpy loop of the same dynamics, written from the map",
             work=copies * 4 * steps, work_unit="env steps", extra=identical),
        Case(f"VecGridEnv FrozenLake 8x8 [{copies}x{steps}]",
             _batched(frozen_lake("8x8"), copies, steps), gym_n,
             "gymnasium FrozenLake-v1 8x8 Python loop, same steps", work=n,
             work_unit="env steps"),
        Case(f"VecGridEnv generated 8x8 [{copies}x{steps}]", _batched(world, copies, steps),
             gym_n, "gymnasium FrozenLake-v1 8x8 Python loop, same steps", work=n,
             work_unit="env steps"),
        Case(f"GRPO training incl. updates [{steps_train}]", lambda: train(cfg),
             _gym_loop(steps_train), "gymnasium loop, same steps, no learning",
             work=steps_train, work_unit="env steps", repeats=1 if smoke else 3),
    ]
