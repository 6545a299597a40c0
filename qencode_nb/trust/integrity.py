"""Integrity: the entry's SHA-256 recomputed with QEncode's rule, and its signature state.

QEncode signs an entry as its generator does (``scripts/generate_entry_v4.py``,
``try_sign_hash``; the same in ``generate_entry_v3.py``): Ed25519 over the UTF-8 bytes
of the *hex* SHA-256 (the 64 characters of ``provenance.entry_hash_sha256``, not the
32 digest bytes), base64 in ``trust.signature_b64``; ``trust.signing_key_id`` is the
stem of the key file it used ("signing_key", "private_key") or "env_key", not a
fingerprint.  Neither its schema nor its documentation specifies more, and no public
key is published: every public v4 entry has ``signature_b64: null``.
:func:`entry_signature` verifies over the hash recomputed from the JSON (so a changed
entry cannot keep a valid signature) with a public key given as a PEM file.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from qencode_nb.entry.hashing import HASH_RULES, V4_RULE, qencode_sha256


@dataclass
class Integrity:
    """The integrity check of one entry.

    Attributes:
        status: "pass", "fail" or "n/a" (no QEncode JSON at hand).
        recorded: the SHA-256 the entry records (hex).
        recomputed: the SHA-256 recomputed from the JSON (hex), or None.
        id_matches_hash: the ``entry_id`` ends in ``__sha256_`` + the first 16
            hex digits of the recorded hash (generator ``assemble_entry``); None where
            the schema's suffix is not its hash (``hash_rule`` says what it is).
        signature: the state of the entry's own ``trust.signature_b64``: "absent",
            "present, not verified (no key given)", "verified (key ID)" or
            "invalid (key ID)" (:func:`entry_signature`).
        reasons: why it did not pass.
        signature_key: the public key given to verify it, ``{"path", "key_id"}``
            (:func:`qencode_nb.trust.keys.key_id`), or None when none was given.
        signing_key_id: the entry's ``trust.signing_key_id`` (QEncode's name of its key).
        file_sha256: the SHA-256 of the entry file's bytes as the audit read them
            (``entry_source``): what ``qencode-nb crate`` requires of a file it copies.
        hash_rule: the schema's rule recomputed: where it is recorded, its source, and
            what the ``entry_id`` suffix is when it is not the hash
            (:data:`qencode_nb.entry.hashing.HASH_RULES`).
    """

    status: str
    recorded: str | None
    recomputed: str | None
    id_matches_hash: bool | None
    signature: str
    reasons: list = field(default_factory=list)
    signature_key: dict | None = None
    signing_key_id: str | None = None
    file_sha256: str | None = None
    hash_rule: str | None = None

    def to_record(self) -> dict:
        """The ``integrity`` record."""
        return asdict(self)


def integrity(entry, public_key=None) -> Integrity:
    """SHA-256 by the rule of the entry's schema (:data:`qencode_nb.entry.hashing.HASH_RULES`;
    4.0.0 and 3.0.0: :func:`qencode_nb.entry.hashing.qencode_sha256`).  Where the schema's
    ``entry_id`` suffix is not its hash (2.0.0, 3.0.0) ``id_matches_hash`` is None
    (not checked) rather than a failure.
    recomputed where the JSON is at hand (a ``params/`` entry without ``db``
    has none: status n/a unless its id already contradicts its hash), and the entry's
    own signature verified when ``public_key`` (a PEM file) is given
    (:func:`entry_signature`; an invalid signature fails integrity).

    Raises:
        KeyFileError: ``public_key`` is not an Ed25519 public key file (names it).
    """
    if entry.sha256 is None:      # a YAML entry of one's own: nothing recorded to check
        signed = entry_signature(entry, public_key)
        return Integrity(status="n/a", recorded=None, recomputed=None, id_matches_hash=None,
                         signature=signed["state"],
                         reasons=[f"{entry.source.name} is a YAML entry of one's own: it "
                                  "records no SHA-256 (no qencode section) to recompute"],
                         signature_key=signed["key"], file_sha256=entry.file_sha256)
    reasons = []
    rule = HASH_RULES.get(getattr(entry, "schema_version", "4.0.0"), V4_RULE)
    id_ok = entry.entry_id.endswith("__sha256_" + entry.sha256[:16])
    if not id_ok and rule.id_suffix:
        reasons.append(f"entry_id {entry.entry_id} does not end in sha256[:16] "
                       f"{entry.sha256[:16]}")
    elif not id_ok:             # the schema's entry_id suffix is not its hash
        id_ok = None
    recomputed = None
    if entry.raw is not None:
        recomputed = rule.compute(entry.raw)
        if recomputed != entry.sha256:
            reasons.append(f"recomputed SHA-256 {recomputed} != recorded {entry.sha256} "
                           f"({rule.field}, rule of {rule.source})")
        status = "pass" if not reasons else "fail"
    else:
        reasons.append("no QEncode JSON at hand (pass db=FOLDER) to recompute the SHA-256")
        status = "fail" if not id_ok else "n/a"
    signed = entry_signature(entry, public_key)
    if signed["reason"]:
        reasons.append(signed["reason"])
        status = "fail"
    trust = (entry.raw or {}).get("trust") or {}
    return Integrity(status=status, recorded=entry.sha256, recomputed=recomputed,
                     id_matches_hash=id_ok, signature=signed["state"], reasons=reasons,
                     signature_key=signed["key"], signing_key_id=trust.get("signing_key_id"),
                     file_sha256=entry.file_sha256,
                     hash_rule=(f"QEncode schema {entry.schema_version}: {rule.field}, "
                                f"{rule.source}" + (f"; {rule.id_suffix_why}"
                                                    if rule.id_suffix_why else "")))


def entry_signature(entry, public_key=None) -> dict:
    """Verify an entry's ``trust.signature_b64`` the way QEncode signs (module docstring):
    Ed25519 over the UTF-8 bytes of the hex SHA-256 recomputed from the JSON.

    Args:
        entry: a :class:`qencode_nb.entry.Entry`.
        public_key: path of an Ed25519 public key in PEM, or None.

    Returns:
        ``{"state", "key", "reason"}``: state "absent" (no signature, whether or not a
        key is given), "present, not verified (no key given)", "verified (key ID)" or
        "invalid (key ID)"; ``key`` ``{"path", "key_id"}`` of the key given, or None;
        ``reason`` why an invalid signature is invalid, else None.

    Raises:
        KeyFileError: ``public_key`` is not an Ed25519 public key file (names it).
    """
    import base64
    import binascii

    key = kid = None
    if public_key is not None:
        from qencode_nb.trust.keys import key_id, load_public_key

        key = load_public_key(public_key)
        kid = key_id(key)
    given = None if key is None else {"path": str(public_key), "key_id": kid}
    b64 = ((entry.raw or {}).get("trust") or {}).get("signature_b64")
    if not b64:
        return {"state": "absent", "key": given, "reason": None}
    if key is None:
        return {"state": "present, not verified (no key given)", "key": None, "reason": None}
    from cryptography.exceptions import InvalidSignature

    message = qencode_sha256(entry.raw).encode()
    try:
        key.verify(base64.b64decode(b64, validate=True), message)
    except (binascii.Error, ValueError):
        reason = "trust.signature_b64 is not base64"
    except InvalidSignature:
        reason = (f"trust.signature_b64 does not verify with key {kid} ({public_key}) over "
                  "the entry's recomputed SHA-256 (hex)")
        if entry.sha256 != message.decode():
            try:
                key.verify(base64.b64decode(b64), entry.sha256.encode())
                reason += "; it verifies over the recorded hash: the entry changed after signing"
            except InvalidSignature:
                pass
    else:
        return {"state": f"verified (key {kid})", "key": given, "reason": None}
    return {"state": f"invalid (key {kid})", "key": given, "reason": reason}
