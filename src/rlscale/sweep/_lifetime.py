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

__all__ = ["die_with_parent"]

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
