"""Every public dataclass prints on one screen (issue 24).

The instances are the realistic ones the documentation builds: every docstring example
of ``rlscale.theory``, ``rlscale.optimize``, ``rlscale.simulate`` and ``rlscale.proofs``
is run (as the doctests do) and every instance of a public dataclass left in its
namespace is printed; the longest repr of each class must fit a screen, at most
``MAX_LINES`` lines and ``MAX_CHARS`` characters.

Classes whose repr does not fit yet are listed in ``TOO_LONG`` with what they printed
when this test was written; they are strict xfails, so a fixed one must leave the list.
A public dataclass that no example builds must be in ``NO_EXAMPLE`` -- a new one fails
here until its docstring shows it.
"""

from __future__ import annotations

import dataclasses
import doctest
import importlib
import pkgutil

import pytest

PACKAGES = ("rlscale.theory", "rlscale.optimize", "rlscale.simulate", "rlscale.proofs")
MAX_LINES = 25
MAX_CHARS = 2000

# Measured on this branch (chars, lines) when the test was written.
TOO_LONG = {
    "rlscale.optimize.PlanPath": "37,894 chars, 595 lines (arrays in full)",
    "rlscale.simulate.PgResult": "29,373 chars, 651 lines",
    "rlscale.optimize.Designer": "13,923 chars, 90 lines",
    "rlscale.simulate.SyntheticWorld": "8,728 chars, 340 lines",
    "rlscale.simulate.RmSetup": "8,459 chars, 254 lines",
    "rlscale.simulate.VerifierReport": "4,890 chars, 169 lines",
    "rlscale.proofs.ProofResult": "3,447 chars on one line",
    "rlscale.optimize.SigmoidAudit": "3,415 chars, 34 lines",
    "rlscale.proofs.Proof": "3,273 chars on one line",
    "rlscale.simulate.RewardWorld": "3,116 chars, 94 lines",
    "rlscale.optimize.SigmoidFit": "2,339 chars, 26 lines",
}
NO_EXAMPLE = {
    "rlscale.optimize.AdaptivePlan", "rlscale.optimize.Comparison",
    "rlscale.optimize.FrontierTarget", "rlscale.optimize.PlanTarget",
    "rlscale.proofs.Cited", "rlscale.proofs.Identity", "rlscale.proofs.IntervalCertificate",
    "rlscale.proofs.IntervalInequality", "rlscale.proofs.Limit",
    "rlscale.proofs.PolynomialInequality", "rlscale.proofs.Series", "rlscale.proofs.Sign",
    "rlscale.proofs.Step", "rlscale.simulate.CoPEConfig", "rlscale.simulate.TrainConfig",
    "rlscale.theory.CoverageTurn", "rlscale.theory.EmpiricalTurn",
    "rlscale.theory.LawProperties", "rlscale.theory.SelectionTurn",
}


def _public_dataclasses() -> dict[type, str]:
    out = {}
    for name in PACKAGES:
        mod = importlib.import_module(name)
        for attr in mod.__all__:
            obj = getattr(mod, attr)
            if isinstance(obj, type) and dataclasses.is_dataclass(obj):
                out[obj] = f"{name}.{attr}"
    return out


CLASSES = _public_dataclasses()


@pytest.fixture(scope="module")
def printed() -> dict[str, str]:
    """The longest repr of each public dataclass over the documentation's examples."""
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    found: dict[str, str] = {}
    for name in PACKAGES:
        pkg = importlib.import_module(name)
        modules = [pkg, *(importlib.import_module(i.name)
                          for i in pkgutil.walk_packages(pkg.__path__, name + "."))]
        for mod in modules:
            for test in finder.find(mod):
                if not test.examples:
                    continue
                runner.run(test, out=lambda _: None, clear_globs=False)
                for value in list(test.globs.values()):
                    label = CLASSES.get(type(value))
                    if label is not None:
                        text = repr(value)
                        if len(text) > len(found.get(label, "")):
                            found[label] = text
                test.globs.clear()
    return found


def test_every_public_dataclass_is_built_by_an_example_or_listed(printed) -> None:
    missing = set(CLASSES.values()) - set(printed)
    assert missing <= NO_EXAMPLE, (
        f"no docstring example builds {sorted(missing - NO_EXAMPLE)}: add one (it is "
        "also what this test prints)")


@pytest.mark.parametrize("label", sorted(set(CLASSES.values()) - NO_EXAMPLE))
def test_repr_fits_one_screen(printed, label: str) -> None:
    if label in TOO_LONG:
        if _fits(printed.get(label, "")):
            pytest.fail(f"{label} now fits one screen: remove it from TOO_LONG")
        pytest.xfail(f"known: {TOO_LONG[label]}")
    text = printed[label]
    assert _fits(text), f"{label}: {len(text)} chars, {len(text.splitlines())} lines\n{text[:600]}"


def _fits(text: str) -> bool:
    return len(text.splitlines()) <= MAX_LINES and len(text) <= MAX_CHARS
