"""``qencode-nb sweep TARGETS --plan``: a sweep's plan, entry by entry, and ``plan.csv``.

:func:`plan_sweep` plans the runs a sweep of the same targets, options and ``--out``
would make (:func:`qencode_nb.batch.sweep.plan_folder`: a run an earlier sweep
completed under the same inputs is kept, so it is not planned), in the order the pool
runs them (:func:`qencode_nb.batch.pool.longest_first`), measures each entry once per
host (:func:`qencode_nb.batch.plan.measure`, kept) and predicts its wall time
(:func:`qencode_nb.batch.plan.predict`); it runs no audit.  It writes ``plan.csv``
(:mod:`qencode_nb.batch.plan_file`) into the folder; a sharded sweep's summary reads it
for the entries not run yet.  ``--plan --shard K/N`` plans that shard only
(:mod:`qencode_nb.batch.shards`).  Importing this module imports no numpy.
"""

from __future__ import annotations


def per_evaluation(seconds: float) -> str:
    """Seconds per evaluation as a person reads them (``0.88 ms``, ``1.2 s``)."""
    from qencode_nb.batch.plan import human

    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else human(seconds)


def plan_line(row: dict) -> str:
    """One entry's line: order, run, engine, evaluations x seconds each, screenings,
    fixed seconds and the prediction in human units (or why there is none)."""
    from qencode_nb.batch.plan import human
    from qencode_nb.batch.plan_file import DONE

    head = f"{row['order']:>3}  {row['run']}  {row['engine'] or '-'}"
    if row["predicted_seconds"] is None:
        return f"{head}: no prediction ({row['failure']})"
    work = (f"{row['evaluations']} {row['evaluation'] or 'evaluations'} x "
            f"{per_evaluation(row['seconds_per_evaluation'])}" if row["evaluations"]
            else (row["evaluations_from"] or "no re-run"))
    if row["screenings"]:
        work += (f" + {row['screenings']} pool screening{'s' * (row['screenings'] > 1)} x "
                 f"{per_evaluation(row['seconds_per_screening'])}")
    tail = " (done: the sweep keeps it)" if row["status"] == DONE else ""
    return (f"{head}: {work} + fixed {human(row['fixed_seconds'])} -> "
            f"{human(row['predicted_seconds'])}{tail}")


def total_text(table) -> str:
    """The plan's closing line: the runs' total, the sweep's own seconds, the wall time
    with the sweep's workers (the pool's longest-first order simulated,
    :func:`qencode_nb.batch.plan.makespan`) and total / workers; measured on a shared
    host (median ``cpu_share`` below :data:`~qencode_nb.rules.PLAN_SHARED_CPU_SHARE`),
    that the predictions hold under its load."""
    import math

    from qencode_nb.batch.plan import human
    from qencode_nb.rules import PLAN_SHARED_CPU_SHARE

    a = table.attrs
    text = (f"total {human(a['total_seconds'])} for {a['runs']} run(s) to do"
            f" (+ {human(a['sweep_seconds'])} the sweep's own start and finish)")
    if a["unpredicted"]:
        text += f"; {a['unpredicted']} run(s) without a prediction not counted"
    if a["workers"] > 1:
        text += (f"; with {a['workers']} workers about {human(a['makespan_seconds'])} "
                 f"(longest first, as the pool runs them; total / {a['workers']} = "
                 f"{human(a['total_seconds'] / a['workers'])})")
    share = a.get("cpu_share")
    if share is not None and share < PLAN_SHARED_CPU_SHARE:
        text += (f"; measured with {math.floor(share * 100)}% of a core (median): a "
                 "shared host, so the "
                 "predictions hold under that load (an idle host runs faster, a busier "
                 "one slower)")
    return text + f"; plan: {a['path']}"


def plan_sweep(targets, out_dir, options=None, *, subset: str | None = None, shard=None,
               say=None, **changes):
    """Plan a sweep of ``targets`` into ``out_dir`` (module docstring); return the plan
    table (:data:`qencode_nb.batch.plan_file.PLAN_COLUMNS`), also written as
    ``out_dir/plan.csv``.

    Args:
        targets, out_dir, options, subset: as :func:`qencode_nb.batch.sweep.sweep`
            (``options.mode`` decides which stages count; ``workers`` the closing
            estimate).
        shard: ``"K/N"``: plan that shard of the targets only
            (:func:`qencode_nb.batch.shards.parse_shard`).
        say: called with each entry's line (:func:`plan_line`) as it is planned.
        **changes: fields of ``options`` replaced (``mode="replay"``), as
            :func:`~qencode_nb.batch.sweep.sweep`.

    Returns:
        the table; ``attrs``: ``total_seconds`` (the runs to do, sum of predictions),
        ``runs``, ``unpredicted``, ``sweep_seconds``
        (:data:`~qencode_nb.rules.PLAN_SWEEP_S`), ``workers``, ``makespan_seconds``,
        ``path`` (``plan.csv``), ``shard``, ``cpu_share`` (the median share of a core
        the measurements' timed evaluations got; None where none says, and with more
        than one BLAS thread, whose CPU seconds count every thread's).

    Raises:
        ParameterError: a bad ``shard`` or option, before anything is written.
        EntryError, OutputFolderError: as :func:`~qencode_nb.batch.sweep.sweep`.
    """
    import statistics

    import pandas as pd

    from qencode_nb.batch.plan import makespan
    from qencode_nb.batch.plan_file import DONE, PLAN_COLUMNS, TO_RUN, write_plan
    from qencode_nb.batch.pool import longest_first
    from qencode_nb.batch.shards import parse_shard, shard_targets
    from qencode_nb.batch.sweep import plan_folder, resolve_targets, run_name, select_subset
    from qencode_nb.options import with_changes
    from qencode_nb.rules import PLAN_SWEEP_S

    shard = parse_shard(shard)
    opts = with_changes(options, changes)
    whole = select_subset(resolve_targets(targets), subset)
    folder = plan_folder(shard_targets(whole, shard), out_dir, opts, whole=whole)
    jobs = longest_first(folder.jobs)
    kernels = {job[0]: job[6] for job in jobs}
    to_run = [job[0] for job in jobs]
    kept = [t for t in folder.selected if t not in kernels]
    rows = []
    for order, target in enumerate(to_run + kept, 1):
        kernelspec = kernels[target] if target in kernels else ran_in(folder.out, target)
        row = plan_row(target, opts, kernelspec, cached_only=target in kept)
        row.update(run=run_name(target), order=order, shard=None if shard is None else
                   str(shard), status=DONE if target in kept else TO_RUN)
        rows.append(row)
        if say is not None:
            say(plan_line(row))
    table = pd.DataFrame(rows, columns=list(PLAN_COLUMNS))
    path = write_plan(folder.out, table, whole)
    todo = [r["predicted_seconds"] for r in rows if r["status"] == TO_RUN]
    known = [s for s in todo if s is not None]
    workers = 1 if opts.scheduler else opts.workers   # a cluster's size is not known here
    shares = [r["cpu_share"] for r in rows if r.get("cpu_share") is not None]
    one_core = opts.blas_threads == 1   # CPU over wall time is a core's share then
    table.attrs.update(cpu_share=statistics.median(shares) if shares and one_core
                       else None)
    table.attrs.update(total_seconds=sum(known), runs=len(todo),
                       unpredicted=len(todo) - len(known), sweep_seconds=PLAN_SWEEP_S,
                       workers=workers, makespan_seconds=makespan(known, workers),
                       path=str(path), shard=None if shard is None else str(shard))
    return table


def ran_in(out, target) -> str | None:
    """The kernelspec a done run of ``target`` in folder ``out`` ran in (its
    ``<name>.inputs.json``), None for this environment's or an unreadable file."""
    import json
    from pathlib import Path

    try:
        return json.loads((Path(out) / f"{Path(target).stem}.inputs.json").read_text()).get(
            "kernelspec")
    except (OSError, ValueError, AttributeError):
        return None


def plan_row(target, opts, kernelspec: str | None = None, *,
             cached_only: bool = False) -> dict:
    """One entry's plan row (:data:`qencode_nb.batch.plan_file.PLAN_COLUMNS` but ``run``,
    ``order``, ``shard``, ``status``), measured in ``kernelspec`` (the run's stack; None:
    this environment).  ``cached_only``: a run the sweep keeps is not measured (only a
    kept measurement is used)."""
    from qencode_nb.batch.plan import kept_path, material, measure, predict
    from qencode_nb.entry import load
    from qencode_nb.errors import QencodeNbError

    try:
        entry = load(target, db=opts.db)
    except (QencodeNbError, OSError, ValueError) as exc:
        return {"failure": f"the entry cannot be read: {exc}"[:300], "predicted_seconds": None,
                "evaluations": 0, "screenings": 0, "engine": None}
    if cached_only and not kept_path(material(target, opts, kernelspec)).is_file():
        measured = {"failure": "not measured: the sweep keeps this run (done)"}
    else:
        measured = measure(target, opts, kernelspec=kernelspec)
    p = predict(entry, measured, opts.mode)
    return {"engine": p.engine, "optimizer": p.optimizer, "evaluations": p.evaluations,
            "evaluations_from": p.evaluations_from, "evaluation": p.evaluation,
            "seconds_per_evaluation": p.seconds_per_evaluation, "screenings": p.screenings,
            "seconds_per_screening": p.seconds_per_screening,
            "fixed_seconds": p.fixed_seconds, "predicted_seconds": p.predicted_seconds,
            "rebuild_cache_hit": measured.get("cache_hit"),
            "cpu_share": measured.get("cpu_share"),
            "cpu": (material(target, opts) or {}).get("cpu"),
            "measured_utc": measured.get("measured_utc"), "failure": p.failure}
