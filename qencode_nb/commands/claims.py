"""``qencode-nb claims FOLDER [--db DB] [--public-key KEY.pub] [--out DIR]``: check what a
QEncode-like repository claims against its database (:mod:`qencode_nb.claims`).

FOLDER is a checkout of a QEncode-like repository, or ``../shared/qencode-history``
with ``--db ../shared/qencode-v4/db`` (default: ``FOLDER/releases/v4/db`` when it holds
entry files).  Every leaderboard row, every receipt (its entry hash, its signature
with ``--public-key``) and every stated claim of :data:`qencode_nb.claims.stated.STATED`
gets a row: claim, where, status (holds / stale / false / unverifiable), evidence.
The table is printed (flagged rows first, then the counts) and, with ``--out DIR``,
written as ``DIR/claims.csv`` (``qencode-nb report RUNS --claims DIR/claims.csv``
shows it).

Exit status, as ``qencode-nb audit``'s: 0 when no claim is flagged (every row holds or
is unverifiable), 3 when one is stale or false, 2 on bad input (FOLDER not a folder
or holding no leaderboard, receipts file or README.md; ``--db`` not a folder; a key
file that is not an Ed25519 public key; an unreadable file).
"""

from __future__ import annotations

import sys

from qencode_nb.commands.flags import as_typed


def add_parsers(sub) -> None:
    """Add ``claims`` to the subparsers ``sub``."""
    cp = sub.add_parser("claims", help="check a QEncode-like repository's leaderboard rows, "
                        "receipts and stated claims against its database")
    cp.add_argument("folder", metavar="FOLDER", help="a checkout of a QEncode-like repository")
    cp.add_argument("--db", default=None, help="the v4 database folder (default "
                    "FOLDER/releases/v4/db)")
    cp.add_argument("--public-key", dest="public_key", default=None,
                    help="Ed25519 public key (PEM) to verify the receipts' signatures")
    cp.add_argument("--out", default=None, help="folder to write claims.csv into")
    cp.set_defaults(func=_claims)


def _claims(args) -> int:
    from qencode_nb.claims.check import check_folder
    from qencode_nb.claims.table import EXIT_BAD_INPUT, exit_status, text, write_csv
    from qencode_nb.errors import QencodeNbError

    try:
        rows = check_folder(args.folder, db=args.db, public_key=args.public_key)
        path = write_csv(rows, args.out) if args.out else None
    except (QencodeNbError, OSError) as exc:
        print(f"qencode-nb: {as_typed(exc, args)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(text(rows))
    if path is not None:
        print(f"claims: {path}")
    return exit_status(rows)
