"""``summary.csv`` (a sweep's table) and ``report.csv`` (a report's) as files: the
status ``n/a`` spelt so that every CSV reader keeps it.

The records say ``n/a`` where a tier or a check does not apply (a tier without a
re-run, replay of an entry that stores no parameters).  ``pandas.read_csv`` reads
``n/a`` (like ``NA`` and ``N/A``) as a missing value by default, so a reader outside the
project would lose the status.  The CSV files therefore spell it
:data:`CSV_NOT_APPLICABLE` (``not applicable``) in the :data:`STATUS_COLUMNS`; no CSV
reader's default treats those words as missing.  The records, the card, the report page
and the counts keep ``n/a``; :func:`read_summary` reads either spelling back as ``n/a``.
"""

from __future__ import annotations

#: The status as the records name it (:mod:`qencode_nb.verdict.tiers`, the checks).
RECORD_NOT_APPLICABLE = "n/a"
#: The same status as the CSV files spell it (kept by ``pandas.read_csv``'s defaults).
CSV_NOT_APPLICABLE = "not applicable"
#: The columns of :data:`qencode_nb.readout.collect.AUDIT_COLUMNS` holding a record's
#: status (``pass``, ``incomplete``, ``fail``, ``n/a``, ...): the three tiers and the checks.
STATUS_COLUMNS = ("tier_procedure", "tier_certification", "tier_bit_identical", "integrity",
                  "replay_status", "hamiltonian_status")


def _respelt(table, old: str, new: str):
    """``table`` with ``old`` replaced by ``new`` in the :data:`STATUS_COLUMNS` it has."""
    out = table.copy()
    for column in STATUS_COLUMNS:
        if column in out:
            out[column] = out[column].where(out[column] != old, new)
    return out


def for_csv(table):
    """``table`` as the CSV files spell it: ``n/a`` in a status column is
    :data:`CSV_NOT_APPLICABLE`; every other cell as it is."""
    return _respelt(table, RECORD_NOT_APPLICABLE, CSV_NOT_APPLICABLE)


def as_recorded(table):
    """``table`` read from a CSV file with the statuses named as the records name them
    (:data:`CSV_NOT_APPLICABLE` back to ``n/a``; a file written before the change already
    says ``n/a``)."""
    return _respelt(table, CSV_NOT_APPLICABLE, RECORD_NOT_APPLICABLE)


def summary_text(table) -> str:
    """The text of ``summary.csv`` for ``table`` (:func:`for_csv`, no index)."""
    return for_csv(table).to_csv(index=False)


def read_summary(path, **read_csv):
    """A ``summary.csv`` as a DataFrame, statuses as the records name them
    (:func:`as_recorded`).  Only an empty cell is missing (``keep_default_na=False,
    na_values=[""]``: a file of an older version, which wrote ``n/a``, reads the same);
    ``read_csv`` overrides those keywords (e.g. ``dtype=str``).

    Raises:
        OSError: the file cannot be read.
        ValueError: it is not CSV (pandas' ``ParserError``, ``EmptyDataError``).
    """
    import pandas as pd

    options = {"keep_default_na": False, "na_values": [""], **read_csv}
    return as_recorded(pd.read_csv(path, **options))
