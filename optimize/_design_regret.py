"""The plan's expected regret as a design criterion (a decision-focused L-optimal design).

A plan is judged by what it delivers under the true law, not by how well its
loss is predicted: a fit that gets the floor wrong predicts the plan's loss
badly yet picks the same plan.  The regret of planning with ``θ̂`` when the
law is ``θ``, ``R = L(x*(θ̂); θ) − L(x*(θ); θ)``, is second order in
``δθ = θ̂ − θ`` (the plan is an optimum).  On the iso-cost surface
``{x : c(x) = B}`` near ``x*`` write ``x(t)`` for the point at tangent
coordinates ``t`` (log axes, projected back onto the surface along the cost's
log-gradient) and ``f(t; θ) = L(x(t); θ)``.  The fitted plan solves
``∇_t f(t̂; θ̂) = 0``, so ``t̂ ≈ −H⁻¹ G δθ`` with ``H = ∇²_t f`` and
``G = ∂(∇_t f)/∂θ`` at ``t = 0``, and

    ``R ≈ ½ t̂ᵀ H t̂ = δθᵀ A δθ``,  ``A = ½ Gᵀ H⁻¹ G``,

so ``E[R] ≈ tr(A Cov θ̂) = tr(A M⁻¹)`` (in units of the noise variance): the V
criterion of :mod:`rlscale.optimize._design_criteria` with this ``A`` is the
expected regret (an L-optimal design, Atkinson, Donev & Tobias 2007, §10.5;
the decision-theoretic reading is Chaloner & Verdinelli 1995, §2.3).  Under an
ensemble each law is taken at its own plan: the Bayes expected regret.

``H`` and ``G`` are central differences of the law's loss and sensitivities at
``±h`` (``h = 0.05`` in log axes) along an orthonormal basis of the tangent
space; axes the plan holds at a bound are fixed (not tangent), axes absent
from the cost (a learning rate) are tangent.  A direction of ``H`` that is not
a minimum to rounding is floored at ``1e-6`` of the largest curvature: a flat
direction makes the plan ill-determined there, and the criterion says so by
weighting it heavily.  The test ``tests/test_design_values.py`` checks
``δθᵀ A δθ`` against regrets computed by planning with perturbed laws.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from rlscale.optimize._design_model import DesignModel
from rlscale.theory._posynomial import Posynomial

__all__ = ["regret_matrix"]

#: Step of the central differences, in log axes.
STEP = 0.05


def _plan_loss_and_gradient(model: DesignModel, x: Mapping[str, np.ndarray]
                            ) -> tuple[float, np.ndarray]:
    """The plan's objective (mean over outputs, the plans' weights) and ``∂/∂θ`` of it."""
    weights = getattr(model, "weights", None)
    f = model.loss(x)[0]  # (m,)
    J = model.jacobian(x)[0]  # (m, p) of log f
    w = np.full(f.size, 1.0 / f.size) if weights is None else np.asarray(weights, dtype=float)
    return float(w @ f), (w * f) @ J


def regret_matrix(model: DesignModel, cost: Posynomial, budget: float,
                  plan: Mapping[str, float],
                  bounds: Mapping[str, tuple[float, float]] | None = None) -> np.ndarray:
    """``A`` with ``E[regret] ≈ tr(A Cov θ̂)`` at ``plan`` (the law's optimum at ``budget``)."""
    from scipy.optimize import brentq

    axes = list(model.axes)
    z0 = np.log([float(plan[a]) for a in axes])
    fixed = np.zeros(len(axes), dtype=bool)
    for i, a in enumerate(axes):  # an axis the plan holds at a bound is not free to move
        lo, hi = (bounds or {}).get(a, (None, None))
        v = float(plan[a])
        fixed[i] = bool((lo is not None and v <= lo * (1 + 1e-6))
                        or (hi is not None and v >= hi * (1 - 1e-6)))
    grad = cost.log_gradient({a: np.array([float(plan[a])]) for a in axes})
    n = np.array([float(np.ravel(grad.get(a, np.zeros(1)))[0]) for a in axes])
    n[fixed] = 0.0
    p = model.n_params
    if not np.any(n):  # nothing costs anything free: no plan trade-off to get wrong
        return np.zeros((p, p))
    n /= np.linalg.norm(n)
    free = np.flatnonzero(~fixed)
    basis = np.eye(len(axes))[:, free]
    Q, _ = np.linalg.qr(np.column_stack([n, basis]))
    U = Q[:, 1:free.size]  # tangent directions (orthonormal, orthogonal to n)
    k = U.shape[1]
    if k == 0:
        return np.zeros((p, p))
    log_b = math.log(budget)

    def point(t: np.ndarray) -> dict[str, np.ndarray]:
        z = z0 + U @ t

        def gap(a: float) -> float:
            vals = {ax: np.array([math.exp(v)]) for ax, v in zip(axes, z + a * n)}
            return math.log(float(cost.evaluate(vals)[0])) - log_b

        a = brentq(gap, -20.0, 20.0, xtol=1e-14)
        return {ax: np.array([math.exp(v)]) for ax, v in zip(axes, z + a * n)}

    h = STEP
    cache: dict[tuple[float, ...], tuple[float, np.ndarray]] = {}

    def at(t: np.ndarray) -> tuple[float, np.ndarray]:
        key = tuple(np.round(t / h).astype(int).tolist())
        if key not in cache:
            cache[key] = _plan_loss_and_gradient(model, point(t))
        return cache[key]

    e = np.eye(k) * h
    L0 = at(np.zeros(k))[0]
    H = np.zeros((k, k))
    G = np.zeros((k, p))
    for i in range(k):
        Lp, gp = at(e[i])
        Lm, gm = at(-e[i])
        H[i, i] = (Lp - 2 * L0 + Lm) / h ** 2
        G[i] = (gp - gm) / (2 * h)
        for j in range(i + 1, k):
            H[i, j] = H[j, i] = (at(e[i] + e[j])[0] - at(e[i] - e[j])[0]
                                 - at(e[j] - e[i])[0] + at(-e[i] - e[j])[0]) / (4 * h * h)
    vals, vecs = np.linalg.eigh(H)
    vals = np.maximum(np.abs(vals), 1e-6 * max(float(np.max(np.abs(vals))), 1e-300))
    Hinv = (vecs / vals) @ vecs.T
    A = 0.5 * G.T @ Hinv @ G
    return (A + A.T) / 2
