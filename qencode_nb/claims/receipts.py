"""Every certification receipt (``certified_receipts.json``): its payload's entry hash
against its entry, and its Ed25519 signature.

A receipt is ``{"entry_id", "suite_version", "receipt": {"payload": {...,
"entry_hash_sha256", "entry_id", ...}, "signature": base64, "signature_algorithm":
"ed25519"}}``.  Two rows each:

- **receipt hash**: the payload's ``entry_hash_sha256`` equals its entry's hash,
  recomputed from the entry file found by id anywhere under ``releases/`` (or in the
  database folder).  An entry of schema 2.x is hashed by QEncode's v2 rule
  (``scripts/migrate_v1_to_v2.py``, ``stable_hash_sha256``): SHA-256 of the JSON
  with ``provenance.migrated_utc``, ``provenance.entry_hash_sha256`` and
  ``provenance.environment`` set to null (``scripts/stamp_env_v2.py`` adds the
  environment after hashing), sorted keys, separators ``(",", ":")``,
  ``ensure_ascii=False``, UTF-8: it reproduces all twelve schema-2.0.0 files'
  recorded hashes.  Later schemas use :func:`qencode_nb.entry.hashing.qencode_sha256`.
  An entry not in the folder is ``unverifiable: entry absent``, unless the payload
  hash disagrees with the receipt's own entry id (QEncode's ids end in
  ``__sha256_`` + the hash's first 16 hex digits), which is ``false``.
- **receipt signature**: Ed25519 (``--public-key``) over the payload canonicalised as
  QEncode canonicalises JSON everywhere it hashes or signs
  (:func:`canonical_payload`: sorted keys, separators ``(",", ":")``, UTF-8).  The
  code that issued the receipts (the ``qencode`` package under ``src/``) is not in
  QEncode's public repository, so this canonical form is inferred, not read; without
  a key the status is ``unverifiable: no public key`` (QEncode publishes none).
"""

from __future__ import annotations

import copy
import hashlib
import json

from qencode_nb.claims.folder import ID_MARK, Folder, read_json, rel
from qencode_nb.claims.table import ClaimRow

HASH_KIND, SIGNATURE_KIND = "receipt hash", "receipt signature"
NO_KEY = "unverifiable: no public key"
ABSENT = "unverifiable: entry absent"
#: provenance keys QEncode's v2 hash rule sets to null before hashing.
V2_NULLED = ("migrated_utc", "entry_hash_sha256", "environment")


def canonical_payload(payload: dict) -> bytes:
    """The bytes a receipt's signature covers: the payload as canonical JSON (sorted
    keys, separators ``(",", ":")``, non-ASCII kept, UTF-8)."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")


def v2_sha256(raw: dict) -> str:
    """QEncode's v2 ``provenance.entry_hash_sha256`` rule (module docstring)."""
    obj = copy.deepcopy(raw)
    prov = obj.setdefault("provenance", {})
    for key in V2_NULLED:
        prov[key] = None
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":"),
                                     ensure_ascii=False).encode("utf-8")).hexdigest()


def entry_sha256(raw: dict) -> tuple[str, str]:
    """``(hash, rule)``: an entry's hash recomputed by its schema's rule."""
    if str(raw.get("schema_version", "")).startswith("2."):
        return v2_sha256(raw), "QEncode's v2 rule"
    from qencode_nb.entry.hashing import qencode_sha256

    return qencode_sha256(raw), "QEncode's v3/v4 rule"


def load_receipts(folder: Folder) -> list[dict]:
    """The receipts of the folder's ``certified_receipts.json`` (none when absent).

    Raises:
        ClaimsError: the file is not JSON or holds no ``receipts`` list.
    """
    from qencode_nb.errors import ClaimsError

    if folder.receipts_file is None:
        return []
    data = read_json(folder.receipts_file)
    receipts = data.get("receipts") if isinstance(data, dict) else None
    if not isinstance(receipts, list):
        raise ClaimsError(f"{folder.receipts_file}: no 'receipts' list; accepted: "
                          '{"receipts": [{"entry_id", "receipt": {"payload", "signature"}}]}')
    return receipts


def check_receipts(folder: Folder, public_key=None) -> list[ClaimRow]:
    """Two :class:`ClaimRow` per receipt (hash, signature), module docstring.

    Raises:
        KeyFileError: ``public_key`` is not an Ed25519 public key file.
    """
    key = kid = None
    if public_key is not None:
        from qencode_nb.trust.keys import key_id, load_public_key

        key = load_public_key(public_key)
        kid = key_id(key)
    rows = []
    where_file = rel(folder, folder.receipts_file) if folder.receipts_file else ""
    for n, item in enumerate(load_receipts(folder), start=1):
        receipt = (item or {}).get("receipt") or {}
        payload = receipt.get("payload") or {}
        entry_id = payload.get("entry_id") or (item or {}).get("entry_id") or "?"
        where = f"{where_file}, receipt {n}"
        outer = (item or {}).get("entry_id")
        if outer and payload.get("entry_id") and outer != payload["entry_id"]:
            rows.append(ClaimRow(HASH_KIND, f"{outer}: receipt for {payload['entry_id']}",
                                 where, "false: receipt names two entries",
                                 f"the receipt's entry_id {outer} is not its payload's "
                                 f"{payload['entry_id']}"))
        else:
            rows.append(_hash_row(folder, entry_id, payload, where))
        rows.append(_signature_row(entry_id, receipt, payload, where, key, kid, public_key))
    return rows


def _hash_row(folder, entry_id, payload, where) -> ClaimRow:
    claimed = str(payload.get("entry_hash_sha256") or "")
    claim = f"{entry_id}: entry_hash_sha256 {claimed}"
    id_ok = entry_id.endswith(ID_MARK + claimed[:16]) and len(claimed) == 64
    files = folder.release_entries.get(entry_id, [])
    if not files:
        if not id_ok:
            return ClaimRow(HASH_KIND, claim, where, "false: payload hash disagrees with "
                            "its entry id", f"entry id {entry_id} does not end in "
                            f"{ID_MARK}{claimed[:16]}; no {entry_id}.json under releases/ "
                            "nor in the database folder")
        return ClaimRow(HASH_KIND, claim, where, ABSENT,
                        f"no {entry_id}.json under releases/ nor in the database folder; "
                        "the payload hash agrees with the entry id's sha256 suffix")
    bad, good = [], []
    for file in files:
        raw = folder.entry(file)
        got, rule = entry_sha256(raw)
        recorded = (raw.get("provenance") or {}).get("entry_hash_sha256")
        text = f"{rel(folder, file)} recomputes to {got} ({rule}; records {recorded})"
        (good if got == claimed and recorded == claimed else bad).append(text)
    if bad:
        return ClaimRow(HASH_KIND, claim, where, "false: payload hash is not its entry's",
                        "; ".join(bad + good))
    return ClaimRow(HASH_KIND, claim, where, "holds", "; ".join(good))


def _signature_row(entry_id, receipt, payload, where, key, kid, public_key) -> ClaimRow:
    import base64
    import binascii

    algorithm = receipt.get("signature_algorithm")
    claim = f"{entry_id}: signed by QEncode ({algorithm})"
    if str(algorithm).lower() != "ed25519":
        return ClaimRow(SIGNATURE_KIND, claim, where, "unverifiable: not ed25519",
                        f"signature_algorithm {algorithm!r}; only ed25519 is checked")
    if key is None:
        return ClaimRow(SIGNATURE_KIND, claim, where, NO_KEY,
                        "no --public-key given; QEncode publishes no public key")
    from cryptography.exceptions import InvalidSignature

    try:
        key.verify(base64.b64decode(receipt.get("signature") or "", validate=True),
                   canonical_payload(payload))
    except (binascii.Error, ValueError):
        return ClaimRow(SIGNATURE_KIND, claim, where, "false: signature is not base64",
                        f"key {kid} ({public_key})")
    except InvalidSignature:
        return ClaimRow(SIGNATURE_KIND, claim, where, "false: signature does not verify",
                        f"Ed25519 with key {kid} ({public_key}) over the canonical payload "
                        "(sorted keys, compact separators, UTF-8)")
    return ClaimRow(SIGNATURE_KIND, claim, where, "holds",
                    f"verified with key {kid} ({public_key}) over the canonical payload")
