"""Files a user may open: written atomically, published by rename.

``_atomic``
    Write bytes, text or JSON to a temporary file beside the destination, flush,
    fsync and rename, so a reader never sees a half-written file.
``_staging``
    Assemble an output directory (a report) in a hidden staging directory beside
    its destination and publish it by rename, never deleting what rlscale did not
    write.
``_deferred``
    Hold SIGINT and SIGTERM across a few renames and deliver them afterwards, so
    an interrupted publish leaves the previous output or the new one, never both.
"""

from __future__ import annotations
