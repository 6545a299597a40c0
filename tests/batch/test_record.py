"""A benchmark's whole record as sweep targets (qencode_nb.batch.record) and its counts per
release (qencode_nb.readout.record_counts), on QEncode's real record in ../shared."""

from __future__ import annotations

import shutil

import pytest

from conftest import ROOT, SHARED_DB
from qencode_nb.batch.record import discover, is_record_folder
from qencode_nb.readout.record_counts import certification_held, refusal

HISTORY = ROOT.parent / "shared" / "qencode-history"


def test_the_history_folder_is_discovered_release_by_release():
    """QEncode's record at a46b4ec (its NOTICE.md): v1 10 entries, v2 12 + 4 trusted, v3 36,
    v3.1 42, four v4 curves; the v4 database beside it is one more group, labelled by its
    entries' schema_version 4.0.0."""
    record = discover([HISTORY, SHARED_DB])
    assert [(g.label, len(g.targets)) for g in record.groups] == [
        ("v1", 10), ("v2", 12), ("v2/trusted", 4), ("v3", 36), ("v3.1", 42), ("v4", 40)]
    assert [g.slug for g in record.groups][2] == "v2-trusted"
    assert sorted(p.name for p in record.curves) == [
        "h2_dissociation.json", "h4_dissociation.json", "hf_dissociation.json",
        "lih_dissociation.json"]
    assert record.is_record and record.record_roots == [HISTORY.resolve()]
    # v1 and v2 hold entries of the same id: each group has its own sub-folder
    assert {p.split("/")[-1] for p in record.groups[0].targets} & {
        p.split("/")[-1] for p in record.groups[1].targets}


def test_a_plain_database_folder_is_not_a_record(tmp_path):
    record = discover([SHARED_DB])
    assert not record.is_record and [g.label for g in record.groups] == ["v4"]
    assert not is_record_folder(SHARED_DB)
    # a repeated label is told apart by its folder
    copy = tmp_path / "copy" / "db"
    copy.mkdir(parents=True)
    shutil.copy(next(SHARED_DB.glob("H2_*.json")), copy)
    labels = [g.label for g in discover([SHARED_DB, copy]).groups]
    assert labels == ["v4", "v4 (copy/db)"]


def test_refusal_is_only_a_failure_of_reading_the_entry():
    why = ("load: EntryError: /x/y/a.json: field schema_version: '9.9.9' is not accepted; "
           "accepted: '4.0.0'")
    assert refusal(why) == "field schema_version: '9.9.9' is not accepted; accepted: '4.0.0'"
    assert refusal("rerun: ValueError: boom") is None
    assert refusal(None) is None


@pytest.mark.parametrize("row, held", [
    ({"published_certified": True, "tier_certification": "pass", "certified": True}, True),
    ({"published_certified": True, "tier_certification": "fail", "certified": False}, False),
    ({"published_certified": True, "tier_certification": "n/a", "replay_status": "pass"}, True),
    ({"published_certified": True, "tier_certification": "n/a", "replay_status": "fail"}, False),
    ({"published_certified": True, "tier_certification": "n/a", "replay_status": "n/a"}, None),
    ({"published_certified": False, "tier_certification": "pass", "certified": True}, None),
])
def test_certification_held_reads_the_rerun_else_the_replay(row, held):
    assert certification_held(row) is held
