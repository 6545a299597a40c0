"""An exclusive lock held on a file (``flock``), recording who holds it.

:func:`exclusive` is the one lock of the toolkit: a sweep's per-run and folder locks
(:mod:`qencode_nb.batch.run_folder`) and the stack store's build lock
(:mod:`qencode_nb.environment.build`).  The file holds ``{"pid", "host", "since"}`` of
the holder while it is held, and nothing after.
"""

from __future__ import annotations

import json
import os
import socket
import time
from contextlib import contextmanager
from pathlib import Path


def _holder(handle) -> str:
    handle.seek(0)
    text = handle.read().strip()
    try:
        doc = json.loads(text)
        return f"pid {doc['pid']} on {doc['host']} since {doc['since']}"
    except (ValueError, KeyError, TypeError):
        return "another process"


@contextmanager
def exclusive(path: Path):
    """Hold an exclusive ``flock`` on ``path``; yields the holder that was waited
    for ("pid N on HOST since T"), or None when the lock was free."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        waited = None
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            waited = _holder(handle)
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                 "since": time.strftime("%Y-%m-%dT%H:%M:%S%z")}))
        handle.flush()
        try:
            yield waited
        finally:
            handle.seek(0)
            handle.truncate()
            handle.flush()
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


