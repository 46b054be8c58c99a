"""Allocation's numbers pinned across the issue-25 refactor (the frozen state, one fast path).

Each row was recorded on main at f748960, before the allocation modules read a
frozen state instead of the problem: the solver that produced it, every value, the
loss and the cost as ``float.hex`` strings, and the integer rounding.  The refactor
moved code, not arithmetic, so the closed forms and Newton's points must agree to
the last bit on the machine that recorded them; the tolerance here (4 ulps for
those, 1e-11 relative for the conic solves, whose iterates go through the
solver's own BLAS) only leaves room for another CPU's ``exp``/``log`` and BLAS.
The other tests of the verbs compare paths within one run bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlscale.optimize import AllocationProblem, min_cost
from rlscale.optimize import _allocate as alloc_mod
from rlscale.optimize._alloc_closed_plan import ClosedPlan
from rlscale.theory import AdditiveLaw, SynthesisMethod, VarianceComponentsLaw

CHIN = AdditiveLaw(1.82, {"N": 482.01, "D": 2085.43}, {"N": 0.3478, "D": 0.3658})
SLAW = AdditiveLaw(0.1, {"E": 2.0, "K": 1.0}, {"E": 0.5, "K": 0.3})
SUB = AdditiveLaw(0.15, {"environments": 2.0, "tasks": 1.5},
                  {"environments": 0.45, "tasks": 0.3})


def _syn(kind: str) -> list[SynthesisMethod]:
    return [SynthesisMethod("E", unit_cost=1.5, rho=0.8,
                            saturation=None if kind == "linear" else 2.0, kind=kind, name="gen")]


PROBLEMS = {
    "chinchilla": (CHIN, "6*N*D", None, None, None),
    "chinchilla-capped": (CHIN, "6*N*D", {"N": (None, 1e10)}, None, None),
    "nested": (VarianceComponentsLaw(0.0, 4.0, 1.0, 1.0), "100*E + 10*E*t + E*t*k", None, None,
               None),
    "additive-linear": (SLAW, "10*E + K", None, None, None),
    "substituted": (SUB, "100*E + 10*E*t", {"t": (1, None)},
                    {"environments": "E", "tasks": "3*E*t"}, None),
    "synthetic-linear": (SLAW, "10*E + K", {"E": (None, 100)}, None, _syn("linear")),
    "synthetic-saturating": (SLAW, "10*E + K", {"E": (None, 100)}, None, _syn("saturating")),
}

#: (problem, verb, bound, method, solver, values, loss, cost, rounded) recorded on main.
PINNED = [
    ("chinchilla", "allocate", 5.76e+23, "auto", "closed form (power-laws/monomial-cost)",
     {"D": "0x1.355f4a166c25bp+40", "N": "0x1.0d25bb62461c9p+36"},
     "0x1.fa2c7928dfa96p+0", "0x1.e7e4171bf4ce9p+78", {'D': 1328743585389, 'N': 72248702500}),
    ("chinchilla", "min_cost", 2.2, "auto", "closed form (power-laws/monomial-cost)",
     {"D": "0x1.bb98476758492p+36", "N": "0x1.54a02346692edp+32"},
     "0x1.199999999999ap+1", "0x1.baaccc59481f3p+71", {'D': 119076583029, 'N': 5714748231}),
    ("chinchilla", "allocate", 1e+21, "gp", "CLARABEL gp",
     {"D": "0x1.beecd71d4a3b0p+35", "N": "0x1.4b37da8e22a11p+31"},
     "0x1.27774f84fec44p+1", "0x1.b1ae4d6e2ef43p+69", {'D': 59985279211, 'N': 2778459463}),
    ("chinchilla-capped", "allocate", 1e+23, "auto", "Newton gp",
     {"D": "0x1.840d131aaaa97p+40", "N": "0x1.2a05f20000002p+33"},
     "0x1.06837301cb4c9p+1", "0x1.52d02c7e14acfp+76", {'D': 1666666666667, 'N': 10000000000}),
    ("chinchilla-capped", "min_cost", 2.0, "auto", "Newton gp",
     {"D": "0x1.8eed7e6527947p+45", "N": "0x1.2a05f20000002p+33"},
     "0x1.0000000000000p+1", "0x1.5c4f4aa94b262p+81", {'D': 54828206957810, 'N': 10000000000}),
    ("chinchilla-capped", "allocate", 1e+23, "gp", "CLARABEL gp",
     {"D": "0x1.840d131aaaaafp+40", "N": "0x1.2a05f20000002p+33"},
     "0x1.06837301cb4c9p+1", "0x1.52d02c7e14afap+76", {'D': 1666666666667, 'N': 10000000000}),
    ("nested", "allocate", 10000.0, "auto", "closed form (nested)",
     {"E": "0x1.4b1838a2cf522p+6", "k": "0x1.94c583ada5b53p+1", "t": "0x1.94c583ada5b56p+0"},
     "0x1.de4304acd54c3p-5", "0x1.3880000000004p+13", {'E': 83, 'k': 4, 't': 1}),
    ("nested", "allocate", 10000.0, "gp", "CLARABEL gp",
     {"E": "0x1.4b1838a2cf522p+6", "k": "0x1.94c583ada5b52p+1", "t": "0x1.94c583ada5b52p+0"},
     "0x1.de4304acd54c4p-5", "0x1.3880000000002p+13", {'E': 83, 'k': 4, 't': 1}),
    ("nested", "min_cost", 0.01, "auto", "closed form (nested)",
     {"E": "0x1.e33edc9321e3fp+8", "k": "0x1.94c583ada5b53p+1", "t": "0x1.94c583ada5b53p+0"},
     "0x1.47ae147ae147bp-7", "0x1.c81b21e1639b4p+15", {'E': 483, 'k': 3, 't': 2}),
    ("additive-linear", "allocate", 10000.0, "auto", "Newton gp",
     {"E": "0x1.33a1b2e750568p+9", "K": "0x1.e0ebc0bdb7283p+11"},
     "0x1.0f040222f87c4p-2", "0x1.3880000000002p+13", {'E': 615, 'K': 3848}),
    ("additive-linear", "min_cost", 0.3, "auto", "Newton gp",
     {"E": "0x1.847ed9d5aa179p+8", "K": "0x1.1aee2789bee81p+11"},
     "0x1.3333333333333p-2", "0x1.80465bea69c2dp+12", {'E': 389, 'K': 2263}),
    ("substituted", "allocate", 100000.0, "auto", "Newton gp",
     {"E": "0x1.3fafa9604f151p+9", "t": "0x1.68fb4dca829dbp+2"},
     "0x1.68216d6204e84p-2", "0x1.86a000000000ap+16", {'E': 640, 't': 5}),
    ("synthetic-linear", "allocate", 1000.0, "auto", "CLARABEL dcp",
     {"E": "0x0.0p+0", "K": "0x1.c2d0b81735730p+8", "gen": "0x1.6e1f8545dc5e1p+8"},
     "0x1.81c9202f61782p-2", "0x1.f400000000001p+9", None),
    ("synthetic-saturating", "allocate", 10000.0, "auto", "CLARABEL dcp",
     {"E": "0x1.9000000000000p+6", "K": "0x1.18bc873247ba9p+13", "gen": "0x1.5e9779eb63d7dp+3"},
     "0x1.744f221025ce6p-2", "0x1.3880000000000p+13", {'E': 100, 'K': 8983, 'gen': 11}),
    ("synthetic-saturating", "min_cost", 0.4, "auto", "CLARABEL dcp",
     {"E": "0x1.9000000000000p+6", "K": "0x1.ffeaf55cc5f8cp+10", "gen": "0x1.c733d4c0cc145p+2"},
     "0x1.999999999999ap-2", "0x1.7e4ae18df3957p+11", {'E': 100, 'K': 2048, 'gen': 7}),
]


def _close(got: float, want_hex: str, solver: str) -> bool:
    want = float.fromhex(want_hex)
    if solver.startswith("CLARABEL"):
        return math.isclose(got, want, rel_tol=1e-11)
    return math.isclose(got, want, rel_tol=4 * 2.0 ** -52, abs_tol=0.0)


@pytest.mark.parametrize(("name", "verb", "bound", "method", "solver", "values", "loss", "cost",
                          "rounded"), PINNED, ids=[f"{p[0]}-{p[1]}-{p[3]}" for p in PINNED])
def test_the_numbers_main_published_before_the_refactor(name, verb, bound, method, solver,
                                                        values, loss, cost, rounded) -> None:
    law, cost_expr, bounds, subst, synth = PROBLEMS[name]
    a = getattr(AllocationProblem(law, cost_expr, bounds, subst, synth), verb)(bound,
                                                                              method=method)
    assert a.solver == solver
    assert a.values.keys() == values.keys()
    assert all(_close(a.values[k], v, solver) for k, v in values.items()), a.values
    assert _close(a.loss, loss, solver) and _close(a.cost, cost, solver)
    assert a.rounded == rounded


def test_a_numpy_float_takes_the_float_route(monkeypatch) -> None:
    """``min_cost(np.float64(2.2))`` and ``min_cost(2.2)`` (and the budgets of allocate)
    are one route: the closed plan's fast solve, with a Python float in the record."""
    calls = []
    solve = ClosedPlan.solve

    def counted(self, bound, round_integers):
        calls.append(type(bound))
        return solve(self, bound, round_integers)

    monkeypatch.setattr(ClosedPlan, "solve", counted)
    checked = []
    check = alloc_mod.check_scalar
    monkeypatch.setattr(alloc_mod, "check_scalar",
                        lambda name, value, **kw: checked.append(name) or check(name, value, **kw))
    prob = AllocationProblem(CHIN, "6*N*D")
    for verb, x in (("min_cost", 2.2), ("allocate", 5.76e23)):
        plain = getattr(prob, verb)(x)
        numpy = getattr(prob, verb)(np.float64(x))
        assert calls == [float, float] and checked == []  # the fast path, both
        calls.clear()
        assert type(numpy.target if verb == "min_cost" else numpy.budget) is float
        assert {k: v for k, v in numpy.as_dict().items() if k != "seconds"} == \
            {k: v for k, v in plain.as_dict().items() if k != "seconds"}
    # the verbs build a fresh problem each call: the same route again
    assert min_cost(CHIN, "6*N*D", np.float64(2.2)).values == prob.min_cost(2.2).values
    assert calls == [float, float]
    # an integer (not a float) goes through the checks, and the general path hands the
    # checked float to the same fast solve: the same digits
    calls.clear()
    assert prob.min_cost(3).values == prob.min_cost(3.0).values
    assert calls == [float, float] and checked == ["target"]


def test_numpy_floats_outside_the_interval_take_the_checked_path() -> None:
    prob = AllocationProblem(CHIN, "6*N*D")
    with pytest.raises(ValueError, match=r"target loss 1\.82 is equal to the law.s floor"):
        prob.min_cost(np.float64(1.82))
    with pytest.raises(ValueError, match=r"budget must be > 0; got budget=-1"):
        prob.allocate(np.float64(-1.0))
    with pytest.raises(ValueError, match="got budget=nan"):
        prob.allocate(np.float64("nan"))
