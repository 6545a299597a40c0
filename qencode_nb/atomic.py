"""Atomic file writes: a reader sees the old file or the new one, never a part.

:func:`write_atomic` writes to a temporary file in the target's own folder
(``.tmp-<stem>-*.json``), flushes and fsyncs it, then moves it into place with
``os.replace`` (atomic on POSIX within one file system).  Concurrent writers of one
path leave one complete file (the last to replace it); a failed write leaves the
old file as it was and no temporary file behind.  Users: the rebuild cache
(:mod:`qencode_nb.hamiltonian.cache`), re-run checkpoints
(:mod:`qencode_nb.rerun.checkpoint`) and a sweep's ``summary.csv``
(:mod:`qencode_nb.batch.run_folder`).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same folder, fsync,
    ``os.replace``), creating the folder.

    Raises:
        OSError: the folder cannot be created or written, or the disk is full; the
            old file (if any) is left as it was and the temporary file removed.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".tmp-{path.stem[:16]}-",
                               suffix=".json")
    try:
        # mkstemp makes the file private (0600); the file takes the mode a plain
        # open() would give it (0666 less the umask), so a published folder's
        # summary.csv is as readable as its notebooks (issue 36).
        os.chmod(tmp, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    """This process's umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
