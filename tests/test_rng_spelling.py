"""``rng=`` everywhere (issue 25, item 4): a public verb that takes ``seed=`` also takes
``rng=`` — an integer seed or a Generator — with the same result for the same seed."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import rlscale.optimize as opt
from rlscale.theory import AdditiveLaw, ExpressionLaw
from rlscale.theory._validation import SEED_DRAW, seed_from

#: Verbs keeping ``seed=`` alone, and why: recommend belongs to issue 29's module (left for
#: its owner); Designer is a dataclass whose ``seed`` is a stored field of its state.
KEPT = {"recommend", "Designer"}

TRUTH = AdditiveLaw(1.5, {"N": 40.0}, {"N": 0.4})
N = np.repeat(np.logspace(2, 5, 8), 2)
DATA = {"N": N, "loss": TRUTH(N=N) * np.exp(0.02 * np.random.default_rng(0).normal(size=N.size))}


def test_every_optimize_verb_with_seed_takes_rng() -> None:
    missing = []
    for name in opt.__all__:
        fn = getattr(opt, name)
        if name in KEPT or not callable(fn):
            continue
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            continue
        if "seed" in params and "rng" not in params:
            missing.append(name)
    assert missing == []


def test_seed_from_reads_both_spellings() -> None:
    assert seed_from(0, None) == 0 and seed_from(4, None) == 4 and seed_from(0, 9) == 9
    draws = [seed_from(0, np.random.default_rng(5)) for _ in range(2)]
    assert draws[0] == draws[1] == int(np.random.default_rng(5).integers(SEED_DRAW))
    gen = np.random.default_rng(5)
    assert seed_from(0, gen) != seed_from(0, gen)  # the caller's stream advances
    with pytest.raises(TypeError, match="not both"):
        seed_from(3, 4)
    with pytest.raises(ValueError, match="rng"):
        seed_from(0, -1)
    with pytest.raises(TypeError, match="rng"):
        seed_from(0, 1.5)
    with pytest.raises(TypeError, match="Generator"):
        seed_from(0, np.random.RandomState(0))


def test_fit_law_rng_is_seed() -> None:
    by_seed = opt.fit_law(DATA, axes=["N"], bootstrap=30, seed=7)
    by_rng = opt.fit_law(DATA, axes=["N"], bootstrap=30, rng=7)
    assert by_rng.intervals == by_seed.intervals and by_rng.params == by_seed.params
    gen = [opt.fit_law(DATA, axes=["N"], bootstrap=30, rng=np.random.default_rng(2))
           for _ in range(2)]
    assert gen[0].intervals == gen[1].intervals
    drawn = int(np.random.default_rng(2).integers(SEED_DRAW))
    assert gen[0].intervals == opt.fit_law(DATA, axes=["N"], bootstrap=30,
                                           seed=drawn).intervals
    with pytest.raises(TypeError, match="not both"):
        opt.fit_law(DATA, axes=["N"], seed=1, rng=2)


def test_fit_expression_and_allocate_expression_rng_is_seed() -> None:
    law = ExpressionLaw("E + A/N**a", axes=["N"], params={"E": (0.5, 3), "A": (1, 1e3),
                                                         "a": (0.1, 1.0)})
    a = opt.fit_expression(law, DATA, bootstrap=10, seed=3)
    b = opt.fit_expression(law, DATA, bootstrap=10, rng=3)
    assert a.intervals == b.intervals
    sig = ExpressionLaw("1 - 0.8*sigmoid(log(N) + log(D) - 8)", axes=["N", "D"]).bind()
    p = opt.allocate_expression(sig, "N + D", 200.0, seed=4)
    q = opt.allocate_expression(sig, "N + D", 200.0, rng=4)
    assert p.values == q.values
