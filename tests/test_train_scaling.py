"""Scientific checks on the default sweep (slow: about a minute on one core)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlscale.simulate import iqm_ci
from rlscale.sweep._run import load_spec, run_sweep

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_each_axis_matters_over_a_decade_on_the_default_sweep(tmp_path):
    spec = load_spec(REPO / "examples" / "sweep.toml")
    rows = run_sweep(spec, tmp_path / "results.csv", jobs=2, progress=False)
    base = spec.base
    for axis, values in spec.axes.items():
        lo, hi = min(values), max(values)
        top = min(v for v in values if v >= 10 * lo)  # one decade above the smallest
        assert hi >= top

        def scores(v, axis=axis):
            point = {**base, axis: v}
            return [r["success"] for r in rows
                    if all(r[a] == point[a] for a in point)]

        small, large = iqm_ci(scores(lo), rng=0), iqm_ci(scores(top), rng=0)
        assert large.low > small.high, (axis, lo, small, top, large)
    # Training helps on held-out environments except, at times, with a single environment
    # (one seed of E = 1 ends a little below the untrained policy: it overfits one layout).
    assert all(r["success"] > r["untrained_success"] for r in rows if r["environments"] >= 2)
    assert np.mean([r["success"] for r in rows]) > rows[0]["untrained_success"] + 0.1
