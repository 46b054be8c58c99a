"""The data axes of agentic RL, named once: canonical names, aliases, and where each is used.

A run trains on **E** environments × **t** tasks per environment × **k**
trajectories per task.  Before this module the first axis had four spellings
(``n_environments`` in ``TrainConfig``, ``environments`` in the results
table and sweep specs, ``E`` in laws and plans, ``environment`` in prose);
every user of the axes — the trainer, sweeps, the CLI and the report — now
reads them from :data:`AXES` (this module sits in ``theory``, below every
package, since issue 25: it was the trainer's ``simulate/_axes.py``, and the
report kept its own copies of the names and symbols; ``rlscale.simulate``
re-exports it unchanged):

=========================  =========================  ======  ===========================  =======
canonical name (column,    ``TrainConfig`` field      symbol  CLI flag                     minimum
sweep key)
=========================  =========================  ======  ===========================  =======
``environments``           ``n_environments``         ``E``   ``--environments``           1
``tasks_per_environment``  ``tasks_per_environment``  ``t``   ``--tasks-per-environment``  1
``trajectories_per_task``  ``trajectories_per_task``  ``k``   ``--trajectories-per-task``  2
=========================  =========================  ======  ===========================  =======

Beside them, :data:`CONTEXT` (``context``, symbol ``c``, flag ``--context``,
minimum 1) is the *harness* axis: the observations an agent keeps in its
context window; :data:`SWEEP_AXES` lists all four.

:func:`axis` resolves any of a row's spellings (name, field, symbol, alias)
to its :class:`Axis`; :data:`NAMES` and :data:`SYMBOLS` are the data axes'
canonical names and their symbols (the report fits and plans on them).  The
*derived* columns ``tasks = E·t`` and ``trajectories = E·t·k`` are totals, not
axes, and are never aliases of ``t`` or ``k``.  ``k >= 2`` because a
group-relative advantage needs two rollouts of a task.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["AXES", "CONTEXT", "NAMES", "SWEEP_AXES", "SYMBOLS", "Axis", "axis"]


@dataclass(frozen=True)
class Axis:
    """One data axis and every name it goes by.

    Attributes
    ----------
    name : str
        Canonical name: the results column and the sweep spec key.
    field : str
        The :class:`TrainConfig` field.
    symbol : str
        The symbol of laws and allocations (``E``, ``t``, ``k``).
    minimum : int
        Smallest valid value.
    description : str
        One line for help texts.
    aliases : tuple of str
        Further accepted spellings.
    """

    name: str
    field: str
    symbol: str
    minimum: int
    description: str
    aliases: tuple[str, ...] = ()

    @property
    def flag(self) -> str:
        """The command-line option, ``--`` and the name with dashes."""
        return "--" + self.name.replace("_", "-")

    @property
    def spellings(self) -> tuple[str, ...]:
        """Every accepted spelling, the canonical name first."""
        return tuple(dict.fromkeys((self.name, self.field, self.symbol, *self.aliases)))


#: The three axes in nesting order (environments contain tasks contain trajectories).
AXES: tuple[Axis, ...] = (
    Axis("environments", "n_environments", "E", 1, "number of training environments E",
         aliases=("environment",)),
    Axis("tasks_per_environment", "tasks_per_environment", "t", 1,
         "tasks per environment t"),
    Axis("trajectories_per_task", "trajectories_per_task", "k", 2,
         "trajectories per task k (the group size)"),
)

#: The data axes' canonical names, in nesting order.
NAMES: tuple[str, ...] = tuple(a.name for a in AXES)

#: Canonical name -> symbol of each data axis (``environments`` -> ``E``, ...): how a
#: results column becomes a law's or an allocation's variable.
SYMBOLS: dict[str, str] = {a.name: a.symbol for a in AXES}

#: The harness axis (issue 27): how many of its last observations the agent keeps in
#: context.  Not a data axis — it prices compute per step, not data — but a sweep, a
#: fitted law and an allocation treat it like one.
CONTEXT = Axis("context", "context", "c", 1,
               "context window c: observations the agent keeps (memory length)",
               aliases=("memory",))

#: Every axis a sweep may vary and a results file records: the data axes, then context.
SWEEP_AXES: tuple[Axis, ...] = (*AXES, CONTEXT)

_LOOKUP: dict[str, Axis] = {s: a for a in SWEEP_AXES for s in a.spellings}


def axis(name: Any) -> Axis:
    """The axis that ``name`` spells (canonical name, config field, symbol or alias).

    Examples
    --------
    >>> axis("E").name, axis("n_environments").name, axis("environment").field
    ('environments', 'environments', 'n_environments')
    >>> axis("k").minimum, axis("trajectories_per_task").flag
    (2, '--trajectories-per-task')
    >>> axis("tasks")
    Traceback (most recent call last):
    ...
    ValueError: name must be an axis: environments (or n_environments, E, environment), \
tasks_per_environment (or t), trajectories_per_task (or k), context (or c, memory); \
got name='tasks'
    >>> axis("tasks_per_environment").spellings
    ('tasks_per_environment', 't')
    """
    if not isinstance(name, str):
        raise TypeError(f"axis name must be a string; got name={name!r:.60}")
    try:
        return _LOOKUP[name]
    except KeyError:
        valid = ", ".join(
            a.name + (f" (or {', '.join(a.spellings[1:])})" if a.spellings[1:] else "")
            for a in SWEEP_AXES)
        raise ValueError(f"name must be an axis: {valid}; got name={name!r}") from None
