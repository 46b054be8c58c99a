"""``rlscale fit --law sigmoid | gao_bon | gao_rl``: the named RL laws on a CSV.

``sigmoid``: the first ``--axes`` column is compute (e.g. ``env_steps`` of
``rlscale train --curve``), ``--target`` the held-out success.  Prints the
fit on the whole curve and the extrapolation audit: the sigmoid and a bounded
power law fitted on the first ``1 − holdout`` of the compute range, both
predicting the held-out tail (:func:`rlscale.optimize.sigmoid_audit`).

``gao_bon`` / ``gao_rl``: the first ``--axes`` column is KL, ``--target`` the
gold score; prints (α, β), the peak KL and gain, with bootstrap intervals
(:func:`rlscale.optimize.fit_gao`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlscale.optimize._fit_registry import FrontEnd

def run(args: argparse.Namespace, front: FrontEnd, axes: list[str],
        columns: dict[str, list[float]]) -> int:
    """Fit ``front`` (a curve front end of the registry) and, where it has one, its audit."""
    import numpy as np

    from rlscale.files._atomic import to_jsonable, write_json_atomic
    from rlscale.optimize import fit_law

    if len(axes) != 1:
        raise ValueError(f"--law {front.name} takes one --axes column (compute or KL); "
                         f"got {axes}")
    x = np.asarray(columns[axes[0]], dtype=float)
    y = np.asarray(columns[args.target], dtype=float)
    payload: dict[str, Any] = {"data": args.csv, "law": front.name, "x": axes[0],
                               "target": args.target}
    if front.audit is not None and not 0.0 < args.holdout < 1.0:
        raise ValueError(f"--holdout must be in (0, 1) for the {front.name} audit; "
                         f"got {args.holdout!r}")
    fit = fit_law(columns, front.name, axes, args.target, bootstrap=args.bootstrap,
                  confidence=args.confidence, seed=args.seed)
    payload.update(fit=fit)
    if front.audit is not None:
        payload.update(audit=front.function("audit")(
            x, y, fit_fraction=1.0 - args.holdout, bootstrap=args.bootstrap,
            confidence=args.confidence, rng=args.seed))
    if not fit.success:
        print(f"warning [{fit.status}] {fit.message}", file=sys.stderr)
    json.dump(to_jsonable(payload), sys.stdout, indent=2, allow_nan=False)
    sys.stdout.write("\n")
    if args.out:
        write_json_atomic(args.out, payload)
    if args.figure:
        _figure(args.figure, front, x, y, payload)
        print(f"wrote {args.figure}", file=sys.stderr)
    return 0


def _figure(path: str, front: FrontEnd, x: Any, y: Any, payload: dict[str, Any]) -> None:
    """Data, the fitted law; for the sigmoid also the power law and the held-out tail."""
    import io

    import numpy as np

    from rlscale._optional import require
    from rlscale.files._atomic import write_bytes_atomic

    require("matplotlib", extra="plot", purpose="fit figures")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    grid = np.linspace(x.min(), x.max() * 1.05, 300)
    if "audit" in payload:  # the sigmoid: the fitted head, the held-out tail, both laws
        audit = payload["audit"]
        head = x <= audit.split
        ax.plot(x[head], y[head], "o", color="C0", ms=4, label="fitted points")
        ax.plot(x[~head], y[~head], "o", mfc="none", color="C3", ms=5, label="held-out tail")
        grid = grid[grid > 0]
        law_fit = audit.sigmoid.law
        ax.plot(grid, law_fit(grid), "-", color="C0",
                label=f"sigmoid (A = {law_fit.asymptote:.3f})")
        ax.plot(grid, audit.power_law.predict(grid), "--", color="C2",
                label=f"power law (A = {audit.power_law.asymptote:.3f})")
        ax.axvline(audit.split, color="0.6", lw=0.8)
        ax.set_xlabel("compute")
        ax.set_ylabel("held-out success")
        ax.set_title(f"extrapolation audit: tail RMSE sigmoid {audit.sigmoid_tail_rmse:.4f}, "
                     f"power law {audit.power_law_tail_rmse:.4f}", fontsize=8)
    else:  # a Gao form: the data and the fitted curve
        fit = payload["fit"]
        grid = np.linspace(0.0, max(x.max(), fit.peak.kl if fit.peak else 0.0) * 1.1, 300)
        fn = front.function("curve")
        ax.plot(x, y, "o", ms=4, label="data")
        ax.plot(grid, fn(grid, fit.alpha, fit.beta), "-", label=f"{front.name} fit")
        if fit.peak is not None:
            ax.axvline(fit.peak.kl, color="0.6", lw=0.8, label=f"peak KL {fit.peak.kl:.3g}")
        ax.set_xlabel("KL")
        ax.set_ylabel("gold score")
    ax.legend(fontsize=7)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    write_bytes_atomic(path, buf.getvalue())
