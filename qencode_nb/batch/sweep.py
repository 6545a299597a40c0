"""Audit many entries: audit.ipynb once per entry, each in its own pinned kernel.

Each run is its own process (:func:`qencode_nb.executor.run_process.run_isolated`:
forked from a server with papermill imported, or ``python -m
qencode_nb.executor.execute``), which starts its own Jupyter kernel through the
pinned papermill engine, under a per-run wall-clock timeout (the process tree is
killed and the notebook marked).
Runs go to a local process pool (``workers``) or, given a scheduler address,
to a Dask distributed cluster.  A sweep is resumable: an entry whose executed
notebook recorded ``done`` with the same inputs (the parameters and the entry
file's SHA-256, kept in ``<name>.inputs.json`` beside the notebook) is not run
again unless it ran under other kernels, threads or packages than this sweep's would
(:mod:`qencode_nb.batch.resume`: those are re-run, and the returned table's
``attrs["reruns"]`` says which and why), and an entry whose run was killed starts with
``resume=True``: its re-run
continues from the last finished restart or ADAPT step
(:mod:`qencode_nb.rerun.checkpoint`).  Each run also leaves ``<name>.outcome.json`` (status, failure, wall
seconds).  Outputs: the run manifest ``qencode-nb-runs.json`` (:mod:`qencode_nb.readout.manifest`:
this sweep's notebooks and the folder's other runs under the same options,
:mod:`qencode_nb.batch.folder_rows`; runs under other options are stale to every
reader), ``summary.csv`` (:func:`qencode_nb.readout.collect.audit_table` of the same runs,
``waiting`` rows for another shard's entries not run yet; no absolute
path: :mod:`qencode_nb.readout.published`) and the margin plot ``margins.png`` /
``.pdf`` / ``.svg`` (:func:`qencode_nb.readout.plots.margin_plot`), read back as counts by
:mod:`qencode_nb.readout.counts`; :func:`run_local` and :func:`run_dask` are the two ways runs
are dispatched (studies use the local pool too).

Faults: the output folder is checked writable before any
run, each run holds ``<name>.lock`` (a second sweep on the folder waits, then
skips what is done; :mod:`qencode_nb.batch.run_folder`), and a run whose worker
dies -- a local pool worker (:mod:`qencode_nb.batch.pool`; the others go on) or
a Dask worker lost for good (``KilledWorker``) -- is a failed row, ``run:
WorkerLost: ...``, its partial notebook kept.  Dask retries a task whose worker
died (``distributed.scheduler.allowed-failures``): a retry that completes is a done
row (the retry's complete notebook, resumed from the checkpoint); the dead
worker's run died with it (:func:`~qencode_nb.executor.process_ties.die_with_parent`).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qencode_nb.options import RunOptions, with_changes
from qencode_nb.batch.pool import longest_first
from qencode_nb.batch.targets import SUBSETS, resolve_targets, select_subset  # noqa: F401


def _entry_digest(target: str) -> str:
    from qencode_nb.paths import PARAMS_DIR

    path = Path(target)
    if not path.is_file():
        path = PARAMS_DIR / f"{target}.yaml"
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:   # a missing entry: the run itself records why it failed
        return None


def run_name(target: str) -> str:
    """File stem of a target's executed notebook (the entry id or bundled name)."""
    return Path(target).stem


def inputs_of(target: str, parameters: dict, kernelspec: str | None = None) -> dict:
    """What decides a run's result, as stored in ``<name>.inputs.json``: the parameters,
    the entry file's SHA-256 and, when it is not the notebook's own, the Jupyter kernelspec
    (the package stack) the run ran in."""
    out = {"parameters": parameters, "entry_sha256": _entry_digest(target)}
    if kernelspec:
        out["kernelspec"] = kernelspec
    return out


def is_complete(out_dir: Path, name: str, inputs: dict) -> bool:
    """True when ``name`` ran to ``done`` with exactly ``inputs`` before."""
    from qencode_nb.notebook.record import read_records

    nb, side = out_dir / f"{name}.ipynb", out_dir / f"{name}.inputs.json"
    if not (nb.is_file() and side.is_file()):
        return False
    try:
        if json.loads(side.read_text()) != inputs:
            return False
        return read_records(nb).get("done") is True
    except (ValueError, OSError):
        return False


def run_one(target: str, out_dir: str, parameters: dict, timeout: float | None = None,
            cell_timeout: int | None = None, name: str | None = None,
            kernelspec: str | None = None) -> dict:
    """Execute audit.ipynb for one target in its own process; never raises for a failed run.

    Args:
        target: entry file or bundled name.
        out_dir: folder for ``<name>.ipynb``, ``.inputs.json``, ``.outcome.json``.
        parameters: audit.ipynb parameters.
        timeout: per-run wall-clock limit in seconds (None: none); on expiry the
            process tree (papermill and the kernel) is killed and the notebook
            gets an ``error`` record saying so.
        cell_timeout: per-cell limit in seconds (None: none).
        name: file stem of the run's files (default :func:`run_name` of the
            target); studies give each repeat of one entry its own name.
        kernelspec: Jupyter kernelspec the notebook runs in (default the
            notebook's, ``python3``); an environment study's package stack.

    Returns:
        ``{"name", "status": "done"|"failed", "failure", "seconds" (wall),
        "kernelspec", "timeout_s", "worker_pid", "host"}`` (the process that dispatched the
        run; also written to ``<name>.outcome.json``).
    """
    from qencode_nb.batch.run_folder import run_lock

    name = name or run_name(target)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    nb_path = out / f"{name}.ipynb"
    with run_lock(out, name) as waited:
        if waited and is_complete(out, name, inputs_of(target, parameters, kernelspec)):
            return stored_outcome(out, name)   # another sweep did it while this one waited
        for stale in (nb_path, out / f"{name}.outcome.json"):   # a lost run keeps only its own
            stale.unlink(missing_ok=True)
        return _run_one(target, out, parameters, timeout, cell_timeout, name, kernelspec)


def run_one_in_stack(stack: dict, *args) -> dict:
    """:func:`run_one` (``args``) on a Dask worker in the locked stack ``stack`` describes
    (:func:`qencode_nb.environment.build.stack_description`), built or attached there
    first (:func:`~qencode_nb.environment.build.ensure_described`): the worker's
    kernelspec, or None where it cannot be built (the run's ``stack`` record says why)."""
    import sys

    from qencode_nb.environment.build import ensure_described

    args = [*args, *[None] * (7 - len(args))]
    args[6] = ensure_described(stack, lambda line: print(f"qencode-nb: {line}", file=sys.stderr))
    return run_one(*args)


def stored_outcome(out: Path, name: str) -> dict:
    """A done run's ``<name>.outcome.json`` (status, failure, seconds, ...), or a ``done``
    outcome without its seconds where that file is missing or unreadable: what a kept run
    reports (a sweep's resume, :func:`qencode_nb.batch.study_jobs.run_jobs`' resume)."""
    try:
        return json.loads((out / f"{name}.outcome.json").read_text())
    except (OSError, ValueError):
        return {"name": name, "status": "done", "failure": None, "seconds": None}


def _run_one(target, out: Path, parameters, timeout, cell_timeout, name, kernelspec) -> dict:
    from qencode_nb.errors import RunTimedOut
    from qencode_nb.executor.run_process import run_isolated
    from qencode_nb.paths import NOTEBOOKS, ROOT

    nb_path = out / f"{name}.ipynb"
    start = time.monotonic()
    try:
        failure = run_isolated(NOTEBOOKS / "audit.ipynb", nb_path, parameters,
                               timeout=timeout, cell_timeout=cell_timeout,
                               kernel=kernelspec, cwd=str(ROOT))
    except RunTimedOut:
        from qencode_nb.executor.execute import mark_failed, stopped_stage

        message = f"the run exceeded the per-run timeout of {timeout:g} s and was killed"
        failure = f"RunTimeout: {message}"       # the type once
        mark_failed(nb_path, stopped_stage(nb_path), "RunTimeout", message)
    if failure:
        from qencode_nb.verdict.card import redraw_card

        redraw_card(nb_path)   # the card the dead kernel left "running" says why
    return _finish(target, out, parameters, name, failure, time.monotonic() - start,
                   kernelspec, timeout)


def _finish(target, out: Path, parameters, name, failure, seconds, kernelspec=None,
            timeout=None) -> dict:
    outcome = {"name": name, "status": "failed" if failure else "done", "failure": failure,
               "seconds": seconds, "kernelspec": kernelspec, "timeout_s": timeout,
               "worker_pid": os.getpid(), "host": socket.gethostname()}
    (out / f"{name}.inputs.json").write_text(
        json.dumps(inputs_of(target, parameters, kernelspec), sort_keys=True))
    (out / f"{name}.outcome.json").write_text(json.dumps(outcome, sort_keys=True))
    return outcome


def lost_run(args, reason: str) -> dict:
    """The outcome of a run whose worker died before it answered (``args``:
    :func:`run_one`'s arguments): once the run's lock is free (its processes died
    with the worker), a run that another sweep completed meanwhile is taken as
    done, one whose notebook recorded ``done`` (it finished just before) too;
    otherwise its notebook (the partial one, or a new one) gets an ``error``
    record ``run: WorkerLost: <reason>`` and the outcome is failed."""
    from qencode_nb.notebook.record import read_records
    from qencode_nb.executor.execute import mark_failed
    from qencode_nb.batch.run_folder import run_lock

    target, out_dir, parameters = args[:3]
    name = (args[5] if len(args) > 5 else None) or run_name(target)
    kernelspec = args[6] if len(args) > 6 else None
    out, reason = Path(out_dir), f"{reason}; the run was stopped with it"
    nb = out / f"{name}.ipynb"
    with run_lock(out, name):
        if is_complete(out, name, inputs_of(target, parameters, kernelspec)):
            return stored_outcome(out, name)
        try:
            done = read_records(nb).get("done") is True
        except (OSError, ValueError):
            done = False
        if not done:
            from qencode_nb.executor.execute import stopped_stage
            from qencode_nb.verdict.card import redraw_card

            mark_failed(nb, stopped_stage(nb), "WorkerLost", reason)
            redraw_card(nb)
        failure = None if done else f"WorkerLost: {reason}"
        return _finish(target, out, parameters, name, failure, None, kernelspec,
                       args[3] if len(args) > 3 else None)


def run_local(jobs, workers: int, submit_args, apart=None):
    """Run ``jobs`` on a local pool of ``workers`` warm processes
    (:func:`qencode_nb.batch.pool.run_pool`); yield each :func:`run_one` outcome
    as it completes (not in job order).  A worker that dies fails its own run
    (:func:`lost_run`); the others go on.

    ``submit_args(job)`` gives :func:`run_one`'s positional arguments for a job;
    ``apart(args)``, given, keys the runs that must not run at once
    (:func:`same_run_key`).
    """
    from qencode_nb.executor.run_process import warm_up
    from qencode_nb.batch.pool import run_pool

    yield from run_pool(run_one, [tuple(submit_args(job)) for job in jobs], workers,
                        lost=lost_run, initializer=warm_up, apart=apart)


def same_run_key(args) -> str:
    """What two runs (:func:`run_one`'s arguments) share when they would compute the
    same thing in the same environment, and so the same re-run checkpoint
    (:mod:`qencode_nb.rerun.checkpoint`): the entry file's SHA-256, the parameters but
    the entry's path, and the kernelspec.  A record's release may hold a copy of
    another's entry (QEncode's ``v2/trusted``); the record sweep's one pool keeps such
    copies apart (:func:`run_plans`)."""
    target, _, parameters = args[:3]
    kernelspec = args[6] if len(args) > 6 else None
    rest = {k: v for k, v in parameters.items() if k != "entry"}
    return json.dumps([_entry_digest(target), rest, kernelspec], sort_keys=True, default=str)


def run_dask(jobs, scheduler: str, submit_args):
    """As :func:`run_local`, on the Dask distributed cluster at ``scheduler``
    (``tcp://host:port``); each job is one task, never cached (``pure=False``).
    A task Dask gives up on (``KilledWorker``: its workers died while running it;
    any other error of the task) is a failed run (:func:`lost_run`) naming why.  A run
    in a locked stack of the store carries the stack's description: each worker builds
    or attaches it before the run (:func:`run_one_in_stack`)."""
    from distributed import Client, as_completed

    from qencode_nb.environment.build import stack_description

    with Client(scheduler, set_as_default=False) as client:
        futures = {}
        for job in jobs:
            args = tuple(submit_args(job))
            stack = stack_description(args[6] if len(args) > 6 else None)
            task = (run_one,) if stack is None else (run_one_in_stack, stack)
            futures[client.submit(*task, *args, pure=False, key=f"qencode-nb-audit-"
                                  f"{run_name(job[0])}-{time.time_ns()}")] = args
        # The client's own loop: as_completed otherwise needs a default client, which
        # a caller outside a `with Client(...)` block (the CLI) does not have.
        for fut in as_completed(list(futures), loop=client.loop):
            try:
                yield fut.result()
            except Exception as exc:  # noqa: BLE001 - the run's row says why
                text = " ".join(str(exc).split(". ")[0].split())
                yield lost_run(futures[fut], f"the Dask worker running it died or the task "
                                             f"failed ({type(exc).__name__}: {text})")


def sweep(targets, out_dir, options: RunOptions | None = None, *, subset: str | None = None,
          **changes):
    """Audit every target; return the summary DataFrame (also ``summary.csv``).

    :func:`plan_folder`, then :func:`run_plans` (one pool), then :func:`finish_folder`;
    the record sweep (:func:`qencode_nb.studies.history_sweep.sweep_history`) plans every
    release's folder and runs them all through one pool the same way.

    Args:
        targets: folders, entry files or bundled names
            (:func:`~qencode_nb.batch.targets.resolve_targets`).
        out_dir: folder for the executed notebooks, their inputs and outcomes,
            ``summary.csv`` and the margin plot.
        options: how every run runs (:class:`~qencode_nb.options.RunOptions`;
            default ``RunOptions()``): ``mode`` (full, replay, rerun), ``workers``
            (local processes, ignored with ``scheduler``), ``blas_threads``,
            ``blas_coretype``, ``db``, ``engine``, ``stack``, ``proof_budget`` (audit.ipynb parameters;
            ``stack`` also picks each run's kernel, :mod:`qencode_nb.environment.choice`),
            ``timeout`` (per run, s), ``cell_timeout`` (per cell, s), ``scheduler``
            (a Dask address; None runs locally), ``progress`` (a bar on stderr,
            :func:`qencode_nb.batch.progress_bar.progress_bar`; in a kernel too),
            ``plot`` (write ``margins.png`` and ``margins.svg``).
        subset: a named subset of the targets (:data:`~qencode_nb.batch.targets.SUBSETS`),
            e.g. "ci".
        **changes: fields of ``options`` replaced (``mode="replay"``,
            :func:`~qencode_nb.options.with_changes`).

    Raises:
        EntryError: a target that does not exist, an unknown subset.
        ParameterError: a bad option value (:class:`~qencode_nb.options.RunOptions`,
            checked before any run).
        OutputFolderError: ``out_dir`` cannot be written (before any run).
        TypeError: a keyword that is not a :class:`~qencode_nb.options.RunOptions`
            field.
    """
    opts = with_changes(options, changes)
    plan = plan_folder(targets, out_dir, opts, subset=subset)
    run_plans([plan], opts)
    return finish_folder(plan)


@dataclass
class FolderPlan:
    """One output folder's runs of a sweep, planned before any run (:func:`plan_folder`).

    Attributes:
        out: the output folder (checked writable).
        selected: the entry files and bundled names, in order (the summary's rows).
        names: their run names (:func:`run_name`), in the same order.
        jobs: the runs still to do, each :func:`run_one`'s positional arguments
            ``(target, out, parameters, timeout, cell_timeout, None, kernelspec)``.
        resume: the :class:`~qencode_nb.batch.resume.Resume` that kept the others
            (its ``reruns`` say which done runs are re-run, and why).
        options: the :class:`~qencode_nb.options.RunOptions` of its runs.
        expected: ``{run name: inputs}`` (:func:`inputs_of`) of the whole target set the
            folder's summary covers, in order (a shard's sweep: every shard's entries;
            :mod:`qencode_nb.batch.folder_rows`).
    """

    out: Path
    selected: list
    names: list
    jobs: list
    resume: Any
    options: RunOptions
    expected: dict = field(default_factory=dict)


def plan_folder(targets, out_dir, opts: RunOptions, *, subset: str | None = None,
                whole=None) -> FolderPlan:
    """What a sweep of ``targets`` into ``out_dir`` runs: every target's audit.ipynb
    parameters and kernelspec, less the runs an earlier sweep completed under the same
    inputs and environment (:class:`~qencode_nb.batch.resume.Resume`).  Runs nothing;
    writes nothing but the folder (created, proven writable).  ``whole``: the target set
    ``targets`` are one shard of (:func:`qencode_nb.batch.shards.sweep_shard`), default
    ``targets``: the entries the folder's summary covers.

    Raises:
        EntryError: as :func:`sweep`.
        ParameterError: as :func:`sweep` (``opts`` was checked when it was built).
        OutputFolderError: ``out_dir`` cannot be created or written.
    """
    from qencode_nb.batch.resume import Resume
    from qencode_nb.batch.run_folder import writable_folder
    from qencode_nb.batch.run_spec import job, notebook_parameters
    from qencode_nb.environment.choice import kernels_for

    selected = select_subset(resolve_targets(targets), subset)   # a typo: nothing written
    out = writable_folder(out_dir)   # before any run: a clear error naming the folder
    kernels = kernels_for(opts.stack, selected, opts.db)   # built once, here
    folder = str(out.resolve())
    jobs, names, resume = [], [], Resume()
    for target in selected:
        # resume: a run killed in an earlier sweep continues from its checkpoint
        # (qencode_nb.rerun.checkpoint); a fresh run has none and starts at zero.
        params = notebook_parameters(opts, target, resume=True)
        names.append(run_name(target))
        if not resume.done(out, run_name(target), inputs_of(target, params, kernels[target]),
                           kernels[target]):
            jobs.append(job(opts, target, folder, params, kernel=kernels[target]))
    expected = {run_name(t): inputs_of(t, notebook_parameters(opts, t, resume=True))
                for t in (selected if whole is None else whole)}
    return FolderPlan(out, selected, names, jobs, resume, opts, expected)


def run_plans(plans, opts: RunOptions, desc: str = "audits") -> None:
    """Run every plan's jobs through ONE pool (``opts.workers`` local processes, or the
    Dask cluster at ``opts.scheduler``), longest first over all of them
    (:func:`~qencode_nb.batch.pool.longest_first`), so no worker idles while another
    folder still has runs; one progress bar over every run (``desc``; those already
    done count from the start).  Locally, two runs of one entry file under one
    environment (:func:`same_run_key`: a copy of an entry in two releases' folders)
    never run at once, as they never did when folders ran one after the other."""
    from qencode_nb.batch.progress_bar import advance, progress_bar

    total = sum(len(p.names) for p in plans)
    jobs = longest_first([job for p in plans for job in p.jobs])
    bar = progress_bar(total, desc, "entry", initial=total - len(jobs),
                       enabled=opts.progress)
    runs = run_dask(jobs, opts.scheduler, tuple) if opts.scheduler else \
        run_local(jobs, opts.workers, tuple, apart=same_run_key)
    for outcome in runs:
        advance(bar, f"{outcome['name'][:24]} {outcome['status']}")
    bar.close()


def finish_folder(plan: FolderPlan):
    """Write a planned folder's files once its runs are over: ``summary.csv``, the run
    manifest, the margin plot (``plot``) and the crate, under the folder's lock; return
    the summary table (``attrs["reruns"]``: the done runs re-run, and why).  The rows:
    the whole target set (``waiting`` where no shard ran an entry yet) and the folder's
    other runs under the same options (:func:`qencode_nb.batch.folder_rows.finish`)."""
    from qencode_nb.batch.folder_rows import finish

    return finish(plan)


def finish_folders(plans, workers: int) -> list:
    """:func:`finish_folder` of every plan, on up to ``workers`` local processes at once
    (:func:`qencode_nb.batch.pool.run_pool`: the folders are independent; each one's
    margin plot, three formats, is about a second); return the tables in ``plans``'
    order.  A folder whose process died is finished here instead, so nothing is lost.

    Args:
        plans: :class:`FolderPlan` list whose runs are over.
        workers: processes (1, or one plan: all in this process).
    """
    from qencode_nb.batch.pool import run_pool

    plans = list(plans)
    if workers <= 1 or len(plans) <= 1:
        return [finish_folder(plan) for plan in plans]
    order = sorted(range(len(plans)), key=lambda i: -len(plans[i].names))  # largest first
    tables = dict(run_pool(_finish_indexed, [(i, plans[i]) for i in order], workers,
                           lost=lambda args, reason: _finish_indexed(*args)))
    return [tables[i] for i in range(len(plans))]


def _finish_indexed(index: int, plan: FolderPlan) -> tuple:
    """``(index, finish_folder(plan))``: a pool job of :func:`finish_folders`."""
    return index, finish_folder(plan)
