"""``qencode-nb report RUNS_DIR [--out PAGE.html] [--no-notebooks] [--claims CLAIMS.csv]``:
one self-contained HTML page of the audit notebooks of a folder, each linked to its
notebook rendered in ``PAGE_notebooks/`` (:func:`qencode_nb.readout.report.write_report`;
default ``RUNS_DIR/report.html``); ``--claims`` adds the claims section (a ``claims.csv``
of ``qencode-nb claims --out``); exit status 2 when RUNS_DIR holds no audit notebook or
``--claims`` is not a claims table.  A record sweep's folder (``record.json``) gets one
page grouped by release, with its claims and curves (``--out`` only directly in that
folder, no ``--claims``: exit status 2)
(:func:`qencode_nb.readout.history_report.write_history_report`).
"""

from __future__ import annotations

import sys

from qencode_nb.commands.flags import as_typed
from qencode_nb.errors import QencodeNbError


def add_parsers(sub) -> None:
    """Add ``report`` to the subparsers ``sub``."""
    rp = sub.add_parser("report", help="one self-contained HTML page of a folder of "
                        "executed audits (a sweep's or robustness study's --out)")
    rp.add_argument("runs_dir", metavar="RUNS_DIR", help="folder of executed audits")
    rp.add_argument("--out", default=None, help="the page (default RUNS_DIR/report.html)")
    rp.add_argument("--no-notebooks", dest="notebooks", action="store_false",
                    help="do not render the executed notebooks to HTML (rows link nowhere)")
    rp.add_argument("--claims", default=None, metavar="CLAIMS.csv",
                    help="a claims.csv (qencode-nb claims --out) shown as its own section")
    rp.set_defaults(func=_report)


def _report(args) -> int:
    from pathlib import Path

    from qencode_nb.readout.report import write_report

    if (Path(args.runs_dir) / "record.json").is_file():   # a record sweep's folder
        from qencode_nb.readout.history_report import write_history_report

        folder = Path(args.runs_dir).resolve()
        if args.claims is not None:
            print(f"qencode-nb: --claims {args.claims!r} is not accepted with a record "
                  "sweep's folder; accepted: no --claims (its claims.csv is read from "
                  "record.json)", file=sys.stderr)
            return 2
        if args.out is not None and Path(args.out).resolve().parent != folder:
            print(f"qencode-nb: --out {args.out!r} is not accepted for a record sweep's "
                  f"page; accepted: a page directly in {args.runs_dir} (its links are "
                  "relative to that folder)", file=sys.stderr)
            return 2
        try:
            page = write_history_report(args.runs_dir, args.out, notebooks=args.notebooks)
        except QencodeNbError as exc:
            print(f"qencode-nb: {as_typed(exc, args)}", file=sys.stderr)
            return 2
        print(f"report: {page} (grouped by release; each release's full report in its "
              "folder)")
        return 0

    try:
        report = write_report(args.runs_dir, args.out, notebooks=args.notebooks,
                              claims=args.claims)
    except QencodeNbError as exc:
        print(f"qencode-nb: {as_typed(exc, args)}", file=sys.stderr)
        return 2
    failed = int((report.table["status"] != "done").sum())
    print(f"report: {report.path} ({len(report.table)} runs, {failed} failed"
          + (f"; notebook pages in {report.pages_dir}" if report.pages_dir else "") + ")")
    from qencode_nb.readout.manifest import stale_text

    if stale_text(args.runs_dir):
        print(stale_text(args.runs_dir))
    return 0
