"""How a training run collects a batch and is evaluated, for each family and context.

Two collectors share one interface (:class:`Collector`), so the trainer's loop
(:mod:`rlscale.simulate._train`) and every algorithm are the same whatever the
environment family and however much context the agent keeps:

:class:`TableCollector` — gridworld, context 1 (the original trainer)
    The policy is Markov in the fully observed state: its log-probabilities
    are tabulated once per update for every state of the batch's tasks, the
    rollout reads the table, and held-out success is exact (dynamic
    programming, :func:`~rlscale.simulate.policy_success`).  A backbone
    policy's update runs on the visited states only (the others carry no
    weight in any loss).
:class:`WindowCollector` — the memory family, or gridworld with context ``c > 1``
    The policy reads its last ``c`` observations (:mod:`rlscale.simulate._windowed`)
    and is evaluated per step.  Held-out success is a Monte Carlo mean over
    ``eval_episodes`` rollouts of each held-out task, drawn from a stream
    seeded by ``eval_seed`` alone, so every evaluation of every run uses the
    same random numbers (common random numbers: differences between runs are
    not blurred by evaluation noise); its standard error is at most
    ``0.5/sqrt(eval_episodes·tasks)``.

Reference values beside the held-out success: for the gridworld the exact
optimum (a history-dependent policy cannot beat the Markov optimum of a fully
observed MDP) and the uniform policy's success; for the memory family
:func:`~rlscale.simulate._memory.reference_success` at the run's context
(not an upper bound, see that module) and the uniform policy's exact success.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from rlscale.simulate._backbone import BackbonePolicy
from rlscale.simulate._gridworld import N_STAGES, GridFamily, GridWorld
from rlscale.simulate._memory import (
    MemoryFamily,
    MemoryStepper,
    MemoryWorld,
    observation_table,
    reference_success,
    uniform_success,
)
from rlscale.simulate._policies import N_FEATURES, log_probs, state_features
from rlscale.simulate._rollout import Batch, rollout, state_rows
from rlscale.simulate._value_iteration import optimal_success, policy_success
from rlscale.simulate._windowed import GridStepper, windowed_rollout, windowed_success

__all__ = ["Collector", "HeldOut", "TableCollector", "WindowCollector", "make_collector"]


@dataclass(frozen=True, eq=False)
class HeldOut:
    """The held-out world and the reference successes printed beside a run's."""

    world: Any
    optimal: float
    untrained: float


class Collector(Protocol):
    """What the trainer needs from a family: batches, and held-out success."""

    n_features: int

    def collect(self, policy: Any, ids: np.ndarray, k: int, rng: np.random.Generator
                ) -> tuple[Any, np.ndarray, Batch]: ...

    def evaluate(self, policy: Any, held: HeldOut) -> np.ndarray: ...


class TableCollector:
    """Gridworld with a Markov policy tabulated per update (exact evaluation)."""

    n_features = N_FEATURES

    def __init__(self, world: GridWorld) -> None:
        self.world = world

    def collect(self, policy: Any, ids: np.ndarray, k: int, rng: np.random.Generator
                ) -> tuple[np.ndarray, np.ndarray, Batch]:
        blocks, row_base = state_rows(self.world, ids)
        phi = state_features(self.world, ids)[blocks].reshape(-1, N_FEATURES)
        logp_old, _ = log_probs(policy, phi)
        batch = rollout(self.world, ids, k, logp_old, rng, row_base)
        if isinstance(policy, BackbonePolicy):
            # Only visited states carry weight in any algorithm's loss, so the update runs
            # on them alone (the linear and MLP policies keep the whole table: their
            # published results are bit for bit those of the full-table sums).
            visited, row = np.unique(batch.row, return_inverse=True)
            phi, logp_old = phi[visited], logp_old[visited]
            batch = replace(batch, row=row.ravel(), n_rows=int(visited.size))
        return phi, logp_old, batch

    def evaluate(self, policy: Any, held: HeldOut) -> np.ndarray:
        phi = state_features(held.world)
        logp, _ = log_probs(policy, phi.reshape(-1, phi.shape[-1]))
        table = np.exp(logp).reshape(*phi.shape[:3], 4)
        return np.atleast_1d(policy_success(held.world, table))


class WindowCollector:
    """A policy reading its last ``context`` observations (Monte Carlo evaluation)."""

    def __init__(self, world: GridWorld | MemoryWorld, episodes: int, eval_seed: int) -> None:
        self.world = world
        self.episodes = episodes
        self.eval_seed = eval_seed
        self.n_features = (world.n_features if isinstance(world, MemoryWorld) else N_FEATURES)

    @staticmethod
    def _parts(world: GridWorld | MemoryWorld, ids: np.ndarray, k: int) -> tuple[Any, Any]:
        """The batch's observation table and a stepper over ``k`` copies of each task."""
        if isinstance(world, MemoryWorld):
            table = observation_table(world, ids)
            stepper = MemoryStepper(world, np.repeat(ids, k),
                                    np.repeat(np.arange(ids.size), k))
            return table, stepper
        table = state_features(world, ids).reshape(-1, N_FEATURES)
        base = np.arange(ids.size, dtype=np.int64) * (N_STAGES * world.size ** 2)
        return table, GridStepper(world, np.repeat(ids, k), np.repeat(base, k))

    def collect(self, policy: Any, ids: np.ndarray, k: int, rng: np.random.Generator
                ) -> tuple[Any, np.ndarray, Batch]:
        table, stepper = self._parts(self.world, ids, k)
        return windowed_rollout(stepper, ids.size, k, policy, table, self.world.max_steps, rng)

    def evaluate(self, policy: Any, held: HeldOut) -> np.ndarray:
        world = held.world
        rng = np.random.default_rng(np.random.SeedSequence([self.eval_seed, 0xE7A2]))
        out = np.empty(world.n_tasks)
        # Blocks of tasks keep the live state (copies × context) small.
        step = max(1, 8192 // self.episodes)
        for start in range(0, world.n_tasks, step):
            ids = np.arange(start, min(start + step, world.n_tasks))
            table, stepper = self._parts(world, ids, self.episodes)
            out[ids] = windowed_success(stepper, ids.size, self.episodes, policy, table,
                                        world.max_steps, rng)
        return out


def make_collector(config: Any, world: GridWorld | MemoryWorld) -> TableCollector | \
        WindowCollector:
    """The collector a configuration needs (table for Markov gridworld runs)."""
    if isinstance(world, GridWorld) and config.context == 1:
        return TableCollector(world)
    return WindowCollector(world, config.eval_episodes, config.eval_seed)


def held_out(config: Any) -> HeldOut:
    """The held-out world of a configuration and its reference successes (cached)."""
    return _held_out(config.family, config.eval_environments, config.eval_tasks_per_environment,
                     config.eval_seed, config.context)


@functools.lru_cache(maxsize=8)
def _held_out(family: GridFamily | MemoryFamily, n_env: int, n_tasks: int, eval_seed: int,
              context: int) -> HeldOut:
    rng = np.random.default_rng(np.random.SeedSequence([eval_seed, 0xE7A1]))
    world = family.sample(n_env, n_tasks, rng)
    if isinstance(world, MemoryWorld):
        return HeldOut(world, float(np.mean(reference_success(world, context))),
                       float(np.mean(uniform_success(world))))
    uniform = np.full((world.n_tasks, N_STAGES, world.size**2, 4), 0.25)
    return HeldOut(world, float(np.mean(optimal_success(world))),
                   float(np.mean(policy_success(world, uniform))))
