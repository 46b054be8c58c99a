"""Environment steps per second: the batched numpy gridworld vs a Python loop over Gymnasium.

Three cases, each against a Python loop over Gymnasium's ``FrozenLake-v1``
(8x8, slippery, random actions, reset on episode end) doing the *same number*
of environment steps:

* the batched environment alone on the same 8x8 map (``VecGridEnv``,
  auto-reset, actions drawn in advance);
* the batched environment on the procedurally generated family;
* full GRPO training (rollouts, policy tables, clipped updates over several
  epochs, k3 KL; world generation and the exact held-out evaluation
  included), steps counted as training environment steps.

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
    return [
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
