"""Fitting the ScaleRL compute sigmoid and its extrapolation audit.

Compute sigmoid R(C) = R0 + (A − R0)/(1 + (C_mid/C)^B)
(:class:`rlscale.theory.ComputeSigmoid`; Khatri et al. 2025, arXiv 2510.13786,
section 2 and appendix): their recipe, made scale-free —

1. drop early compute: points with C below ``drop_fraction`` of the largest
   compute (default 0.03 ≈ their first 1.5k of 50k GPU-hours) are not fitted;
2. R0 is held fixed at the success of the smallest-compute point (or given);
3. grid the asymptote A in steps of 0.005 over (R0, ``asymptote_max``] (theirs:
   0.450…0.800) and C_mid over 100 values (theirs: linear in [100, 40000]
   GPU-hours; here log-spaced over [C_min/10, 10·C_max] so any compute unit
   works), and fit B at every (A, C_mid) pair (theirs: ``curve_fit``; here
   the best of 120 log-spaced B in [0.05, 20], vectorised: the squared error
   is a quadratic in A whose coefficients are formed once per (C_mid, B));
4. refine (A, C_mid, B) jointly from the best grid point (the fitting engine,
   :func:`rlscale.optimize._lsq.solve`: squared loss, bounds held, in
   ``(A, log C_mid, log B)`` with the analytic Jacobian below);
5. intervals: percentile bootstrap over points (resampled with replacement,
   refitted jointly from the point estimate, every resample in one call of the
   engine with the resample's point counts as weights); identification
   diagnostics (:mod:`rlscale.optimize._fit_identify`) in ``warnings``.

Jacobian in ``u = (A, log C_mid, log B)``: with ``x = B (log C_mid − log C)`` and
``s = 1/(1 + e^x)``, ``R = R0 + (A − R0) s``, ``∂R/∂A = s``,
``∂R/∂log C_mid = −(A − R0) s (1 − s) B`` and ``∂R/∂log B = −(A − R0) s (1 − s) x``.

Extrapolation audit (their figure on the 8B run: the sigmoid fitted on
1.5k–50k GPU-hours gives A = 0.645, a power law fitted to the same points
extrapolates to 1.0): fit on the first part of a curve (C ≤ ``fit_fraction``
of the largest compute), predict the rest, and compare with the bounded power
law R = A − D·C^(−b) — the sigmoid's large-C form — fitted to the same
points (A on the same grid, then log(A − R) = log D − b·log C by least
squares, then a joint refinement).

Gao et al.'s forms: :mod:`rlscale.optimize._gao_fit`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.optimize._diagnostics import FitWarning
from rlscale.optimize._lsq import outcome, solve
from rlscale.theory._repr import compact_repr
from rlscale.theory._result import Result
from rlscale.theory._rl_forms import ComputeSigmoid
from rlscale.theory._validation import check_positive_int, check_real, check_scalar

__all__ = ["PowerLawFit", "SigmoidAudit", "SigmoidFit", "fit_power_law", "fit_sigmoid",
           "sigmoid_audit"]

_STEP = 0.005  # their asymptote grid spacing
#: Asymptote grid points at most: ``asymptote_max`` lies within 10 (2,000 steps of 0.005)
#: of the smallest asymptote searched.
MAX_ASYMPTOTE_STEPS = 2000
#: Compute lies in [1e-300, 1e300] (the C_mid grid spans 10x either side in float64).
COMPUTE_RANGE = (1e-300, 1e300)
#: Success (and R0, the asymptote) within ±1e6: the asymptote grid steps by 0.005.
SUCCESS_LIMIT = 1e6
#: Bootstrap resamples at most: each refits by least squares (a few ms each).
MAX_BOOTSTRAP = 10**4


def _interval(draws: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(draws, [tail, 1.0 - tail])
    return float(lo), float(hi)


def _gen(rng: Any) -> np.random.Generator:
    """``rng`` as a Generator: a Generator, ``None`` or a seed, an integer >= 0."""
    if isinstance(rng, np.random.Generator) or rng is None:
        return np.random.default_rng(rng)
    return np.random.default_rng(check_positive_int("rng", rng, minimum=0, maximum=2**128))


def _level(confidence: Any) -> float:
    return check_scalar("confidence", confidence, low=0.0, high=1.0, low_open=True,
                        high_open=True)


@dataclass(frozen=True)
class SigmoidFit(Result):
    """A fitted compute sigmoid: the law, bootstrap intervals, the points fitted.

    ``compute`` and ``observed`` are the points fitted (after dropping early
    compute); ``success``, ``status`` and ``message`` follow the result
    convention of :mod:`rlscale.optimize._outcome` for the point fit's
    refinement by the fitting engine; ``warnings`` the shared identification
    diagnostics (:mod:`rlscale.optimize._fit_identify`).
    """

    law: ComputeSigmoid
    asymptote_interval: tuple[float, float] | None
    exponent_interval: tuple[float, float] | None
    midpoint_interval: tuple[float, float] | None
    compute: np.ndarray
    observed: np.ndarray
    dropped: int
    rmse: float
    success: bool = True
    status: str = "converged"
    message: str = ""
    warnings: tuple[FitWarning, ...] = ()

    def __repr__(self) -> str:  # one screen, not the fitted points in full (issue 24)
        return compact_repr(self, title=f"{self.status}, {self.compute.size} points, "
                            f"{len(self.warnings)} warnings")

    def predict(self, compute: Any) -> float | np.ndarray:
        return self.law(compute)

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in super().as_dict().items() if k not in ("law", "warnings")}
        return {**self.law.as_dict(), **out, "latex": self.law.latex(),
                "warnings": [w.as_dict() for w in self.warnings]}


@dataclass(frozen=True)
class PowerLawFit(Result):
    """The bounded power law R(C) = A − D·C^(−b) (the sigmoid's C ≫ C_mid form).

    ``success``, ``status`` and ``message``: the result convention of
    :mod:`rlscale.optimize._outcome` for the engine's refinement.
    """

    asymptote: float
    scale: float
    exponent: float
    rmse: float
    success: bool = True
    status: str = "converged"
    message: str = ""

    def predict(self, compute: Any) -> np.ndarray:
        c = check_real("compute", compute, low=0.0, low_open=True)
        return self.asymptote - self.scale * c ** (-self.exponent)


@dataclass(frozen=True)
class SigmoidAudit(Result):
    """Fit on C ≤ ``split``, predict the tail C > ``split``: sigmoid vs bounded power law."""

    split: float
    sigmoid: SigmoidFit
    power_law: PowerLawFit
    tail_compute: np.ndarray
    tail_success: np.ndarray
    sigmoid_tail: np.ndarray
    power_law_tail: np.ndarray

    def __repr__(self) -> str:  # one screen, not the tail arrays in full (issue 24)
        return compact_repr(self, title=f"tail RMSE: sigmoid {self.sigmoid_tail_rmse:.4g}, "
                            f"power law {self.power_law_tail_rmse:.4g}")

    @property
    def sigmoid_tail_rmse(self) -> float:
        return float(np.sqrt(np.mean((self.sigmoid_tail - self.tail_success) ** 2)))

    @property
    def power_law_tail_rmse(self) -> float:
        return float(np.sqrt(np.mean((self.power_law_tail - self.tail_success) ** 2)))

    @property
    def sigmoid_final_error(self) -> float:
        """Predicted minus observed success at the largest compute."""
        return float(self.sigmoid_tail[-1] - self.tail_success[-1])

    @property
    def power_law_final_error(self) -> float:
        return float(self.power_law_tail[-1] - self.tail_success[-1])

    def as_dict(self) -> dict[str, Any]:
        return {"split": self.split, "sigmoid": self.sigmoid.as_dict(),
                "power_law": self.power_law.as_dict(), "tail_compute": self.tail_compute,
                "tail_success": self.tail_success, "sigmoid_tail": self.sigmoid_tail,
                "power_law_tail": self.power_law_tail,
                "sigmoid_tail_rmse": self.sigmoid_tail_rmse,
                "power_law_tail_rmse": self.power_law_tail_rmse,
                "sigmoid_final_error": self.sigmoid_final_error,
                "power_law_final_error": self.power_law_final_error}


def _curve(compute: Any, success: Any, minimum: int) -> tuple[np.ndarray, np.ndarray]:
    """The curve sorted by compute: compute in ``COMPUTE_RANGE``, |success| <= 1e6,
    equal lengths, at least ``minimum`` points at two or more distinct computes."""
    c = check_real("compute", compute, low=COMPUTE_RANGE[0], high=COMPUTE_RANGE[1]).ravel()
    y = check_real("success", success, low=-SUCCESS_LIMIT, high=SUCCESS_LIMIT).ravel()
    if c.shape != y.shape:
        raise ValueError(f"compute and success must have equal lengths; got {c.size} "
                         f"and {y.size}")
    if c.size < minimum or np.unique(c).size < 2:
        raise ValueError(f"compute and success need at least {minimum} points at two or more "
                         f"distinct computes; got {c.size} points at {np.unique(c).size}")
    order = np.argsort(c, kind="stable")
    return c[order], y[order]


def _sigmoid(c: np.ndarray, r0: float, a: Any, c_mid: Any, b: Any) -> np.ndarray:
    u = np.exp(np.clip(b * (np.log(c_mid) - np.log(c)), -700, 700))
    return r0 + (a - r0) / (1.0 + u)


def _grid_b(c: np.ndarray, y: np.ndarray, r0: float, a: np.ndarray, c_mid: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """B and SSE at every (A, C_mid) pair, B the best of a fine log grid.

    With s = 1/(1 + (C_mid/C)^B), the residual is y − R0 − (A − R0)·s, so
    SSE = Σ(y−R0)² − 2(A−R0)·Σ(y−R0)s + (A−R0)²·Σs²: the sums are formed once
    per (C_mid, B) and every A of the grid costs three multiplications.
    """
    b_grid = _B_GRID
    x = np.log(c_mid)[:, None, None] - np.log(c)[None, None, :]        # (M, 1, n)
    s = 1.0 / (1.0 + np.exp(np.clip(b_grid[None, :, None] * x, -700, 700)))  # (M, nB, n)
    dy = y - r0
    sys_, sss = s @ dy, np.einsum("mbn,mbn->mb", s, s)                 # (M, nB)
    b_best = np.empty((a.size, c_mid.size))
    sse_best = np.empty((a.size, c_mid.size))
    for lo in range(0, a.size, 64):  # blocks of A: memory O(64·M·nB), not O(nA·M·nB)
        da = (a[lo:lo + 64] - r0)[:, None, None]                        # (≤64, 1, 1)
        sse = float(dy @ dy) - 2.0 * da * sys_[None] + da * da * sss[None]  # (≤64, M, nB)
        best = np.argmin(sse, axis=-1)
        b_best[lo:lo + 64] = b_grid[best]
        sse_best[lo:lo + 64] = np.take_along_axis(sse, best[..., None], axis=-1)[..., 0]
    return b_best, sse_best


#: B values searched at each (A, C_mid): 120 log-spaced over [0.05, 20] (3 % apart).
_B_GRID = np.geomspace(0.05, 20.0, 120)


def _sigmoid_model(c: np.ndarray, r0: float):
    """``R`` and its Jacobian in ``u = (A, log C_mid, log B)`` for rows of ``u`` (module
    docstring)."""
    logc = np.log(c)

    def model(U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a, lm, b = U[:, :1], U[:, 1:2], np.exp(U[:, 2:3])
        x = np.clip(b * (lm - logc), -700, 700)
        s = 1.0 / (1.0 + np.exp(x))
        d = -(a - r0) * s * (1.0 - s)
        J = np.empty((U.shape[0], c.size, 3))
        J[:, :, 0] = s
        J[:, :, 1] = d * b
        J[:, :, 2] = d * x
        return r0 + (a - r0) * s, J
    return model


def _refine_sigmoid(c: np.ndarray, y: np.ndarray, r0: float,
                    start: tuple[float, float, float], a_max: float,
                    weights: np.ndarray | None = None):
    """The refined ``(A, C_mid, B)`` rows (one per row of ``weights``, or one) and the
    engine's result (its status feeds the outcome)."""
    a0, m0, b0 = start
    lo = np.array([r0 + 1e-6, np.log(c[0]) - 10, np.log(0.05)])
    hi = np.array([a_max, np.log(c[-1]) + 10, np.log(20.0)])
    x0 = np.clip([a0, np.log(m0), np.log(b0)], lo + 1e-9, hi - 1e-9)
    rows = 1 if weights is None else len(weights)
    res = solve(_sigmoid_model(c, r0), np.repeat(x0[None, :], rows, axis=0), y, weights,
                lower=lo, upper=hi, x_scale="jac", max_nfev=400, nonfinite="drop")
    out = np.column_stack([res.x[:, 0], np.exp(res.x[:, 1]), np.exp(res.x[:, 2])])
    return out, res


def _sigmoid_warnings(fit: tuple[float, float, float], ints: list, draws: np.ndarray | None,
                      c: np.ndarray, y: np.ndarray, r0: float, a_max: float, level: float
                      ) -> list[FitWarning]:
    """The shared identification diagnostics of a sigmoid fit (asymptote, midpoint,
    exponent): their bounds, their bootstrap intervals against the local curvature."""
    from rlscale.optimize._fit_identify import bound_warnings, interval_warnings, local_covariance

    names = ["asymptote", "midpoint", "exponent"]
    a, m, b = fit
    values = dict(zip(names, (a, m, b)))
    bounds = {"asymptote": (r0 + 1e-6, a_max), "midpoint": (c[0] * np.exp(-10),
                                                            c[-1] * np.exp(10)),
              "exponent": (0.05, 20.0)}
    out = bound_warnings(names, values, bounds)
    f, J = _sigmoid_model(c, r0)(np.array([[a, np.log(m), np.log(b)]]))
    cov = local_covariance(J[0] * np.array([1.0, 1.0 / m, 1.0 / b]), f[0] - y, 3)
    se = None if cov is None else np.sqrt(np.abs(np.diag(cov)))
    intervals = {n: v for n, v in zip(names, ints) if v is not None}
    if intervals:
        out += interval_warnings(names, values, intervals, bounds=bounds, samples=draws,
                                 se=se, confidence=level, source="bootstrap")
    return out


def fit_sigmoid(compute: Any, success: Any, *, start: float | None = None,
                drop_fraction: float = 0.03, min_compute: float | None = None,
                asymptote_max: float = 1.0, bootstrap: int = 200, confidence: float = 0.95,
                rng: Any = 0) -> SigmoidFit:
    """Fit R(C) = R0 + (A − R0)/(1 + (C_mid/C)^B) with the ScaleRL recipe (module docstring).

    Parameters
    ----------
    compute, success : array_like
        The curve: compute > 0 (any unit: GPU-hours, environment steps) and
        held-out success.
    start : float, optional
        R0; default the success at the smallest compute (before dropping).
    drop_fraction, min_compute : float
        Points with compute < ``min_compute`` (default
        ``drop_fraction·max(compute)``) are not fitted.
    asymptote_max : float
        Upper end of the asymptote grid (1 for success rates).
    bootstrap, confidence, rng
        Percentile-bootstrap resamples (0: no intervals; at most ``MAX_BOOTSTRAP``
        = 1e4), level, seed (an integer >= 0 or a Generator).

    Limits: compute in [1e-300, 1e300], |success| and |start| <= 1e6, and
    ``asymptote_max`` at most 10 above R0 (the asymptote grid's 2,000 steps
    of 0.005); beyond them a ``ValueError`` names the argument.

    Examples
    --------
    >>> import numpy as np
    >>> from rlscale.theory import ComputeSigmoid
    >>> truth = ComputeSigmoid(asymptote=0.645, exponent=1.7, midpoint=8000.0, start=0.3)
    >>> c = np.linspace(500, 50000, 60)
    >>> y = truth(c) + np.random.default_rng(1).normal(0, 0.005, c.size)
    >>> fit = fit_sigmoid(c, y, start=0.3, bootstrap=100)
    >>> lo, hi = fit.asymptote_interval
    >>> lo <= 0.645 <= hi, abs(fit.law.exponent - 1.7) < 0.2
    (True, True)
    """
    c, y = _curve(compute, success, 4)
    r0 = float(y[0]) if start is None else check_scalar(
        "start", start, low=-SUCCESS_LIMIT, high=SUCCESS_LIMIT)
    frac = check_scalar("drop_fraction", drop_fraction, low=0.0, high=1.0, high_open=True)
    cut = frac * c[-1] if min_compute is None else check_scalar("min_compute", min_compute)
    a_max = check_scalar("asymptote_max", asymptote_max, low=r0 + _STEP,
                         high=r0 + _STEP * MAX_ASYMPTOTE_STEPS)
    n_boot = check_positive_int("bootstrap", bootstrap, minimum=0, maximum=MAX_BOOTSTRAP)
    level = _level(confidence)
    keep = c >= cut
    cf, yf = c[keep], y[keep]
    if cf.size < 4 or np.unique(cf).size < 2:
        raise ValueError(f"need at least 4 points with compute >= {cut:g} (min_compute, or "
                         f"drop_fraction of the largest compute) at two or more distinct "
                         f"computes to fit the sigmoid; got {cf.size} (lower drop_fraction or "
                         "min_compute, or add points)")
    a_grid = np.arange(r0 + _STEP, a_max + 1e-12, _STEP)
    m_grid = np.geomspace(cf[0] / 10, cf[-1] * 10, 100)
    b_grid, sse = _grid_b(cf, yf, r0, a_grid, m_grid)
    i, j = np.unravel_index(int(np.argmin(sse)), sse.shape)
    rows, sol = _refine_sigmoid(cf, yf, r0, (a_grid[i], m_grid[j], b_grid[i, j]), a_max)
    a, m, b = (float(v) for v in rows[0])
    ok, status, message = outcome(sol, 0, "the engine's trust region from the best grid "
                                          "point")
    rmse = float(np.sqrt(np.mean((_sigmoid(cf, r0, a, m, b) - yf) ** 2)))
    ints: list[tuple[float, float] | None] = [None, None, None]
    draws = None
    if n_boot:
        gen = _gen(rng)
        counts = np.array([np.bincount(gen.integers(0, cf.size, cf.size), minlength=cf.size)
                           for _ in range(n_boot)], dtype=np.float64)
        draws = np.empty((n_boot, 3))
        for lo in range(0, n_boot, 2000):  # resamples as point counts, in blocks
            draws[lo:lo + 2000] = _refine_sigmoid(cf, yf, r0, (a, m, b), a_max,
                                                  counts[lo:lo + 2000])[0]
        ints = [_interval(draws[:, k], level) for k in range(3)]
    warnings = _sigmoid_warnings((a, m, b), ints, draws, cf, yf, r0, a_max, level)
    return SigmoidFit(law=ComputeSigmoid(asymptote=a, exponent=b, midpoint=m, start=r0),
                      asymptote_interval=ints[0], midpoint_interval=ints[1],
                      exponent_interval=ints[2], compute=cf, observed=yf,
                      dropped=int((~keep).sum()), rmse=rmse, success=ok, status=status,
                      message=message, warnings=tuple(warnings))


def fit_power_law(compute: Any, success: Any, *, asymptote_max: float = 1.0) -> PowerLawFit:
    """Fit the bounded power law R = A − D·C^(−b): A on a 0.005 grid, log-linear D and b, refine.

    The joint refinement is the fitting engine's (squared loss, bounds held).

    Examples
    --------
    >>> import numpy as np
    >>> c = np.geomspace(10, 1e4, 30)
    >>> fit = fit_power_law(c, 0.9 - 2.0 * c**-0.5)
    >>> round(fit.asymptote, 4), round(fit.exponent, 4)
    (0.9, 0.5)
    """
    c, y = _curve(compute, success, 3)
    a_max = check_scalar("asymptote_max", asymptote_max, low=-SUCCESS_LIMIT,
                         high=SUCCESS_LIMIT)
    if a_max <= y.max():
        raise ValueError(f"asymptote_max must exceed the largest success; got "
                         f"asymptote_max={a_max!r}, max success={y.max()!r}")
    if a_max - y.max() > _STEP * MAX_ASYMPTOTE_STEPS:
        raise ValueError(f"asymptote_max must lie within {_STEP * MAX_ASYMPTOTE_STEPS:g} of "
                         f"the largest success (the asymptote grid's {MAX_ASYMPTOTE_STEPS} "
                         f"steps); got asymptote_max={a_max!r}, max success={y.max()!r}")
    a_grid = np.arange(y.max() + _STEP, a_max + 1e-12, _STEP)
    if a_grid.size == 0:
        a_grid = np.array([a_max])
    lc = np.log(c)
    best: tuple[float, float, float, float] | None = None
    for a in a_grid:
        slope, icpt = np.polyfit(lc, np.log(a - y), 1)
        pred = a - np.exp(icpt + slope * lc)
        sse = float(np.sum((pred - y) ** 2))
        if best is None or sse < best[0]:
            best = (sse, float(a), float(icpt), float(-slope))
    assert best is not None
    _, a0, ld0, b0 = best
    hi_a = max(a_max, a0 + 1e-9)

    def model(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        e = np.exp(np.clip(P[:, 1:2] - P[:, 2:3] * lc, -700, 700))  # D·C^-b
        J = np.empty((P.shape[0], lc.size, 3))
        J[:, :, 0] = 1.0
        J[:, :, 1] = -e
        J[:, :, 2] = e * lc
        return P[:, :1] - e, J

    lower, upper = np.array([y.min(), -np.inf, 0.0]), np.array([hi_a, np.inf, np.inf])
    x0 = np.clip([a0, ld0, max(b0, 1e-6)], lower, upper)
    sol = solve(model, x0[None, :], y, lower=lower, upper=upper, x_scale="jac",
                max_nfev=400, nonfinite="drop")
    a, ld, b = (float(v) for v in sol.x[0])
    rmse = float(np.sqrt(np.mean((a - np.exp(ld - b * lc) - y) ** 2)))
    ok, status, message = outcome(sol, 0, "the engine's trust region from the best "
                                          "asymptote on the grid")
    return PowerLawFit(asymptote=a, scale=float(np.exp(ld)), exponent=b, rmse=rmse, success=ok,
                       status=status, message=message)


def sigmoid_audit(compute: Any, success: Any, *, fit_fraction: float = 0.5,
                  drop_fraction: float = 0.03, start: float | None = None,
                  asymptote_max: float = 1.0, bootstrap: int = 200, confidence: float = 0.95,
                  rng: Any = 0) -> SigmoidAudit:
    """Fit the sigmoid and the bounded power law on C ≤ ``fit_fraction``·max C; predict the rest.

    Early compute is dropped relative to the whole curve's largest compute
    (as their fixed 1.5k GPU-hours), R0 from the whole curve's first point.

    Examples
    --------
    >>> import numpy as np
    >>> from rlscale.theory import ComputeSigmoid
    >>> truth = ComputeSigmoid(asymptote=0.645, exponent=1.7, midpoint=8000.0, start=0.3)
    >>> c = np.linspace(500, 50000, 60)
    >>> y = truth(c) + np.random.default_rng(1).normal(0, 0.005, c.size)
    >>> audit = sigmoid_audit(c, y, start=0.3, bootstrap=0)
    >>> audit.sigmoid_tail_rmse < audit.power_law_tail_rmse
    True
    """
    c, y = _curve(compute, success, 5)
    _gen(rng)  # checked even without a bootstrap, which is where it is used (issue 22)
    frac = check_scalar("fit_fraction", fit_fraction, low=0.0, high=1.0, low_open=True,
                        high_open=True)
    drop = check_scalar("drop_fraction", drop_fraction, low=0.0, high=1.0, high_open=True)
    split = frac * c[-1]
    head, tail = c <= split, c > split
    if tail.sum() < 1:
        raise ValueError(f"no points above fit_fraction·max compute = {split:g} to audit")
    if head.sum() < 4:
        raise ValueError(f"need at least 4 points at or below fit_fraction·max compute = "
                         f"{split:g} to fit; got {int(head.sum())} (raise fit_fraction)")
    r0 = float(y[0]) if start is None else check_scalar(
        "start", start, low=-SUCCESS_LIMIT, high=SUCCESS_LIMIT)
    fit = fit_sigmoid(c[head], y[head], start=r0, min_compute=drop * c[-1],
                      asymptote_max=asymptote_max, bootstrap=bootstrap, confidence=confidence,
                      rng=rng)
    power = fit_power_law(fit.compute, fit.observed, asymptote_max=asymptote_max)
    return SigmoidAudit(split=float(split), sigmoid=fit, power_law=power,
                        tail_compute=c[tail], tail_success=y[tail],
                        sigmoid_tail=np.asarray(fit.law(c[tail])),
                        power_law_tail=power.predict(c[tail]))
