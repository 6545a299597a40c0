"""Integrity: the entry's SHA-256 recomputed with QEncode's rule, and its signature state."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from qencode_nb.entry.hashing import qencode_sha256


@dataclass
class Integrity:
    """The integrity check of one entry.

    Attributes:
        status: "pass", "fail" or "n/a" (no QEncode JSON at hand).
        recorded: the SHA-256 the entry records (hex).
        recomputed: the SHA-256 recomputed from the JSON (hex), or None.
        id_matches_hash: the ``entry_id`` ends in ``__sha256_`` + the first 16
            hex digits of the recorded hash (generator ``assemble_entry``).
        signature: "absent" or "present, not verified (no key given)".
        reasons: why it did not pass.
    """

    status: str
    recorded: str
    recomputed: str | None
    id_matches_hash: bool
    signature: str
    reasons: list = field(default_factory=list)

    def to_record(self) -> dict:
        """The ``integrity`` record."""
        return asdict(self)


def integrity(entry) -> Integrity:
    """SHA-256 by QEncode's rule (:func:`qencode_nb.entry.hashing.qencode_sha256`),
    recomputed where the JSON is at hand (a ``params/`` entry without ``db``
    has none: status n/a unless its id already contradicts its hash)."""
    reasons = []
    id_ok = entry.entry_id.endswith("__sha256_" + entry.sha256[:16])
    if not id_ok:
        reasons.append(f"entry_id {entry.entry_id} does not end in sha256[:16] "
                       f"{entry.sha256[:16]}")
    recomputed = None
    if entry.raw is not None:
        recomputed = qencode_sha256(entry.raw)
        if recomputed != entry.sha256:
            reasons.append(f"recomputed SHA-256 {recomputed} != recorded {entry.sha256}")
        status = "pass" if not reasons else "fail"
    else:
        reasons.append("no QEncode JSON at hand (pass db=FOLDER) to recompute the SHA-256")
        status = "fail" if not id_ok else "n/a"
    signature = "absent"
    if entry.raw is not None and (entry.raw.get("trust") or {}).get("signature_b64"):
        signature = "present, not verified (no key given)"
    return Integrity(status=status, recorded=entry.sha256, recomputed=recomputed,
                     id_matches_hash=id_ok, signature=signature, reasons=reasons)
