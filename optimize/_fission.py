"""Data fission: two independent data sets from one, to choose on one and judge on the other.

A plan chosen from data and judged by the same data is judged too kindly (the optimizer's
curse, Smith & Winkler 2006): the choice lands where the data's noise flatters it.  The
fix is to judge on data the choice never saw.  Splitting the rows in halves would leave
each half without some design points (a star design has one row per point and seed), so
rlscale splits every row instead (*data fission*: Leiner, Duan, Wasserman & Ramdas 2023,
"Data fission: splitting a single data point", JASA; Rasines & Young 2022, Biometrika,
"Splitting strategies for post-selection inference").

The fitter's noise model is multiplicative, ``log y = log L(x) + ε`` with ``ε ~ N(0,
σ²)``.  With ``Z ~ N(0, σ²)`` drawn independently per row and a split parameter ``τ > 0``,

    log y_select = log y + τ·Z,      log y_judge = log y − Z/τ

are jointly Gaussian with covariance ``σ² − σ² = 0``: independent, each an unbiased
measurement of ``log L(x)`` at every design point, with variances ``σ²(1 + τ²)`` and
``σ²(1 + 1/τ²)`` (``τ = 1``: like two halves of the data, but each with the whole design).

The independence is exact only for Gaussian log noise with the stated ``σ``, independent
across rows; rlscale estimates ``σ`` from the full fit's log residuals
(:func:`noise_scale`).  Noise shared between rows (one environment draw behind a design
point's seeds) is in both halves and is not removed: the decision study measures what
that costs (``python -m benchmarks decision_study``, generator ``correlated``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from rlscale.theory._validation import check_real, check_scalar

__all__ = ["fission", "noise_scale"]


def noise_scale(residuals: Any, n_params: int) -> float:
    """``σ̂ = √(RSS / (n − p))``: the log-noise scale from a fit's log residuals.

    Examples
    --------
    >>> round(noise_scale([0.1, -0.1, 0.2, -0.2], 2), 6)   # √(0.1 / 2)
    0.223607
    """
    r = check_real("residuals", residuals).ravel()
    if r.size <= n_params:
        raise ValueError(f"a noise scale needs more residuals ({r.size}) than parameters "
                         f"({n_params})")
    return math.sqrt(float(r @ r) / (r.size - n_params))


def fission(data: Mapping[str, Any], target: str, sigma: float, tau: float,
            rng: np.random.Generator) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The selection and judgement copies of ``data`` (see the module docstring).

    Every column is copied; ``target`` (positive) is replaced by
    ``y·exp(τZ)`` in the first and ``y·exp(−Z/τ)`` in the second, ``Z ~ N(0, sigma²)``.

    Examples
    --------
    >>> import numpy as np
    >>> a, b = fission({"x": [1.0, 2.0], "loss": [0.5, 0.4]}, "loss", 0.1, 1.0,
    ...                np.random.default_rng(0))
    >>> bool(np.allclose(np.log(a["loss"]) + np.log(b["loss"]), 2 * np.log([0.5, 0.4])))
    True
    """
    sigma = check_scalar("sigma", sigma, low=0.0)
    tau = check_scalar("tau", tau, low=0.0, low_open=True)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator; got {type(rng).__name__}")
    cols = {k: np.asarray(v) for k, v in data.items()}
    y = check_real(f"data[{target!r}]", cols[target], low=0.0, low_open=True).ravel()
    z = sigma * rng.standard_normal(y.size)
    select, judge = dict(cols), dict(cols)
    with np.errstate(over="ignore", under="ignore"):
        select[target] = y * np.exp(tau * z)
        judge[target] = y * np.exp(-z / tau)
    # A loss near float64's ends (1e308) overflowed to inf or underflowed to 0 in a copy,
    # and the copy's fit then failed on a value the user never gave (issue 22).
    out = ~(np.isfinite(select[target]) & np.isfinite(judge[target])
            & (select[target] > 0) & (judge[target] > 0))
    if out.any():
        i = int(np.flatnonzero(out)[0])
        raise ValueError(f"data[{target!r}] has {y[i]:g} at index {i}: its fission copies "
                         f"y·exp(τZ) and y·exp(−Z/τ), Z ~ N(0, σ²) with σ = {sigma:.3g} and "
                         f"split τ = {tau:g}, leave float64; check the data for extreme "
                         f"values, rescale {target!r} or choose a split nearer 1")
    return select, judge
