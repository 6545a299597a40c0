"""A benchmark's whole record as sweep targets (qencode_nb.batch.history) and its counts per
release (qencode_nb.readout.history_counts), on QEncode's real record in ../shared."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import SHARED_DB, SHARED_HISTORY as HISTORY
from qencode_nb.batch.history import discover, is_history_folder
from qencode_nb.readout.history_counts import certification_held, refusal


def test_the_history_folder_is_discovered_release_by_release():
    """QEncode's record at a46b4ec (its NOTICE.md): v1 9 entries, v2 9 + 3 trusted, v3 36,
    v3.1 42, four v4 curves; the v4 database beside it is one more group, labelled by its
    entries' schema_version 4.0.0.  The releases' index, manifest and hash lists (JSON
    without schema_version) are listed, not audited."""
    record = discover([HISTORY, SHARED_DB])
    assert [(g.label, len(g.targets)) for g in record.groups] == [
        ("v1", 9), ("v2", 9), ("v2/trusted", 3), ("v3", 36), ("v3.1", 42), ("v4", 40)]
    assert [g.not_entries for g in record.groups[:3]] == [
        ["index.json"], ["entry_content_hashes.json", "index.json", "manifest.json"],
        ["trusted_index.json"]]
    assert not any(g.not_entries for g in record.groups[3:])
    assert [g.slug for g in record.groups][2] == "v2-trusted"
    assert sorted(p.name for p in record.curves) == [
        "h2_dissociation.json", "h4_dissociation.json", "hf_dissociation.json",
        "lih_dissociation.json"]
    assert record.is_history and record.record_roots == [HISTORY.resolve()]
    # v1 and v2 hold entries of the same id: each group has its own sub-folder
    assert {p.split("/")[-1] for p in record.groups[0].targets} & {
        p.split("/")[-1] for p in record.groups[1].targets}


def test_a_plain_database_folder_is_not_a_record(tmp_path):
    record = discover([SHARED_DB])
    assert not record.is_history and [g.label for g in record.groups] == ["v4"]
    assert not is_history_folder(SHARED_DB)
    # a repeated label is told apart by its folder
    copy = tmp_path / "copy" / "db"
    copy.mkdir(parents=True)
    shutil.copy(next(SHARED_DB.glob("H2_*.json")), copy)
    groups = discover([SHARED_DB, copy, SHARED_DB]).groups    # a folder given twice: once
    assert [(g.label, g.slug) for g in groups] == [("v4", "v4"), ("v4 (copy/db)", "v4--copy-db-")]


def test_two_records_with_the_same_releases_keep_their_groups_apart(tmp_path):
    """Two record folders holding the same releases: each group labelled by its record
    folder's name, no two sharing a sub-folder; the same record given twice is swept once."""
    roots = []
    for name in ("base", "base2"):
        db = tmp_path / name / "releases" / "v1" / "db"
        db.mkdir(parents=True)
        shutil.copy(next((HISTORY / "releases" / "v1" / "db").glob("H2_*.json")), db)
        shutil.copy(HISTORY / "releases" / "v1" / "db" / "index.json", db)
        roots.append(tmp_path / name)
    record = discover([roots[0], roots[1], roots[0]])
    assert [(g.label, g.slug, len(g.targets)) for g in record.groups] == [
        ("v1", "v1", 1), ("v1 (base2)", "v1--base2-", 1)]
    assert record.record_roots == [r.resolve() for r in roots]


def test_release_metadata_is_no_entry_in_a_plain_folder_too(tmp_path, capsys):
    """A release's db or trusted folder given alone (not through its record folder): its
    index, manifest and hash lists are listed, not audited (issue 36, item 5)."""
    from qencode_nb.batch.sweep import resolve_targets
    from qencode_nb.cli import main
    from qencode_nb.commands.sweep import print_not_entries
    from qencode_nb.entry.release_files import RELEASE_METADATA, folder_entries

    v2, trusted = HISTORY / "releases" / "v2" / "db", HISTORY / "releases" / "v2" / "trusted"
    record = discover([v2, trusted])
    assert not record.is_history
    assert [(len(g.targets), g.not_entries) for g in record.groups] == [
        (9, ["entry_content_hashes.json", "index.json", "manifest.json"]),
        (3, ["trusted_index.json"])]
    assert not any(Path(t).name in RELEASE_METADATA for g in record.groups for t in g.targets)
    assert len(resolve_targets([v2])) == 9 and len(resolve_targets([SHARED_DB])) == 40
    print_not_entries(record)
    assert ("not entries in v2 (QEncode release metadata, not audited): "
            "entry_content_hashes.json (the release's list of entry content hashes), index.json "
            "(the release's index of its entries), manifest.json (the release's manifest (file "
            "sizes and hashes))") in capsys.readouterr().out
    # a folder holding only release metadata: refused before any run, naming what it holds
    only = tmp_path / "db"
    only.mkdir()
    shutil.copy(HISTORY / "releases" / "v1" / "db" / "index.json", only)
    assert main(["sweep", str(only), "--mode", "replay", "--out", str(tmp_path / "runs")]) == 2
    assert (f"field targets: folder {str(only)!r} holds no .json entry (only QEncode release "
            "metadata, not entries: index.json (the release's index of its entries))"
            ) in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()
    # a file of such a name that is an entry (it states schema_version) is an entry
    shutil.copy(next(SHARED_DB.glob("H2_*.json")), only / "manifest.json")
    assert folder_entries(only) == ([only / "manifest.json"], ["index.json"])


def test_release_folders_without_entries_are_listed_with_the_reason(tmp_path):
    """QEncode's history holds releases/v4 with its curves only (its entries are in the v4
    database beside it); a release whose db holds only its index, or nothing, is listed
    too, each with why it was not swept."""
    assert discover([HISTORY]).empty == [{
        "release": "v4", "reason": "no entries: no db/ or trusted/ folder (curves/ holds 4 "
                                   "curve(s), audited as curves)"}]
    root = tmp_path / "record"
    for release in ("v1", "v2", "v3"):
        (root / "releases" / release / "db").mkdir(parents=True)
    shutil.copy(HISTORY / "releases" / "v1" / "db" / "index.json", root / "releases" / "v1" / "db")
    shutil.copy(next((HISTORY / "releases" / "v3" / "db").glob("H2_*.json")),
                root / "releases" / "v3" / "db")
    (root / "releases" / "v3" / "trusted").mkdir()
    record = discover([root])
    assert [g.label for g in record.groups] == ["v3"]
    assert record.empty == [
        {"release": "v1", "reason": "no entries: db/ holds only release metadata, not audited: "
                                    "index.json (the release's index of its entries)"},
        {"release": "v2", "reason": "no entries: db/ holds no .json entry"},
        {"release": "v3/trusted", "reason": "no entries: trusted/ holds no .json entry"}]


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


def test_release_counts_keep_refused_failed_and_unchecked_apart():
    """Counts per release and over all: a refusal is not a failure; a certified entry
    whose replay is n/a (schemas 1.0.0, 2.0.0) is unchecked, not lost."""
    import pandas as pd

    from qencode_nb.readout.history_counts import release_counts

    rows = [
        ("v2", "done", None, "n/a", True, "n/a", None),
        ("v2", "failed", "load: EntryError: /x/e.json: field schema_version: '9.9.9' is "
         "not accepted", None, None, None, None),
        ("v3", "done", None, "pass", True, "n/a", None),
        ("v3", "done", None, "fail", True, "n/a", None),
        ("v3", "done", None, "pass", False, "n/a", None),
        ("v3", "failed", "rerun: RuntimeError: boom", None, None, None, None),
    ]
    table = pd.DataFrame(rows, columns=["record_release", "status", "failure",
                                        "replay_status", "published_certified",
                                        "tier_certification", "certified"])
    counts = release_counts(table, ["v2", "v3"]).set_index("release")
    cols = ["entries", "audited", "refused", "failed", "replay_pass", "replay_fail",
            "replay_na", "published_certified", "certification_held", "certification_lost",
            "certification_unchecked"]
    assert counts.loc["v2", cols].tolist() == [2, 1, 1, 0, 0, 0, 1, 1, 0, 0, 1]
    assert counts.loc["v3", cols].tolist() == [4, 3, 0, 1, 2, 1, 0, 2, 1, 1, 0]
    assert counts.loc["all", cols].tolist() == [6, 4, 1, 1, 2, 1, 1, 3, 1, 1, 1]
    assert counts.loc["v2", "refused_reasons"] == "field schema_version: '9.9.9' is not accepted"


def _record_copy(tmp_path):
    """A small record folder laid out as QEncode's: a v4 entry beside the v2 release's
    manifest (release metadata), an entry of a schema no reader knows ("9.9.9"), a
    release whose db holds only its index (v1's), the H2 curve and the history's public
    data (the claims)."""
    import json

    root = tmp_path / "record"
    (root / "releases" / "v4" / "db").mkdir(parents=True)
    (root / "releases" / "v9" / "db").mkdir(parents=True)
    (root / "releases" / "v4" / "curves").mkdir(parents=True)
    (root / "releases" / "v1" / "db").mkdir(parents=True)
    shutil.copy(HISTORY / "releases" / "v1" / "db" / "index.json", root / "releases" / "v1" / "db")
    shutil.copy(HISTORY / "releases" / "v2" / "db" / "manifest.json",
                root / "releases" / "v4" / "db")
    h2 = next(SHARED_DB.glob("H2_ccpvdz_JW_UCCSD_v4_*.json"))
    shutil.copy(h2, root / "releases" / "v4" / "db")
    raw = json.loads(h2.read_text())
    raw["schema_version"] = "9.9.9"
    (root / "releases" / "v9" / "db" / "H2_future.json").write_text(json.dumps(raw))
    shutil.copy(HISTORY / "releases" / "v4" / "curves" / "h2_dissociation.json",
                root / "releases" / "v4" / "curves")
    for name in ("README.md", "CITATION.cff", "CHANGELOG.md"):
        shutil.copy(HISTORY / name, root)
    shutil.copytree(HISTORY / "docs", root / "docs")
    shutil.copytree(HISTORY / "website", root / "website")
    return root


@pytest.mark.notebook
def test_a_history_sweep_counts_each_release_and_writes_one_report(tmp_path, capsys):
    """`qencode-nb sweep RECORD --mode replay`: one sub-folder per release; the v4 entry
    replays (|ΔE| below 1e-12 Ha), the 9.9.9 entry is refused by name and counted, not a
    failure (exit 0); the curve is listed as not audited in replay mode; the claims table
    and one report grouped by release are written, with no absolute path."""
    import json

    import pandas as pd

    from qencode_nb.cli import main

    root, out = _record_copy(tmp_path), tmp_path / "runs"
    assert main(["sweep", str(root), "--mode", "replay", "--engine", "fast",
                 "--workers", "2", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "refused in v9: field schema_version: '9.9.9' is not accepted" in printed
    # release metadata is no entry; a release holding only its index is listed, not swept
    assert ("not entries in v4 (QEncode release metadata, not audited): manifest.json (the "
            "release's manifest (file sizes and hashes))") in printed
    assert ("release v1 not swept: no entries: db/ holds only release metadata, not "
            "audited: index.json (the release's index of its entries)") in printed
    counts = pd.read_csv(out / "releases.csv").set_index("release")
    assert counts.loc["v4", ["entries", "audited", "replay_pass", "certification_held"]
                      ].tolist() == [1, 1, 1, 1]
    assert counts.loc["v9", ["entries", "audited", "refused", "failed"]].tolist() == [1, 0, 1, 0]
    assert counts.loc["all", "entries"] == 2
    summary = pd.read_csv(out / "summary.csv")
    assert summary.loc[summary["record_release"] == "v4", "replay_abs_delta_ha"].iloc[0] < 1e-12
    manifest = json.loads((out / "record.json").read_text())
    assert [g["folder"] for g in manifest["groups"]] == ["v4", "v9"]
    assert manifest["groups"][0]["not_entries"] == ["manifest.json"]
    assert [e["release"] for e in manifest["empty_releases"]] == ["v1"]
    assert manifest["curves"][0]["status"] == "not audited"
    assert manifest["claims"]["rows"] > 0 and (out / "claims.csv").is_file()
    capsys.readouterr()
    # a record sweep's --out, release by release; the refused v9 entry's run is failed (1)
    assert main(["show", str(out)]) == 1
    shown = capsys.readouterr().out
    assert "release v4 (v4/):\nH2_ccpvdz" in shown and "1 runs: 1 done" in shown
    assert "release v9 (v9/):\nH2_future" in shown and "1 runs: 1 failed" in shown
    assert main(["report", str(out), "--no-notebooks"]) == 0
    page = (out / "report.html").read_text()
    for text in ('id="release-v4"', 'id="release-v9"', 'id="claims"', 'id="curves"',
                 'id="empty-releases"', "db/ holds only release metadata",
                 "refused: field schema_version", 'href="v4/report.html#run-H2_ccpvdz'):
        assert text in page, text
    assert (out / "v4" / "report.html").is_file()
    assert str(tmp_path) not in page and "/work/" not in page


@pytest.mark.notebook
def test_a_rerun_history_sweep_audits_its_curves_with_pinned_threads(tmp_path):
    """Mode rerun audits each curve in its own pinned process (``qencode-nb curve``): QEncode's
    H2 curve, 16 points, regenerates on the fast engine within STRICT_REPRODUCTION_HA
    (1e-6 Ha) with the same operator counts and no certification change (16/16 measured on
    the portable and Haswell kernels); the H2 entry's certification holds."""
    import json

    import pandas as pd

    from qencode_nb.options import RunOptions
    from qencode_nb.batch.history import discover
    from qencode_nb.studies.history_sweep import sweep_history

    root, out = _record_copy(tmp_path), tmp_path / "runs"
    shutil.rmtree(root / "releases" / "v9")
    sweep_history(discover([root]), out, RunOptions(mode="rerun", engine="fast", workers=1,
                                                   progress=False))
    curve = json.loads((out / "record.json").read_text())["curves"][0]
    assert curve["status"] == "done", curve
    assert (curve["points"], curve["agree"], curve["failed_points"], curve["changed"]) == (
        16, 16, 0, [])
    assert curve["blas"]["threads"] == 1    # measured in the curve's own process
    log = (out / "curves" / "h2_dissociation" / "curve.log").read_text()
    assert "16 agree" in log
    counts = pd.read_csv(out / "releases.csv").set_index("release")
    assert counts.loc["v4", ["audited", "certification_held"]].tolist() == [1, 1]


@pytest.mark.notebook
def test_a_claims_audit_that_fails_loses_nothing_of_the_sweep(tmp_path, capsys):
    """A record folder with a v1 entry and nothing for the claims audit to read (no
    leaderboard, receipts or README): the entry is audited, the claims audit's failure is
    recorded with its reason (exit 1), and the page still shows the release, its n/a
    replay as "n/a", and the failure."""
    import json

    from qencode_nb.cli import main

    db = tmp_path / "bare" / "releases" / "v1" / "db"
    db.mkdir(parents=True)
    shutil.copy(HISTORY / "releases" / "v1" / "db" /
                "H2_sto3g_JW_uccsd_v1__sha256_35b2b9a55f67ff1e.json", db)
    out = tmp_path / "runs"
    assert main(["sweep", str(tmp_path / "bare"), "--mode", "replay", "--out", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "FAILED claims of bare: ClaimsError" in printed
    manifest = json.loads((out / "record.json").read_text())
    assert manifest["claims"]["file"] is None and "README" in manifest["claims"]["error"]
    assert main(["report", str(out), "--no-notebooks"]) == 0
    page = (out / "report.html").read_text()
    assert "the claims audit of bare failed" in page and str(tmp_path) not in page
    assert ">n/a<" in page       # read as a value, not as missing
    assert main(["report", str(out), "--out", str(tmp_path / "elsewhere.html")]) == 2
