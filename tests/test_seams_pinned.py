"""Simulator and inference numbers pinned across the issue-25 seams refactor (item 5).

Recorded on b273279, before the selection simulators asked the rule objects, the
bandit called the algorithm modules' advantage functions and the inference
``Turn`` became one class per kind: Monte Carlo selection gains (every rule, a
pool of 1e300 included), the generalising-proxy gain, bandit learning curves of
every algorithm with fixed seeds, and inference plans (integer, baseline,
adaptive, continuous, the baselines' η).  The refactor moved code, not
arithmetic, so every number must agree to the last bit (``float.hex``, and a
SHA-256 of whole arrays) on the machine that recorded them; the continuous plan,
a conic solve through the solver's BLAS, is compared to 1e-9 relative.  The
values themselves are checked against independent computations elsewhere
(tests/test_selection_simulator.py, tests/test_bandit.py, tests/test_inference.py);
this file only says they did not move.  One value moved on purpose: the
empirical turn's ``accept_rate`` is p(1) = exp(a) (a perfect verifier accepts the
correct draws), where the old one dataclass returned its unused ``q`` field, 0.0.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np

from rlscale.optimize import (
    CONTEXT_METHODS,
    adaptive_plan,
    baseline_plan,
    compare_inference_plans,
    context_plan,
    continuous_plan,
    integer_plan,
)
from rlscale.optimize._inference import BASELINES
from rlscale.simulate import kl_bandit_pg, sample_selection
from rlscale.simulate._generalising_proxy import generalising_proxy_gain
from rlscale.theory import ContextTurn, InfeasibleError, Turn


def _h(a: Any) -> str:
    """SHA-256 (20 hex digits) of an array's float64 bytes: equal iff bit-identical."""
    arr = np.ascontiguousarray(np.asarray(a, dtype=np.float64))
    return hashlib.sha256(arr.tobytes()).hexdigest()[:20]


def _hex(x: Any) -> str:
    return float(x).hex()


def selection_rows() -> dict[str, list[str]]:
    rows = {}
    for method in ("bon", "quantile", "tilt"):
        for n, K in ((1e6, 3.0), (1e300, 50.0), (7.5, np.inf)):
            s = sample_selection(n, 1.3, method=method, K=K, trials=20_000, rng=11)
            rows[f"{method}|{n!r}|{K!r}"] = [_hex(x) for x in
                                             (s.gold, s.gold_se, s.proxy, s.proxy_se)]
    return rows


def generalising_rows() -> dict[str, list[Any]]:
    rows = {}
    for method in ("bon", "tilt"):
        r = generalising_proxy_gain(1e4, [0.5, 3.0, 30.0], d=6, misspecification=0.2,
                                    method=method, trials=300, rng=4)
        rows[method] = [_hex(r.rho), _hex(r.rho_se), _hex(r.rho_approx),
                        [_hex(g) for g in r.gain]]
    return rows


def bandit_rows() -> dict[str, list[str]]:
    rewards = np.random.default_rng(5).normal(size=(3, 6))
    rows = {}
    for alg in ("exact", "npg", "reinforce", "rloo", "grpo", "dr_grpo"):
        res = kl_bandit_pg(rewards, [0.5, 1.0, 2.0], steps=300, batch_size=8, algorithm=alg,
                           rng=3)
        one = kl_bandit_pg(rewards[0], 0.7, steps=200, batch_size=5, algorithm=alg, rng=9,
                           history=False)
        rows[alg] = [_h(res.probs), _h(res.kl_history), _h(res.objective_history),
                     _h(one.probs), _hex(one.kl)]
    return rows


TURNS = {
    "coverage": lambda: Turn.with_coverage(0.3, cost=2),
    "coverage1": lambda: Turn.with_coverage(1.0),
    "terminal": lambda: Turn.with_verifier(0.3, fpr=0.1, fnr=0.2),
    "terminal1": lambda: Turn.with_verifier(1.0, fpr=0.1, fnr=0.2),
    "retried": lambda: Turn.with_verifier(0.25, fpr=0.15, fnr=0.3, failures="retried", cost=3),
    "selection": lambda: Turn.with_selection(0.2, noise=0.7),
    "empirical": lambda: Turn.with_empirical(-1.7, -0.4),
}


def turn_rows() -> dict[str, list[Any]]:
    grid = np.array([0.0, 1.0, 1.5, 2.0, 7.25, 100.0, 1e6])
    rows = {}
    for name, build in TURNS.items():
        t = build()
        rows[name] = [_h(t.log_success_range(0, 300)), _h(t.log_success(grid)),
                      _hex(t.success(3)), _hex(t.accept_rate), _hex(t.precision),
                      _hex(t.fallback), t.sequential]
    return rows


PLAN_SETS = {
    "cover": lambda: [Turn.with_coverage(q) for q in (0.9, 0.5, 0.1)],
    "noisy": lambda: [Turn.with_verifier(q, fpr=0.15, fnr=0.25) for q in (0.4, 0.2, 0.8)],
    "mixed": lambda: [Turn.with_verifier(0.3, fpr=0.1, fnr=0.2, cost=2), Turn.with_coverage(0.4),
                      Turn.with_verifier(0.2, fpr=0.1, fnr=0.3, failures="retried"),
                      Turn.with_empirical(-1.5, -0.5)],
    "select": lambda: [Turn.with_selection(q, noise=0.5) for q in (0.9, 0.5, 0.1)],
}


def plan_rows() -> dict[str, dict[str, Any]]:
    rows = {}
    for name, build in PLAN_SETS.items():
        turns = build()
        ip = integer_plan(turns, 40)
        row: dict[str, Any] = {"integer": [list(ip.n), _hex(ip.log_success)], "baselines": {}}
        for b in BASELINES:
            plan = baseline_plan(turns, 40, b)
            row["baselines"][b] = [list(plan.n), _hex(plan.log_success)]
        if name != "select":
            cp = continuous_plan(turns, 40)
            row["continuous"] = [[float(v) for v in cp.n], cp.log_success]
            ap = adaptive_plan(turns, 40)
            row["adaptive"] = [_hex(ap.success), _h(ap.values), _h(ap.commit)]
        row["eta"] = {b: _hex(v) for b, v in compare_inference_plans(turns, 30).eta.items()}
        rows[name] = row
    return rows


CONTEXT_SETS = {
    "perfect": lambda: [ContextTurn(0.1, 0.9, 0.7, context_cost=0.5, levels=(1, 4, 16)),
                        ContextTurn(0.5, 0.6, 0.7, context_cost=0.5, levels=(1, 4, 16))],
    "noisy": lambda: [
        ContextTurn(0.2, 0.8, 0.5, base_cost=2.0, context_cost=0.25, levels=(1, 2, 8),
                    fpr=0.1, fnr=0.2),
        ContextTurn(0.3, 0.7, 1.0, context_cost=1.0, levels=(2, 8), fpr=0.05, fnr=0.1,
                    failures="retried"),
        ContextTurn(0.05, 0.95, 0.3, context_cost=0.1, levels=(1, 2, 8, 32))],
}


def context_rows() -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for name, build in CONTEXT_SETS.items():
        turns = build()
        for B in (12, 40, 97):
            for m in CONTEXT_METHODS:
                try:
                    p = context_plan(turns, B, m)
                    rows[f"{name}|{B}|{m}"] = [list(p.context), list(p.n), _hex(p.log_success)]
                except (ValueError, InfeasibleError) as exc:
                    rows[f"{name}|{B}|{m}"] = type(exc).__name__
    return rows


#: Recorded on 3962a9c (before context_plan's methods became a table) by context_rows.
PINNED_CONTEXT = {'perfect|12|joint': [[4, 1], [2, 3], '-0x1.3e5b2e1579617p-2'],
 'perfect|12|samples': [[1, 1], [4, 2], '-0x1.5ae6f1cd43c8ep+0'],
 'perfect|12|context': [[16, 4], [1, 1], '-0x1.a2ccc9e466ffep-1'],
 'perfect|12|fixed': [[4, 4], [2, 2], '-0x1.8f9d0525373cep-2'],
 'perfect|40|joint': [[4, 1], [7, 9], '-0x1.e34a4de836066p-9'],
 'perfect|40|samples': [[1, 1], [15, 5], '-0x1.0c9405d7090a2p-2'],
 'perfect|40|context': [[16, 16], [1, 1], '-0x1.8dccdcda7370ap-1'],
 'perfect|40|fixed': [[4, 4], [6, 7], '-0x1.e496f5202397dp-8'],
 'perfect|97|joint': [[4, 1], [17, 23], '-0x1.52b8f10ce7dfbp-22'],
 'perfect|97|samples': [[1, 1], [39, 9], '-0x1.2f57d5d360317p-6'],
 'perfect|97|context': [[16, 16], [1, 1], '-0x1.8dccdcda7370ap-1'],
 'perfect|97|fixed': [[4, 4], [15, 17], '-0x1.0d7c166cc91bcp-19'],
 'noisy|12|joint': [[8, 2, 8], [1, 2, 1], '-0x1.a6c419532a963p+0'],
 'noisy|12|samples': [[1, 2, 1], [1, 1, 3], '-0x1.16c037e863cd8p+2'],
 'noisy|12|context': [[8, 2, 32], [1, 1, 1], '-0x1.c9f7f73ca713cp+0'],
 'noisy|12|fixed': [[2, 2, 2], [1, 1, 3], '-0x1.3654b020badb9p+1'],
 'noisy|40|joint': [[8, 2, 8], [3, 6, 5], '-0x1.f7414ca841226p-3'],
 'noisy|40|samples': [[1, 2, 1], [5, 3, 8], '-0x1.f13c24cc7f101p+0'],
 'noisy|40|context': [[8, 8, 32], [1, 1, 1], '-0x1.86cda94d202c5p+0'],
 'noisy|40|fixed': [[8, 8, 8], [3, 2, 5], '-0x1.a06edf9c306a6p-2'],
 'noisy|97|joint': [[8, 2, 8], [9, 12, 12], '-0x1.62215aba733a4p-4'],
 'noisy|97|samples': [[1, 2, 1], [9, 6, 26], '-0x1.a41bc944cb4a0p-1'],
 'noisy|97|context': [[8, 8, 32], [1, 1, 1], '-0x1.86cda94d202c5p+0'],
 'noisy|97|fixed': [[8, 8, 8], [8, 5, 10], '-0x1.9c1d355a1a01ep-4']}


#: Recorded on b273279 (before the refactor) by the functions above.
PINNED = {'selection': {'bon|1000000.0|3.0': ['0x1.7b2b203d78363p+1',
                                     '0x1.75c06cecbf493p-8',
                                     '0x1.fe7952b427388p+2',
                                     '0x1.76c441c905c0fp-9'],
               'bon|1e+300|50.0': ['0x1.6983af42ba7dep+4',
                                   '0x1.6e933ebdb371ep-8',
                                   '0x1.e64c6400d07bap+5',
                                   '0x1.a1949047117bbp-12'],
               'bon|7.5|inf': ['0x1.b0a093afa19fap-1',
                               '0x1.975d6bbc7b9b2p-8',
                               '0x1.23ed2f70becdcp+1',
                               '0x1.d335be993f716p-8'],
               'quantile|1000000.0|3.0': ['0x1.8206e9b6fd1a4p+1',
                                          '0x1.7286d76884ad9p-8',
                                          '0x1.03c2e281dc60ap+3',
                                          '0x1.1e2b905fbd8dfp-9'],
               'quantile|1e+300|50.0': ['0x1.69a4a42bd24d8p+4',
                                        '0x1.6e51d3a0b6734p-8',
                                        '0x1.e67314dd1ec23p+5',
                                        '0x1.4707e797def2cp-12'],
               'quantile|7.5|inf': ['0x1.f7e525efdd808p-1',
                                    '0x1.8317b5428e08bp-8',
                                    '0x1.53807c49f405ep+1',
                                    '0x1.4809ba30e1ce3p-8'],
               'tilt|1000000.0|3.0': ['0x1.7e57fc3d7ff8dp+0',
                                      '0x1.ce4cc2c0bf7d1p-8',
                                      '0x1.016cb3c3d22acp+2',
                                      '0x1.7d0acf942326dp-7'],
               'tilt|1e+300|50.0': ['0x1.8637d3af2fbc8p+2',
                                    '0x1.ce4cc2c0bf7ccp-8',
                                    '0x1.067f0bee59359p+4',
                                    '0x1.7d0acf9423252p-7'],
               'tilt|7.5|inf': ['0x1.39587790d01b1p+0',
                                '0x1.ce4cc2c0bf7d0p-8',
                                '0x1.a60bf8ec2d8ddp+1',
                                '0x1.7d0acf942326ap-7']},
 'generalising': {'bon': ['0x1.d34b7efaeb922p-1',
                          '0x1.d2640ffa9009ap-18',
                          '0x1.d34be52e929cap-1',
                          ['0x1.a9cc7fdb4050fp-1', '0x1.09e2f11d51e24p+1', '0x1.b9cf4647e2f55p+2']],
                  'tilt': ['0x1.d34b7efaeb922p-1',
                           '0x1.d2640ffa9009ap-18',
                           '0x1.d34be52e929cap-1',
                           ['0x1.d34b7efaeb922p-1',
                            '0x1.1e2894c3bbb85p+1',
                            '0x1.c474d3303da5bp+2']]},
 'bandit': {'exact': ['09ce89f5e4731ad77278',
                      'e20e5c5fcd58b42c973d',
                      '3168767b6386af25e7bb',
                      'f56ac2388631bf2df8e5',
                      '0x1.008bb2241354fp-1'],
            'npg': ['0dc08d10f64697e8d1e4',
                    '026970f287244a30fdab',
                    '43def96a4a91259a0471',
                    '2de8d5043b4cb80f1503',
                    '0x1.00b2f47779cabp-1'],
            'reinforce': ['7ff31b83e8d139e9791f',
                          '8990bfcd0d55a1a1448b',
                          '7d542a012991cc8ad373',
                          '091f87f17e544c6ee325',
                          '0x1.f552603db94c0p-2'],
            'rloo': ['057b3e688e773e994f50',
                     '2906cd60a4eadff72a94',
                     '29bceb8afa68f4ad08b3',
                     '793d48e3b1b857056c43',
                     '0x1.f8a78e7850842p-2'],
            'grpo': ['8c2d3ff06570fa8aa61c',
                     '7db1a4354623ea03ab6d',
                     '8876275ccbdda8f40a65',
                     '1e41ae72e2a7b050e7ed',
                     '0x1.017c2fecd82eep-1'],
            'dr_grpo': ['7ff31b83e8d139e9791f',
                        '8990bfcd0d55a1a1448b',
                        '7d542a012991cc8ad373',
                        '091f87f17e544c6ee325',
                        '0x1.f552603db94c0p-2']},
 'turns': {'coverage': ['904c452e78f61be922df',
                        'eecde7a97ba56dfcdce1',
                        '0x1.50624dd2f1a9fp-1',
                        '0x1.3333333333333p-2',
                        '0x1.0000000000000p+0',
                        '0x0.0p+0',
                        True],
           'coverage1': ['42014762601696409315',
                         'b307584187ea4781fee4',
                         '0x1.0000000000000p+0',
                         '0x1.0000000000000p+0',
                         '0x1.0000000000000p+0',
                         '0x0.0p+0',
                         True],
           'terminal': ['c48510bf79488bf19e97',
                        '2141560f42c7c34309a0',
                        '0x1.18cbd1244a622p-1',
                        '0x1.3d70a3d70a3d7p-2',
                        '0x1.8c6318c6318c6p-1',
                        '0x1.642c8590b2164p-4',
                        True],
           'terminal1': ['42014762601696409315',
                         'b307584187ea4781fee4',
                         '0x1.0000000000000p+0',
                         '0x1.999999999999ap-1',
                         '0x1.0000000000000p+0',
                         '0x1.0000000000001p+0',
                         True],
           'retried': ['6509f5dc6f71cfabf217',
                       '87659197c354523f0632',
                       '0x1.c1020c49ba5e3p-2',
                       '0x1.2666666666666p-2',
                       '0x1.37a6f4de9bd38p-1',
                       '0x0.0p+0',
                       True],
           'selection': ['b2c62c6a64a072be3646',
                         'bcf4e2f7718895f29d59',
                         '0x1.b29024053fa62p-2',
                         '0x1.999999999999ap-3',
                         '0x1.0000000000000p+0',
                         '0x0.0p+0',
                         False],
           'empirical': ['84ca1b5d029e27589d44',
                         'd5059729b2cfd2cbb2bc',
                         '0x1.56685b9ca9045p-2',
                         '0x1.7622c78a98a07p-3',  # accept_rate: exp(a), was q = 0.0 (a fix)
                         '0x1.0000000000000p+0',
                         '0x0.0p+0',
                         True]},
 'plans': {'cover': {'integer': [[3, 7, 30], '-0x1.ab4a8b92beb97p-5'],
                     'baselines': {'uniform': [[13, 13, 13], '-0x1.2c718c20c5ce2p-2'],
                                   'front-loaded': [[19, 13, 7], '-0x1.4d32ddca938e9p-1'],
                                   'difficulty': [[4, 6, 29], '-0x1.0688814fea3c2p-4'],
                                   'fixed-n': [[13, 13, 13], '-0x1.2c718c20c5ce2p-2']},
                     'continuous': [[2.697576577467243, 7.2357395635289015, 30.066683666609244],
                                    -0.05167132509464008],
                     'adaptive': ['0x1.f55b9670a4b5bp-1',
                                  '5d3d5d1517b2849dfd3a',
                                  '77f3ea088c1912c73694'],
                     'eta': {'uniform': '0x1.aaaaaaaaaaaabp+0',
                             'front-loaded': '0x1.5d1745d1745d1p+1',
                             'difficulty': '0x1.08d3dcb08d3ddp+0',
                             'fixed-n': '0x1.aaaaaaaaaaaabp+0'}},
           'noisy': {'integer': [[13, 20, 7], '-0x1.cdf356e7982a9p-1'],
                     'baselines': {'uniform': [[13, 13, 13], '-0x1.d478a1638cda5p-1'],
                                   'front-loaded': [[19, 13, 7], '-0x1.d40fcf9ba24b7p-1'],
                                   'difficulty': [[11, 22, 6], '-0x1.cf063adf47b49p-1'],
                                   'fixed-n': [[13, 13, 13], '-0x1.d478a1638cda5p-1']},
                     'continuous': [[13.360127547541447, 19.897204790776883, 6.742665921026044],
                                    -0.9022122314273567],
                     'adaptive': ['0x1.a0c311a05a3c6p-2',
                                  '95a93e29bbeb558b2986',
                                  '7f3818b1926067aebc7f'],
                     'eta': {'uniform': '0x1.4000000000000p+0',
                             'front-loaded': '0x1.3333333333333p+0',
                             'difficulty': '0x1.1c71c71c71c72p+0',
                             'fixed-n': '0x1.4000000000000p+0'}},
           'mixed': {'integer': [[6, 6, 13, 9], '-0x1.0e5df87aa0720p+0'],
                     'baselines': {'uniform': [[5, 9, 9, 9], '-0x1.36894eb74f9ecp+0'],
                                   'front-loaded': [[8, 11, 8, 4], '-0x1.696c3fefcddf7p+0'],
                                   'difficulty': [[6, 5, 13, 8], '-0x1.1e9f885881227p+0'],
                                   'fixed-n': [[8, 8, 8, 8], '-0x1.3497de92c5c27p+0']},
                     'continuous': [[5.4932020730484465,
                                     6.056481661904921,
                                     13.105491177535367,
                                     9.851622990487675],
                                    -1.0522123910567294],
                     'adaptive': ['0x1.19f33b44826c4p-1',
                                  '5072e76bd370187abb45',
                                  '5b712acdb2a45c25f8b4'],
                     'eta': {'uniform': '0x1.1249249249249p+0',
                             'front-loaded': '0x1.4000000000000p+0',
                             'difficulty': '0x1.08d3dcb08d3ddp+0',
                             'fixed-n': '0x1.1c71c71c71c72p+0'}},
           'select': {'integer': [[3, 8, 29], '-0x1.08149fc209dddp-2'],
                      'baselines': {'uniform': [[13, 13, 13], '-0x1.fe7b7cdd60afbp-2'],
                                    'front-loaded': [[19, 13, 7], '-0x1.9f753d2b20ff2p-1'],
                                    'difficulty': [[4, 6, 29], '-0x1.1f79a0a8fe9b9p-2'],
                                    'fixed-n': [[13, 13, 13], '-0x1.fe7b7cdd60afbp-2']},
                      'eta': {'uniform': '0x1.9435e50d79436p+0',
                              'front-loaded': '0x1.4000000000000p+1',
                              'difficulty': '0x1.08d3dcb08d3ddp+0',
                              'fixed-n': '0x1.9435e50d79436p+0'}}}}


def test_selection_gains_are_pinned() -> None:
    assert selection_rows() == PINNED["selection"]


def test_generalising_proxy_gains_are_pinned() -> None:
    assert generalising_rows() == PINNED["generalising"]


def test_bandit_learning_curves_are_pinned() -> None:
    assert bandit_rows() == PINNED["bandit"]


def test_turn_laws_are_pinned() -> None:
    assert turn_rows() == PINNED["turns"]


def test_inference_plans_are_pinned() -> None:
    got, want = plan_rows(), PINNED["plans"]
    assert got.keys() == want.keys()
    for name in want:
        g, w = dict(got[name]), dict(want[name])
        if "continuous" in w:
            (gn, gl), (wn, wl) = g.pop("continuous"), w.pop("continuous")
            assert np.allclose(gn, wn, rtol=1e-9, atol=0.0), name
            assert math.isclose(gl, wl, rel_tol=1e-9), name
        assert g == w, name


def test_context_plans_are_pinned() -> None:
    assert context_rows() == PINNED_CONTEXT
