"""An expression law as a front end of the fitting engine: data, coordinates, residuals.

:class:`ExpressionProblem` turns one or more :class:`~rlscale.theory.ExpressionLaw`
(one per target column, sharing parameters by name) and validated data into
what :func:`rlscale.optimize._lsq.solve` takes: a model of many parameter rows
at once with its analytic Jacobian (from the laws' tapes), targets, bounds and
robust masks; and into what the start strategy takes
(:mod:`rlscale.optimize._fit_starts`): the objective of many rows and the
linear parameters solved for given the others.

**Coordinates.**  A parameter is fitted in the coordinate ``u`` that makes the
problem well scaled and its bounds real:

* declared ``(low, high)`` with ``low >= 0``: ``θ = exp(u)``, ``u`` in
  ``[log low, log high]`` (``low = 0``: bounded below at ``e^-690``, where the
  fit reports the parameter at its bound);
* declared with ``low < 0``: ``θ = u`` in ``[low, high]``;
* undeclared, entering the laws linearly (``f = h + Σ c_k g_k``; found
  numerically, :meth:`ExpressionProblem.linear_parameters`): ``θ = s·exp(u)``
  with its sign ``s`` taken from the start (a held column of the row), as the
  built-in fitter takes ``log A`` (Hoffmann et al. 2022, appendix D.2): the
  coefficient and an exponent then trade off linearly in the log prediction;
* other undeclared parameters: ``θ = u``, unbounded.

A final polish refits every undeclared parameter as ``θ = u`` (any sign, the
Jacobian scaling of Moré 1978 for units), so a coefficient whose optimum is 0
or negative is reached.  With ``ranges="search"`` declared ranges only place
starts: positive ones are fitted through ``log θ`` and nothing is bounded.

**Residuals.**  ``residuals="log"``: ``log f(x; θ) − log y`` (the built-in
fitter's; targets and the law must be > 0), ``residuals="raw"``: ``f − y`` (any
sign: a loss normalised by a unigram baseline is negative).  Where a law is
undefined or, on log residuals, not positive, the residual is NaN and the
engine rejects the point, so no fit rests on points outside the law's domain.

**Prior** (``prior={name: (centre, scale)}``, for pilots with fewer runs than
parameters): residual rows ``noise·(g(θ) − μ)/σ``, always squared, with
``g(θ) = log|θ|`` for a log-normal prior (the default for a parameter declared
``>= 0``; ``μ = log centre``, ``σ`` in log units) and ``g(θ) = θ`` for a normal
one.  With ``loss="squared"`` the fit is then the
posterior mode under Gaussian noise of standard deviation ``noise`` on the
residuals and a Gaussian prior (the ridge / Tikhonov estimator, Hoerl & Kennard
1970; Gelman et al. 2013, *Bayesian Data Analysis*, §14.8).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rlscale.optimize._lsq import LOG_LIMIT  # one bound for every fitter
from rlscale.theory._expr import ExpressionLaw
from rlscale.theory._validation import check_real

__all__: list[str] = []

#: Rows x points of one vectorised evaluation (about ten work arrays of this many
#: float64 per parameter column at most).
MAX_CELLS = 2 * 10**6


@dataclass(frozen=True)
class ExprData:
    """Validated data of one expression fit."""

    axes: tuple[str, ...]
    x: dict[str, np.ndarray]       # axis -> (n,)
    y: np.ndarray                  # (n, m) targets, one column per output
    targets: tuple[str, ...]

    @property
    def n(self) -> int:
        return self.y.shape[0]


def validate_data(data: Any, axes: Sequence[str], targets: Sequence[str], residuals: str
                  ) -> ExprData:
    """Columns present, numeric, finite, of equal length; targets > 0 on log residuals;
    axes >= 0.  Every check runs before any search."""
    if not isinstance(data, Mapping) and not hasattr(data, "columns"):
        raise TypeError(f"data must be a mapping (or DataFrame) of columns; got "
                        f"{type(data).__name__}")
    cols: dict[str, np.ndarray] = {}
    keys = list(data.keys()) if hasattr(data, "keys") else []
    for name in (*axes, *targets):
        if name not in data:
            raise ValueError(f"data has no column {name!r}; columns: {sorted(map(str, keys))}")
        raw = np.asarray(data[name])
        if raw.ndim != 1:
            raise ValueError(f"data[{name!r}] must be 1-d (one value per run); got shape "
                             f"{raw.shape}: pass each output as its own column and list them "
                             f"in target=[...]")
        try:
            raw = raw.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"data[{name!r}] must hold numbers; got dtype {raw.dtype}") from None
        cols[name] = raw
    sizes = {k: v.size for k, v in cols.items()}
    if len(set(sizes.values())) != 1:
        raise ValueError(f"columns must have equal lengths; got {sizes}")
    x = {a: check_real(f"data[{a!r}]", cols[a], low=0.0) for a in axes}
    ys = []
    for t in targets:
        if residuals == "log":
            bad = ~(cols[t] > 0)
            if bad.any() and np.all(np.isfinite(cols[t])):
                i = int(np.argmax(bad))
                raise ValueError(f"data[{t!r}] must be > 0 for residuals='log' (log residuals "
                                 f"need a positive target); got {cols[t][i]:g} at index {i}: "
                                 f"fit it with residuals='raw'")
            ys.append(check_real(f"data[{t!r}]", cols[t], low=0.0, low_open=True))
        else:
            ys.append(check_real(f"data[{t!r}]", cols[t]))
    if not ys[0].size:
        raise ValueError("data has no rows")
    return ExprData(tuple(axes), x, np.column_stack(ys), tuple(targets))


@dataclass(frozen=True)
class Prior:
    """A Gaussian prior on ``g(θ)``, ``g = log|θ|`` where ``log`` is set (a log-normal
    prior) and ``g = θ`` elsewhere: centres ``mu`` and scales ``sigma`` in ``g``'s units
    (``nan`` where a parameter has none), residual weight ``noise``."""

    mu: np.ndarray
    sigma: np.ndarray
    log: np.ndarray
    noise: float
    given: dict[str, tuple[float, float, str]]

    @property
    def mask(self) -> np.ndarray:
        return np.isfinite(self.sigma)

    def subset(self, cols: np.ndarray) -> Prior:
        """The prior of the parameters ``cols`` (a sub-problem's, in its order)."""
        return Prior(self.mu[cols], self.sigma[cols], self.log[cols], self.noise, self.given)

    def z(self, theta: np.ndarray) -> np.ndarray:
        """``noise·(g(θ) − μ)/σ`` of the parameters with a prior, rows of ``theta``."""
        m = self.mask
        with np.errstate(divide="ignore"):
            g = np.where(self.log[m], np.log(np.abs(theta[:, m])), theta[:, m])
        return self.noise * (g - self.mu[m]) / self.sigma[m]

    def dz(self, theta: np.ndarray, dtheta: np.ndarray) -> np.ndarray:
        """``∂z/∂u`` (one column per parameter with a prior) given ``dθ/du``."""
        m = self.mask
        dg = np.where(self.log[m], 1.0 / theta[:, m], 1.0) * dtheta[:, m]
        return self.noise / self.sigma[m] * dg


class ExpressionProblem:
    """The laws, data and coordinates of one fit (module docstring).

    ``kinds[j]`` is ``"log"``, ``"linear"`` or ``"slog"`` (sign-held log) for
    parameter ``j`` in the search; ``self.names`` the parameters in order.  Rows of
    the engine are ``u`` (``p`` columns) followed by one sign column per
    ``"slog"`` parameter, held.
    """

    def __init__(self, laws: Sequence[ExpressionLaw], data: ExprData, *, residuals: str,
                 ranges: str, prior: Prior | None = None,
                 kinds: Sequence[str] | None = None) -> None:
        self.laws = tuple(laws)
        self.data = data
        self.residuals = residuals
        self.ranges = ranges
        names: set[str] = set()
        for law in self.laws:
            names.update(law.params)
        self.names = tuple(sorted(names))
        self.p = len(self.names)
        self.index = {p: j for j, p in enumerate(self.names)}
        self.declared = {p: law.ranges[p] for law in self.laws for p in law.params
                         if p in law.declared}
        self.prior = prior
        # Per output: the columns of its parameters in the global order.
        self._cols = [np.array([self.index[p] for p in law.params], dtype=np.int64)
                      for law in self.laws]
        self._xargs = [[data.x[a][None, :] for a in law.axes] for law in self.laws]
        self.kinds = tuple(kinds) if kinds is not None else self.default_kinds()
        self.slog = np.array([k == "slog" for k in self.kinds])
        self.q = self.p + int(self.slog.sum())
        lo, hi = self._bounds()
        self.lower, self.upper = lo, hi
        self.logy = np.log(data.y) if residuals == "log" else None

    # -- coordinates ------------------------------------------------------------
    def default_kinds(self) -> tuple[str, ...]:
        out = []
        for p in self.names:
            if p in self.declared:
                lo, _ = self.declared[p]
                out.append("log" if lo >= 0 else "linear")
            else:
                out.append("linear")
        return tuple(out)

    def with_kinds(self, kinds: Sequence[str]) -> ExpressionProblem:
        return ExpressionProblem(self.laws, self.data, residuals=self.residuals,
                                 ranges=self.ranges, prior=self.prior, kinds=kinds)

    def _bounds(self) -> tuple[np.ndarray, np.ndarray]:
        lo = np.full(self.q, -np.inf)
        hi = np.full(self.q, np.inf)
        for j, (p, kind) in enumerate(zip(self.names, self.kinds)):
            if kind in ("log", "slog"):
                lo[j], hi[j] = -LOG_LIMIT, LOG_LIMIT
            if p in self.declared and self.ranges == "bounds":
                a, b = self.declared[p]
                if kind == "log":
                    lo[j] = max(-LOG_LIMIT, math.log(a)) if a > 0 else -LOG_LIMIT
                    hi[j] = min(LOG_LIMIT, math.log(b)) if math.isfinite(b) else LOG_LIMIT
                else:
                    lo[j], hi[j] = a, b
        return lo, hi

    @property
    def free(self) -> np.ndarray:
        """The fitted columns (the sign columns are held)."""
        return np.arange(self.q) < self.p

    def theta(self, U: np.ndarray) -> np.ndarray:
        """Natural parameters ``(B, p)`` of engine rows ``U`` ``(B, q)``."""
        U = np.atleast_2d(U)
        th = U[:, :self.p].copy()
        logk = np.array([k in ("log", "slog") for k in self.kinds])
        th[:, logk] = np.exp(np.clip(U[:, :self.p][:, logk], -LOG_LIMIT, LOG_LIMIT))
        if self.slog.any():
            th[:, self.slog] *= U[:, self.p:]
        return th

    def rows(self, theta: np.ndarray) -> np.ndarray:
        """Engine rows for natural parameters (inverse of :meth:`theta`); a zero or
        negative value of a log parameter goes to its lower end, a zero ``slog`` one
        to ``+e^-690``."""
        theta = np.atleast_2d(np.asarray(theta, np.float64))
        U = np.empty((theta.shape[0], self.q))
        U[:, :self.p] = theta
        with np.errstate(divide="ignore", invalid="ignore"):
            for j, kind in enumerate(self.kinds):
                if kind == "log":
                    U[:, j] = np.log(np.where(theta[:, j] > 0, theta[:, j], 0.0))
                elif kind == "slog":
                    U[:, j] = np.log(np.abs(theta[:, j]))
        if self.slog.any():
            U[:, self.p:] = np.where(theta[:, self.slog] < 0, -1.0, 1.0)
        U[:, :self.p] = np.where(np.isneginf(U[:, :self.p]), -LOG_LIMIT, U[:, :self.p])
        return np.clip(U, self.lower, self.upper)

    # -- evaluation ---------------------------------------------------------------
    def law_values(self, theta: np.ndarray, jac: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """``f`` ``(B, n·m)`` (outputs stacked) and ``∂f/∂θ`` ``(B, n·m, p)``."""
        B, n = theta.shape[0], self.data.n
        f = np.empty((B, n * len(self.laws)))
        J = np.zeros((B, n * len(self.laws), self.p)) if jac else None
        for i, law in enumerate(self.laws):
            cols = self._cols[i]
            args = [*self._xargs[i], *(theta[:, j:j + 1] for j in cols)]
            block = slice(i * n, (i + 1) * n)
            if jac:
                na = len(law.axes)
                fi, grads = law._tape.gradient(args, wrt=range(na, na + len(cols)))
                f[:, block] = np.broadcast_to(fi, (B, n))
                for g, j in zip(grads, cols):
                    J[:, block, j] = g
            else:
                f[:, block] = np.broadcast_to(law._tape.value(args), (B, n))
        return f, J

    def model(self, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Residual-space values and the Jacobian in the engine's coordinates."""
        theta = self.theta(U)
        f, J = self.law_values(theta, jac=True)
        with np.errstate(all="ignore"):
            if self.residuals == "log":
                val = np.log(np.where(f > 0, f, np.nan))
                J = J / f[:, :, None]
            else:
                val = f
            # chain rule: dθ/du is θ for log and slog coordinates, 1 for linear ones
            dtheta = np.where(np.array([k != "linear" for k in self.kinds]), theta, 1.0)
            J = J * dtheta[:, None, :]
        Jfull = np.zeros((*J.shape[:2], self.q))
        Jfull[:, :, :self.p] = J
        if self.prior is not None:
            m = self.prior.mask
            k = int(m.sum())
            Jp = np.zeros((U.shape[0], k, self.q))
            Jp[:, np.arange(k), np.flatnonzero(m)] = self.prior.dz(
                theta, np.broadcast_to(dtheta, theta.shape))
            val = np.concatenate([val, self.prior.z(theta)], axis=1)
            Jfull = np.concatenate([Jfull, Jp], axis=1)
        return val, Jfull

    @property
    def target(self) -> np.ndarray:
        """The engine's targets: ``log y`` or ``y`` stacked by output, then prior zeros."""
        t = (self.logy if self.residuals == "log" else self.data.y).T.ravel()
        if self.prior is not None:
            t = np.concatenate([t, np.zeros(int(self.prior.mask.sum()))])
        return t

    @property
    def robust(self) -> np.ndarray | None:
        """The robust loss applies to the data rows, not the prior's."""
        if self.prior is None:
            return None
        n_data = self.data.n * len(self.laws)
        return np.arange(n_data + int(self.prior.mask.sum())) < n_data

    def residual_rows(self, U: np.ndarray) -> np.ndarray:
        """Data residuals ``(B, n·m)`` at rows ``U`` (NaN outside the law's domain)."""
        theta = self.theta(U)
        f, _ = self.law_values(theta, jac=False)
        with np.errstate(all="ignore"):
            if self.residuals == "log":
                return np.log(np.where(f > 0, f, np.nan)) - self.logy.T.ravel()
            return f - self.data.y.T.ravel()

    def objective(self, U: np.ndarray, loss: str, delta: float,
                  weights: np.ndarray | None = None) -> np.ndarray:
        """The fit's objective at many rows (``inf`` where a residual is undefined),
        evaluated in blocks of at most :data:`MAX_CELLS` rows x points."""
        U = np.atleast_2d(U)
        size = self.data.n * len(self.laws)
        step = max(1, MAX_CELLS // max(size, 1))
        out = np.empty(U.shape[0])
        for lo in range(0, U.shape[0], step):
            r = self.residual_rows(U[lo:lo + step])
            out[lo:lo + step] = loss_value(r, loss, delta, weights)
            if self.prior is not None:
                z = self.prior.z(self.theta(U[lo:lo + step]))
                out[lo:lo + step] += 0.5 * (z * z).sum(axis=1)
        return out

    # -- structure ------------------------------------------------------------------
    def linear_parameters(self, rng: np.random.Generator) -> list[int]:
        """The parameters in which every law is jointly affine (``f = h + Σ c_k g_k``),
        found numerically: at random parameter values (both signs) and data points,
        moving the candidate set must leave each candidate's derivative ``∂f/∂θ_k``
        unchanged to 1e-8 of its own size (greedy, in parameter order).  The test is
        on the derivative, not on ``f``: a term that is tiny at the probe point (``(1/N)^b``
        at ``N = 10^7``) is still caught being non-linear.  Parameters declared with a
        negative lower bound are searched as declared and not projected."""
        rows = np.linspace(0, self.data.n - 1, min(self.data.n, 12)).astype(int)
        sub = ExprData(self.data.axes, {a: v[rows] for a, v in self.data.x.items()},
                       self.data.y[rows], self.data.targets)
        probe = ExpressionProblem(self.laws, sub, residuals="raw", ranges=self.ranges)
        mag = np.concatenate([rng.uniform(0.5, 1.5, (4, self.p)),
                              rng.uniform(0.05, 0.3, (4, self.p))])
        theta = mag * rng.choice([-1.0, 1.0], mag.shape)
        f0, J0 = probe.law_values(theta, jac=True)
        ok = np.isfinite(f0).all(axis=1) & np.isfinite(J0).all(axis=(1, 2))
        theta, J0 = theta[ok], J0[ok]
        if not len(theta):
            return []

        def affine(cols: list[int]) -> bool:
            delta = np.zeros_like(theta)
            delta[:, cols] = rng.uniform(-1.0, 1.0, (len(theta), len(cols)))
            _, J1 = probe.law_values(theta + delta, jac=True)
            a, b = J0[:, :, cols], J1[:, :, cols]
            with np.errstate(invalid="ignore"):
                same = np.abs(b - a) <= 1e-8 * np.maximum(np.abs(a), np.abs(b)) + 1e-300
            return bool(np.all(same | ~np.isfinite(b)) and np.all(np.isfinite(b)))

        chosen: list[int] = []
        for j in range(self.p):
            p = self.names[j]
            if p in self.declared and self.declared[p][0] < 0 and self.ranges == "bounds":
                continue  # a signed declared range: searched as it is declared
            if affine([j]) and affine([*chosen, j]):
                chosen.append(j)
        return chosen


def loss_value(r: np.ndarray, loss: str, delta: float, weights: np.ndarray | None = None
               ) -> np.ndarray:
    """Row sums of the Huber loss (``c (|r| − c/2)``, ``c = min(|r|, δ)``) or of ``r²/2``;
    ``inf`` for a row with an undefined residual."""
    with np.errstate(invalid="ignore"):
        if loss == "huber":
            a = np.abs(r)
            c = np.minimum(a, delta)
            h = c * (a - 0.5 * c)
        else:
            h = 0.5 * r * r
    if weights is not None:
        h = h * weights
    out = h.sum(axis=1)
    return np.where(np.isfinite(out), out, np.inf)
