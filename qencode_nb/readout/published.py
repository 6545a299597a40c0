"""A run table as a published file writes it: no absolute path of the machine.

A sweep's ``summary.csv``, a record sweep's ``summary.csv``, ``releases.csv`` and
``environments.csv`` sit in the folder they describe and are published with it (issue
36, item 4).  :func:`published_table` gives a table as such a file shows it: the
``notebook`` column relative to the file's folder (``H2.ipynb``, ``v4/H2.ipynb``), every
other path in a cell shortened to a folder the reader can place
(:func:`qencode_nb.paths.scrub`: ``…/db/cut.json``).  The column names stay as they are
(tools outside the project read them); only the values change.  :func:`published_csv` is
its CSV text.
"""

from __future__ import annotations

from pathlib import Path

#: The column of a run table that names each run's executed notebook.
NOTEBOOK_COLUMN = "notebook"


def published_table(table, folder, entry_sources=()):
    """``table`` as a file in ``folder`` shows it (a copy; ``table`` is left as it is).

    Args:
        table: a run table (:func:`qencode_nb.readout.collect.audit_table`, a record
            sweep's table, per-release counts).
        folder: the folder the file is written in.
        entry_sources: the entry files the runs read (their folders read ``…/<name>``).
    """
    from qencode_nb.paths import known_folders, scrub_value, shown_path

    folders = known_folders(folder, entry_sources)
    shown = table.copy()
    for column in shown.columns:   # text columns only: numbers keep their dtype
        if shown[column].dtype == object:
            shown[column] = shown[column].map(lambda v: scrub_value(v, folders))
    if NOTEBOOK_COLUMN in table.columns:
        shown[NOTEBOOK_COLUMN] = [shown_path(p, folder, folders)
                                  if isinstance(p, (str, Path)) else p
                                  for p in table[NOTEBOOK_COLUMN]]
    return shown


def published_csv(table, folder, entry_sources=()) -> str:
    """The CSV text of :func:`published_table` (no index), as ``summary.csv`` holds it:
    the status ``n/a`` spelt ``not applicable`` in the status columns
    (:func:`qencode_nb.readout.summary_csv.for_csv`)."""
    from qencode_nb.readout.summary_csv import for_csv

    return for_csv(published_table(table, folder, entry_sources)).to_csv(index=False)
