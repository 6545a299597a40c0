"""One study's runs: audit.ipynb once per job, each in its own process and Jupyter kernel.

A study (:mod:`qencode_nb.studies.blas`, :mod:`~qencode_nb.studies.optimizers`,
:mod:`~qencode_nb.studies.environments`) re-runs one entry as a list of jobs
``(group value, repeat, run name, the study's axis values)``.
:func:`run_jobs` checks the inputs every study shares (mode, entry), builds each
job's parameters from the run options and its axis values (the one builder,
:func:`qencode_nb.batch.run_spec.notebook_parameters`), sends the jobs through the
sweep's local process pool or a Dask cluster
(:func:`qencode_nb.batch.sweep.run_local`, :func:`~qencode_nb.batch.sweep.run_dask`; each job
:func:`~qencode_nb.batch.sweep.run_one`: its own process, kernel and pins)
and returns one row per job, in job order, read by
:func:`qencode_nb.readout.run_rows.run_row` from the run's records (never from cell
indices).  :func:`write_table` writes a
study's ``<kind>.csv`` and its figure.
"""

from __future__ import annotations

from pathlib import Path

from qencode_nb.errors import EntryError
from qencode_nb.options import RunOptions, check_mode
from qencode_nb.readout.run_rows import run_row


def entry_stem(entry) -> str:
    """The file stem that names a study's runs: ``<entry-stem>__<group>__r<repeat>``."""
    return Path(str(entry)).stem


def run_jobs(entry, jobs, out_dir, options: RunOptions, *, desc: str,
             kernelspecs: dict | None = None, resume: bool = False) -> list[dict]:
    """Run a study's jobs; one row per job (:func:`qencode_nb.readout.run_rows.run_row`),
    in job order.

    Args:
        entry: entry file or bundled name (not a folder).
        jobs: ``[(group value, repeat, run name, axis values)]``: the audit.ipynb
            parameters the study varies, replacing the options'
            (:func:`~qencode_nb.batch.run_spec.notebook_parameters`' ``axis``).
        out_dir: folder for the executed notebooks (created).
        options: :class:`~qencode_nb.options.RunOptions`: every field but ``plot``;
            ``mode`` "rerun" or "full" (:data:`qencode_nb.options.STUDY_MODES`), the
            notebook parameters (:func:`~qencode_nb.batch.run_spec.notebook_parameters`),
            ``timeout`` (per run, s), ``cell_timeout`` (per cell, s), ``stack`` (also the
            kernel of every job, :mod:`qencode_nb.environment.choice`), ``workers`` or
            ``scheduler``, and ``progress`` (a bar titled ``desc`` on stderr,
            :func:`qencode_nb.batch.progress_bar.progress_bar`; in a kernel too).
        desc: the progress bar's title.
        kernelspecs: ``{run name: Jupyter kernelspec}`` (default the notebook's, or the
            ``stack`` option's kernel).
        resume: keep a job whose run in ``out_dir`` is done under the same inputs and
            environment, as a sweep keeps one (:class:`qencode_nb.batch.resume.Resume`:
            the same parameters, entry and kernelspec, and the same measured kernels and
            packages); its row is read from the folder.  The explain search resumes so.

    Raises:
        ParameterError: ``mode`` "replay" (the rest of ``options`` was checked when it
            was built).
        EntryError: an entry that does not exist or is a folder.
    """
    from qencode_nb.batch.progress_bar import advance, progress_bar
    from qencode_nb.batch.sweep import run_dask, run_local

    check_mode(options.mode, study=True)
    if Path(str(entry)).is_dir():
        raise EntryError(f"{entry!r} is a folder; accepted: one entry file or a bundled name",
                         field="entry")
    from qencode_nb.entry.lookup import check_reference

    target = check_reference(entry)   # a typo: "did you mean ...", nothing written
    from qencode_nb.batch.run_folder import writable_folder

    out = writable_folder(Path(out_dir).resolve())   # before any run, naming the folder
    from qencode_nb.batch.run_spec import job, notebook_parameters
    from qencode_nb.environment.choice import kernels_for

    stack = options.stack
    if kernelspecs is None and stack != "current":    # every job in the --stack kernel
        kernel = kernels_for(stack, [target], options.db)[target]
        kernelspecs = {name: kernel for _, _, name, _ in jobs}
    todo = [job(options, target, out, notebook_parameters(options, target, axis), name,
                (kernelspecs or {}).get(name)) for _, _, name, axis in jobs]
    outcomes = {}
    if resume:
        outcomes, todo = _kept(target, out, todo)
    with progress_bar(len(todo) + len(outcomes), desc, "run", initial=len(outcomes),
                      enabled=options.progress) as bar:
        dispatched = (run_dask(todo, options.scheduler, lambda args: args)
                      if options.scheduler else
                      run_local(todo, options.workers, lambda args: args))
        for outcome in dispatched:
            outcomes[outcome["name"]] = outcome
            advance(bar, f"{outcome['name'][-16:]} {outcome['status']}")
    return [run_row(out, outcomes[name]) for _, _, name, _ in jobs]


def write_table(table, kind: str, out: Path, plot: bool) -> None:
    """``<out>/<kind>.csv`` (no absolute path of the machine: the ``notebook`` column
    relative to ``out``, :func:`qencode_nb.readout.published.published_csv`) and, with
    ``plot``, the figure ``<out>/<kind>.{png,pdf,svg}``
    (:func:`qencode_nb.readout.plots.study_plot`)."""
    from qencode_nb.readout.published import published_csv

    out.mkdir(parents=True, exist_ok=True)
    (out / f"{kind}.csv").write_text(published_csv(table, out), encoding="utf-8")
    if plot and len(table):
        from qencode_nb.readout.plots import study_plot

        study_plot(table, kind, out / kind)


def _kept(target, out: Path, todo: list) -> tuple[dict, list]:
    """``({name: stored outcome}, jobs still to run)``: the jobs of ``todo`` whose run in
    ``out`` is done under the same inputs and environment
    (:meth:`qencode_nb.batch.resume.Resume.done`) are kept."""
    from qencode_nb.batch.resume import Resume
    from qencode_nb.batch.sweep import stored_outcome, inputs_of

    keep, rest, resume = {}, [], Resume()
    for args in todo:
        _, _, params, _, _, name, kernel = args
        if resume.done(out, name, inputs_of(target, params, kernel), kernel):
            keep[name] = stored_outcome(out, name)
        else:
            rest.append(args)
    return keep, rest


def run_one(entry, folder: Path, name: str, axis: dict, options: RunOptions,
            kernelspec=None) -> tuple:
    """One audit of ``entry`` as a study's job named ``name`` (``axis``: the parameters it
    sets, :func:`run_jobs`), its notebook ``folder/<name>.ipynb``: ``(row, records)``,
    the row with ``seconds_total`` (wall seconds of the whole job), the records read back
    (``{}`` when the notebook has none)."""
    import time

    from qencode_nb.notebook.record import read_records

    t = time.perf_counter()
    row = run_jobs(entry, [(name, 0, name, axis)], folder, options, desc=name,
                   kernelspecs={name: kernelspec} if kernelspec else None)[0]
    row["seconds_total"] = time.perf_counter() - t
    try:
        records = read_records(folder / f"{name}.ipynb")
    except (OSError, ValueError):
        records = {}
    return row, records
