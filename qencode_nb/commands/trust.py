"""``qencode-nb keygen | sign | verify | crate``: attestations and provenance crates.

``qencode-nb keygen --out KEY`` writes an Ed25519 key pair, ``KEY`` (private, PKCS8
PEM, mode 0600) and ``KEY.pub``, and prints the key id; it never overwrites a file.

``qencode-nb sign RUNS_DIR|AUDIT.ipynb --key KEY`` writes, for every audit notebook
(``metadata.qencode_nb.kind`` "audit", :func:`qencode_nb.readout.manifest.audit_notebooks`),
``NAME.attestation.json`` and ``NAME.attestation.sig`` beside it
(:mod:`qencode_nb.trust.attestation`); a notebook that cannot be signed (a failed run,
its entry file gone) is listed with the reason.

``qencode-nb verify ATTESTATION --public-key PUB [--entry FILE]`` checks the signature
and re-hashes the notebook and the entry file it names, and prints "verified" with what
was checked, or every reason it is not.

``qencode-nb crate RUNS_DIR|AUDIT.ipynb`` writes ``ro-crate-metadata.json`` (Process Run
Crate 0.6, :mod:`qencode_nb.trust.crate`): of a folder, one ``CreateAction`` per audit
notebook (and the sweep's ``summary.csv``); of one notebook, the crate of its folder
with that audit added to those its crate already describes.  An entry file is copied
into the crate only when its SHA-256 is the one the audit recorded; one left out is
printed ("crate: warning: FILE: left out of the crate, named by NOTEBOOK: why") and
described in the metadata as not copied.

Exit status: 0 when everything was done or verified, 1 when a notebook was not signed
or verification failed, 2 on bad arguments (a bad key file, no audit notebook).
"""

from __future__ import annotations

import sys
from pathlib import Path

from qencode_nb.commands.flags import as_typed
from qencode_nb.errors import AttestationError, CrateWarning, KeyFileError, QencodeNbError


def _error(exc, args) -> int:
    print(f"qencode-nb: {as_typed(exc, args)}", file=sys.stderr)
    return 2


def audit_targets(target) -> list[Path]:
    """The audit notebooks of ``RUNS_DIR`` or the one ``AUDIT.ipynb`` given.

    Raises:
        QencodeNbError: no such path, a folder without audit notebooks, or a notebook
            whose recorded kind is not "audit".
    """
    from qencode_nb.readout.manifest import KIND_METADATA, audit_notebooks, notebook_kind

    path = Path(target)
    if path.is_dir():
        found = audit_notebooks(path)
        if not found:
            raise QencodeNbError(f"{path}: holds no audit notebook (an .ipynb whose "
                                 f"metadata.{KIND_METADATA}.kind is 'audit')")
        return found
    if not path.is_file():
        raise QencodeNbError(f"{path}: no such notebook or folder; accepted: an executed "
                             "audit notebook or a folder of them")
    kind = notebook_kind(path)
    if kind != "audit":
        raise QencodeNbError(f"{path}: not an audit notebook (metadata.{KIND_METADATA}.kind "
                             f"is {kind!r}; accepted: 'audit')")
    return [path]


def _keygen(args) -> int:
    from qencode_nb.trust.keys import generate

    try:
        private, public, kid = generate(args.out)
    except KeyFileError as exc:
        return _error(exc, args)
    print(f"private key: {private} (mode 0600; keep it to yourself)\n"
          f"public key: {public} (give it to whoever verifies)\nkey id: {kid}")
    return 0


def _sign(args) -> int:
    from qencode_nb.trust.attestation import sign
    from qencode_nb.trust.keys import load_private_key

    try:
        key = load_private_key(args.key)
        notebooks = audit_targets(args.target)
    except QencodeNbError as exc:
        return _error(exc, args)
    unsigned = 0
    for nb in notebooks:
        try:
            signed = sign(nb, key)
        except AttestationError as exc:
            unsigned += 1
            print(f"NOT signed {nb}: {exc}")
            continue
        print(f"signed {nb}: {signed.statement_path}, {signed.signature_path.name} "
              f"(key {signed.key_id})")
    print(f"{len(notebooks) - unsigned}/{len(notebooks)} audit(s) signed")
    return 1 if unsigned else 0


def _verify(args) -> int:
    from qencode_nb.trust.attestation import verify
    from qencode_nb.trust.keys import load_public_key

    try:
        key = load_public_key(args.public_key)
        result = verify(args.attestation, key, entry_file=args.entry)
    except QencodeNbError as exc:
        return _error(exc, args)
    print(result.report())
    return 0 if result.ok else 1


def _crate(args) -> int:
    import warnings

    from qencode_nb.trust.crate import described_notebooks, write_crate

    try:
        notebooks = audit_targets(args.target)
        target = Path(args.target)
        if target.is_dir():
            folder, summary = target, target / "summary.csv"
        else:
            folder = target.parent
            known, had_summary = described_notebooks(folder)
            notebooks = known + notebooks
            summary = folder / "summary.csv" if had_summary else None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", CrateWarning)
            path = write_crate(folder, notebooks, summary=summary)
    except QencodeNbError as exc:
        return _error(exc, args)
    n = len({Path(p).resolve() for p in notebooks})
    print(f"crate: {path} ({n} audit(s), Process Run Crate 0.6)")
    for w in caught:
        if issubclass(w.category, CrateWarning):
            print(f"crate: warning: {w.message}")
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return 0


def add_parsers(sub) -> None:
    """Add ``keygen``, ``sign``, ``verify`` and ``crate`` to the subparsers ``sub``."""
    kg = sub.add_parser("keygen", help="write an Ed25519 key pair for signing audits")
    kg.add_argument("--out", required=True, metavar="KEY",
                    help="the private key file (KEY.pub is written beside it); never "
                         "overwritten")
    kg.set_defaults(func=_keygen)

    sg = sub.add_parser("sign", help="write a signed attestation beside each audit notebook")
    sg.add_argument("target", metavar="RUNS_DIR|AUDIT.ipynb",
                    help="a folder of executed audits or one executed audit notebook")
    sg.add_argument("--key", required=True, help="Ed25519 private key (PEM, from keygen)")
    sg.set_defaults(func=_sign)

    vf = sub.add_parser("verify", help="check an attestation's signature and re-hash the "
                        "notebook and entry it names")
    vf.add_argument("attestation", metavar="ATTESTATION",
                    help="NAME.attestation.json (NAME.attestation.sig beside it)")
    vf.add_argument("--public-key", required=True, metavar="PUB",
                    help="Ed25519 public key (PEM, KEY.pub from keygen)")
    vf.add_argument("--entry", default=None, metavar="FILE",
                    help="re-hash this entry file instead of the path the attestation names")
    vf.set_defaults(func=_verify)

    cr = sub.add_parser("crate", help="write ro-crate-metadata.json (Process Run Crate 0.6) "
                        "for a folder of audits or one audit")
    cr.add_argument("target", metavar="RUNS_DIR|AUDIT.ipynb",
                    help="a folder of executed audits or one executed audit notebook")
    cr.set_defaults(func=_crate)
