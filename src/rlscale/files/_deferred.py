"""Hold Ctrl-C and ``kill`` (SIGINT, SIGTERM) across a few renames (issue 22).

Publishing a report is a short sequence of renames (move the old report aside,
move the user's files across, move the new report in).  Between two of them the
output directory is a mixture: the old report moved aside, the new one not yet
in place.  A Ctrl-C there raised ``KeyboardInterrupt`` in the middle and the
command stopped with the directory mixed until the next run's recovery put it
right (measured: 1 of 10 landed SIGINTs of ``rlscale report --quick``).  Inside
:func:`deferred_signals` such a signal is recorded instead, and delivered to the
handler that was in place once the block has ended: the renames finish, then the
command is interrupted exactly as it would have been.  ``kill -9`` cannot be
held; the next run's recovery (``rlscale.files._staging``, rule 6) handles it.

Python runs signal handlers in the main thread only, whichever thread the
kernel delivered the signal to, so replacing the handler (not blocking the
signal in one thread, which a process-directed signal may bypass through
another thread) holds it wherever it arrives.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["DEFERRED_SIGNALS", "deferred_signals"]

#: The signals held: Ctrl-C and the polite ``kill``.
DEFERRED_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def deferred_signals(signums: tuple[signal.Signals, ...] = DEFERRED_SIGNALS
                     ) -> Iterator[list[int]]:
    """Inside the block, ``signums`` are recorded, not handled; at its end the previous
    handlers are restored and each recorded signal is raised again, once, in order.

    Yields the list of signals recorded so far (for tests and diagnostics).
    An ignored signal stays ignored (nothing is raised for it afterwards), and a
    handler installed from C (``signal.getsignal`` answers None) is left alone.
    Outside the main thread, where Python cannot set handlers, the block runs
    unprotected.

    Examples
    --------
    >>> import signal
    >>> seen = []
    >>> previous = signal.signal(signal.SIGTERM, lambda s, f: seen.append("handled"))
    >>> with deferred_signals() as pending:
    ...     signal.raise_signal(signal.SIGTERM)
    ...     seen.append("block done")
    >>> seen, pending
    (['block done', 'handled'], [15])
    >>> _ = signal.signal(signal.SIGTERM, previous)
    """
    pending: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield pending
        return

    def hold(signum: int, frame: object) -> None:
        if signum not in pending:
            pending.append(signum)

    previous: dict[int, object] = {}
    try:
        for signum in signums:
            handler = signal.getsignal(signum)
            if handler is None or handler is signal.SIG_IGN:
                continue
            previous[signum] = signal.signal(signum, hold)
        yield pending
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in pending:
            # Synchronous: the restored handler runs before the next statement, so a
            # SIGINT becomes the KeyboardInterrupt it would have been, raised here.
            signal.raise_signal(signum)
