"""Every miss of a sweep explained or bounded (issue 53, item 4).

A *miss* is a done run of a sweep folder whose re-run energy is not the published one to
the last bit (``bit_identical`` False: tier 3 ``fail`` in the recorded environment, ``n/a``
in another, where the bits are compared all the same).  For each one
:func:`explain_misses` gathers, in one row of ``misses.csv`` (:data:`MISS_COLUMNS`):

1. the **replay** of the published optimum in the same run: bit-exact or not
   (``replay_identical``, ``replay_ulps``).  Bit-exact says the energy function is the
   recorded one at that point, so the re-run's optimiser took another path; not bit-exact
   says the energy function itself differs;
2. the re-run's ``nfev`` against the published one (``same_nfev``);
3. the **explain search** (:func:`qencode_nb.studies.explain.explain`) in its own folder,
   ``<out_dir>/<run name>/``: the configuration that reproduces the published energy, or
   the closest one with its ulps and how many configurations were tried.  A folder whose
   ``explain.csv`` reproduced the energy or tried ``budget`` configurations is read, not
   searched again (a search is as costly as ``budget`` re-runs); a shorter one goes on
   from where it stopped, keeping its runs (the explain search resumes), so a killed or
   extended study costs only what it has not run.  A miss with no search (``search``
   False, for example one whose re-run takes an hour) is bounded by the sweep's own run:
   one configuration tried, the recorded one, at its ulps;
4. ``cause``: the sentence :func:`cause` writes from the above (the one rule).

CLI: ``qencode-nb study environments SWEEP_FOLDER --explain [--budget N]``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Columns of ``misses.csv``.  ``ulps``/``delta_ha`` (Ha): the sweep's re-run against the
#: published energy; ``hamiltonian_status`` the Hamiltonian check (``fail``: the stored
#: terms equal no generator path) and ``max_abs_dcoeff`` (Ha) its largest coefficient
#: difference; ``replay_*`` the replay of the published optimum (``replay_ulps`` between
#: the replayed and the published energy, ``replay_reason`` why there is none);
#: ``explain_tried`` the configurations the search ran of ``explain_grid``;
#: ``explain_reproduced`` the one that re-ran to the published bits (empty: none);
#: ``explain_closest``/``explain_closest_ulps`` the nearest otherwise;
#: ``nearest_evaluation`` the re-run's energy evaluation (0-based, over its restarts;
#: ADAPT: its operator; the ``rerun_trace`` record) nearest the published energy and ``nearest_delta_ha`` (Ha) how
#: near: where along the path the two runs part (late and tiny: the paths agreed almost
#: to the end).
MISS_COLUMNS = ("entry_id", "notebook", "tier_bit_identical", "ulps", "delta_ha",
                "hamiltonian_status", "max_abs_dcoeff", "replay_status", "replay_identical",
                "replay_ulps", "replay_abs_delta_ha", "replay_reason", "rerun_nfev",
                "published_nfev", "same_nfev", "nearest_evaluation", "nearest_delta_ha",
                "explain_tried", "explain_grid", "explain_reproduced", "explain_closest",
                "explain_closest_ulps", "explain_folder", "cause")


@dataclass(frozen=True)
class MissesResult:
    """What :func:`explain_misses` found.

    Attributes:
        out_dir: the folder of ``misses.csv`` and one explain folder per miss.
        table: one row per miss (:data:`MISS_COLUMNS`), in the sweep's order.
        runs: how many done runs the sweep folder holds (misses included).
    """

    out_dir: Path
    table: Any
    runs: int


def misses(folder):
    """The misses of a sweep folder: ``(done runs, [(audit row, replay record)])``.

    Args:
        folder: a sweep's ``--out`` (its executed audit notebooks).

    Raises:
        EntryError: ``folder`` is not a folder of executed audits.
    """
    from qencode_nb.errors import EntryError
    from qencode_nb.readout.collect import audit_notebooks, audit_row

    folder = Path(folder)
    notebooks = audit_notebooks(folder) if folder.is_dir() else []
    if not notebooks:
        raise EntryError(f"{str(folder)!r} holds no executed audit notebooks; accepted: a "
                         "sweep's --out folder", field="entry")
    done, out = 0, []
    for path in notebooks:
        row = audit_row(path)
        if row["status"] != "done":
            continue
        done += 1
        if row["bit_identical"] is False or row["bit_identical"] == False:
            out.append((row, _records(path)))
    return done, out


def _records(path) -> dict:
    """The notebook's ``replay`` record and its papermill parameters."""
    import nbformat

    from qencode_nb.notebook.record import iter_records

    nb = nbformat.read(str(path), as_version=4)
    records = dict(iter_records(nb))
    params = nb.metadata.get("papermill", {}).get("parameters", {})
    return {"replay": records.get("replay") or {}, "parameters": dict(params),
            "trace": (records.get("rerun_trace") or {}).get("energies_ha") or [],
            "entry_source": records.get("entry_source")}


def cause(row: dict) -> str:
    """The miss in one sentence, from a :data:`MISS_COLUMNS` row: the Hamiltonian check,
    then what the replay says (energy function or optimiser path), the nfev comparison and
    the explain search's answer."""
    parts = []
    if row.get("hamiltonian_status") == "fail":
        parts.append("the stored Hamiltonian equals no generator path (largest coefficient "
                     f"difference {_g(row.get('max_abs_dcoeff'))} Ha)")
    if row.get("replay_identical") is True:
        parts.append("the published optimum replays bit for bit, so the energy function is "
                     "the recorded one there and the optimiser's path differs")
    elif row.get("replay_identical") is False:
        parts.append(f"the published optimum replays {_g(row.get('replay_ulps'))} ulps "
                     f"({_g(row.get('replay_abs_delta_ha'))} Ha) away: the energy function "
                     "itself differs")
    elif row.get("replay_reason"):
        parts.append("the published optimum cannot be replayed ("
                     + str(row["replay_reason"]).split(": ")[0] + ")")
    else:
        parts.append("no replay of the published optimum")
    if row.get("same_nfev") is False:
        parts.append(f"nfev {row['rerun_nfev']} against {row['published_nfev']} published")
    elif row.get("same_nfev") is True:
        parts.append(f"the same nfev ({row['rerun_nfev']})")
    if _given(row.get("explain_reproduced")):
        parts.append(f"reproduced by {row['explain_reproduced']}")
    elif _given(row.get("explain_tried")) and not _given(row.get("explain_folder")):
        parts.append(f"no explain search run; bounded by {row['explain_closest']}, "
                     f"{_g(row.get('explain_closest_ulps'))} ulps")
    elif _given(row.get("explain_tried")):
        n = int(row["explain_tried"])
        parts.append(f"not reproduced in {n} configuration{'s' if n != 1 else ''}; closest "
                     f"{row['explain_closest']}, {_g(row['explain_closest_ulps'])} ulps")
    else:
        parts.append("no explain search run")
    return "; ".join(parts)


def _given(value) -> bool:
    """Whether a cell holds something: not None, NaN, ``pd.NA`` or empty (a row built
    here or read back from ``misses.csv``)."""
    import pandas as pd

    return not (value is None or bool(pd.isna(value))
                or (isinstance(value, str) and not value))


def _g(value) -> str:
    if not _given(value):
        return "?"
    return f"{int(value):,}" if float(value).is_integer() else f"{float(value):.3g}"


def explain_misses(folder, out_dir=None, options=None, *, budget: int | None = None,
                   search: bool = True) -> MissesResult:
    """Explain or bound every miss of a sweep folder; write ``misses.csv``.

    Args:
        folder: a sweep's ``--out`` folder.
        out_dir: folder for ``misses.csv`` and the explain folders (default
            ``<folder>/misses``).
        options: :class:`~qencode_nb.options.RunOptions` of the explain runs (``db``,
            ``workers``, ``timeout``, ...; the grid sets threads, kernels and stack).
        budget: explain runs per miss at most, an int >= 0 (default
            :data:`qencode_nb.studies.explain.DEFAULT_BUDGET`; 0 searches nothing, as
            ``search`` False).
        search: False: read the explain folders that exist and search none (a miss
            without one is bounded by the sweep's own run: ``explain_tried`` 1,
            ``explain_folder`` empty, ``cause`` "no explain search run; bounded by ...").

    Raises:
        EntryError: ``folder`` holds no executed audits.
        ParameterError: a budget that is not an int >= 0; as
            :func:`qencode_nb.studies.explain.explain`.
    """
    import pandas as pd

    from qencode_nb.options import check_count
    from qencode_nb.readout.published import published_csv
    from qencode_nb.studies.explain import DEFAULT_BUDGET

    budget = check_count(DEFAULT_BUDGET if budget is None else budget, "budget",
                         zero="no search; each miss bounded by the sweep's own run")
    search = search and budget > 0
    runs, found = misses(folder)
    out = Path(out_dir) if out_dir is not None else Path(folder) / "misses"
    rows = []
    for audit, rec in found:
        row = _miss_row(audit, rec["replay"], rec["trace"])
        name = Path(audit["notebook"]).stem
        searched = _explained(out / name, rec, options, budget, search)
        row.update(searched or _own_run(audit))
        row["explain_folder"] = str(out / name) if searched else None
        row["cause"] = cause(row)
        rows.append(row)
    table = whole_numbers(pd.DataFrame(rows, columns=list(MISS_COLUMNS)), rows, MISS_COUNTS)
    out.mkdir(parents=True, exist_ok=True)
    (out / "misses.csv").write_text(published_csv(table, out), encoding="utf-8")
    return MissesResult(out_dir=out, table=table, runs=runs)


def _miss_row(audit: dict, replay: dict, trace: list) -> dict:
    row = {k: audit.get(k) for k in MISS_COLUMNS if k in audit}
    published = replay.get("published")
    if trace and published is not None:
        deltas = [abs(e - published) for e in trace]
        row["nearest_evaluation"] = deltas.index(min(deltas))
        row["nearest_delta_ha"] = trace[row["nearest_evaluation"]] - published
    row["notebook"] = Path(audit["notebook"]).name
    row["replay_ulps"] = replay.get("ulps")
    row["replay_reason"] = replay.get("reason")
    rerun, published = audit.get("rerun_nfev"), audit.get("published_nfev")
    row["same_nfev"] = (None if rerun is None or published is None
                        else int(rerun) == int(published))
    return row


def _explained(where: Path, rec: dict, options, budget: int, search: bool) -> dict:
    """The explain columns of one miss: its folder's ``explain.csv`` where that search
    reproduced the energy or tried at least ``budget`` configurations; else the search
    (``search``), which keeps the runs an earlier one did (``run_jobs``' resume); else
    what the folder holds, or nothing."""

    table_file = where / "explain.csv"
    table = _read(table_file)
    short = table is None or (len(table) < budget and not _reproduced(table))
    if short and search:
        from qencode_nb.studies.explain import explain

        entry = rec["parameters"].get("entry") or rec["entry_source"]
        explain(entry, where, options, budget=budget)
        table = _read(table_file)
    return {} if table is None else _explain_columns(table, _grid_size(where))


#: Columns that hold whole numbers (counts, ulps), written as such where some are empty.
MISS_COUNTS = ("ulps", "replay_ulps", "rerun_nfev", "published_nfev", "nearest_evaluation",
           "explain_tried", "explain_grid", "explain_closest_ulps")


def whole_numbers(table, rows: list[dict], columns):
    """``table`` (built from ``rows``) with each of ``columns`` that holds whole numbers
    as pandas' nullable ``Int64``, taken from the rows' own values (an empty cell stays
    empty, ``1020`` is not written ``1020.0``, and ulps past 2**53 keep every digit, which
    a float column on the way would round): the miss and generator tables' counts."""
    import pandas as pd

    for col in columns:
        values = [r.get(col) for r in rows]
        known = [v for v in values if _given(v)]
        if known and all(float(v).is_integer() for v in known):
            table[col] = pd.array([int(v) if _given(v) else None for v in values],
                                  dtype="Int64")
    return table


def _own_run(audit: dict) -> dict:
    """The explain columns of a miss no search has run for: the sweep's own run bounds it,
    one configuration tried (its stack, kernel and BLAS threads, as the audit measured
    them; a part not measured is left out), at its own ulps."""
    threads, parts = audit.get("blas_threads"), []
    if _given(audit.get("stack")):
        parts.append(f"{audit['stack']} stack")
    if _given(audit.get("kernel")):
        parts.append(f"kernel {audit['kernel']}")
    if _given(threads):
        parts.append(f"{threads} BLAS thread{'s' if threads != 1 else ''}")
    return {"explain_tried": 1, "explain_grid": None, "explain_reproduced": None,
            "explain_closest": "the sweep's own run" + (f" ({', '.join(parts)})"
                                                       if parts else ""),
            "explain_closest_ulps": audit.get("ulps")}


def _read(table_file: Path):
    import pandas as pd

    if not table_file.exists():
        return None
    return pd.read_csv(table_file, keep_default_na=False, na_values=[""])


def _reproduced(table) -> bool:
    from qencode_nb.studies.explain import exact

    return any(exact(r) for r in table[table["status"] == "done"].to_dict("records"))


def _grid_size(where: Path):
    """The grid's size from ``explain.json``; a search written before it existed names it
    in its figure caption's finding (``... of a grid of G ...``); else None."""
    import re

    from qencode_nb.studies.explain import SEARCH_FILE

    meta = where / SEARCH_FILE
    if meta.exists():
        return json.loads(meta.read_text(encoding="utf-8")).get("grid")
    caption = where / "explain.caption.md"
    found = re.search(r"a grid of (\d+)", caption.read_text(encoding="utf-8")
                      if caption.exists() else "")
    return int(found.group(1)) if found else None


def _explain_columns(table, grid) -> dict:
    from qencode_nb.studies.explain import describe, exact

    done = table[table["status"] == "done"]
    hit = [r for r in done.to_dict("records") if exact(r)]
    best = done.sort_values("ulps").head(1).to_dict("records")
    return {"explain_tried": len(table), "explain_grid": grid,
            "explain_reproduced": describe(hit[0]) if hit else None,
            "explain_closest": describe(best[0]) if best else None,
            "explain_closest_ulps": int(best[0]["ulps"]) if best else None}
