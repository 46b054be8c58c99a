"""FitResult.plot: the drawn data, curve, band and residuals are the data's and the law's.

Every number read back from the figure is checked against an independent
computation: group means and Student-t half-widths from the raw rows (t
quantiles from mpmath-free closed values), the law written out by hand, the
residuals recomputed from the formula.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.collections import PolyCollection

import rlscale.optimize as opt

FLOOR, A_E, A_K, ALPHA_E, ALPHA_K = 0.2, 1.5, 0.8, 0.4, 0.3


def _truth(E, k):
    return FLOOR + A_E * E**-ALPHA_E + A_K * k**-ALPHA_K


def _star_data(seeds=3):
    base = {"E": 8.0, "k": 16.0}
    rows = [{"E": e, "k": base["k"]} for e in (1.0, 2, 4, 8, 16, 32, 64)]
    rows += [{"E": base["E"], "k": k} for k in (1.0, 4, 64, 256)]
    rows += [{"E": 64.0, "k": 256.0}]                               # off both slices
    E = np.repeat([r["E"] for r in rows], seeds)
    k = np.repeat([r["k"] for r in rows], seeds)
    noise = np.random.default_rng(7).normal(0.0, 0.02, E.size)
    return {"E": E, "k": k, "loss": _truth(E, k) * np.exp(noise)}


@pytest.fixture(scope="module")
def fitted():
    data = _star_data()
    fit = opt.fit_law(data, axes=["E", "k"], starts=4, bootstrap=20, n_jobs=1)
    return data, fit


def _by_label(ax, label):
    handles, labels = ax.get_legend_handles_labels()
    return handles[labels.index(label)]


def test_panels_data_intervals_curve_and_band(fitted):
    data, fit = fitted
    fig = fit.plot(data)
    top_e, _res_e, top_k, _res_k = fig.axes
    assert [top_e.get_title(), top_k.get_title()] == ["E (k=16)", "k (E=8)"]
    # The slice for E: k = 16 (the median row's k); its points are the 7 E-levels.
    bars = _by_label(top_e, "data (mean, 90% CI of 3 replicates)")
    xs, ys = bars.lines[0].get_data()
    np.testing.assert_array_equal(xs, [1.0, 2, 4, 8, 16, 32, 64])
    t90_2dof = 2.919985580355516  # Student t quantile 0.95 with 2 degrees of freedom
    for x, y_mean, seg in zip(xs, ys, bars.lines[2][0].get_segments()):
        rows = data["loss"][(data["E"] == x) & (data["k"] == 16.0)]
        assert y_mean == pytest.approx(rows.mean(), rel=1e-12)
        half = t90_2dof * rows.std(ddof=1) / math.sqrt(3)
        assert seg[1][1] - seg[0][1] == pytest.approx(2 * half, rel=1e-9)
    # The (E=64, k=256) point is off the E slice and the k slice: grey on both panels.
    grey_e = _by_label(top_e, "other points").get_data()
    assert sorted(grey_e[0]) == [8.0, 8.0, 8.0, 8.0, 64.0]  # the k-only rows and the corner
    # The curve is the law at k = 16, written out by hand from the fitted parameters.
    p = fit.params
    line = _by_label(top_e, "fitted law")
    gx, gy = line.get_data()
    assert gx[0] == pytest.approx(1.0) and gx[-1] == pytest.approx(64.0)
    want = p["floor"] + p["coefficient[E]"] * gx ** -p["exponent[E]"] \
        + p["coefficient[k]"] * 16.0 ** -p["exponent[k]"]
    np.testing.assert_allclose(gy, want, rtol=1e-10)
    # The band: at each curve point, the percentile interval of the bootstrap laws written
    # out by hand from the bootstrap samples (columns in the order of fit.params).
    band = [c for c in top_e.collections if isinstance(c, PolyCollection)]
    assert len(band) == 1
    verts = band[0].get_paths()[0].vertices
    cols = {name: fit.bootstrap_samples[:, i] for i, name in enumerate(p)}
    usable = (cols["exponent[E]"] > 0) & (cols["exponent[k]"] > 0)
    for i in (0, 40, 79):
        at_x = verts[np.isclose(verts[:, 0], gx[i], rtol=1e-12)][:, 1]
        boot = (cols["floor"] + cols["coefficient[E]"] * gx[i] ** -cols["exponent[E]"]
                + cols["coefficient[k]"] * 16.0 ** -cols["exponent[k]"])[usable]
        lo, hi = np.percentile(boot, [5, 95])
        assert at_x.min() == pytest.approx(lo, rel=1e-9)
        assert at_x.max() == pytest.approx(hi, rel=1e-9)
        assert lo <= gy[i] <= hi


def test_residual_panels_hold_every_row(fitted):
    data, fit = fitted
    fig = fit.plot(data)
    for ax, axis in ((fig.axes[1], "E"), (fig.axes[3], "k")):
        points = next(ln for ln in ax.get_lines() if ln.get_marker() == "o")
        rx, ry = points.get_data()
        np.testing.assert_array_equal(rx, data[axis])
        want = np.log(_fitted_law(fit, data["E"], data["k"])) - np.log(data["loss"])
        np.testing.assert_allclose(ry, want, rtol=1e-10, atol=1e-14)
        assert np.abs(ry).max() < 0.1   # 2 % noise: the residuals are small


def _fitted_law(fit, E, k):
    p = fit.params
    return (p["floor"] + p["coefficient[E]"] * E ** -p["exponent[E]"]
            + p["coefficient[k]"] * k ** -p["exponent[k]"])


def test_at_moves_the_slice_and_no_bootstrap_means_no_band():
    data = _star_data(seeds=1)
    fit = opt.fit_law(data, axes=["E", "k"], starts=8, n_jobs=1)
    fig = fit.plot(data, at={"k": 1.0})
    top_e = fig.axes[0]
    assert top_e.get_title() == "E (k=1)"
    assert not [c for c in top_e.collections if isinstance(c, PolyCollection)]
    _, labels = top_e.get_legend_handles_labels()
    assert "data" in labels and "fitted law" in labels   # one seed: plain markers, no CI
    assert "90% bootstrap band" not in labels
    gx, gy = _by_label(top_e, "fitted law").get_data()
    np.testing.assert_allclose(gy, _fitted_law(fit, gx, 1.0), rtol=1e-10)


def test_pass_rate_fit_residuals_use_the_fits_convention():
    E = np.geomspace(1, 1000, 12)
    p = 0.9 / (1.0 + 3.0 * E**-0.5)
    fit = opt.fit_law({"E": E, "pass": p}, law="pass_rate", axes=["E"], target="pass",
                      starts=8, n_jobs=1)
    fig = fit.plot({"E": E, "pass": p})
    assert fig.axes[0].get_ylabel() == "pass"
    ry = next(ln for ln in fig.axes[1].get_lines() if ln.get_marker() == "o").get_data()[1]
    np.testing.assert_allclose(ry, np.log(p) - np.log(fit.predict({"E": E})), atol=1e-12)


def test_path_saves_atomically(fitted, tmp_path):
    data, fit = fitted
    out = tmp_path / "figs" / "fit.png"
    fig = fit.plot(data, path=out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in out.parent.iterdir()) == ["fit.png"]
    assert fig.axes  # the figure is returned too
    with pytest.raises(ValueError, match="path must end in one of"):
        fit.plot(data, path=tmp_path / "fit.nope")
    assert not (tmp_path / "fit.nope").exists()


@pytest.mark.parametrize("kwargs, error, words", [
    ({"data": {"E": [1.0, 2.0]}}, ValueError, "no column 'k'"),
    ({"data": [1.0, 2.0]}, TypeError, "data must be a mapping"),
    ({"at": {"N": 3.0}}, ValueError, "not axes of the fit"),
    ({"at": [("k", 3.0)]}, TypeError, "at must be a mapping"),
    ({"at": {"k": -1.0}}, ValueError, "at['k'] must be > 0"),
    ({"confidence": 1.5}, ValueError, "confidence must be"),
])
def test_bad_arguments_are_named(fitted, kwargs, error, words):
    data, fit = fitted
    call = {"data": data, **kwargs}
    with pytest.raises(error) as info:
        fit.plot(**call)
    assert words in str(info.value)
