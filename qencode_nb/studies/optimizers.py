"""The optimiser study: one hea or uccsd entry re-run with each optimiser in turn.

:func:`optimizers_study` replaces only the recorded optimiser (audit.ipynb's
``optimizer`` override: COBYLA, L-BFGS-B, Adam) at a fixed BLAS thread count;
the recorded iteration cap, restarts, seed, early stop and backend stay, and
tier 1 of each run reports the deviation.  Each run is ``notebooks/audit.ipynb``
in its own process and kernel (:func:`qencode_nb.batch.study_jobs.run_jobs`).
The table puts error (mHa), nfev (QEncode's count) and wall time (s) side by
side and is written as ``optimizers.csv`` with its figure.
"""

from __future__ import annotations

from pathlib import Path

from qencode_nb.errors import EntryError, ParameterError
from qencode_nb.options import RunOptions, with_changes
from qencode_nb.batch.study_jobs import entry_stem, run_jobs, write_table

#: Columns of :func:`optimizers_study`'s table: ``optimizer`` as requested
#: (e.g. "Adam(lr=0.05)"); ``nfev`` is QEncode's count for that optimiser.
OPTIMIZERS_COLUMNS = ("optimizer", "repeat", "measured_threads", "engine", "energy", "energy_hex",
                      "error_mha", "nfev", "seconds", "status", "failure", "notebook",
                      "threshold_mha")

#: The optimisers an optimiser study compares by default (audit.ipynb's
#: ``optimizer`` vocabulary; Adam's learning rate as QEncode writes it).
DEFAULT_OPTIMIZERS = ("COBYLA", "L-BFGS-B", "Adam(lr=0.05)")

def optimizer_slug(name: str) -> str:
    """File-name form of an optimiser string: "Adam(lr=0.05)" -> "adam-lr-0.05"."""
    import re

    return re.sub(r"[^a-z0-9.]+", "-", name.lower()).strip("-")


def check_optimizers(optimizers) -> list[tuple[str, object]]:
    """``[(as given, parsed Optimizer)]``, first spelling kept for repeats of one optimiser.

    Raises:
        ParameterError: empty, or a name :func:`qencode_nb.options.parse_optimizer`
            refuses (an unknown or an ADAPT optimiser; lists the accepted ones).
    """
    from qencode_nb.options import parse_optimizer

    names = [optimizers] if isinstance(optimizers, str) else list(optimizers or ())
    if not names:
        raise ParameterError("is empty; accepted: one or more of "
                             + ", ".join(DEFAULT_OPTIMIZERS), parameter="optimizers")
    chosen = {}
    for name in names:
        parsed = parse_optimizer(name)
        chosen.setdefault(parsed, str(name))
    return [(name, parsed) for parsed, name in chosen.items()]


def optimizers_study(entry, optimizers=DEFAULT_OPTIMIZERS, repeats: int = 1,
                     out_dir="runs/optimizers", options: RunOptions | None = None,
                     **changes):
    """Re-run one hea or uccsd entry with each optimiser, at a fixed BLAS thread count.

    Each run is audit.ipynb in its own process and kernel with the parameters of
    the run options and ``optimizer`` o
    (:func:`qencode_nb.batch.run_spec.notebook_parameters`), named
    ``<entry-stem>__<optimiser slug>__r{repeat}``
    (slug: "cobyla", "l-bfgs-b", "adam-lr-0.05").  The override replaces
    only the optimiser: the recorded iteration cap, restarts, seed, early
    stop and backend stay, and tier 1 of each run reports the deviation.
    At a fixed thread count the runs are deterministic: repeats of one
    optimiser give the same energy bit for bit.

    Args:
        entry: entry file or bundled name (not an ADAPT entry).
        optimizers: audit.ipynb ``optimizer`` values (case-insensitive):
            "COBYLA", "L-BFGS-B", "Adam(lr=<float>)" (Adam without a rate
            uses 0.05); repeats of one optimiser are run once.
        repeats: runs per optimiser (int >= 1).
        out_dir: folder for the notebooks, ``optimizers.csv`` and the figure
            ``optimizers.png`` / ``.pdf`` / ``.svg``
            (:func:`qencode_nb.readout.plots.optimizer_plot`).
        options, changes: as :func:`qencode_nb.studies.blas.threads_study`;
            ``blas_threads`` (int >= 1; default 1) and ``blas_coretype`` are every
            run's, ``engine`` must be None (the recorded backend).

    Returns:
        DataFrame with :data:`OPTIMIZERS_COLUMNS`, one row per run ordered by
        optimiser (as given) then repeat: ``energy`` (Ha) and ``energy_hex``,
        ``error_mha`` |E - E_exact| in mHa, ``nfev`` the ``rerun.nfev``
        record (QEncode's count: COBYLA energy evaluations, L-BFGS-B steps x
        (1 + 2 x parameters), Adam steps), ``seconds`` the run's wall time
        (kernel start, Hamiltonian and re-run).  A run whose
        ``rerun.config.optimizer`` record is not the one asked for is marked
        failed.

    Raises:
        ParameterError: an engine (first), no optimiser, an unknown or ADAPT one (lists
            the accepted ones: :data:`qencode_nb.options.OPTIMIZERS`), ``repeats`` < 1,
            ``mode`` "replay", any option :class:`~qencode_nb.options.RunOptions`
            refuses (``blas_threads`` not an int >= 1, an unknown or unrunnable
            coretype, ``timeout`` <= 0).
        EntryError: an ADAPT entry (it refuses an override), an entry that does
            not exist or is a folder.
    """
    import pandas as pd

    from qencode_nb.entry import load
    from qencode_nb.options import check_count

    opts = with_changes(options, changes, mode="rerun")
    if opts.engine is not None:
        raise ParameterError(f"{opts.engine!r} is not accepted by an optimizers study "
                             "(it runs hea/uccsd entries on their recorded backend); "
                             "accepted: None", parameter="engine")
    chosen = check_optimizers(optimizers)
    repeats = check_count(repeats, "repeats")
    if not Path(str(entry)).is_dir() and load(entry, opts.db).ansatz == "adapt":
        raise EntryError(f"{entry!r} is an ADAPT entry, which refuses an optimiser "
                         "override; accepted: a hea or uccsd entry", field="entry")
    stem = entry_stem(entry)
    jobs = [(name, r, f"{stem}__{optimizer_slug(name)}__r{r}", {"optimizer": name})
            for name, _ in chosen for r in range(repeats)]
    rows = run_jobs(entry, jobs, out_dir, opts, desc="optimizers study")
    wanted = {name: parsed.name for name, parsed in chosen}
    for (name, _, _, _), row in zip(jobs, rows):
        used = row["optimizer_used"]
        if row["status"] == "done" and used != wanted[name]:
            row["status"] = "failed"
            row["failure"] = f"the re-run used optimizer {used!r}, not {wanted[name]!r}"
    table = pd.DataFrame([{"optimizer": name, "repeat": r, **row}
                          for (name, r, _, _), row in zip(jobs, rows)],
                         columns=list(OPTIMIZERS_COLUMNS))
    write_table(table, "optimizers", Path(out_dir), opts.plot)
    return table

