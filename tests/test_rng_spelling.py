"""``rng=`` everywhere (issue 25, item 4): a public verb that takes ``seed=`` also takes
``rng=`` — an integer seed or a Generator — with the same result for the same seed."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

import rlscale.optimize as opt
from rlscale.theory import AdditiveLaw, ExpressionLaw
from rlscale.theory._validation import SEED_DRAW, seed_from

TRUTH = AdditiveLaw(1.5, {"N": 40.0}, {"N": 0.4})
N = np.repeat(np.logspace(2, 5, 8), 2)
DATA = {"N": N, "loss": TRUTH(N=N) * np.exp(0.02 * np.random.default_rng(0).normal(size=N.size))}


def test_every_optimize_verb_with_seed_takes_rng() -> None:
    missing = []
    for name in opt.__all__:
        fn = getattr(opt, name)
        if not callable(fn):
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


def test_recommend_rng_is_seed() -> None:
    truth = AdditiveLaw(0.2, {"E": 2.0, "k": 0.5}, {"E": 0.5, "k": 0.5})
    grid = opt.star_design({"E": 8, "k": 8}, {"E": [1, 4, 16, 64], "k": [1, 4, 16, 64]})
    x = {a: np.repeat([p[a] for p in grid], 3) for a in ("E", "k")}
    data = {**x, "loss": truth.loss(x) * np.exp(
        0.03 * np.random.default_rng(0).standard_normal(x["E"].size))}
    args = (data, "E + k", 100.0, {"E": 8.0, "k": 8.0})
    kw = {"bounds": {"E": (1, 1e4), "k": (1, 1e4)}, "bootstrap": 20, "plan_laws": 2}

    def same(a, b) -> bool:  # the seed moves the split and both bootstraps' figures
        def figures(r):
            return r.choice, r.values, {k: (c.eta_interval, c.p_beats)
                                        for k, c in r.comparisons.items()}
        return figures(a) == figures(b)

    by_seed = opt.recommend(*args, seed=5, **kw)
    assert same(opt.recommend(*args, rng=5, **kw), by_seed)
    drawn = int(np.random.default_rng(3).integers(SEED_DRAW))
    assert same(opt.recommend(*args, rng=np.random.default_rng(3), **kw),
                opt.recommend(*args, seed=drawn, **kw))
    with pytest.raises(TypeError, match="not both"):
        opt.recommend(*args, seed=1, rng=2, **kw)
    with pytest.raises(ValueError, match="fit_options must not set 'rng'"):
        opt.recommend(*args, fit_options={"rng": 1}, **kw)


def test_designer_rng_is_stored_as_its_seed() -> None:
    n, d = (g.ravel() for g in np.meshgrid(np.geomspace(1e7, 1e9, 4), np.geomspace(1e8, 1e10, 4)))
    budget = 0.1 * float(np.sum(6 * n * d))
    args = ("additive", {"N": n, "D": d}, budget, opt.PlanTarget(30 * budget))
    kw = {"cost": "6*N*D", "axes": ["N", "D"]}
    assert opt.Designer(*args, rng=7, **kw).seed == 7
    gen = np.random.default_rng(4)
    first, second = opt.Designer(*args, rng=gen, **kw), opt.Designer(*args, rng=gen, **kw)
    assert first.seed == int(np.random.default_rng(4).integers(SEED_DRAW)) != second.seed
    assert "rng" not in {f.name for f in dataclasses.fields(opt.Designer)}  # not state
    with pytest.raises(TypeError, match="not both"):
        opt.Designer(*args, seed=1, rng=2, **kw)
    with pytest.raises(ValueError, match="rng"):
        opt.Designer(*args, rng=-3, **kw)
