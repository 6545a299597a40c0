"""A summary table read back as counts: tiers, replays, boundary warnings, failures.

The CLI (``qencode-nb sweep``, ``qencode-nb study``), ``suite.ipynb`` and the report
(:func:`qencode_nb.readout.report.summary_counts`) read a sweep's summary table
(:func:`qencode_nb.readout.collect.audit_table`; its file ``summary.csv`` read back with
:func:`qencode_nb.readout.summary_csv.read_summary`, which names the statuses as the
records do) or a study table the same way here.  Pure pandas on the table: no run is
started.
"""

from __future__ import annotations

from pathlib import Path

#: The tier columns of ``summary.csv`` (:data:`qencode_nb.readout.collect.AUDIT_COLUMNS`).
TIER_COLUMNS = ("tier_procedure", "tier_certification", "tier_bit_identical")

#: The statuses a tier reads, in the order counts are printed: ``incomplete`` is
#: tier 1's (a field the schema cannot record, or one this mode does not exercise;
#: :mod:`qencode_nb.verdict.procedure`), ``n/a`` a tier that does not apply.
TIER_STATUSES = ("pass", "incomplete", "fail", "n/a")


def tier_counts(table) -> dict:
    """How many completed audits reached each tier status.

    Args:
        table: a sweep's summary table (:func:`qencode_nb.batch.sweep.sweep`, ``summary.csv``).

    Returns:
        ``{"procedure" | "certification" | "bit_identical": {status: count}}``
        over the rows whose ``status`` is "done" (failed runs have no tiers);
        a status (:data:`TIER_STATUSES`: "pass", "incomplete", "fail", "n/a")
        that no audit reached is absent, and
        the statuses come most frequent first.  Every tier is present, with
        ``{}`` when no audit completed.
    """
    done = table[table["status"] == "done"]
    return {col[len("tier_"):]: {str(k): int(v) for k, v in done[col].value_counts().items()}
            for col in TIER_COLUMNS}


def replay_counts(table) -> dict:
    """``{status: count}`` of the completed audits' replays ("pass", "fail", "n/a"),
    most frequent first; ``{}`` when no audit completed or none recorded a replay."""
    done = table[table["status"] == "done"]
    if "replay_status" not in done.columns:
        return {}
    return {str(k): int(v) for k, v in done["replay_status"].value_counts().items()}


def boundary_warnings(table) -> dict:
    """``{run name: warning}`` of the completed audits whose Hamiltonian stage warned
    that the active space splits near-degenerate orbitals (``active_space_warning``,
    :func:`qencode_nb.hamiltonian.orbitals.boundary_check`), in table order."""
    if "active_space_warning" not in table.columns:
        return {}
    return {Path(n).stem: w for n, w, s in zip(table["notebook"], table["active_space_warning"],
                                               table["status"])
            if s == "done" and isinstance(w, str) and w}


#: The ``status`` of a summary row whose entry no run has audited yet: another shard's
#: entry of a sharded sweep (:mod:`qencode_nb.batch.folder_rows`); not a failure.
WAITING = "waiting"


def failures(table) -> dict:
    """``{run name: failure}`` of the rows whose ``status`` is neither "done" nor
    :data:`WAITING`, in table order (a sweep's summary table or a study table: both have
    ``notebook``, ``status`` and ``failure``; the run name is the notebook's file stem)."""
    return {Path(n).stem: f for n, f, s in zip(table["notebook"], table["failure"],
                                               table["status"]) if s not in ("done", WAITING)}
