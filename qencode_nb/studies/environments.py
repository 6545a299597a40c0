"""The environment study: one entry re-run in Jupyter kernelspecs with different package stacks.

:func:`environments_study` runs ``notebooks/audit.ipynb`` once per Jupyter
kernelspec (``python3``, this environment, or a stack made by
:mod:`qencode_nb.environment.store`), threads and OpenBLAS kernel pinned alike,
so what differs is the packages.  The versions compared are the ones each
kernel recorded in its own ``provenance`` record, never the ones asked for
(:mod:`qencode_nb.readout.environment_tables`: the versions per kernelspec, each
kernelspec against the first, the finding).  Files: ``environments.csv``,
``environments_versions.csv``, ``environments_differences.csv`` and the figure.
"""

from __future__ import annotations

from pathlib import Path

from qencode_nb.options import RunOptions, with_changes
from qencode_nb.batch.study_jobs import entry_stem, run_jobs, write_table
from qencode_nb.readout.environment_tables import (STACK_PACKAGES, environment_differences,
                                                  version_of, version_table)

#: Columns of :func:`environments_study`'s table: ``kernelspec`` the Jupyter
#: kernelspec (one package stack each), then the versions the kernel itself
#: recorded (``provenance`` record) of :data:`STACK_PACKAGES`, ``python`` and
#: the BLAS pools; ``bit_identical`` is the run's tier-3 status.
ENVIRONMENTS_COLUMNS = ("kernelspec", "repeat", "python", "numpy", "scipy", "pennylane", "pyscf",
                        "openfermion", "blas", "measured_threads", "engine", "energy",
                        "energy_hex", "error_mha", "published_error_mha", "nfev", "seconds",
                        "bit_identical", "status", "failure", "notebook", "threshold_mha")


def default_kernelspecs() -> list[str]:
    """``python3`` (this environment) then every registered ``qencode-nb-*`` stack kernelspec."""
    from qencode_nb.environment.store import KERNELSPEC_PREFIX, available_kernelspecs

    return ["python3", *sorted(k for k in available_kernelspecs()
                                if k.startswith(KERNELSPEC_PREFIX))]


def environments_study(entry, kernelspecs=None, repeats: int = 1, out_dir="runs/environments",
                       options: RunOptions | None = None, **changes):
    """Re-run one entry in two or more Jupyter kernels with different package stacks.

    Each run is audit.ipynb driven from this environment through the pinned
    papermill engine, its kernel the given kernelspec (a stack made by
    :func:`qencode_nb.environment.build.create_stack`, or ``python3``, this
    environment), with the parameters of the run options
    (:func:`qencode_nb.batch.run_spec.notebook_parameters`), named
    ``<entry-stem>__<kernel>__r{repeat}``.
    Threads and kernel are pinned alike in every stack, so what differs is the
    packages (QEncode's reports: once threads were pinned, H6 ADAPT agreed to 7
    decimals across two stacks).

    Args:
        entry: entry file or bundled name.
        kernelspecs: Jupyter kernelspec names, the first one the baseline
            (default :func:`default_kernelspecs`); two or more.
        repeats: runs per kernel (int >= 1).
        out_dir: folder for the notebooks, ``environments.csv``,
            ``environments_versions.csv`` and ``environments_differences.csv``
            (:mod:`qencode_nb.readout.environment_tables`) and the figure
            ``environments.png`` / ``.pdf`` / ``.svg``.
        options, changes: as :func:`qencode_nb.studies.blas.threads_study`;
            ``blas_threads`` (default 1) and ``blas_coretype`` are every run's.

    Returns:
        DataFrame with :data:`ENVIRONMENTS_COLUMNS`, one row per run ordered
        by kernel (as given) then repeat; the versions are the ones the
        kernel recorded, not the ones asked for.  ``table.attrs["versions"]``
        and ``table.attrs["differences"]`` hold the two other tables as
        lists of row dicts (``pd.DataFrame(...)`` restores them).

    Raises:
        ParameterError: fewer than two kernels, a kernel Jupyter does not
            find (lists the ones it finds), ``repeats`` < 1, ``mode``
            "replay", any option :class:`~qencode_nb.options.RunOptions` refuses
            (``blas_threads`` not an int >= 1, an unknown or unrunnable coretype).
        EntryError: an entry that does not exist or is a folder.
    """
    import pandas as pd

    from qencode_nb.environment.store import check_kernelspecs
    from qencode_nb.options import check_count

    opts = with_changes(options, changes, mode="rerun")
    kernelspecs = check_kernelspecs(default_kernelspecs() if kernelspecs is None
                                    else kernelspecs)
    repeats = check_count(repeats, "repeats")
    stem = entry_stem(entry)   # the axis is each job's kernelspec, not a parameter
    jobs = [(k, r, f"{stem}__{k}__r{r}", {}) for k in kernelspecs for r in range(repeats)]
    rows = run_jobs(entry, jobs, out_dir, opts, desc="environments study",
                    kernelspecs={name: k for k, _, name, _ in jobs})
    for (k, _, _, _), row in zip(jobs, rows):
        row["kernelspec"] = k
        for pkg in STACK_PACKAGES:
            row[pkg] = version_of(row["packages"], pkg)
    table = pd.DataFrame([{"repeat": r, **row} for (_, r, _, _), row in zip(jobs, rows)])
    versions = version_table(table)
    table = table[list(ENVIRONMENTS_COLUMNS)].copy()
    differences = environment_differences(table, versions)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    from qencode_nb.readout.published import published_csv

    for frame, name in ((versions, "environments_versions.csv"),
                        (differences, "environments_differences.csv")):
        (out / name).write_text(published_csv(frame, out), encoding="utf-8")
    write_table(table, "environments", out, opts.plot)
    table.attrs.update(versions=versions.to_dict("records"),
                       differences=differences.to_dict("records"))
    return table
