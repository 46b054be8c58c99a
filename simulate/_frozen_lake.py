"""Gymnasium's standard FrozenLake maps as :class:`GridWorld` tasks.

The maps and rules are those of ``gymnasium.envs.toy_text.FrozenLakeEnv``
(``FrozenLake-v1``): ``S`` start, ``F`` frozen, ``H`` hole, ``G`` goal; actions
0 left, 1 down, 2 right, 3 up; a slippery move goes in the intended or either
perpendicular direction with probability 1/3 each; moving off the grid stays
put.  The time limits are those registered for ``FrozenLake-v1`` (100 steps,
4x4) and ``FrozenLake8x8-v1`` (200 steps, 8x8).
"""

from __future__ import annotations

import numpy as np

from rlscale.simulate._gridworld import HOLE, MAX_SIZE, MAX_STEPS, N_STAGES, GridWorld
from rlscale.theory._validation import check_positive_int

__all__ = ["FROZEN_LAKE_MAPS", "frozen_lake", "world_from_text"]

#: The maps of gymnasium's FrozenLake-v1 (``MAPS`` in its source).
FROZEN_LAKE_MAPS: dict[str, tuple[str, ...]] = {
    "4x4": ("SFFF", "FHFH", "FFFH", "HFFG"),
    "8x8": (
        "SFFFFFFF",
        "FFFFFFFF",
        "FFFHFFFF",
        "FFFFFHFF",
        "FFFHFFFF",
        "FHHFFFHF",
        "FHFFHFHF",
        "FFFHFFFG",
    ),
}
_TIME_LIMITS = {"4x4": 100, "8x8": 200}


def world_from_text(rows: str | list[str] | tuple[str, ...], *, slippery: bool = True,
                    max_steps: int = 100) -> GridWorld:
    """One environment with one task from a map in FrozenLake letters.

    ``rows`` is a list of equal-length rows or one string with a row per line.
    ``S`` start, ``G`` goal, ``F`` free, ``H`` hole, ``W`` wall, and for a
    multi-subtask task ``K`` key and ``D`` door (both or neither).

    Examples
    --------
    >>> # The hole under the key forces a detour past the goal (not yet open) to the door.
    >>> w = world_from_text(["SKW", "FHD", "FFG"], slippery=False, max_steps=10)
    >>> w.shortest_path().tolist()
    [8]
    """
    if isinstance(rows, str):
        rows = rows.split()  # one string: one row a line
    elif not isinstance(rows, list | tuple) or not all(isinstance(r, str) for r in rows):
        raise TypeError(f"rows must be a string or a list of strings; got rows={rows!r:.80}")
    rows = list(rows)
    if not isinstance(slippery, bool | np.bool_):
        raise TypeError(f"slippery must be True or False; got slippery={slippery!r}")
    max_steps = check_positive_int("max_steps", max_steps, maximum=MAX_STEPS)
    S = len(rows)
    if S > MAX_SIZE:
        raise ValueError(f"rows must form a map of side <= {MAX_SIZE}; got side {S}")
    if S < 2 or any(len(r) != S for r in rows):
        raise ValueError(f"rows must form a square map of side >= 2; got {rows!r}")
    text = "".join(rows)
    bad = set(text) - set("SFHGWKD")
    if bad:
        raise ValueError(f"rows may only use the letters SFHGWKD; got {sorted(bad)}")
    counts = {ch: text.count(ch) for ch in "SGKD"}
    if counts["S"] != 1 or counts["G"] != 1 or counts["K"] != counts["D"] or counts["K"] > 1:
        raise ValueError(f"rows need one S, one G and optionally one K with one D; got {counts}")
    tiles = np.zeros((1, S, S), np.int8)
    flat = np.array(list(text))
    tiles[0] = np.where(flat == "H", HOLE, np.where(flat == "W", 2, 0)).reshape(S, S)
    targets = np.full((1, N_STAGES), -1, np.int64)
    targets[0, 2] = text.index("G")
    if counts["K"]:
        targets[0, 0], targets[0, 1] = text.index("K"), text.index("D")
    return GridWorld(
        tiles=tiles, slippery=np.array([bool(slippery)]), leak=np.array([-1]),
        task_env=np.array([0]), start=np.array([text.index("S")]), targets=targets,
        max_steps=int(max_steps),
    )


def frozen_lake(map_name: str = "4x4", slippery: bool = True) -> GridWorld:
    """Gymnasium's ``FrozenLake-v1`` map with its registered time limit.

    Examples
    --------
    >>> from rlscale.simulate import optimal_success
    >>> round(optimal_success(frozen_lake("4x4", slippery=False)), 6)
    1.0
    >>> frozen_lake("8x8").max_steps
    200
    """
    if map_name not in FROZEN_LAKE_MAPS:
        raise ValueError(
            f"map_name must be one of {', '.join(FROZEN_LAKE_MAPS)}; got map_name={map_name!r}"
        )
    return world_from_text(FROZEN_LAKE_MAPS[map_name], slippery=slippery,
                           max_steps=_TIME_LIMITS[map_name])
