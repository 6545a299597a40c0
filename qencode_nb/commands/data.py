"""``qencode-nb data fetch [--only NAME ...] [--from MIRROR] [--dir DIR] [--retries N]``
(or ``--generator COMMIT``: QEncode's generator tree at that commit,
:mod:`qencode_nb.studies.generator_fetch`):
the public QEncode v4.4 database on demand (:mod:`qencode_nb.entry.database`: pooch,
every file's SHA-256 checked).  ``--from`` (also spelt ``--base-url``) names a mirror
laid out like the cache folder: an http(s) URL, or offline a folder or a ``file://`` URL
whose files are copied in under the same SHA-256 check.  Exit status 1 when a download
(or copy) failed or its hash differs, 2 on bad arguments (a local mirror that is not a
folder, an unknown name).
"""

from __future__ import annotations

import sys

from qencode_nb.commands.flags import as_typed
from qencode_nb.errors import DataFetchError, QencodeNbError


def add_parsers(sub) -> None:
    """Add ``data`` and its actions to the subparsers ``sub``."""
    da = sub.add_parser("data", help="the public QEncode v4.4 database on demand "
                                     "(pooch, every file's SHA-256 checked)")
    dacts = da.add_subparsers(dest="action", required=True)
    fe = dacts.add_parser("fetch", help="download the database (or the files named) into "
                                        "the cache folder and print it; its db/ holds the entries")
    fe.add_argument("--only", nargs="+", default=None,
                    help="entry ids or release file names (default: every file)")
    fe.add_argument("--from", "--base-url", dest="base_url", default=None, metavar="MIRROR",
                    help="a mirror laid out like the cache folder (db/<entry id>.json, "
                         "schema_v4.json, ...): an http(s) URL, or a local folder or "
                         "file:// URL, copied with the same SHA-256 checks (default: the "
                         "QEncode repository at the registry's commit)")
    fe.add_argument("--dir", default=None,
                    help="cache folder (default: $QENCODE_NB_DATA, else ~/.cache/qencode-nb/"
                         "qencode-v4)")
    fe.add_argument("--generator", default=None, metavar="COMMIT",
                    help="instead: QEncode's generator tree at COMMIT (an entry's "
                         "provenance.tool_versions.git_commit), from the repository's archive "
                         "(or --from's <commit>.tar.gz), its files' digest checked against "
                         "data/qencode-history/generator-registry.txt; into --dir (default "
                         "$QENCODE_NB_GENERATOR_CACHE, else ~/.cache/qencode-nb/generator), "
                         "which `study generator` reads")
    fe.add_argument("--retries", type=int, default=None,
                    help="attempts after the first when a download fails or its hash differs")
    da.set_defaults(func=_data)


def _data(args) -> int:
    from qencode_nb.entry import database

    if args.generator is not None:
        return _generator(args)

    retries = database.RETRIES if args.retries is None else args.retries
    try:
        folder = database.fetch(args.only, base_url=args.base_url, path=args.dir,
                                retries=retries, progress=sys.stderr.isatty())
    except QencodeNbError as exc:
        print(f"qencode-nb: {as_typed(exc, args)}", file=sys.stderr)
        return 1 if isinstance(exc, DataFetchError) else 2
    n = len(database.select(args.only))
    print(f"{n} file(s) of QEncode v4.4 checked in {folder} (entries in {folder / 'db'})")
    return 0


def _generator(args) -> int:
    """``data fetch --generator COMMIT``: the generator tree, fetched and checked."""
    from qencode_nb.studies.generator_fetch import fetch_generator

    if args.only:
        print("qencode-nb: --generator fetches one tree; give it without --only",
              file=sys.stderr)
        return 2
    try:
        tree = fetch_generator(args.generator, base_url=args.base_url, path=args.dir)
    except QencodeNbError as exc:
        print(f"qencode-nb: {as_typed(exc, args)}", file=sys.stderr)
        return 1 if isinstance(exc, DataFetchError) else 2
    print(f"QEncode's generator at {tree.name} checked in {tree} (`qencode-nb study generator "
          f"ENTRY --generator {tree.parent}`)")
    return 0
