"""Design criteria, their gradients, whole-run gains and the optimality certificate.

Notation (Boyd & Vandenberghe 2004 §7.5; Pukelsheim 2006, *Optimal Design of
Experiments*, ch. 5–7).  Candidate ``i`` has sensitivities ``J_si`` (``m × p``:
outputs × parameters) under law ``s`` of ``S`` (``S = 1`` for a local
design, the bootstrap laws for a robust one).  A design with weights
``w ≥ 0`` (runs per candidate; fractional in the relaxation) has information

    ``M_s(w) = M0_s + Σ_i w_i J_siᵀ J_si``

with ``M0_s`` the fixed information of the runs already observed plus a weak
ridge that keeps ``M`` invertible (``1e-9`` in the scaled coordinates, where a
single run's information has trace ``p`` on average: negligible against any
identifying design).  Both criteria are *utilities* (larger is better), concave
in ``w``:

* D: ``Φ(w) = (1/S) Σ_s log det M_s(w)``, gradient ``∂Φ/∂w_i = (1/S) Σ_s
  tr(M_s⁻¹ J_siᵀ J_si)``;
* V: ``Φ(w) = −(1/S) Σ_s tr(A_s M_s(w)⁻¹)`` with ``A_s = Σ_t ω_t G_stᵀ G_st``
  the target region's sensitivities (the average prediction variance over the
  target, in units of the noise variance), gradient
  ``(1/S) Σ_s tr(M_s⁻¹ A_s M_s⁻¹ J_siᵀ J_si) ≥ 0`` (from
  ``∂M⁻¹ = −M⁻¹ (∂M) M⁻¹``).

Averaging over laws (a pseudo-Bayesian design, Chaloner & Verdinelli 1995)
keeps both concave.

**Certificate.**  For a concave ``Φ`` over the polytope ``P = {0 ≤ w ≤ u,
cᵀw ≤ B}``, concavity gives ``Φ(w*) ≤ Φ(w) + max_{s∈P} ∇Φ(w)ᵀ(s − w)``: the
Frank–Wolfe gap bounds how far ``w`` is from optimal, whatever solver produced
it.  The inner maximum is a fractional knapsack, solved exactly by filling
candidates in decreasing ``∂Φ/∂w_i / c_i`` (Dantzig 1957).  Without caps
and observed runs, for D, it is the Kiefer–Wolfowitz equivalence theorem with
costs: ``w`` is optimal iff ``max_i tr(M⁻¹ J_iᵀJ_i)/c_i ≤ p/B`` (the gap is then
``B·max_i d_i/c_i − p``, zero exactly there), reported as
:attr:`Certificate.equivalence`.

**Whole-run gains** (for rounding and greedy designs): adding one run of
``i`` changes ``log det M`` by ``log det(I + J_i M⁻¹ J_iᵀ)`` (the matrix
determinant lemma) and ``tr(A M⁻¹)`` by ``−tr((I + Q_i)⁻¹ J_i M⁻¹ A M⁻¹ J_iᵀ)``
with ``Q_i = J_i M⁻¹ J_iᵀ`` (Woodbury), vectorised over candidates and laws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Certificate", "Information", "knapsack_max"]

#: The ridge added to every information matrix, in the scaled coordinates.
RIDGE = 1e-9


def knapsack_max(d: np.ndarray, cost: np.ndarray, cap: np.ndarray, budget: float) -> float:
    """``max dᵀs`` over ``0 ≤ s ≤ cap``, ``costᵀs ≤ budget`` (``d ≥ 0``), exactly.

    Fractional knapsack (Dantzig 1957): fill in decreasing ``d/cost``, the last
    candidate fractionally.

    Examples
    --------
    >>> knapsack_max(np.array([3.0, 2.0]), np.array([1.0, 1.0]), np.array([1.0, 1.0]), 1.5)
    4.0
    """
    order = np.argsort(-d / cost, kind="stable")
    spend = np.cumsum(cost[order] * cap[order])
    full = spend <= budget
    value = float((d[order] * cap[order])[full].sum())
    k = int(full.sum())
    if k < order.size:
        left = budget - (spend[k - 1] if k else 0.0)
        i = order[k]
        value += d[i] * max(left, 0.0) / cost[i]
    return float(value)


@dataclass(frozen=True)
class Certificate:
    """How close a design's weights are to optimal for its criterion.

    Attributes
    ----------
    criterion : str
        ``"D"`` or ``"V"``.
    value : float
        The utility ``Φ(w)`` (D: mean log det; V: minus the mean target variance).
    gap : float
        Frank–Wolfe gap: ``Φ(w*) − Φ(w) ≤ gap`` over the feasible designs.
    bound : float
        ``value + gap``, an upper bound on the best utility of any design,
        whole-run or fractional.
    efficiency : float
        What the gap guarantees: D-efficiency ``exp(−gap/p)`` (the design's
        ``det^(1/p)`` relative to the optimum's), V-efficiency
        ``(V − gap)/V`` with ``V = −value`` (the optimal variance relative to
        this one); 1 is optimal.
    equivalence : float or None
        D only: ``max_i (d_i/c_i) / λ`` over candidates below their cap, with
        ``λ`` the ratio on the fractional support (Kiefer–Wolfowitz: 1 at the
        optimum); ``None`` without a fractional support.
    """

    criterion: str
    value: float
    gap: float
    bound: float
    efficiency: float
    equivalence: float | None

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


class Information:
    """Information matrices of candidates under ``S`` laws, with a target for V.

    Parameters
    ----------
    J : ndarray, shape (S, n, m, p)
        Sensitivities of the candidates (already weighted by ``1/noise`` per
        output when outputs differ in noise).
    fixed : ndarray, shape (S, p, p)
        Information of the observed runs (no ridge).
    A : ndarray, shape (S, p, p), optional
        The target matrix of the V criterion.

    The parameters are rescaled so that a candidate's average information has
    unit diagonal (the criteria change by a constant for D and not at all for V).
    """

    def __init__(self, J: np.ndarray, fixed: np.ndarray, A: np.ndarray | None = None):
        S, n, m, p = J.shape
        scale = np.sqrt(np.mean(J ** 2, axis=(0, 1, 2)))
        scale = np.where(scale > 0, scale, 1.0)
        self.scale = scale
        self.J = J / scale
        self.S, self.n, self.m, self.p = S, n, m, p
        inv = 1.0 / scale
        self.fixed = fixed * inv[None, :, None] * inv[None, None, :]
        self.M0 = self.fixed + RIDGE * np.eye(p)[None]
        self.A = None if A is None else A * inv[None, :, None] * inv[None, None, :]
        # Per candidate and law: J_iᵀ J_i, flattened for the relaxation's affine map.
        self.F = np.einsum("snmp,snmq->snpq", self.J, self.J)
        # Rows (candidate, output) stacked per law: M(w) and the gradient are batched matrix
        # products over S laws, not S·n small ones (memory-bound on F otherwise).
        self._rows = np.ascontiguousarray(self.J.reshape(S, n * m, p))

    # -- matrices -------------------------------------------------------------------
    def matrix(self, w: np.ndarray) -> np.ndarray:
        """``M_s(w)`` for every law: shape ``(S, p, p)``."""
        wr = np.repeat(np.asarray(w, dtype=float), self.m)
        R = self._rows
        return self.M0 + np.swapaxes(R * wr[None, :, None], -1, -2) @ R

    @staticmethod
    def inverse(M: np.ndarray) -> np.ndarray:
        """``M⁻¹`` of symmetric positive-definite matrices (symmetrised)."""
        P = np.linalg.inv(M)
        return (P + np.swapaxes(P, -1, -2)) / 2

    def value(self, kind: str, w: np.ndarray) -> float:
        return self.value_of(kind, self.matrix(w))

    def value_of(self, kind: str, M: np.ndarray) -> float:
        if kind == "D":
            sign, logdet = np.linalg.slogdet(M)
            return float(np.mean(np.where(sign > 0, logdet, -np.inf)))
        return -float(np.mean(np.einsum("spq,sqp->s", self.A, self.inverse(M))))

    def ridge_bound(self, w: np.ndarray, factor: float = 10.0, rel: float = 1e-2) -> bool:
        """Whether the V criterion at ``w`` is set by the ridge, not by the runs.

        With the ridge ``RIDGE·I`` and ``factor·RIDGE·I`` the target variance
        should agree when the runs identify what the target needs; where it
        moves by more than ``rel`` the target sees a direction no run informs,
        and the variance (of order ``1/RIDGE``) and any gap relative to it mean
        nothing.
        """
        if self.A is None:
            return False
        M = self.matrix(w)
        v1 = -self.value_of("V", M)
        v2 = -self.value_of("V", M + (factor - 1.0) * RIDGE * np.eye(self.p)[None])
        return not (math.isfinite(v1) and abs(v1 - v2) <= rel * abs(v1))

    def gradient(self, kind: str, w: np.ndarray) -> np.ndarray:
        """``∂Φ/∂w_i`` for every candidate (averaged over laws), shape ``(n,)``."""
        P = self.inverse(self.matrix(w))
        Y = P if kind == "D" else P @ self.A @ P
        return self.quadratic(Y) / self.S

    def quadratic(self, Y: np.ndarray) -> np.ndarray:
        """``Σ_s tr(Y_s J_siᵀ J_si)`` for every candidate (``Y``: ``(S, p, p)``), shape ``(n,)``."""
        R = self._rows
        q = np.einsum("srq,srq->sr", R @ Y, R)
        return q.reshape(self.S, self.n, self.m).sum(axis=(0, 2))

    # -- whole runs ---------------------------------------------------------------
    def gains(self, kind: str, M: np.ndarray, among: np.ndarray | None = None) -> np.ndarray:
        """Utility gained by one more run of each candidate (or of those in ``among``)."""
        J = self.J if among is None else self.J[:, among]
        P = self.inverse(M)
        if self.m == 1:
            j = J[:, :, 0, :]
            z = j @ P  # (S, k, p)
            q = np.einsum("skp,skp->sk", z, j)
            if kind == "D":
                return np.mean(np.log1p(q), axis=0)
            r = np.einsum("skq,skq->sk", z @ self.A, z)
            return np.mean(r / (1.0 + q), axis=0)
        Z = J @ P[:, None]  # (S, k, m, p)
        Q = Z @ np.swapaxes(J, -1, -2)
        eye = np.eye(self.m)
        if kind == "D":
            return np.mean(np.linalg.slogdet(eye + Q)[1], axis=0)
        R = Z @ self.A[:, None] @ np.swapaxes(Z, -1, -2)
        return np.mean(np.trace(np.linalg.solve(eye + Q, R), axis1=-2, axis2=-1), axis=0)

    def certificate(self, kind: str, w: np.ndarray, cost: np.ndarray, cap: np.ndarray,
                    budget: float) -> Certificate:
        """The Frank–Wolfe gap of ``w`` (see the module docstring) and what it implies."""
        d = np.maximum(self.gradient(kind, w), 0.0)
        value = self.value(kind, w)
        gap = max(knapsack_max(d, cost, cap, budget) - float(d @ w), 0.0)
        if kind == "D":
            eff = math.exp(-gap / self.p)
        else:
            v = -value
            eff = max(v - gap, 0.0) / v if v > 0 else 1.0
        equivalence = None
        if kind == "D":
            frac = (w > 1e-6 * cap) & (w < cap * (1 - 1e-6))
            below = w < cap * (1 - 1e-6)
            if frac.any() and below.any():
                lam = float(w[frac] @ d[frac]) / float(w[frac] @ cost[frac])
                equivalence = float(np.max(d[below] / cost[below]) / lam) if lam > 0 else None
        return Certificate(kind, value, gap, value + gap, eff, equivalence)
