"""``qencode-nb sweep DIR_OR_NAMES… [--mode M] [--workers N] [--scheduler ADDR]
[--subset ci] [--timeout S] [--cell-timeout S] [--engine sector|fast]
[--stack current|recorded|NAME] [--proof-budget SECONDS] [--shard K/N] [--plan]
[--out RUNS_DIR]``: audits many
entries (:mod:`qencode_nb.batch.sweep`), one process and kernel each, and writes
``RUNS_DIR/summary.csv`` and ``RUNS_DIR/margins.{png,svg}``; it prints the tier,
replay and boundary counts (:mod:`qencode_nb.readout.counts`).  ``--shard K/N`` runs
shard K of N only (:mod:`qencode_nb.batch.shards`; the summary covers every shard's
entries, ``waiting`` where none ran yet); ``--plan`` runs no audit but prints each
entry's predicted wall time and the total, and writes ``RUNS_DIR/plan.csv``
(:mod:`qencode_nb.batch.plan_table`).  A record folder among the
targets (:mod:`qencode_nb.batch.history`) sweeps each release into its own sub-folder and
prints the per-release counts (:mod:`qencode_nb.studies.history_sweep`: every release's
runs in one pool); an entry refused when
read is counted per release, not a failure.  Exit status 1 when any
audit failed (each failure listed first, with its notebook; in a record sweep also a
curve or the claims audit that failed), 2 on bad arguments.
"""

from __future__ import annotations

import sys
from pathlib import Path

from qencode_nb.commands.flags import as_typed
from qencode_nb.commands.run_args import add_run_options, run_options
from qencode_nb.errors import QencodeNbError


def add_parsers(sub) -> None:
    """Add ``sweep`` to the subparsers ``sub``."""
    sw = sub.add_parser("sweep", help="audit many entries, one kernel each; writes summary.csv")
    sw.add_argument("targets", nargs="+",
                    help="folders of QEncode JSON files, entry files, bundled names, or a "
                         "record folder (releases/<release>/db|trusted|curves, as QEncode's "
                         "repository: each release into its own folder, all in one pool, the "
                         "claims and the curves)")
    add_run_options(sw)
    sw.add_argument("--out", default="runs", help="folder for executed notebooks (default runs)")
    sw.add_argument("--subset", default=None,
                    help="run a named subset of the targets: ci")
    sw.add_argument("--shard", default=None, metavar="K/N",
                    help="run shard K of N only (1-based; e.g. 2/3): the same target set "
                         "always gives each entry the same shard, on any host; every "
                         "shard's --out may be one folder, whose summary.csv lists every "
                         "entry (waiting: not run yet)")
    sw.add_argument("--plan", action="store_true",
                    help="run no audit: measure each entry once on this host (kept) and "
                         "print its predicted wall time in the order the sweep runs them, "
                         "the total and the total with --workers; writes plan.csv in --out")
    sw.set_defaults(func=_sweep)


def _sweep(args) -> int:
    from qencode_nb.batch.history import discover
    from qencode_nb.batch.sweep import sweep
    from qencode_nb.readout.counts import (TIER_STATUSES, boundary_warnings, failures,
                                           replay_counts, tier_counts)

    try:
        history = discover(args.targets)
        if history.is_history:
            return _sweep_history(history, args)
        if args.plan:
            return _plan(args)
        if args.shard is None:
            table = sweep(args.targets, args.out, run_options(args), subset=args.subset)
        else:
            from qencode_nb.batch.shards import sweep_shard

            table = sweep_shard(args.targets, args.out, run_options(args),
                                subset=args.subset, shard=args.shard)
    except QencodeNbError as exc:
        print(f"qencode-nb: {as_typed(exc, args)}", file=sys.stderr)
        return 2
    print_not_entries(history)
    whole, table = table, own_rows(table)
    status = print_failures(failed := failures(table), Path(args.out))   # failures first
    from qencode_nb.batch.resume import reruns_text

    if reruns_text(table.attrs.get("reruns")):
        print(reruns_text(table.attrs["reruns"]))
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
    if len(whole) > len(table):
        print(folder_text(whole, len(table)))
    return status


def own_rows(table):
    """The rows of the runs this sweep selected (``attrs["ran"]``), without the folder's
    other runs its summary also lists (:mod:`qencode_nb.batch.folder_rows`)."""
    ran = set(table.attrs.get("ran", ()))
    if not ran:
        return table
    mine = table[[Path(n).stem in ran for n in table["notebook"]]].reset_index(drop=True)
    mine.attrs = dict(table.attrs)
    return mine


def folder_text(whole, own: int) -> str:
    """``summary.csv lists N runs: ...``: what the folder's summary holds beyond this
    sweep's ``own`` rows (another shard's runs, earlier runs under the same options, and
    the entries waiting for their shard)."""
    from qencode_nb.readout.counts import WAITING

    counts = whole["status"].value_counts()
    waiting = int(counts.get(WAITING, 0))
    text = (f"summary.csv lists {len(whole)} entries: {own} of this sweep, "
            f"{len(whole) - own - waiting} run earlier into the folder under the same "
            f"options ({int(counts.get('done', 0))} done in all)")
    if waiting:
        text += f", {waiting} waiting (not run yet by their shard)"
    return text


def _plan(args) -> int:
    """``--plan``: each entry's line as it is planned, then the total."""
    from qencode_nb.batch.plan_table import plan_sweep, total_text

    table = plan_sweep(args.targets, args.out, run_options(args), subset=args.subset,
                       shard=args.shard, say=lambda line: print(line, flush=True))
    print(total_text(table))
    return 0


def _sweep_history(history, args) -> int:
    """A record folder among the targets: every release group's runs through one pool
    (:func:`qencode_nb.studies.history_sweep.sweep_history`), then the per-release counts,
    the claims' statuses and the curves."""
    import json

    from qencode_nb.studies.history_sweep import HISTORY_MANIFEST, sweep_history
    from qencode_nb.errors import EntryError
    from qencode_nb.readout.history_counts import RELEASE_COLUMN, refusal, release_counts

    if args.subset is not None:
        raise EntryError(f"{args.subset!r} is not accepted with a record folder; accepted: "
                         "--subset with database folders only (a subset names v4 entries)",
                         field="subset")
    for flag in ("shard", "plan"):
        if getattr(args, flag):
            from qencode_nb.errors import ParameterError

            value = "" if flag == "plan" else f"{getattr(args, flag)!r} "
            raise ParameterError(f"{value}is not accepted with a record folder; accepted: "
                                 "database folders, entry files and bundled names (one "
                                 "release)", parameter=flag)
    out = Path(args.out)
    table = sweep_history(history, out, run_options(args))
    status = 0
    for r in table.to_dict("records"):   # failures first: release, reason, notebook
        if r["status"] != "done" and refusal(r["failure"]) is None:
            status = 1
            print(f"FAILED {r[RELEASE_COLUMN]} {Path(r['notebook']).stem}: {r['failure']}"
                  f"\n  executed notebook: {r['notebook']}")
    from qencode_nb.batch.resume import reruns_text

    manifest = json.loads((out / HISTORY_MANIFEST).read_text())
    if reruns_text(manifest.get("reruns")):
        print(reruns_text(manifest["reruns"]))
    counts = release_counts(table, [g.label for g in history.groups])
    print(counts.drop(columns="refused_reasons").to_string(index=False))
    for release, reasons in zip(counts["release"], counts["refused_reasons"]):
        if reasons and release != "all":
            print(f"refused in {release}: {reasons}")
    print_not_entries(history)
    claims = manifest["claims"]
    if claims and claims.get("file"):
        print(f"claims of {claims['folder']}: {out / claims['file']} ("
              + ", ".join(f"{k} {v}" for k, v in claims["statuses"].items()) + ")")
    elif claims:
        status = 1
        print(f"FAILED claims of {claims['folder']}: {claims['error']}")
    if claims and claims["not_checked"]:
        print("claims not checked (one claims table per sweep; run qencode-nb claims on "
              "each): " + ", ".join(claims["not_checked"]))
    for curve in manifest["curves"]:
        status = 1 if curve["status"] == "failed" else status
        print(("FAILED " if curve["status"] == "failed" else "")
              + f"curve {curve['curve']}: {curve['status']}"
              + (f": {curve['summary']}" if curve.get("summary") else "")
              + (f" ({curve['reason']})" if curve.get("reason") else ""))
    if manifest.get("environments"):
        import pandas as pd

        rates = pd.read_csv(out / manifest["environments"]["file"])
        print("recorded vs current environment (bit-identical, certification held):")
        print(rates.drop(columns="not_bit_identical_recorded").to_string(index=False))
        for release, missed in zip(rates["release"], rates["not_bit_identical_recorded"]):
            if isinstance(missed, str):
                print(f"not bit-identical in its recorded environment, {release}: {missed}")
    print(f"summary: {out / 'summary.csv'}; per release: {out / 'releases.csv'}; "
          f"report: qencode-nb report {out}")
    return status


def print_not_entries(history) -> None:
    """Name what a sweep's folders hold but does not audit: each group's release metadata
    (:mod:`qencode_nb.entry.release_files`) and each release folder holding no entry,
    with the reason."""
    from qencode_nb.entry.release_files import not_entries_text

    for group in history.groups:
        if group.not_entries:
            print(f"not entries in {group.label} (QEncode release metadata, not audited): "
                  + not_entries_text(group.not_entries))
    for empty in history.empty:
        print(f"release {empty['release']} not swept: {empty['reason']}")


def print_failures(failed: dict, folder: Path | None = None) -> int:
    """``FAILED <run>: <reason>`` per failed run (and its notebook in ``folder``); 1 if any."""
    for name, failure in failed.items():
        print(f"FAILED {name}: {failure}" + (f"\n  executed notebook: {folder / name}.ipynb"
                                             if folder else ""))
    return 1 if failed else 0
