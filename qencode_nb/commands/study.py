"""``qencode-nb study threads | kernels | optimizers | environments ENTRY ...``: one
entry re-run many times, each run its own process and kernel
(:func:`qencode_nb.studies.run`).

``qencode-nb study threads ENTRY [--threads 1 2 4] [--repeats R] [run options]
[--out DIR]`` re-runs one entry R times per BLAS thread count, and ``qencode-nb study
kernels ENTRY [--coretypes A B ...] [--repeats R] [run options] [--out DIR]`` once per
OpenBLAS kernel at --threads (default 1; default kernels: every one this CPU can run),
and ``qencode-nb study optimizers ENTRY [--optimizers COBYLA L-BFGS-B
"Adam(lr=0.05)"] [--repeats R] [run options] [--out DIR]`` once per optimiser
replacing the recorded one (hea and uccsd entries) at --threads (default 1).  The run
options are every run command's (:func:`qencode_nb.commands.run_args.add_run_options`:
--mode, --engine, --threads, --coretype, --stack, --db, --proof-budget, --timeout per
run, --cell-timeout per cell, --workers, --scheduler), less the one a study's own axis
replaces (:data:`STUDY_AXES`).  Prints the per-group
summary (errors in mHa, median nfev and wall time in s side by side) and the
finding; writes ``threads.csv`` / ``kernels.csv`` / ``optimizers.csv`` and
the figure ``threads.{png,pdf,svg}`` / ``kernels.{png,pdf,svg}`` /
``optimizers.{png,pdf,svg}`` in --out.  Exit status 0, 1 when a run failed, 2 on
bad arguments.

``qencode-nb study environments ENTRY [--kernelspecs python3 qencode-nb-latest ...]
[--repeats R] [--threads N] [...]`` re-runs the entry in each Jupyter kernel (one
package stack each, the first the baseline; ``qencode-nb stack``,
:mod:`qencode_nb.commands.stack`) and also prints the versions that differ and the
energy/error differences; it writes ``environments.csv``,
``environments_versions.csv``, ``environments_differences.csv`` and the figure.
With ``--explain [--budget N]`` it instead searches which environment re-runs the entry
to its published bits (:mod:`qencode_nb.studies.explain`): ``explain.csv``, the figure
``explain.{png,pdf,svg}``, the answer printed last (exit 0; 1 when a run failed).
Given a sweep's ``--out`` folder instead of an entry, it explains or bounds every miss of
the sweep (:mod:`qencode_nb.studies.misses`): one search per miss in
``<out>/<run name>/`` (default ``out`` ``<folder>/misses``; a folder with an
``explain.csv`` is read, not searched again; ``--budget 0`` searches none, each miss
without a folder bounded by the sweep's own run) and ``misses.csv``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from qencode_nb.commands.flags import as_typed
from qencode_nb.commands.run_args import add_run_options, run_options
from qencode_nb.commands.sweep import print_failures
from qencode_nb.errors import QencodeNbError


#: The run options each study's own axis replaces: the thread counts of ``threads``
#: (``--threads 1 2``), the kernels of ``kernels`` (``--coretypes``), the stacks of
#: ``environments`` (``--kernelspecs``); ``optimizers`` replaces the recorded optimiser,
#: which only the recorded backend runs, so it takes no ``--engine``.
STUDY_AXES = {"threads": ("blas_threads",), "kernels": ("blas_coretype",),
              "optimizers": ("engine",), "environments": ("stack",)}


def add_parsers(sub) -> None:
    """Add ``study`` and its kinds to the subparsers ``sub``."""
    from qencode_nb.studies.optimizers import DEFAULT_OPTIMIZERS

    st = sub.add_parser("study", help="re-run one entry many times: threads, BLAS kernels "
                        "or optimisers")
    kinds = st.add_subparsers(dest="kind", required=True)
    th = kinds.add_parser("threads", help="vary the BLAS thread count; writes threads.csv")
    th.add_argument("--threads", type=int, nargs="+", default=[1, 2],
                    help="BLAS thread counts (default 1 2)")
    th.add_argument("--repeats", type=int, default=3, help="runs per thread count (default 3)")
    ke = kinds.add_parser("kernels", help="vary OPENBLAS_CORETYPE at 1 thread; "
                          "writes kernels.csv")
    ke.add_argument("--coretypes", nargs="+", default=None,
                    help="OpenBLAS coretypes (default: every one this CPU can run)")
    ke.add_argument("--repeats", type=int, default=1, help="runs per coretype (default 1)")
    op = kinds.add_parser("optimizers", help="replace the recorded optimiser of a hea/uccsd "
                          "entry; writes optimizers.csv")
    op.add_argument("--optimizers", nargs="+", default=list(DEFAULT_OPTIMIZERS),
                    help="optimisers (default: " + " ".join(DEFAULT_OPTIMIZERS) + ")")
    op.add_argument("--repeats", type=int, default=1, help="runs per optimiser (default 1)")
    en = kinds.add_parser("environments", help="re-run in Jupyter kernels with different "
                          "package stacks (see `qencode-nb stack`); writes environments.csv")
    en.add_argument("--kernelspecs", nargs="+", default=None,
                    help="kernelspecs, the first the baseline (default: python3 and every "
                         "qencode-nb-* stack)")
    en.add_argument("--repeats", type=int, default=1, help="runs per kernel (default 1)")
    en.add_argument("--explain", action="store_true",
                    help="search which environment re-runs the entry to its published bits: "
                         "the recorded and current stack, each OpenBLAS copy's kernel, "
                         "numpy's AVX-512 loops on/off, 1/2 threads; stops at the first "
                         "bit-identical run (qencode_nb.studies.explain); writes explain.csv")
    en.add_argument("--budget", type=int, default=None,
                    help="--explain: at most this many runs (default 48); given a sweep "
                         "folder, per miss, and 0 searches none (each miss bounded by the "
                         "sweep's own run)")
    for p, axis in STUDY_AXES.items():   # each study's own axis replaces the option it varies
        add_run_options(kinds.choices[p], mode="rerun", study=True, replaced=axis)
    ge = kinds.add_parser("generator", help="run QEncode's own generator beside the audit "
                          "and put each miss in its class; writes generator.csv",
                          description="QEncode's own generator at the commit each entry "
                          "records, run beside the audit in the same stack, kernels and "
                          "threads, every evaluation of both logged; one row per entry in "
                          "generator.csv and its class (reproduced, ours, chemistry, outside "
                          "the record, undecided). Exit status 0, 1 when a run failed, 2 on "
                          "bad arguments (before any run).")
    ge.add_argument("--generator", default=None, metavar="DIR",
                    help="QEncode generator trees: a folder of <commit>/ trees, one tree or "
                         "a git checkout of qencode-benchmark (default $QENCODE_NB_GENERATOR, "
                         "else ../shared/qencode-history/generator beside the checkout, else "
                         "the trees `data fetch --generator` fetched)")
    add_run_options(ge, mode="rerun", study=True, dispatch=False,
                    replaced=("engine", "hamiltonian"))
    ge.add_argument("entry", help="a name in params/ (lih, h2, h6, bh), a QEncode .json "
                    "path, a folder of entries, or a sweep's --out folder (its misses)")
    ge.add_argument("--out", default=None,
                    help="folder for each entry's runs and generator.csv (default "
                         "runs/generator)")
    ge.set_defaults(func=_generator)
    fa = kinds.add_parser("faithful", help="prove the faithful engine on this host and "
                          "stack: the plain QNode and the faithful engine at every "
                          "evaluation; writes faithful.csv",
                          description="Each entry's audit (mode rerun) twice in the same "
                          "kernel, stack, threads and kernels: on the plain QNode (--engine "
                          "qnode) and on the faithful engine, every objective evaluation "
                          "logged (kept COBYLA paths off). Proven: the logs agree at every "
                          "evaluation to the bit and the results are the same bits. One "
                          "row per entry in faithful.csv, with both wall times. Exit status "
                          "0, 1 when an entry is not proven or a run failed, 2 on bad "
                          "arguments (before any run).")
    add_run_options(fa, mode="rerun", study=True, dispatch=False,
                    replaced=("engine", "hamiltonian"))
    fa.add_argument("entry", help="a name in params/ (lih, h2, h6, bh), a QEncode .json "
                    "path or a folder of entries")
    fa.add_argument("--out", default=None,
                    help="folder for each entry's runs and faithful.csv (default "
                         "runs/faithful)")
    fa.set_defaults(func=_faithful)
    for p in (th, ke, op, en):
        p.add_argument("entry", help="a name in params/ (lih, h2, h6, bh) or a .yaml/.json "
                       "path; with environments --explain also a sweep's --out folder "
                       "(every miss explained, misses.csv)")
        p.add_argument("--out", default=None,
                       help="folder for notebooks, CSV and figure (default runs/KIND)")
        p.set_defaults(func=_study)


def _explain(args) -> int:
    """``study environments ENTRY --explain``: the search, its table and its answer."""
    from qencode_nb.studies.explain import DEFAULT_BUDGET, explain

    if args.kernelspecs:
        print("qencode-nb: --explain searches the stacks itself (the entry's recorded one "
              "and the current one); give it without --kernelspecs", file=sys.stderr)
        return 2
    if args.blas_threads != 1 or args.blas_coretype is not None:
        print("qencode-nb: --explain searches the BLAS threads and kernels itself; give it "
              "without --threads and --coretype", file=sys.stderr)
        return 2
    if Path(args.entry).is_dir():
        return _explain_misses(args)
    try:
        result = explain(args.entry, args.out or "runs/explain", run_options(args),
                         budget=DEFAULT_BUDGET if args.budget is None else args.budget)
    except QencodeNbError as exc:
        print(f"qencode-nb: {as_typed(exc, args)}", file=sys.stderr)
        return 2
    cols = ["rank", "stack", "changed", "kernels_measured", "status", "ulps", "delta_ha"]
    print(result.table[cols].head(12).to_string(index=False))
    print(result.finding)
    print(f"table: {result.out_dir / 'explain.csv'}")
    failed = result.table[result.table["status"] != "done"]
    return 1 if len(failed) else 0


def _explain_misses(args) -> int:
    """``study environments SWEEP_FOLDER --explain``: every miss of a sweep explained or
    bounded (qencode_nb.studies.misses); writes misses.csv."""
    from qencode_nb.studies.misses import explain_misses

    try:
        result = explain_misses(args.entry, args.out, run_options(args), budget=args.budget)
    except QencodeNbError as exc:
        print(f"qencode-nb: {as_typed(exc, args)}", file=sys.stderr)
        return 2
    table = result.table
    print(f"{len(table)} of {result.runs} done runs miss the published energy's bits")
    for row in table.to_dict("records"):
        print(f"- {row['entry_id']}: {int(row['ulps']):,} ulps; {row['cause']}")
    print(f"table: {result.out_dir / 'misses.csv'}")
    return 0


def _generator(args) -> int:
    """``study generator TARGET``: the generator beside the audit, a class per entry."""
    from qencode_nb.studies.generator import generator_study

    try:
        result = generator_study(args.entry, args.out or "runs/generator", run_options(args),
                                 generator=args.generator)
    except QencodeNbError as exc:
        print(f"qencode-nb: {as_typed(exc, args)}", file=sys.stderr)
        return 2
    for row in result.table.to_dict("records"):
        print(f"- {row['entry_id']}: {row['class']}: {row['reason']}")
        parted = row["first_divergence"]
        bits = {k: row[k] if isinstance(row[k], str) else "no energy"
                for k in ("published_hex", "generator_hex", "qencode_nb_hex")}
        print(f"  published {bits['published_hex']}, generator {bits['generator_hex']}, "
              f"qencode-nb {bits['qencode_nb_hex']}; logs "
              + ("agree at every evaluation" if parted is None or parted != parted
                 else f"part at evaluation {int(parted)} ({row['diverged_input']})"))
        if isinstance(row["kernels_fallback"], str):
            print(f"  kernels {row['blas_coretype']}: {row['kernels_fallback']}")
        if row["failure"]:
            print(f"  failed: {row['failure']}")
    print(", ".join(f"{k}: {v}" for k, v in result.counts().items()))
    print(f"table: {result.out_dir / 'generator.csv'}")
    return 1 if result.table["failure"].notna().any() else 0


def _faithful(args) -> int:
    """``study faithful TARGET``: the plain QNode and the faithful engine, every
    evaluation compared."""
    from qencode_nb.studies.faithful import faithful_study

    try:
        result = faithful_study(args.entry, args.out or "runs/faithful", run_options(args))
    except QencodeNbError as exc:
        print(f"qencode-nb: {as_typed(exc, args)}", file=sys.stderr)
        return 2
    for row in result.table.to_dict("records"):
        parted = row["first_divergence"]
        state = "proven" if row["proven"] else "NOT proven"
        print(f"- {row['entry_id']}: {state}: {int(row['evaluations'])} evaluations "
              + ("equal to the bit" if parted is None or parted != parted
                 else f"compared, the logs part at evaluation {int(parted)} "
                      f"({row['diverged_input']})")
              + f"; plain {row['plain_s']:.1f} s, faithful {row['faithful_s']:.1f} s")
        if row["failure"]:
            print(f"  failed: {row['failure']}")
    print(", ".join(f"{k}: {v}" for k, v in result.counts().items()))
    print(f"table: {result.out_dir / 'faithful.csv'}")
    return 0 if result.table["proven"].all() else 1


def _study(args) -> int:
    from qencode_nb.studies import run

    if getattr(args, "explain", False):
        return _explain(args)

    design = {k: getattr(args, k) for k in ("threads", "coretypes", "optimizers", "kernelspecs")
              if hasattr(args, k)}
    try:
        result = run(args.kind, args.entry, repeats=args.repeats, out_dir=args.out or None,
                     options=run_options(args), **design)
    except QencodeNbError as exc:
        print(f"qencode-nb: {as_typed(exc, args)}", file=sys.stderr)
        return 2
    # pandas (numpy) after the runs, as in commands/robustness.py (their kernels' template)
    import pandas as pd

    out = result.out_dir
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(result.summary.drop(columns=["energies_hex"])
              .to_string(index=False, float_format=lambda v: f"{v:.12g}"))
    print(result.finding)
    if result.versions is not None:
        versions = result.versions
        cols = versions.drop(columns=["package", "differs"])
        known = cols.loc[:, cols.notna().any()]   # a failed kernelspec recorded no versions
        shown = versions[known.notna().all(axis=1)]
        print(shown.to_string(index=False))
        if len(shown) < len(versions):
            print(f"({len(versions) - len(shown)} packages installed in some kernels only: "
                  f"{out / 'environments_versions.csv'})")
        print(result.environment_finding)
    print(f"table: {out / (args.kind + '.csv')}; figure: " + ", ".join(result.figure))
    return print_failures(result.failures())
