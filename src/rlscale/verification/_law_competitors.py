r"""The reward law and its competitors, fitted in batches and predicting every design point.

Each model is fitted to ``D`` data sets on one design (``lm = log M``, ``k =
K``, both ``(n,)``) with 0/1 weights ``W`` ``(D, n)`` — a zero drops a point,
so one call fits every leave-one-level-out fold of every group — and predicts
*every* design point, the dropped ones included: that is how a held-out ``M``
or ``K`` is predicted (:mod:`rlscale.verification._law_holdout`).

Models (:data:`MODELS`; ``h(K) = √min(1, C·K)``):

``law``
    ``a √min(log M + b, c·K)`` with its limits ``b → ∞`` and ``c → ∞``
    (:func:`rlscale.verification._law_fits.min_law_closure`), from the three
    fixed starts and a profile-grid start.
``plateau_m_free``
    ``A·h(K)``: one level for every ``M`` — no ``M`` law at all.
``plateau_per_m``
    ``A_M·h(K)``: a free level per ``M``, shared ``C``.  A held-out ``M`` gets
    ``A`` interpolated linearly in ``log M`` between the fitted neighbours (the
    nearest level beyond the ends): a smooth nonparametric ``M`` law, the
    strongest baseline an ``M`` law must beat.
``gao_bon_per_m``, ``gao_rl_per_m``
    Gao, Schulman & Hilton (2023): ``d(α_M − β_M d)`` and ``d(α_M − β_M log d)``,
    ``d = √K``, ``α, β`` per ``M`` by linear least squares (as Gao et al. fit
    them per reward-model size); a held-out ``M`` gets ``α, β`` interpolated
    in ``log M`` like ``plateau_per_m``.
``saturating``
    ``A (1 − e^{−M/M₀}) h(K)``: gain rising with ``M`` to a ceiling ``A``.
``sqrt_log_m_side`` (:data:`EXPLORATORY`: scored beside the others, outside the
    testbed's pre-registered comparison, which it joined after the run)
    ``a √(log M + b) h(K)``: the law's ``log M`` side alone, its ``K`` side free.
``saturating_md``
    ``A (1 + M₁/M)^{−1/2} h(K)``: the generalising-proxy form of
    :mod:`rlscale.simulate._generalising_proxy` (correlation of a linear proxy
    with ``d`` free parameters from ``M`` comparisons, ``M₁ ≈ (d − 1)σ²/2``).

The saturating forms are fitted from the best point of a profile grid over
``(log M₀, log C)`` (the scale ``A >= 0`` in closed form at each point) and
polished by the batched Levenberg–Marquardt solver
(:func:`rlscale.verification._law_solver.solve_batch`) with the analytic
Jacobians of :func:`saturating_form` and :func:`saturating_md_form`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rlscale.verification._law_fits import MinLawFit, fit_form, min_law_closure, profile_start
from rlscale.verification._law_forms import FORMS, STARTS
from rlscale.verification._law_solver import solve_batch

__all__ = ["EXPLORATORY", "MODELS", "NAMED_COMPETITORS", "ModelSpec", "fit_min_law",
           "fit_predict", "fit_saturating", "saturating_form", "saturating_md_form",
           "sqrt_log_m_side_form"]

#: The competitors the issue names for the law's leave-one-M-out test.
NAMED_COMPETITORS = ("plateau_m_free", "plateau_per_m", "gao_bon_per_m", "gao_rl_per_m")


@dataclass(frozen=True)
class ModelSpec:
    """A model of ``G(M, K)``: its formula, parameter count and batched fit-and-predict.

    ``fit(lm, k, Y, W) -> (D, n)`` predictions at every design point.
    ``n_params(n_m)``: parameters given the number of distinct ``M`` fitted.
    """

    name: str
    formula: str
    n_params: Callable[[int], int]
    fit: Callable[..., np.ndarray]


def _h_grid(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``log C`` grid and ``h = √min(1, CK)`` on it: the kinks ``C = 1/K_j``, the
    midpoints between them and points beyond both ends (``(G,)`` and ``(G, n)``)."""
    u = np.unique(np.log(k))
    mid = 0.5 * (u[:-1] + u[1:])
    logc = -np.concatenate([u, mid, u[0] - np.array([1.0, 3.0, 30.0]),
                            u[-1] + np.array([1.0, 3.0])])
    h = np.exp(0.5 * np.minimum(logc[:, None] + np.log(k)[None, :], 0.0))
    return logc, h


def fit_min_law(lm, k, Y, W, *, extra_start: np.ndarray | None = None,
                max_nfev: int = 1000) -> MinLawFit:
    """The min law on each row of ``Y`` from the three fixed starts, a profile-grid start
    and ``extra_start`` ``(D, 3)`` if given, with its limits and attainment verdicts
    (:func:`rlscale.verification._law_fits.min_law_closure`)."""
    D = len(Y)
    starts = [np.broadcast_to(STARTS["min"], (D, 3, 3)),
              profile_start("min", lm, k, Y, W)[:, None, :]]
    if extra_start is not None:
        starts.append(np.asarray(extra_start)[:, None, :])
    fit = fit_form("min", np.concatenate(starts, axis=1), lm, k, Y, W, max_nfev=max_nfev)
    return min_law_closure(lm, k, Y, W, fit, max_nfev=max_nfev)


def _law(lm, k, Y, W, max_nfev: int = 1000) -> np.ndarray:
    law = fit_min_law(lm, k, Y, W, max_nfev=max_nfev)
    return np.stack([law.predict(d, lm, k) for d in range(len(Y))])


def _plateau_m_free(lm, k, Y, W, max_nfev: int = 1000) -> np.ndarray:
    starts = profile_start("plateau", lm, k, Y, W)[:, None, :]
    fit = fit_form("plateau", starts, lm, k, Y, W, max_nfev=max_nfev)
    return FORMS["plateau"](fit.x, lm, k, False)[0]


def _interp_levels(levels: np.ndarray, have: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Per data set, per-``M`` coefficients ``(D, m, c)`` where ``have`` ``(D, m)``,
    linearly interpolated in ``keys`` (``log M``) elsewhere, the nearest beyond the ends."""
    out = levels.copy()
    for d in range(len(levels)):
        ok = have[d]
        if ok.all() or not ok.any():
            continue
        for c in range(levels.shape[2]):
            out[d, ~ok, c] = np.interp(keys[~ok], keys[ok], levels[d, ok, c])
    return out


def _per_m(lm):
    keys, inv = np.unique(lm, return_inverse=True)
    return keys, inv, np.eye(keys.size)[inv]  # (n, m) one-hot of each point's M


def _levels_on_grid(logc: np.ndarray, k, Y, W, onehot):
    """Per-``M`` levels ``A_M >= 0`` in closed form for each ``log C`` of a grid
    (``(D, G, m)`` levels and fitted counts, ``(D, G)`` costs), and ``h`` ``(D or 1, G, n)``."""
    h = np.exp(0.5 * np.minimum(logc[..., None] + np.log(k), 0.0))
    h = h if h.ndim == 3 else h[None]
    num = np.einsum("dn,dgn,nm->dgm", W * Y, h, onehot)
    den = np.einsum("dn,dgn,nm->dgm", W, h * h, onehot)
    A = np.where(den > 0, np.maximum(num, 0.0) / np.where(den > 0, den, 1.0), 0.0)
    cost = np.einsum("dn,dn->d", W * Y, Y)[:, None] - np.sum(2.0 * A * num - A * A * den,
                                                               axis=2)
    return A, den, cost, h


def _plateau_per_m(lm, k, Y, W, max_nfev: int = 1000) -> np.ndarray:
    keys, inv, onehot = _per_m(lm)
    D = len(Y)
    logc, _ = _h_grid(k)
    A, den, cost, h = _levels_on_grid(logc, k, Y, W, onehot)
    best = logc[np.argmin(cost, axis=1)]
    # The cost is smooth in log C between the kinks C = 1/K_j: refine on local grids,
    # each 20x finer than the last (to 1e-5 of the kinks' spacing).
    step = float(np.min(np.diff(np.unique(logc)))) if logc.size > 1 else 1.0
    rows = np.arange(D)
    for _ in range(4):
        fine = best[:, None] + np.linspace(-step, step, 41)[None, :]
        A, den, cost, h = _levels_on_grid(fine, k, Y, W, onehot)
        j = np.argmin(cost, axis=1)
        best, step = fine[rows, j], step / 20.0
    levels = _interp_levels(A[rows, j][:, :, None], den[rows, j] > 0, keys)[:, :, 0]
    return levels[:, inv] * h[rows, j]


def _gao(kind: str):
    def fit(lm, k, Y, W, max_nfev: int = 1000) -> np.ndarray:
        keys, inv, onehot = _per_m(lm)
        d = np.sqrt(k)
        X = np.stack([d, -d * d if kind == "bon" else -d * np.log(d)], axis=1)  # (n, 2)
        G = np.einsum("dn,nm,ni,nj->dmij", W, onehot, X, X)
        r = np.einsum("dn,nm,ni->dmi", W * Y, onehot, X)
        count = np.einsum("dn,nm->dm", W, onehot)
        det = G[..., 0, 0] * G[..., 1, 1] - G[..., 0, 1] ** 2
        scale = G[..., 0, 0] * G[..., 1, 1]
        ok = (count >= 2) & (det > 1e-12 * np.where(scale > 0, scale, 1.0))
        coef = np.zeros(r.shape)
        coef[ok] = np.linalg.solve(G[ok], r[ok][..., None])[..., 0]
        coef = _interp_levels(coef, ok, keys)
        return np.einsum("dni,ni->dn", coef[:, inv], X)

    return fit


def saturating_form(P: np.ndarray, lm: np.ndarray, k: np.ndarray, jac: bool = True):
    """``A (1 − e^{−M/M₀}) √min(1, CK)`` for rows ``P = (log A, log M₀, log C)``, and ∂/∂P."""
    t = P[:, 2:3] + np.log(k)
    h = np.exp(0.5 * np.minimum(t, 0.0))
    x = np.exp(lm - P[:, 1:2])  # M/M0
    e = np.exp(-x)
    s = -np.expm1(-x)
    f = np.exp(P[:, 0:1]) * s * h
    if not jac:
        return f, None
    J = np.empty((3, *f.shape))
    J[0] = f
    J[1] = -np.exp(P[:, 0:1]) * h * e * x  # ∂s/∂log M0 = −x e^{−x}
    J[2] = np.where(t < 0.0, 0.5 * f, 0.0)
    return f, J.transpose(1, 2, 0)


def saturating_md_form(P: np.ndarray, lm: np.ndarray, k: np.ndarray, jac: bool = True):
    """``A (1 + M₁/M)^{−1/2} √min(1, CK)`` for rows ``P = (log A, log M₁, log C)``, and ∂/∂P."""
    t = P[:, 2:3] + np.log(k)
    h = np.exp(0.5 * np.minimum(t, 0.0))
    x = np.exp(P[:, 1:2] - lm)  # M1/M
    s = 1.0 / np.sqrt(1.0 + x)
    f = np.exp(P[:, 0:1]) * s * h
    if not jac:
        return f, None
    J = np.empty((3, *f.shape))
    J[0] = f
    J[1] = -0.5 * f * x / (1.0 + x)  # ∂ log s/∂ log M1 = −x/(2(1 + x))
    J[2] = np.where(t < 0.0, 0.5 * f, 0.0)
    return f, J.transpose(1, 2, 0)


def sqrt_log_m_side_form(P: np.ndarray, lm: np.ndarray, k: np.ndarray, jac: bool = True):
    """``a √max(log M + b, 0) √min(1, CK)`` for rows ``P = (log a, b, log C)``, and ∂/∂P:
    the law's ``log M`` side with a free ``K`` shape per unit of plateau."""
    t = P[:, 2:3] + np.log(k)
    h = np.exp(0.5 * np.minimum(t, 0.0))
    u = lm + P[:, 1:2]
    r = np.sqrt(np.maximum(u, 0.0))
    f = np.exp(P[:, 0:1]) * r * h
    if not jac:
        return f, None
    J = np.empty((3, *f.shape))
    J[0] = f
    pos = u > 1e-300
    J[1] = np.where(pos, np.exp(P[:, 0:1]) * h / (2.0 * np.where(pos, r, 1.0)), 0.0)
    J[2] = np.where(t < 0.0, 0.5 * f, 0.0)
    return f, J.transpose(1, 2, 0)


def fit_saturating(form, lm, k, Y, W, max_nfev: int = 1000) -> np.ndarray:
    """Parameters ``(D, 3)`` of a three-parameter ``M``-law form (:func:`saturating_form`,
    :func:`saturating_md_form`, :func:`sqrt_log_m_side_form`): the best point of a
    profile grid over (its ``M`` parameter, ``log C``), polished."""
    D = len(Y)
    logc, _h = _h_grid(k)
    lo, hi = float(lm.min()), float(lm.max())
    if form is sqrt_log_m_side_form:  # b: below, at and far above -log M_min
        log_m0 = np.concatenate([-lo - (hi - lo) * np.array([0.9, 0.7, 0.5, 0.3, 0.1]),
                                 -lo + np.geomspace(1e-3, 1e4, 20)])
    else:
        log_m0 = np.linspace(lo - 3.0, hi + 3.0, 25)
    # Profile: for every (log M0, log C) the scale A >= 0 in closed form.
    gm, gc = np.repeat(log_m0, logc.size), np.tile(logc, log_m0.size)
    P = np.column_stack([np.zeros(gm.size), gm, gc])
    shape = form(P, lm, k, False)[0]  # (G, n) at A = 1
    num = np.einsum("dn,gn->dg", W * Y, shape)
    den = np.einsum("dn,gn->dg", W, shape * shape)
    A = np.where(den > 0, np.maximum(num, 0.0) / np.where(den > 0, den, 1.0), 0.0)
    best = np.argmax(A * num - 0.5 * A * A * den, axis=1)
    tiny = 1e-8 * (np.max(np.abs(Y), axis=1) + 1e-300)
    x0 = np.column_stack([np.log(np.maximum(A[np.arange(D), best], tiny)), gm[best],
                          gc[best]])
    box = (np.array([-np.inf, lo - 30.0, -np.inf]), np.array([np.inf, hi + 30.0, np.inf]))
    if form is sqrt_log_m_side_form:  # b -> inf is the M-free plateau: stop there
        box = (np.full(3, -np.inf), np.array([np.inf, -lo + 1e3 * (1.0 + hi - lo), np.inf]))
    # The polish can only improve on its start (accepted steps lower the cost).
    return solve_batch(form, x0, lm, k, Y, W, runoff=box, max_nfev=max_nfev).x


def _saturating(form):
    def fit(lm, k, Y, W, max_nfev: int = 1000) -> np.ndarray:
        return form(fit_saturating(form, lm, k, Y, W, max_nfev), lm, k, False)[0]

    return fit


MODELS = {
    m.name: m for m in (
        ModelSpec("law", "a*sqrt(min(log M + b, c*K))", lambda nm: 3, _law),
        ModelSpec("plateau_m_free", "A*sqrt(min(1, C*K))", lambda nm: 2, _plateau_m_free),
        ModelSpec("plateau_per_m", "A_M*sqrt(min(1, C*K)), A_M interpolated in log M",
                  lambda nm: nm + 1, _plateau_per_m),
        ModelSpec("gao_bon_per_m", "d*(alpha_M - beta_M*d), d = sqrt(K)", lambda nm: 2 * nm,
                  _gao("bon")),
        ModelSpec("gao_rl_per_m", "d*(alpha_M - beta_M*log d), d = sqrt(K)", lambda nm: 2 * nm,
                  _gao("rl")),
        ModelSpec("saturating", "A*(1 - exp(-M/M0))*sqrt(min(1, C*K))", lambda nm: 3,
                  _saturating(saturating_form)),
        ModelSpec("saturating_md", "A*(1 + M1/M)^(-1/2)*sqrt(min(1, C*K))", lambda nm: 3,
                  _saturating(saturating_md_form)),
    )
}
#: Scored beside MODELS but outside the pre-registered comparison (added after the run):
#: the law's log M side alone, with the plateau's K shape.
EXPLORATORY = {
    "sqrt_log_m_side": ModelSpec("sqrt_log_m_side", "a*sqrt(log M + b)*sqrt(min(1, C*K))",
                                 lambda nm: 3, _saturating(sqrt_log_m_side_form)),
}


def fit_predict(name: str, lm: np.ndarray, k: np.ndarray, Y: np.ndarray, W: np.ndarray, *,
                max_nfev: int = 1000) -> np.ndarray:
    """Model ``name`` fitted to the rows of ``Y`` under weights ``W``; ``(D, n)``
    predictions at every design point.

    Examples
    --------
    >>> lm = np.repeat(np.log([10.0, 100.0, 1000.0]), 3)
    >>> k = np.tile([0.5, 2.0, 8.0], 3)
    >>> y = 2.0 * np.sqrt(np.minimum(1.0, 0.25 * k)) * np.repeat([0.5, 0.8, 1.0], 3)
    >>> W = np.ones((1, 9))
    >>> W[0, 3:6] = 0.0                                  # hold out M = 100
    >>> np.round(fit_predict("plateau_per_m", lm, k, y[None], W)[0, 3:6], 5).tolist()
    [0.53033, 1.06066, 1.5]
    """
    spec = MODELS.get(name) or EXPLORATORY.get(name)
    if spec is None:
        raise ValueError(f"name must be one of {', '.join([*MODELS, *EXPLORATORY])}; got "
                         f"{name!r:.80}")
    Y = np.atleast_2d(np.asarray(Y, np.float64))
    W = np.asarray(W, np.float64)
    Y = np.where(W > 0, Y, 0.0)  # dropped points may be NaN (not reached)
    return spec.fit(np.asarray(lm, float), np.asarray(k, float), Y, W, max_nfev=max_nfev)
