"""QEncode's hash rule: the SHA-256 an entry records in
``provenance.entry_hash_sha256`` (and the last 16 hex digits of its ``entry_id``)."""

from __future__ import annotations

import copy
import hashlib
import json

# ---------------------------------------------------------------------------
# QEncode's hash rule (public generator generate_entry_v4.py, stable_hash and
# strip_volatile): SHA-256 of the canonical JSON (sorted keys, separators
# (",", ":"), ASCII) of the entry with these keys removed at every depth.
# ---------------------------------------------------------------------------
HASH_EXCLUDED_KEYS = frozenset({
    "created_utc", "entry_id", "entry_hash_sha256", "git_commit", "computed_utc",
    "certified_utc", "signature_b64", "signing_key_id",
})


def strip_volatile(obj):
    if isinstance(obj, dict):
        return {k: strip_volatile(v) for k, v in obj.items() if k not in HASH_EXCLUDED_KEYS}
    if isinstance(obj, list):
        return [strip_volatile(v) for v in obj]
    return copy.deepcopy(obj)


def qencode_sha256(raw: dict) -> str:
    """Recompute an entry's ``provenance.entry_hash_sha256`` with QEncode's rule (hex str)."""
    canonical = json.dumps(strip_volatile(raw), sort_keys=True, separators=(",", ":"),
                           ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()
