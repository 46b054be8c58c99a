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
from typing import Any, ClassVar, Protocol, runtime_checkable

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


@runtime_checkable
class Family(Protocol):
    """What a fit family declares about itself, so that no caller branches on its name.

    The declared properties (class variables) are checked numerically for every
    registered family by ``tests/test_fit_registry.py``: ``direction`` against
    the sign of the law's slope, ``limit`` against its value at large scale,
    ``linear`` against the second differences of ``predict`` in ``theta``.
    """

    #: the ``law=`` name (also :attr:`rlscale.theory.Law.family` of the laws it returns)
    name: ClassVar[str]
    #: ``"floor"``: the target falls to a floor ``>= 0``; ``"ceiling"``: it rises to a
    #: ceiling ``<= 1``; ``None``: it falls to 0 (a pure power law)
    limit: ClassVar[str | None]
    #: the natural parameter holding that limit and ``fit_law``'s keyword bounding it
    limit_name: ClassVar[str | None]
    #: -1: the target falls as every axis grows; +1: it rises
    direction: ClassVar[int]
    #: ``log L_hat`` is linear in ``theta`` (a pure power law: two values of an axis
    #: resolve its exponent)
    linear: ClassVar[bool]
    #: the family whose loss the objective minimises (a pass rate's is its loss ``1/p``)
    objective_form: ClassVar[str]
    #: what the target column holds, and its largest valid value
    target: ClassVar[str]
    target_high: ClassVar[float]
    #: the end of the wrong-direction error: what the law does and the fix
    direction_fix: ClassVar[str]

    def n_params(self, n_axes: int) -> int: ...
    def names(self, axes: Sequence[str]) -> list[str]: ...
    def predict(self, theta: np.ndarray, logx: np.ndarray, jac: bool = False
                ) -> tuple[np.ndarray, np.ndarray | None]: ...
    def loss(self, y: np.ndarray) -> np.ndarray: ...
    def target_value(self, law: Law, values: Mapping[str, Any]) -> Any: ...
    def to_law(self, theta: np.ndarray, axes: Sequence[str]) -> Law: ...


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


class _LossTarget:
    """A family whose target column is the loss itself (the pass rate's is not)."""

    target: ClassVar[str] = "loss"
    target_high: ClassVar[float] = math.inf

    def loss(self, y: np.ndarray) -> np.ndarray:
        """The loss the objective fits: the target itself."""
        return y

    def target_value(self, law: Law, values: Mapping[str, Any]) -> Any:
        """What the target column holds at ``values`` under ``law``: the loss."""
        return law(values)


class _Additive(_LossTarget):
    """``L = E + sum_i A_i x_i^-alpha_i``; ``theta = (log E, log A_i, alpha_i)``."""

    name: ClassVar[str] = "additive"
    law_name = "additive"
    floor_name = "floor"
    limit: ClassVar[str | None] = "floor"
    limit_name: ClassVar[str | None] = "floor"
    direction: ClassVar[int] = -1
    linear: ClassVar[bool] = False
    objective_form: ClassVar[str] = "additive"
    direction_fix: ClassVar[str] = (
        "an additive law falls with every axis: fit a loss (--target loss, 1 − success) or "
        "fit the rate with --law pass_rate")

    def log_limit_bounds(self, pair: tuple[float, float]) -> tuple[float | None, float | None]:
        """L-BFGS-B bounds on ``e = log`` floor for ``floor=(low, high)`` (0/inf: open)."""
        low, high = pair
        return (math.log(low) if low > 0 else None,
                math.log(high) if math.isfinite(high) else None)

    def centred_jacobian(self, theta: np.ndarray, logx: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray]:
        """``d log L_hat / d theta`` with each coefficient at its information-weighted
        centre ``c_i = Σ w_i² log x_i / Σ w_i²`` (``w_i`` the term's share of the
        prediction), and the centres (see ``_diagnostics``)."""
        n = logx.shape[1]
        z = np.column_stack([np.full(logx.shape[0], theta[0]),
                             theta[1:1 + n] - theta[1 + n:] * logx])
        w = np.exp(z - z.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        wt = w[:, 1:] ** 2
        c = (wt * logx).sum(axis=0) / np.maximum(wt.sum(axis=0), 1e-300)
        return np.column_stack([w[:, :1], w[:, 1:], -w[:, 1:] * (logx - c)]), c

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

    name: ClassVar[str] = "pass_rate"
    floor_name = "p_max"
    limit: ClassVar[str | None] = "ceiling"
    limit_name: ClassVar[str | None] = "p_max"
    direction: ClassVar[int] = 1
    target: ClassVar[str] = "pass rate"
    target_high: ClassVar[float] = 1.0
    direction_fix: ClassVar[str] = (
        "a pass-rate law rises: fit a success rate (--target success) or fit this loss "
        "with --law additive")

    def loss(self, y: np.ndarray) -> np.ndarray:
        """The loss the objective fits: ``1/p``."""
        return 1.0 / y

    def target_value(self, law: Law, values: Mapping[str, Any]) -> Any:
        """What the target column holds at ``values`` under ``law``: the pass rate."""
        return law.pass_rate(values)

    def log_limit_bounds(self, pair: tuple[float, float]) -> tuple[float | None, float | None]:
        """Bounds on ``log`` of the loss floor ``1/p_max`` for ``p_max=(low, high)``: the
        floor is in ``[1/high, 1/low]``, and ``>= 1``."""
        low, high = pair
        return (max(0.0, -math.log(high)), -math.log(low))

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


class _Multiplicative(_LossTarget):
    """``L = C prod_i x_i^-alpha_i``; ``theta = (log C, alpha_i)``."""

    name: ClassVar[str] = "multiplicative"
    law_name = "multiplicative"
    limit: ClassVar[str | None] = None
    limit_name: ClassVar[str | None] = None
    direction: ClassVar[int] = -1
    linear: ClassVar[bool] = True
    objective_form: ClassVar[str] = "multiplicative"
    direction_fix: ClassVar[str] = (
        "a multiplicative law falls with every axis: fit a loss (--target loss, 1 − success) "
        "or fit the rate with --law pass_rate")

    def centred_jacobian(self, theta: np.ndarray, logx: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray]:
        """``d log L_hat / d theta`` with the coefficient at the data's mean ``log x``."""
        c = logx.mean(axis=0)
        return np.column_stack([np.ones(logx.shape[0]), -(logx - c)]), c

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
