"""The figure a peer draws for every fit: data, the fitted law per axis, its band, residuals.

:func:`plot_fit` (reached as :meth:`FitResult.plot <rlscale.optimize.FitResult.plot>`)
draws, for a :class:`~rlscale.optimize.FitResult` and the data it was fitted
to, one column per axis of the law:

* **top**: the data against that axis.  Rows sharing the same axis values
  (replicates, seeds) are shown as their mean with a Student-t interval of the
  mean at the fit's ``confidence`` — mean ± t_{(1+c)/2, n−1}·s/√n, the usual
  interval of a mean from n replicates with sample standard deviation s
  (Student 1908) — and single rows as plain markers.  Points whose other axes
  sit at the slice ``at`` are drawn in black; the rest, which the slice does
  not pass through, in light grey.  The fitted law along the axis with the
  other axes held at ``at`` (default: for each axis, the observed value
  nearest, in log, to the median of the rows — so the slice passes through
  data), and, when the fit carries at least 20 usable bootstrap laws, the
  pointwise percentile band of :meth:`FitResult.predict_band`.  The y-range
  follows the data, their intervals and the fitted curve, not the band (a
  poorly identified resample can put a band edge orders of magnitude away).
* **bottom**: every row's log residual against that axis, in the fit's own
  convention (:attr:`FitResult.residuals`): ``log L̂ − log L`` of the loss, or
  of the loss ``1/p`` for a pass-rate fit (``log p − log p̂``), with a zero line.

matplotlib (extra ``plot``) is imported when a figure is drawn, never when
:mod:`rlscale.optimize` is imported; the figure is a bare
:class:`matplotlib.figure.Figure` (no pyplot, no global state, safe under the
Agg backend and in threads).  ``path=`` saves it atomically: the image is
rendered in memory, written to a temporary file in the destination folder,
flushed, fsynced and renamed over ``path`` (the same protocol as
``rlscale.files._atomic.write_bytes_atomic``, which this package may not import).
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from rlscale.theory._validation import check_real, check_scalar

__all__ = ["plot_fit"]

#: Rows drawn at most (a scatter of millions of points takes minutes to render).
MAX_PLOT_ROWS = 10**6


def _columns(fit: Any, data: Any) -> tuple[np.ndarray, np.ndarray]:
    """The axes (rows x axes) and target columns of ``data``, validated."""
    if not isinstance(data, Mapping) and not hasattr(data, "columns"):
        raise TypeError(f"data must be a mapping of column name -> values (or a DataFrame); "
                        f"got {type(data).__name__}")
    cols = []
    for name in (*fit.axes, fit.target):
        try:
            col = data[name]
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            raise ValueError(f"data has no column {name!r} (the fit's axes and target: "
                             f"{[*fit.axes, fit.target]})") from exc
        cols.append(check_real(f"data[{name!r}]", col, low=0.0, low_open=True))
    shapes = {c.shape for c in cols}
    if len(shapes) != 1 or cols[0].ndim != 1 or cols[0].size == 0:
        raise ValueError(f"data columns must be 1-d, non-empty and of equal length; got shapes "
                         f"{[c.shape for c in cols]}")
    if cols[0].size > MAX_PLOT_ROWS:
        raise ValueError(f"data has {cols[0].size} rows; plot_fit draws at most "
                         f"{MAX_PLOT_ROWS} (plot a sample of the rows)")
    return np.column_stack(cols[:-1]), cols[-1]


def _slice_point(fit: Any, x: np.ndarray, at: Any) -> dict[str, float]:
    """``at`` checked and completed: given values, else the observed value nearest the median."""
    if at is not None and not isinstance(at, Mapping):
        raise TypeError(f"at must be a mapping axis -> value or None; got {type(at).__name__}")
    given = dict(at or {})
    unknown = [a for a in given if a not in fit.axes]
    if unknown:
        raise ValueError(f"at names {unknown}, not axes of the fit {list(fit.axes)}")
    point = {}
    for j, axis in enumerate(fit.axes):
        if axis in given:
            point[axis] = check_scalar(f"at[{axis!r}]", given[axis], low=0.0, low_open=True)
        else:
            logs = np.log(x[:, j])
            point[axis] = float(x[int(np.argmin(np.abs(logs - np.median(logs)))), j])
    return point


def _groups(x: np.ndarray, y: np.ndarray, confidence: float
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Distinct axis rows, the mean target of each, its t-interval half-width (0 for n = 1)
    and the replicate count."""
    from scipy.stats import t as student

    uniq, inverse = np.unique(x, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    n = np.bincount(inverse, minlength=len(uniq))
    mean = np.bincount(inverse, weights=y, minlength=len(uniq)) / n
    dev2 = np.bincount(inverse, weights=(y - mean[inverse]) ** 2, minlength=len(uniq))
    half = np.zeros(len(uniq))
    many = n > 1
    if many.any():
        sd = np.sqrt(dev2[many] / (n[many] - 1))
        half[many] = student.ppf((1 + confidence) / 2, n[many] - 1) * sd / np.sqrt(n[many])
    return uniq, mean, half, n


def _save_atomic(fig: Any, path: Any) -> Path:
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path must be a file name (str or path); got {type(path).__name__}")
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    formats = fig.canvas.get_supported_filetypes()
    if fmt not in formats:
        raise ValueError(f"path must end in one of {sorted('.' + f for f in formats)}; got "
                         f"path={str(path)!r}")
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=110)
    from rlscale.optimize._fit_io import write_atomic

    return write_atomic(path, buf.getvalue())


def plot_fit(fit: Any, data: Any, *, at: Mapping[str, float] | None = None,
             confidence: float | None = None, path: str | os.PathLike[str] | None = None
             ) -> Any:
    """Draw a fit: data with intervals, the fitted law per axis and its band, residuals.

    What each panel shows and how the intervals are computed: the module
    docstring of :mod:`rlscale.optimize._fit_plot`.

    Parameters
    ----------
    fit : FitResult
        The fit (from :func:`~rlscale.optimize.fit_law`).
    data : mapping of column name -> 1-d array
        The data it was fitted to (its axes and target columns; at most
        ``MAX_PLOT_ROWS`` = 1e6 rows).
    at : mapping axis -> value, optional
        Where the other axes are held along each axis's curve (default: for each
        axis, the observed value nearest, in log, to the median of the rows).
    confidence : float, optional
        Level of the replicate intervals and of the band (default: the fit's).
    path : str or path, optional
        Save the figure there too (atomically; the format from the suffix:
        ``.png``, ``.pdf``, ``.svg``, ...).

    Returns
    -------
    matplotlib.figure.Figure
        Two rows of axes (law, residuals), one column per axis of the law.

    Examples
    --------
    >>> import numpy as np
    >>> from rlscale.optimize import fit_law
    >>> E = np.repeat([1.0, 2, 4, 8, 16, 32, 64, 128], 3)          # 3 seeds per point
    >>> noise = np.random.default_rng(0).normal(0.0, 0.01, E.size)
    >>> data = {"E": E, "loss": (0.2 + 1.5 * E**-0.4) * np.exp(noise)}
    >>> fit = fit_law(data, axes=["E"], starts=4, bootstrap=40, n_jobs=1)
    >>> fig = fit.plot(data)
    >>> [ax.get_ylabel() for ax in fig.axes]
    ['loss', 'log residual (fitted − observed)']
    >>> sorted(fig.axes[0].get_legend_handles_labels()[1])
    ['90% bootstrap band', 'data (mean, 90% CI of 3 replicates)', 'fitted law']
    """
    from rlscale.optimize._fit import FitResult

    if not isinstance(fit, FitResult):
        raise TypeError(f"fit must be a FitResult; got {type(fit).__name__}")
    level = fit.confidence if confidence is None else check_scalar(
        "confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    x, y = _columns(fit, data)
    point = _slice_point(fit, x, at)
    from rlscale.optimize._fit_family import family

    direction = family(fit.law.family).direction

    try:
        from matplotlib.figure import Figure
        from matplotlib.ticker import NullFormatter
    except ImportError as exc:  # rlscale._optional's message (this package may not import it)
        raise ImportError("fit plots need the optional package 'matplotlib': pip install "
                          "'rlscale[plot]'") from exc

    pred_rows = np.asarray(fit.predict({a: x[:, j] for j, a in enumerate(fit.axes)}), float)
    # residuals of the fitted loss (a rate's loss is 1/p): log L_hat - log L
    resid = -direction * (np.log(pred_rows) - np.log(y))
    uniq, mean, half, count = _groups(x, y, level)
    n_axes = len(fit.axes)
    fig = Figure(figsize=(4.2 * n_axes + 0.6, 6.0), layout="constrained")
    grid = fig.add_gridspec(2, n_axes, height_ratios=(3, 1.3))
    pct = f"{round(level * 100):d}%"
    shown: list[float] = []
    for j, axis in enumerate(fit.axes):
        top = fig.add_subplot(grid[0, j])
        bottom = fig.add_subplot(grid[1, j], sharex=top)
        others = [k for k in range(n_axes) if k != j]
        on = np.all(uniq[:, others] == [point[fit.axes[k]] for k in others], axis=1)
        reps = int(count[on].max()) if on.any() else 1
        label = ("data (mean, " + f"{pct} CI of {reps} replicates)" if reps > 1
                 else "data")
        if on.any():
            top.errorbar(uniq[on, j], mean[on], yerr=half[on], fmt="o", color="k", capsize=3,
                         label=label, zorder=3)
            shown += [*(mean[on] - half[on]), *(mean[on] + half[on])]
        if (~on).any():
            top.plot(uniq[~on, j], mean[~on], "o", color="0.75", ms=4, zorder=2,
                     label="other points")
        lo, hi = float(x[:, j].min()), float(x[:, j].max())
        if hi <= lo * (1 + 1e-12):
            lo, hi = lo / 2, hi * 2
        xs = np.geomspace(lo, hi, 80)
        values = {a: np.full(xs.size, point[a]) for a in fit.axes}
        values[axis] = xs
        curve = np.asarray(fit.predict(values), dtype=float)
        top.plot(xs, curve, color="C0", label="fitted law", zorder=4)
        shown += list(curve)
        try:
            band = fit.predict_band([{a: float(values[a][i]) for a in fit.axes}
                                     for i in range(xs.size)], confidence=level)
        except ValueError:  # fewer than 20 usable bootstrap laws: no band
            band = None
        if band is not None:
            top.fill_between(xs, band[0], band[1], color="C0", alpha=0.2,
                             label=f"{pct} bootstrap band", zorder=1)
        top.set_xscale("log")
        top.xaxis.set_minor_formatter(NullFormatter())
        held = ", ".join(f"{fit.axes[k]}={point[fit.axes[k]]:.3g}" for k in others)
        top.set_title(f"{axis}" + (f" ({held})" if held else ""), fontsize=10)
        bottom.axhline(0.0, color="0.5", lw=0.8)
        bottom.plot(x[:, j], resid, "o", color="C3", ms=3)
        bottom.set_xlabel(axis)
        if j == 0:
            top.set_ylabel(fit.target)
            bottom.set_ylabel("log residual (fitted − observed)")
            top.legend(fontsize=8)
    finite = [v for v in shown if math.isfinite(v)]
    if finite:
        lo, hi = min(finite), max(finite)
        pad = 0.1 * (hi - lo) or 0.05 * max(abs(hi), 1e-300)
        for ax in fig.axes[::2]:
            ax.set_ylim(lo - pad, hi + pad)
    if path is not None:
        _save_atomic(fig, path)
    return fig
