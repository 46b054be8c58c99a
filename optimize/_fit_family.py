"""Law families of the fitter: one object per family instead of family-string branches.

Each family knows its log-space parameter vector ``theta`` and everything the
fitter needs of it (issue 16, room 3):

- :meth:`~_Family.names` -- the natural parameter names, in ``theta``'s order
  of the natural parameters (``floor``, ``coefficient[axis]``...,
  ``exponent[axis]``...; ``p_max`` first for pass rates);
- :meth:`~_Family.predict` -- ``log L_hat`` for many ``theta`` at once, with
  its analytic Jacobian on request;
- :meth:`~_Family.grid` and :meth:`~_Family.bounds` -- Hoffmann et al.'s
  initialisation grid and the box the parameters live in;
- :meth:`~_Family.natural`, :meth:`~_Family.to_law` and
  :meth:`~_Family.law_from_natural` -- back to the user's parameters and law.

Parameterisation (Hoffmann et al. 2022, arXiv 2203.15556, appendix D.2;
Besiroglu et al. 2024, arXiv 2404.10102, §2):

- additive ``L = E + sum_i A_i x_i^-alpha_i`` with ``theta = (e, a_1..a_n,
  alpha_1..alpha_n)``, ``e = log E``, ``a_i = log A_i``; ``log L_hat`` is the
  log-sum-exp ``LSE(e, a_i - alpha_i log x_i)``.  With the softmax weights
  ``w_0, w_i`` of its terms, ``d/de = w_0``, ``d/da_i = w_i`` and
  ``d/dalpha_i = -w_i log x_i`` (derivative of LSE is the softmax);
- multiplicative ``L = C prod_i x_i^-alpha_i``, ``theta = (log C, alpha_i)``,
  linear in ``theta``: ``log L_hat = c - sum_i alpha_i log x_i``;
- pass rate ``p = p_max / (1 + sum_i B_i x_i^-alpha_i)`` fitted through its
  loss ``1/p``, an additive law with floor ``1/p_max >= 1`` and coefficients
  ``B_i / p_max`` (see :mod:`rlscale.theory._laws`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from rlscale.theory._laws import AdditiveLaw, Law, MultiplicativeLaw, PassRateLaw

__all__: list[str] = []

#: Initialisation grid of Hoffmann et al. (2022) as used by Besiroglu et al. (2024).
GRID = {
    "exponent": (0.0, 0.5, 1.0, 1.5, 2.0),
    "log_floor": (-1.0, -0.5, 0.0, 0.5, 1.0),
    "log_coefficient": (0.0, 5.0, 10.0, 15.0, 20.0, 25.0),
}

Bounds = list[tuple[float | None, float | None]]


def _product(columns: Sequence[Sequence[float]]) -> np.ndarray:
    """Cartesian product of ``columns`` in ``itertools.product`` order (last fastest)."""
    mesh = np.meshgrid(*[np.asarray(c, dtype=np.float64) for c in columns], indexing="ij")
    return np.column_stack([m.ravel() for m in mesh])


def _log_sum_exp_terms(theta: np.ndarray, logx: np.ndarray
                       ) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """The additive law's log terms ``z_0 = log E``, ``z_i = log A_i − α_i log x_i`` for
    ``theta`` ``(B, p)``, as ``zmax``, ``w_j = exp(z_j − zmax)`` and ``s = Σ w_j``
    (``(B, P)`` each), so ``log L_hat = zmax + log s`` without overflow and
    ``w_j / s`` is the derivative of ``log L_hat`` in ``z_j``.  One ``(B, P)``
    array per term: elementwise max/exp/sum over a handful of terms is much
    faster than reducing a short last axis.
    """
    n = logx.shape[1]
    terms = [np.broadcast_to(theta[:, :1], (theta.shape[0], logx.shape[0]))]
    for i in range(n):
        terms.append(theta[:, 1 + i:2 + i] - theta[:, 1 + n + i:2 + n + i] * logx[:, i])
    zmax = terms[0]
    for t in terms[1:]:
        zmax = np.maximum(zmax, t)
    w = [np.exp(t - zmax) for t in terms]
    s = w[0].copy()
    for wi in w[1:]:
        s += wi
    return zmax, w, s


class _Additive:
    """``L = E + sum_i A_i x_i^-alpha_i``; ``theta = (log E, log A_i, alpha_i)``."""

    name = "additive"
    law_name = "additive"
    floor_name = "floor"

    def n_params(self, n_axes: int) -> int:
        return 1 + 2 * n_axes

    def exponent_slice(self, n_axes: int) -> slice:
        return slice(1 + n_axes, 1 + 2 * n_axes)

    def names(self, axes: Sequence[str]) -> list[str]:
        return ([self.floor_name] + [f"coefficient[{a}]" for a in axes]
                + [f"exponent[{a}]" for a in axes])

    def predict(self, theta: np.ndarray, logx: np.ndarray, jac: bool = False
                ) -> tuple[np.ndarray, np.ndarray | None]:
        """``log L_hat`` of shape ``(B, P)`` for ``theta`` ``(B, p)``; Jacobian ``(B, P, p)``."""
        n = logx.shape[1]
        B, P = theta.shape[0], logx.shape[0]
        zmax, w, s = _log_sum_exp_terms(theta, logx)
        pred = zmax + np.log(s)
        if not jac:
            return pred, None
        J = np.empty((B, P, 1 + 2 * n))
        J[:, :, 0] = w[0] / s
        for i in range(n):
            wi = w[1 + i] / s
            J[:, :, 1 + i] = wi
            J[:, :, 1 + n + i] = -wi * logx[:, i]
        return pred, J

    def huber_gradient(self, thetas: np.ndarray, logx: np.ndarray, logy: np.ndarray,
                       delta: float) -> tuple[np.ndarray, np.ndarray]:
        """Summed Huber loss of ``log L_hat - log y`` and its gradient, for ``(B, p)`` thetas.

        The gradient is ``J^T c`` with ``c = clip(r, -delta, delta)`` (the Huber
        derivative), formed term by term without the ``(B, P, p)`` Jacobian: one
        ``(B, P)`` array per term, elementwise max/exp/sum over a handful of terms
        being much faster than reducing a short last axis.
        """
        n = logx.shape[1]
        zmax, w, s = _log_sum_exp_terms(thetas, logx)
        r = zmax + np.log(s) - logy
        c = np.clip(r, -delta, delta)  # c (r - c/2): r^2/2 inside, delta(|r| - delta/2) out
        loss = (c * (r - 0.5 * c)).sum(axis=1)
        g = np.empty_like(thetas)
        g[:, 0] = np.einsum("bi,bi->b", c, w[0] / s)
        for i in range(n):
            wa = w[1 + i] / s * c
            g[:, 1 + i] = wa.sum(axis=1)
            g[:, 1 + n + i] = -(wa @ logx[:, i])
        return loss, g

    def grid(self, n_axes: int) -> np.ndarray:
        return _product([GRID["log_floor"]] + [GRID["log_coefficient"]] * n_axes
                        + [GRID["exponent"]] * n_axes)

    def bounds(self, n_axes: int) -> Bounds:
        return [(None, None)] + [(None, None)] * n_axes + [(0.0, None)] * n_axes

    def natural(self, theta: np.ndarray, axes: Sequence[str]) -> dict[str, float]:
        n = len(axes)
        values = [math.exp(theta[0]), *np.exp(theta[1:1 + n]), *theta[1 + n:]]
        return dict(zip(self.names(axes), (float(v) for v in values)))

    def to_law(self, theta: np.ndarray, axes: Sequence[str]) -> Law:
        n = len(axes)
        return AdditiveLaw(math.exp(theta[0]), dict(zip(axes, np.exp(theta[1:1 + n]))),
                           dict(zip(axes, np.maximum(theta[1 + n:], 1e-12))))

    def law_from_natural(self, p: Mapping[str, float], axes: Sequence[str]) -> Law:
        return AdditiveLaw(p["floor"], {a: p[f"coefficient[{a}]"] for a in axes},
                           {a: p[f"exponent[{a}]"] for a in axes})


class _PassRate(_Additive):
    """``p = p_max / (1 + sum_i B_i x_i^-alpha_i)``, fitted as the additive loss ``1/p``."""

    name = "pass_rate"
    floor_name = "p_max"

    def grid(self, n_axes: int) -> np.ndarray:
        g = super().grid(n_axes)
        return g[g[:, 0] >= 0]  # the floor of 1/p is 1/p_max >= 1

    def bounds(self, n_axes: int) -> Bounds:
        return [(0.0, None), *super().bounds(n_axes)[1:]]

    def natural(self, theta: np.ndarray, axes: Sequence[str]) -> dict[str, float]:
        n = len(axes)
        floor = math.exp(theta[0])  # 1/p_max; the loss's A_i = B_i / p_max
        values = [1.0 / floor, *(np.exp(theta[1:1 + n]) / floor), *theta[1 + n:]]
        return dict(zip(self.names(axes), (float(v) for v in values)))

    def to_law(self, theta: np.ndarray, axes: Sequence[str]) -> Law:
        return PassRateLaw.from_additive(super().to_law(theta, axes))

    def law_from_natural(self, p: Mapping[str, float], axes: Sequence[str]) -> Law:
        return PassRateLaw(p["p_max"], {a: p[f"coefficient[{a}]"] for a in axes},
                           {a: p[f"exponent[{a}]"] for a in axes})


class _Multiplicative:
    """``L = C prod_i x_i^-alpha_i``; ``theta = (log C, alpha_i)``."""

    name = "multiplicative"
    law_name = "multiplicative"

    def n_params(self, n_axes: int) -> int:
        return 1 + n_axes

    def exponent_slice(self, n_axes: int) -> slice:
        return slice(1, 1 + n_axes)

    def names(self, axes: Sequence[str]) -> list[str]:
        return ["coefficient"] + [f"exponent[{a}]" for a in axes]

    def predict(self, theta: np.ndarray, logx: np.ndarray, jac: bool = False
                ) -> tuple[np.ndarray, np.ndarray | None]:
        pred = theta[:, :1] - theta[:, 1:] @ logx.T
        if not jac:
            return pred, None
        J = np.empty((theta.shape[0], logx.shape[0], theta.shape[1]))
        J[:, :, 0] = 1.0
        J[:, :, 1:] = -logx
        return pred, J

    def huber_gradient(self, thetas: np.ndarray, logx: np.ndarray, logy: np.ndarray,
                       delta: float) -> tuple[np.ndarray, np.ndarray]:
        """Summed Huber loss and its gradient ``J^T c`` (``J = [1, -log x]``)."""
        r = thetas[:, :1] - thetas[:, 1:] @ logx.T - logy
        c = np.clip(r, -delta, delta)
        return (c * (r - 0.5 * c)).sum(axis=1), np.column_stack([c.sum(axis=1), -(c @ logx)])

    def grid(self, n_axes: int) -> np.ndarray:
        return _product([GRID["log_coefficient"]] + [GRID["exponent"]] * n_axes)

    def bounds(self, n_axes: int) -> Bounds:
        return [(None, None)] + [(0.0, None)] * n_axes

    def natural(self, theta: np.ndarray, axes: Sequence[str]) -> dict[str, float]:
        values = [math.exp(theta[0]), *theta[1:]]
        return dict(zip(self.names(axes), (float(v) for v in values)))

    def to_law(self, theta: np.ndarray, axes: Sequence[str]) -> Law:
        return MultiplicativeLaw(math.exp(theta[0]),
                                 dict(zip(axes, np.maximum(theta[1:], 1e-12))))

    def law_from_natural(self, p: Mapping[str, float], axes: Sequence[str]) -> Law:
        return MultiplicativeLaw(p["coefficient"], {a: p[f"exponent[{a}]"] for a in axes})


FAMILIES: dict[str, _Additive | _Multiplicative] = {
    "additive": _Additive(), "multiplicative": _Multiplicative(), "pass_rate": _PassRate()}


def family(name: str) -> _Additive | _Multiplicative:
    """The family object of a law name (``"additive"``, ``"multiplicative"``, ``"pass_rate"``).

    Examples
    --------
    >>> family("multiplicative").names(["K"])
    ['coefficient', 'exponent[K]']
    >>> family("pass_rate").grid(1).shape  # 3 non-negative log floors x 6 x 5
    (90, 3)
    """
    try:
        return FAMILIES[name]
    except (KeyError, TypeError):
        raise ValueError(f"law must be one of {tuple(FAMILIES)}; got law={name!r}") from None
