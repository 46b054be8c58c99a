"""The fitted law forms, vectorised over parameter rows, with analytic Jacobians.

Each form ``F`` is ``F(P, lm, k) -> (f, J)``: values ``(B, n)`` and the Jacobian
``(B, n, p)`` (a view of a ``(p, B, n)`` array: each column written and read
contiguously) for ``B`` parameter rows ``P`` on one design (``lm = log M``,
``k = K``, both ``(n,)``), as :func:`rlscale.verification._law_solver.solve_batch` takes
them.  The Jacobians are the chain rule on the formulas below (checked against
finite differences in ``tests/test_trainer_reward_law.py``):

* :func:`min_form`, ``a √min(lm + b, cK)`` in ``(log a, b, log c)``, clamped at
  0: ``∂f/∂log a = f``, ``∂f/∂b = a/(2√u)`` where ``lm + b <= cK``,
  ``∂f/∂log c = a·cK/(2√u)`` where ``cK < lm + b`` (a subgradient at the kink),
  zero where ``u = min(lm + b, cK) <= 0``;
* :func:`smooth_form`, ``a ((lm + b)^−q + (cK)^−q)^(−1/(2q))`` in
  ``(log a, b, log c, log q)``, in log space (``lse = log(u^−q + v^−q)``,
  ``v = cK``, ``q`` clamped to ``[e^−50, e^700]``, ``u`` to ``>= 1e-12``): with
  ``w_u = u^−q/e^lse`` and ``w_v = v^−q/e^lse``, ``∂ log f/∂b = w_u/(2u)``,
  ``∂ log f/∂log c = w_v/2``, ``∂ log f/∂log q = (w_u log u + w_v log v)/2 +
  lse/(2q)`` (zero where clamped);
* :func:`sqrt_logm_form`, ``a √(lm + b)``: ``f`` and ``a/(2√(lm + b))``;
* :func:`plateau_form`, ``A √min(1, CK)`` in ``(log A, log C)``: the min law's
  limit ``b → ∞`` with ``a√b = A`` and ``c/b = C`` fixed (``√min(lm + b, cK) =
  √b·√min(1 + lm/b, (c/b)K)``); ``∂f/∂log A = f``, ``∂f/∂log C = f/2`` where
  ``CK < 1``.

The one-row functions (:func:`_law_min`, :func:`_jac_min`, ...) are these
forms at one parameter vector; the fits' predictions use them.
"""

from __future__ import annotations

import numpy as np

__all__: list[str] = []

#: Starts of the multi-start fits (the ones the verifications have always used).
STARTS = {
    "min": np.array([(0.0, 0.0, 0.0), (0.3, -1.0, 0.5), (-0.3, 1.0, -0.5)]),
    "smooth": np.array([(0.0, 0.0, 0.0, 1.0), (0.3, -1.0, 0.5, 0.0), (0.0, 0.5, 0.0, 2.0)]),
    "sqrt_logm": np.array([(0.0, 0.0), (0.5, -1.0)]),
}


def min_form(P: np.ndarray, lm: np.ndarray, k: np.ndarray, jac: bool = True):
    """``a √max(min(lm + b, cK), 0)`` for rows ``P = (log a, b, log c)``, and ∂/∂P."""
    a, b, c = np.exp(P[:, 0:1]), P[:, 1:2], np.exp(P[:, 2:3])
    u1, u2 = lm + b, c * k
    first = u1 <= u2
    u = np.where(first, u1, u2)
    f = a * np.sqrt(np.maximum(u, 0.0))
    if not jac:
        return f, None
    pos = u > 1e-300
    half = np.where(pos, a / (2.0 * np.sqrt(np.where(pos, u, 1.0))), 0.0)
    J = np.empty((3, *f.shape))
    J[0] = f
    J[1] = np.where(first, half, 0.0)
    J[2] = np.where(first, 0.0, half * u2)
    return f, J.transpose(1, 2, 0)


def smooth_form(P: np.ndarray, lm: np.ndarray, k: np.ndarray, jac: bool = True):
    """The smooth min ``a ((lm + b)^−q + (cK)^−q)^(−1/(2q))``, ``P = (log a, b, log c, log q)``."""
    p3 = P[:, 3:4]
    q = np.exp(np.clip(p3, -50.0, 700.0))
    raw = lm + P[:, 1:2]
    u = np.maximum(raw, 1e-12)
    log_u = np.log(u)
    log_v = P[:, 2:3] + np.log(np.maximum(k, 1e-300))  # log(cK) without overflowing cK
    lse = np.logaddexp(-q * log_u, -q * log_v)
    f = np.exp(P[:, 0:1] - lse / (2.0 * q))
    if not jac:
        return f, None
    w_u, w_v = np.exp(-q * log_u - lse), np.exp(-q * log_v - lse)
    J = np.empty((4, *f.shape))
    J[0] = f
    J[1] = f * np.where(raw > 1e-12, w_u / (2.0 * u), 0.0)
    J[2] = f * (w_v / 2.0)
    inside = (p3 > -50.0) & (p3 < 700.0)
    J[3] = f * np.where(inside, (w_u * log_u + w_v * log_v) / 2.0 + lse / (2.0 * q), 0.0)
    return f, J.transpose(1, 2, 0)


def sqrt_logm_form(P: np.ndarray, lm: np.ndarray, k: np.ndarray, jac: bool = True):
    """``a √max(lm + b, 0)`` for rows ``P = (log a, b)`` (the min law at ``c = ∞``)."""
    a = np.exp(P[:, 0:1])
    u = lm + P[:, 1:2]
    f = a * np.sqrt(np.maximum(u, 0.0))
    if not jac:
        return f, None
    pos = u > 1e-300
    J = np.empty((2, *f.shape))
    J[0] = f
    J[1] = np.where(pos, a / (2.0 * np.sqrt(np.where(pos, u, 1.0))), 0.0)
    return f, J.transpose(1, 2, 0)


def plateau_form(P: np.ndarray, lm: np.ndarray, k: np.ndarray, jac: bool = True):
    """``A √min(1, CK)`` for rows ``P = (log A, log C)`` (the min law at ``b = ∞``)."""
    t = P[:, 1:2] + np.log(np.maximum(k, 1e-300))  # log(CK)
    f = np.exp(P[:, 0:1] + 0.5 * np.minimum(t, 0.0))
    if not jac:
        return f, None
    J = np.empty((2, *f.shape))
    J[0] = f
    J[1] = np.where(t < 0.0, 0.5 * f, 0.0)
    return f, J.transpose(1, 2, 0)


FORMS = {"min": min_form, "smooth": smooth_form, "sqrt_logm": sqrt_logm_form,
         "plateau": plateau_form}


def _one(form, p, lm, k, jac):
    lm, k = np.broadcast_arrays(np.asarray(lm, float), np.asarray(k, float))
    f, J = form(np.asarray(p, float)[None, :], lm.ravel(), k.ravel(), jac)
    return (J[0] if jac else f[0].reshape(lm.shape))


def _law_min(p: np.ndarray, lm: np.ndarray, k: np.ndarray) -> np.ndarray:
    return _one(min_form, p, lm, k, False)


def _law_smooth(p: np.ndarray, lm: np.ndarray, k: np.ndarray) -> np.ndarray:
    return _one(smooth_form, p, lm, k, False)


def _sqrt_logm(p: np.ndarray, lm: np.ndarray, k: np.ndarray) -> np.ndarray:
    return _one(sqrt_logm_form, p, lm, k, False)


def _jac_min(p: np.ndarray, lm: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``(n, 3)`` Jacobian of :func:`_law_min` (see :func:`min_form`)."""
    return _one(min_form, p, lm, k, True)


def _jac_smooth(p: np.ndarray, lm: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``(n, 4)`` Jacobian of :func:`_law_smooth` (see :func:`smooth_form`)."""
    return _one(smooth_form, p, lm, k, True)


def _jac_sqrt_logm(p: np.ndarray, lm: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``(n, 2)`` Jacobian of :func:`_sqrt_logm` (see :func:`sqrt_logm_form`)."""
    return _one(sqrt_logm_form, p, lm, k, True)
