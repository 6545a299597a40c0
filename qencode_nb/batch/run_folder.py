"""A sweep's output folder: checked writable before any run, a lock per run, a lock
over the folder's summary files, atomic writes.

- :func:`writable_folder`: the folder is created and a file written in it before
  anything runs; a folder that cannot be (a path under a regular file, no write
  permission, a read-only file system) is refused with
  :class:`OutputFolderError` naming it, never a traceback after the runs.
- :func:`run_lock`: ``<name>.lock`` beside the run's notebook, an advisory
  ``fcntl.flock`` held for as long as the run goes on (the OS releases it when its
  holder dies, so a killed sweep leaves no stale lock; the file says who holds
  it: pid, host, since).  Two sweeps started on one folder at once: the second
  to reach a run **waits** for the first to finish it, then finds it done with
  the same inputs and skips it (with other inputs, or when the first one's run
  failed, it runs it after: as when the two sweeps run one after the other).
  Waiting, not skipping, so that both sweeps end with every row of the folder
  complete; no run is executed twice at once, so no notebook has two writers.
- :func:`folder_lock`: ``.sweep.lock``, held while a sweep writes ``summary.csv``
  (atomically, :func:`write_text_atomic`), the margin plot and the crate, so two
  sweeps never interleave those files.
- :func:`write_plot`, :func:`write_crate`: the margin plot and the crate, by-products
  that warn (and leave no partial or earlier file) when they cannot be written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from qencode_nb.atomic import write_atomic
from qencode_nb.file_lock import exclusive as _flock
from qencode_nb.errors import OutputFolderError


def _why(folder: Path, exc: OSError) -> str:
    for parent in (folder, *folder.parents):
        if parent.exists():
            if not parent.is_dir():
                return f"{parent} is a file, not a folder"
            break
    return exc.strerror or str(exc)


def writable_folder(path) -> Path:
    """Create ``path`` (with its parents) and prove it can be written: a probe file
    is created and removed.  Returns it as a Path.

    Raises:
        OutputFolderError: it cannot be created or written; names the folder and
            why (e.g. "... is a file, not a folder", "Permission denied").
    """
    import tempfile

    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".qencode-nb-write-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputFolderError(f"output folder {folder} cannot be written: "
                                f"{_why(folder, exc)}; choose another --out") from None
    return folder


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and
    ``os.replace``: a reader sees the old file or the new one, never a part."""
    write_atomic(Path(path), text.encode())


def run_lock(folder, name: str):
    """The lock of run ``name`` in ``folder`` (``<name>.lock``), a context manager
    yielding None (it was free) or who held it while this process waited."""
    return _flock(Path(folder) / f"{name}.lock")


def folder_lock(folder):
    """The lock over a folder's summary files (``.sweep.lock``), as :func:`run_lock`."""
    return _flock(Path(folder) / ".sweep.lock")


def lock_holder(folder, name: str) -> dict | None:
    """``{"pid", "host", "since"}`` of the process holding run ``name``'s lock now,
    or None (free, or no lock file)."""
    try:
        return json.loads((Path(folder) / f"{name}.lock").read_text()) or None
    except (OSError, ValueError):
        return None


def write_plot(out: Path, table) -> None:
    """The margin plot (:func:`qencode_nb.readout.plots.margin_plot`), a by-product: when
    it cannot be written (a full disk) the sweep's results stand, the files written in
    part are removed and a warning says why."""
    import warnings

    from qencode_nb.figstyle import figure_paths
    from qencode_nb.readout.plots import margin_plot

    try:
        margin_plot(table, out / "margins")
    except OSError as exc:
        for path in figure_paths(out / "margins"):
            Path(path).unlink(missing_ok=True)
        warnings.warn(f"{out}: no margin plot written: {type(exc).__name__}: {exc}",
                      stacklevel=3)


def write_crate(out: Path, notebooks: list) -> None:
    """The folder's provenance crate (:func:`qencode_nb.trust.crate.write_crate`), a
    by-product: when it cannot be written the sweep's results stand and a warning
    says why."""
    import warnings

    try:
        from qencode_nb.trust.crate import write_crate

        write_crate(out, [p for p in notebooks if p.is_file()], summary=out / "summary.csv")
    except Exception as exc:   # noqa: BLE001 - never lose a finished sweep to its crate
        (out / "ro-crate-metadata.json").unlink(missing_ok=True)   # never an earlier run's
        warnings.warn(f"{out}: no ro-crate-metadata.json written: {type(exc).__name__}: {exc}",
                      stacklevel=3)
