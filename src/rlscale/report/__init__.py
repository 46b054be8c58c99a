"""``rlscale report``: the whole toolkit, end to end, on built-in defaults.

The report chains the same public functions the individual verbs use — it
adds no modelling of its own:

1. the reward-optimisation law: :func:`rlscale.verification._gaussian_reward_law.verify_reward_law`
   (``rlscale verify reward-law``) — verified band, held-out R², the gain
   surface over ``(M, K)``;
2. a trainer sweep along environments, tasks and trajectories:
   :func:`rlscale.sweep._run.run_sweep` (``rlscale sweep``);
3. per-axis laws fitted to that sweep with bootstrap intervals:
   :func:`rlscale.optimize.fit_law` (``rlscale fit``), and the impact
   ordering by elasticity at the sweep's centre;
4. the compute-optimal allocation for a budget and unit costs —
   :func:`rlscale.optimize.allocate` on the nested variables ``E, t, k``
   (``rlscale allocate``) — and, with real environments scarce, with and
   without a priced synthetic-environment generator; the critical
   synthetic-to-real ratio and the quality-filter threshold
   (:mod:`rlscale.theory` synthetic-data functions);
5. efficiency against scaling trajectories alone: the *predicted* η of
   :func:`rlscale.optimize.efficiency`, and the *realised* η — the solver's
   allocation and the trajectories-only allocation trained at equal cost
   with :func:`rlscale.simulate.train`, compared on held-out success;
6. the machine-checked proofs: :func:`rlscale.proofs.check_proofs`.

Configuration: :mod:`rlscale.report._config` (``examples/report.toml`` is the
commented schema; every value is checked before any work starts).

Output directory (``--out``, default ``rlscale-report/``): ``index.md``,
a self-contained ``index.html``, ``results.json`` (every number),
``config.toml`` (the configuration used), the training runs
(``sweep.csv``, ``efficiency-baseline.csv``, ``efficiency-optimal.csv``, in
the spec's order) and the PNG figures.  The report is assembled in a
temporary sibling directory and moved into place at the end, so a reader
never sees half a report; an existing directory is replaced only if it
holds an rlscale report (marker file ``.rlscale-report``, which lists the
files the report wrote).  Nothing the report did not write is ever deleted:
files a user added to an old report are moved into the new one, a staging
directory ``.NAME.partial`` that rlscale did not create is refused, and the
destination is checked again at the moment of publishing (the rules are in
:mod:`rlscale.files._staging`).  The staging directory of an interrupted run is
resumed: its finished training runs are kept, the rest of its outputs are
rewritten.

Modules
-------
``_config``    defaults, ``--quick`` overrides, loading and validation
``_config_tree`` the checked configuration as a frozen tree (what the steps read)
``_outcomes``  each step's frozen outcome, a step's ``Inputs``, the report's state
``_typed``     typed mirrors of plain data: build (strict) and plain (results.json)
``_steps``     the steps, each ``step(cfg, inputs) -> outcome``, a thin call into the library
``_figures``   the PNG figures (drawing only)
``_document``  the Markdown/HTML document, one renderer per section of the state
``_run``       :func:`run_report`: staging, the steps in order, publishing
"""

from __future__ import annotations

from rlscale.report._config import DEFAULTS, QUICK, load_config
from rlscale.report._run import ReportResult, run_report

__all__ = ["DEFAULTS", "QUICK", "ReportResult", "load_config", "run_report"]
