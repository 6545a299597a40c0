"""``qencode-nb curve FILE [--engine fast|sector] [--out DIR] [--points R,...]
[--active-space NE,NO] [--cap N] [--no-plot] [--threads N] [--coretype K]``:
a QEncode v4 dissociation curve audited point by point (:func:`qencode_nb.studies.curve.audit_curve`): each point rebuilt from the
curve's molecule, basis, active space and orbitals, re-run with ADAPT-VQE under the
curve's operator cap, and compared with the published energy, gap and operator count.
BLAS and OpenMP threads are pinned first (default 1), as the audits pin theirs.

It writes ``curve.csv``, ``curve_points.json`` and ``curve.{png,pdf,svg}`` with
``curve.caption.md`` in --out (default ``runs/curve-<molecule>``), prints the table and
the points whose certification changed; exit status 1 when a point failed (its row
holds the error), 2 on bad arguments (refused before any point).
"""

from __future__ import annotations

import sys

from qencode_nb.commands.flags import as_typed
from qencode_nb.commands.run_args import coretype_help
from qencode_nb.errors import QencodeNbError


def add_parsers(sub) -> None:
    """Add ``curve`` to the subparsers ``sub``."""
    cv = sub.add_parser("curve", help="audit a QEncode dissociation curve point by point "
                        "(ADAPT re-run per bond length); writes curve.csv and a figure")
    cv.add_argument("file", help="a curve JSON file, e.g. "
                    "data/qencode-history/releases/v4/curves/h2_dissociation.json")
    cv.add_argument("--engine", default="fast", choices=("fast", "sector"),
                    help="engine of the ADAPT re-runs (default fast)")
    cv.add_argument("--out", default=None,
                    help="output folder (default runs/curve-<molecule>)")
    cv.add_argument("--points", default=None,
                    help="comma-separated bond lengths to audit, e.g. 0.4,0.7 (default all)")
    cv.add_argument("--active-space", default=None,
                    help="NE,NO overriding the active space (default: the file's, checked "
                         "against the published CASCI)")
    cv.add_argument("--cap", type=int, default=None,
                    help="ADAPT operator cap (default the curves' 40)")
    cv.add_argument("--no-plot", action="store_true", help="write no figure")
    cv.add_argument("--threads", type=int, default=1, dest="blas_threads", metavar="THREADS",
                    help="BLAS and OpenMP threads, pinned before numpy loads (default 1: "
                         "PySCF's threaded sums change the last bits from run to run)")
    cv.add_argument("--coretype", default=None, dest="blas_coretype", metavar="CORETYPE",
                    help=coretype_help())
    cv.set_defaults(func=_curve)


def _curve(args) -> int:
    from qencode_nb.notebook.pins import pin
    from qencode_nb.rules import CURVE_MAX_OPERATORS
    from qencode_nb.studies.curve import audit_curve

    try:
        pin(args.blas_threads, args.blas_coretype)    # before anything loads numpy
        result = audit_curve(args.file, engine=args.engine, out=args.out, points=args.points,
                             active_space=args.active_space,
                             max_operators=args.cap or CURVE_MAX_OPERATORS,
                             plot=not args.no_plot)
    except QencodeNbError as exc:
        print(f"qencode-nb: {as_typed(exc, args)}", file=sys.stderr)
        return 2
    import pandas as pd

    shown = result.table.drop(columns=["undeclared", "z2_sectors", "casci_published",
                                       "casci_regenerated"])
    with pd.option_context("display.width", 250, "display.max_columns", 30,
                           "display.max_colwidth", 50):
        print(shown.to_string(index=False, float_format=lambda v: f"{v:.10g}"))
    print(result.report())
    print(f"wrote {result.out / 'curve.csv'}"
          + (f" and {result.figure[0].with_suffix('')}.{{png,pdf,svg}}" if result.figure
             else ""))
    return 1 if result.table["error"].notna().any() else 0
