"""``plan.csv``: a sweep's plan as a file in its ``--out`` folder (issue 53).

``qencode-nb sweep TARGETS --plan`` writes it (:func:`qencode_nb.batch.plan.plan_sweep`),
one row per planned entry in the order the sweep runs them; a plan of one shard
(``--plan --shard K/N``) replaces the rows of its entries and keeps the others', so the
plans of every shard of a release add up in one file.  A sharded sweep's ``summary.csv``
reads it back for the entries no shard has run yet (:func:`predictions`;
:mod:`qencode_nb.batch.folder_rows`).  Like ``summary.csv`` it names no absolute path
(:mod:`qencode_nb.readout.published`).  Importing this module imports no numpy; reading
and writing the file use pandas.

Columns (:data:`PLAN_COLUMNS`; seconds are wall seconds on the host that measured):

- ``run``: the run's name (its notebook's stem); ``order``: its place in the sweep's run
  order (longest expected first, as the pool runs them; runs a resumed sweep keeps come
  last); ``status``: ``to run``, or ``done`` (kept by resume: the sweep will not run it);
  ``shard``: ``K/N`` of a sharded plan, else empty;
- ``engine``: the engine that re-runs (the recorded one unless ``--engine``); ``optimizer``;
- ``evaluations``: the optimiser evaluations the re-run makes; ``evaluations_from``: how
  they follow from the entry (:func:`qencode_nb.batch.plan.evaluations`);
  ``evaluation``: what one costs, ``energy`` or ``energy+gradient``;
- ``seconds_per_evaluation``: the engine's (median of warm calls) plus COBYLA's own;
- ``screenings`` and ``seconds_per_screening``: ADAPT's pool gradients, one per outer
  iteration (0 for HEA and UCCSD);
- ``fixed_seconds``: what a run pays once (kernel, imports, pin, rebuild and check, engine
  setup, replay); ``predicted_seconds``: the prediction;
- ``rebuild_cache_hit``: whether the measured rebuild was a cache hit; ``cpu_share``:
  the share of a core the timed evaluations got (1: an idle core; 0.5: a host whose
  other work took half: its predictions run long or short as that load comes and goes);
  ``cpu``: the measuring host's CPU model; ``measured_utc``; ``failure``: why there is
  no prediction.
"""

from __future__ import annotations

from pathlib import Path

#: The file's name in a sweep's ``--out`` folder.
PLAN_FILE = "plan.csv"

#: Its columns, in order (module docstring).
PLAN_COLUMNS = ("run", "order", "status", "shard", "engine", "optimizer", "evaluations",
                "evaluations_from", "evaluation", "seconds_per_evaluation", "screenings",
                "seconds_per_screening", "fixed_seconds", "predicted_seconds",
                "rebuild_cache_hit", "cpu_share", "cpu", "measured_utc", "failure")

#: ``status`` of a run the sweep will run, and of one a resumed sweep keeps.
TO_RUN, DONE = "to run", "done"


def read_plan(folder):
    """``folder``'s ``plan.csv`` as a DataFrame, or None when it has none or it cannot
    be read (a plan is advice: a damaged one is ignored)."""
    import pandas as pd

    path = Path(folder) / PLAN_FILE
    if not path.is_file():
        return None
    try:
        table = pd.read_csv(path, keep_default_na=False, na_values=[""])
    except (OSError, ValueError):
        return None
    return table if "run" in table.columns else None


def predictions(folder) -> dict:
    """``{run: predicted seconds}`` of ``folder``'s ``plan.csv`` (empty without one; a
    row without a prediction left out)."""
    import math

    table = read_plan(folder)
    if table is None or "predicted_seconds" not in table.columns:
        return {}
    out = {}
    for run, seconds in zip(table["run"], table["predicted_seconds"]):
        try:
            value = float(seconds)
        except (TypeError, ValueError):
            continue
        if not math.isnan(value):
            out[str(run)] = value
    return out


def write_plan(folder, table, sources=()) -> Path:
    """Write ``table`` (:data:`PLAN_COLUMNS`) as ``folder``'s ``plan.csv``, atomically,
    keeping the rows of an earlier plan whose runs ``table`` does not hold (another
    shard's); the rows ordered by ``order`` then ``run``.  ``sources``: the entry files
    (their folders are named as :func:`qencode_nb.readout.published.published_csv` names
    them).  Returns the path."""
    import pandas as pd

    from qencode_nb.atomic import write_atomic
    from qencode_nb.readout.published import published_csv

    earlier = read_plan(folder)
    table = table.reindex(columns=list(PLAN_COLUMNS))
    if earlier is not None:
        kept = earlier[~earlier["run"].astype(str).isin(set(table["run"].astype(str)))]
        table = pd.concat([kept.reindex(columns=list(PLAN_COLUMNS)).astype(object),
                           table.astype(object)], ignore_index=True)
    table = table.sort_values(["order", "run"], kind="stable", key=_numeric_first)
    path = Path(folder) / PLAN_FILE
    write_atomic(path, published_csv(table, folder, sources).encode())
    return path


def _numeric_first(column):
    """Sort key of a column: ``order`` as numbers (a row without one last)."""
    import pandas as pd

    if column.name == "order":
        return pd.to_numeric(column, errors="coerce")
    return column.astype(str)
