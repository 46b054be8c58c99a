"""Every public callable, fed wrong types, raises TypeError/ValueError naming the argument
(issue 22, item 3).

The hypothesis contract suites draw hostile values at random; this pass is
exhaustive and deterministic over one thing: for every entry of every contract
table (``rlscale.theory``, ``rlscale.optimize``, ``rlscale.simulate`` and the
other packages) and every argument, each value of :data:`WRONG` -- objects no
argument of rlscale accepts -- must be refused with a ``TypeError`` or
``ValueError`` whose message names that argument.  Accepting one silently (a
flag that is truthy, an ignored keyword) fails as much as an ``AttributeError``.
The tables also cover every name of every public ``__all__``
(:func:`test_every_public_module_has_a_contract_table`).
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from contracts import CALLS, time_limit

import rlscale

#: Values no argument of rlscale takes (a callable, except by the callback arguments).
WRONG = (object(), lambda: 0, {"key": object()}, [object()], b"\x00\xff")
CALLBACKS = {"on_row", "on_step"}


def _entries():
    # The optimize table is test_contracts_optimize's CASES, which holds the entries of
    # _contract_cases_optimize, _decision and _design besides its own: importing
    # the helper module alone left allocate, fit_law, the context and decision entries
    # (issues 27 and 29) out of this pass.
    import test_contracts_optimize as opt
    import test_contracts_packages as pkg
    import test_contracts_simulate as sim
    import test_contracts_theory as th

    for case in (*sim.CASES, *opt.CASES, *pkg.CASES):
        yield case.name, case.call, case.base, case.names
    for name, c in th.CONTRACTS.items():
        yield f"theory.{name}", c.call, c.valid, c.labels


ENTRIES = list(_entries())


@pytest.mark.parametrize(("name", "call", "base", "names"), ENTRIES,
                         ids=[e[0] for e in ENTRIES])
def test_wrong_types_are_refused_naming_the_argument(name, call, base, names) -> None:
    import os

    failures, node = [], os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
    for arg in base:
        allowed = (arg, *names.get(arg, ()))
        for value in WRONG:
            if callable(value) and (callable(base[arg]) or arg in CALLBACKS):
                continue  # a callback argument: another callable is a valid value
            kwargs = {**base, arg: value}
            CALLS[node] += 1  # counted with the fuzzed examples (RLSCALE_CONTRACT_LOG)
            try:
                with time_limit(20):
                    call(**kwargs)
            except (TypeError, ValueError) as exc:
                if not any(a in str(exc) for a in allowed):
                    failures.append(f"{arg}={value!r:.30}: {type(exc).__name__} names none of "
                                    f"{allowed}: {str(exc)[:120]}")
            except Exception as exc:
                failures.append(f"{arg}={value!r:.30}: {type(exc).__name__}: {str(exc)[:120]}")
            else:
                failures.append(f"{arg}={value!r:.30}: accepted")
    assert not failures, "\n".join(failures)


#: Public modules with an ``__all__`` and the contract table that covers their names.
COVERED = {
    "rlscale": "test_contracts_packages", "rlscale.cli": "test_contracts_packages",
    "rlscale.proofs": "test_contracts_packages", "rlscale.sweep": "test_contracts_packages",
    "rlscale.report": "test_contracts_packages",
    "rlscale.verification": "test_contracts_packages",
    "rlscale.properties": "test_contracts_packages",
    "rlscale.properties.strategies": "test_contracts_packages",
    "rlscale.theory": "test_contracts_theory", "rlscale.theory.reward": "test_contracts_theory",
    "rlscale.optimize": "test_contracts_optimize", "rlscale.simulate": "test_contracts_simulate",
}


def test_every_public_module_has_a_contract_table() -> None:
    found = {"rlscale"}
    for info in pkgutil.walk_packages(rlscale.__path__, "rlscale."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        module = importlib.import_module(info.name)
        if getattr(module, "__all__", None):
            found.add(info.name)
    missing = sorted(found - set(COVERED))
    assert not missing, f"public modules whose __all__ no contract table covers: {missing}"
