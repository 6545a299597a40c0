"""The ``qencode-nb`` command.

``qencode-nb sweep DIR_OR_NAMES... [--mode M] [--workers N] [--scheduler ADDR]
[--subset ci] [--timeout S] [--engine sector|fast] [--out RUNS_DIR]`` audits many entries
(:mod:`qencode_nb.batch.sweep`), one process and kernel each, and writes
``RUNS_DIR/summary.csv`` and ``RUNS_DIR/margins.{png,svg}``; exit status 1
when any audit failed (each failure listed first, with its notebook), 2 on bad arguments.

``qencode-nb audit ENTRY [--threads N] [--coretype K] [--mode M] [--db DIR]
[--engine sector|fast] [--out OUT.ipynb] [--json] [--resume] [--public-key PUB]`` runs ``notebooks/audit.ipynb`` through the
pinned papermill engine (:mod:`qencode_nb.notebook.runner`) and prints the verdict, or
with ``--json`` every record as one JSON object.  The executed notebook is
``OUT.ipynb``, by default ``runs/audit/<entry stem>.ipynb`` under the working
directory (:data:`AUDIT_OUT_DIR`; never a loose file beside it).  Exit status: 0 when the
run recorded ``done`` with no alert, 3 when it did but raised alerts
(integrity or replay failed, inconsistent published numbers), 1 when it
failed (stderr: the reason, the notebook kept, ``--traceback``), 2 on bad arguments
(an ENTRY that is neither an existing file nor a bundled name among them: refused
before any kernel starts, nothing written, "did you mean ..." for a name).

``qencode-nb study threads ENTRY [--threads 1 2 4] [--repeats R] [--mode M]
[--db DIR] [--workers N] [--out DIR]`` re-runs one entry R times per BLAS
thread count, and ``qencode-nb study kernels ENTRY [--coretypes A B ...]
[--repeats R] [--mode M] [--db DIR] [--workers N] [--out DIR]`` once per
OpenBLAS kernel at 1 thread (default: every kernel this CPU can run), and
``qencode-nb study optimizers ENTRY [--optimizers COBYLA L-BFGS-B
"Adam(lr=0.05)"] [--repeats R] [--threads N] [--mode M] [--db DIR]
[--workers N] [--out DIR]`` once per optimiser replacing the recorded one
(hea and uccsd entries) at N BLAS threads (default 1); each run its own
process and kernel (:func:`qencode_nb.studies.run`).  Prints the per-group
summary (errors in mHa, median nfev and wall time in s side by side) and the
finding; writes ``threads.csv`` / ``kernels.csv`` / ``optimizers.csv`` and
the figure ``threads.{png,svg}`` / ``kernels.{png,svg}`` /
``optimizers.{png,svg}`` in --out.  Exit status 0, 1 when a run failed, 2 on
bad arguments.

``qencode-nb study environments ENTRY [--kernelspecs python3 qencode-nb-latest ...]
[--repeats R] [--threads N] [...]`` re-runs the entry in each Jupyter kernel (one
package stack each, the first the baseline) and also prints the versions that
differ and the energy/error differences; it writes ``environments.csv``,
``environments_versions.csv``, ``environments_differences.csv`` and the figure.
``qencode-nb stack create NAME [--recipe reference|latest | --requirements
FILE_OR_SPECS... [--overlay]]``, ``stack list`` and ``stack remove NAME`` manage
those stacks (:mod:`qencode_nb.studies.stacks`); exit status 1 when pip or ipykernel
failed (the log is kept), 2 on bad arguments.

``qencode-nb robustness DIR_OR_NAMES... [--threads 1 2] [--coretypes Haswell SkylakeX]
[--kernelspecs python3 qencode-nb-latest] [--engine E] [--mode M] [--subset ci] [--db DIR]
[--workers N] [--scheduler ADDR] [--timeout S] [--out DIR]`` re-runs every entry under
every perturbation (the Cartesian product of the axes given; each axis defaults to its
baseline: 1 thread, no coretype, ``python3``), one process and kernel per run, resumable
(:func:`qencode_nb.studies.robustness.robustness`).  It writes ``robustness.csv`` (one
row per run), ``robustness_summary.csv`` (per entry: certified fraction, error range in
mHa, ``fragile`` from the published margin beside ``fragile_measured`` and
``lost_certification_in``) and ``robustness.{png,svg}`` in --out (default
``runs/robustness``), and prints the summary; exit status 1 when a run failed, 2 on
bad arguments (refused before any run).

``qencode-nb report RUNS_DIR [--out PAGE.html] [--no-notebooks]`` writes one
self-contained HTML page of the audit notebooks of a folder, each linked to its notebook
rendered in ``PAGE_notebooks/`` (:func:`qencode_nb.readout.report.write_report`; default
``RUNS_DIR/report.html``); exit status 2 when RUNS_DIR holds no audit notebook.

``qencode-nb keygen --out KEY``, ``sign RUNS_DIR|AUDIT.ipynb --key KEY``, ``verify
ATTESTATION --public-key PUB`` and ``crate RUNS_DIR|AUDIT.ipynb``: Ed25519 attestations of
executed audits and their Process Run Crate (:mod:`qencode_nb.commands.trust`).  The
handlers of ``stack``, ``data`` and these are in :mod:`qencode_nb.commands`; this module
registers them.

``--engine sector`` (audit, sweep, study threads/kernels/environments) runs the entries
that map (:func:`qencode_nb.rerun.ci_space_map.unmappable_reason`) on the sector
engine; the others run their recorded backend and the reason is recorded.
``--engine fast`` runs every entry on the sector engine where it maps, else on the
compiled statevector engine (:mod:`qencode_nb.rerun.fast_engine`: HEA, tapered UCCSD,
the Pauli-word ADAPT pools), else on its recorded backend with the reason.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from qencode_nb.errors import QencodeNbError


#: Where ``qencode-nb audit`` writes the executed notebook without ``--out``:
#: ``<AUDIT_OUT_DIR>/<entry stem>.ipynb``, relative to the working directory (a
#: folder of its own, so that a sweep folder's ``summary.csv`` never picks it up).
AUDIT_OUT_DIR = Path("runs") / "audit"

ENGINE_HELP = ("sector: run the ADAPT entries that map (qencode_nb.rerun.ci_space_map) on the "
               "sector engine; fast: every entry on the fastest engine computing the same "
               "energies (the sector engine where the entry maps, else the compiled "
               "statevector engine, qencode_nb.rerun.fast_engine); tier 1 then fails on the "
               "backend deviation; default: the recorded backend")


def _audit(args) -> int:
    from qencode_nb.notebook.parameters import MODES, check_engine
    from qencode_nb.notebook.record import encode, read_records
    from qencode_nb.notebook.runner import NOTEBOOKS, explain_failure, run_notebook

    if args.mode not in MODES:
        print(f"qencode-nb: --mode {args.mode!r} is not accepted; accepted: "
              + ", ".join(MODES), file=sys.stderr)
        return 2
    try:
        check_engine(args.engine)
        from qencode_nb.notebook.pins import pin_environment

        pin_environment(args.threads, args.coretype)   # --threads, --coretype: before any run
        from qencode_nb.entry.lookup import check_reference

        # a typo is refused here, before any kernel and with nothing written (issue 23)
        entry = check_reference(args.entry)
    except QencodeNbError as exc:
        print(f"qencode-nb: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else AUDIT_OUT_DIR / f"{Path(args.entry).stem}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    params = {"entry": entry, "blas_threads": args.threads, "mode": args.mode}
    if args.coretype:
        params["blas_coretype"] = args.coretype
    if args.engine:
        params["engine"] = args.engine
    if args.db:
        params["db"] = str(Path(args.db).resolve())
    if args.resume:
        params["resume"] = True
    if args.public_key:
        params["public_key"] = str(Path(args.public_key).resolve())
    try:
        records = run_notebook(NOTEBOOKS / "audit.ipynb", out.resolve(), params,
                               timeout=args.timeout, progress_bar=not args.json)
    except QencodeNbError as exc:
        from qencode_nb.verdict.card import redraw_card

        redraw_card(out)   # a dead kernel left the card "running": it now says why
        if args.json and out.exists():
            print(json.dumps(encode(read_records(out)), indent=1, sort_keys=True))
        reason, *more = explain_failure(exc, out, traceback=args.traceback)
        print(f"qencode-nb: audit failed: {reason}", *more, sep="\n", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(encode(records), indent=1, sort_keys=True))
    else:
        print(records["verdict"])
        print(f"executed notebook: {out}")
    return 3 if records.get("alerts") else 0


def _sweep(args) -> int:
    from qencode_nb.batch.sweep import sweep
    from qencode_nb.readout.counts import (TIER_STATUSES, boundary_warnings, failures,
                                           replay_counts, tier_counts)

    try:
        table = sweep(args.targets, args.out, mode=args.mode, workers=args.workers,
                      blas_threads=args.threads, blas_coretype=args.coretype, db=args.db,
                      timeout=args.timeout, cell_timeout=args.cell_timeout,
                      scheduler=args.scheduler, subset=args.subset, engine=args.engine)
    except QencodeNbError as exc:
        print(f"qencode-nb: {exc}", file=sys.stderr)
        return 2
    status = _print_failures(failed := failures(table), Path(args.out))   # failures first
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


def _print_failures(failed: dict, folder: Path | None = None) -> int:
    """``FAILED <run>: <reason>`` per failed run (and its notebook in ``folder``); 1 if any."""
    for name, failure in failed.items():
        print(f"FAILED {name}: {failure}" + (f"\n  executed notebook: {folder / name}.ipynb"
                                             if folder else ""))
    return 1 if failed else 0


def _study(args) -> int:
    import pandas as pd

    from qencode_nb.studies import run

    options = {k: getattr(args, k) for k in ("threads", "coretypes", "optimizers",
                                              "kernelspecs", "blas_threads", "engine")
               if hasattr(args, k)}
    try:
        result = run(args.kind, args.entry, repeats=args.repeats, out_dir=args.out or None,
                     mode=args.mode, db=args.db, workers=args.workers, timeout=args.timeout,
                     **options)
    except QencodeNbError as exc:
        print(f"qencode-nb: {exc}", file=sys.stderr)
        return 2
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
    print(f"table: {out / (args.kind + '.csv')}; figure: {out / (args.kind + '.png')}, "
          f"{out / (args.kind + '.svg')}")
    return _print_failures(result.failures())


def _robustness(args) -> int:
    import pandas as pd

    from qencode_nb.studies.robustness import robustness

    try:
        result = robustness(args.targets, args.out, threads=args.threads,
                            coretypes=args.coretypes, kernelspecs=args.kernelspecs,
                            engine=args.engine, mode=args.mode, db=args.db, subset=args.subset,
                            workers=args.workers, scheduler=args.scheduler,
                            timeout=args.timeout)
    except QencodeNbError as exc:
        print(f"qencode-nb: {exc}", file=sys.stderr)
        return 2
    from qencode_nb.entry.labels import short_name

    shown = result.summary.drop(columns=["gained_certification_in"])
    shown = shown.assign(entry=[short_name(e) for e in shown["entry"]])
    with pd.option_context("display.width", 250, "display.max_columns", 20,
                           "display.max_colwidth", 60):
        print(shown.to_string(index=False, float_format=lambda v: f"{v:.6g}"))
    print(result.report())
    return _print_failures(result.failures())


def _report(args) -> int:
    from qencode_nb.readout.report import write_report

    try:
        report = write_report(args.runs_dir, args.out, notebooks=args.notebooks)
    except QencodeNbError as exc:
        print(f"qencode-nb: {exc}", file=sys.stderr)
        return 2
    failed = int((report.table["status"] != "done").sum())
    print(f"report: {report.path} ({len(report.table)} runs, {failed} failed"
          + (f"; notebook pages in {report.pages_dir}" if report.pages_dir else "") + ")")
    return 0


#: --coretype's help (audit.ipynb's blas_coretype; qencode_nb.notebook.blas_profiles).
CORETYPE_HELP = ("BLAS kernels: reference (default: the QEncode v4 entries' kernel triple; "
                 "portable where the CPU lacks AVX-512), portable, host (the host's kernels, "
                 "its preset included), or one OPENBLAS_CORETYPE such as Haswell")


def build_parser() -> argparse.ArgumentParser:
    from qencode_nb.studies.optimizers import DEFAULT_OPTIMIZERS

    parser = argparse.ArgumentParser(
        prog="qencode-nb",
        description="Audit whether published VQE benchmark results still hold when re-run.")
    sub = parser.add_subparsers(dest="command", required=True)
    audit = sub.add_parser("audit", help="audit one entry in an executed notebook")
    audit.add_argument("entry", help="a name in params/ (lih, h2, h6, bh) or a .yaml/.json path")
    audit.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    audit.add_argument("--coretype", default=None, help=CORETYPE_HELP)
    audit.add_argument("--mode", default="full", help="full (default), replay or rerun")
    audit.add_argument("--db", default=None,
                       help="folder of QEncode JSON files to complete a params/ entry")
    audit.add_argument("--out", default=None, help="executed notebook path "
                       "(default runs/audit/ENTRY.ipynb)")
    audit.add_argument("--timeout", type=int, default=None,
                       help="per-cell timeout in seconds (default: none)")
    audit.add_argument("--json", action="store_true", help="print all records as JSON")
    audit.add_argument("--traceback", action="store_true", help="a failure's cell traceback")
    audit.add_argument("--engine", default=None, help=ENGINE_HELP)
    audit.add_argument("--resume", action="store_true", help="continue an interrupted "
                       "re-run from its checkpoint (finished restarts / ADAPT steps)")
    audit.add_argument("--public-key", default=None, help="Ed25519 public key (PEM) to "
                       "verify the entry's own trust.signature_b64")
    audit.set_defaults(func=_audit)

    sw = sub.add_parser("sweep", help="audit many entries, one kernel each; writes summary.csv")
    sw.add_argument("targets", nargs="+",
                    help="folders of QEncode JSON files, entry files, or bundled names")
    sw.add_argument("--mode", default="full", help="full (default), replay or rerun")
    sw.add_argument("--workers", type=int, default=1, help="parallel runs (default 1)")
    sw.add_argument("--threads", type=int, default=1, help="BLAS threads per run (default 1)")
    sw.add_argument("--coretype", default=None, help=CORETYPE_HELP)
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
    op.add_argument("--threads", type=int, default=1, dest="blas_threads", metavar="THREADS",
                    help="BLAS threads of every run (default 1)")
    en = kinds.add_parser("environments", help="re-run in Jupyter kernels with different "
                          "package stacks (see `qencode-nb stack`); writes environments.csv")
    en.add_argument("--kernelspecs", nargs="+", default=None,
                    help="kernelspecs, the first the baseline (default: python3 and every "
                         "qencode-nb-* stack)")
    en.add_argument("--repeats", type=int, default=1, help="runs per kernel (default 1)")
    en.add_argument("--threads", type=int, default=1, dest="blas_threads", metavar="THREADS",
                    help="BLAS threads of every run (default 1)")
    for p in (th, ke, en):
        p.add_argument("--engine", default=None, help=ENGINE_HELP)
    for p in (th, ke, op, en):
        p.add_argument("entry", help="a name in params/ (lih, h2, h6, bh) or a .yaml/.json path")
        p.add_argument("--mode", default="rerun", help="rerun (default) or full")
        p.add_argument("--db", default=None, help="folder completing bundled entries")
        p.add_argument("--workers", type=int, default=1, help="parallel runs (default 1)")
        p.add_argument("--timeout", type=float, default=None,
                       help="per-run wall-clock timeout in seconds (default: none)")
        p.add_argument("--out", default=None,
                       help="folder for notebooks, CSV and figure (default runs/KIND)")
        p.set_defaults(func=_study)

    rb = sub.add_parser("robustness", help="re-run every entry under every perturbation "
                        "(threads x coretypes x kernelspecs); writes robustness.csv")
    rb.add_argument("targets", nargs="+",
                    help="folders of QEncode JSON files, entry files, or bundled names")
    rb.add_argument("--threads", type=int, nargs="+", default=None,
                    help="BLAS thread counts (default 1)")
    rb.add_argument("--coretypes", nargs="+", default=None,
                    help="OpenBLAS coretypes; 'default' for none set (default: none set)")
    rb.add_argument("--kernelspecs", nargs="+", default=None,
                    help="Jupyter kernelspecs (default python3; see `qencode-nb stack`)")
    rb.add_argument("--engine", default=None, help=ENGINE_HELP)
    rb.add_argument("--mode", default="full", help="full (default) or rerun")
    rb.add_argument("--subset", default=None, help="run a named subset of the targets: ci")
    rb.add_argument("--db", default=None, help="folder completing bundled entries")
    rb.add_argument("--workers", type=int, default=1, help="parallel runs (default 1)")
    rb.add_argument("--scheduler", default=None,
                    help="Dask distributed scheduler address, e.g. tcp://127.0.0.1:8786 "
                         "(default: a local process pool)")
    rb.add_argument("--timeout", type=float, default=None,
                    help="per-run wall-clock timeout in seconds (default: none)")
    rb.add_argument("--out", default="runs/robustness",
                    help="folder for notebooks, CSVs and figure (default runs/robustness)")
    rb.set_defaults(func=_robustness)

    rp = sub.add_parser("report", help="one self-contained HTML page of a folder of "
                        "executed audits (a sweep's or robustness study's --out)")
    rp.add_argument("runs_dir", metavar="RUNS_DIR", help="folder of executed audits")
    rp.add_argument("--out", default=None, help="the page (default RUNS_DIR/report.html)")
    rp.add_argument("--no-notebooks", dest="notebooks", action="store_false",
                    help="do not render the executed notebooks to HTML (rows link nowhere)")
    rp.set_defaults(func=_report)

    from qencode_nb.commands import compare, data, stack, trust

    for commands in (stack, data, trust, compare):   # stack, data; keygen, sign, verify, crate; compare
        commands.add_parsers(sub)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
