"""The one default confidence level of rlscale's intervals.

Every interval a user acts on -- a fit's parameters (``fit_law``, ``rlscale fit``), a
plan's uncertainty (``plan_uncertainty``, ``recommend``, ``rlscale allocate``), the sweep
table (``rlscale sweep``) and the report -- is a central interval at :data:`CONFIDENCE`
unless asked otherwise, and every output states its level (issue 24: the sweep printed
95 % and the report 90 %).

Why 0.9: the decisions rest on bootstrap intervals of a few hundred resamples, whose
5 % tails are estimated from about ten resamples each (a 95 % interval's from about
five), and the η-interval calibration study (``python -m benchmarks.calibration_eta``)
was run and tuned at 0.9.  A test (``tests/test_first_hour.py``) checks that each public
default equals it.
"""

from __future__ import annotations

__all__ = ["CONFIDENCE"]

#: The default level of every interval rlscale reports.
CONFIDENCE = 0.9
