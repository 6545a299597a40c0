"""The stated claims of QEncode's README, CITATION.cff, CHANGELOG.md, docs/VERIFY.md,
docs/leaderboard.md and leaderboard metadata, checked against the database
(qencode_nb/claims/stated.py, facts.py; issue 26, item 3).

Reference values, measured on ``../shared/qencode-history`` (QEncode master a46b4ec)
with ``../shared/qencode-v4`` (40 of the 54 v4.4 entries): the registry lists 54
entries; the folder holds 40 (34 certified, 6 validated); 13 absent entries are rows of
the certified leaderboards, so 47 are certified (= ``leaderboard_metadata.json``'s
``entries_included``); one absent entry (N2 PAR/HEA 9eb43e15...) is on no leaderboard
(trust unknown); the release's entry ids name 16 molecules and ``molecules_v4.json``
lists 16.  The N2 JW/UCCSD entry is validated at 10.832 mHa (> 10 mHa); no v4 entry in
the folder carries a signature; releases/v3.1 holds 42 entries (30 certified, 12
validated, 7 molecules) whose 42 ids do not end in their stored hash.
"""

from __future__ import annotations

import shutil

from conftest import SHARED_DB, SHARED_HISTORY
from qencode_nb.claims.facts import v4_census
from qencode_nb.claims.folder import open_folder, registry_ids
from qencode_nb.claims.stated import STATED, Stated, check_stated, locate

#: claim id -> status, measured (module docstring).
MEASURED = {
    "readme-v4-counts": "stale", "readme-n2-gap": "stale", "readme-n2-certified": "holds",
    "readme-10-molecules": "stale", "readme-encodings-ansatze": "stale",
    "readme-signed": "false", "readme-bk-excluded": "holds",
    "readme-par-uccsd-excluded": "holds", "readme-requirements-v4": "holds",
    "citation-n2": "stale", "citation-10-molecules": "stale",
    "verify-bit-for-bit": "false", "verify-requirements-txt": "false",
    "changelog-n2": "stale", "changelog-v31-counts": "holds",
    "leaderboard-md-current-suite": "stale", "metadata-counts": "holds",
}


def _rows():
    rows = check_stated(open_folder(SHARED_HISTORY, db=SHARED_DB))
    return {r.claim.split(":", 1)[0]: r for r in rows}


def test_every_stated_claim_has_its_measured_status():
    rows = _rows()
    assert {i: r.status for i, r in rows.items()} == MEASURED
    assert len(STATED) == len(MEASURED)


def test_the_census_the_counts_rest_on():
    c = v4_census(open_folder(SHARED_HISTORY, db=SHARED_DB), registry_ids())
    assert (c["release"], c["present"], c["certified"], c["from_leaderboard"]) == (54, 40, 47, 13)
    assert dict(c["trust"]) == {"certified": 34, "validated": 6}
    assert c["unknown"] == ["N2_ccpvdz_PAR_HEA_v4_casscf_tapered__sha256_9eb43e15f4eea410"]
    assert len(c["molecules"]) == 16


def test_the_stale_readme_citation_and_verify_claims_are_flagged_with_evidence():
    rows = _rows()
    counts = rows["readme-v4-counts"]
    assert counts.where.startswith("README.md:25")
    assert "certified: 47" in counts.evidence and "lists 16 molecules" in counts.evidence
    n2 = rows["citation-n2"]
    assert n2.where == "CITATION.cff:11"
    assert ("N2_ccpvdz_JW_UCCSD_v4_casscf_tapered__sha256_5912a448b32eaa07: trust.level "
            "validated, gap 10.832 mHa") in n2.evidence
    bit = rows["verify-bit-for-bit"]
    assert bit.where.startswith("docs/VERIFY.md:56")
    assert "tamper detection" in bit.evidence and "42 of 42 entry ids" in bit.evidence
    req = rows["verify-requirements-txt"]
    assert req.where.startswith("docs/VERIFY.md:30")
    assert "requirements.txt does not exist" in req.evidence


def test_a_quote_no_longer_in_its_file_is_unverifiable(tmp_path):
    root = tmp_path / "history"
    root.mkdir()
    shutil.copy(SHARED_HISTORY / "README.md", root / "README.md")
    text = (root / "README.md").read_text().replace("26 certified entries", "47 certified entries")
    (root / "README.md").write_text(text)
    table = (Stated("readme-v4-counts", "README.md", "7 molecules, 26 certified entries",
                    lambda folder, registry: ("holds", "")),
             Stated("citation", "CITATION.cff", "N₂ is certified", lambda f, r: ("holds", "")))
    rows = check_stated(open_folder(root, db=SHARED_DB), table=table)
    assert [r.status for r in rows] == ["unverifiable: quote not found",
                                        "unverifiable: file not in the folder"]


def test_locate_finds_a_quote_across_lines_with_its_section():
    text = "# Top\n\n## Part\nsome words that\n  wrap here\n"
    assert locate(text, "words that wrap") == (4, "Part")
    assert locate(text, "absent") is None
