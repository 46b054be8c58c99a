r"""The pre-registered design of the reward-model testbed (``rlscale verify reward-law --testbed``).

Written and committed before the full grid was run (issue 28): the cells, the
grid, the models, the scores and the rule that names a regime are fixed here;
every regime run is reported, whatever it shows.

**World** (:mod:`rlscale.simulate._chain_world`).  Trajectories of ``H`` steps
over ``A = 8`` actions under a uniform reference; gold ``R = √(1−ν)·U + √ν·V``
with an additive part ``U`` and pure order-``k`` interactions ``V`` over the
``H − k + 1`` windows of ``k`` steps, unit variance under the reference.  Each
seed draws a fresh world, fresh comparisons, labels and best-of-n pool.

**Cells** (:data:`CELLS`; ``d`` = the well-specified RM's one-hot features):

=============  ==  ==  ====  ==========  =======  =====================================
cell           H   k  ν     N = 8^H     d        what it probes
=============  ==  ==  ====  ==========  =======  =====================================
additive       12  –  0     6.9e10      96       generalising gold: M/d, then a ceiling
mixed_k2       12  2  0.5   6.9e10      800      learnable interactions
mixed_k3       12  3  0.5   6.9e10      5216     half additive, half hard to learn
rough_k3       12  3  1     6.9e10      5120     interactions only: RM must see k-grams
rough_k4       12  4  1     6.9e10      36864    rougher still: d ≫ M everywhere
short_k3       6   3  1     2.6e5       2048     the candidate space 3e5× smaller
pool           5   5  1     32768       32768    one value per candidate: the selection
                                                 model embedded (N ≈ M)
=============  ==  ==  ====  ==========  =======  =====================================

**Reward models** (:data:`rlscale.simulate._rm_testbed.RM_KINDS`): ``bayes``
(the gold's blocks, ridge = the generator's prior: the posterior mode) at
label noise ``s ∈ {0.5, 1, 2}``; ``weak`` (ridge 1/100 of the prior's:
over-fitted) and ``additive`` (additive block only; mixed cells) at ``s = 1``.
Bradley–Terry on ``M`` pairs of reference trajectories, nested prefixes.

**Optimisers**: ``soft`` (exact KL-regularised optimum, 24 ``β`` and the
argmax), ``bon`` (best-of-n on a pool of ``2^14`` reference trajectories,
budgets up to its largest KL), ``pg`` (tabular KL-penalised RLOO, 6 ``β``, 150
updates of 32 trajectories; ``s = 1`` and ``M ∈ {10, 1e2, 1e3, 1e4, 1e5}``).

**Grid** (``full``): ``M = 10 … 1e5`` (two a decade), ``K`` 16 values
log-spaced from 0.05 to ``min(30, 0.9·H log A)``, 6 seeds.  A group is cell ×
RM × noise × optimiser (76 groups); its data are the seed means, on the points
every seed reached.  ``quick``: cells additive, rough_k3 and pool, the bayes RM
at ``s = 1``, ``M = 10 … 1e4`` (one a decade), 12 ``K``, 2 seeds, a pool of
``2^12``, ``pg`` at every ``M`` with 60 updates (leaving one ``M`` out needs three).

**Scores** (:mod:`rlscale.verification._law_holdout`).  Primary: the pooled
leave-one-``M``-out RMSE of the law ``a√min(log M + b, cK)`` against
``plateau_m_free``, ``plateau_per_m``, ``gao_bon_per_m``, ``gao_rl_per_m``
(named in the issue) and ``saturating``, ``saturating_md``
(:mod:`rlscale.verification._law_competitors`); leave-one-``K``-out, AIC and
BIC beside it.  The law's identification: the wild-cluster-bootstrap
likelihood-ratio rule (:mod:`rlscale.verification._law_calibration`, 99 draws);
``b`` on a clamp corner is labelled a boundary estimate.

**The log M side.**  ``G_top(M)``: the seed-mean gain at the largest budget
every ``M`` of the group reached.  ``γ``: the least-squares slope of
``log G_top`` on ``log log M`` over the ``M`` with ``G_top > 0``, with a 95 %
interval ``γ̂ ± t₀.₉₇₅(S−1)·SE``, SE the delete-one-seed jackknife.  Local
``γ`` between neighbouring ``M`` the same way.  Bands for a local ``γ``:
``< 0.2`` saturating, ``0.2 … 1`` log-like (``√log M``: ``γ = ½``), ``> 1``
power-like (a proxy correlation ``ρ(M)`` still growing as ``M/d``: for
``G ∝ √(M/d)``, ``γ = ½ log M``).  Over-optimisation: gold at some ``M``
falling past its peak in ``K`` by more than 2 seed standard errors and 0.02.

**Regime of a group**: its LOMO winner among the seven models — ``law``;
``saturating`` (either saturating form); ``no M law`` (``plateau_m_free``);
``interpolation`` (a per-``M`` model interpolated in ``log M``: no parametric
``M`` law beats it).  **A cell supports the law** when the law beats the four
named competitors leave-one-``M``-out in at least 80 % of its groups, and
**supports √log M** when moreover ``γ``'s interval contains ½ in at least
80 % of them.

**Predictions written before the run** (from the models' mechanics, not from
data): additive — the proxy's correlation grows like ``M/d`` and then
saturates at a ceiling set by ``K``, so a saturating law should win and the
law lose; rough and pool with the bayes RM — while the RM has seen a small
share of the ``k``-grams the best trajectory it can find is a selection among
the ``~M`` it has data on, so the plateau may grow like ``√log M``, but the
small-``K`` slope grows with ``M`` too (the reference rarely meets a seen
``k``-gram), which the law's ``M``-free ``K`` branch cannot follow; the pool
cell should turn to saturation once ``M`` nears ``N``; the weak RM should
over-optimise at small ``M`` and large ``K``; the additive RM on mixed golds
should stop improving at the additive part's ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ACTIONS", "CELLS", "MODES", "TestbedCell", "settings", "testbed_grid"]

ACTIONS = 8
MODES = ("quick", "full")


@dataclass(frozen=True)
class TestbedCell:
    """One world family of the testbed: horizon ``H``, interaction order ``k``, share ``ν``."""

    name: str
    horizon: int
    order: int
    interaction_share: float
    probes: str


CELLS = (
    TestbedCell("additive", 12, 1, 0.0, "generalising gold: M/d, then a ceiling"),
    TestbedCell("mixed_k2", 12, 2, 0.5, "learnable interactions"),
    TestbedCell("mixed_k3", 12, 3, 0.5, "half additive, half hard to learn"),
    TestbedCell("rough_k3", 12, 3, 1.0, "interactions only: the RM must see k-grams"),
    TestbedCell("rough_k4", 12, 4, 1.0, "rougher still: d >> M everywhere"),
    TestbedCell("short_k3", 6, 3, 1.0, "the candidate space 3e5 times smaller"),
    TestbedCell("pool", 5, 5, 1.0, "one value per candidate: the selection model embedded"),
)

_SETTINGS = {
    "full": {"cells": tuple(c.name for c in CELLS), "seeds": 6, "m_decades": (1, 5),
             "m_per_decade": 2, "n_k": 16, "betas": 24, "pool": 2**14, "bon_ns": 40,
             "noises": (0.5, 1.0, 2.0), "side_rms": ("weak", "additive"),
             "pg_noises": (1.0,), "pg_m": (10.0, 100.0, 1e3, 1e4, 1e5), "pg_steps": 150,
             "pg_batch": 32, "pg_betas": 6, "n_boot": 99},
    "quick": {"cells": ("additive", "rough_k3", "pool"), "seeds": 2, "m_decades": (1, 4),
              "m_per_decade": 1, "n_k": 12, "betas": 14, "pool": 2**12, "bon_ns": 24,
              "noises": (1.0,), "side_rms": (), "pg_noises": (1.0,), "pg_m": (10.0, 1e2, 1e3, 1e4),
              "pg_steps": 60, "pg_batch": 16, "pg_betas": 4, "n_boot": 39},
}


def settings(mode: str) -> dict:
    """The settings of ``mode`` (``"quick"`` or ``"full"``)."""
    from rlscale.theory._validation import check_choice

    return _SETTINGS[check_choice("mode", mode, MODES)]


def cell(name: str) -> TestbedCell:
    """The cell called ``name``."""
    for c in CELLS:
        if c.name == name:
            return c
    raise ValueError(f"cell must be one of {', '.join(c.name for c in CELLS)}; got {name!r}")


def testbed_grid(mode: str, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The ``M`` and ``K`` axes of cell ``name`` in ``mode``.

    Examples
    --------
    >>> m, k = testbed_grid("full", "pool")
    >>> m.tolist()[:3], m.size, round(float(k[0]), 2), round(float(k[-1]), 2), k.size
    ([10.0, 32.0, 100.0], 9, 0.05, 9.36, 16)
    """
    st = settings(mode)
    c = cell(name)
    lo, hi = st["m_decades"]
    d = st["m_per_decade"]
    ms = np.round(10.0 ** (lo + np.arange((hi - lo) * d + 1) / d))
    k_max = min(30.0, 0.9 * c.horizon * np.log(ACTIONS))
    return ms, np.geomspace(0.05, k_max, st["n_k"])


def rm_grid(mode: str, c: TestbedCell) -> list[tuple[str, float]]:
    """The (reward model, label noise) pairs run in cell ``c``."""
    st = settings(mode)
    out = [("bayes", s) for s in st["noises"]]
    for rm in st["side_rms"]:
        if rm == "additive" and not 0.0 < c.interaction_share < 1.0:
            continue  # the additive RM is the bayes RM (ν = 0) or sees nothing (ν = 1)
        out.append((rm, 1.0))
    return out
