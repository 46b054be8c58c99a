"""Helper processes end with the process that started them (issue 22).

A report runs its independent steps in a spawned side process, and a sweep its
runs in worker processes.  When the command's own process is killed
(``kill -9``, an out-of-memory kill) nothing of it runs afterwards: no
``finally``, no ``atexit``, no pool shutdown.  A helper left running would go on
writing into the report's staging directory while the rerun cleans and fills
it, and hold a core for minutes.  :func:`die_with_parent` makes a helper end
with its parent: on Linux the kernel sends it ``SIGKILL`` the moment the parent
dies (``prctl(PR_SET_PDEATHSIG)``); elsewhere a daemon thread polls the parent
pid twice a second and exits the process when it changes.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator

__all__ = ["children_ignore_interrupts", "die_with_parent", "quiet_teardown_after_interrupt"]

_PR_SET_PDEATHSIG = 1


_WATCHED: set[int] = set()


def die_with_parent(parent: int, *, kernel: bool = True) -> None:
    """End this process when process ``parent`` (the one that started it) ends.

    Call it first thing in the helper (a pool initializer, or each task: a second
    call for the same parent does nothing).  If the parent has already gone (it
    died before the helper got here), the helper exits now.  ``kernel=False``
    uses the watch thread only: ``PR_SET_PDEATHSIG`` fires when the *thread* that
    started the helper ends, which in a pool that starts workers from a helper
    thread (joblib's loky) is not the parent's death.
    """
    if parent in _WATCHED:
        return
    _WATCHED.add(parent)
    armed = False
    if kernel and sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    if os.getppid() != parent:  # the parent died before the kernel was told to watch
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch, args=(parent,), daemon=True,
                         name="rlscale-die-with-parent").start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


@contextlib.contextmanager
def children_ignore_interrupts() -> Iterator[None]:
    """Processes started inside the block ignore SIGINT (Ctrl-C); this one still takes it.

    Ctrl-C goes to the whole process group: a worker that got it printed its
    own ``KeyboardInterrupt`` traceback (dozens of lines) while the command
    stopped with one line.  An ignored signal stays ignored through fork and
    exec, and Python installs its ``KeyboardInterrupt`` handler only where the
    parent left SIGINT alone, so a child started while SIGINT is ignored here
    never sees it; the command handles Ctrl-C and stops its workers.  SIGINT is
    also *blocked* meanwhile (on Linux a blocked signal is kept pending even when
    ignored), so a Ctrl-C in the block is delivered when it ends, not lost.
    (Blocking alone is not enough: the child's mask is reset on its way in.)
    """
    if (not hasattr(signal, "pthread_sigmask")
            or threading.current_thread() is not threading.main_thread()):
        yield
        return
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


@contextlib.contextmanager
def quiet_teardown_after_interrupt(thread_name: str = "ExecutorManagerThread"
                                   ) -> Iterator[None]:
    """After a Ctrl-C inside the block, an exception in the pool thread ``thread_name`` is
    not printed.

    When joblib aborts a loky pool on ``KeyboardInterrupt`` the executor's
    manager thread can die with ``KeyError`` in ``add_call_item_to_queue`` (a
    race of the cancelled work items, cf. joblib/loky#663 and the same race in
    ``concurrent.futures``, python/cpython#125886): a thread traceback after
    "rlscale: interrupted" although nothing went wrong that the user could act
    on.  Only that thread, and only after a SIGINT, is silenced; main thread only.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    interrupted = threading.Event()
    previous_handler = signal.getsignal(signal.SIGINT)
    previous_hook = threading.excepthook

    def on_interrupt(signum, frame):
        interrupted.set()
        if callable(previous_handler):
            previous_handler(signum, frame)
        else:
            raise KeyboardInterrupt

    def hook(args):
        if interrupted.is_set() and args.thread is not None and \
                args.thread.name == thread_name:
            return
        previous_hook(args)

    if previous_handler is signal.SIG_IGN:  # Ctrl-C is off: nothing to do
        yield
        return
    signal.signal(signal.SIGINT, on_interrupt)
    threading.excepthook = hook
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous_handler)
        # The hook stays while the interrupt unwinds: the thread dies after this block.
        if not interrupted.is_set():
            threading.excepthook = previous_hook
