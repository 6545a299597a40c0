"""``summary.csv`` keeps every status through ``pandas.read_csv`` with its default
options: ``n/a`` is spelt ``not applicable`` in the status columns
(qencode_nb.readout.summary_csv); the records keep ``n/a`` and the project's reader
gives it back."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from conftest import H2_JW_UCCSD
from qencode_nb.readout.collect import AUDIT_COLUMNS
from qencode_nb.readout.counts import TIER_COLUMNS, replay_counts, tier_counts
from qencode_nb.readout.summary_csv import (CSV_NOT_APPLICABLE, STATUS_COLUMNS, for_csv,
                                            read_summary, summary_text)

#: Every status a status column can hold, one row each (tier 1's four, the checks').
STATUSES = ["pass", "incomplete", "fail", "n/a", "unverified"]


def _table() -> pd.DataFrame:
    rows = []
    for status in STATUSES:
        row = dict.fromkeys(AUDIT_COLUMNS)
        row.update({c: status for c in STATUS_COLUMNS}, status="done", entry_id=f"e-{status}",
                   verdict="e: tiers: procedure pass, certification n/a, bit-identical n/a",
                   failure=None, error_mha=1.5)
        rows.append(row)
    failed = dict.fromkeys(AUDIT_COLUMNS)
    failed.update(status="failed", entry_id="e-failed", failure="DeadKernelError: died")
    return pd.DataFrame([*rows, failed], columns=list(AUDIT_COLUMNS))


def test_the_status_columns_are_the_audit_tables():
    assert set(TIER_COLUMNS) <= set(STATUS_COLUMNS) <= set(AUDIT_COLUMNS)


def test_pandas_defaults_keep_every_status(tmp_path):
    table = _table()
    path = tmp_path / "summary.csv"
    path.write_text(summary_text(table), encoding="utf-8")
    plain = pd.read_csv(path)                          # what any reader does
    for column in STATUS_COLUMNS:
        done = plain.loc[plain["status"] == "done", column]
        assert done.notna().all(), column
        assert list(done) == [CSV_NOT_APPLICABLE if s == "n/a" else s for s in STATUSES]
    assert plain.loc[plain["status"] == "failed", list(STATUS_COLUMNS)].isna().all(axis=None), \
        "a failed run has no status: an empty cell, missing as before"
    # the written text never holds a bare n/a cell (free text such as the verdict may)
    cells = pd.read_csv(path, dtype=str, keep_default_na=False)
    assert not (cells[list(STATUS_COLUMNS)] == "n/a").any(axis=None)
    assert (cells["verdict"] == table["verdict"].fillna("")).all()


def test_the_projects_reader_gives_the_records_names_back(tmp_path):
    table = _table()
    path = tmp_path / "summary.csv"
    path.write_text(summary_text(table), encoding="utf-8")
    back = read_summary(path)
    assert tier_counts(back) == tier_counts(table)
    assert replay_counts(back) == replay_counts(table) and replay_counts(back)["n/a"] == 1
    for column in STATUS_COLUMNS:
        assert list(back[column].iloc[:len(STATUSES)]) == STATUSES
    # a summary.csv written before the change (n/a as it is) reads the same
    old = tmp_path / "old.csv"
    old.write_text(table.to_csv(index=False), encoding="utf-8")
    assert tier_counts(read_summary(old)) == tier_counts(table)


def test_for_csv_changes_nothing_else():
    table = _table()
    spelt = for_csv(table)
    assert (table.fillna("-") == spelt.fillna("-")).drop(columns=list(STATUS_COLUMNS)).all(axis=None)
    assert (table["tier_certification"] == "n/a").sum() == 1   # the input is left as it is
    partial = pd.DataFrame({"status": ["done"], "replay_status": ["n/a"], "note": ["n/a"]})
    assert for_csv(partial).to_dict("records") == [
        {"status": "done", "replay_status": CSV_NOT_APPLICABLE, "note": "n/a"}]
    assert pd.read_csv(io.StringIO(summary_text(partial)))["replay_status"].tolist() == [
        CSV_NOT_APPLICABLE]


@pytest.mark.notebook
def test_a_real_sweeps_summary_keeps_its_tiers(tmp_path):
    """A replay sweep of H2 JW/UCCSD: tiers 2 and 3 read n/a (no re-run); pandas'
    defaults keep them, the project's reader names them as the records do."""
    from qencode_nb.batch.sweep import sweep

    table = sweep([str(H2_JW_UCCSD)], tmp_path / "runs", mode="replay", progress=False)
    assert list(table["tier_certification"]) == ["n/a"]
    plain = pd.read_csv(tmp_path / "runs" / "summary.csv")
    assert plain.loc[0, "tier_certification"] == plain.loc[0, "tier_bit_identical"] \
        == CSV_NOT_APPLICABLE
    assert plain[list(TIER_COLUMNS)].notna().all(axis=None)
    assert tier_counts(read_summary(tmp_path / "runs" / "summary.csv")) == tier_counts(table)
