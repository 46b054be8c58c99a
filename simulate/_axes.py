"""The data axes of agentic RL, as the trainer, sweeps and the CLI read them.

Re-exported unchanged from :mod:`rlscale.theory._axes`, where rlscale names the axes
once (canonical names, ``TrainConfig`` fields, symbols, flags, minima); it lives in
``theory`` so that the report and ``optimize`` read the same table (issue 25).
"""

from __future__ import annotations

from rlscale.theory._axes import AXES, CONTEXT, NAMES, SWEEP_AXES, SYMBOLS, Axis, axis

__all__ = ["AXES", "CONTEXT", "NAMES", "SWEEP_AXES", "SYMBOLS", "Axis", "axis"]
