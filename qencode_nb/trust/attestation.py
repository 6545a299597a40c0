"""Signed attestations of executed audits, and their verification.

An **attestation** is a detached statement beside an executed audit notebook
``NAME.ipynb``: ``NAME.attestation.json`` holds the statement as canonical JSON
(:func:`canonical`: sorted keys, separators ``,`` and ``:``, UTF-8, no trailing
newline) and ``NAME.attestation.sig`` the base64 of the Ed25519 signature over exactly
those bytes.  The statement (:func:`statement`, format :data:`FORMAT`) names:

- ``entry``: the entry id, the file the audit read (the ``entry_source`` record: its path
  relative to the attestation's folder when it lies inside it, else its file name; never
  an absolute path of the machine, :func:`entry_file_name`) and that file's SHA-256, the
  entry's QEncode hash (``provenance.entry_hash_sha256``, as recorded), the integrity
  status and signature state the audit recorded;
- ``notebook``: the executed notebook's file name (beside the attestation) and SHA-256;
- ``mode``, ``verdict`` (the one-line summary) and ``tiers`` (the three tiers, as recorded);
- ``provenance_sha256``: SHA-256 of the canonical JSON of the ``provenance`` record;
- ``numeric_fingerprint`` and ``blas_profile``: the run's numeric fingerprint hash
  (:mod:`qencode_nb.notebook.fingerprint`) and its kernel profile record;
- ``stack``: the package stack that ran, its recorded packages' versions and key, and
  why the stack asked for did not run (the ``stack`` record; None for runs made before
  it existed);
- ``toolkit``: qencode-nb and its version (``importlib.metadata``) where it was signed;
- ``signed_utc`` and ``key_id`` (:func:`qencode_nb.trust.keys.key_id`).

:func:`verify` checks that the file is canonical JSON, that the signature matches the
public key, then re-hashes the notebook and the entry file it names, looked for where
:func:`entry_candidates` says (``--entry FILE``, the attestation's folder, the copy a
provenance crate of that folder keeps, the file the notebook itself read); each failure is
a reason ("signature does not match key ...", "notebook changed: sha256 X != Y", ...).
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from qencode_nb.errors import AttestationError

#: The statement's ``format``: changes when its meaning does.
FORMAT = "qencode-nb-attestation/1"
#: ``NAME.ipynb`` -> ``NAME`` + these.
STATEMENT_SUFFIX = ".attestation.json"
SIGNATURE_SUFFIX = ".attestation.sig"
#: Where a provenance crate of a folder keeps the entry files its audits read
#: (:mod:`qencode_nb.trust.crate`: ``entries/<file name>``, or
#: ``entries/<SHA-256[:12]>-<file name>`` when two files share a name).
CRATE_ENTRIES = "entries"
#: The records an attestation reads (names of :data:`qencode_nb.verdict.records.AUDIT_RECORDS`).
READ_RECORDS = ("entry_id", "entry_source", "integrity", "mode", "verdict", "tiers",
                "provenance", "done")


def canonical(obj) -> bytes:
    """The canonical JSON bytes of ``obj``: sorted keys, no spaces, UTF-8, no NaN.

    Raises:
        ValueError: a NaN or infinite float (JSON has none).
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def sha256_file(path) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def paths_for(notebook) -> tuple[Path, Path]:
    """``(NAME.attestation.json, NAME.attestation.sig)`` beside ``NAME.ipynb``."""
    notebook = Path(notebook)
    stem = notebook.name[:-len(".ipynb")] if notebook.name.endswith(".ipynb") else notebook.name
    return (notebook.with_name(stem + STATEMENT_SUFFIX),
            notebook.with_name(stem + SIGNATURE_SUFFIX))


def crate_entry_names(name: str, sha256: str | None) -> list[str]:
    """The names a crate may give its copy of the entry file ``name`` with SHA-256
    ``sha256``, inside :data:`CRATE_ENTRIES` (first the plain name)."""
    return [name] + ([f"{sha256[:12]}-{name}"] if isinstance(sha256, str) and sha256 else [])


def entry_file_name(entry_file, folder) -> str:
    """How an attestation in ``folder`` names the entry file it attests: its path
    relative to ``folder`` (POSIX) when it lies inside it, else its file name (the entry
    id and ``.json``): never an absolute path of the machine (an attestation is published
    with its notebook)."""
    entry_file, folder = Path(entry_file), Path(folder)
    try:
        return entry_file.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return entry_file.name


def toolkit_version() -> str | None:
    """qencode-nb's installed version (``importlib.metadata``), or None."""
    from importlib import metadata

    try:
        return metadata.version("qencode-nb")
    except metadata.PackageNotFoundError:
        return None


def _utc_now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def statement(notebook, key_id: str) -> dict:
    """The statement of one executed audit notebook (see the module docstring).

    Raises:
        AttestationError: not a readable notebook, no ``done`` record (a failed or
            partial run), no ``verdict``/``entry_source`` record (not an audit), or the
            entry file it read no longer exists.
    """
    from qencode_nb.notebook.record import encode, iter_records

    notebook = Path(notebook)
    try:   # plain JSON, as read_records reads it without nbformat (whose import takes seconds)
        records = dict(iter_records(json.loads(notebook.read_text(encoding="utf-8"))))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise AttestationError(f"{notebook}: not a readable notebook ({exc})") from None
    missing = [n for n in ("verdict", "tiers", "entry_source") if n not in records]
    if missing:
        raise AttestationError(f"{notebook}: not an audit notebook (no {', '.join(missing)} "
                               "record); only executed audits (notebooks/audit.ipynb) are signed")
    if records.get("done") is not True:
        reason = records.get("error")
        raise AttestationError(f"{notebook}: the audit did not complete (no done record"
                               + (f"; error: {reason}" if reason else "") + "); only "
                               "completed audits are signed")
    entry_file = Path(records["entry_source"])
    if not entry_file.is_file():
        raise AttestationError(f"{notebook}: its entry file {entry_file} (entry_source) does "
                               "not exist here, so its SHA-256 cannot be attested")
    integ = records.get("integrity") or {}
    provenance = records.get("provenance")
    return {
        "format": FORMAT,
        "entry": {"id": records.get("entry_id"),
                  "file": entry_file_name(entry_file, notebook.parent),
                  "sha256": sha256_file(entry_file),
                  "qencode_sha256": integ.get("recorded"),
                  "integrity": integ.get("status"), "signature": integ.get("signature")},
        "notebook": {"file": notebook.name, "sha256": sha256_file(notebook)},
        "mode": records.get("mode"),
        "verdict": records["verdict"],
        "tiers": encode(records["tiers"]),
        "provenance_sha256": (hashlib.sha256(canonical(encode(provenance))).hexdigest()
                              if provenance is not None else None),
        "numeric_fingerprint": ((provenance or {}).get("numeric") or {}).get("hash"),
        "blas_profile": encode(records.get("blas_profile")),
        "stack": encode(records.get("stack")),
        "toolkit": {"name": "qencode-nb", "version": toolkit_version()},
        "signed_utc": _utc_now(),
        "key_id": key_id,
    }


@dataclass
class Signed:
    """One signed notebook: where its attestation and signature are, with which key."""

    notebook: Path
    statement_path: Path
    signature_path: Path
    key_id: str
    statement: dict


def sign(notebook, private_key) -> Signed:
    """Write ``NAME.attestation.json`` and ``NAME.attestation.sig`` beside ``notebook``
    (replacing earlier ones).

    Args:
        notebook: an executed audit notebook.
        private_key: an ``Ed25519PrivateKey`` (:func:`qencode_nb.trust.keys.load_private_key`).

    Raises:
        AttestationError: see :func:`statement`.
    """
    from qencode_nb.trust.keys import key_id

    notebook = Path(notebook)
    kid = key_id(private_key)
    body = statement(notebook, kid)
    data = canonical(body)
    signature = base64.b64encode(private_key.sign(data))
    statement_path, signature_path = paths_for(notebook)
    statement_path.write_bytes(data)
    signature_path.write_bytes(signature + b"\n")
    return Signed(notebook, statement_path, signature_path, kid, body)


@dataclass
class Verification:
    """The result of :func:`verify`: ``ok`` when nothing failed; ``checked`` says what
    was checked and found right, ``failures`` each reason."""

    attestation: Path
    key_id: str
    checked: list = field(default_factory=list)
    failures: list = field(default_factory=list)
    statement: dict | None = None

    @property
    def ok(self) -> bool:
        return not self.failures

    def report(self) -> str:
        """"verified" and what was checked, or "NOT verified" and every reason."""
        head = (f"verified: {self.attestation}" if self.ok
                else f"NOT verified: {self.attestation}")
        return "\n".join([head] + [f"  ok: {c}" for c in self.checked]
                         + [f"  FAILED: {f}" for f in self.failures])


def signature_path_of(statement_path) -> Path:
    """``NAME.attestation.sig`` for ``NAME.attestation.json``.

    Raises:
        AttestationError: the name does not end in :data:`STATEMENT_SUFFIX`.
    """
    statement_path = Path(statement_path)
    if not statement_path.name.endswith(STATEMENT_SUFFIX):
        raise AttestationError(f"{statement_path}: not an attestation file name; accepted: "
                               f"NAME{STATEMENT_SUFFIX} (written by `qencode-nb sign`)")
    return statement_path.with_name(statement_path.name[:-len(STATEMENT_SUFFIX)]
                                    + SIGNATURE_SUFFIX)


def _first_difference(a: bytes, b: bytes) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def verify(statement_path, public_key, entry_file=None) -> Verification:
    """Check an attestation: canonical JSON, the Ed25519 signature against
    ``public_key``, then the notebook and the entry file re-hashed.

    Args:
        statement_path: ``NAME.attestation.json`` (its ``.sig`` is beside it).
        public_key: an ``Ed25519PublicKey`` (:func:`qencode_nb.trust.keys.load_public_key`).
        entry_file: the entry file to re-hash instead of those
            :func:`entry_candidates` looks for (a copy of the database elsewhere).

    Raises:
        AttestationError: the attestation file is not there or not so named.
    """
    from cryptography.exceptions import InvalidSignature

    from qencode_nb.trust.keys import key_id

    statement_path = Path(statement_path)
    signature_path = signature_path_of(statement_path)
    if not statement_path.is_file():
        raise AttestationError(f"{statement_path}: no such attestation file")
    kid = key_id(public_key)
    result = Verification(statement_path, kid)
    data = statement_path.read_bytes()
    try:
        body = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        result.failures.append(f"attestation is not canonical JSON: it does not parse ({exc})")
        body = None
    if body is not None:
        again = canonical(body) if isinstance(body, dict) else b""
        if again != data:
            result.failures.append(
                "attestation is not canonical JSON (sorted keys, no spaces, UTF-8, no "
                f"trailing newline): first difference at byte {_first_difference(data, again)}")
        else:
            result.checked.append("canonical JSON")
    _check_signature(result, data, signature_path, public_key, body, InvalidSignature)
    if isinstance(body, dict):
        result.statement = body
        _check_files(result, body, statement_path.parent, entry_file)
    return result


def _check_signature(result, data, signature_path, public_key, body, invalid) -> None:
    try:
        text = signature_path.read_bytes().strip()
    except OSError as exc:
        result.failures.append(f"no signature: {signature_path} ({exc.strerror})")
        return
    try:
        signature = base64.b64decode(text, validate=True)
    except ValueError:
        result.failures.append(f"signature {signature_path} is not base64")
        return
    stated = body.get("key_id") if isinstance(body, dict) else None
    try:
        public_key.verify(signature, data)
    except invalid:
        named = f" (the attestation names key {stated})" if stated and stated != result.key_id \
            else ""
        result.failures.append(f"signature does not match key {result.key_id}{named}")
        return
    if stated != result.key_id:
        result.failures.append(f"the attestation names key {stated} but was signed by key "
                               f"{result.key_id}")
        return
    result.checked.append(f"Ed25519 signature by key {result.key_id}")


def entry_candidates(body: dict, folder: Path, entry_file=None) -> list[Path]:
    """Where :func:`verify` looks for the entry file an attestation in ``folder`` names,
    in order: ``entry_file`` alone when given; else the ``entry.file`` it names, relative
    to ``folder`` (an attestation written before issue 36 names an absolute path, kept);
    the copy a provenance crate of ``folder`` keeps (:data:`CRATE_ENTRIES`); the file the
    notebook beside it read (its ``entry_source`` record).  Whichever is found must hash
    to the attested SHA-256."""
    if entry_file:
        return [Path(entry_file)]
    entry, nb = body.get("entry") or {}, body.get("notebook") or {}
    named = str(entry.get("file"))
    out = [folder / named]
    out += [folder / CRATE_ENTRIES / n for n in crate_entry_names(Path(named).name,
                                                                entry.get("sha256"))]
    from qencode_nb.notebook.record import iter_records

    try:
        data = json.loads((folder / str(nb.get("file"))).read_text(encoding="utf-8"))
        source = dict(iter_records(data)).get("entry_source")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        source = None
    if isinstance(source, str) and source:
        out.append(Path(source))
    return list(dict.fromkeys(out))


def _check_files(result, body: dict, folder: Path, entry_file) -> None:
    nb = body.get("notebook") or {}
    entry = body.get("entry") or {}
    found = entry_candidates(body, folder, entry_file)
    checks = [("notebook", [folder / str(nb.get("file"))], nb.get("sha256"), None),
              ("entry", found, entry.get("sha256"), entry.get("id"))]
    for what, places, attested, label in checks:
        path = next((p for p in places if p.is_file()), None)
        if path is None:
            hint = (f" (looked for {', '.join(map(str, places))}; pass --entry FILE to "
                    "check a copy elsewhere)" if what == "entry" else "")
            result.failures.append(f"{what} file not found: {places[0]}{hint}")
            continue
        now = sha256_file(path)
        if now != attested:
            result.failures.append(f"{what} changed: sha256 {now} != {attested} (attested), "
                                   f"{path}")
        else:
            result.checked.append(f"{what} {path} sha256 {now}"
                                  + (f" ({label})" if label else ""))
