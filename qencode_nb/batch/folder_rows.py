"""Which runs a sweep folder's ``summary.csv``, run manifest and crate cover (issue 53).

A folder is one release's runs under one set of run options, whether one sweep wrote
it, several shards (:mod:`qencode_nb.batch.shards`), or sweeps of a few entries at a
time.  :func:`folder_table`, called by :func:`qencode_nb.batch.sweep.finish_folder`
under the folder's lock, gives its rows:

1. every entry of the sweep's **whole target set** (a sharded sweep's: every shard's;
   else the sweep's own targets), in the targets' order.  This sweep's runs are read
   from their notebooks as always.  Another shard's entry is read from its notebook
   where the folder holds one run with this sweep's inputs (``<name>.inputs.json``: the
   audit parameters and the entry file's SHA-256; not the entry's path, which another
   shard's machine may keep elsewhere, nor the kernelspec, since ``--stack recorded``
   gives each entry its own); otherwise it is a :data:`WAITING`
   row (no shard has run it yet, or only under other options), with its predicted
   seconds where the folder holds a ``plan.csv`` (:mod:`qencode_nb.batch.plan_file`);
2. then the folder's **other runs under the same options** (by run name): every
   ``<name>.ipynb`` whose ``<name>.inputs.json`` records the same audit parameters
   but the entry.  So a sweep of a subset into a folder, or of one entry at a time, keeps
   the folder's other runs in its summary instead of dropping them.

Runs under other options (another mode, engine, threads, kernels, stack, ``db`` or proof
budget) stay out of all three files, stale to every reader as before
(:mod:`qencode_nb.readout.manifest`): a folder never mixes two sets of options.  A kept
run is read as it ran; it is not re-checked against this host's environment (a sweep
that runs its entry is: :mod:`qencode_nb.batch.resume`), and its kernel and fingerprint
columns say what it ran under.  A run another process is running at that moment reads
as its notebook stands (failed: no done record), as before.

Where the folder holds a ``plan.csv`` the table gains a last column,
``predicted_seconds`` (every row's prediction, the waiting ones' and the ones that ran:
beside ``seconds``, what each took).  Importing this module imports no numpy.
"""

from __future__ import annotations

import json
from pathlib import Path

from qencode_nb.readout.counts import WAITING

#: The column a folder with a ``plan.csv`` adds to its summary.
PREDICTED_COLUMN = "predicted_seconds"


def _stored_inputs(out: Path, name: str) -> dict | None:
    try:
        stored = json.loads((out / f"{name}.inputs.json").read_text())
    except (OSError, ValueError):
        return None
    return stored if isinstance(stored, dict) else None


def _options(inputs: dict | None) -> dict | None:
    """The audit parameters of ``inputs`` but the entry (what the runs of a folder share)."""
    params = (inputs or {}).get("parameters")
    if not isinstance(params, dict):
        return None
    return {k: v for k, v in params.items() if k != "entry"}


def same_inputs(stored: dict | None, expected: dict) -> bool:
    """A run's stored ``<name>.inputs.json`` holds ``expected``'s audit parameters but the
    entry's path, and its entry SHA-256: the same entry file, wherever another machine
    kept it (the kernelspec is not compared)."""
    return (stored is not None and _options(stored) == _options(expected)
            and stored.get("entry_sha256") == expected.get("entry_sha256"))


def folder_runs(out: Path, expected: dict, ran) -> tuple[list, list]:
    """``(names with a row from their notebook, waiting names)``, each in table order
    (module docstring): ``expected`` is ``{run name: inputs}`` of the whole target set
    (:func:`qencode_nb.batch.sweep.inputs_of`), ``ran`` this sweep's run names."""
    ran = set(ran)
    rows, waiting = [], []
    for name, inputs in expected.items():
        has = name in ran or ((out / f"{name}.ipynb").is_file()
                              and same_inputs(_stored_inputs(out, name), inputs))
        (rows if has else waiting).append(name)
    options = _options(next(iter(expected.values()), None))
    if options is not None:
        for side in sorted(out.glob("*.inputs.json")):
            name = side.name[:-len(".inputs.json")]
            if (name not in expected and (out / f"{name}.ipynb").is_file()
                    and _options(_stored_inputs(out, name)) == options):
                rows.append(name)
    return rows, waiting


def folder_table(out: Path, expected: dict, ran):
    """The summary table of folder ``out`` (module docstring) and the notebooks it reads.

    Args:
        out: the sweep's output folder.
        expected: ``{run name: inputs}`` of the whole target set, in order.
        ran: this sweep's run names.

    Returns:
        ``(table, notebooks)``: the DataFrame (:data:`qencode_nb.readout.collect.AUDIT_COLUMNS`,
        and :data:`PREDICTED_COLUMN` where the folder has a ``plan.csv``; ``attrs["ran"]``
        the names ``ran`` lists) and the executed notebooks of its rows that are not
        waiting (for the manifest and the crate).
    """
    import pandas as pd

    from qencode_nb.batch.plan_file import predictions
    from qencode_nb.readout.collect import AUDIT_COLUMNS, audit_table

    names, waiting = folder_runs(out, expected, ran)
    notebooks = [out / f"{n}.ipynb" for n in names]
    table = audit_table(notebooks)
    if waiting:
        rows = pd.DataFrame([{"notebook": str(out / f"{n}.ipynb"), "status": WAITING}
                             for n in waiting], columns=list(AUDIT_COLUMNS))
        order = {n: i for i, n in enumerate(dict.fromkeys([*expected, *names]))}
        table = pd.concat([table.astype(object), rows.astype(object)], ignore_index=True)
        table = table.iloc[sorted(range(len(table)), key=lambda i: order[
            Path(table["notebook"].iloc[i]).stem])].reset_index(drop=True).infer_objects()
    predicted = predictions(out)
    if predicted:
        table[PREDICTED_COLUMN] = [predicted.get(Path(n).stem) for n in table["notebook"]]
    table.attrs["ran"] = [n for n in expected if n in set(ran)]
    return table, notebooks


def finish(plan):
    """Write a planned folder's files once its runs are over, under the folder's lock
    (:func:`~qencode_nb.batch.run_folder.folder_lock`): ``summary.csv`` (:func:`folder_table`),
    the run manifest (its notebooks), the margin plot (``plan.options.plot``; the rows
    that are not waiting) and the crate; return the summary table (``attrs["reruns"]``:
    the done runs re-run, and why; ``attrs["ran"]``: this sweep's run names).

    Args:
        plan: a :class:`qencode_nb.batch.sweep.FolderPlan` (``out``, ``names``,
            ``expected``, ``resume``, ``options``).
    """
    from qencode_nb.batch.run_folder import (
        folder_lock,
        write_crate,
        write_plot,
        write_text_atomic,
    )
    from qencode_nb.readout.manifest import write_manifest
    from qencode_nb.readout.published import published_csv

    out = plan.out
    expected = plan.expected or {n: {} for n in plan.names}
    sources = [(i.get("parameters") or {}).get("entry") for i in expected.values()]
    with folder_lock(out):   # another sweep on this folder writes its files before or after
        table, notebooks = folder_table(out, expected, plan.names)
        write_text_atomic(out / "summary.csv", published_csv(table, out, sources))
        write_manifest(out, "sweep", notebooks, plan.resume.reruns)
        ran = table[table["status"] != WAITING].infer_objects()
        if plan.options.plot and len(ran):
            write_plot(out, ran)
        write_crate(out, notebooks)
    table.attrs["reruns"] = plan.resume.reruns
    return table
