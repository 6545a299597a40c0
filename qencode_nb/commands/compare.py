"""``qencode-nb compare RUNS_A RUNS_B``: two folders of executed audits (two sweeps,
e.g. on two hosts or under two kernel profiles) compared entry by entry
(:mod:`qencode_nb.readout.cross_host`): bit-identical, |ΔE|, certification change,
fingerprint difference, and the two rates.  Exit status 0, 2 on a bad folder.
"""

from __future__ import annotations

import sys

from qencode_nb.commands.flags import as_typed
from qencode_nb.errors import QencodeNbError


def add_parsers(sub) -> None:
    """Add ``compare`` to the subparsers ``sub``."""
    cp = sub.add_parser("compare", help="compare two folders of executed audits entry by "
                                        "entry: bit-identical and certification-preserved rates")
    cp.add_argument("runs_a", help="a folder of executed audit notebooks (e.g. a sweep's --out)")
    cp.add_argument("runs_b", help="the folder to compare it with")
    cp.add_argument("--csv", default=None, help="also write the per-entry table to this CSV")
    cp.set_defaults(func=_compare)


def _compare(args) -> int:
    from qencode_nb.readout.cross_host import compare_folders, render

    try:
        table = compare_folders(args.runs_a, args.runs_b)
    except QencodeNbError as exc:
        print(f"qencode-nb: {as_typed(exc, args)}", file=sys.stderr)
        return 2
    print(render(table, args.runs_a, args.runs_b))
    from qencode_nb.readout.manifest import stale_text

    for folder in (args.runs_a, args.runs_b):
        if stale_text(folder):
            print(f"{folder}: {stale_text(folder)}")
    if args.csv:
        from pathlib import Path

        from qencode_nb.readout.published import published_csv

        Path(args.csv).write_text(published_csv(table, Path(args.csv).parent),
                                  encoding="utf-8")
    return 0
