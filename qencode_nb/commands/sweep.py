"""``qencode-nb sweep DIR_OR_NAMES… [--mode M] [--workers N] [--scheduler ADDR]
[--subset ci] [--timeout S] [--engine sector|fast] [--out RUNS_DIR]``: audits many
entries (:mod:`qencode_nb.batch.sweep`), one process and kernel each, and writes
``RUNS_DIR/summary.csv`` and ``RUNS_DIR/margins.{png,svg}``; it prints the tier,
replay and boundary counts (:mod:`qencode_nb.readout.counts`).  Exit status 1 when any
audit failed (each failure listed first, with its notebook), 2 on bad arguments.
"""

from __future__ import annotations

import sys
from pathlib import Path

from qencode_nb.commands.run_args import CORETYPE_HELP, ENGINE_HELP, run_options
from qencode_nb.errors import QencodeNbError


def add_parsers(sub) -> None:
    """Add ``sweep`` to the subparsers ``sub``."""
    sw = sub.add_parser("sweep", help="audit many entries, one kernel each; writes summary.csv")
    sw.add_argument("targets", nargs="+",
                    help="folders of QEncode JSON files, entry files, or bundled names")
    sw.add_argument("--mode", default="full", help="full (default), replay or rerun")
    sw.add_argument("--workers", type=int, default=1, help="parallel runs (default 1)")
    sw.add_argument("--threads", type=int, default=1, dest="blas_threads", metavar="THREADS",
                    help="BLAS threads per run (default 1)")
    sw.add_argument("--coretype", default=None, dest="blas_coretype", metavar="CORETYPE",
                    help=CORETYPE_HELP)
    sw.add_argument("--db", default=None, help="folder completing bundled entries")
    sw.add_argument("--out", default="runs", help="folder for executed notebooks (default runs)")
    sw.add_argument("--timeout", type=float, default=None,
                    help="per-run wall-clock timeout in seconds (default: none)")
    sw.add_argument("--cell-timeout", type=int, default=None,
                    help="per-cell timeout in seconds (default: none)")
    sw.add_argument("--scheduler", default=None,
                    help="Dask distributed scheduler address, e.g. tcp://127.0.0.1:8786 "
                         "(default: a local process pool)")
    sw.add_argument("--subset", default=None,
                    help="run a named subset of the targets: ci")
    sw.add_argument("--engine", default=None, help=ENGINE_HELP)
    sw.set_defaults(func=_sweep)


def _sweep(args) -> int:
    from qencode_nb.batch.sweep import sweep
    from qencode_nb.readout.counts import (TIER_STATUSES, boundary_warnings, failures,
                                           replay_counts, tier_counts)

    try:
        table = sweep(args.targets, args.out, run_options(args), subset=args.subset)
    except QencodeNbError as exc:
        print(f"qencode-nb: {exc}", file=sys.stderr)
        return 2
    status = print_failures(failed := failures(table), Path(args.out))   # failures first
    print(f"{len(table) - len(failed)}/{len(table)} audits done; summary: "
          f"{Path(args.out) / 'summary.csv'}; margin plot: {Path(args.out) / 'margins.png'}")
    if len(failed) < len(table):
        print(f"tiers ({'/'.join(TIER_STATUSES)}): " + "; ".join(
            f"{tier} " + "/".join(str(counts.get(v, 0)) for v in TIER_STATUSES)
            for tier, counts in tier_counts(table).items()))
        replays = replay_counts(table)
        print("replay (pass/fail/n/a): "
              + "/".join(str(replays.get(v, 0)) for v in ("pass", "fail", "n/a")))
        for name, warning in boundary_warnings(table).items():
            print(f"WARNING {name}: {warning}")
    return status


def print_failures(failed: dict, folder: Path | None = None) -> int:
    """``FAILED <run>: <reason>`` per failed run (and its notebook in ``folder``); 1 if any."""
    for name, failure in failed.items():
        print(f"FAILED {name}: {failure}" + (f"\n  executed notebook: {folder / name}.ipynb"
                                             if folder else ""))
    return 1 if failed else 0
