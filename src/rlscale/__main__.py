"""The ``rlscale`` command: the console script's entry point and ``python -m rlscale``.

The script pip writes for ``rlscale`` runs ``from rlscale.__main__ import main``
then ``sys.exit(main())``.  :func:`main` imports the CLI itself, inside its
KeyboardInterrupt guard, with SIGINT held until the imports are done:
building the parser imports every verb and, through them, numpy (~0.3 s), and
a Ctrl-C in that time printed a screen of importlib traceback (issue 22: 32
of 40 SIGINTs of ``rlscale --help``).  What runs before the guard is this
module and ``rlscale/__init__`` (no third-party import, ~3 ms); before those,
the interpreter's own start-up (``site``, and an editable install's path
finder, 15-60 ms), which prints Python's traceback for a Ctrl-C as it does for
every Python program.
"""

import sys


def main() -> int:
    """Run ``rlscale`` with ``sys.argv``; return the exit status (130 after Ctrl-C)."""
    try:
        import signal

        from rlscale.files._deferred import deferred_signals

        # Held, not raised, while the CLI's module loads: a KeyboardInterrupt inside an
        # import can surface as another error or be swallowed (rlscale.cli._noting_ctrl_c).
        with deferred_signals((signal.SIGINT,)):
            from rlscale.cli import main as cli_main
        status = cli_main()
        _stop_worker_pool()
        return status
    except KeyboardInterrupt:
        # rlscale.cli.main turns a Ctrl-C into the same line once it runs; this catches one
        # that lands while its module loads, or on the way in and out of it.
        sys.stderr.write("rlscale: interrupted\n")
        return 130


def _stop_worker_pool() -> None:
    """Stop joblib's reusable loky pool (``rlscale sweep --jobs N``) before returning.

    Left to the interpreter's exit, loky's exit hook joins the pool's manager thread
    (~1-4 s at load), after the guard: a Ctrl-C then printed "Exception ignored in:
    <module 'threading'>" and a traceback, exit 0 (6 of 6 SIGINTs 0-0.8 s after a
    2-worker sweep's table; issue 22).  Here, a Ctrl-C during the shutdown is the one
    line of :func:`main`.  loky keeps its pool in a private global; if that changes,
    nothing is done here and the exit hook stops the pool as before.
    """
    loky = sys.modules.get("joblib.externals.loky.reusable_executor")
    executor = getattr(loky, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=True)


if __name__ == "__main__":
    raise SystemExit(main())
