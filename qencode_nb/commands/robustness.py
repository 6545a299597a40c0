"""``qencode-nb robustness DIR_OR_NAMES… [--threads 1 2] [--coretypes Haswell SkylakeX]
[--numpy-dispatch on off] [--kernelspecs python3 qencode-nb-latest] [--engine E] [--mode M]
[--subset ci] [--db DIR] [--stack STACK] [--proof-budget SECONDS] [--workers N]
[--scheduler ADDR] [--timeout S] [--cell-timeout S] [--out DIR]``:
every entry re-run under every perturbation (the Cartesian product of the axes given; each
axis defaults to its baseline: 1 thread, no coretype, numpy's CPU dispatch as the kernel
profile has it, ``python3``), one process and kernel per run, resumable
(:func:`qencode_nb.studies.robustness.robustness`).

It writes ``robustness.csv`` (one row per run), ``robustness_summary.csv`` (per entry:
certified fraction, error range in mHa, ``fragile`` from the published margin beside
``fragile_measured`` and ``lost_certification_in``) and ``robustness.{png,svg}`` in
--out (default ``runs/robustness``), and prints the summary; exit status 1 when a run
failed, 2 on bad arguments (refused before any run).
"""

from __future__ import annotations

import sys

from qencode_nb.commands.flags import as_typed
from qencode_nb.commands.run_args import add_run_options, run_options
from qencode_nb.commands.sweep import print_failures
from qencode_nb.errors import QencodeNbError


def add_parsers(sub) -> None:
    """Add ``robustness`` to the subparsers ``sub``."""
    rb = sub.add_parser("robustness", help="re-run every entry under every perturbation "
                        "(threads x coretypes x numpy dispatch x kernelspecs); writes "
                        "robustness.csv")
    rb.add_argument("targets", nargs="+",
                    help="folders of QEncode JSON files, entry files, or bundled names")
    rb.add_argument("--threads", type=int, nargs="+", default=None,
                    help="BLAS thread counts (default 1)")
    rb.add_argument("--coretypes", nargs="+", default=None,
                    help="OpenBLAS coretypes; 'default' for none set (default: none set)")
    rb.add_argument("--numpy-dispatch", nargs="+", default=None, dest="numpy_dispatch",
                    metavar="ON_OFF",
                    help="numpy's AVX-512 loops (NPY_DISABLE_CPU_FEATURES): on, off, or "
                         "'default' for the kernel profile's own (default: the profile's)")
    rb.add_argument("--kernelspecs", nargs="+", default=None,
                    help="Jupyter kernelspecs (default python3; see `qencode-nb stack`)")
    # the --threads and --coretypes axes replace --threads and --coretype
    add_run_options(rb, study=True, replaced=("blas_threads", "blas_coretype"))
    rb.add_argument("--subset", default=None, help="run a named subset of the targets: ci")
    rb.add_argument("--out", default="runs/robustness",
                    help="folder for notebooks, CSVs and figure (default runs/robustness)")
    rb.set_defaults(func=_robustness)


def _robustness(args) -> int:
    from qencode_nb.studies.robustness import robustness

    try:
        result = robustness(args.targets, args.out, run_options(args), threads=args.threads,
                            coretypes=args.coretypes, kernelspecs=args.kernelspecs,
                            numpy_dispatch=args.numpy_dispatch, subset=args.subset)
    except QencodeNbError as exc:
        print(f"qencode-nb: {as_typed(exc, args)}", file=sys.stderr)
        return 2
    # pandas (numpy) after the runs: their pool is forked from this process, and a run's
    # kernel is forked from a template only where numpy is not imported
    # (qencode_nb.executor.kernel_fork.NOT_BEFORE_PINS)
    import pandas as pd

    from qencode_nb.entry.labels import short_name

    shown = result.summary.drop(columns=["gained_certification_in"])
    shown = shown.assign(entry=[short_name(e) for e in shown["entry"]])
    with pd.option_context("display.width", 250, "display.max_columns", 20,
                           "display.max_colwidth", 60):
        print(shown.to_string(index=False, float_format=lambda v: f"{v:.6g}"))
    print(result.report())
    return print_failures(result.failures())
