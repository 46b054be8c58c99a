"""The fitter's input step (``optimize/_fit_data.py``): every refusal once, values by hand.

``prepare`` validates every argument of ``fit_law`` and builds the objective;
each validation branch is reached here once with its message, and the
accepted input is checked against numbers worked out by hand (log columns,
replicate means, the floor's bounds in log space, the clipped start grid).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest

from rlscale.optimize._fit_data import (
    aggregate,
    columns,
    limit_bounds,
    log_floor_bounds,
    prepare,
)
from rlscale.optimize._fit_family import GRID

DATA = {"N": [1.0, 2.0, 4.0, 8.0, 16.0], "loss": [5.0, 4.0, 3.0, 2.5, 2.2]}
RATES = {"N": [1.0, 2.0, 4.0, 8.0, 16.0], "loss": [0.1, 0.2, 0.3, 0.5, 0.9]}


def _prep(**kw):
    args = {"data": DATA, "law": "additive", "axes": ["N"], "target": "loss", "delta": 1e-3,
            "reduction": "sum", "replicates": "keep", "confidence": 0.9, "holdout": 0.1,
            "bootstrap": 0, "n_jobs": -1, "floor": None, "p_max": None}
    args.update(kw)
    return prepare(**args)


@pytest.mark.parametrize(("kw", "match"), [
    ({"law": "foo"}, r"law must be one of \('additive', 'multiplicative', 'pass_rate'\) or an "
                     r"expression law; got law='foo'"),
    ({"law": 3}, "law must be one of"),
    ({"axes": None}, "axes must be a non-empty list of column names; got axes=None"),
    ({"axes": "N"}, "got axes='N'"),
    ({"axes": []}, r"got axes=\[\]"),
    ({"axes": ("N", 1)}, r"got axes=\('N', 1\)"),
    ({"axes": ["N", "N"]}, r"axes must be distinct; got \['N', 'N'\]"),
    ({"axes": ["1x"]}, "axis names must be identifiers"),
    ({"n_jobs": True}, r"n_jobs must be a non-zero integer \(-1: all cores\); got n_jobs=True"),
    ({"n_jobs": 0}, "got n_jobs=0"),
    ({"n_jobs": 1.0}, "got n_jobs=1.0"),
    ({"reduction": "max"}, "reduction must be 'sum' or 'mean'; got reduction='max'"),
    ({"reduction": 1}, "got reduction=1"),
    ({"replicates": "median"}, "replicates must be 'keep' or 'mean'; got replicates='median'"),
    ({"replicates": None}, "got replicates=None"),
    ({"delta": 1000.5}, "delta must be > 0 and <= 1000"),
    ({"delta": 0.0}, "delta must be > 0"),
    ({"confidence": 1.0}, "confidence must be > 0 and < 1"),
    ({"confidence": 0.0}, "confidence must be > 0 and < 1"),
    ({"holdout": 0.51}, "holdout must be >= 0 and <= 0.5"),
    ({"holdout": -0.01}, "holdout must be >= 0"),
    ({"bootstrap": -1}, "bootstrap must be an integer >= 0"),
    ({"data": {"N": [1.0, 2.0, 4.0], "loss": [5.0, 4.0, 3.0]}},
     r"fitting a 1-axis additive law needs at least 4 points \(it has 3 parameters\); got 3"),
    ({"data": {"N": [1.0, 2.0], "loss": [5.0, 4.0]}, "law": "multiplicative"},
     "needs at least 3 points"),
    ({"bootstrap": 4 * 10**7 + 1},
     r"bootstrap x points = 40000001 x 5 exceeds 2e\+08: use fewer resamples"),
    ({"law": "pass_rate", "data": {"N": [1.0, 2, 4, 8, 16], "loss": [.1, .2, .3, 1.5, .9]}},
     r"a pass rate must be in \(0, 1\]; got data\['loss'\]=1.5 at index 3"),
    ({"law": "pass_rate", "data": {"N": [1.0, 2, 4, 8, 16], "loss": [.1, 1.0001, .3, .5, .9]}},
     r"got data\['loss'\]=1.0001 at index 1"),
    ({"data": {"N": [1.0, 2, 4, 8, 16], "loss": [1.0, 2, 3, 4, 5]}}, "rises as the axes grow"),
])
def test_prepare_refusals(kw: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        _prep(**kw)


def test_bootstrap_work_limit_is_inclusive_and_rates_of_one_are_accepted() -> None:
    assert _prep(bootstrap=4 * 10**7).bootstrap == 4 * 10**7  # 4e7 x 5 = 2e8 exactly
    p = _prep(law="pass_rate", data={"N": [1.0, 2, 4, 8, 16], "loss": [.1, .2, .3, .5, 1.0]})
    assert p.y_min == 0.1
    # the first rate above 1 is named, not a rate equal to 1 before it
    with pytest.raises(ValueError, match=r"got data\['loss'\]=1.5 at index 2"):
        _prep(law="pass_rate", data={"N": [1.0, 2, 4, 8, 16], "loss": [1.0, .2, 1.5, .5, .9]})


def test_accepted_limits_of_the_scalar_arguments() -> None:
    p = _prep(n_jobs=1, delta=1000.0, confidence=1e-9, holdout=0.5, bootstrap=0)
    assert (p.obj.delta, p.confidence, p.holdout, p.bootstrap) == (1000.0, 1e-9, 0.5, 0)
    assert _prep(n_jobs=np.int64(2), holdout=0.0, confidence=0.999).holdout == 0.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.law = "multiplicative"  # type: ignore[misc]


def test_prepare_additive_values() -> None:
    p = _prep(delta=0.25, confidence=0.8, holdout=0.2, bootstrap=7)
    np.testing.assert_array_equal(p.x, [[1.0], [2.0], [4.0], [8.0], [16.0]])
    np.testing.assert_array_equal(p.obj.logx, np.log(p.x))
    np.testing.assert_array_equal(p.obj.logy, np.log(DATA["loss"]))
    assert (p.obj.family, p.obj.delta, p.obj.scale) == ("additive", 0.25, 1.0)
    assert (p.law, p.axes, p.y_min) == ("additive", ("N",), 2.2)
    assert (p.confidence, p.holdout, p.bootstrap, p.floor_bounds) == (0.8, 0.2, 7, None)
    assert p.bounds == [(None, None), (None, None), (0.0, None)]
    # The engine's box: log floor and coefficient within ±690 (e^±690 finite and > 0, so
    # the fitted law object is always valid), the exponent >= 0 and open above.
    np.testing.assert_array_equal(p.lower, [-690.0, -690.0, 0.0])
    np.testing.assert_array_equal(p.upper, [690.0, 690.0, np.inf])
    np.testing.assert_array_equal(p.grid, list(itertools.product(
        GRID["log_floor"], GRID["log_coefficient"], GRID["exponent"])))
    assert p.fam.name == "additive"


def test_prepare_multiplicative_mean_and_pass_rate_values() -> None:
    m = _prep(law="multiplicative", reduction="mean")
    assert (m.obj.family, m.obj.scale) == ("multiplicative", 1 / 5)
    assert m.bounds == [(None, None), (0.0, None)]
    r = _prep(law="pass_rate", data=RATES)
    # a pass rate is fitted through its loss 1/p
    np.testing.assert_allclose(r.obj.logy, -np.log(RATES["loss"]), rtol=1e-15)
    assert (r.obj.family, r.y_min, r.fam.name) == ("additive", 0.1, "pass_rate")
    assert r.bounds[0] == (0.0, None)


def test_prepare_averages_replicates_only_when_asked() -> None:
    data = {"N": [2.0, 1.0, 2.0, 1.0, 3.0, 4.0], "loss": [3.0, 6.0, 2.0, 4.0, 1.5, 1.2]}
    keep = _prep(data=data)
    assert keep.obj.logy.size == 6 and keep.y_min == 1.2
    mean = _prep(data=data, replicates="mean")
    np.testing.assert_array_equal(mean.x, [[1.0], [2.0], [3.0], [4.0]])
    np.testing.assert_allclose(mean.obj.logy, np.log([5.0, 2.5, 1.5, 1.2]), rtol=1e-15)
    assert mean.y_min == 1.2  # the raw minimum, before averaging
    # a pass rate is averaged as a rate, then inverted: mean(0.2, 0.4) = 0.3 -> 1/0.3
    rates = {"N": [1.0, 1.0, 2.0, 4.0, 8.0], "loss": [0.2, 0.4, 0.5, 0.6, 0.9]}
    pr = _prep(law="pass_rate", data=rates, replicates="mean")
    np.testing.assert_allclose(pr.obj.logy, np.log([1 / 0.3, 2.0, 1 / 0.6, 1 / 0.9]),
                               rtol=1e-15)


def test_aggregate_by_hand() -> None:
    x = np.array([[2.0, 1.0], [1.0, 5.0], [2.0, 1.0], [1.0, 5.0], [1.0, 5.0], [3.0, 0.5]])
    y = np.array([1.0, 2.0, 3.0, 4.0, 9.0, 7.0])
    ux, uy = aggregate(x, y)
    np.testing.assert_array_equal(ux, [[1.0, 5.0], [2.0, 1.0], [3.0, 0.5]])
    np.testing.assert_allclose(uy, [5.0, 2.0, 7.0], rtol=1e-15)


def test_floor_bounds_clip_the_start_grid() -> None:
    # log floors -1, -0.5, 0, 0.5, 1 clipped into [0.2, 0.7]: -1..0 -> 0.2, 0.5, 1 -> 0.7
    p = _prep(floor=(math.exp(0.2), math.exp(0.7)))
    assert p.floor_bounds == (math.exp(0.2), math.exp(0.7))
    assert p.bounds[0] == pytest.approx((0.2, 0.7), rel=1e-15)
    np.testing.assert_allclose(p.grid, list(itertools.product(
        (0.2, 0.5, 0.7), GRID["log_coefficient"], GRID["exponent"])), rtol=1e-15)
    assert p.lower[0] == pytest.approx(0.2) and p.upper[0] == pytest.approx(0.7)
    # an open floor keeps the grid whole; a lower bound alone clips only from below
    opened = _prep(floor=(0.0, math.inf))
    assert opened.bounds[0] == (None, None) and opened.grid.shape == (150, 3)
    lower = _prep(floor=(1.0, math.inf))
    np.testing.assert_array_equal(np.unique(lower.grid[:, 0]), [0.0, 0.5, 1.0])
    upper = _prep(floor=(0.0, 1.0))
    np.testing.assert_array_equal(np.unique(upper.grid[:, 0]), [-1.0, -0.5, 0.0])


def test_p_max_bounds_on_the_log_floor() -> None:
    p = _prep(law="pass_rate", data=RATES, p_max=(0.5, 0.8))
    # floor of 1/p is 1/p_max in [1/0.8, 1/0.5]: log bounds (log 1.25, log 2)
    assert p.bounds[0] == pytest.approx((math.log(1.25), math.log(2.0)), rel=1e-15)
    assert p.floor_bounds == (0.5, 0.8)


@pytest.mark.parametrize(("law", "floor", "p_max", "match"), [
    ("additive", (1, 2), (0.5, 1), r"pass floor= \(additive laws\) or p_max= \(pass-rate "
                                   r"laws\), not both"),
    ("multiplicative", (1, 2), None, r"floor=\(low, high\) bounds an additive law's floor; "
                                     r"law='multiplicative' has no floor"),
    ("pass_rate", (1, 2), None, "law='pass_rate' has p_max= instead"),
    ("additive", None, (0.5, 1), r"p_max=\(low, high\) bounds a pass-rate law; got "
                                 r"law='additive'"),
    ("additive", "ab", None, r"floor must be a pair \(low, high\); got floor='ab'"),
    ("additive", (1, 2, 3), None, r"got floor=\(1, 2, 3\)"),
    ("additive", 5, None, "got floor=5"),
    ("additive", (3, 2), None, r"floor must have low <= high; got floor=\(3, 2\)"),
    ("additive", (-1, 2), None, r"floor\[0\] must be >= 0"),
    ("additive", (0, 0), None, r"floor\[1\] must be > 0"),
    ("pass_rate", None, (0, 1), r"p_max\[0\] must be > 0 and <= 1"),
    ("pass_rate", None, (1.2, 1.2), r"p_max\[0\] must be > 0 and <= 1"),
    ("pass_rate", None, (0.5, 1.2), r"p_max\[1\] must be > 0 and <= 1"),
    ("pass_rate", None, (0.5, math.inf), r"p_max\[1\] must be finite"),
    ("pass_rate", None, (0.9, 0.5), r"p_max must have low <= high; got p_max=\(0.9, 0.5\)"),
])
def test_limit_bounds_refusals(law, floor, p_max, match) -> None:
    with pytest.raises(ValueError, match=match):
        limit_bounds(law, floor, p_max)


def test_limit_bounds_accepted_values() -> None:
    assert limit_bounds("additive", None, None) is None
    assert limit_bounds("pass_rate", None, None) is None
    assert limit_bounds("additive", (0, math.inf), None) == (0.0, math.inf)
    assert limit_bounds("additive", [2, 2], None) == (2.0, 2.0)
    assert limit_bounds("pass_rate", None, (1.0, 1.0)) == (1.0, 1.0)
    assert limit_bounds("pass_rate", None, (1e-9, 0.5)) == (1e-9, 0.5)


def test_log_floor_bounds_by_hand() -> None:
    assert log_floor_bounds("additive", (0.0, math.inf)) == (None, None)
    assert log_floor_bounds("additive", (2.0, 5.0)) == (math.log(2.0), math.log(5.0))
    assert log_floor_bounds("additive", (0.5, 5.0)) == (math.log(0.5), math.log(5.0))
    assert log_floor_bounds("additive", (0.0, 5.0)) == (None, math.log(5.0))
    assert log_floor_bounds("additive", (2.0, math.inf)) == (math.log(2.0), None)
    # 1/p_max in [1/high, 1/low], never below 1
    assert log_floor_bounds("pass_rate", (0.25, 0.5)) == (math.log(2.0), math.log(4.0))
    assert log_floor_bounds("pass_rate", (0.5, 1.0)) == (0.0, math.log(2.0))


def test_columns_values_and_refusals() -> None:
    x, y = columns({"a": [1, 2], "b": [3.0, 4.0], "y": [0.5, 0.25], "extra": ["s", "t"]},
                   ["b", "a"], "y")
    np.testing.assert_array_equal(x, [[3.0, 1.0], [4.0, 2.0]])
    np.testing.assert_array_equal(y, [0.5, 0.25])
    assert x.dtype == np.float64
    with pytest.raises(TypeError, match=r"data must be a mapping of column name -> values "
                                        r"\(or a DataFrame\); got list"):
        columns([[1, 2]], ["N"], "loss")
    with pytest.raises(TypeError, match="target must be a column name"):
        columns({"N": [1, 2, 3], "loss": [1, 2, 3]}, ["N"], 3)
    with pytest.raises(ValueError, match=r"data has no column 'D' \(named by axes='D'\); "
                                         r"columns: \['N', 'loss'\]"):
        columns({"N": [1, 2], "loss": [1, 2]}, ["N", "D"], "loss")
    with pytest.raises(ValueError, match=r"named by target='y'"):
        columns({"N": [1, 2], "loss": [1, 2]}, ["N"], "y")
    with pytest.raises(ValueError, match=r"columns must be 1-d and of equal length; got shapes "
                                         r"\[\(3,\), \(2,\)\]"):
        columns({"N": [1, 2, 3], "loss": [1, 2]}, ["N"], "loss")
    with pytest.raises(ValueError, match="1-d"):
        columns({"N": [[1, 2]], "loss": [[1, 2]]}, ["N"], "loss")
    with pytest.raises(ValueError, match=r"data\['N'\] must be > 0"):
        columns({"N": [1, 0], "loss": [1, 2]}, ["N"], "loss")
    with pytest.raises(ValueError, match=r"data\['loss'\] must be > 0"):
        columns({"N": [1, 2], "loss": [1, 0]}, ["N"], "loss")
