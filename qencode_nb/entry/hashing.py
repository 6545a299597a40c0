"""QEncode's hash rules, one per schema (:data:`HASH_RULES`): the SHA-256 an entry
records (schemas 2.0.0 to 4.0.0: ``provenance.entry_hash_sha256``; 1.0.0:
``provenance.input_fingerprint.sha256``) and whether the last 16 hex digits of its
``entry_id`` are that hash.  Measured on every file of the QEncode history (commit
a46b4ec, ``tests/entry/test_legacy_readers.py``): 9 of 9 v1 fingerprints, 12 of 12 v2
hashes (v2/db and v2/trusted), 78 of 78 v3 / v3.1 hashes recompute."""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from typing import Callable

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


def v2_entry_sha256(raw: dict) -> str:
    """Recompute a schema 2.0.0 entry's ``provenance.entry_hash_sha256`` (hex str).

    Rule (QEncode ``scripts/migrate_v1_to_v2.py`` at commit a46b4ec, ``stable_hash_sha256``
    in ``migrate``): SHA-256 of the canonical JSON (sorted keys, separators (",", ":"),
    ``ensure_ascii=False``, UTF-8) of the entry with ``provenance.migrated_utc`` and
    ``provenance.entry_hash_sha256`` set to null.  The migration hashed the entry before
    ``scripts/stamp_env_v2.py`` filled ``provenance.environment`` (it was null then), so
    ``provenance.environment`` is set to null too.
    """
    obj = json.loads(json.dumps(raw))
    prov = obj.setdefault("provenance", {})
    for key in ("migrated_utc", "entry_hash_sha256", "environment"):
        prov[key] = None
    canonical = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def v2_content_sha256(raw: dict) -> str:
    """The SHA-256 ``releases/v2/db/entry_content_hashes.json`` records for an entry file
    (QEncode ``scripts/entry_content_hashes_v2.py`` at a46b4ec): canonical JSON of the
    whole object (sorted keys, separators (",", ":"), ``ensure_ascii=False``, UTF-8)."""
    canonical = json.dumps(raw, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


V1_FINGERPRINT_SETTINGS = ("chemistry", "reduction", "mapping", "ansatz", "estimation")
"""The ``settings`` sections ``batch_generate.py`` built and hashed (the file's
``settings.ansatz_type`` / ``settings.ansatz_reps`` were added later by
``migrate_v1_clean_validation.py``, "aligned settings.ansatz_reps")."""


def v1_input_fingerprint(raw: dict) -> str:
    """Recompute a schema 1.0.0 entry's ``provenance.input_fingerprint.sha256`` (hex str;
    also ``source.input_fingerprint.sha256`` where present, and the ``entry_id`` suffix).

    Rule (QEncode ``scripts/batch_generate.py`` at commit a46b4ec, ``generate_entry``):
    ``sha256(json.dumps({"problem": problem, "settings": settings}, sort_keys=True))`` with
    json's default separators, where ``problem`` is the generator's input
    ``{name, units, atoms, charge, multiplicity}`` (the file's ``problem.geometry``
    holds units and atoms) and ``settings`` its :data:`V1_FINGERPRINT_SETTINGS`.  It
    fingerprints the inputs, not the results: a changed energy keeps the fingerprint.

    Raises:
        KeyError: the entry lacks ``problem`` or ``settings`` fields the rule reads.
    """
    p, settings = raw["problem"], raw["settings"]
    problem = {"name": p["name"], "units": p["geometry"]["units"],
               "atoms": p["geometry"]["atoms"], "charge": p["charge"],
               "multiplicity": p["multiplicity"]}
    obj = {"problem": problem,
           "settings": {k: settings[k] for k in V1_FINGERPRINT_SETTINGS if k in settings}}
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class HashRule:
    """How one QEncode schema records and computes its entry hash.

    Attributes:
        field: where the entry records the hash (dotted path).
        compute: ``raw dict -> hex str``, the rule.
        source: the generator script (QEncode repository, commit a46b4ec) it follows.
        id_suffix: the ``entry_id`` ends in ``__sha256_`` + the first 16 hex digits of
            this hash; when False, ``id_suffix_why`` says what the suffix is instead.
        covers_results: the hash covers the published results (False: a fingerprint of
            the inputs, which a changed energy keeps).
    """

    field: str
    compute: Callable
    source: str
    id_suffix: bool
    id_suffix_why: str = ""
    covers_results: bool = True

    def recorded(self, raw: dict) -> str | None:
        """The hash the entry records at :attr:`field`, or None when absent."""
        obj = raw
        for key in self.field.split("."):
            if not isinstance(obj, dict):
                return None
            obj = obj.get(key)
        return obj if isinstance(obj, str) else None


V4_RULE = HashRule("provenance.entry_hash_sha256", qencode_sha256,
                   "scripts/generate_entry_v4.py stable_hash / strip_volatile", True)

#: The hash rule of each QEncode ``schema_version`` (keys as
#: :data:`qencode_nb.entry.readers.READERS`).
HASH_RULES = {
    "1.0.0": HashRule("provenance.input_fingerprint.sha256", v1_input_fingerprint,
                      "scripts/batch_generate.py generate_entry (input fingerprint)", True,
                      covers_results=False),
    "2.0.0": HashRule("provenance.entry_hash_sha256", v2_entry_sha256,
                      "scripts/migrate_v1_to_v2.py stable_hash_sha256 (environment, stamped "
                      "later by stamp_env_v2.py, nulled)", False,
                      "the entry_id is the v1 entry's: its suffix is the v1 input "
                      "fingerprint (migrate_v1_to_v2.py keeps entry_id)"),
    "3.0.0": HashRule("provenance.entry_hash_sha256", qencode_sha256,
                      "scripts/rehash_entries_v3.py (the rule of generate_entry_v4.py)", False,
                      "rehash_entries_v3.py recomputed entry_hash_sha256 and kept entry_id "
                      "and file names: the suffix is the hash before the rehash"),
    "4.0.0": V4_RULE,
}
