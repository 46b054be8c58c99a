"""Saving fits and loading them back (issue 24): exact round trips and clear refusals."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from rlscale.optimize import ExpressionFit, FitResult, fit_law, load_fit
from rlscale.optimize._fit_io import FORMAT_VERSION


def _same(a, b) -> bool:
    """Equal, with arrays compared elementwise (NaN equal to NaN) and exact floats."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                and a.shape == b.shape and a.dtype == b.dtype
                and np.array_equal(a, b, equal_nan=True))
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if type(a).__name__ == "ExpressionLaw":
        return (type(b).__name__ == "ExpressionLaw" and a.expr == b.expr
                and a.axes == b.axes and a.ranges == b.ranges and a.declared == b.declared)
    return a == b


def _assert_round_trip(fit, path: Path):
    back = type(fit).load(fit.save(path))
    for f in dataclasses.fields(fit):
        assert _same(getattr(fit, f.name), getattr(back, f.name)), f.name
    return back


@pytest.fixture(scope="module")
def star():
    """A two-axis design with replicate noise (a well-identified additive law)."""
    rng = np.random.default_rng(24)
    N = np.repeat([1.0, 2, 4, 8, 16, 32, 64], 3)
    D = np.tile([1.0, 4, 16], 7)
    loss = (0.5 + 2 * N ** -0.5 + D ** -0.3) * np.exp(rng.normal(0, 0.01, N.size))
    return {"N": N, "D": D, "loss": loss}


def test_fit_result_round_trip_is_exact_with_bootstrap(star, tmp_path: Path) -> None:
    fit = fit_law(star, axes=["N", "D"], bootstrap=40, n_jobs=1, seed=3)
    back = _assert_round_trip(fit, tmp_path / "fit.json")
    # What a loaded fit is for: its bootstrap laws and bands are the original's.
    assert back.bootstrap_laws() == fit.bootstrap_laws()
    pts = [{"N": 100.0, "D": 100.0}, {"N": 3.0, "D": 2.0}]
    assert np.array_equal(np.array(back.predict_band(pts)), np.array(fit.predict_band(pts)))
    assert back.message == fit.message and back.success


def test_warnings_nan_and_bounds_survive(tmp_path: Path) -> None:
    # A floor bound with an open side (inf), a degenerate design with diagnostics.
    N = np.array([1.0, 2, 4, 8, 16, 32, 64, 128])
    fit = fit_law({"N": N, "loss": 0.3 + N ** -1.5}, axes=["N"], floor=(0.1, math.inf))
    assert fit.floor_bounds == (0.1, math.inf)
    back = _assert_round_trip(fit, tmp_path / "w.json")
    assert back.warnings == fit.warnings
    text = (tmp_path / "w.json").read_text()
    assert "Infinity" not in text and "NaN" not in text  # strict JSON


def test_pass_rate_fit_round_trip(tmp_path: Path) -> None:
    k = np.array([1.0, 2, 4, 8, 16, 32, 64])
    p = 0.8 / (1 + 3 * k ** -0.7)
    fit = fit_law({"k": k, "success": p}, law="pass_rate", axes=["k"], target="success")
    back = _assert_round_trip(fit, tmp_path / "p.json")
    assert back.predict({"k": 10.0}) == fit.predict({"k": 10.0})


def test_expression_fit_round_trip(star, tmp_path: Path) -> None:
    fit = fit_law(star, "E + A/N**a + B/D**b", axes=["N", "D"], bootstrap=20,
                  params={"E": (0, 10), "a": (0, 3)})
    assert isinstance(fit, ExpressionFit)
    back = _assert_round_trip(fit, tmp_path / "e.json")
    assert back.predict({"N": 7.0, "D": 3.0}) == fit.predict({"N": 7.0, "D": 3.0})
    assert isinstance(load_fit(tmp_path / "e.json"), ExpressionFit)


def test_multi_output_expression_fit_round_trip(star, tmp_path: Path) -> None:
    data = dict(star, aux=2 * star["loss"])
    fit = fit_law(data, ["E + A/N**a + B/D**b", "2*E + 2*A/N**a + 2*B/D**b"],
                  axes=["N", "D"], target=["loss", "aux"])
    back = _assert_round_trip(fit, tmp_path / "m.json")
    assert back.targets == ("loss", "aux") and len(back.laws) == 2


def test_saved_file_keeps_the_readable_summary(star, tmp_path: Path) -> None:
    fit = fit_law(star, axes=["N", "D"])
    form = json.loads(fit.save(tmp_path / "fit.json").read_text())
    assert form["format"] == "rlscale.FitResult" and form["version"] == FORMAT_VERSION
    assert form["params"] == pytest.approx(fit.params, rel=0, abs=0)
    assert form["law"]["family"] == "additive"


def test_foreign_old_and_future_files_are_refused(star, tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("not json")
    with pytest.raises(ValueError, match="not JSON"):
        load_fit(path)
    path.write_text(json.dumps({"params": {"floor": 1.0}}))  # a pre-issue-24 --out summary
    with pytest.raises(ValueError, match="refit with --out"):
        load_fit(path)
    path.write_text(json.dumps([1, 2]))
    with pytest.raises(ValueError, match="not a saved rlscale fit"):
        load_fit(path)
    form = json.loads(fit_law(star, axes=["N", "D"]).save(path).read_text())
    path.write_text(json.dumps({**form, "version": FORMAT_VERSION + 1}))
    with pytest.raises(ValueError, match="newer rlscale"):
        load_fit(path)
    del form["state"]
    path.write_text(json.dumps(form))
    with pytest.raises(ValueError, match="no 'state'"):
        load_fit(path)


def test_loading_the_wrong_kind_names_it(star, tmp_path: Path) -> None:
    fit_law(star, axes=["N", "D"]).save(tmp_path / "fit.json")
    with pytest.raises(ValueError, match="holds a FitResult, not a ExpressionFit"):
        ExpressionFit.load(tmp_path / "fit.json")
    assert isinstance(FitResult.load(tmp_path / "fit.json"), FitResult)


def test_bad_path_types_are_refused(star) -> None:
    fit = fit_law(star, axes=["N", "D"])
    with pytest.raises(TypeError, match="path must be a file name"):
        fit.save(3)
    with pytest.raises(TypeError, match="path must be a file name"):
        load_fit(None)


def test_save_is_atomic_and_leaves_no_temporary_file(star, tmp_path: Path) -> None:
    fit = fit_law(star, axes=["N", "D"])
    fit.save(tmp_path / "fit.json")
    fit.save(tmp_path / "fit.json")  # replacing an existing file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fit.json"]


def test_predict_band_on_columns_equals_the_pointwise_percentiles(star) -> None:
    # predict_band evaluates each bootstrap law on all points at once (issue 24: fit.plot
    # spent 42 CPU s a point at a time); the reference is each law at each point.
    fit = fit_law(star, axes=["N", "D"], bootstrap=40, n_jobs=1)
    pts = [{"N": float(n), "D": 5.0} for n in np.geomspace(1, 200, 9)]
    preds = np.array([[law.loss(p) for p in pts] for law in fit.bootstrap_laws()])
    lo, hi = fit.predict_band(pts, confidence=0.8)
    np.testing.assert_allclose(lo, np.percentile(preds, 10, axis=0), rtol=1e-13)
    np.testing.assert_allclose(hi, np.percentile(preds, 90, axis=0), rtol=1e-13)
    mixed = [{"N": 3.0, "D": 5.0}, {"D": 5.0, "N": 7.0}]  # same keys, other order
    assert np.allclose(np.array(fit.predict_band(mixed)),
                       np.array(fit.predict_band(mixed[:1] + mixed[1:])))
