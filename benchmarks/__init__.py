"""rlscale's benchmarks: ``python -m benchmarks [NAME ...] [--smoke]``.

Each ``bench_<name>.py`` module defines ``cases(smoke: bool) -> list[Case]``
(see :mod:`benchmarks._harness`).  Timings are never asserted; CI runs the
suite in ``--smoke`` mode only to keep the scripts working.
"""
