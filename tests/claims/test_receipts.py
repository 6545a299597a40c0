"""Certification receipts: the payload's entry hash against its entry, and the Ed25519
signature over the canonical payload (qencode_nb/claims/receipts.py; issue 26, item 3).

Reference values, measured on ``../shared/qencode-history/website/public/data/
certified_receipts.json`` (QEncode master a46b4ec): 62 receipts, all for suite-2.0
``*_v2__sha256_*`` entries, none of which is in the folder (``releases/v2`` holds the
twelve schema-2.0.0 files of the ``*_v1__*`` entries); every payload hash agrees with
its entry id's suffix.  QEncode's v2 hash rule (scripts/migrate_v1_to_v2.py)
reproduces the recorded hash of all twelve schema-2.0.0 files.
"""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest

from conftest import SHARED_HISTORY
from qencode_nb.claims.folder import open_folder
from qencode_nb.claims.receipts import (ABSENT, HASH_KIND, NO_KEY, SIGNATURE_KIND,
                                        canonical_payload, check_receipts, v2_sha256)
from qencode_nb.claims.table import flagged

RECEIPTS = "website/public/data/certified_receipts.json"
V2_ENTRY = "H2_sto3g_JW_uccsd_v1__sha256_35b2b9a55f67ff1e"


def _folder(tmp_path: Path, receipts: list) -> Path:
    """A folder with releases/v2 (real) and the receipts given."""
    root = tmp_path / "history"
    shutil.copytree(SHARED_HISTORY / "releases" / "v2", root / "releases" / "v2")
    (root / RECEIPTS).parent.mkdir(parents=True)
    (root / RECEIPTS).write_text(json.dumps({"receipts": receipts}))
    return root


def _receipt(payload: dict, signature: str = "AAAA") -> dict:
    return {"entry_id": payload["entry_id"], "suite_version": "2.0",
            "receipt": {"payload": payload, "signature": signature,
                        "signature_algorithm": "ed25519"}}


def _v2_payload() -> dict:
    raw = json.loads((SHARED_HISTORY / "releases/v2/db" / f"{V2_ENTRY}.json").read_text())
    return {"entry_hash_sha256": raw["provenance"]["entry_hash_sha256"], "entry_id": V2_ENTRY,
            "issued_at_utc": "2026-03-19T18:39:18Z", "issued_by": "qencode",
            "leaderboard_rules_version": "v1", "receipt_version": "1.0",
            "suite_version": "2.0", "trust_level": "certified"}


def test_the_real_receipts_entry_absent_and_no_public_key():
    rows = check_receipts(open_folder(SHARED_HISTORY))
    hashes = [r for r in rows if r.kind == HASH_KIND]
    signatures = [r for r in rows if r.kind == SIGNATURE_KIND]
    assert len(hashes) == len(signatures) == 62
    assert {r.status for r in hashes} == {ABSENT}
    assert all("agrees with the entry id's sha256 suffix" in r.evidence for r in hashes)
    assert {r.status for r in signatures} == {NO_KEY} == {"unverifiable: no public key"}
    assert hashes[0].where == f"{RECEIPTS}, receipt 1"


def test_the_v2_hash_rule_reproduces_every_schema_2_file():
    files = sorted((SHARED_HISTORY / "releases" / "v2").rglob("*__sha256_*.json"))
    assert len(files) == 12
    for path in files:
        raw = json.loads(path.read_text())
        assert raw["schema_version"] == "2.0.0"
        assert v2_sha256(raw) == raw["provenance"]["entry_hash_sha256"], path.name


def test_a_receipt_holds_on_its_entry_and_a_tampered_payload_hash_is_flagged(tmp_path):
    payload = _v2_payload()
    tampered = dict(payload, entry_hash_sha256="0" * 64)
    root = _folder(tmp_path, [_receipt(payload), _receipt(tampered)])
    good, bad = [r for r in check_receipts(open_folder(root)) if r.kind == HASH_KIND]
    assert good.status == "holds"
    assert "releases/v2/db/" in good.evidence and "releases/v2/trusted/" in good.evidence
    assert bad.status == "false: payload hash is not its entry's" and flagged(bad)


def test_a_tampered_payload_hash_of_an_absent_entry_is_flagged(tmp_path):
    real = json.loads((SHARED_HISTORY / RECEIPTS).read_text())["receipts"]
    first = json.loads(json.dumps(real[0]))
    h = first["receipt"]["payload"]["entry_hash_sha256"]
    first["receipt"]["payload"]["entry_hash_sha256"] = ("f" if h[0] != "f" else "e") + h[1:]
    swapped = json.loads(json.dumps(real[2]))
    swapped["entry_id"] = real[3]["entry_id"]
    root = _folder(tmp_path, [first, real[1], swapped])
    rows = [r for r in check_receipts(open_folder(root)) if r.kind == HASH_KIND]
    assert rows[0].status == "false: payload hash disagrees with its entry id"
    assert rows[1].status == ABSENT
    assert rows[2].status == "false: receipt names two entries"


def test_a_signature_made_as_qencode_would_verifies_and_a_tampered_one_fails(tmp_path):
    from qencode_nb.trust.keys import generate, load_private_key

    private, public, kid = generate(tmp_path / "keys" / "qencode")
    key = load_private_key(private)
    payload = _v2_payload()
    signed = _receipt(payload, base64.b64encode(key.sign(canonical_payload(payload))).decode())
    tampered = json.loads(json.dumps(signed))
    tampered["receipt"]["payload"]["issued_at_utc"] = "2026-03-20T00:00:00Z"
    root = _folder(tmp_path, [signed, tampered])
    rows = [r for r in check_receipts(open_folder(root), public_key=public)
            if r.kind == SIGNATURE_KIND]
    assert rows[0].status == "holds" and kid in rows[0].evidence
    assert rows[1].status == "false: signature does not verify" and flagged(rows[1])
    unkeyed = [r for r in check_receipts(open_folder(root)) if r.kind == SIGNATURE_KIND]
    assert {r.status for r in unkeyed} == {NO_KEY}
    # the real receipts do not verify with a key that is not QEncode's
    real = [r for r in check_receipts(open_folder(SHARED_HISTORY), public_key=public)
            if r.kind == SIGNATURE_KIND]
    assert {r.status for r in real} == {"false: signature does not verify"}


def test_canonical_payload_is_sorted_compact_utf8():
    assert canonical_payload({"b": 1, "a": "N\u2082"}) == '{"a":"N\u2082","b":1}'.encode()


def test_a_key_file_that_is_not_an_ed25519_public_key_is_refused(tmp_path):
    from qencode_nb.errors import KeyFileError

    bad = tmp_path / "key.pub"
    bad.write_text("not a key")
    with pytest.raises(KeyFileError, match="not a PEM file"):
        check_receipts(open_folder(SHARED_HISTORY), public_key=bad)
