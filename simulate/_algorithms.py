"""The policy-gradient algorithms of the trainer, behind one typed protocol.

An :class:`Algorithm` has a ``name``, the ``options`` it takes (a frozen
dataclass of defaults, validated when built), and an ``update`` that takes one
batch of rollouts to a policy step.  :meth:`Algorithm.options` refuses an
option the algorithm does not take — ``reinforce`` has no clipped ratio, so
``clip=0.1`` is an error naming the option and the algorithm, never dropped.

The registry :data:`ALGORITHMS` maps each name to its algorithm; each
algorithm's formula and source are in its own module:

============  ====================================================  =========================
name          estimator (module)                                    options (defaults)
============  ====================================================  =========================
reinforce     batch-mean baseline, KL in the return (``_reinforce``)  kl_coef 0
rloo          leave-one-out baseline per group (``_rloo``)           kl_coef 0
grpo          group-normalised, clipped, length-normalised          clip 0.2, kl_coef 0.001,
              (``_grpo``)                                           update_epochs 2
dr_grpo       GRPO without std and length normalisation             clip 0.2, kl_coef 0,
              (``_dr_grpo``)                                        update_epochs 2
rlds          per-subtask group advantages on GRPO's objective      clip 0.2, kl_coef 0.001,
              (``_rlds``)                                           update_epochs 2
cope          GRPO plus forecast heads on the policy's backbone     clip 0.2, kl_coef 0.001,
              predicting the next ``h`` actions (``_cope``)          update_epochs 2,
                                                                    forecast_weight 0.5,
                                                                    forecast_horizon 4
============  ====================================================  =========================

Every option is validated the same way whatever the algorithm: ``clip > 0``,
``kl_coef >= 0``, ``update_epochs`` an integer in ``[1, 1000]``,
``forecast_weight >= 0`` and ``forecast_horizon`` an integer in ``[1, 64]``.
An algorithm may need forecast heads on the policy (:meth:`PolicyGradient.heads`:
``cope`` needs ``forecast_horizon`` of them, the others none); the trainer
builds the policy with them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from rlscale.simulate import _cope, _dr_grpo, _grpo, _reinforce, _rlds, _rloo
from rlscale.simulate._gridworld import MAX_STEPS
from rlscale.theory._validation import check_positive_int, check_scalar

__all__ = ["ALGORITHMS", "OPTION_CHECKS", "Algorithm", "PolicyGradient", "get_algorithm"]

#: Validation of each option any algorithm may take: the value, checked and in its type.
OPTION_CHECKS: Mapping[str, Callable[[Any], Any]] = MappingProxyType({
    "clip": lambda v: check_scalar("clip", v, low=0.0, low_open=True),
    "kl_coef": lambda v: check_scalar("kl_coef", v, low=0.0),
    "update_epochs": lambda v: check_positive_int("update_epochs", v, maximum=1000),
    "forecast_weight": lambda v: check_scalar("forecast_weight", v, low=0.0, high=1e6),
    "forecast_horizon": lambda v: check_positive_int("forecast_horizon", v, maximum=64),
})


def _no_heads(options: Any) -> int:
    return 0


@runtime_checkable
class Algorithm(Protocol):
    """What the trainer needs from an algorithm.

    ``name`` is its registry key; ``defaults()`` the options it takes with
    their default values; ``options(**given)`` the validated options object
    (refusing any option not in ``defaults()``); ``heads(options)`` the
    forecast heads it needs on the policy's backbone; ``update(policy, optimizer,
    phi, logp_old, batch, options, max_steps)`` one policy step on a batch,
    returning at least ``{"clip_fraction": float}``.
    """

    name: str

    def defaults(self) -> dict[str, Any]: ...

    def options(self, **given: Any) -> Any: ...

    def heads(self, options: Any) -> int: ...

    def update(self, policy: Any, optimizer: Any, phi: Any, logp_old: Any, batch: Any,
               options: Any, max_steps: int) -> dict[str, float]: ...


@dataclass(frozen=True)
class PolicyGradient:
    """An :class:`Algorithm` made of an options dataclass and an update function.

    Examples
    --------
    >>> grpo = ALGORITHMS["grpo"]
    >>> grpo.defaults()
    {'clip': 0.2, 'kl_coef': 0.001, 'update_epochs': 2}
    >>> grpo.options(clip=0.1)
    GRPOConfig(clip=0.1, kl_coef=0.001, update_epochs=2)
    >>> ALGORITHMS["reinforce"].options(clip=0.1)
    Traceback (most recent call last):
    ...
    ValueError: algorithm 'reinforce' takes no option clip (its options: kl_coef); got clip=0.1
    """

    name: str
    options_type: type
    step: Callable[..., dict[str, float]]
    forecast_heads: Callable[[Any], int] = _no_heads

    def heads(self, options: Any) -> int:
        """Forecast heads the policy needs under ``options`` (0 for a plain policy gradient).

        Examples
        --------
        >>> ALGORITHMS["cope"].heads(ALGORITHMS["cope"].options(forecast_horizon=3))
        3
        >>> ALGORITHMS["grpo"].heads(ALGORITHMS["grpo"].options())
        0
        """
        if not isinstance(options, self.options_type):
            raise TypeError(f"options must be {self.options_type.__name__} (from "
                            f"ALGORITHMS[{self.name!r}].options()); got options={options!r:.80}")
        return int(self.forecast_heads(options))

    def defaults(self) -> dict[str, Any]:
        """The options this algorithm takes, with their defaults."""
        default = self.options_type()
        return {f.name: getattr(default, f.name) for f in fields(self.options_type)}

    def options(self, **given: Any) -> Any:
        """The validated options object; ``None`` values keep the default."""
        takes = self.defaults()
        for key, value in given.items():
            if value is not None and key not in takes:
                raise ValueError(f"algorithm {self.name!r} takes no option {key} (its options: "
                                 f"{', '.join(sorted(takes)) or 'none'}); got {key}={value!r}")
        checked = {k: OPTION_CHECKS[k](v) for k, v in given.items() if v is not None}
        return self.options_type(**checked)

    def update(self, policy: Any, optimizer: Any, phi: Any, logp_old: Any, batch: Any,
               options: Any, max_steps: int) -> dict[str, float]:
        """One policy step on ``batch`` (see the algorithm's module for the formula).

        ``options`` must be this algorithm's options object (from
        :meth:`options`); ``max_steps`` the world's time limit.
        """
        if not isinstance(options, self.options_type):
            raise TypeError(f"options must be {self.options_type.__name__} (from "
                            f"ALGORITHMS[{self.name!r}].options()); got options={options!r:.80}")
        max_steps = check_positive_int("max_steps", max_steps, maximum=MAX_STEPS)
        return self.step(policy, optimizer, phi, logp_old, batch, options, max_steps)


#: Algorithm name -> :class:`Algorithm` (read-only).
ALGORITHMS: Mapping[str, Algorithm] = MappingProxyType({
    "reinforce": PolicyGradient("reinforce", _reinforce.ReinforceConfig, _reinforce.update),
    "rloo": PolicyGradient("rloo", _rloo.RLOOConfig, _rloo.update),
    "grpo": PolicyGradient("grpo", _grpo.GRPOConfig, _grpo.update),
    "dr_grpo": PolicyGradient("dr_grpo", _dr_grpo.DrGRPOConfig, _dr_grpo.update),
    "rlds": PolicyGradient("rlds", _rlds.RLDSConfig, _rlds.update),
    "cope": PolicyGradient("cope", _cope.CoPEConfig, _cope.update, _cope.heads),
})


def get_algorithm(name: Any) -> Algorithm:
    """The registered algorithm called ``name``.

    Examples
    --------
    >>> get_algorithm("rloo").defaults()
    {'kl_coef': 0.0}
    >>> get_algorithm("ppo")
    Traceback (most recent call last):
    ...
    ValueError: algorithm must be one of reinforce, rloo, grpo, dr_grpo, rlds, cope; \
got algorithm='ppo'
    """
    if not isinstance(name, str) or name not in ALGORITHMS:
        kind = ValueError if isinstance(name, str) else TypeError
        raise kind(f"algorithm must be one of {', '.join(ALGORITHMS)}; got algorithm={name!r}")
    return ALGORITHMS[name]
