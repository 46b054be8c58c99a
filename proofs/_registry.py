"""The catalogue of rlscale's proofs: names, builders, checking.

Each proof lives in its own module ``rlscale.proofs._<name>`` exposing
``NAME`` and ``build(**constants) -> Proof``; the constants are parameters
so that mutation tests can perturb them and watch a step fail.

Examples
--------
>>> "bon-kl" in proof_names()
True
>>> result = check_proof("tilting")
>>> result.passed, result.count("failed")
(True, 0)
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from rlscale.proofs._core import Proof, ProofResult, StepResult

__all__ = ["build_proof", "check_proof", "check_proofs", "proof_module", "proof_names"]

# Proof name -> private module; in the order `rlscale prove` runs them.
_MODULES: dict[str, str] = {
    "bon-kl": "_bon_kl",
    "tilting": "_tilting",
    "emax-upper": "_emax_upper",
    "emax-lower": "_emax_lower",
    "reward-theta": "_reward_theta",
    "chinchilla": "_chinchilla",
    "nested-allocation": "_nested_allocation",
    "synthetic-ratio": "_synthetic_ratio",
    "inference-concavity": "_inference_concavity",
}


def proof_names() -> tuple[str, ...]:
    """The names of all proofs, in running order.

    Examples
    --------
    >>> len(proof_names()), proof_names()[0]
    (9, 'bon-kl')
    """
    return tuple(_MODULES)


def proof_module(name: str) -> Any:
    """The module that builds proof ``name``."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str; got {type(name).__name__}")
    if name not in _MODULES:
        raise ValueError(f"name must be one of {', '.join(_MODULES)}; got name={name!r}")
    return importlib.import_module(f"rlscale.proofs.{_MODULES[name]}")


def build_proof(name: str, **constants: Any) -> Proof:
    """Build proof ``name``, optionally with perturbed ``constants`` (mutation tests).

    The constants are the keyword parameters of the proof module's ``build``;
    an unknown one raises ``TypeError`` listing the valid ones.

    Examples
    --------
    >>> proof = build_proof("tilting")
    >>> proof.name, len(proof.steps) >= 4
    ('tilting', True)
    >>> build_proof("tilting", kl_coefficient=1).step("kl-of-tilt").check().status
    'failed'
    """
    build = proof_module(name).build
    valid = sorted(inspect.signature(build).parameters)
    unknown = sorted(set(constants) - set(valid))
    if unknown:
        raise TypeError(f"proof {name} has no constant {unknown[0]!r}; valid: {', '.join(valid)}")
    return build(**constants)


def check_proof(name: str, on_step: Callable[[StepResult], None] | None = None,
                **constants: Any) -> ProofResult:
    """Build and check proof ``name``; ``on_step`` is called with each step's result.

    Examples
    --------
    >>> result = check_proof("nested-allocation")
    >>> result.passed, result.step("attains-bound").mark
    (True, '✓')
    """
    return build_proof(name, **constants).check(on_step=on_step)


def check_proofs(names: Sequence[str] | None = None) -> list[ProofResult]:
    """Check the named proofs (all by default), in running order.

    Every name is validated before any proof runs.

    Examples
    --------
    >>> [(r.name, r.passed) for r in check_proofs(["synthetic-ratio", "emax-upper"])]
    [('synthetic-ratio', True), ('emax-upper', True)]
    """
    if names is not None and (isinstance(names, str | bytes) or not isinstance(names, Sequence)
                              or not all(isinstance(n, str) for n in names)):
        raise TypeError(f"names must be a sequence of proof names (str) or None; got "
                        f"{names!r:.60}")
    selected = proof_names() if not names else tuple(names)
    for name in selected:
        proof_module(name)  # validate every name before spending time on any proof
    return [check_proof(name) for name in selected]
