"""The BLAS studies: one entry re-run per BLAS thread count, or per OpenBLAS CPU kernel.

:func:`threads_study` varies the BLAS thread count (what threadpoolctl
measured is recorded, not what was asked for); :func:`kernels_study` varies
the OpenBLAS CPU kernel (``OPENBLAS_CORETYPE``, read by OpenBLAS when it
loads, so only a fresh process can change it) at one thread.  Each run is
``notebooks/audit.ipynb`` in its own process and Jupyter kernel, pinned at
launch (:func:`qencode_nb.batch.study_jobs.run_jobs`), so a study compares
whole re-runs, never runs sharing one process.  Each returns a table with one
row per run (energies in Ha, also as ``float.hex()`` so bit differences are
visible; errors in mHa; wall time in s) and writes it as ``threads.csv`` /
``kernels.csv`` beside the executed notebooks, with its figure.
"""

from __future__ import annotations

from pathlib import Path

from qencode_nb.errors import ParameterError
from qencode_nb.options import RunOptions, with_changes
from qencode_nb.batch.study_jobs import entry_stem, run_jobs, write_table

#: Columns of :func:`threads_study`'s table (energy in Ha, error in mHa, seconds wall).
#: ``threshold_mha`` is the entry's certification threshold (for the figure).
THREADS_COLUMNS = ("threads", "repeat", "measured_threads", "engine", "energy", "energy_hex",
                   "error_mha", "nfev", "seconds", "status", "failure", "notebook",
                   "threshold_mha")

#: Columns of :func:`kernels_study`'s table: ``coretype`` is the requested
#: ``OPENBLAS_CORETYPE``, ``kernel`` the OpenBLAS CPU kernels (architectures)
#: threadpoolctl reports for the loaded OpenBLAS copies (a build maps a coretype to
#: the nearest kernel it has); the column keeps its name (kernels.csv is read outside).
KERNELS_COLUMNS = ("coretype", "kernel", "repeat", "measured_threads", "engine", "energy",
                   "energy_hex", "error_mha", "nfev", "seconds", "status", "failure",
                   "notebook", "threshold_mha")


def threads_study(entry, threads=(1, 2), repeats: int = 3, out_dir="runs/threads",
                  options: RunOptions | None = None, **changes):
    """Re-run one entry ``repeats`` times at each BLAS thread count.

    Every run is audit.ipynb in its own process and kernel with the parameters
    of the run options with ``blas_threads`` t
    (:func:`qencode_nb.batch.run_spec.notebook_parameters`), named
    ``<entry-stem>__t{t}__r{repeat}`` in ``out_dir``.  Every run is executed afresh
    (a study measures; nothing is resumed).

    Args:
        entry: entry file (QEncode JSON or params YAML) or bundled name.
        threads: requested BLAS thread counts (ints >= 1), e.g. ``(1, 2, 4)``.
        repeats: runs per thread count (int >= 1).
        out_dir: folder for the executed notebooks, ``threads.csv`` and the
            figure ``threads.png`` / ``.pdf`` / ``.svg``.
        options: :class:`~qencode_nb.options.RunOptions` (default: mode
            "rerun"): ``mode`` ("rerun" or "full" re-run the optimiser), ``db``,
            ``workers`` (runs at the same time, each its own process),
            ``progress`` (a bar on stderr), ``blas_coretype`` (optional, for every
            run), ``timeout`` (per run, s), ``plot`` (the figure,
            :func:`qencode_nb.readout.plots.distribution_plot`), ``engine`` (None:
            the recorded backend; "sector", "fast": the ``engine`` column says what
            ran); ``blas_threads`` is not used (``threads`` is varied).
        **changes: fields of ``options`` replaced (``mode="full"``).

    Returns:
        DataFrame with :data:`THREADS_COLUMNS`, one row per run ordered by
        threads then repeat: ``measured_threads`` is the ``blas_threads``
        record (what threadpoolctl measured), ``energy`` the ``rerun_energy``
        record (Ha) and ``energy_hex`` its ``float.hex()``, ``error_mha``
        |E - E_exact| in mHa, ``nfev`` the re-run's energy evaluations,
        ``seconds`` wall time; a failed run has ``status`` "failed" and the
        reason in ``failure``.

    Raises:
        ParameterError: a thread count that is not an int >= 1, no thread count,
            ``repeats`` < 1, ``mode`` "replay" (no re-run energy to compare), any
            option :class:`~qencode_nb.options.RunOptions` refuses (an unknown or
            unrunnable coretype, ``timeout`` <= 0).
        EntryError: an entry that does not exist or is a folder.
    """
    from qencode_nb.options import check_count, check_threads

    opts = with_changes(options, changes, mode="rerun")
    threads = [check_threads(t, "threads") for t in ([threads] if isinstance(threads, int)
                                                     else list(threads))]
    if not threads:
        raise ParameterError("is empty; accepted: one or more integers >= 1",
                             parameter="threads")
    return _run_table(entry, list(dict.fromkeys(threads)), "blas_threads", check_count(
        repeats, "repeats"), out_dir, opts, "threads", THREADS_COLUMNS)


def kernels_study(entry, coretypes=None, repeats: int = 1, out_dir="runs/kernels",
                  options: RunOptions | None = None, **changes):
    """Re-run one entry under each OpenBLAS kernel, at the options' BLAS threads (default 1).

    Each run is audit.ipynb in its own process and kernel with the parameters of the
    run options with ``blas_coretype`` c
    (:func:`qencode_nb.batch.run_spec.notebook_parameters`), named
    ``<entry-stem>__{c}__r{repeat}``; OpenBLAS reads ``OPENBLAS_CORETYPE``
    when it loads, so only a fresh process can change the kernel.

    Args:
        entry: entry file or bundled name.
        coretypes: ``OPENBLAS_CORETYPE`` names (case-insensitive); default
            every kernel this CPU can run
            (:func:`qencode_nb.notebook.pins.runnable_coretypes`).
        repeats: runs per coretype (int >= 1).
        out_dir: folder for the notebooks, ``kernels.csv`` and
            ``kernels.png`` / ``.pdf`` / ``.svg``.
        options, changes: as :func:`threads_study` (``blas_threads``, default 1, is
            every run's; ``blas_coretype`` is not used: ``coretypes`` is varied).

    Returns:
        DataFrame with :data:`KERNELS_COLUMNS`, one row per run ordered by
        coretype (as given) then repeat; ``kernel`` is what threadpoolctl
        reports for the loaded OpenBLAS copies.

    Raises:
        ParameterError: an unknown coretype (lists the accepted names) or one this
            CPU cannot run (names the CPU flags it lacks), ``repeats`` < 1, ``mode``
            "replay", ``timeout`` <= 0.
        PinError: this CPU runs no known coretype.
        EntryError: an entry that does not exist or is a folder.
    """
    from qencode_nb.errors import PinError
    from qencode_nb.notebook.pins import runnable_coretypes
    from qencode_nb.options import check_coretype, check_count

    opts = with_changes(options, changes, mode="rerun")
    if coretypes is None:
        coretypes = runnable_coretypes()
        if not coretypes:
            raise PinError("this CPU can run no known OpenBLAS coretype; pass coretypes")
    elif isinstance(coretypes, str):
        coretypes = [coretypes]
    coretypes = list(dict.fromkeys(check_coretype(c, "coretypes") for c in coretypes))
    if not coretypes:
        raise ParameterError("is empty; accepted: one or more OpenBLAS coretypes",
                             parameter="coretypes")
    return _run_table(entry, coretypes, "blas_coretype", check_count(repeats, "repeats"),
                      out_dir, opts, "kernels", KERNELS_COLUMNS)


def _run_table(entry, values, parameter: str, repeats: int, out_dir, opts, kind: str,
               columns):
    """Run a threads or kernels study, ``repeats`` runs at each of ``values`` of the audit
    parameter ``parameter`` (``blas_threads``: runs ``<stem>__t{t}__r{r}``;
    ``blas_coretype``: ``<stem>__{c}__r{r}``), and write ``<out_dir>/<kind>.csv`` (and
    the figure): one row per run, its value under ``columns[0]`` (``threads`` or
    ``coretype``), then ``repeat`` and the run's row."""
    import pandas as pd

    stem, tag = entry_stem(entry), ("t" if parameter == "blas_threads" else "")
    jobs = [(v, r, f"{stem}__{tag}{v}__r{r}", {parameter: v})
            for v in values for r in range(repeats)]
    rows = run_jobs(entry, jobs, out_dir, opts, desc=f"{kind} study")
    table = pd.DataFrame([{columns[0]: value, "repeat": r, **row}
                          for (value, r, _, _), row in zip(jobs, rows)], columns=list(columns))
    write_table(table, kind, Path(out_dir), opts.plot)
    return table

